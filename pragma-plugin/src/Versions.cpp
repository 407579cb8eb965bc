//===- Versions.cpp - Versions (implements) -------------------------------===//
//
// 'target ... implements(f)' before a function task declares another implementation of the
// function task f. A call of f makes one task, whose site lists f's implementations first,
// then each version's, in the order of their pragmas; the runtime chooses one per task.
//
//===----------------------------------------------------------------------===//
#include "LowererImpl.h"

using namespace clang;

namespace nanort {
namespace lowering {

namespace {

bool isDataClause(ClauseKind K) {
  switch (K) {
  case ClauseKind::In:
  case ClauseKind::Out:
  case ClauseKind::Inout:
  case ClauseKind::Concurrent:
  case ClauseKind::Commutative:
  case ClauseKind::Depend:
  case ClauseKind::CopyIn:
  case ClauseKind::CopyOut:
  case ClauseKind::CopyInout:
  case ClauseKind::CopyDeps:
  case ClauseKind::NoCopyDeps:
    return true;
  default:
    return false;
  }
}


} // namespace

// Pointers keep their address space in OpenCL and CUDA declarations only; host code has none,
// but the comparison ignores them wherever they are.
bool Lowerer::sameTypesIgnoringAddressSpaces(QualType A, QualType B) const {
  A = Ctx.removeAddrSpaceQualType(A.getCanonicalType()).getUnqualifiedType();
  B = Ctx.removeAddrSpaceQualType(B.getCanonicalType()).getUnqualifiedType();
  const auto *PA = A->getAs<PointerType>(), *PB = B->getAs<PointerType>();
  if (PA && PB) {
    QualType EA = PA->getPointeeType(), EB = PB->getPointeeType();
    Qualifiers QA = EA.getQualifiers(), QB = EB.getQualifiers();
    QA.removeAddressSpace();
    QB.removeAddressSpace();
    return QA == QB && sameTypesIgnoringAddressSpaces(EA, EB);
  }
  return Ctx.hasSameType(A, B);
}

// The tokens with the function's parameters named by position ($0, $1, ...), so that a
// version's clauses compare with those of the task it implements.
std::string Lowerer::byPosition(const Toks &T, const FunctionDecl *FD) const {
  std::string S;
  for (size_t I = 0; I < T.size(); ++I) {
    std::string Text = T[I].Text;
    if (T[I].Kind == tok::identifier &&
        (I == 0 || (T[I - 1].Kind != tok::period && T[I - 1].Kind != tok::arrow)))
      for (unsigned P = 0; P < FD->getNumParams(); ++P)
        if (FD->getParamDecl(P)->getName() == Text)
          Text = "$" + std::to_string(P);
    S += (S.empty() ? "" : " ") + Text;
  }
  return S;
}

// The dependences and copies of a function task, by position, in a fixed order.
std::vector<std::string> Lowerer::dataClauses(const Pragma &Task, const Pragma *Target,
                                              const FunctionDecl *FD) const {
  std::vector<std::string> Keys;
  for (const Pragma *P : {&Task, Target}) {
    if (!P)
      continue;
    for (const Clause &Cl : P->Clauses) {
      if (Cl.Info->Kind == ClauseKind::NoCopyDeps)
        Keys.push_back("no_copy_deps");
      for (const DepItem &D : Cl.Deps) {
        std::string K = std::string(P == &Task ? "access " : "copy ") + modeName(D.Mode) + " ";
        for (const Toks &Dim : D.Shape)
          K += "[" + byPosition(Dim, FD) + "]";
        K += byPosition(D.Base, FD);
        for (const Section &Sec : D.Sections)
          K += "[" + byPosition(Sec.Lower, FD) + (Sec.Inclusive ? ":" : ";") +
               byPosition(Sec.Second, FD) + "]";
        Keys.push_back(K);
      }
    }
  }
  std::sort(Keys.begin(), Keys.end());
  return Keys;
}

// An ndrange or shmem clause, by position; empty when there is none.
std::string Lowerer::launchClause(const Pragma *Target, ClauseKind Kind,
                                  const FunctionDecl *FD) const {
  const Clause *Cl = Target ? Target->find(Kind) : nullptr;
  std::string S;
  if (Cl)
    for (const Toks &Arg : Cl->Args)
      S += byPosition(Arg, FD) + ",";
  return S;
}

// Checks a version G against the task it implements and records it.
void Lowerer::resolveVersion(const Pragma &Task, const Pragma &Target, FunctionDecl *G) {
  const Clause *Impl = Target.find(ClauseKind::Implements);
  std::string FName = Impl->Words[0], GName = G->getNameAsString();
  auto Fail = [&](DiagId Id, const DiagArgs &Args = {}) { report(Id, Impl->Loc, Args); };
  if (isa<CXXMethodDecl>(G) || G->isTemplated())
    return Fail(DiagId::MemberVersion);
  if (!G->getLexicalDeclContext()->getRedeclContext()->isFileContext())
    return Fail(DiagId::LocalVersion);
  // f: the innermost scope around G that declares a function of that name; among overloads,
  // the function task.
  FunctionDecl *F = nullptr;
  bool Declared = false;
  DeclarationName Lookup(&Ctx.Idents.get(FName));
  for (DeclContext *DC = G->getDeclContext(); DC && !Declared; DC = DC->getParent()) {
    if (!DC->isLookupContext())
      continue;
    for (NamedDecl *ND : DC->lookup(Lookup)) {
      FunctionDecl *Fn = ND->getUnderlyingDecl()->getAsFunction();
      if (!Fn)
        continue;
      Declared = true;
      if (!F && FunctionTasks.count(Fn->getCanonicalDecl()))
        F = Fn->getCanonicalDecl();
    }
  }
  if (!Declared)
    return Fail(DiagId::ImplementsUndeclared, {FName, GName});
  if (!F)
    return Fail(DiagId::ImplementsNotTask, {FName, Task.Namespace});
  if (F == G->getCanonicalDecl())
    return Fail(DiagId::ImplementsItself, {GName});
  const FunctionTask &FT = FunctionTasks[F];
  if (const Clause *Up = FT.Target ? FT.Target->find(ClauseKind::Implements) : nullptr)
    return Fail(DiagId::ImplementsVersion, {FName, Up->Words[0]});
  if (isa<CXXMethodDecl>(F) || F->isTemplated())
    return Fail(DiagId::MemberVersion);

  // The same signature: the same argument block serves every implementation.
  if (!CPP && !G->hasWrittenPrototype())
    return Fail(DiagId::VersionWithoutPrototype, {GName, FName});
  if (!G->getReturnType()->isVoidType() || G->isVariadic())
    return Fail(DiagId::VersionNotVoid, {GName, FName});
  if (G->getNumParams() != F->getNumParams())
    return Fail(DiagId::VersionArity, {GName, FName, std::to_string(G->getNumParams()),
                                       std::to_string(F->getNumParams())});
  for (unsigned I = 0; I < F->getNumParams(); ++I) {
    QualType TF = F->getParamDecl(I)->getType(), TG = G->getParamDecl(I)->getType();
    if (!sameTypesIgnoringAddressSpaces(TF, TG))
      return Fail(DiagId::VersionParameterType,
                  {GName, FName, std::to_string(I + 1), TG.getAsString(Policy),
                   TF.getAsString(Policy)});
  }

  // The task's clauses are f's: a version may repeat its dependences and copies, nothing else.
  for (const Clause &Cl : Task.Clauses)
    if (!isDataClause(Cl.Info->Kind))
      return report(DiagId::VersionClause, Cl.Loc, {Cl.Info->Spelling, FName});
  std::vector<std::string> Mine = dataClauses(Task, &Target, G);
  if (!Mine.empty() && Mine != dataClauses(*FT.Task, FT.Target, FT.FD)) {
    SourceLocation L = Task.DirLoc;
    for (const Pragma *P : {&Task, &Target})
      for (const Clause &Cl : P->Clauses)
        if (isDataClause(Cl.Info->Kind) && L == Task.DirLoc)
          L = Cl.Loc;
    return report(DiagId::VersionDataClauses, L, {GName, FName});
  }

  Version V{&Task, &Target, G, {}};
  if (!checkDevices(Task, &Target, G, /*Version=*/true, V.Dev))
    return;
  // Its kernel arguments are the task's: buffers where the task's clauses name the parameter.
  std::vector<bool> Buffer = bufferParameters(*FT.Task, FT.Target, FT.FD);
  if (V.Dev.Cuda && !checkCudaParameters(Task, G, Buffer))
    return;
  // f's task is made where f is defined (or, for a kernel, declared with its pragma; a kernel
  // declared in a header: by every file that calls it).
  FunctionDecl *Def = F->getDefinition();
  const Clause *FDevice = FT.Target ? FT.Target->find(ClauseKind::Device) : nullptr;
  bool KernelOnly = FDevice && std::find(FDevice->Words.begin(), FDevice->Words.end(),
                                         "smp") == FDevice->Words.end();
  bool TaskHere = SM.isWrittenInMainFile(FT.Task->Begin) ||
                  (Def && SM.isWrittenInMainFile(SM.getExpansionLoc(Def->getBeginLoc()))) ||
                  (!Def && KernelOnly);
  if (!TaskHere && SM.isWrittenInMainFile(Task.Begin))
    return Fail(DiagId::VersionOfOtherFile, {FName});
  TaskOfVersion[G->getCanonicalDecl()] = F;
  if (TaskHere)
    VersionsOf[F].push_back(V);
}

// A task has one index space (ndrange, shmem) for all its kernels: the task and its versions
// must agree on it, parameter names aside.
void Lowerer::checkVersionLaunches() {
  for (const auto &E : VersionsOf) {
    const FunctionTask &FT = FunctionTasks[E.first];
    for (ClauseKind Kind : {ClauseKind::Ndrange, ClauseKind::Shmem}) {
      std::string First = launchClause(FT.Target, Kind, FT.FD);
      std::string FirstName = FT.FD->getNameAsString();
      for (const Version &V : E.second) {
        std::string Mine = launchClause(V.Target, Kind, V.FD);
        if (Mine.empty())
          continue;
        if (First.empty()) {
          First = Mine;
          FirstName = V.FD->getNameAsString();
        } else if (Mine != First) {
          const Clause *Cl = V.Target->find(Kind);
          report(DiagId::VersionLaunch, Cl->Loc,
                 {Cl->Info->Spelling, V.FD->getNameAsString(), FirstName});
        }
      }
    }
  }
}
// A version runs only as an implementation of its task: naming it elsewhere is an error.
void Lowerer::checkVersionUses() {
  FunctionRefFinder Finder;
  Finder.TraverseDecl(Ctx.getTranslationUnitDecl());
  std::set<unsigned> Reported;
  for (DeclRefExpr *E : Finder.Refs) {
    auto It = TaskOfVersion.find(cast<FunctionDecl>(E->getDecl())->getCanonicalDecl());
    SourceLocation L = SM.getExpansionLoc(E->getLocation());
    if (It == TaskOfVersion.end() || !SM.isWrittenInMainFile(L) ||
        !Reported.insert(SM.getFileOffset(L)).second)
      continue;
    report(DiagId::VersionUse, L,
           {E->getDecl()->getNameAsString(), It->second->getNameAsString()});
  }
}

// The smp implementation of a version calls it by name, so the task's generated code must
// follow a declaration of it: when every one comes after At, the code moves after the
// version's declaration, which must then be in the main file and in the scope of Place (the
// task's definition or kernel declaration).
bool Lowerer::placeAfterVersions(const FunctionDecl *Place, const std::vector<Version> &Versions,
                                 SourceLocation &At) {
  SourceLocation Original = At;
  for (const Version &V : Versions) {
    if (!V.Dev.Smp)
      continue;
    bool DeclaredBefore = false;
    for (const FunctionDecl *R : V.FD->redecls())
      DeclaredBefore |= SM.isBeforeInTranslationUnit(SM.getExpansionLoc(R->getBeginLoc()),
                                                     Original);
    if (DeclaredBefore)
      continue;
    SourceLocation End = SM.getExpansionRange(V.FD->getEndLoc()).getEnd();
    SourceLocation After = V.FD->doesThisDeclarationHaveABody()
                               ? afterToken(End)
                               : Lexer::findLocationAfterToken(End, tok::semi, SM, LO, false);
    // Not into a linkage block: the task's code would take its linkage.
    const DeclContext *There = V.FD->getLexicalDeclContext();
    bool SameScope = (isa<TranslationUnitDecl>(There) || isa<NamespaceDecl>(There)) &&
                     There->Equals(Place->getLexicalDeclContext()->getRedeclContext());
    if (!SM.isWrittenInMainFile(End) || !SameScope || After.isInvalid()) {
      report(DiagId::VersionDeclaredAfter, V.Target->find(ClauseKind::Implements)->Loc,
             {V.FD->getNameAsString(), Place->getNameAsString()});
      return false;
    }
    if (SM.isBeforeInTranslationUnit(At, After))
      At = After;
  }
  return true;
}

// How the smp implementation of a version names it: C++ qualifies it fully, since the task's
// code may stand in another namespace.
std::string Lowerer::versionCall(const FunctionDecl *G) const {
  if (!CPP)
    return G->getNameAsString();
  std::string S;
  llvm::raw_string_ostream OS(S);
  G->printQualifiedName(OS, Policy);
  return "::" + OS.str();
}

} // namespace lowering
} // namespace nanort
