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

#include "Grammar.h"

#include "clang/Basic/SourceLocation.h"
#include "clang/Basic/TokenKinds.h"

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
};

class DiagSink {
public:
  explicit DiagSink(const clang::SourceManager &SM) : SM(SM) {}
  void error(clang::SourceLocation Loc, const std::string &Message);
  bool hasErrors() const { return !Diags.empty(); }
  const std::vector<StoredDiag> &diags() const { return Diags; }

private:
  const clang::SourceManager &SM;
  std::vector<StoredDiag> Diags;
};

// One array section: x[Lower;Length] or x[Lower:Upper] (upper bound included).
struct Section {
  Toks Lower, Second;
  bool Inclusive;
};

// One item of a dependence, copy or 'taskwait on' clause.
struct DepItem {
  AccessMode Mode;
  std::vector<Toks> Shape; // [n][m]x
  Toks Base;               // x, *p, s.f, a[i]
  std::vector<Section> Sections;
  std::string BaseVar;     // the variable the item is about (x in [n]x, x[a;b], x.f)
  clang::SourceLocation Loc;
};

struct Clause {
  const ClauseInfo *Info = nullptr;
  clang::SourceLocation Loc;
  std::vector<Toks> Args;       // Expr, ExprList
  std::vector<DepItem> Deps;    // DepList, DependList
  std::vector<std::string> Words; // VarList, Name, Keyword, KeywordList
  std::vector<clang::SourceLocation> WordLocs;
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
  bool Valid = false;
  bool Operator = false;        // written _Pragma("..."): Begin..End is its text, or the
                                // macro invocation that expands to it
  // Identifiers in clause arguments (for captures of enclosing inline tasks).
  std::vector<std::string> Identifiers;
  // Single-source OpenCL: a task pragma after 'target device(opencl)' followed by a kernel
  // definition. The private parse skips the body (OpenCL C, not host code) and sees a
  // declaration; these locate the kernel's first token, its '{' and its '}'.
  clang::SourceLocation KernelBegin, KernelOpen, KernelClose;

  const Clause *find(ClauseKind K) const {
    for (const Clause &C : Clauses)
      if (C.Info->Kind == K)
        return &C;
    return nullptr;
  }
};

// Parses the tokens after the directive name; reports errors to Diags. Sets P.Valid.
void parsePragma(Pragma &P, const Toks &Tokens, clang::SourceLocation EodLoc, DiagSink &Diags);

std::string joinTokens(const Toks &T);

} // namespace nanort

#endif
