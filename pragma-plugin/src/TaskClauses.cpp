//===- TaskClauses.cpp - The clauses of a task, where it is created -------===//
#include "Dependences.h"
#include "LowererImpl.h"

using namespace clang;

namespace nanort {
namespace lowering {

namespace {

// copy_in, copy_out, copy_inout, copy_deps and no_copy_deps, on the target line or written on
// the task itself (OmpSs-1 without a target line, as Mercurium takes them: the same as on the
// target); false for any other clause.
bool emitCopyClause(Code &C, const Clause &Cl, bool CPP, const ItemChecks &Check) {
  switch (Cl.Info->Kind) {
  case ClauseKind::CopyIn:
  case ClauseKind::CopyOut:
  case ClauseKind::CopyInout:
    for (const DepItem &D : Cl.Deps)
      emitAccess(C, D, "nanort_task_copy", modeName(D.Mode), CPP, Check);
    return true;
  case ClauseKind::NoCopyDeps:
  case ClauseKind::CopyDeps:
    C << "nanort_task_set_copy_deps(nanort_t, "
      << (Cl.Info->Kind == ClauseKind::CopyDeps ? "1" : "0") << ");\n";
    return true;
  default:
    return false;
  }
}

} // namespace

// Label, priority, if, final, dependences, and the target's clauses. A task whose own
// devices have no kernel takes its index space (ndrange, shmem) from the target of a version
// (LaunchFrom), whose parameter names Rename turns into the task's.
void Lowerer::emitTaskClauses(Code &C, const Pragma &Task, const std::string &Who,
                              ArrayRef<const VarDecl *> Scope, const Pragma *Target,
                              const Pragma *LaunchFrom,
                              const std::map<std::string, std::string> *Rename,
                              const TaskloopLoop *Loop,
                              const Reductions *Red) {
  ItemChecks Check{"nanort: " + std::string(fileName(Task.Begin)) + ":" +
                       std::to_string(lineOf(Task.Begin)) + ": " + Who + ": ",
                   "nanort_t", &UsesSectionChecks, &Diags,
                   [&](const DepItem &D) { return baseKind(D, Scope); }};
  checkSectionBounds(Task, Scope);
  if (Target)
    checkSectionBounds(*Target, Scope);
  for (const Clause &Cl : Task.Clauses) {
    switch (Cl.Info->Kind) {
    case ClauseKind::In:
    case ClauseKind::Out:
    case ClauseKind::Inout:
    case ClauseKind::Concurrent:
    case ClauseKind::Commutative:
    case ClauseKind::Depend:
    case ClauseKind::Inprivate:
      for (const DepItem &D : Cl.Deps)
        if (Loop && namesTaskloopVariable(D, *Loop))
          emitTaskloopAccess(C, D, loopVars(*Loop), CPP, Check);
        else
          emitAccess(C, D, "nanort_task_access", modeName(D.Mode), CPP, Check);
      break;
    case ClauseKind::Reduction:
    case ClauseKind::WeakReduction:
    case ClauseKind::InReduction: {
      // An OpenMP taskloop's reduction: the chunks join its group's (which reported errors).
      bool OfGroup = Loop && Cl.Info->Kind == ClauseKind::Reduction && taskloopReductionGroup(Task);
      Muted = OfGroup;
      for (const DepItem &D : Cl.Deps)
        emitReduction(C, Cl, D, Scope, Check.Where, "nanort_t",
                      Cl.Info->Kind == ClauseKind::InReduction || OfGroup
                          ? "nanort_task_in_reduction(nanort_t, "
                          : "nanort_task_reduction(nanort_t, ",
                      Red);
      Muted = false;
      break;
    }
    case ClauseKind::Cost:
      // Evaluated, as OmpSs-2 does when it creates the task, and not used: the C ABI has no
      // cost hint (the dmda scheduler measures task times instead).
      C << "(void)("; C.user(Cl.Args[0]); C << ");\n";
      break;
    case ClauseKind::Priority:
      C << "nanort_task_set_priority(nanort_t, "; C.user(Cl.Args[0]); C << ");\n";
      break;
    case ClauseKind::If:
      C << "nanort_task_set_if(nanort_t, ("; C.user(Cl.Args[0]); C << ") ? 1 : 0);\n";
      break;
    case ClauseKind::Final:
      C << "nanort_task_set_final(nanort_t, ("; C.user(Cl.Args[0]); C << ") ? 1 : 0);\n";
      break;
    case ClauseKind::Replayable:  // (alone: replayable, the default)
      if (!Cl.Args.empty()) {
        C << "nanort_task_set_replayable(nanort_t, ("; C.user(Cl.Args[0]); C << ") ? 1 : 0);\n";
      }
      break;
    default:
      emitCopyClause(C, Cl, CPP, Check);
      break;
    }
  }
  if (LaunchFrom) {
    const std::map<std::string, std::string> *Outer = C.Subst;
    C.Subst = Rename;
    for (const Clause &Cl : LaunchFrom->Clauses)
      emitLaunchClause(C, Cl);
    C.Subst = Outer;
  }
  // A task that may run on a device (a target, or a kernel version) and says nothing of
  // copy_deps takes the default that the plugin was given.
  if (Options.NoCopyDepsByDefault && (Target || LaunchFrom) &&
      !(Target && (Target->find(ClauseKind::CopyDeps) || Target->find(ClauseKind::NoCopyDeps))) &&
      !Task.find(ClauseKind::CopyDeps) && !Task.find(ClauseKind::NoCopyDeps))
    C << "nanort_task_set_copy_deps(nanort_t, 0);\n";
  if (!Target)
    return;
  for (const Clause &Cl : Target->Clauses)
    if (!emitCopyClause(C, Cl, CPP, Check) && !LaunchFrom)
      emitLaunchClause(C, Cl);
}

// One reduction item (Reduction.cpp): its bytes, with the operator built on the stack (the
// runtime copies it); a private-copy slot records where the item starts.
void Lowerer::emitReduction(Code &C, const Clause &Cl, const DepItem &D,
                            ArrayRef<const VarDecl *> Scope, const std::string &Where,
                            const char *TaskVar, const std::string &Prefix,
                            const Reductions *Red) {
  std::string Op = reductionOpInit(Cl, D, Scope);
  if (Op.empty())
    return;
  C << "{ ";
  emitItem(C, D, CPP,
           {Where, TaskVar, &UsesSectionChecks, &Diags,
            [&](const DepItem &D) { return baseKind(D, Scope); }});
  C << "nanort_reduction_op nanort_op = " << Op << ";\n";
  C << "nanort_check(" << Prefix << "(void *)nanort_p, nanort_size, &nanort_op), \""
    << Cl.Info->Spelling << "\");\n";
  if (Red)
    for (const ReductionSlot &S : Red->Slots)
      if (S.Item == &D) {
        std::string K = std::to_string(S.K);
        C << Red->ArgsAt << "->nanort_r" << K << " = (void *)nanort_p;\n"
          << Red->ArgsAt << "->nanort_o" << K
          << " = (long long)((const char *)(const void *)nanort_p - (const char *)(const void "
             "*)("
          << S.Base << "));\n";
      }
  C << "}\n";
}

} // namespace lowering
} // namespace nanort
