//===- Capture.cpp - The data sharing of inline tasks ---------------------===//
//
// Which variables of the enclosing function an inline task uses, and how it captures them:
// the clauses, then the dependences, then static storage, then the default.
//
//===----------------------------------------------------------------------===//
#include "LowererImpl.h"

using namespace clang;

namespace nanort {
namespace lowering {

namespace {

// Uses of 'this' in a task body, and a lambda there that captures it.
class ThisFinder : public RecursiveASTVisitor<ThisFinder> {
public:
  std::vector<CXXThisExpr *> Uses;
  LambdaExpr *Lambda = nullptr;
  bool VisitCXXThisExpr(CXXThisExpr *E) {
    Uses.push_back(E);
    return true;
  }
  bool TraverseLambdaExpr(LambdaExpr *L) {
    for (const LambdaCapture &C : L->captures())
      if (C.capturesThis() && !Lambda)
        Lambda = L;
    return RecursiveASTVisitor<ThisFinder>::TraverseLambdaExpr(L);
  }
};

// Variables of the enclosing function that the task body uses.
class UseFinder : public RecursiveASTVisitor<UseFinder> {
public:
  UseFinder(SourceManager &SM, SourceRange Body) : SM(SM), Body(Body) {}
  std::vector<VarDecl *> Order;
  llvm::DenseMap<VarDecl *, std::vector<SourceLocation>> Uses;

  bool VisitDeclRefExpr(DeclRefExpr *E) {
    auto *V = dyn_cast<VarDecl>(E->getDecl());
    if (!V || !V->isLocalVarDeclOrParm())
      return true;
    SourceLocation DL = SM.getExpansionLoc(V->getLocation());
    if (!SM.isBeforeInTranslationUnit(DL, Body.getBegin())) // declared inside the task
      return true;
    if (!Uses.count(V))
      Order.push_back(V);
    Uses[V].push_back(E->getLocation());
    return true;
  }

private:
  SourceManager &SM;
  SourceRange Body;
};

// The uses of a variable at file scope in a task body.
class GlobalUseFinder : public RecursiveASTVisitor<GlobalUseFinder> {
public:
  explicit GlobalUseFinder(VarDecl *V) : V(V) {}
  std::vector<SourceLocation> Uses;
  bool VisitDeclRefExpr(DeclRefExpr *E) {
    if (E->getDecl() == V)
      Uses.push_back(E->getLocation());
    return true;
  }

private:
  VarDecl *V;
};

// Whether a dependence item names memory inside the variable it is about (its own storage:
// x, v[i] or v[a;n] of an array v, s.f, s.arr[0;n]) or memory reached through a pointer that
// the variable holds (p[a;n], *p, [n]p, p->f, s.data[0;n], rows[i][0;n] with rows an array of
// pointers). Walks the item's tokens with the types of the variable and of the members it
// names; Unknown where it cannot follow them (a call, a cast, an overloaded operator, a
// dependent type).
enum class DepStorage { Own, Through, Unknown };

class StorageWalk {
public:
  StorageWalk(const DepItem &D, const VarDecl *V) : D(D), V(V) {}

  DepStorage run() {
    QualType T;
    bool Own;
    if (!unary(T, Own) || I != D.Base.size())
      return DepStorage::Unknown;
    // A shape reads the base as a pointer: into an array it stays in the array's storage.
    if (!D.Shape.empty() && !element(T, Own))
      return DepStorage::Unknown;
    for (size_t S = 0; S < D.Sections.size(); ++S)
      if (!element(T, Own))
        return DepStorage::Unknown;
    return Own ? DepStorage::Own : DepStorage::Through;
  }

private:
  const DepItem &D;
  const VarDecl *V;
  size_t I = 0;

  bool at(tok::TokenKind K) const { return I < D.Base.size() && D.Base[I].Kind == K; }
  // *e, e[i], a section or a shape: an element of an array stays in its storage, the target
  // of a pointer does not.
  static bool element(QualType &T, bool &Own) {
    if (T.isNull() || T->isDependentType())
      return false;
    if (const ArrayType *A = T->getAsArrayTypeUnsafe()) {
      T = A->getElementType();
      return true;
    }
    if (const auto *P = T->getAs<PointerType>()) {
      T = P->getPointeeType();
      Own = false;
      return true;
    }
    return false;
  }
  // The type of member Name of record type T (in a base class too); a reference member's
  // target is not the object's storage.
  static bool member(QualType &T, bool &Own, StringRef Name) {
    const RecordDecl *RD = T.isNull() || T->isDependentType() ? nullptr : T->getAsRecordDecl();
    if (RD)
      RD = RD->getDefinition();
    if (!RD)
      return false;
    for (const NamedDecl *N : RD->lookup(&RD->getASTContext().Idents.get(Name))) {
      QualType F;
      if (const auto *FD = dyn_cast<FieldDecl>(N))
        F = FD->getType();
      else if (const auto *IF = dyn_cast<IndirectFieldDecl>(N))
        F = IF->getAnonField()->getType();
      else
        continue;
      if (F->isReferenceType())
        Own = false;
      T = F.getNonReferenceType();
      return true;
    }
    if (const auto *CRD = dyn_cast<CXXRecordDecl>(RD))
      for (const CXXBaseSpecifier &B : CRD->bases()) {
        QualType BT = B.getType();
        if (member(BT, Own, Name)) {
          T = BT;
          return true;
        }
      }
    return false;
  }
  bool unary(QualType &T, bool &Own) {
    if (at(tok::star)) {
      ++I;
      return unary(T, Own) && element(T, Own);
    }
    return postfix(T, Own);
  }
  bool postfix(QualType &T, bool &Own) {
    if (at(tok::l_paren)) {
      ++I;
      if (!unary(T, Own) || !at(tok::r_paren))
        return false;
      ++I;
    } else if (at(tok::identifier) && D.Base[I].Text == V->getName()) {
      ++I;
      T = V->getType().getNonReferenceType(); // a reference's target is the variable's storage
      Own = true;
    } else {
      return false;
    }
    while (I < D.Base.size()) {
      if (at(tok::l_square)) {
        for (int Depth = 0; I < D.Base.size(); ++I) // the subscript's value does not matter
          if (at(tok::l_square))
            ++Depth;
          else if (at(tok::r_square) && --Depth == 0)
            break;
        if (!at(tok::r_square))
          return false;
        ++I;
        if (!element(T, Own))
          return false;
      } else if (at(tok::period) || at(tok::arrow)) {
        bool Arrow = at(tok::arrow);
        ++I;
        if (!at(tok::identifier) || (Arrow && !element(T, Own)) ||
            !member(T, Own, D.Base[I].Text))
          return false;
        ++I;
      } else {
        break;
      }
    }
    return true;
  }
};

// The data sharing that the dependences of an inline task give variable V (DESIGN.md,
// decision 3): shared when an item names V's own storage, so that the task reads and writes
// the variable itself; firstprivate when the items only name memory through a pointer that V
// holds, so that the body uses the address the dependence was computed on even if the parent
// changes V or returns. Where the walk cannot tell, OmpSs-2's rule: a pointer variable that is
// dereferenced is firstprivate, anything else shared. An object that copying would run a
// constructor for stays shared (as the object behind 'this' in this->p[0;n] is).
std::optional<Sharing> dependenceSharing(const Pragma &Task, const Pragma *Target,
                                         const VarDecl *V) {
  bool Own = false, Through = false;
  // The copy clauses of the task and of its target line count too: their data is the task's.
  std::vector<const Clause *> Clauses;
  for (const Pragma *P : {&Task, Target})
    if (P)
      for (const Clause &Cl : P->Clauses)
        if (Cl.Info->Kind != ClauseKind::Inprivate) // a copy of its own
          Clauses.push_back(&Cl);
  for (const Clause *Cl : Clauses)
    for (const DepItem &D : Cl->Deps) {
      if (D.BaseVar != V->getName())
        continue;
      DepStorage S = StorageWalk(D, V).run();
      if (S == DepStorage::Unknown) {
        bool Plain = D.Base.size() == 1 && D.Sections.empty() && D.Shape.empty();
        S = !Plain && V->getType().getNonReferenceType()->isPointerType() ? DepStorage::Through
                                                                         : DepStorage::Own;
      }
      (S == DepStorage::Own ? Own : Through) = true;
    }
  if (Own)
    return Sharing::Shared;
  if (!Through)
    return std::nullopt;
  ASTContext &Ctx = V->getASTContext();
  QualType Elem = Ctx.getBaseElementType(V->getType().getNonReferenceType());
  if (Elem->isRecordType() && !Elem.isTriviallyCopyableType(Ctx))
    return Sharing::Shared;
  return Sharing::Firstprivate;
}

} // namespace

void Lowerer::statementRange(const Candidate &Cand, SourceLocation &Begin,
                             SourceLocation &End) const {
  Begin = Cand.Begin;
  End = afterToken(Cand.End);
  Token Last;
  if (!Lexer::getRawToken(Cand.End, Last, SM, LO) && Last.isNot(tok::r_brace)) {
    SourceLocation Semi = Lexer::findLocationAfterToken(Cand.End, tok::semi, SM, LO, false);
    if (Semi.isValid())
      End = Semi;
  }
}

// Checks an inline task and finds its captures; in C, also rewrites the uses of shared
// variables in place. Runs for every inline task before any construct is lowered, so that
// constructs nested in a C task (critical, atomic) see the rewritten uses.
void Lowerer::planInlineTask(const Pragma &Task, const Pragma *Target, const Candidate &Cand,
                             InlinePlan &Plan) {
  Stmt *S = Cand.S;
  FunctionDecl *Fn = Cand.Enclosing;
  if (Cand.InLambda || !Fn)
    return report(DiagId::InlineTaskInLambda, Task.DirLoc);
  if (isa<DeclStmt>(S) && Task.Dir->Kind == DirectiveKind::Task)
    return report(DiagId::TaskOnDeclaration, Task.DirLoc);
  // A taskloop: each chunk is an inline task whose body is the loop's body.
  Stmt *Scan = S;
  if (Task.Dir->Kind == DirectiveKind::Taskloop) {
    TaskloopLoop Loop;
    if (!analyzeTaskloop(Ctx, Task, S, Diags, Loop))
      return;
    Scan = const_cast<Stmt *>(Loop.body()); // collapse(n): the innermost loop's
    Candidate Body;
    Body.Begin = SM.getExpansionLoc(Scan->getBeginLoc());
    Body.End = SM.getExpansionRange(Scan->getEndLoc()).getEnd();
    statementRange(Body, Plan.BodyBegin, Plan.BodyEnd);
    Plan.Loop = Loop;
  } else {
    JumpFinder JF;
    JF.TraverseStmt(S);
    if (JF.Found)
      return report(DiagId::JumpOutOfTask, JF.Found->getBeginLoc(),
                    {isa<ReturnStmt>(JF.Found) ? "'return'" : "'goto'"});
  }

  SourceLocation Begin, End;
  statementRange(Cand, Begin, End);

  // Nested pragmas in the body. C has no references to alias captured variables in the
  // outlined body, so C rewrites their uses in place, except inside nested inline tasks
  // (their bodies see their own captures; the code that creates them and the clauses of
  // nested pragmas spell shared variables through Views when they are lowered).
  std::vector<const Pragma *> Nested;
  std::vector<std::pair<SourceLocation, SourceLocation>> NestedTasks;
  for (const Pragma &P : Pragmas)
    if (&P != &Task && !SM.isBeforeInTranslationUnit(P.Begin, Begin) && // (Begin: an adopted
                                                                          // construct's pragma)
        SM.isBeforeInTranslationUnit(P.Begin, End))
      Nested.push_back(&P);
  if (!CPP)
    for (const Pragma *P : Nested) {
      if (!P->Dir ||
          (P->Dir->Kind != DirectiveKind::Task && P->Dir->Kind != DirectiveKind::Taskloop))
        continue;
      const Candidate *In = following(*P);
      if (!In || In->FD)
        continue; // an error of its own

      SourceLocation NB, NE;
      statementRange(*In, NB, NE);
      NestedTasks.push_back({NB, NE});
    }

  UseFinder UF(SM, SourceRange(Begin, End));
  UF.TraverseStmt(Scan);
  // Variables that only nested pragmas name (C++), or the task's own onready expression (which
  // runs in the task): the nearest earlier declaration. A name declared in the task's
  // statement before a nested pragma is that pragma's own (a taskloop's variable, a local of
  // the body), not a capture.
  std::vector<std::string> OnreadyIds;
  if (const Clause *On = Task.find(ClauseKind::Onready))
    for (const Tok &K : On->Args[0])
      if (K.Kind == tok::identifier)
        OnreadyIds.push_back(K.Text);
  std::vector<std::pair<const std::vector<std::string> *, SourceLocation>> Named;
  for (const Pragma *P : Nested)
    Named.push_back({&P->Identifiers, P->Begin});
  Named.push_back({&OnreadyIds, Begin});
  for (const auto &[Ids, Upto] : Named)
    for (const std::string &Id : *Ids) {
      VarDecl *Found = nullptr;
      bool Inside = false;
      for (VarDecl *V : Vars) {
        if (V->getName() != Id || !Fn->getBody())
          continue;
        SourceLocation DL = SM.getExpansionLoc(V->getLocation());
        if (!SM.isBeforeInTranslationUnit(DL, Begin)) {
          Inside |= SM.isBeforeInTranslationUnit(DL, Upto);
          continue;
        }
        if (V->getDeclContext() != Fn && !Fn->Encloses(V->getDeclContext()) &&
            !isa<ParmVarDecl>(V))
          continue;
        if (isa<ParmVarDecl>(V) && V->getDeclContext() != Fn)
          continue;
        if (!Found || SM.isBeforeInTranslationUnit(SM.getExpansionLoc(Found->getLocation()), DL))
          Found = V;
      }
      if (Found && !Inside && !UF.Uses.count(Found)) {
        UF.Order.push_back(Found);
        UF.Uses[Found];
      }
    }
  if (Plan.Loop) // private in every chunk: the chunk's body declares them
    for (const TaskloopLoop *L : Plan.Loop->levels())
      llvm::erase(UF.Order, const_cast<VarDecl *>(L->Var));

  // Data sharing: the clauses, then the dependences, then static storage, then the default.
  std::set<std::string> Shared, Private, First, Inprivate;
  std::string Default = "firstprivate";
  for (const Clause &Cl : Task.Clauses) {
    if (Cl.Info->Kind == ClauseKind::Inprivate)
      for (const DepItem &D : Cl.Deps)
        Inprivate.insert(D.BaseVar);
    std::set<std::string> *Into = nullptr;
    switch (Cl.Info->Kind) {
    case ClauseKind::Shared: Into = &Shared; break;
    case ClauseKind::Private: Into = &Private; break;
    case ClauseKind::Firstprivate: Into = &First; break;
    case ClauseKind::Default: Default = Cl.Words[0]; break;
    default: break;
    }
    if (Into)
      Into->insert(Cl.Words.begin(), Cl.Words.end());
  }
  std::vector<Capture> Caps;
  bool OK = true;
  for (VarDecl *V : UF.Order) {
    std::string N = V->getName().str();
    Capture Cap{V, Sharing::Firstprivate, UF.Uses[V], std::nullopt};
    std::optional<Sharing> FromDeps;
    if (Private.count(N))
      Cap.How = Sharing::Private;
    else if (First.count(N))
      Cap.How = Sharing::Firstprivate;
    else if (Shared.count(N))
      Cap.How = Sharing::Shared;
    else if (Inprivate.count(N))
      Cap.How = Sharing::Inprivate;
    else if ((FromDeps = dependenceSharing(Task, Target, V)))
      Cap.How = *FromDeps;
    else if (V->isStaticLocal())
      Cap.How = Sharing::Shared;
    else if (Default == "shared")
      Cap.How = Sharing::Shared;
    else if (Default == "none") {
      report(DiagId::DefaultNone, Task.DirLoc, {N});
      OK = false;
      continue;
    }
    QualType T = V->getType();
    if (T.getCanonicalType()->isVariablyModifiedType()) { // (also under 'auto')
      Cap.VM = splitVariablyModified(Ctx, T.getNonReferenceType());
      if (!Cap.VM) {
        report(DiagId::VariablyModifiedCapture, Task.DirLoc, {N});
        OK = false;
        continue;
      }
      if (Cap.How == Sharing::Inprivate) {
        report(DiagId::InprivateVariablyModified, Task.DirLoc, {N});
        OK = false;
        continue;
      }
      // C++: the body's copy is made of bytes (the elements' copy constructors do not run).
      if (CPP && Cap.VM->isArray() && Cap.How == Sharing::Firstprivate &&
          !Cap.VM->Elem.isTriviallyCopyableType(Ctx)) {
        report(DiagId::FirstprivateArray, Task.DirLoc, {N});
        OK = false;
        continue;
      }
    }
    if (!CPP) // C++ spells the captured types with decltype, inside the function
      OK &= checkLocalType(Cap.VM ? Cap.VM->Elem : T.getNonReferenceType(), Task.DirLoc, N);
    // A reference's task gets an object of the referenced type (OpenMP 4.5 and later).
    if (Cap.How == Sharing::Private && T.getNonReferenceType().isConstQualified()) {
      report(DiagId::PrivateConst, Task.DirLoc, {N});
      OK = false;
    }
    if (CPP && (Cap.How == Sharing::Firstprivate || Cap.How == Sharing::Inprivate) &&
        T.getNonReferenceType()->isArrayType() &&
        !T.getNonReferenceType().isTriviallyCopyableType(Ctx)) {
      report(Cap.How == Sharing::Inprivate ? DiagId::InprivateArray : DiagId::FirstprivateArray,
             Task.DirLoc, {N});
      OK = false;
    }
    Caps.push_back(Cap);
  }
  if (!OK)
    return;

  // Reductions: the task's copy replaces the variable in the body, through its capture (a
  // variable at file scope that the body uses is captured shared for that).
  for (const Clause &Cl : Task.Clauses) {
    if (!isReduction(Cl))
      continue;
    for (const DepItem &D : Cl.Deps) {
      Capture *Cap = nullptr;
      for (Capture &C : Caps)
        if (C.Var->getName() == D.BaseVar)
          Cap = &C;
      if (!Cap && isPrivatized(Cl) && !D.BaseVar.empty())
        if (const VarDecl *G = findVar(D.BaseVar, {}); G && G->hasGlobalStorage()) {
          GlobalUseFinder GF(const_cast<VarDecl *>(G));
          GF.TraverseStmt(S);
          if (!GF.Uses.empty()) {
            Caps.push_back(
                {const_cast<VarDecl *>(G), Sharing::Shared, GF.Uses, std::nullopt, false});
            Cap = &Caps.back();
          }
        }
      if (!Cap)
        continue; // the body does not use it
      if (Cap->How == Sharing::Private ||
          (Cap->How == Sharing::Firstprivate &&
           !Cap->Var->getType().getNonReferenceType()->isPointerType())) {
        report(DiagId::ReductionPrivate, D.Loc, {D.BaseVar, itemText(Cl, D)});
        OK = false;
        continue;
      }
      if (isPrivatized(Cl))
        Plan.Privatized.push_back({&D, D.BaseVar});
    }
  }
  if (!OK)
    return;

  // C: uses of shared variables become (*nanort_a->x) in place, before the body is copied.
  // In a body that creates tasks (nested task pragmas, calls of function tasks), private and
  // firstprivate ones become (nanort_a->x), the argument block's copy, which lives until the
  // task's children are done; elsewhere, and for one used through a macro body, a local.
  bool MakesTasks = !NestedTasks.empty();
  if (!CPP && !MakesTasks) {
    struct TaskCalls : RecursiveASTVisitor<TaskCalls> {
      const llvm::SmallPtrSet<const FunctionDecl *, 8> &Tasks;
      bool Found = false;
      explicit TaskCalls(const llvm::SmallPtrSet<const FunctionDecl *, 8> &T) : Tasks(T) {}
      bool VisitCallExpr(CallExpr *E) {
        if (const FunctionDecl *F = E->getDirectCallee())
          Found |= Tasks.count(F->getCanonicalDecl()) > 0;
        return true;
      }
    } TC(TaskFunctions);
    TC.TraverseStmt(Scan);
    MakesTasks = TC.Found;
  }
  auto InNested = [&](SourceLocation L) {
    SourceLocation Spelled = SM.getExpansionLoc(L);
    for (const auto &R : NestedTasks)
      if (!SM.isBeforeInTranslationUnit(Spelled, R.first) &&
          SM.isBeforeInTranslationUnit(Spelled, R.second))
        return true;
    return false;
  };
  if (!CPP)
    for (Capture &Cap : Caps) {
      Cap.InBlock = MakesTasks && !Cap.VM &&
                    (Cap.How == Sharing::Private || Cap.How == Sharing::Firstprivate);
      for (SourceLocation L : Cap.Uses)
        if (Cap.InBlock && !InNested(L) && L.isMacroID() && !SM.isMacroArgExpansion(L))
          Cap.InBlock = false;
      if (Cap.How != Sharing::Shared && !Cap.viewed() && !Cap.InBlock)
        continue;
      std::string Name = Cap.Var->getName().str();
      std::string View = Cap.VM       ? "(*nanort_s_" + Name + ")"
                         : Cap.InBlock ? "(nanort_a->" + Name + ")"
                                       : "(*nanort_a->" + Name + ")";
      Plan.Views[Name] = View;
      std::set<unsigned> Done; // a macro argument may expand to several uses
      for (SourceLocation L : Cap.Uses) {
        if (InNested(L))
          continue;
        if (L.isMacroID()) {
          if (!SM.isMacroArgExpansion(L)) {
            report(DiagId::SharedInMacroBody, L, {Name});
            OK = false;
            continue;
          }
          L = SM.getSpellingLoc(L);
        }
        if (!Done.insert(L.getRawEncoding()).second)
          continue;
        RW.ReplaceText(L, Name.size(), View);
      }
    }
  if (!OK)
    return;

  // C++ member functions: the body runs in a static function, so 'this' becomes nanort_self,
  // a captured pointer (explicit 'this', and the implicit one of member accesses).
  if (auto *M = dyn_cast<CXXMethodDecl>(Fn); M && M->isInstance()) {
    ThisFinder TF;
    TF.TraverseStmt(Scan);
    if (TF.Lambda)
      return report(DiagId::LambdaCapturesThis, TF.Lambda->getBeginLoc());
    for (CXXThisExpr *E : TF.Uses) {
      SourceLocation L = E->getLocation();
      if (L.isMacroID()) {
        if (!SM.isMacroArgExpansion(L))
          return report(DiagId::ThisInMacroBody, L);
        L = SM.getSpellingLoc(L);
      }
      if (!ThisEdits.insert(L.getRawEncoding()).second)
        continue; // an enclosing task rewrote it already
      if (E->isImplicit()) { // replaced, not inserted: an insertion at the start of the
                             // statement would stay outside the outlined body
        unsigned Len = Lexer::MeasureTokenLength(L, SM, LO);
        RW.ReplaceText(L, Len, "nanort_self->" +
                                   Lexer::getSourceText(CharSourceRange::getCharRange(
                                                            L, L.getLocWithOffset(Len)),
                                                        SM, LO)
                                       .str());
      } else
        RW.ReplaceText(L, 4, "nanort_self");
    }
    if (!TF.Uses.empty())
      Plan.ThisType = M->getThisType();
  }
  Plan.Begin = Begin;
  Plan.End = End;
  Plan.Caps = std::move(Caps);
  Plan.OK = true;
}

} // namespace lowering
} // namespace nanort
