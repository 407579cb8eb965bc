//===- Lowering.cpp - From recorded pragmas to rewritten source -------------===//
//
// Lowerer::run coordinates the lowering of one file: it finds what each pragma applies to,
// checks and lowers each construct, inner ones first, and puts the prelude before the first
// function that needs it. The parts are in the files that LowererImpl.h lists.
//
//===----------------------------------------------------------------------===//
#include "LowererImpl.h"

using namespace clang;

namespace nanort {

// OpenCL C's address spaces and CUDA's execution and memory space specifiers: defined away in
// host code that declares kernels with them.
const char *const KernelKeywords[] = {"__kernel",   "__global",     "__local",     "__constant",
                                      "__private",  "__global__",   "__device__",  "__host__",
                                      "__shared__", "__constant__", "__managed__", nullptr};

std::string escapeStringLiteral(StringRef In) {
  std::string Out;
  for (char C : In) {
    if (C == '\\' || C == '"')
      Out += '\\';
    Out += C;
  }
  return Out;
}

std::string kernelKeywordDefines() {
  std::string S;
  for (const char *const *K = KernelKeywords; *K; ++K)
    S += std::string("#ifndef ") + *K + "\n#define " + *K + "\n#endif\n";
  S += "#ifndef __launch_bounds__\n#define __launch_bounds__(...)\n#endif\n";
  return S;
}

namespace lowering {

namespace {
// Calls of omp_in_final() in the main file, written there (not through a macro).
class InFinalCalls : public RecursiveASTVisitor<InFinalCalls> {
public:
  InFinalCalls(const SourceManager &SM, std::vector<SourceLocation> &Found)
      : SM(SM), Found(Found) {}
  bool VisitCallExpr(CallExpr *E) {
    const FunctionDecl *F = E->getDirectCallee();
    if (!F || E->getNumArgs() != 0 || !F->getIdentifier() || F->getName() != "omp_in_final")
      return true;
    SourceLocation L = E->getCallee()->IgnoreParenImpCasts()->getExprLoc();
    if (L.isFileID() && SM.isInMainFile(L))
      Found.push_back(L);
    return true;
  }

private:
  const SourceManager &SM;
  std::vector<SourceLocation> &Found;
};
} // namespace

// omp_in_final() is the runtime's answer (nanort_in_final, declared by the compatibility
// header of every lowered source), also where the program defines a function of that name,
// which OpenMP reserves: OmpSs compilers fold it to 1 in the code of final tasks.
void Lowerer::answerInFinal() {
  std::vector<SourceLocation> Calls;
  InFinalCalls(SM, Calls).TraverseDecl(Ctx.getTranslationUnitDecl());
  for (SourceLocation L : Calls)
    RW.ReplaceText(L, StringRef("omp_in_final").size(), "nanort_in_final");
}

bool Lowerer::run(bool DefineKernelKeywords, std::string &Out,
                  std::map<std::string, std::string> &Headers) {
  collect();

  // Pair each target with the task pragma after it; find what each pragma applies to.
  std::vector<Work> Works = associate();
  // From here on, a construct with an error is skipped and the others still lowered, so that
  // one compile reports every error; the text is not used when there was any.

  // The pragma lines go away (their lines stay, empty).
  for (const Pragma &P : Pragmas) {
    RW.RemoveText(CharSourceRange::getCharRange(P.Begin, P.End));
    if (SM.getPresumedLineNumber(P.Begin) != SM.getPresumedLineNumber(P.End))
      RW.InsertTextAfter(P.End, Code::marker(SM, P.End));
  }

  answerInFinal();

  // One task pragma per function, reported at the second one.
  for (Work &W : Works)
    if (W.P->Dir->Kind == DirectiveKind::Task && W.C && W.C->FD &&
        !TaskFunctions.insert(W.C->FD->getCanonicalDecl()).second) {
      report(DiagId::TaskTwice, W.P->DirLoc, {W.C->FD->getNameAsString()});
      W.Skip = true;
    }

  // The uses of function tasks (where their code goes, header kernels' wrappers).
  collectRefs();

  // Versions: found once every function task is known, since a version may come before the
  // task it implements.
  for (Work &W : Works)
    if (W.P->Dir->Kind == DirectiveKind::Task && W.C && W.C->FD && !W.Skip)
      FunctionTasks[W.C->FD->getCanonicalDecl()] = {W.P, W.Target, W.C->FD};
  for (Work &W : Works)
    if (W.P->Dir->Kind == DirectiveKind::Task && W.C && W.C->FD && !W.Skip && W.Target &&
        W.Target->find(ClauseKind::Implements)) {
      W.Version = true;
      resolveVersion(*W.P, *W.Target, W.C->FD);
    }
  checkVersionLaunches();
  if (!TaskOfVersion.empty())
    checkVersionUses();

  for (Work &W : Works)
    if (W.P->Dir->Kind == DirectiveKind::Task && W.C && W.C->FD && !W.Skip && !W.Version &&
        isHeaderKernel(*W.P, W.Target, W.C->FD))
      nameHeaderKernel(W.C->FD);
  // Tasks declared in a block: their uses are renamed now too.
  planLocalTasks();
  // Non-void function tasks: the calls that need not wait for the result are rewritten before
  // any construct is lowered, so that the statements that inline tasks copy hold them; then
  // the statements that call them several times (NonVoid.h), those of inline tasks, critical
  // and atomic constructs excepted.
  for (Work &W : Works)
    if (W.P->Dir->Kind == DirectiveKind::Task && W.C && W.C->FD && !W.Skip && !W.Version)
      planResultUses(W.Target, W.C->FD);
  if (!ResultPlans.empty()) {
    std::vector<SourceRange> Outside;
    for (const Work &W : Works)
      if (W.C && !W.C->FD)
        Outside.push_back(SourceRange(W.C->Begin, W.C->End));
    planJointCalls(Outside);
  }

  for (Work &W : Works)
    if ((W.P->Dir->Kind == DirectiveKind::Task || W.P->Dir->Kind == DirectiveKind::Taskloop) &&
        W.C && !W.C->FD)
      planInlineTask(*W.P, W.Target, *W.C, Plans[W.P]);
  for (auto &A : Plans)
    for (auto &B : Plans)
      if (A.first != B.first && A.second.OK && B.second.OK &&
          SM.isBeforeInTranslationUnit(B.second.Begin, A.second.Begin) &&
          SM.isBeforeInTranslationUnit(A.second.Begin, B.second.End))
        A.second.Nested = true;

  // Declared reductions first: the clauses that name them may come before them in the
  // reverse order below.
  for (Work &W : Works)
    if (W.P->Dir->Kind == DirectiveKind::Declare)
      lowerDeclareReduction(*W.P);

  // Inner constructs first, so that an enclosing task's body holds their lowered form.
  SourceLocation PreludeAt;
  for (auto It = Works.rbegin(); It != Works.rend(); ++It) {
    Work &W = *It;
    if (W.Skip)
      continue;
    switch (W.P->Dir->Kind) {
    case DirectiveKind::Taskwait:
      lowerTaskwait(*W.P);
      break;
    case DirectiveKind::Task:
      if (W.Version) {
        // Lowered with the task it implements; a single-source kernel's text goes to the
        // OpenCL program here.
        if (W.P->KernelClose.isValid())
          addSourceKernel(*W.P);
      } else if (W.C->FD) {
        lowerFunctionTask(*W.P, W.Target, W.C->FD, PreludeAt);
      } else if (Plans[W.P].OK) {
        lowerInlineTask(*W.P, W.Target, *W.C, Plans[W.P], PreludeAt);
      }
      break;
    case DirectiveKind::Taskloop: // chunk tasks are inline tasks
      if (Plans[W.P].OK)
        lowerInlineTask(*W.P, W.Target, *W.C, Plans[W.P], PreludeAt);
      break;
    case DirectiveKind::Critical:
      lowerCritical(*W.P, *W.C);
      break;
    case DirectiveKind::Atomic:
      lowerAtomic(*W.P, *W.C);
      break;
    case DirectiveKind::Taskgroup:
      lowerTaskgroup(*W.P, *W.C);
      break;
    case DirectiveKind::Taskiter:
      lowerTaskiter(*W.P, *W.C);
      break;
    case DirectiveKind::Taskgraph:
      lowerTaskgraph(*W.P, *W.C);
      break;
    case DirectiveKind::Declare:
      break;
    case DirectiveKind::Target:
    case DirectiveKind::Ignored:
      break;
    }
    if (W.P->Dir->Kind != DirectiveKind::Task && W.P->Dir->Kind != DirectiveKind::Taskloop &&
        W.P->Dir->Kind != DirectiveKind::Declare) {
      // Taskwait, critical and atomic need the helpers before their function.
      const Candidate *Around = nullptr;
      for (const Candidate &C : Candidates)
        if (C.FD && C.FD->doesThisDeclarationHaveABody() &&
            SM.isBeforeInTranslationUnit(C.Begin, W.P->Begin) &&
            SM.isBeforeInTranslationUnit(W.P->Begin, C.End))
          if (!Around || SM.isBeforeInTranslationUnit(Around->Begin, C.Begin))
            Around = &C;
      if (Around) {
        SourceLocation Top = topLevelStart(Around->FD);
        if (PreludeAt.isInvalid() || SM.isBeforeInTranslationUnit(Top, PreludeAt))
          PreludeAt = Top;
      }
    }
  }
  lowerLocalTasks(PreludeAt);
  reportSectionBounds();
  if (Diags.hasErrors())
    return false;

  for (SourceLocation Top : ResultPreludes)
    if (PreludeAt.isInvalid() || SM.isBeforeInTranslationUnit(Top, PreludeAt))
      PreludeAt = Top;
  if (PreludeAt.isValid())
    RW.InsertTextBefore(PreludeAt, prelude() + Code::marker(SM, PreludeAt));

  FileID Main = SM.getMainFileID();
  std::string Head;
  if (DefineKernelKeywords)
    Head += kernelKeywordDefines();
  Head += "#line 1 \"" + Code::escape(SM.getPresumedLoc(SM.getLocForStartOfFile(Main)).getFilename()) +
          "\"\n";
  for (auto It = RW.buffer_begin(); It != RW.buffer_end(); ++It) {
    if (It->first == Main)
      continue;
    if (OptionalFileEntryRef FE = SM.getFileEntryRefForID(It->first))
      Headers[FE->getName().str()] = std::string(It->second.begin(), It->second.end());
  }
  const RewriteBuffer *RB = RW.getRewriteBufferFor(Main);
  Out = Head + (RB ? std::string(RB->begin(), RB->end()) : SM.getBufferData(Main).str());
  return true;
}

} // namespace lowering

bool lowerMainFile(ASTContext &Ctx, std::vector<Pragma> &Pragmas, DiagSink &Diags,
                   const LoweringOptions &Options, bool DefineKernelKeywords, std::string &Out,
                   std::map<std::string, std::string> &Headers) {
  lowering::Lowerer L(Ctx, Pragmas, Diags, Options);
  return L.run(DefineKernelKeywords, Out, Headers);
}

} // namespace nanort
