//===- NonVoid.cpp - Function tasks that return a value ---------------------===//
#include "NonVoid.h"
#include "LowererImpl.h"

#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "llvm/Support/raw_ostream.h"

using namespace clang;

namespace nanort {

namespace {

// Result codes from ResultAssign on, and their operators.
const BinaryOperatorKind AssignOps[] = {BO_Assign, BO_AddAssign, BO_SubAssign, BO_MulAssign,
                                        BO_DivAssign, BO_RemAssign, BO_ShlAssign, BO_ShrAssign,
                                        BO_AndAssign, BO_XorAssign, BO_OrAssign};

int resultCode(BinaryOperatorKind K) {
  for (unsigned I = 0; I < std::size(AssignOps); ++I)
    if (AssignOps[I] == K)
      return ResultAssign + (int)I;
  return -1;
}

const Stmt *onlyParent(ASTContext &Ctx, const Stmt *S) {
  DynTypedNodeList Parents = Ctx.getParents(*S);
  if (Parents.size() != 1)
    return nullptr;
  return Parents[0].get<Stmt>();
}

// Whether E's value is dropped as a statement: E is a statement of a block, the branch of an
// if, the body of a loop, the increment of a for, or under a label.
bool isStatement(ASTContext &Ctx, const Stmt *E) {
  const Stmt *S = E;
  const Stmt *P = onlyParent(Ctx, S);
  while (P && isa<ExprWithCleanups>(P)) {
    S = P;
    P = onlyParent(Ctx, S);
  }
  if (!P)
    return false;
  if (isa<CompoundStmt>(P))
    return true;
  if (const auto *If = dyn_cast<IfStmt>(P))
    return S == If->getThen() || S == If->getElse();
  if (const auto *For = dyn_cast<ForStmt>(P))
    return S == For->getBody() || S == For->getInc();
  if (const auto *While = dyn_cast<WhileStmt>(P))
    return S == While->getBody();
  if (const auto *Do = dyn_cast<DoStmt>(P))
    return S == Do->getBody();
  if (const auto *Case = dyn_cast<SwitchCase>(P))
    return S == Case->getSubStmt();
  if (const auto *Label = dyn_cast<LabelStmt>(P))
    return S == Label->getSubStmt();
  return false;
}

bool editable(const SourceManager &SM, SourceLocation L) {
  return L.isValid() && L.isFileID() && SM.isWrittenInMainFile(L);
}

class CallFinder : public RecursiveASTVisitor<CallFinder> {
public:
  CallFinder(ASTContext &Ctx, const FunctionDecl *FD, SourceLocation From)
      : Ctx(Ctx), SM(Ctx.getSourceManager()), FD(FD->getCanonicalDecl()), From(From) {}
  std::vector<ResultUse> Uses;

  bool VisitCallExpr(CallExpr *E) {
    if (isa<CXXMemberCallExpr>(E) || isa<CXXOperatorCallExpr>(E))
      return true;
    const FunctionDecl *Callee = E->getDirectCallee();
    if (!Callee || Callee->getCanonicalDecl() != FD ||
        !isa<DeclRefExpr>(E->getCallee()->IgnoreParenImpCasts()))
      return true;
    if (!editable(SM, E->getBeginLoc()) || !editable(SM, E->getEndLoc()) ||
        (From.isValid() && !SM.isBeforeInTranslationUnit(From, E->getBeginLoc())))
      return true;
    for (const Expr *A : E->arguments())
      if (isa<CXXDefaultArgExpr>(A))
        return true; // the generated function has no default arguments
    ResultUse U;
    U.Call = E;
    // The call as a statement, or cast to void.
    const Expr *Whole = E;
    if (const auto *Cast = dyn_cast_or_null<CStyleCastExpr>(onlyParent(Ctx, E));
        Cast && Cast->getType()->isVoidType())
      Whole = Cast;
    if (isStatement(Ctx, Whole)) {
      Uses.push_back(U);
      return true;
    }
    // The right side of an assignment statement: up through the conversions and temporaries
    // of C++ (a class type's operator=).
    const Stmt *S = E, *P = onlyParent(Ctx, E);
    while (P && (isa<MaterializeTemporaryExpr>(P) || isa<CXXBindTemporaryExpr>(P) ||
                 (isa<ImplicitCastExpr>(P) &&
                  cast<ImplicitCastExpr>(P)->getCastKind() == CK_NoOp))) {
      S = P;
      P = onlyParent(Ctx, S);
    }
    const Expr *Lhs = nullptr;
    int Op = -1;
    if (const auto *B = dyn_cast_or_null<BinaryOperator>(P); B && B->getRHS() == S) {
      Lhs = B->getLHS();
      Op = resultCode(B->getOpcode());
    } else if (const auto *O = dyn_cast_or_null<CXXOperatorCallExpr>(P);
               O && O->getNumArgs() == 2 && O->getArg(1) == S && O->isAssignmentOp()) {
      Lhs = O->getArg(0);
      Op = resultCode(BinaryOperator::getOverloadedOpcode(O->getOperator()));
    }
    if (!Lhs || Op < 0 || !isStatement(Ctx, cast<Expr>(P)))
      return true;
    QualType LT = Lhs->getType(), RT = FD->getReturnType();
    if (LT->isDependentType() || RT->isDependentType() || !Lhs->isLValue() ||
        Lhs->refersToBitField() || LT.isConstQualified() || LT.isVolatileQualified() ||
        !Ctx.hasSameUnqualifiedType(LT, RT) || Lhs->HasSideEffects(Ctx) ||
        !editable(SM, Lhs->getBeginLoc()) || !editable(SM, Lhs->getEndLoc()))
      return true;
    U.Lhs = Lhs;
    U.Op = Op;
    Uses.push_back(U);
    return true;
  }

private:
  ASTContext &Ctx;
  const SourceManager &SM;
  const FunctionDecl *FD;
  SourceLocation From;
};

} // namespace

const char *resultOperator(int Op) {
  static const char *const Spelling[] = {"=",  "+=",  "-=",  "*=", "/=", "%=",
                                         "<<=", ">>=", "&=", "^=", "|="};
  if (Op < ResultAssign || Op >= ResultAssign + (int)std::size(Spelling))
    return "=";
  return Spelling[Op - ResultAssign];
}

std::optional<DiagId> resultTypeProblem(const FunctionDecl *FD) {
  QualType R = FD->getReturnType();
  if (R->getContainedDeducedType())
    return DiagId::TaskResultDeduced;
  if (R->isReferenceType())
    return DiagId::TaskResultReference;
  return std::nullopt;
}

std::vector<ResultUse> findResultUses(ASTContext &Ctx, const FunctionDecl *FD,
                                      SourceLocation From) {
  CallFinder F(Ctx, FD, From);
  F.TraverseDecl(Ctx.getTranslationUnitDecl());
  return std::move(F.Uses);
}

namespace {

// Where a joint call is: the statement that holds it, or null when it is evaluated only under
// a condition, inside the arguments of another task, or outside a statement of its own.
class JointFinder : public RecursiveASTVisitor<JointFinder> {
public:
  JointFinder(ASTContext &Ctx, const std::set<const FunctionDecl *> &Of,
              const std::set<const CallExpr *> &Skip, const std::vector<SourceRange> &Outside)
      : Ctx(Ctx), SM(Ctx.getSourceManager()), Of(Of), Skip(Skip), Outside(Outside) {}
  std::vector<JointCalls> Found;

  bool VisitCallExpr(CallExpr *E) {
    if (isa<CXXMemberCallExpr>(E) || isa<CXXOperatorCallExpr>(E) || Skip.count(E))
      return true;
    const FunctionDecl *Callee = E->getDirectCallee();
    if (!Callee || !Of.count(Callee->getCanonicalDecl()) ||
        !isa<DeclRefExpr>(E->getCallee()->IgnoreParenImpCasts()) ||
        E->getType()->isDependentType() || !editable(SM, E->getBeginLoc()) ||
        !editable(SM, E->getEndLoc()) || !editable(SM, E->getRParenLoc()))
      return true;
    for (const Expr *A : E->arguments())
      if (isa<CXXDefaultArgExpr>(A) || A->isTypeDependent() || A->isValueDependent())
        return true;
    JointCalls J;
    if (!statementOf(E, J))
      return true;
    for (SourceRange R : Outside)
      if (!SM.isBeforeInTranslationUnit(J.S->getBeginLoc(), R.getBegin()) &&
          !SM.isBeforeInTranslationUnit(R.getEnd(), J.S->getBeginLoc()))
        return true;
    for (JointCalls &Other : Found)
      if (Other.S == J.S) {
        Other.Calls.push_back(E);
        return true;
      }
    J.Calls.push_back(E);
    Found.push_back(J);
    return true;
  }

private:
  ASTContext &Ctx;
  const SourceManager &SM;
  const std::set<const FunctionDecl *> &Of;
  const std::set<const CallExpr *> &Skip;
  const std::vector<SourceRange> &Outside;

  bool isTaskCall(const Stmt *S) const {
    const auto *C = dyn_cast<CallExpr>(S);
    const FunctionDecl *F = C ? C->getDirectCallee() : nullptr;
    return F && Of.count(F->getCanonicalDecl());
  }

  bool statementOf(const CallExpr *E, JointCalls &J) {
    DynTypedNode Node = DynTypedNode::create(*static_cast<const Stmt *>(E));
    const Stmt *Child = E;
    for (;;) {
      DynTypedNodeList Parents = Ctx.getParents(Node);
      if (Parents.size() != 1)
        return false;
      DynTypedNode P = Parents[0];
      if (const auto *VD = P.get<VarDecl>()) {
        // 'T x = ...;' alone in its declaration, in a block.
        if (!VD->hasLocalStorage() || VD->getInit() != Child)
          return false;
        DynTypedNodeList Up = Ctx.getParents(P);
        const DeclStmt *DS = Up.size() == 1 ? Up[0].get<DeclStmt>() : nullptr;
        if (!DS || !DS->isSingleDecl())
          return false;
        DynTypedNodeList Block = Ctx.getParents(*static_cast<const Stmt *>(DS));
        if (Block.size() != 1 || !Block[0].get<CompoundStmt>())
          return false;
        J.S = DS;
        J.Braces = false;
        break;
      }
      const Stmt *PS = P.get<Stmt>();
      if (!PS)
        return false;
      if (const auto *PE = dyn_cast<Expr>(PS)) {
        if (const auto *CO = dyn_cast<AbstractConditionalOperator>(PE);
            CO && Child != CO->getCond())
          return false;
        if (const auto *B = dyn_cast<BinaryOperator>(PE);
            B && (B->isLogicalOp() || B->isCommaOp()) && Child == B->getRHS())
          return false;
        if (isa<UnaryExprOrTypeTraitExpr>(PE) || isa<CXXTypeidExpr>(PE) ||
            isa<CXXNoexceptExpr>(PE) || isa<LambdaExpr>(PE) || isa<StmtExpr>(PE) ||
            isa<GenericSelectionExpr>(PE) || isa<CXXThrowExpr>(PE))
          return false;
        if (isTaskCall(PE))
          return false; // an argument of a task: made when that task's call is evaluated
        Child = PE;
        Node = P;
        continue;
      }
      if (const auto *R = dyn_cast<ReturnStmt>(PS)) {
        if (R->getRetValue() != Child)
          return false;
        Child = R;
        J.S = R;
      } else {
        J.S = Child;
      }
      if (!isStatement(Ctx, J.S))
        return false;
      if (const auto *For = dyn_cast<ForStmt>(PS); For && For->getInc() == J.S)
        return false; // no block there
      J.Braces = true;
      break;
    }
    if (!editable(SM, J.S->getBeginLoc()) || !editable(SM, J.S->getEndLoc()))
      return false;
    // The function around it (its code may need the prelude).
    DynTypedNode Node2 = DynTypedNode::create(*J.S);
    for (;;) {
      DynTypedNodeList Parents = Ctx.getParents(Node2);
      if (Parents.empty())
        return false;
      Node2 = Parents[0];
      if (const auto *F = Node2.get<FunctionDecl>()) {
        J.Enclosing = F;
        return !F->isTemplated();
      }
    }
  }
};

} // namespace

std::vector<JointCalls> findJointCalls(ASTContext &Ctx, const std::set<const FunctionDecl *> &Of,
                                       const std::set<const CallExpr *> &Skip,
                                       const std::vector<SourceRange> &Outside) {
  JointFinder F(Ctx, Of, Skip, Outside);
  F.TraverseDecl(Ctx.getTranslationUnitDecl());
  std::vector<JointCalls> Out;
  for (JointCalls &J : F.Found)
    if (J.Calls.size() >= 2)
      Out.push_back(std::move(J));
  return Out;
}

bool rewriteJointCalls(Rewriter &RW, const JointCalls &J,
                       const std::function<std::string(const FunctionDecl *)> &IntoOf,
                       const PrintingPolicy &Policy, bool CPP, unsigned &Counter) {
  const SourceManager &SM = RW.getSourceMgr();
  const LangOptions &LO = RW.getLangOpts();
  SourceLocation End = J.S->getEndLoc();
  if (!isa<DeclStmt>(J.S)) {
    End = Lexer::findLocationAfterToken(End, tok::semi, SM, LO, false);
    if (End.isInvalid())
      return false;
  } else {
    End = Lexer::getLocForEndOfToken(End, 0, SM, LO);
  }
  std::string Pre = J.Braces ? "{ " : "";
  std::vector<std::string> Names;
  for (const CallExpr *E : J.Calls) {
    const FunctionDecl *F = E->getDirectCallee();
    std::optional<Token> Paren = Lexer::findNextToken(
        E->getCallee()->IgnoreParenImpCasts()->getEndLoc(), SM, LO);
    if (!Paren || !Paren->is(tok::l_paren))
      return false;
    std::string Args = RW.getRewrittenText(CharSourceRange::getCharRange(
        Lexer::getLocForEndOfToken(Paren->getLocation(), 0, SM, LO), E->getRParenLoc()));
    std::string Name = "nanort_r" + std::to_string(++Counter);
    std::string Type;
    llvm::raw_string_ostream OS(Type);
    F->getReturnType().getUnqualifiedType().print(OS, Policy);
    OS.flush();
    if (CPP)
      Pre += "std::optional<" + Type + " > " + Name + "; " + IntoOf(F) + "(nullptr, &" + Name +
             ", " + std::to_string(ResultWait);
    else
      Pre += Type + " " + Name + "; " + IntoOf(F) + "(&" + Name + ", " +
             std::to_string(ResultWait);
    Pre += (E->getNumArgs() ? ", " : "") + Args + "); ";
    Names.push_back(CPP ? "std::move(*" + Name + ")" : Name);
  }
  Pre += "nanort_check(nanort_taskwait(), \"taskwait\"); ";
  RW.InsertTextBefore(J.S->getBeginLoc(), Pre);
  for (size_t I = 0; I < J.Calls.size(); ++I)
    RW.ReplaceText(CharSourceRange::getTokenRange(J.Calls[I]->getBeginLoc(),
                                                  J.Calls[I]->getRParenLoc()),
                   Names[I]);
  if (J.Braces)
    RW.InsertTextAfter(End, " }");
  return true;
}

bool rewriteResultUse(Rewriter &RW, const ResultUse &U, const std::string &Into, bool CPP) {
  const SourceManager &SM = RW.getSourceMgr();
  const LangOptions &LO = RW.getLangOpts();
  const Expr *Callee = U.Call->getCallee()->IgnoreParenImpCasts();
  SourceLocation NameBegin = Callee->getBeginLoc(), NameEnd = Callee->getEndLoc();
  std::optional<Token> Paren = Lexer::findNextToken(NameEnd, SM, LO);
  if (!Paren || !Paren->is(tok::l_paren) || !editable(SM, Paren->getLocation()))
    return false;
  std::string Args = U.Call->getNumArgs() ? ", " : "";
  std::string Op = std::to_string(U.Op);
  if (!U.Lhs) {
    RW.ReplaceText(CharSourceRange::getTokenRange(NameBegin, Paren->getLocation()),
                   Into + (CPP ? "(nullptr, nullptr, 0" : "(0, 0") + Args);
    return true;
  }
  // 'x op= f(' -> 'Into(&(x), op, ': the text of x and of the arguments stays in place.
  SourceLocation LhsEnd = Lexer::getLocForEndOfToken(U.Lhs->getEndLoc(), 0, SM, LO);
  RW.InsertTextBefore(U.Lhs->getBeginLoc(),
                      Into + (CPP ? "(__builtin_addressof(" : "(&("));
  RW.ReplaceText(CharSourceRange::getCharRange(
                     LhsEnd, Lexer::getLocForEndOfToken(Paren->getLocation(), 0, SM, LO)),
                 std::string("), ") + (CPP ? "nullptr, " : "") + Op + Args);
  return true;
}

// ---------------------------------------------------------------------------------------------
// The lowering's part: which functions and calls, and the Into functions' declarations.
namespace lowering {

// The function that makes a non-void function task's task and says where its result goes
// (NonVoid.h): static void Into(T *nanort_dst, [void *nanort_slot,] int nanort_op, params).
std::string Lowerer::intoSignature(const FunctionDecl *FD, const std::string &Into,
                                   const std::vector<std::string> &PNames) const {
  std::string S = "static void " + Into + "(" +
                  decl(Ctx.getPointerType(FD->getReturnType().getUnqualifiedType()),
                       "nanort_dst") +
                  (CPP ? ", void *nanort_slot" : "") + ", int nanort_op";
  for (unsigned I = 0; I < FD->getNumParams(); ++I)
    S += ", " + decl(FD->getParamDecl(I)->getType(), PNames[I]);
  return S + ")";
}

// The calls of a non-void function task that need not wait for its result call its Into
// function instead (NonVoid.h), which is declared after the first declaration of the function
// in this file. Only for functions at file scope, defined in this file, that run on the host
// alone (member functions, templates and the rest keep waiting wrappers).
void Lowerer::planResultUses(const Pragma *Target, FunctionDecl *FD) {
  if (FD->getReturnType()->isVoidType() || resultTypeProblem(FD) ||
      FD->getReturnType()->isDependentType() || isa<CXXMethodDecl>(FD) || FD->isTemplated() ||
      FD->isVariadic() || !FD->getDeclContext()->getRedeclContext()->isTranslationUnit() ||
      (CPP && FD->isExternC()) || (!CPP && !noArguments(FD)) ||
      !FD->getDeclName().isIdentifier() || VersionsOf.count(FD->getCanonicalDecl()))
    return;
  if (Target)
    for (const Clause &Cl : Target->Clauses)
      if (Cl.Info->Kind == ClauseKind::Device)
        for (const std::string &W : Cl.Words)
          if (W != "smp")
            return;
  FunctionDecl *Def = FD->getDefinition();
  if (!Def || !SM.isWrittenInMainFile(SM.getExpansionLoc(Def->getBeginLoc())) ||
      Def->getLocation().isMacroID())
    return;
  for (ParmVarDecl *PV : FD->parameters())
    if (PV->getType()->isVariablyModifiedType() || PV->getType()->isRValueReferenceType())
      return;
  // The first declaration in this file: the Into function is declared after it (before it,
  // when it is the definition).
  FunctionDecl *First = nullptr;
  for (FunctionDecl *R : FD->redecls()) {
    SourceLocation B = R->getBeginLoc();
    if (B.isMacroID() || !SM.isWrittenInMainFile(B) || R->getLocation().isMacroID())
      continue;
    if (!First || SM.isBeforeInTranslationUnit(B, First->getBeginLoc()))
      First = R;
  }
  if (!First)
    return;
  SourceLocation From;
  std::string Name = FD->getNameAsString(), Into = "nanort_into_" + Name;
  for (unsigned K = 2; WrapperNames.count(Into); ++K)
    Into = "nanort_into_" + Name + "_" + std::to_string(K);
  std::vector<std::string> PNames;
  for (unsigned I = 0; I < FD->getNumParams(); ++I) {
    ParmVarDecl *PV = FD->getParamDecl(I);
    PNames.push_back(PV->getName().empty() ? "nanort_p" + std::to_string(I)
                                           : PV->getName().str());
  }
  std::string Proto = intoSignature(FD, Into, PNames) + ";";
  if (First->doesThisDeclarationHaveABody()) {
    From = First->getBeginLoc();
    RW.InsertTextBefore(From, Proto + Code::marker(SM, From));
  } else {
    SourceLocation End = First->getEndLoc();
    SourceLocation Semi = Lexer::findLocationAfterToken(End, tok::semi, SM, LO, false);
    if (Semi.isInvalid())
      return;
    From = Semi;
    RW.InsertTextAfter(Semi, " " + Proto);
  }
  WrapperNames.insert(Into);
  ResultPlan &Plan = ResultPlans[FD->getCanonicalDecl()];
  Plan.Into = Into;
  Plan.From = From;
  for (const ResultUse &U : findResultUses(Ctx, FD, From))
    if (rewriteResultUse(RW, U, Into, CPP)) {
      Plan.Ops.insert(U.Op);
      ResultCalls.insert(U.Call);
    }
}

// The statements that call non-void function tasks several times make those tasks together,
// then wait (NonVoid.h), where each Into function is declared before the statement.
void Lowerer::planJointCalls(const std::vector<SourceRange> &Outside) {
  std::set<const FunctionDecl *> Of;
  for (const auto &E : ResultPlans)
    Of.insert(E.first);
  unsigned Joint = 0;
  for (const JointCalls &J : findJointCalls(Ctx, Of, ResultCalls, Outside)) {
    bool Declared = true;
    for (const CallExpr *E : J.Calls)
      Declared &= SM.isBeforeInTranslationUnit(
          ResultPlans[E->getDirectCallee()->getCanonicalDecl()].From, J.S->getBeginLoc());
    if (!Declared ||
        !rewriteJointCalls(
            RW, J, [&](const FunctionDecl *F) { return ResultPlans[F->getCanonicalDecl()].Into; },
            Policy, CPP, Joint))
      continue;
    UsesOptional |= CPP;
    ResultPreludes.push_back(topLevelStart(const_cast<FunctionDecl *>(J.Enclosing)));
  }
}

} // namespace lowering
} // namespace nanort
