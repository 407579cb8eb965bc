//===- VariablyModified.cpp - Capturing variably modified variables -------===//
#include "VariablyModified.h"

#include "clang/AST/ASTContext.h"
#include "llvm/Support/raw_ostream.h"

using namespace clang;

namespace nanort {

unsigned VMType::varDims() const {
  unsigned N = 0;
  for (const VMLayer &L : Layers)
    N += L.K == VMLayer::VarArray;
  return N;
}

std::optional<VMType> splitVariablyModified(const ASTContext &Ctx, QualType T) {
  VMType VT;
  // Pointers while the type is variably modified, then every array layer (a constant inner
  // dimension is spelled as it is).
  while (true) {
    if (const ArrayType *A = Ctx.getAsArrayType(T)) {
      if (const auto *C = dyn_cast<ConstantArrayType>(A))
        VT.Layers.push_back({VMLayer::ConstArray, std::to_string(C->getZExtSize())});
      else if (isa<VariableArrayType>(A))
        VT.Layers.push_back({VMLayer::VarArray, ""});
      else
        return std::nullopt; // int a[] as a member of nothing: not a variable's type here
      T = A->getElementType();
      continue;
    }
    if (!T.getCanonicalType()->isVariablyModifiedType()) // (auto hides it from T itself)
      break;
    const auto *P = T->getAs<PointerType>();
    if (!P)
      return std::nullopt;
    std::string Quals = T.getLocalQualifiers().getAsString();
    VT.Layers.push_back({VMLayer::Pointer, Quals.empty() ? "" : Quals + " "});
    T = P->getPointeeType();
  }
  if (VT.Layers.empty())
    return std::nullopt;
  VT.Elem = T;
  return VT;
}

std::vector<std::string> vmLengths(const VMType &VT, const std::string &Expr) {
  std::vector<std::string> Out;
  std::string X = Expr;
  for (const VMLayer &L : VT.Layers) {
    if (L.K == VMLayer::Pointer) {
      X = "(*" + X + ")";
      continue;
    }
    if (L.K == VMLayer::VarArray)
      Out.push_back("sizeof " + X + " / sizeof " + X + "[0]");
    X = X + "[0]";
  }
  return Out;
}

std::string vmDeclaration(const VMType &VT, const std::string &Name,
                          const std::vector<std::string> &Lengths, unsigned ExtraPointers,
                          const PrintingPolicy &Policy) {
  std::string D = Name;
  bool AfterPointer = false;
  for (unsigned I = 0; I < ExtraPointers; ++I) {
    D = "*" + D;
    AfterPointer = true;
  }
  size_t Next = 0;
  for (const VMLayer &L : VT.Layers) {
    if (L.K == VMLayer::Pointer) {
      D = "*" + L.Text + D;
      AfterPointer = true;
      continue;
    }
    if (AfterPointer)
      D = "(" + D + ")";
    AfterPointer = false;
    D += "[" + (L.K == VMLayer::ConstArray ? L.Text : Lengths[Next++]) + "]";
  }
  std::string S;
  llvm::raw_string_ostream OS(S);
  VT.Elem.print(OS, Policy, D);
  return OS.str();
}

} // namespace nanort
