//===- Grammar.h - The accepted pragma grammar, as data ----------------------===//
//
// Every directive and clause the plugin knows, what kind of argument each clause takes and
// on which directives it may appear. The parser (Pragma.cpp) and the diagnostics read these
// tables; nothing else names a clause by its spelling.
//
//===----------------------------------------------------------------------===//
#ifndef NANORT_PLUGIN_GRAMMAR_H
#define NANORT_PLUGIN_GRAMMAR_H

#include "Diagnostics.h"

#include "llvm/ADT/StringRef.h"

#include <optional>

namespace nanort {

// Ignored: hints that change no result (simd, declare simd) and taskyield: the pragma line
// goes, nothing else.
enum class DirectiveKind {
  Task, Taskwait, Target, Critical, Atomic, Ignored, Taskloop, Taskgroup, Declare,
  Taskiter, Taskgraph
};

// Bit masks of directives, for "which clause goes with which directive".
enum : unsigned {
  OnTask = 1u << 0,
  OnTaskwait = 1u << 1,
  OnTarget = 1u << 2,
  OnTaskloop = 1u << 3,
  OnTaskgroup = 1u << 4,
  OnTaskiter = 1u << 5,
  OnTaskgraph = 1u << 6,
  // What an inline task and the tasks of a taskloop share.
  OnTasks = OnTask | OnTaskloop,
};

enum class ArgKind {
  None,        // no parentheses: copy_deps, noflush
  DepList,     // dependence items: in([n]x, y[0;n])
  DependList,  // depend(in: items...)
  VarList,     // plain variable names: shared(a, b)
  Expr,        // one expression: priority(p + 1)
  OptionalExpr, // alone or with one expression: replayable, replayable(k > 0)
  ExprList,    // expressions: ndrange(1, n, 128)
  Name,        // an identifier or a string literal: label(update)
  Keyword,     // one word of a fixed set: default(shared)
  KeywordList, // words of a fixed set: device(opencl)
  Path,        // a file name, bare or as a string literal: file(kernels/saxpy.cl)
  ReductionList, // an operator and dependence items: reduction(+: x, v[0;n])
};

enum class ClauseKind {
  In, Out, Inout, Concurrent, Commutative, Depend,
  Shared, Private, Firstprivate, Default, Inprivate,
  Priority, Label, If, Final, Cost, Onready,
  On, Noflush,
  Device, Ndrange, Shmem, CopyDeps, NoCopyDeps, CopyIn, CopyOut, CopyInout,
  File, Name, Implements,
  Grainsize, NumTasks, Nogroup, Collapse,
  Unroll, Update, GraphId, GraphReset, Replayable,
  Reduction, WeakReduction, InReduction, TaskReduction,
};

// Access modes, the values of the C ABI's nanort_access_mode.
enum class AccessMode { In = 1, Out = 2, Inout = 3, Concurrent = 4, Commutative = 5 };

struct ClauseInfo {
  const char *Spelling;
  ClauseKind Kind;
  ArgKind Arg;
  unsigned AllowedOn;     // OnTask | OnTaskwait | OnTarget | OnTaskloop
  AccessMode Mode;        // for dependence and copy clauses
  const char *Words;      // Keyword / KeywordList: the accepted words, '|'-separated
  const char *Unsupported; // non-null: recognised but not lowered yet; why
};

struct DirectiveInfo {
  const char *Spelling;
  DirectiveKind Kind;
  unsigned Mask;          // the directive's bit for ClauseInfo::AllowedOn; 0: no clauses
  bool Standalone;        // not attached to a following declaration or statement
  bool OptionalName;      // critical(name)
};

const DirectiveInfo *findDirective(llvm::StringRef Spelling);
const ClauseInfo *findClause(llvm::StringRef Spelling);
// An OpenMP directive that nanort does not lower (parallel, for, single, ...).
bool isOtherOpenMPDirective(llvm::StringRef Spelling);
// The note that says what to write instead of such a directive, where there is one.
std::optional<DiagId> insteadOfDirective(llvm::StringRef Spelling);
// Dependence modes inside depend(mode: ...).
bool findDependMode(llvm::StringRef Spelling, AccessMode &Mode);
// Whether Word is one of the '|'-separated Words.
bool isOneOf(llvm::StringRef Word, llvm::StringRef Words);

} // namespace nanort

#endif
