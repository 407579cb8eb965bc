//===- NonVoid.h - Function tasks that return a value -----------------------===//
//
// OmpSs-1 (Mercurium's enable_nonvoid_function_tasks) lets a function task return a value.
// Every call is still a task; what the caller may do with the result decides how long it
// waits for it:
//
//  - the call is a statement of its own (the result is dropped), or the whole right side of
//    an assignment statement whose left side has the function's return type
//    ('x = f(a);', 'r[i] = f(i);', 'sum += f(i);'): the task writes the result into the
//    left side itself, with an out (or, for 'op=', inout) dependence on it, and the caller
//    goes on. The left side holds the result after a taskwait (or for tasks that name it in
//    their dependences), as in Mercurium.
//  - any other use (inside an expression, an initializer, a return, an argument): the call
//    makes the task and waits for it (and for the caller's other children) before it returns
//    the value, so the expression reads the right value.
//
//===----------------------------------------------------------------------===//
#ifndef NANORT_PLUGIN_NONVOID_H
#define NANORT_PLUGIN_NONVOID_H

#include "Diagnostics.h"

#include "clang/AST/ASTContext.h"
#include "clang/Rewrite/Core/Rewriter.h"

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace nanort {

// What the task does with its result (the argument block's nanort_op): 0 drops it, 1 stores
// it for a caller that waits, 2 assigns it (out dependence), 3 and up apply 'op=' (inout).
enum : int { ResultDrop = 0, ResultWait = 1, ResultAssign = 2 };
// The operator of a result code from ResultAssign on ("=", "+=", ...).
const char *resultOperator(int Op);

// Why a function task cannot return what it returns, if it cannot: references and deduced
// types (the task stores the value; a reference would dangle, a deduced type is not known
// yet). The diagnostic's argument is the function's name.
std::optional<DiagId> resultTypeProblem(const clang::FunctionDecl *FD);

// A call of a non-void function task whose result the task itself can deliver.
struct ResultUse {
  const clang::CallExpr *Call = nullptr;
  const clang::Expr *Lhs = nullptr; // the assignment's left side; null when dropped
  int Op = ResultDrop;
};

// The calls of FD in the main file, from From on, that can make their task without waiting
// (see the file comment). Calls written in macros, with default arguments, or whose left side
// has side effects, another type, a const or volatile type or is a bit-field are left out:
// they wait.
std::vector<ResultUse> findResultUses(clang::ASTContext &Ctx, const clang::FunctionDecl *FD,
                                      clang::SourceLocation From);

// Rewrites one call so that it calls Into (void Into(T *dst, [void *slot,] int op, params))
// instead: 'x += f(a, b)' becomes 'Into(&(x), 3, a, b)' ('__builtin_addressof(x), nullptr,'
// in C++); the user's text of x and of the arguments stays where it is. False when the call's
// text cannot be edited so.
bool rewriteResultUse(clang::Rewriter &RW, const ResultUse &U, const std::string &Into,
                      bool CPP);

// A statement that calls non-void function tasks two or more times where each call is
// evaluated (not in a branch of '?:', the right side of '&&', '||' or ',', or the arguments of
// another task): 'return fib(n - 1) + fib(n - 2);'. Its calls make their tasks first, the
// statement waits for them together, then it is evaluated with their results.
struct JointCalls {
  const clang::Stmt *S = nullptr;        // an expression statement, return or declaration
  bool Braces = false;                   // the statement is wrapped in a block of its own
  std::vector<const clang::CallExpr *> Calls;
  const clang::FunctionDecl *Enclosing = nullptr;
};

// The statements of the main file whose calls of the functions Of (canonical declarations)
// can be made together; Skip: calls already rewritten; Outside: ranges to leave alone (the
// statements of inline tasks, which are rewritten in place).
std::vector<JointCalls>
findJointCalls(clang::ASTContext &Ctx, const std::set<const clang::FunctionDecl *> &Of,
               const std::set<const clang::CallExpr *> &Skip,
               const std::vector<clang::SourceRange> &Outside);

// Rewrites a statement of joint calls: before it, for each call, a variable for its result
// (C: 'T nanort_rN;', C++: 'std::optional<T> nanort_rN;') and the call of its Into function
// (IntoOf), then one taskwait; each call becomes its variable. N counts on from Counter.
bool rewriteJointCalls(clang::Rewriter &RW, const JointCalls &J,
                       const std::function<std::string(const clang::FunctionDecl *)> &IntoOf,
                       const clang::PrintingPolicy &Policy, bool CPP, unsigned &Counter);

} // namespace nanort

#endif
