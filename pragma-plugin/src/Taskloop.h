//===- Taskloop.h - The loop of a taskloop, and the code that splits it ------===//
//
// '#pragma omp|oss taskloop' before a canonical 'for' loop: the iterations are split into
// chunks, each an inline task over a sub-range (Lowering.cpp lowers the chunk task with the
// inline task's machinery: captures, data sharing, dependences). This file checks the loop's
// form and writes the parts of the lowered code that are the taskloop's own: the trip count,
// the chunking, and the body of a chunk.
//
//===----------------------------------------------------------------------===//
#ifndef NANORT_PLUGIN_TASKLOOP_H
#define NANORT_PLUGIN_TASKLOOP_H

#include "Pragma.h"

#include "clang/Basic/SourceLocation.h"

#include <string>

namespace clang {
class ASTContext;
class ForStmt;
class Stmt;
class VarDecl;
} // namespace clang

namespace nanort {

// A loop 'for (init; cond; incr) body' in canonical form.
struct TaskloopLoop {
  const clang::ForStmt *For = nullptr;
  const clang::VarDecl *Var = nullptr; // the loop variable, of an integer type
  bool DeclaredInInit = false;         // for (int i = ...)
  clang::SourceRange Lower, Upper;     // the start and the bound, as written
  clang::SourceRange Step;             // i += s, i -= s, i = i + s: s; invalid for ++ and --
  bool Up = true;                      // the condition is i < b or i <= b (or b > i, b >= i)
  bool Inclusive = false;              // <= or >=
  bool StepNegated = false;            // i -= s, i = i - s, i--, --i
};

// Checks that S, the statement after the pragma P, is a loop that a taskloop can split, and
// that its body does not leave it (break, return, goto); reports what is wrong where it is.
bool analyzeTaskloop(clang::ASTContext &Ctx, const Pragma &P, clang::Stmt *S, DiagSink &Diags,
                     TaskloopLoop &Out);

// The helpers of taskloops' lowered code, in the prelude: run-time errors, and the merging of
// the per-iteration dependence items of a chunk into contiguous accesses.
std::string taskloopPrelude();

// The chunk task's body: runs iterations first, first + step, ... (count of them) of the
// user's loop body, the loop variable declared with its Type and name. The chunk
// reads first, count and step from its argument block (ArgsPtr->nanort_tl_first, ...).
std::string taskloopChunkBody(const std::string &Type, const std::string &VarName,
                              const std::string &ArgsPtr, const std::string &UserBody);

// Whether a dependence item names the loop variable (its chunk then depends on the item for
// every iteration it runs).
bool namesTaskloopVariable(const DepItem &D, llvm::StringRef Var);

// '#pragma omp taskloop' waits for its tasks and their descendants (OpenMP's implicit
// taskgroup) unless 'nogroup' is given; '#pragma oss taskloop' never does (OmpSs-2 has no
// taskgroup: its programs wait with taskwait).
inline bool taskloopHasGroup(const Pragma &P) {
  return P.Namespace == "omp" && !P.find(ClauseKind::Nogroup);
}

// The members a chunk's argument block adds.
inline const char *taskloopArgMembers() {
  return " unsigned long long nanort_tl_first, nanort_tl_count, nanort_tl_step;";
}

} // namespace nanort

#endif
