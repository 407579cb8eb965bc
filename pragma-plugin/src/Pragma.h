//===- Pragma.h - A recorded pragma and its parsed clauses -------------------===//
//
// The pragma handler records each '#pragma omp|oss ...' as tokens (macros not expanded: the
// lowered source spells clause expressions as the user wrote them, so that the real compile
// expands macros and reports errors at the user's line and column). parsePragma() checks the
// tokens against the grammar tables and splits them into clauses and dependence items.
//
//===----------------------------------------------------------------------===//
#ifndef NANORT_PLUGIN_PRAGMA_H
#define NANORT_PLUGIN_PRAGMA_H

#include "Diagnostics.h"
#include "Grammar.h"

#include "clang/Basic/SourceLocation.h"
#include "clang/Basic/TokenKinds.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace clang {
class SourceManager;
}

namespace nanort {

struct Tok {
  clang::tok::TokenKind Kind;
  std::string Text;
  clang::SourceLocation Loc;
};
using Toks = std::vector<Tok>;

// Errors found by the plugin, kept as file and offset so that they can be reported through
// the real compile's DiagnosticsEngine (the analysis parse has its own SourceManager).
struct StoredDiag {
  std::string File;
  unsigned Offset;
  std::string Message;
  DiagSeverity Severity = DiagSeverity::Error;
  // A fix-it: replace FixLength bytes at Offset with FixText.
  bool HasFix = false;
  unsigned FixLength = 0;
  std::string FixText;
};

class DiagSink {
public:
  explicit DiagSink(const clang::SourceManager &SM) : SM(SM) {}
  // Id from Diagnostics.def, at Loc.
  void report(DiagId Id, clang::SourceLocation Loc, const DiagArgs &Args = {});
  // With a fix-it that replaces the token at Loc (of TokLength bytes): a note after an error.
  void reportFix(DiagId Id, clang::SourceLocation Loc, const DiagArgs &Args, unsigned TokLength,
                 const std::string &Replacement);
  bool hasErrors() const { return Errors > 0; }
  const std::vector<StoredDiag> &diags() const { return Diags; }

private:
  const clang::SourceManager &SM;
  std::vector<StoredDiag> Diags;
  unsigned Errors = 0;
};

// One array section: x[Lower;Length] or x[Lower:Upper] (upper bound included); in depend(),
// x[Lower:Length].
struct Section {
  Toks Lower, Second;
  bool Inclusive;
  Tok Sep{clang::tok::unknown, "", {}}; // the ':' or ';' as written
  bool ImplicitLower = false; // x[:b], x[;n]: Lower is a 0 that the user did not write
  // The start and the length when written as constants (literals, macros): checked at
  // compile time.
  std::optional<long long> ConstLower, ConstLength;
};

// One iterator of a multidependence: i=lower;length, i=lower:last (last included), either
// with ':step' after it, or i={a, b, c}. Later iterators may use earlier ones (j=0:i).
struct DepIterator {
  std::string Name;
  clang::SourceLocation Loc;
  Toks Lower, Second, Step; // Second: the length (Length) or the last value
  bool Length = false;
  std::vector<Toks> Values; // i={a, b, c}
};

// One item of a dependence, copy or 'taskwait on' clause.
struct DepItem {
  AccessMode Mode;
  std::vector<Toks> Shape; // [n][m]x
  std::vector<std::optional<long long>> ConstShape; // the sizes written as constants
  Toks Base;               // x, *p, s.f, a[i]
  std::vector<Section> Sections;
  std::string BaseVar;     // the variable the item is about (x in [n]x, x[a;b], x.f)
  clang::SourceLocation Loc;
  std::string Written;     // the clause and the item as written: in(x[0;n]), depend(in: x)
  std::string BaseText;    // the base as written, for messages: x, s.p, (*pp)
  // A multidependence {item, i=0;n}: one access per value of the iterators, outer first.
  std::vector<DepIterator> Iters;
};

struct Clause {
  const ClauseInfo *Info = nullptr;
  clang::SourceLocation Loc;
  std::vector<Toks> Args;       // Expr, ExprList
  std::vector<DepItem> Deps;    // DepList, DependList
  std::vector<std::string> Words; // VarList, Name, Keyword, KeywordList
  std::vector<clang::SourceLocation> WordLocs;
  // ReductionList: the operator as written (+, &&, max, a declared reduction's name).
  std::string ReductionOp;
  clang::SourceLocation ReductionOpLoc;
};

struct Pragma {
  const DirectiveInfo *Dir = nullptr;
  std::string Namespace;        // omp or oss
  std::string DirSpelling;
  clang::SourceLocation Begin;  // the '#'
  clang::SourceLocation DirLoc; // the directive name
  clang::SourceLocation End;    // end of the line (the directive's eod)
  std::vector<Clause> Clauses;
  std::string CriticalName;
  // taskloop: 'for' (OmpSs-2's taskloop for) or 'simd' (OpenMP's taskloop simd) after the
  // directive's name; DirSpelling then holds both words.
  std::string Combined;
  bool Valid = false;
  bool Operator = false;        // written _Pragma("..."): Begin..End is its text, or the
                                // macro invocation that expands to it
  // Identifiers in clause arguments (for captures of enclosing inline tasks).
  std::vector<std::string> Identifiers;
  // Single-source OpenCL: a task pragma after 'target device(opencl)' followed by a kernel
  // definition. The private parse skips the body (OpenCL C, not host code) and sees a
  // declaration; these locate the kernel's first token, its '{' and its '}'.
  clang::SourceLocation KernelBegin, KernelOpen, KernelClose;
  // declare reduction(Name : Types : Combiner) initializer(Initializer).
  std::string DeclName;
  clang::SourceLocation DeclNameLoc;
  std::vector<Toks> DeclTypes;
  Toks Combiner, Initializer;

  const Clause *find(ClauseKind K) const {
    for (const Clause &C : Clauses)
      if (C.Info->Kind == K)
        return &C;
    return nullptr;
  }
};

// The replacement tokens of an object-like macro defined where the pragma is; false for
// other names.
using MacroLookup = std::function<bool(const std::string &Name, Toks &Replacement)>;

// Parses the tokens after the directive name; reports errors to Diags. Sets P.Valid. Macros
// (optional) lets constant section bounds written with macros be checked at compile time.
void parsePragma(Pragma &P, const Toks &Tokens, clang::SourceLocation EodLoc, DiagSink &Diags,
                 const MacroLookup *Macros = nullptr);

std::string joinTokens(const Toks &T);

// What is wrong with a section or a shape, in the same words at compile time and at run time
// (values are numbers, or printf directives in the run-time check). Dim counts from 0.
std::string sectionLengthMessage(size_t Dim, size_t Dims, const std::string &Value);
// What the base of a section is, where the plugin knows: an array cannot be indexed before its
// first element; a pointer may point into a larger array, which (p - 4)[0;n] names.
enum class BaseKind { Unknown, Array, Pointer, Other };
std::string sectionStartMessage(size_t Dim, size_t Dims, BaseKind Kind, const std::string &Base,
                                const std::string &Start, const std::string &Offset,
                                const std::string &Length);
std::string shapeSizeMessage(size_t Dim, size_t Dims, const std::string &Value);
// Tokens as the user wrote them, for messages: a space only where the source had one.
std::string spellTokens(const Toks &T);

} // namespace nanort

#endif
