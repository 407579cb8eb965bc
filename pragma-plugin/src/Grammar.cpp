//===- Grammar.cpp - The directive and clause tables -------------------------===//
#include "Grammar.h"

#include "llvm/ADT/SmallVector.h"

using namespace llvm;

namespace nanort {

static const DirectiveInfo Directives[] = {
    {"task", DirectiveKind::Task, OnTask, false, false},
    {"taskwait", DirectiveKind::Taskwait, OnTaskwait, true, false},
    {"target", DirectiveKind::Target, OnTarget, false, false},
    {"critical", DirectiveKind::Critical, 0, false, true},
    {"atomic", DirectiveKind::Atomic, 0, false, false},
    {"taskloop", DirectiveKind::Taskloop, OnTaskloop, false, false},
    // Accepted and dropped: 'simd' and 'declare simd' are vectorisation hints (their clauses
    // are not read), 'taskyield' lets a thread run other tasks, which changes no result.
    {"simd", DirectiveKind::Ignored, 0, true, false},
    {"taskyield", DirectiveKind::Ignored, 0, true, false},
    {"taskgroup", DirectiveKind::Taskgroup, OnTaskgroup, false, false},
    {"declare", DirectiveKind::Declare, 0, true, false}, // declare reduction only
    {"taskiter", DirectiveKind::Taskiter, OnTaskiter, false, false},
    {"taskgraph", DirectiveKind::Taskgraph, OnTaskgraph, false, false},
};

static constexpr AccessMode NoMode = AccessMode::In;

static const ClauseInfo Clauses[] = {
    // Dependences.
    {"in", ClauseKind::In, ArgKind::DepList, OnTasks | OnTaskwait, AccessMode::In, nullptr,
     nullptr},
    {"input", ClauseKind::In, ArgKind::DepList, OnTasks | OnTaskwait, AccessMode::In, nullptr,
     nullptr},
    {"out", ClauseKind::Out, ArgKind::DepList, OnTasks | OnTaskwait, AccessMode::Out, nullptr,
     nullptr},
    {"output", ClauseKind::Out, ArgKind::DepList, OnTasks | OnTaskwait, AccessMode::Out, nullptr,
     nullptr},
    {"inout", ClauseKind::Inout, ArgKind::DepList, OnTasks | OnTaskwait, AccessMode::Inout, nullptr,
     nullptr},
    {"concurrent", ClauseKind::Concurrent, ArgKind::DepList, OnTasks, AccessMode::Concurrent,
     nullptr, nullptr},
    {"commutative", ClauseKind::Commutative, ArgKind::DepList, OnTasks, AccessMode::Commutative,
     nullptr, nullptr},
    {"depend", ClauseKind::Depend, ArgKind::DependList, OnTasks | OnTaskwait, NoMode, nullptr,
     nullptr},
    // Data sharing of inline tasks.
    // (On taskiter, OmpSs-2 accepts shared: its loop runs where it is, every name is shared.)
    {"shared", ClauseKind::Shared, ArgKind::VarList, OnTasks | OnTaskiter, NoMode, nullptr,
     nullptr},
    {"private", ClauseKind::Private, ArgKind::VarList, OnTasks, NoMode, nullptr, nullptr},
    {"firstprivate", ClauseKind::Firstprivate, ArgKind::VarList, OnTasks, NoMode, nullptr, nullptr},
    // OmpSs-1: an 'in' dependence on the variable, and a private copy made when the task
    // starts (after the dependence is satisfied), not when it is created.
    {"inprivate", ClauseKind::Inprivate, ArgKind::DepList, OnTask, AccessMode::In, nullptr,
     nullptr},
    {"default", ClauseKind::Default, ArgKind::Keyword, OnTasks, NoMode, "shared|firstprivate|none",
     nullptr},
    // Reductions (Reduction.cpp).
    {"reduction", ClauseKind::Reduction, ArgKind::ReductionList, OnTasks, NoMode, nullptr,
     nullptr},
    {"weakreduction", ClauseKind::WeakReduction, ArgKind::ReductionList, OnTask, NoMode, nullptr,
     nullptr},
    {"in_reduction", ClauseKind::InReduction, ArgKind::ReductionList, OnTasks, NoMode, nullptr,
     nullptr},
    {"task_reduction", ClauseKind::TaskReduction, ArgKind::ReductionList, OnTaskgroup, NoMode,
     nullptr, nullptr},
    // Task properties.
    {"priority", ClauseKind::Priority, ArgKind::Expr, OnTasks, NoMode, nullptr, nullptr},
    {"label", ClauseKind::Label, ArgKind::Name, OnTasks, NoMode, nullptr, nullptr},
    {"if", ClauseKind::If, ArgKind::Expr, OnTasks | OnTaskgraph, NoMode, nullptr, nullptr},
    {"final", ClauseKind::Final, ArgKind::Expr, OnTasks, NoMode, nullptr, nullptr},
    // OmpSs-2: cost is evaluated and ignored (the C ABI has no cost hint; dmda measures times
    // instead); onready's expression runs when the task starts, before its body.
    {"cost", ClauseKind::Cost, ArgKind::Expr, OnTasks, NoMode, nullptr, nullptr},
    {"onready", ClauseKind::Onready, ArgKind::Expr, OnTask, NoMode, nullptr, nullptr},
    // taskwait.
    {"on", ClauseKind::On, ArgKind::DepList, OnTaskwait, AccessMode::Inout, nullptr, nullptr},
    {"noflush", ClauseKind::Noflush, ArgKind::None, OnTaskwait, NoMode, nullptr, nullptr},
    // Devices.
    {"device", ClauseKind::Device, ArgKind::KeywordList, OnTarget, NoMode, "smp|opencl|cuda",
     nullptr},
    {"ndrange", ClauseKind::Ndrange, ArgKind::ExprList, OnTarget, NoMode, nullptr, nullptr},
    {"shmem", ClauseKind::Shmem, ArgKind::Expr, OnTarget, NoMode, nullptr, nullptr},
    {"copy_deps", ClauseKind::CopyDeps, ArgKind::None, OnTarget | OnTask, NoMode, nullptr, nullptr},
    {"no_copy_deps", ClauseKind::NoCopyDeps, ArgKind::None, OnTarget | OnTask, NoMode, nullptr,
     nullptr},
    {"copy_in", ClauseKind::CopyIn, ArgKind::DepList, OnTarget | OnTask, AccessMode::In, nullptr,
     nullptr},
    {"copy_out", ClauseKind::CopyOut, ArgKind::DepList, OnTarget | OnTask, AccessMode::Out, nullptr,
     nullptr},
    {"copy_inout", ClauseKind::CopyInout, ArgKind::DepList, OnTarget | OnTask, AccessMode::Inout,
     nullptr, nullptr},
    {"file", ClauseKind::File, ArgKind::Path, OnTarget, NoMode, nullptr, nullptr},
    {"name", ClauseKind::Name, ArgKind::Name, OnTarget, NoMode, nullptr, nullptr},
    {"implements", ClauseKind::Implements, ArgKind::Name, OnTarget, NoMode, nullptr, nullptr},
    // taskloop.
    {"grainsize", ClauseKind::Grainsize, ArgKind::Expr, OnTaskloop, NoMode, nullptr, nullptr},
    {"num_tasks", ClauseKind::NumTasks, ArgKind::Expr, OnTaskloop, NoMode, nullptr, nullptr},
    {"nogroup", ClauseKind::Nogroup, ArgKind::None, OnTaskloop | OnTaskgraph, NoMode, nullptr,
     nullptr},
    {"collapse", ClauseKind::Collapse, ArgKind::Expr, OnTaskloop, NoMode, nullptr, nullptr},
    // taskiter and taskgraph (Taskiter.cpp).
    {"unroll", ClauseKind::Unroll, ArgKind::Expr, OnTaskiter, NoMode, nullptr, nullptr},
    {"update", ClauseKind::Update, ArgKind::None, OnTaskiter, NoMode, nullptr, nullptr},
    {"graph_id", ClauseKind::GraphId, ArgKind::Expr, OnTaskgraph, NoMode, nullptr, nullptr},
    {"graph_reset", ClauseKind::GraphReset, ArgKind::OptionalExpr, OnTaskgraph, NoMode, nullptr,
     nullptr},
    // OpenMP 6.0: replayable(0) keeps a task out of the recording (it runs with the body).
    {"replayable", ClauseKind::Replayable, ArgKind::OptionalExpr, OnTasks, NoMode, nullptr,
     nullptr},
};

// OpenMP directives outside what nanort lowers: rejected by name, so that the message says
// what they are.
static const char *const OtherOpenMP[] = {
    "parallel",   "for",        "sections",   "section",      "single",    "master",
    "masked",     "barrier",    "flush",
    "ordered",    "threadprivate", "teams",    "distribute",
    "loop",       "scope",      "requires",   "metadirective", "cancel",   "cancellation",
    "allocate",   "tile",       "unroll",     "depobj",       "scan",      "error",
    "nothing",    "interop",    "dispatch",   "assume",       "assumes",   "begin",
    "end",        "release",
};

const DirectiveInfo *findDirective(StringRef Spelling) {
  for (const DirectiveInfo &D : Directives)
    if (Spelling == D.Spelling)
      return &D;
  return nullptr;
}

const ClauseInfo *findClause(StringRef Spelling) {
  for (const ClauseInfo &C : Clauses)
    if (Spelling == C.Spelling)
      return &C;
  return nullptr;
}

bool isOtherOpenMPDirective(StringRef Spelling) {
  for (const char *D : OtherOpenMP)
    if (Spelling == D)
      return true;
  return false;
}

std::optional<DiagId> insteadOfDirective(StringRef Spelling) {
  static const struct {
    const char *Spelling;
    DiagId Instead;
  } Hints[] = {{"parallel", DiagId::InsteadOfParallel}, {"for", DiagId::InsteadOfLoop},
               {"loop", DiagId::InsteadOfLoop},         {"distribute", DiagId::InsteadOfLoop},
               {"single", DiagId::InsteadOfSingle},     {"master", DiagId::InsteadOfSingle},
               {"masked", DiagId::InsteadOfSingle},     {"barrier", DiagId::InsteadOfBarrier},
               {"sections", DiagId::InsteadOfSections}, {"section", DiagId::InsteadOfSections},
               {"flush", DiagId::InsteadOfFlush}};
  for (const auto &H : Hints)
    if (Spelling == H.Spelling)
      return H.Instead;
  return std::nullopt;
}

bool findDependMode(StringRef Spelling, AccessMode &Mode) {
  static const struct {
    const char *Spelling;
    AccessMode Mode;
  } Modes[] = {{"in", AccessMode::In},
               {"out", AccessMode::Out},
               {"inout", AccessMode::Inout},
               {"inoutset", AccessMode::Concurrent},
               {"mutexinoutset", AccessMode::Commutative}};
  for (const auto &M : Modes)
    if (Spelling == M.Spelling) {
      Mode = M.Mode;
      return true;
    }
  return false;
}

bool isOneOf(StringRef Word, StringRef Words) {
  SmallVector<StringRef, 4> Parts;
  Words.split(Parts, '|');
  for (StringRef P : Parts)
    if (P == Word)
      return true;
  return false;
}

} // namespace nanort
