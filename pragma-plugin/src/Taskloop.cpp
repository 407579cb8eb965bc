//===- Taskloop.cpp - The loop of a taskloop, and the code that splits it ----===//
#include "Taskloop.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"

using namespace clang;

namespace nanort {

namespace {

// The variable an expression names (through parentheses and implicit conversions).
const VarDecl *named(const Expr *E) {
  if (!E)
    return nullptr;
  if (const auto *D = dyn_cast<DeclRefExpr>(E->IgnoreParenImpCasts()))
    return dyn_cast<VarDecl>(D->getDecl());
  return nullptr;
}

// A binary operation as written, whether Clang built an operator node or (in a template,
// with operands of dependent types) a call of an operator.
struct Binary {
  BinaryOperatorKind Op;
  const Expr *LHS, *RHS;
};
bool binary(const Expr *E, Binary &B) {
  if (!E)
    return false;
  E = E->IgnoreParens();
  if (const auto *BO = dyn_cast<BinaryOperator>(E)) {
    B = {BO->getOpcode(), BO->getLHS(), BO->getRHS()};
    return true;
  }
  if (const auto *OC = dyn_cast<CXXOperatorCallExpr>(E); OC && OC->getNumArgs() == 2) {
    if (!OC->isInfixBinaryOp())
      return false;
    B = {BinaryOperator::getOverloadedOpcode(OC->getOperator()), OC->getArg(0), OC->getArg(1)};
    return true;
  }
  return false;
}

// i++, ++i, i--, --i: +1 or -1; 0 for anything else.
int unaryStep(const Expr *E, const VarDecl *V) {
  E = E->IgnoreParens();
  if (const auto *U = dyn_cast<UnaryOperator>(E)) {
    if (U->isIncrementDecrementOp() && named(U->getSubExpr()) == V)
      return U->isIncrementOp() ? 1 : -1;
    return 0;
  }
  if (const auto *OC = dyn_cast<CXXOperatorCallExpr>(E);
      OC && OC->getNumArgs() >= 1 && named(OC->getArg(0)) == V) {
    if (OC->getOperator() == OO_PlusPlus)
      return 1;
    if (OC->getOperator() == OO_MinusMinus)
      return -1;
  }
  return 0;
}

SourceRange fileRange(const SourceManager &SM, SourceRange R) {
  return SourceRange(SM.getExpansionLoc(R.getBegin()), SM.getExpansionRange(R.getEnd()).getEnd());
}

// break out of the loop itself (not of a loop or switch inside it), return, goto.
class LeaveFinder : public RecursiveASTVisitor<LeaveFinder> {
  using Base = RecursiveASTVisitor<LeaveFinder>;

public:
  Stmt *Found = nullptr;
  bool TraverseLambdaExpr(LambdaExpr *) { return true; } // its returns are its own
  bool TraverseForStmt(ForStmt *S) { return inner(S); }
  bool TraverseWhileStmt(WhileStmt *S) { return inner(S); }
  bool TraverseDoStmt(DoStmt *S) { return inner(S); }
  bool TraverseCXXForRangeStmt(CXXForRangeStmt *S) { return inner(S); }
  bool TraverseSwitchStmt(SwitchStmt *S) { return inner(S); }
  bool VisitBreakStmt(BreakStmt *S) { return Depth ? true : record(S); }
  bool VisitReturnStmt(ReturnStmt *S) { return record(S); }
  bool VisitGotoStmt(GotoStmt *S) { return record(S); }
  bool VisitIndirectGotoStmt(IndirectGotoStmt *S) { return record(S); }

private:
  int Depth = 0;
  template <class T> bool inner(T *S) {
    ++Depth;
    bool R = Base::WalkUpFromStmt(S);
    for (Stmt *Child : S->children())
      R = R && TraverseStmt(Child);
    --Depth;
    return R;
  }
  bool record(Stmt *S) {
    if (!Found)
      Found = S;
    return true;
  }
};

} // namespace

namespace {

// One loop of the nest: its variable, start, bound and step (the loop F is Out.For).
bool analyzeLevel(ASTContext &Ctx, const ForStmt *F, DiagSink &Diags, TaskloopLoop &Out) {
  const SourceManager &SM = Ctx.getSourceManager();
  Out.For = F;
  // init: 'T i = start' or 'i = start'.
  const Stmt *Init = F->getInit();
  SourceLocation At = Init ? Init->getBeginLoc() : F->getLParenLoc();
  const VarDecl *V = nullptr;
  if (const auto *DS = dyn_cast_or_null<DeclStmt>(Init)) {
    if (DS->isSingleDecl())
      if (const auto *D = dyn_cast<VarDecl>(DS->getSingleDecl()); D && D->getInit()) {
        V = D;
        Out.DeclaredInInit = true;
        Out.Lower = fileRange(SM, D->getInit()->getSourceRange());
        Out.LowerE = D->getInit();
      }
  } else if (Binary B; Init && binary(cast<Expr>(Init), B) && B.Op == BO_Assign) {
    V = named(B.LHS);
    if (V) {
      Out.Lower = fileRange(SM, B.RHS->getSourceRange());
      Out.LowerE = B.RHS;
    }
  }
  if (!V || !V->isLocalVarDeclOrParm()) {
    Diags.report(DiagId::TaskloopInit, At);
    return false;
  }
  Out.Var = V;
  std::string Name = V->getName().str();
  QualType T = V->getType();
  if (!T->isDependentType() &&
      (!T->isIntegerType() || T->isBooleanType() || T->isEnumeralType() || T->isReferenceType())) {
    Diags.report(DiagId::TaskloopVariableType, V->getLocation(), {Name});
    return false;
  }

  // cond: i < b, i <= b, i > b, i >= b, or b > i, ...
  Binary C;
  const Expr *Cond = F->getCond();
  bool CondOK = Cond && binary(Cond, C) &&
                (C.Op == BO_LT || C.Op == BO_LE || C.Op == BO_GT || C.Op == BO_GE) &&
                (named(C.LHS) == V) != (named(C.RHS) == V);
  if (!CondOK) {
    Diags.report(DiagId::TaskloopCondition, Cond ? Cond->getBeginLoc() : F->getForLoc(), {Name});
    return false;
  }
  bool VarLeft = named(C.LHS) == V;
  const Expr *Bound = VarLeft ? C.RHS : C.LHS;
  QualType BT = Bound->IgnoreParenImpCasts()->getType();
  if (!BT->isDependentType() && !BT->isIntegralOrUnscopedEnumerationType()) {
    Diags.report(DiagId::TaskloopBoundType, Bound->getBeginLoc());
    return false;
  }
  Out.Upper = fileRange(SM, Bound->getSourceRange());
  Out.UpperE = Bound;
  Out.Inclusive = C.Op == BO_LE || C.Op == BO_GE;
  Out.Up = (C.Op == BO_LT || C.Op == BO_LE) == VarLeft;

  // incr: i++, ++i, i--, --i, i += s, i -= s, i = i + s, i = s + i, i = i - s.
  const Expr *Inc = F->getInc();
  bool IncOK = false;
  int Unary = Inc ? unaryStep(Inc, V) : 0;
  if (Unary) {
    IncOK = true;
    Out.StepNegated = Unary < 0;
  } else if (Binary B; Inc && binary(Inc, B) && named(B.LHS) == V) {
    Binary R;
    if (B.Op == BO_AddAssign || B.Op == BO_SubAssign) {
      IncOK = true;
      Out.Step = fileRange(SM, B.RHS->getSourceRange());
      Out.StepE = B.RHS;
      Out.StepNegated = B.Op == BO_SubAssign;
    } else if (B.Op == BO_Assign && binary(B.RHS, R) && (R.Op == BO_Add || R.Op == BO_Sub) &&
               (named(R.LHS) == V || (R.Op == BO_Add && named(R.RHS) == V))) {
      IncOK = true;
      Out.StepE = named(R.LHS) == V ? R.RHS : R.LHS;
      Out.Step = fileRange(SM, Out.StepE->getSourceRange());
      Out.StepNegated = R.Op == BO_Sub;
    }
  }
  if (!IncOK) {
    Diags.report(DiagId::TaskloopIncrement, Inc ? Inc->getBeginLoc() : F->getRParenLoc(), {Name});
    return false;
  }
  // A step known at compile time must go towards the bound (others are checked when the
  // loop starts).
  std::optional<llvm::APSInt> Known;
  if (Unary)
    Known = llvm::APSInt::get(1);
  else if (const auto *E = dyn_cast<Expr>(Out.Step.isValid() ? Inc : nullptr)) {
    Binary B;
    binary(E, B);
    const Expr *StepE = B.RHS;
    Binary R;
    if (B.Op == BO_Assign && binary(B.RHS, R))
      StepE = named(R.LHS) == V ? R.RHS : R.LHS;
    if (!StepE->isValueDependent())
      Known = StepE->getIntegerConstantExpr(Ctx);
  }
  if (Known) {
    int Sign = Known->isZero() ? 0 : Known->isNegative() ? -1 : 1;
    if (Out.StepNegated)
      Sign = -Sign;
    if (Sign == 0 || (Sign > 0) != Out.Up) {
      Diags.report(DiagId::TaskloopDirection, Inc->getBeginLoc(), {Name, Out.Up ? "up" : "down"});
      return false;
    }
  }

  return true;
}

// The first variable of Outer that E names, if any.
class OuterUse : public RecursiveASTVisitor<OuterUse> {
public:
  const std::vector<const TaskloopLoop *> &Outer;
  const VarDecl *Found = nullptr;
  explicit OuterUse(const std::vector<const TaskloopLoop *> &O) : Outer(O) {}
  bool VisitDeclRefExpr(DeclRefExpr *E) {
    for (const TaskloopLoop *L : Outer)
      if (E->getDecl() == L->Var && !Found)
        Found = L->Var;
    return true;
  }
};

// The statement of a loop's body, through braces around it alone.
const Stmt *only(const Stmt *S) {
  while (const auto *CS = dyn_cast_or_null<CompoundStmt>(S)) {
    if (CS->size() != 1)
      return S;
    S = CS->body_front();
  }
  return S;
}

} // namespace

const Stmt *TaskloopLoop::body() const {
  return Inner.empty() ? For->getBody() : Inner.back().For->getBody();
}

bool analyzeTaskloop(ASTContext &Ctx, const Pragma &P, Stmt *S, DiagSink &Diags,
                     TaskloopLoop &Out) {
  const std::string Dir = "'#pragma " + P.Namespace + " " + P.DirSpelling + "'";
  auto *F = dyn_cast_or_null<ForStmt>(S);
  if (!F) {
    Diags.report(isa_and_nonnull<CXXForRangeStmt>(S) ? DiagId::TaskloopRangeFor
                                                     : DiagId::TaskloopWithoutLoop,
                 P.DirLoc, {Dir});
    return false;
  }
  unsigned Depth = 1;
  if (const Clause *C = P.find(ClauseKind::Collapse)) {
    const Toks &A = C->Args[0];
    unsigned long long V = 0;
    if (A.size() != 1 || A[0].Kind != tok::numeric_constant ||
        llvm::StringRef(A[0].Text).getAsInteger(0, V) || V == 0 || V > 16) {
      Diags.report(DiagId::TaskloopCollapseValue, C->Loc, {spellTokens(A)});
      return false;
    }
    Depth = (unsigned)V;
  }
  if (P.find(ClauseKind::Grainsize) && P.find(ClauseKind::NumTasks)) {
    Diags.report(DiagId::TaskloopGranularity, P.find(ClauseKind::NumTasks)->Loc, {Dir});
    return false;
  }
  // OpenMP: the reduction's result is ready when the taskloop's group ends, so no nogroup.
  if (P.Namespace == "omp" && P.find(ClauseKind::Nogroup))
    if (const Clause *R = P.find(ClauseKind::Reduction)) {
      Diags.report(DiagId::TaskloopReductionNogroup, R->Loc, {Dir});
      return false;
    }

  if (!analyzeLevel(Ctx, F, Diags, Out))
    return false;
  // collapse(n): n - 1 more loops, each the whole body of the one before, whose start, bound
  // and step do not depend on the variables of the loops around them.
  std::vector<const TaskloopLoop *> Outer{&Out};
  const ForStmt *Prev = F;
  for (unsigned L = 1; L < Depth; ++L) {
    const Stmt *B = only(Prev->getBody());
    const auto *Next = dyn_cast_or_null<ForStmt>(B);
    if (!Next) {
      // At the statement that is not the next loop (the second loop of two).
      SourceLocation At = B ? B->getBeginLoc() : Prev->getRParenLoc();
      if (const auto *CS = dyn_cast_or_null<CompoundStmt>(B); CS && !CS->body_empty()) {
        At = CS->body_back()->getBeginLoc();
        for (const Stmt *Child : llvm::reverse(CS->body()))
          if (!isa<ForStmt>(Child) && !isa<NullStmt>(Child))
            At = Child->getBeginLoc();
      }
      Diags.report(DiagId::TaskloopCollapseNest, At,
                   {std::to_string(Depth), Outer.back()->Var->getName().str()});
      return false;
    }
    TaskloopLoop Level;
    if (!analyzeLevel(Ctx, Next, Diags, Level))
      return false;
    for (auto [What, E] : {std::pair<const char *, const Expr *>{"start", Level.LowerE},
                           {"bound", Level.UpperE},
                           {"step", Level.StepE}}) {
      OuterUse U(Outer);
      if (E)
        U.TraverseStmt(const_cast<Expr *>(E));
      if (U.Found) {
        Diags.report(DiagId::TaskloopCollapseNonRectangular, E->getBeginLoc(),
                     {What, Level.Var->getName().str(), U.Found->getName().str()});
        return false;
      }
    }
    Out.Inner.push_back(Level);
    Outer = Out.levels();
    Prev = Next;
  }

  LeaveFinder LF;
  LF.TraverseStmt(const_cast<Stmt *>(Out.body()));
  if (LF.Found) {
    const char *What = isa<BreakStmt>(LF.Found)    ? "'break'"
                       : isa<ReturnStmt>(LF.Found) ? "'return'"
                                                   : "'goto'";
    Diags.report(DiagId::JumpOutOfTaskloop, LF.Found->getBeginLoc(), {What});
    return false;
  }
  return true;
}

std::string taskloopPrelude() {
  // A run-time error of a taskloop (a grainsize that is not positive, a step that never
  // reaches the bound): the message names the pragma; the program ends with status 1.
  // nanort_tl_add: the items of one dependence for successive iterations of a chunk, merged
  // while they touch or overlap (a[i] for i in [8, 16) is one access of 8 elements).
  return "static inline __attribute__((unused, noreturn)) void nanort_tl_error(const char "
         "*nanort_format, long long nanort_value) {\n"
         "  fprintf(stderr, nanort_format, nanort_value);\n"
         "  exit(1);\n}\n"
         "static inline __attribute__((unused)) void nanort_tl_access(nanort_task *nanort_t, "
         "__UINTPTR_TYPE__ nanort_lo, __UINTPTR_TYPE__ nanort_hi, nanort_access_mode "
         "nanort_m) {\n"
         "  if (nanort_hi != nanort_lo)\n"
         "    nanort_check(nanort_task_access(nanort_t, (const void *)nanort_lo, "
         "(size_t)(nanort_hi - nanort_lo), nanort_m), \"nanort_task_access\");\n}\n"
         "static inline __attribute__((unused)) void nanort_tl_add(nanort_task *nanort_t, "
         "__UINTPTR_TYPE__ *nanort_lo, __UINTPTR_TYPE__ *nanort_hi, const void *nanort_p, "
         "size_t nanort_n, nanort_access_mode nanort_m) {\n"
         "  __UINTPTR_TYPE__ nanort_a = (__UINTPTR_TYPE__)nanort_p, nanort_b = nanort_a + "
         "nanort_n;\n"
         "  if (nanort_n == 0) return;\n"
         "  if (*nanort_lo != *nanort_hi && nanort_a <= *nanort_hi && nanort_b >= *nanort_lo) "
         "{\n"
         "    if (nanort_a < *nanort_lo) *nanort_lo = nanort_a;\n"
         "    if (nanort_b > *nanort_hi) *nanort_hi = nanort_b;\n"
         "    return;\n  }\n"
         "  nanort_tl_access(nanort_t, *nanort_lo, *nanort_hi, nanort_m);\n"
         "  *nanort_lo = nanort_a;\n  *nanort_hi = nanort_b;\n}\n";
}

std::string taskloopChunkBody(const std::string &Type, const std::string &VarName,
                              const std::string &ArgsPtr, const std::string &UserBody) {
  // Unsigned arithmetic: first + k * step is the iteration's value modulo 2^64, which the
  // conversion to the variable's type makes exact (the value is one the loop takes).
  return "for (unsigned long long nanort_tl_k = 0; nanort_tl_k < " + ArgsPtr +
         "->nanort_tl_count; ++nanort_tl_k) { " + Type + " " + VarName + " = (" + Type + ")(" +
         ArgsPtr + "->nanort_tl_first + nanort_tl_k * " + ArgsPtr + "->nanort_tl_step); (void)" +
         VarName + ";\n" + UserBody + "\n}";
}

std::string taskloopCollapsedVars(
    const std::vector<std::pair<std::string, std::string>> &Vars, const std::string &Linear,
    const std::function<std::string(const char *, unsigned)> &Field) {
  // The innermost loop varies fastest: iteration r of the product is, from the inside out,
  // r % n of each loop, r / n left for the loops around it.
  std::string S = "unsigned long long nanort_tl_r = " + Linear + ";\n";
  for (unsigned L = Vars.size() - 1; L > 0; --L)
    S += "unsigned long long nanort_tl_q" + std::to_string(L) + " = nanort_tl_r % " +
         Field("n", L) + "; nanort_tl_r /= " + Field("n", L) + ";\n";
  for (unsigned L = 0; L < Vars.size(); ++L) {
    const auto &[Type, Name] = Vars[L];
    S += Type + " " + Name + " = (" + Type + ")(" + Field("lb", L) + " + " +
         (L ? "nanort_tl_q" + std::to_string(L) : std::string("nanort_tl_r")) + " * " +
         Field("step", L) + "); (void)" + Name + ";\n";
  }
  return S;
}

std::string taskloopCollapsedChunkBody(
    const std::vector<std::pair<std::string, std::string>> &Vars, const std::string &ArgsPtr,
    const std::string &UserBody) {
  auto Field = [&](const char *F, unsigned L) {
    return ArgsPtr + "->nanort_tl_" + F + "s[" + std::to_string(L) + "]";
  };
  return "for (unsigned long long nanort_tl_k = 0; nanort_tl_k < " + ArgsPtr +
         "->nanort_tl_count; ++nanort_tl_k) {\n" +
         taskloopCollapsedVars(Vars, ArgsPtr + "->nanort_tl_first + nanort_tl_k", Field) +
         UserBody + "\n}";
}

bool namesTaskloopVariable(const DepItem &D, const TaskloopLoop &Loop) {
  for (const TaskloopLoop *L : Loop.levels())
    if (namesTaskloopVariable(D, L->Var->getName()))
      return true;
  return false;
}

bool namesTaskloopVariable(const DepItem &D, llvm::StringRef Var) {
  auto In = [&](const Toks &T) {
    for (const Tok &K : T)
      if (K.Kind == tok::identifier && K.Text == Var)
        return true;
    return false;
  };
  bool Found = In(D.Base);
  for (const Toks &S : D.Shape)
    Found |= In(S);
  for (const Section &S : D.Sections)
    Found |= In(S.Lower) || In(S.Second);
  for (const DepIterator &It : D.Iters) { // a multidependence's ranges
    Found |= In(It.Lower) || In(It.Second) || In(It.Step);
    for (const Toks &V : It.Values)
      Found |= In(V);
  }
  return Found;
}

} // namespace nanort
