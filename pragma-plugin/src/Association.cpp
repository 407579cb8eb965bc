//===- Association.cpp - What each pragma applies to ----------------------===//
//
// Each pragma of the file is paired with the function declaration or statement after it
// (Collector), and each use of a function task is found (RefCollector), so that the code
// that makes its tasks goes where the file names it.
//
//===----------------------------------------------------------------------===//
#include "LowererImpl.h"

using namespace clang;

namespace nanort {
namespace lowering {

namespace {

class Collector : public RecursiveASTVisitor<Collector> {
  using Base = RecursiveASTVisitor<Collector>;

public:
  Collector(SourceManager &SM) : SM(SM) {}

  std::vector<Candidate> Candidates;
  std::vector<FunctionDecl *> Bodies; // functions with a body in the main file
  std::vector<VarDecl *> Vars;        // local variables and parameters in the main file

  bool TraverseDecl(Decl *D) {
    auto *FD = dyn_cast_or_null<FunctionDecl>(D);
    if (FD)
      Fns.push_back(FD);
    bool R = Base::TraverseDecl(D);
    if (FD)
      Fns.pop_back();
    return R;
  }
  bool TraverseLambdaExpr(LambdaExpr *L) {
    ++LambdaDepth;
    bool R = Base::TraverseLambdaExpr(L);
    --LambdaDepth;
    return R;
  }

  bool VisitFunctionDecl(FunctionDecl *FD) {
    SourceLocation B = FD->getBeginLoc();
    if (FunctionTemplateDecl *T = FD->getDescribedFunctionTemplate())
      B = T->getBeginLoc();
    add(B, FD->getEndLoc(), FD, nullptr);
    if (FD->doesThisDeclarationHaveABody() && inMain(FD->getBeginLoc()))
      Bodies.push_back(FD);
    return true;
  }
  bool VisitVarDecl(VarDecl *V) {
    if (V->isLocalVarDeclOrParm() && inMain(V->getLocation()))
      Vars.push_back(V);
    return true;
  }
  bool VisitStmt(Stmt *S) {
    if (auto *C = dyn_cast<CompoundStmt>(S)) {
      for (Stmt *Child : C->body())
        addStmt(Child);
    } else if (auto *I = dyn_cast<IfStmt>(S)) {
      addStmt(I->getThen());
      addStmt(I->getElse());
    } else {
      addStmt(loopBody<ForStmt, WhileStmt, DoStmt, CXXForRangeStmt>(S));
      addStmt(subStatement<SwitchCase, LabelStmt>(S));
    }
    return true;
  }

private:
  SourceManager &SM;
  std::vector<FunctionDecl *> Fns;
  int LambdaDepth = 0;

  // The body of S, if S is one of the loops Ts; otherwise null.
  template <class... Ts> static Stmt *loopBody(Stmt *S) {
    Stmt *Body = nullptr;
    ((Body = Body ? Body : isa<Ts>(S) ? cast<Ts>(S)->getBody() : nullptr), ...);
    return Body;
  }
  // The statement that S labels, if S is one of Ts (a label, a case); otherwise null.
  template <class... Ts> static Stmt *subStatement(Stmt *S) {
    Stmt *Sub = nullptr;
    ((Sub = Sub ? Sub : isa<Ts>(S) ? cast<Ts>(S)->getSubStmt() : nullptr), ...);
    return Sub;
  }

  bool inMain(SourceLocation L) { return SM.isWrittenInMainFile(SM.getExpansionLoc(L)); }
  void addStmt(Stmt *S) {
    if (S)
      add(S->getBeginLoc(), S->getEndLoc(), nullptr, S);
  }
  void add(SourceLocation B, SourceLocation E, FunctionDecl *FD, Stmt *S) {
    if (B.isInvalid() || E.isInvalid())
      return;
    B = SM.getExpansionLoc(B);
    E = SM.getExpansionRange(E).getEnd();
    if (B.isInvalid() || SM.isInSystemHeader(B))
      return;
    Candidate C;
    C.Begin = B;
    C.End = E;
    C.FD = FD;
    C.S = S;
    if (S) {
      C.Enclosing = Fns.empty() ? nullptr : Fns.back();
      C.InLambda = LambdaDepth > 0;
    }
    Candidates.push_back(C);
  }
};

class RefCollector : public RecursiveASTVisitor<RefCollector> {
  using Base = RecursiveASTVisitor<RefCollector>;

public:
  // Of these functions only (canonical declarations).
  explicit RefCollector(const llvm::SmallPtrSetImpl<const FunctionDecl *> &Of) : Of(Of) {}
  std::vector<FunctionRef> Refs;

  bool TraverseDecl(Decl *D) {
    if (!D || isa<TranslationUnitDecl>(D))
      return Base::TraverseDecl(D);
    Around.push_back(D);
    bool R = Base::TraverseDecl(D);
    Around.pop_back();
    return R;
  }
  bool VisitDeclRefExpr(DeclRefExpr *E) {
    if (auto *F = dyn_cast<FunctionDecl>(E->getDecl()); F && Of.count(F->getCanonicalDecl()))
      Refs.push_back({F->getCanonicalDecl(), E->getLocation(), Around, E->hasQualifier()});
    return true;
  }
  bool VisitUnresolvedLookupExpr(UnresolvedLookupExpr *E) {
    for (NamedDecl *N : E->decls())
      if (auto *F = dyn_cast<FunctionDecl>(N->getUnderlyingDecl());
          F && Of.count(F->getCanonicalDecl()))
        Refs.push_back({F->getCanonicalDecl(), E->getNameLoc(), Around,
                        E->getQualifier() != nullptr, E->getNumDecls() > 1});
    return true;
  }

private:
  const llvm::SmallPtrSetImpl<const FunctionDecl *> &Of;
  std::vector<Decl *> Around;
};

} // namespace

void Lowerer::collect() {
  Collector Col(SM);
  Col.TraverseDecl(Ctx.getTranslationUnitDecl());
  Candidates = std::move(Col.Candidates);
  Bodies = std::move(Col.Bodies);
  Vars = std::move(Col.Vars);
}

void Lowerer::collectRefs() {
  RefCollector RC(TaskFunctions);
  RC.TraverseDecl(Ctx.getTranslationUnitDecl());
  Refs = std::move(RC.Refs);
}

bool Lowerer::onlyBlankBetween(SourceLocation A, SourceLocation B) const {
  std::pair<FileID, unsigned> DA = SM.getDecomposedLoc(A), DB = SM.getDecomposedLoc(B);
  if (DA.first != DB.first || DA.second > DB.second)
    return false;
  StringRef Buf = SM.getBufferData(DA.first);
  StringRef T = Buf.slice(DA.second, DB.second);
  size_t I = 0;
  while (I < T.size()) {
    char C = T[I];
    if (isspace((unsigned char)C) || C == '\\') {
      ++I;
    } else if (T.substr(I).starts_with("//")) {
      size_t E = T.find('\n', I);
      I = E == StringRef::npos ? T.size() : E;
    } else if (T.substr(I).starts_with("/*")) {
      size_t E = T.find("*/", I + 2);
      I = E == StringRef::npos ? T.size() : E + 2;
    } else if (C == '#') {
      // The end of a conditional ('#endif'), or the start of a branch that the preprocessor
      // skipped, up to its '#endif': the pragma was written in one branch of an '#ifdef'
      // (OmpSs programs give Nanos6 and Nanos++ different lines), the statement after it.
      auto Directive = [&](size_t At) {
        size_t W = At + 1;
        while (W < T.size() && (T[W] == ' ' || T[W] == '\t'))
          ++W;
        size_t E = W;
        while (E < T.size() && isalpha((unsigned char)T[E]))
          ++E;
        return T.slice(W, E);
      };
      auto LineEnd = [&](size_t At) {
        size_t E = T.find('\n', At);
        return E == StringRef::npos ? T.size() : E;
      };
      StringRef D = Directive(I);
      if (D == "endif") {
        I = LineEnd(I);
      } else if (D == "else" || D == "elif") {
        int Depth = 0;
        size_t L = LineEnd(I);
        for (;;) {
          if (L >= T.size())
            return false;
          size_t Next = L + 1;
          while (Next < T.size() && (T[Next] == ' ' || T[Next] == '\t'))
            ++Next;
          if (Next < T.size() && T[Next] == '#') {
            StringRef N = Directive(Next);
            if (N.starts_with("if"))
              ++Depth;
            else if (N == "endif" && Depth-- == 0) {
              I = LineEnd(Next);
              break;
            }
          }
          L = LineEnd(Next);
        }
      } else {
        return false;
      }
    } else if (C == '_' || isalpha((unsigned char)C)) {
      size_t E = I;
      while (E < T.size() && (T[E] == '_' || isalnum((unsigned char)T[E])))
        ++E;
      StringRef Word = T.slice(I, E);
      bool Keyword = false;
      for (const char *const *K = KernelKeywords; *K; ++K)
        Keyword |= Word == *K;
      if (Word == "__launch_bounds__") { // and its parenthesised arguments
        while (E < T.size() && isspace((unsigned char)T[E]))
          ++E;
        if (E == T.size() || T[E] != '(')
          return false;
        for (int Depth = 0; E < T.size(); ++E) {
          Depth += T[E] == '(' ? 1 : T[E] == ')' ? -1 : 0;
          if (Depth == 0)
            break;
        }
        if (E == T.size())
          return false;
        ++E;
        Keyword = true;
      }
      if (!Keyword)
        return false;
      I = E;
    } else {
      return false;
    }
  }
  return true;
}

// A function template whose template head comes before the pragma and whose declaration
// follows it.
bool Lowerer::insideTemplateHead(const Pragma &P) const {
  for (const Candidate &C : Candidates) {
    if (!C.FD || !C.FD->getDescribedFunctionTemplate() ||
        !SM.isBeforeInTranslationUnit(C.Begin, P.Begin))
      continue;
    SourceLocation B = SM.getExpansionLoc(C.FD->getBeginLoc());
    if (SM.isBeforeInTranslationUnit(P.End, B) && onlyBlankBetween(P.End, B))
      return true;
  }
  return false;
}

const Candidate *Lowerer::following(const Pragma &P) const {
  const Candidate *Best = nullptr;
  for (const Candidate &C : Candidates) {
    if (!SM.isBeforeInTranslationUnit(P.End, C.Begin))
      continue;
    if (!Best || SM.isBeforeInTranslationUnit(C.Begin, Best->Begin))
      Best = &C;
  }
  if (Best && onlyBlankBetween(P.End, Best->Begin))
    return Best;
  return nullptr;
}

// A task pragma followed by an atomic or critical construct ('#pragma omp task' /
// '#pragma omp atomic' / 'x += v;'): the task's statement is the construct, from its pragma
// on, so that the construct's lowered text (inner constructs are lowered first) is the body.
const Candidate *Lowerer::constructAfter(size_t I) {
  if (I + 1 >= Pragmas.size())
    return nullptr;
  const Pragma &P = Pragmas[I], &Next = Pragmas[I + 1];
  if (!Next.Valid || !Next.Dir || P.Operator || Next.Operator ||
      (Next.Dir->Kind != DirectiveKind::Atomic && Next.Dir->Kind != DirectiveKind::Critical) ||
      !onlyBlankBetween(P.End, Next.Begin))
    return nullptr;
  const Candidate *S = following(Next);
  if (!S || S->FD)
    return nullptr;
  Candidate C = *S;
  C.Begin = Next.Begin;
  Adopted.push_back(C);
  return &Adopted.back();
}

Decl *Lowerer::topLevel(Decl *D) const {
  while (D && !isa<TranslationUnitDecl>(D->getDeclContext())) {
    DeclContext *DC = D->getDeclContext();
    D = Decl::castFromDeclContext(DC);
  }
  return D;
}

SourceLocation Lowerer::topLevelStart(Decl *D) const { return declStart(topLevel(D)); }

// The start of the line where a declaration begins, with its template head ('template <...>'
// of a function or class template, 'template <>' of a specialization) and the attributes
// written before it ([[nodiscard]], which its source range leaves out).
SourceLocation Lowerer::declStart(Decl *D) const {
  SourceLocation B = SM.getExpansionLoc(D->getBeginLoc());
  auto Earlier = [&](SourceLocation L) {
    if (L.isValid() && SM.getFileID(SM.getExpansionLoc(L)) == SM.getFileID(B) &&
        SM.isBeforeInTranslationUnit(SM.getExpansionLoc(L), B))
      B = SM.getExpansionLoc(L);
  };
  for (const Attr *A : D->attrs())
    if (!A->isImplicit() && !A->isInherited())
      Earlier(A->getLocation());
  if (const TemplateParameterList *TPL = D->getDescribedTemplateParams())
    Earlier(TPL->getTemplateLoc());
  if (auto *DD = dyn_cast<DeclaratorDecl>(D))
    Earlier(DD->getOuterLocStart());
  else if (auto *TD = dyn_cast<TagDecl>(D))
    Earlier(TD->getOuterLocStart());
  return lineStart(B);
}

// Pairs each target with the task pragma after it and finds what each pragma applies to;
// reports the pragmas that apply to nothing they can.
std::vector<Lowerer::Work> Lowerer::associate() {
  std::vector<Work> Works;
  // Whether P is inside the body of one of the file's functions.
  auto InFunctionBody = [&](const Pragma &P) {
    for (FunctionDecl *FD : Bodies) {
      SourceRange R = FD->getBody()->getSourceRange();
      if (SM.isBeforeInTranslationUnit(SM.getExpansionLoc(R.getBegin()), P.Begin) &&
          SM.isBeforeInTranslationUnit(P.Begin, SM.getExpansionLoc(R.getEnd())))
        return true;
    }
    return false;
  };
  for (size_t I = 0; I < Pragmas.size(); ++I) {
    Pragma &P = Pragmas[I];
    if (!P.Valid)
      continue;
    if (P.Dir->Kind == DirectiveKind::Ignored)
      continue; // simd, declare simd, taskyield: the line goes, nothing else
    if (P.Dir->Kind == DirectiveKind::Target) {
      Pragma *Next = I + 1 < Pragmas.size() ? &Pragmas[I + 1] : nullptr;
      if (!Next || Next->Dir == nullptr || Next->Dir->Kind != DirectiveKind::Task ||
          !onlyBlankBetween(P.End, Next->Begin)) {
        report(DiagId::TargetWithoutTask, P.DirLoc, {dirName(P), P.Namespace});
        continue;
      }
      continue;
    }
    Work W{&P};
    bool InHeader = !SM.isWrittenInMainFile(P.Begin);
    if (InHeader && P.Dir->Kind != DirectiveKind::Task) {
      report(DiagId::HeaderDirective, P.DirLoc);
      continue;
    }
    if (I > 0 && Pragmas[I - 1].Dir && Pragmas[I - 1].Dir->Kind == DirectiveKind::Target &&
        onlyBlankBetween(Pragmas[I - 1].End, P.Begin)) {
      if (!Pragmas[I - 1].Valid)
        continue;
      W.Target = &Pragmas[I - 1];
    }
    if (P.Dir->Kind == DirectiveKind::Declare) {
      // Its functions are emitted where it is: at file or namespace scope.
      if (InFunctionBody(P))
        report(DiagId::DeclareReductionInFunction, P.DirLoc, {P.Namespace});
      else
        Works.push_back(W);
      continue;
    }
    if (P.Dir->Standalone) {
      if (!InFunctionBody(P)) {
        report(DiagId::OutsideFunctionBody, P.DirLoc, {dirName(P)});
        continue;
      }
    } else {
      if (P.Operator) {
        // A macro that expands to more than the _Pragma: what follows it is inside the
        // expansion, and no text after it would be the right construct.
        bool Inside = false;
        for (const Candidate &C : Candidates)
          if (!SM.isBeforeInTranslationUnit(C.Begin, P.Begin) &&
              SM.isBeforeInTranslationUnit(C.Begin, P.End))
            Inside = true;
        if (Inside) {
          report(DiagId::PragmaOperatorMacro, P.DirLoc, {P.Namespace + " " + P.DirSpelling});
          continue;
        }
      }
      W.C = following(P);
      bool WantsDecl = P.Dir->Kind == DirectiveKind::Task;
      if (!W.C && WantsDecl)
        W.C = constructAfter(I);
      if (!W.C && WantsDecl && insideTemplateHead(P)) {
        report(DiagId::InsideTemplateHead, P.DirLoc, {dirName(P)});
        continue;
      }
      if (W.C && WantsDecl)
        // A function declared in a block: its calls in that scope are tasks (LocalTasks.cpp).
        if (FunctionDecl *Local = localDeclaration(*W.C)) {
          addLocalTask(P, W.Target, Local);
          continue;
        }
      if (!W.C || (W.C->FD && !WantsDecl)) {
        report(WantsDecl ? DiagId::TaskWithoutFollower : DiagId::StatementWithoutFollower,
               P.DirLoc, {dirName(P)});
        continue;
      }
      const Clause *Implements = W.Target ? W.Target->find(ClauseKind::Implements) : nullptr;
      // In a header: declarations (kernels, and functions defined in a source file).
      if (InHeader && !W.C->FD) {
        report(DiagId::HeaderInlineTask, P.DirLoc);
        continue;
      }
      if (InHeader && W.C->FD->doesThisDeclarationHaveABody()) {
        report(DiagId::HeaderDefinition, P.DirLoc, {W.C->FD->getNameAsString()});
        continue;
      }
      if (Implements && !W.C->FD) {
        report(DiagId::ImplementsInlineTask, Implements->Loc);
        continue;
      }
      if (W.Target && !W.C->FD && !checkInlineTarget(*W.Target))
        continue;
      if (const Clause *In = P.find(ClauseKind::Inprivate); In && W.C->FD) {
        report(DiagId::InprivateFunctionTask, In->Loc);
        continue;
      }
    }
    Works.push_back(W);
  }
  return Works;
}

// Kernel tasks declared in a header (no host definition, no smp device): each file that names
// one makes its tasks with a wrapper of its own, of internal linkage and another name (the
// header stays as it is, for every file and every compiler), which the file's uses call.
bool Lowerer::isHeaderKernel(const Pragma &Task, const Pragma *Target,
                             const FunctionDecl *FD) const {
  const Clause *Device = Target ? Target->find(ClauseKind::Device) : nullptr;
  return !SM.isWrittenInMainFile(Task.Begin) && !FD->getDefinition() && Device &&
         std::find(Device->Words.begin(), Device->Words.end(), "smp") == Device->Words.end();
}

// Names the wrapper of a header kernel and points this file's uses at it: before any construct
// is lowered, so that the statements that inline tasks copy hold the new name.
void Lowerer::nameHeaderKernel(const FunctionDecl *FD) {
  std::string Name = FD->getNameAsString(), Wrapper = "nanort_kernel_" + Name;
  for (unsigned K = 2; WrapperNames.count(Wrapper); ++K)
    Wrapper = "nanort_kernel_" + Name + "_" + std::to_string(K);
  WrapperNames.insert(Wrapper);
  KernelWrappers[FD->getCanonicalDecl()] = Wrapper;
  // Unqualified uses get the wrapper's full name in C++ (a using-declaration brings in the
  // kernel's name, not the wrapper's).
  std::string Qualified = Wrapper, Scope;
  bool CanQualify = CPP;
  for (const DeclContext *DC = FD->getDeclContext(); DC && !DC->isTranslationUnit();
       DC = DC->getParent())
    if (const auto *NS = dyn_cast<NamespaceDecl>(DC)) {
      CanQualify &= !NS->isAnonymousNamespace();
      Scope = NS->getName().str() + "::" + Scope;
    }
  if (CanQualify)
    Qualified = "::" + Scope + Wrapper;
  std::set<unsigned> Done;
  for (const FunctionRef &R : Refs) {
    if (R.Fn != FD->getCanonicalDecl())
      continue;
    SourceLocation L = R.NameLoc;
    if (L.isMacroID() && SM.isMacroArgExpansion(L))
      L = SM.getSpellingLoc(L);
    if (L.isMacroID() || !SM.isWrittenInMainFile(L) || R.Ambiguous) {
      report(DiagId::HeaderKernelUse, SM.getExpansionLoc(R.NameLoc), {Name});
      continue;
    }
    if (Done.insert(SM.getFileOffset(L)).second)
      RW.ReplaceText(L, Name.size(), R.Qualified ? Wrapper : Qualified);
  }
}

// Where the code that makes a function's tasks may go: before the first declaration at file or
// namespace scope that names the function after From (any, when From is invalid), in the
// innermost scope there that encloses the function's own (outside linkage blocks), with the
// function's namespaces reopened. False when the main file does not name it after From.
bool Lowerer::beforeFirstUse(const FunctionDecl *FD, SourceLocation From, Placement &P) {
  const FunctionRef *First = nullptr;
  SourceLocation FirstLoc;
  for (const FunctionRef &R : Refs) {
    SourceLocation L = SM.getExpansionLoc(R.NameLoc);
    if (R.Fn != FD->getCanonicalDecl() || !SM.isWrittenInMainFile(L) ||
        (From.isValid() && !SM.isBeforeInTranslationUnit(From, L)))
      continue;
    if (!First || SM.isBeforeInTranslationUnit(L, FirstLoc)) {
      First = &R;
      FirstLoc = L;
    }
  }
  if (!First)
    return false;
  const DeclContext *Home = FD->getDeclContext()->getRedeclContext();
  Decl *Before = nullptr;
  for (Decl *D : First->Around) {
    const DeclContext *DC = D->getLexicalDeclContext();
    if (!(isa<TranslationUnitDecl>(DC) || isa<NamespaceDecl>(DC)) || !DC->Encloses(Home) ||
        !SM.isWrittenInMainFile(declStart(D)))
      break;
    Before = D;
    if (!isa<NamespaceDecl>(D))
      break;
  }
  if (!Before)
    return false;
  P.At = declStart(Before);
  P.Top = declStart(First->Around.front());
  reopen(FD, Before->getLexicalDeclContext(), P);
  return true;
}

// The namespaces of FD that Outer does not enclose, opened and closed.
void Lowerer::reopen(const FunctionDecl *FD, const DeclContext *Outer, Placement &P) const {
  P.Open.clear();
  P.Close.clear();
  for (const DeclContext *DC = FD->getDeclContext()->getRedeclContext();
       DC && !DC->Equals(Outer); DC = DC->getParent())
    if (const auto *NS = dyn_cast<NamespaceDecl>(DC)) {
      P.Open = std::string(NS->isInline() ? "inline " : "") + "namespace " +
               (NS->isAnonymousNamespace() ? "" : NS->getName().str() + " ") + "{ " + P.Open;
      P.Close += "}";
    }
  if (!P.Close.empty())
    P.Close += "\n";
}

} // namespace lowering
} // namespace nanort
