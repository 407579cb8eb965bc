//===- NonVoid.cpp - Function tasks that return a value ---------------------===//
#include "NonVoid.h"

#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/ParentMapContext.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Stmt.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"

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
bool isStatement(ASTContext &Ctx, const Expr *E) {
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

std::string resultTypeProblem(const FunctionDecl *FD) {
  QualType R = FD->getReturnType();
  std::string Name = "function task '" + FD->getNameAsString() + "'";
  if (R->getContainedDeducedType())
    return Name + " has a deduced return type: write the type it returns";
  if (R->isReferenceType())
    return Name + " returns a reference, which its task cannot deliver: return a value or a "
                  "pointer";
  return "";
}

std::vector<ResultUse> findResultUses(ASTContext &Ctx, const FunctionDecl *FD,
                                      SourceLocation From) {
  CallFinder F(Ctx, FD, From);
  F.TraverseDecl(Ctx.getTranslationUnitDecl());
  return std::move(F.Uses);
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

} // namespace nanort
