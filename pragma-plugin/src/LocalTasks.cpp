//===- LocalTasks.cpp - Function tasks declared in a block ----------------===//
//
// OmpSs lets a task pragma precede a function declaration inside a function body:
//
//   void f(int *a, int n) {
//   #pragma omp task inout(a[0;n])
//     void g(int *a, int n);
//     g(a, n); // a task with the clauses above
//   }
//
// The uses of g that the declaration is visible to (after it, to the end of its block, inner
// blocks included, written without a qualifier) call a wrapper of their own, of internal
// linkage, defined before the enclosing function: it makes a task that runs g (or, when g is
// also a task at file scope, g's renamed body, so that the task does not make another). Uses
// elsewhere are left to g's file-scope declarations. Where several such declarations are
// visible, the innermost (the latest) one decides.
//
//===----------------------------------------------------------------------===//
#include "LowererImpl.h"

using namespace clang;

namespace nanort {
namespace lowering {

namespace {

// For each declaration in a function's body, the innermost statement whose scope holds it;
// and every use of a function by its name there.
class ScopeFinder : public RecursiveASTVisitor<ScopeFinder> {
  using Base = RecursiveASTVisitor<ScopeFinder>;

public:
  std::map<const Decl *, SourceRange> ScopeOf;
  std::vector<DeclRefExpr *> Refs;

  bool TraverseStmt(Stmt *S) {
    bool Opens = S && (isa<CompoundStmt>(S) || isa<ForStmt>(S) || isa<IfStmt>(S) ||
                       isa<WhileStmt>(S) || isa<SwitchStmt>(S) || isa<CXXForRangeStmt>(S) ||
                       isa<CXXCatchStmt>(S));
    if (Opens)
      Scopes.push_back(S->getSourceRange());
    bool R = Base::TraverseStmt(S);
    if (Opens)
      Scopes.pop_back();
    return R;
  }
  bool VisitDeclStmt(DeclStmt *DS) {
    if (!Scopes.empty())
      for (Decl *D : DS->decls())
        ScopeOf[D] = Scopes.back();
    return true;
  }
  bool VisitDeclRefExpr(DeclRefExpr *E) {
    if (isa<FunctionDecl>(E->getDecl()))
      Refs.push_back(E);
    return true;
  }

private:
  std::vector<SourceRange> Scopes;
};

// The names that a pragma's clause expressions use as variables: identifiers, not member
// names after '.' or '->'.
void namesIn(const Toks &T, std::set<std::string> &Out) {
  for (size_t I = 0; I < T.size(); ++I)
    if (T[I].Kind == tok::identifier &&
        !(I > 0 && (T[I - 1].Kind == tok::period || T[I - 1].Kind == tok::arrow)))
      Out.insert(T[I].Text);
}
std::set<std::string> variableNames(const Pragma &P) {
  std::set<std::string> Out;
  for (const Clause &Cl : P.Clauses) {
    for (const Toks &A : Cl.Args)
      namesIn(A, Out);
    for (const DepItem &D : Cl.Deps) {
      for (const Toks &S : D.Shape)
        namesIn(S, Out);
      namesIn(D.Base, Out);
      for (const Section &S : D.Sections) {
        namesIn(S.Lower, Out);
        namesIn(S.Second, Out);
      }
      for (const DepIterator &It : D.Iters) {
        namesIn(It.Lower, Out);
        namesIn(It.Second, Out);
        namesIn(It.Step, Out);
        for (const Toks &V : It.Values)
          namesIn(V, Out);
      }
    }
  }
  return Out;
}

// The function whose body holds D, outside lambdas and local classes.
FunctionDecl *outermostFunction(Decl *D) {
  FunctionDecl *Out = nullptr;
  for (DeclContext *DC = D->getLexicalDeclContext(); DC; DC = DC->getLexicalParent())
    if (auto *F = dyn_cast<FunctionDecl>(DC))
      Out = F;
  return Out;
}

} // namespace

FunctionDecl *Lowerer::localDeclaration(const Candidate &C) const {
  if (C.FD && C.FD->getLexicalDeclContext()->isFunctionOrMethod())
    return C.FD;
  if (auto *DS = dyn_cast_or_null<DeclStmt>(C.S))
    for (Decl *D : DS->decls())
      if (auto *F = dyn_cast<FunctionDecl>(D))
        return F;
  return nullptr;
}

void Lowerer::addLocalTask(Pragma &P, Pragma *Target, FunctionDecl *FD) {
  LocalTask T;
  T.Task = &P;
  T.Target = Target;
  T.FD = FD;
  T.Enclosing = nullptr;
  for (DeclContext *DC = FD->getLexicalDeclContext(); DC && !T.Enclosing;
       DC = DC->getLexicalParent())
    T.Enclosing = dyn_cast<FunctionDecl>(DC);
  LocalTasks.push_back(T);
}

// Checks each task declared in a block, finds its scope and points the uses there at its
// wrapper: before any construct is lowered, so that the statements that inline tasks copy
// hold the new name.
void Lowerer::planLocalTasks() {
  if (LocalTasks.empty())
    return;
  std::string Scope = CPP ? "namespace" : "file";
  std::map<FunctionDecl *, ScopeFinder> Finders; // by outermost function
  for (LocalTask &T : LocalTasks) {
    const Pragma &P = *T.Task;
    FunctionDecl *FD = T.FD;
    std::string Name = FD->getNameAsString();
    auto Fail = [&](DiagId Id, SourceLocation L, const DiagArgs &Args) {
      report(Id, L, Args);
      T.OK = false;
    };
    if (!SM.isWrittenInMainFile(P.Begin)) {
      Fail(DiagId::LocalTaskInHeader, P.DirLoc, {Name, Scope});
      continue;
    }
    if (!T.Enclosing || !T.Enclosing->getBody() || FD->isTemplated() ||
        T.Enclosing->isTemplated()) {
      Fail(DiagId::LocalTaskInTemplate, P.DirLoc, {Name, Scope});
      continue;
    }
    if (!FD->getReturnType()->isVoidType()) {
      Fail(DiagId::LocalTaskResult, P.DirLoc, {Name, Scope});
      continue;
    }
    if (!CPP && !FD->hasWrittenPrototype()) {
      Fail(DiagId::LocalTaskWithoutPrototype, P.DirLoc, {Name});
      continue;
    }
    for (ParmVarDecl *PV : FD->parameters()) {
      std::string PName = PV->getName().str();
      if (PV->hasDefaultArg())
        Fail(DiagId::LocalTaskDefaultArgument, PV->getLocation(), {PName, Name});
      // A type declared in a function cannot be named where the wrapper is.
      QualType Ty = PV->getType();
      while (Ty->isPointerType() || Ty->isReferenceType() || Ty->isArrayType())
        Ty = Ty->isArrayType() ? QualType(Ty->getPointeeOrArrayElementType(), 0)
                               : Ty->getPointeeType();
      const Decl *TypeDecl = nullptr;
      if (auto *TT = Ty->getAs<TypedefType>())
        TypeDecl = TT->getDecl();
      else if (const TagDecl *Tag = Ty->getAsTagDecl())
        TypeDecl = Tag;
      if (TypeDecl && TypeDecl->getDeclContext()->isFunctionOrMethod())
        Fail(DiagId::LocalTaskLocalType, PV->getLocation(), {PName, Name, Scope});
    }
    if (const Clause *In = P.find(ClauseKind::Inprivate))
      Fail(DiagId::InprivateFunctionTask, In->Loc, {});
    if (T.Target) {
      if (const Clause *Impl = T.Target->find(ClauseKind::Implements))
        Fail(DiagId::LocalTaskImplements, Impl->Loc, {Name, Scope});
      if (const Clause *Dev = T.Target->find(ClauseKind::Device))
        for (size_t I = 0; I < Dev->Words.size(); ++I)
          if (Dev->Words[I] != "smp") {
            Fail(DiagId::LocalTaskDevice, Dev->WordLocs[I], {Name, Dev->Words[I], Scope});
            break;
          }
    }
    // Also a task at file scope: the local task runs its renamed body, which exists when
    // this file defines the function and it runs on the CPU.
    if (auto It = FunctionTasks.find(FD->getCanonicalDecl()); It != FunctionTasks.end()) {
      const FunctionTask &F = It->second;
      FunctionDecl *Def = FD->getDefinition();
      const Clause *Dev = F.Target ? F.Target->find(ClauseKind::Device) : nullptr;
      if (!Def || !SM.isWrittenInMainFile(SM.getExpansionLoc(Def->getBeginLoc())))
        Fail(DiagId::LocalTaskOfTask, P.DirLoc, {Name, Scope, "defined in another file"});
      else if (Dev && std::find(Dev->Words.begin(), Dev->Words.end(), "smp") == Dev->Words.end())
        Fail(DiagId::LocalTaskOfTask, P.DirLoc, {Name, Scope, "a kernel without an smp body"});
    }
    if (!T.OK)
      continue;

    FunctionDecl *Outer = outermostFunction(FD);
    auto Found = Finders.find(Outer);
    if (Found == Finders.end()) {
      Found = Finders.emplace(Outer, ScopeFinder()).first;
      Found->second.TraverseDecl(Outer);
    }
    const ScopeFinder &SF = Found->second;
    // The scope: from the end of the declaration to the end of its block.
    auto Block = SF.ScopeOf.find(FD);
    if (Block == SF.ScopeOf.end()) {
      Fail(DiagId::LocalTaskInTemplate, P.DirLoc, {Name, Scope});
      continue;
    }
    T.From = SM.getExpansionRange(FD->getEndLoc()).getEnd();
    T.To = SM.getExpansionRange(Block->second.getEnd()).getEnd();

    // The clauses are evaluated in the wrapper, which sees the parameters and what is
    // declared at file scope: not the local variables visible at the pragma.
    std::set<std::string> Own;
    for (ParmVarDecl *PV : FD->parameters())
      Own.insert(PV->getName().str());
    for (const Clause &Cl : P.Clauses)
      for (const DepItem &D : Cl.Deps)
        for (const DepIterator &It : D.Iters)
          Own.insert(It.Name);
    for (const std::string &Id : variableNames(P)) {
      if (Own.count(Id))
        continue;
      for (VarDecl *V : Vars) {
        if (V->getName() != Id || !SM.isBeforeInTranslationUnit(V->getLocation(), P.Begin))
          continue;
        SourceRange R;
        if (auto *PV = dyn_cast<ParmVarDecl>(V)) {
          auto *F = dyn_cast<FunctionDecl>(PV->getDeclContext());
          if (!F || !F->getBody())
            continue;
          R = F->getBody()->getSourceRange();
        } else if (auto S = SF.ScopeOf.find(V); S != SF.ScopeOf.end()) {
          R = S->second;
        } else {
          continue;
        }
        if (SM.isBeforeInTranslationUnit(SM.getExpansionLoc(R.getBegin()), P.Begin) &&
            SM.isBeforeInTranslationUnit(P.Begin, SM.getExpansionLoc(R.getEnd()))) {
          Fail(DiagId::LocalTaskLocalVariable, P.DirLoc, {Name, Scope, Id});
          break;
        }
      }
      if (!T.OK)
        break;
    }
    if (!T.OK)
      continue;

    std::string Wrapper = "nanort_local_" + Name;
    for (unsigned K = 1; WrapperNames.count(Wrapper); ++K)
      Wrapper = "nanort_local_" + Name + "_" + std::to_string(K);
    WrapperNames.insert(Wrapper);
    T.Wrapper = Wrapper;
  }

  // Each use goes to the innermost declaration visible to it: the one declared last.
  std::map<unsigned, std::pair<LocalTask *, DeclRefExpr *>> Best; // by offset of the name
  for (LocalTask &T : LocalTasks) {
    if (!T.OK)
      continue;
    const ScopeFinder &SF = Finders[outermostFunction(T.FD)];
    for (DeclRefExpr *E : SF.Refs) {
      if (E->getDecl()->getCanonicalDecl() != T.FD->getCanonicalDecl() || E->hasQualifier())
        continue;
      SourceLocation L = SM.getExpansionLoc(E->getLocation());
      if (!SM.isBeforeInTranslationUnit(T.From, L) || !SM.isBeforeInTranslationUnit(L, T.To))
        continue;
      auto [It, New] = Best.try_emplace(SM.getFileOffset(L), &T, E);
      if (!New && SM.isBeforeInTranslationUnit(It->second.first->From, T.From))
        It->second = {&T, E};
    }
  }
  for (auto &Use : Best) {
    LocalTask &T = *Use.second.first;
    SourceLocation L = Use.second.second->getLocation();
    if (L.isMacroID() && SM.isMacroArgExpansion(L))
      L = SM.getSpellingLoc(L);
    if (L.isMacroID() || !SM.isWrittenInMainFile(L)) {
      report(DiagId::LocalTaskUseInMacro, SM.getExpansionLoc(L), {T.FD->getNameAsString()});
      T.OK = false;
      continue;
    }
    RW.ReplaceText(L, T.FD->getName().size(), T.Wrapper);
    T.Uses.push_back(L);
  }
}

// The wrappers of the tasks declared in blocks whose scope uses them.
void Lowerer::lowerLocalTasks(SourceLocation &PreludeAt) {
  for (LocalTask &T : LocalTasks) {
    if (!T.OK || T.Uses.empty())
      continue;
    FunctionDecl *FD = T.FD;
    std::string Name = FD->getNameAsString();
    LocalSite Site;
    Site.Wrapper = T.Wrapper;
    Site.Callee = Name;
    std::string Storage;
    if (FunctionTasks.count(FD->getCanonicalDecl())) {
      Site.Callee = "nanort_body_" + Name;
      if (FD->getFormalLinkage() == Linkage::Internal)
        Storage = "static ";
    }
    // A declaration of the callee, with the parameters' names (a variably modified type may
    // name an earlier parameter).
    std::string Params;
    for (unsigned I = 0; I < FD->getNumParams(); ++I) {
      ParmVarDecl *PV = FD->getParamDecl(I);
      Params += (I ? ", " : "") +
                decl(PV->getType(), PV->getName().empty() ? "nanort_p" + std::to_string(I)
                                                          : PV->getName().str());
    }
    if (Params.empty() && !CPP)
      Params = "void";
    Site.Declare = Storage + "void " + Site.Callee + "(" + Params + ");\n";
    // Before the enclosing function, or the outermost class or function around it, in its
    // namespace.
    Decl *D = T.Enclosing;
    while (D && !isa<TranslationUnitDecl>(D->getLexicalDeclContext()) &&
           !isa<NamespaceDecl>(D->getLexicalDeclContext()))
      D = Decl::castFromDeclContext(D->getLexicalDeclContext());
    Site.Place.At = declStart(D);
    Site.Place.Top = topLevelStart(D);
    reopen(FD, D->getLexicalDeclContext(), Site.Place);
    lowerFunctionTask(*T.Task, T.Target, FD, PreludeAt, &Site);
  }
}

} // namespace lowering
} // namespace nanort
