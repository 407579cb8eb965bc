//===- VariablyModified.h - Capturing variably modified variables ---------===//
//
// An inline task may use a variable of a variably modified type: a variable-length array
// (int v[n]) or a pointer to rows of one (double (*a)[ts][ts], a parameter int u[n][m]). Such
// a type cannot be named at file scope nor in a class, so the argument block holds the variable
// as an untyped pointer (or its bytes, after the block) and the run-time length of each
// variable dimension; the task's body declares the variable again with those lengths.
//
//===----------------------------------------------------------------------===//
#ifndef NANORT_PLUGIN_VARIABLYMODIFIED_H
#define NANORT_PLUGIN_VARIABLYMODIFIED_H

#include "clang/AST/PrettyPrinter.h"
#include "clang/AST/Type.h"

#include <optional>
#include <string>
#include <vector>

namespace nanort {

// A variably modified type as its layers, from the outside in, down to an element type that
// is neither a pointer to a variably modified type nor an array.
struct VMLayer {
  enum Kind { Pointer, ConstArray, VarArray } K;
  std::string Text; // Pointer: its qualifiers ("const "); ConstArray: its length
};
struct VMType {
  std::vector<VMLayer> Layers;
  clang::QualType Elem;
  bool isArray() const { return !Layers.empty() && Layers[0].K != VMLayer::Pointer; }
  unsigned varDims() const;
};

// T's layers; nullopt for a shape that inline tasks do not capture (a function type).
std::optional<VMType> splitVariablyModified(const clang::ASTContext &Ctx, clang::QualType T);

// For a variable spelled Expr, an expression of each variable dimension's length, outermost
// first (sizeof arithmetic: no user expression is evaluated again).
std::vector<std::string> vmLengths(const VMType &VT, const std::string &Expr);

// "Elem Name..." declaring Name of type VT with the variable lengths Lengths, through
// ExtraPointers more pointers ("int (*(*p))[n]").
std::string vmDeclaration(const VMType &VT, const std::string &Name,
                          const std::vector<std::string> &Lengths, unsigned ExtraPointers,
                          const clang::PrintingPolicy &Policy);

} // namespace nanort

#endif
