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

#include <functional>
#include <string>
#include <vector>

namespace clang {
class ASTContext;
class Expr;
class ForStmt;
class Stmt;
class VarDecl;
} // namespace clang

namespace nanort {

// A loop 'for (init; cond; incr) body' in canonical form; with collapse(n), the outermost of
// n perfectly nested loops, the others in Inner.
struct TaskloopLoop {
  const clang::ForStmt *For = nullptr;
  const clang::VarDecl *Var = nullptr; // the loop variable, of an integer type
  bool DeclaredInInit = false;         // for (int i = ...)
  clang::SourceRange Lower, Upper;     // the start and the bound, as written
  clang::SourceRange Step;             // i += s, i -= s, i = i + s: s; invalid for ++ and --
  bool Up = true;                      // the condition is i < b or i <= b (or b > i, b >= i)
  bool Inclusive = false;              // <= or >=
  bool StepNegated = false;            // i -= s, i = i - s, i--, --i
  const clang::Expr *LowerE = nullptr, *UpperE = nullptr, *StepE = nullptr;
  // collapse(n), n > 1: the n - 1 loops inside, outermost first (each with Inner empty); the
  // iterations split are those of the product of the n loops.
  std::vector<TaskloopLoop> Inner;
  // The loops, outermost first, and the body that a chunk runs (the innermost loop's).
  std::vector<const TaskloopLoop *> levels() const {
    std::vector<const TaskloopLoop *> L{this};
    for (const TaskloopLoop &I : Inner)
      L.push_back(&I);
    return L;
  }
  const clang::Stmt *body() const;
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

// The chunk task's body of a collapsed nest: iteration first + k of the product space (count
// of them) gives each loop variable (Vars: type and name, outermost first) its value from the
// loops' starts, steps and trip counts in the argument block (nanort_tl_lbs[l], ...).
std::string taskloopCollapsedChunkBody(
    const std::vector<std::pair<std::string, std::string>> &Vars, const std::string &ArgsPtr,
    const std::string &UserBody);

// The declarations of the loop variables of a collapsed nest for the iteration Linear of the
// product space; Field("lb" | "step" | "n", level) spells each loop's start, step and trip count.
std::string taskloopCollapsedVars(
    const std::vector<std::pair<std::string, std::string>> &Vars, const std::string &Linear,
    const std::function<std::string(const char *, unsigned)> &Field);

// Whether a dependence item names the loop variable (its chunk then depends on the item for
// every iteration it runs).
bool namesTaskloopVariable(const DepItem &D, llvm::StringRef Var);
bool namesTaskloopVariable(const DepItem &D, const TaskloopLoop &Loop);

// '#pragma omp taskloop' waits for its tasks and their descendants (OpenMP's implicit
// taskgroup) unless 'nogroup' is given; '#pragma oss taskloop' never does (OmpSs-2 has no
// taskgroup: its programs wait with taskwait).
inline bool taskloopHasGroup(const Pragma &P) {
  return P.Namespace == "omp" && !P.find(ClauseKind::Nogroup);
}

// A reduction on '#pragma omp taskloop' makes its implicit taskgroup the reduction's scope:
// nanort_taskgroup_begin, a task_reduction per item, chunks that are in_reduction tasks,
// nanort_taskgroup_end. ('#pragma oss taskloop reduction' makes each chunk a reduction task.)
inline bool taskloopReductionGroup(const Pragma &P) {
  return taskloopHasGroup(P) && P.find(ClauseKind::Reduction);
}

// The members a chunk's argument block adds: with collapse(n), the linear first iteration and
// the n loops' starts, steps and trip counts.
inline std::string taskloopArgMembers(const TaskloopLoop &Loop) {
  std::string S = " unsigned long long nanort_tl_first, nanort_tl_count, nanort_tl_step;";
  if (!Loop.Inner.empty()) {
    std::string N = std::to_string(Loop.Inner.size() + 1);
    S += " unsigned long long nanort_tl_lbs[" + N + "], nanort_tl_steps[" + N +
         "], nanort_tl_ns[" + N + "];";
  }
  return S;
}

} // namespace nanort

#endif
