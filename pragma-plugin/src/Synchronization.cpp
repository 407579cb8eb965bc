//===- Synchronization.cpp - taskwait, critical and atomic ----------------===//
#include "Dependences.h"
#include "LowererImpl.h"

using namespace clang;

namespace nanort {
namespace lowering {

namespace {

// The bytes from an item's first to its last: a 2-D block's rows and the gaps between them.
const char *itemSpan(const DepItem &D) {
  return D.Sections.size() == 2 ? "(nanort_rows - 1) * nanort_stride + nanort_row_bytes"
                                : "nanort_size";
}

} // namespace

// taskwait, taskwait noflush, and taskwait with dependences: OmpSs-1's on(...), OmpSs-2's
// in/out/inout(...) and OpenMP's depend(...). Each of the latter waits only for the earlier
// sibling tasks that access the named bytes, whatever their mode, and makes those bytes
// current on the host (nanort_taskwait_on). OmpSs-2 and OpenMP define them as an empty task
// with those dependences that the thread waits for: for out and inout that is the same set of
// tasks; in(x) would wait for the writers of x only, nanort waits for its readers too (more
// waiting, never less).
void Lowerer::lowerTaskwait(const Pragma &P) {
  std::vector<const DepItem *> Items;
  const Clause *First = nullptr;
  for (const Clause &Cl : P.Clauses)
    if (Cl.Info->Arg == ArgKind::DepList || Cl.Info->Arg == ArgKind::DependList) {
      if (!First)
        First = &Cl;
      for (const DepItem &D : Cl.Deps)
        Items.push_back(&D);
    }
  bool NoFlush = P.find(ClauseKind::Noflush) != nullptr;
  if (First && NoFlush) {
    if (First->Info->Kind == ClauseKind::On)
      report(DiagId::NoflushWithOn, P.DirLoc);
    else
      report(DiagId::NoflushWithDependences, P.DirLoc, {First->Info->Spelling});
    return;
  }
  Code C(SM);
  if (!CPP)
    if (const InlinePlan *Outer = enclosingPlan(P.Begin, nullptr))
      C.Subst = &Outer->Views;
  // The variables that the items may name: those of the enclosing function declared before
  // the pragma, the nearest last.
  std::vector<const VarDecl *> Scope;
  for (const VarDecl *V : Vars) {
    const auto *F = dyn_cast_or_null<FunctionDecl>(V->getParentFunctionOrMethod());
    if (!First || !F || !F->getBody())
      continue;
    SourceLocation B = SM.getExpansionLoc(F->getBody()->getBeginLoc()),
                   E = SM.getExpansionLoc(F->getBody()->getEndLoc());
    if (SM.isBeforeInTranslationUnit(P.Begin, B) || SM.isBeforeInTranslationUnit(E, P.Begin) ||
        !SM.isBeforeInTranslationUnit(SM.getExpansionLoc(V->getLocation()), P.Begin))
      continue;
    Scope.push_back(V);
  }
  ItemChecks Check{"nanort: " + std::string(fileName(P.Begin)) + ":" +
                       std::to_string(lineOf(P.Begin)) + ": taskwait ",
                   "0", &UsesSectionChecks, &Diags,
                   [&](const DepItem &D) { return baseKind(D, Scope); }};
  checkSectionBounds(P, Scope);
  bool Multi = false;
  for (const DepItem *D : Items)
    Multi |= !D->Iters.empty();
  if (!First) {
    C << "nanort_check(" << (NoFlush ? "nanort_taskwait_noflush" : "nanort_taskwait")
      << "(), \"taskwait\");";
  } else if (!Multi) {
    size_t N = Items.size();
    C << "{ const void *nanort_addresses[" << (unsigned)N << "]; size_t nanort_sizes["
      << (unsigned)N << "];\n";
    for (size_t I = 0; I < N; ++I) {
      const DepItem &D = *Items[I];
      C << "{ ";
      emitItem(C, D, CPP, Check);
      C << "nanort_addresses[" << (unsigned)I << "] = (const void *)nanort_p;\n"
        << "nanort_sizes[" << (unsigned)I << "] = " << itemSpan(D) << "; }\n";
    }
    C << "nanort_check(nanort_taskwait_on(nanort_addresses, nanort_sizes, " << (unsigned)N
      << "), \"taskwait on\"); }";
  } else {
    // Multidependences: the number of items is known when the taskwait runs only; waiting for
    // each item in turn waits for the same tasks.
    C << "{ ";
    for (const DepItem *D : Items) {
      IteratorScope It;
      openIterators(C, *D, Check, It);
      C << "{ ";
      emitItem(C, *D, CPP, Check);
      C << "const void *nanort_address = (const void *)nanort_p;\nsize_t nanort_bytes = "
        << itemSpan(*D) << ";\n";
      C << "nanort_check(nanort_taskwait_on(&nanort_address, &nanort_bytes, 1), "
           "\"taskwait on\"); }\n";
      closeIterators(C, It);
    }
    C << "}";
  }
  std::string S = C.str();
  if (S.find('\n') != std::string::npos)
    S += Code::marker(SM, P.End);
  RW.InsertTextAfter(P.End, S);
}

void Lowerer::lowerCritical(const Pragma &P, const Candidate &C) {
  JumpFinder JF;
  JF.TraverseStmt(C.S);
  if (JF.Found)
    return report(DiagId::JumpOutOfCritical, JF.Found->getBeginLoc(),
                  {isa<ReturnStmt>(JF.Found) ? "'return'" : "'goto'"});
  std::string Lock =
      P.CriticalName.empty() ? "nanort_critical_lock" : "nanort_critical_lock_" + P.CriticalName;
  CriticalNames.insert(Lock);
  SourceLocation End = afterToken(C.End);
  Token Last;
  if (!Lexer::getRawToken(C.End, Last, SM, LO) && Last.isNot(tok::r_brace)) {
    SourceLocation Semi = Lexer::findLocationAfterToken(C.End, tok::semi, SM, LO, false);
    if (Semi.isValid())
      End = Semi;
  }
  RW.InsertTextBefore(C.Begin, "{ nanort_critical_enter(&" + Lock + "); ");
  RW.InsertTextAfter(End, " nanort_critical_leave(&" + Lock + "); }");
}

void Lowerer::lowerAtomic(const Pragma &P, const Candidate &C) {
  Expr *E = dyn_cast_or_null<Expr>(C.S);
  if (E)
    E = E->IgnoreParens();
  Expr *LHS = nullptr, *RHS = nullptr;
  std::string Op;
  if (auto *CA = dyn_cast_or_null<CompoundAssignOperator>(E)) {
    LHS = CA->getLHS();
    RHS = CA->getRHS();
    Op = BinaryOperator::getOpcodeStr(BinaryOperator::getOpForCompoundAssignment(CA->getOpcode()))
             .str();
  } else if (auto *U = dyn_cast_or_null<UnaryOperator>(E)) {
    if (U->isIncrementDecrementOp()) {
      LHS = U->getSubExpr();
      Op = U->isIncrementOp() ? "+" : "-";
    }
  } else if (auto *OC = dyn_cast_or_null<CXXOperatorCallExpr>(E);
             OC && OC->isTypeDependent()) {
    // In a template, x += v on a dependent type may be kept as an operator call.
    OverloadedOperatorKind K = OC->getOperator();
    if (K == OO_PlusPlus || K == OO_MinusMinus) {
      LHS = OC->getArg(0);
      Op = K == OO_PlusPlus ? "+" : "-";
    } else if (OC->isAssignmentOp() && K != OO_Equal && OC->getNumArgs() == 2) {
      LHS = OC->getArg(0);
      RHS = OC->getArg(1);
      Op = StringRef(getOperatorSpelling(K)).drop_back().str();
    }
  }
  if (!LHS)
    return report(DiagId::AtomicForm, P.DirLoc, {P.Namespace});
  // A type that depends on a template parameter is checked where the template is
  // instantiated, by a static_assert in the lowered code.
  bool Dependent = LHS->isTypeDependent();
  if (!Dependent && !LHS->getType()->isScalarType())
    return report(DiagId::AtomicScalar, P.DirLoc);
  auto Txt = [&](Expr *X) {
    // The rewritten text: a C inline task around may have replaced shared variables.
    CharSourceRange R = SM.getExpansionRange(X->getSourceRange());
    return RW.getRewrittenText(CharSourceRange::getCharRange(R.getBegin(),
                                                             afterToken(R.getEnd())));
  };
  std::string L = Txt(LHS), R = RHS ? Txt(RHS) : "1";
  SourceLocation End = afterToken(C.End);
  SourceLocation Semi = Lexer::findLocationAfterToken(C.End, tok::semi, SM, LO, false);
  if (Semi.isValid())
    End = Semi;
  std::string Code = "{ ";
  if (Dependent)
    Code += "static_assert(std::is_scalar<std::remove_reference_t<decltype(" + L +
            ")>>::value, " + cLiteral(formatDiag(DiagId::AtomicScalar)) + "); ";
  Code += "__typeof__(" + L + ") *nanort_p = &(" + L + "); __typeof__(" + L +
                     ") nanort_old, nanort_new; __atomic_load(nanort_p, &nanort_old, "
                     "__ATOMIC_RELAXED); do { nanort_new = nanort_old " + Op + " (" + R +
                     "); } while (!__atomic_compare_exchange(nanort_p, &nanort_old, "
                     "&nanort_new, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)); }";
  RW.RemoveText(CharSourceRange::getCharRange(C.Begin, End));
  RW.InsertTextAfter(C.Begin, Code);
}

} // namespace lowering
} // namespace nanort
