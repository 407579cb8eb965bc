//===- Lowering.cpp - From recorded pragmas to rewritten source -------------===//
//
// The lowered code is C that a C++ compiler also accepts, except where C++ needs its own forms
// (placement new of the argument block; inline tasks and function templates as local classes
// with references as aliases of the captured variables). Generated names start with
// 'nanort_'. Every user expression is emitted on a line
// of its own after '#line', padded to its column, so that errors inside clause arguments point
// at the user's line and column; after each generated block a '#line' puts the following user
// text back at its own line and column.
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"
#include "VariablyModified.h"

#include "clang/AST/ASTContext.h"
#include "clang/AST/Attr.h"
#include "clang/AST/DeclCXX.h"
#include "clang/AST/DeclTemplate.h"
#include "clang/AST/Expr.h"
#include "clang/AST/ExprCXX.h"
#include "clang/AST/RecursiveASTVisitor.h"
#include "clang/AST/Stmt.h"
#include "clang/AST/StmtCXX.h"
#include "clang/Basic/SourceManager.h"
#include "clang/Lex/Lexer.h"
#include "clang/Rewrite/Core/Rewriter.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

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

namespace {

// Text as C string literals, one line each ("...\n"), each on its own line of the generated
// code; '?' escaped against trigraphs, carriage returns and control characters dropped.
std::string quotedLines(StringRef Text) {
  std::string Lit;
  while (!Text.empty()) {
    auto [Line, Rest] = Text.split('\n');
    Lit += "\n  \"";
    for (char Ch : Line) {
      if (Ch == '\\' || Ch == '"' || Ch == '?')
        Lit += '\\';
      if (Ch == '\t' || (unsigned char)Ch >= 0x20)
        Lit += Ch;
    }
    Lit += "\\n\"";
    Text = Rest;
  }
  return Lit;
}

// ---------------------------------------------------------------------------------------------
// Where pragmas can apply: function declarations and statement-level statements.

struct Candidate {
  SourceLocation Begin, End; // file locations: first and last token
  FunctionDecl *FD = nullptr;
  Stmt *S = nullptr;
  FunctionDecl *Enclosing = nullptr; // for statements: the function around them
  bool InLambda = false;
};

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
    } else if (auto *F = dyn_cast<ForStmt>(S)) {
      addStmt(F->getBody());
    } else if (auto *W = dyn_cast<WhileStmt>(S)) {
      addStmt(W->getBody());
    } else if (auto *D = dyn_cast<DoStmt>(S)) {
      addStmt(D->getBody());
    } else if (auto *I = dyn_cast<IfStmt>(S)) {
      addStmt(I->getThen());
      addStmt(I->getElse());
    } else if (auto *R = dyn_cast<CXXForRangeStmt>(S)) {
      addStmt(R->getBody());
    } else if (auto *SC = dyn_cast<SwitchCase>(S)) {
      addStmt(SC->getSubStmt());
    } else if (auto *L = dyn_cast<LabelStmt>(S)) {
      addStmt(L->getSubStmt());
    }
    return true;
  }

private:
  SourceManager &SM;
  std::vector<FunctionDecl *> Fns;
  int LambdaDepth = 0;

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

// Each use of a function by its name (a call, its address), with the declarations around it,
// the outermost first.
struct FunctionRef {
  const FunctionDecl *Fn; // canonical
  SourceLocation NameLoc;
  std::vector<Decl *> Around;
  bool Qualified = false; // written with a scope (ns::f)
  bool Ambiguous = false; // an overloaded name in a template, resolved when instantiated
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

// ---------------------------------------------------------------------------------------------
// Generated text.

class Code {
public:
  Code(const SourceManager &SM) : SM(SM) {}
  Code &operator<<(const std::string &T) {
    S += T;
    return *this;
  }
  Code &operator<<(const char *T) {
    S += T;
    return *this;
  }
  Code &operator<<(unsigned N) {
    S += std::to_string(N);
    return *this;
  }
  // A user expression, each token at its own line and column.
  Code &user(const Toks &T) {
    if (T.empty())
      return *this;
    PresumedLoc First = SM.getPresumedLoc(T.front().Loc);
    if (First.isInvalid()) {
      S += joinTokens(T);
      return *this;
    }
    S += "\n#line " + std::to_string(First.getLine()) + " \"" + escape(First.getFilename()) +
         "\"\n";
    unsigned Line = First.getLine(), Col = 1;
    for (size_t I = 0; I < T.size(); ++I) {
      const Tok &K = T[I];
      PresumedLoc P = SM.getPresumedLoc(K.Loc);
      if (P.isValid() && P.getLine() == Line && P.getColumn() >= Col) {
        S.append(P.getColumn() - Col, ' ');
        Col = P.getColumn();
      } else {
        S += ' ';
        ++Col;
      }
      std::string Text = K.Text;
      if (Subst && K.Kind == tok::identifier &&
          (I == 0 || (T[I - 1].Kind != tok::period && T[I - 1].Kind != tok::arrow))) {
        auto It = Subst->find(K.Text);
        if (It != Subst->end())
          Text = It->second;
      }
      S += Text;
      Col += Text.size();
    }
    S += "\n";
    return *this;
  }
  // C: inside an outlined inline task, how generated code spells the variables that the task
  // shares ((*nanort_a->x)); null elsewhere.
  const std::map<std::string, std::string> *Subst = nullptr;
  // Makes the text that follows appear at Loc's line and column.
  Code &at(SourceLocation Loc) {
    S += marker(SM, Loc);
    return *this;
  }
  std::string str() const { return S; }

  static std::string escape(StringRef In) { return escapeStringLiteral(In); }
  static std::string marker(const SourceManager &SM, SourceLocation Loc) {
    PresumedLoc P = SM.getPresumedLoc(Loc);
    if (P.isInvalid())
      return "\n";
    return "\n#line " + std::to_string(P.getLine()) + " \"" + escape(P.getFilename()) + "\"\n" +
           std::string(P.getColumn() - 1, ' ');
  }

private:
  const SourceManager &SM;
  std::string S;
};

const char *modeName(AccessMode M) {
  switch (M) {
  case AccessMode::In:
    return "NANORT_IN";
  case AccessMode::Out:
    return "NANORT_OUT";
  case AccessMode::Inout:
    return "NANORT_INOUT";
  case AccessMode::Concurrent:
    return "NANORT_CONCURRENT";
  case AccessMode::Commutative:
    return "NANORT_COMMUTATIVE";
  }
  return "NANORT_INOUT";
}

// Text that a printf format prints as it is.
std::string printfText(StringRef Text) {
  std::string S;
  for (char Ch : Text) {
    if (Ch == '%')
      S += '%';
    S += Ch;
  }
  return S;
}

// A C string literal ('?' escaped against trigraphs).
std::string cLiteral(StringRef Text) {
  std::string S = "\"";
  for (char Ch : Text) {
    if (Ch == '\n') {
      S += "\\n";
      continue;
    }
    if (Ch == '\\' || Ch == '"' || Ch == '?')
      S += '\\';
    S += Ch;
  }
  return S + "\"";
}

// Where a dependence item is, for the checks of its sections when the task is created:
// "nanort: f.c:12: task 'scale': " (or "... taskwait "), followed by the item as written.
struct ItemChecks {
  std::string Where;
  const char *Task; // the task being created (dropped before the program ends), or "0"
  bool *Used; // set when a check is emitted: the prelude then defines nanort_section_error
  DiagSink *Diags; // a constant start before the base is an error at compile time
  std::function<BaseKind(const DepItem &)> Kind;
};

// One dependence item, inside a block of its own. Each user expression appears once (so that
// an error in it is reported once): declares nanort_p, the item's first byte, and either
// nanort_size (contiguous items) or nanort_rows, nanort_row_bytes, nanort_stride (2-D).
// Lengths and sizes are computed as signed numbers and checked: a negative length, size or
// start ends the program with a message that names the item as the user wrote it.
void emitItem(Code &C, const DepItem &D, bool CPP, const ItemChecks &Check) {
  const char *Auto = CPP ? "auto " : "__extension__ __auto_type ";
  auto Base = [&] { C << "("; C.user(D.Base); C << ")"; };
  // What: a printf format, its arguments in Args.
  auto Fail = [&](const std::string &What, const std::string &Args) {
    *Check.Used = true;
    C << "nanort_section_error(" << Check.Task << ", "
      << cLiteral(printfText(Check.Where + D.Written + ": ") + What + "\n") << ", " << Args
      << ");\n";
  };
  // Checks that cannot fail (constants) are left out; a constant start is checked here.
  auto Known = [](const std::optional<long long> &V) { return V && *V >= 0; };
  for (size_t I = 0; I < D.Sections.size(); ++I) {
    const Section &S = D.Sections[I];
    std::string K = std::to_string(I);
    C << Auto << "nanort_lo" << K << " = ("; C.user(S.Lower); C << ");\n";
    if (S.Inclusive || !S.ConstLower)
      C << "long long nanort_start" << K << " = (long long)nanort_lo" << K << ";\n";
    C << "long long nanort_len" << K << " = (long long)("; C.user(S.Second); C << ")";
    if (S.Inclusive)
      C << " - nanort_start" << K << " + 1";
    C << ";\n";
  }
  for (size_t I = 0; I < D.Sections.size(); ++I) {
    if (Known(D.Sections[I].ConstLength))
      continue;
    std::string K = std::to_string(I);
    C << "if (nanort_len" << K << " < 0) ";
    Fail(sectionLengthMessage(I, D.Sections.size(), "%lld"), "nanort_len" + K);
  }
  BaseKind Kind = D.Sections.empty() ? BaseKind::Unknown : Check.Kind(D);
  std::string BaseText = printfText(D.BaseText);
  for (size_t I = 0; I < D.Sections.size(); ++I) {
    const Section &S = D.Sections[I];
    if (S.ConstLower && *S.ConstLower < 0) {
      // The hint's length: a number, or the user's own expression.
      std::string L;
      if (S.ConstLength)
        L = std::to_string(*S.ConstLength);
      else if (!S.Inclusive)
        L = spellTokens(S.Second);
      else
        L = (S.Second.size() == 1 ? spellTokens(S.Second) : "(" + spellTokens(S.Second) + ")") +
            " + " + std::to_string(1 - *S.ConstLower);
      std::string Offset = std::to_string(0ULL - (unsigned long long)*S.ConstLower);
      Check.Diags->error(S.Lower.front().Loc,
                         D.Written + ": " +
                             sectionStartMessage(I, D.Sections.size(), Kind, D.BaseText,
                                                 std::to_string(*S.ConstLower), Offset, L));
    }
    if (S.ConstLower) // not negative, or an error above
      continue;
    std::string K = std::to_string(I);
    C << "if (nanort_start" << K << " < 0) ";
    if (I == 0 && D.Sections.size() == 1 && Kind != BaseKind::Array && Kind != BaseKind::Other)
      Fail(sectionStartMessage(I, 1, Kind, BaseText, "%lld", "%llu", "%lld"),
           "nanort_start0, 0ULL - (unsigned long long)nanort_start0, nanort_len0");
    else
      Fail(sectionStartMessage(I, D.Sections.size(), Kind, BaseText, "%lld", "", ""),
           "nanort_start" + K);
  }
  if (!D.Shape.empty() && !D.Sections.empty()) {
    // ([n][m]x)[a;k][b;l]: x's elements indexed by the shape, without a cast to a pointer to
    // rows (their length may be known at run time only, and C++ has no such types). Row K of
    // the shape holds nanort_elemsK elements, the product of the dimensions after K.
    C << Auto << "nanort_x = "; Base(); C << ";\n";
    for (size_t I = 0; I < D.Shape.size(); ++I) {
      std::string K = std::to_string(I);
      C << "long long nanort_dim" << K << " = (long long)("; C.user(D.Shape[I]); C << ");\n";
      if (I < D.ConstShape.size() && Known(D.ConstShape[I]))
        continue;
      C << "if (nanort_dim" << K << " < 0) ";
      Fail(shapeSizeMessage(I, D.Shape.size(), "%lld"), "nanort_dim" + K);
    }
    for (size_t I = 0; I < D.Sections.size(); ++I) {
      C << "size_t nanort_elems" << (unsigned)I << " = 1";
      for (size_t J = I + 1; J < D.Shape.size(); ++J)
        C << " * (size_t)nanort_dim" << (unsigned)J;
      C << ";\n";
    }
    C << Auto << "nanort_p = nanort_x + nanort_lo0 * (long long)nanort_elems0";
    if (D.Sections.size() == 2)
      C << " + nanort_lo1 * (long long)nanort_elems1";
    C << ";\n";
    if (D.Sections.size() == 1)
      C << "size_t nanort_size = (size_t)nanort_len0 * nanort_elems0 * sizeof(*nanort_p);\n";
    else
      C << "size_t nanort_rows = (size_t)nanort_len0;\n"
        << "size_t nanort_row_bytes = (size_t)nanort_len1 * nanort_elems1 * sizeof(*nanort_p);\n"
        << "size_t nanort_stride = nanort_elems0 * sizeof(*nanort_p);\n";
  } else if (!D.Shape.empty()) {
    C << Auto << "nanort_p = "; Base(); C << ";\n";
    for (size_t I = 0; I < D.Shape.size(); ++I) {
      std::string K = std::to_string(I);
      C << "long long nanort_dim" << K << " = (long long)("; C.user(D.Shape[I]); C << ");\n";
      if (I < D.ConstShape.size() && Known(D.ConstShape[I]))
        continue;
      C << "if (nanort_dim" << K << " < 0) ";
      Fail(shapeSizeMessage(I, D.Shape.size(), "%lld"), "nanort_dim" + K);
    }
    C << "size_t nanort_size = ";
    for (size_t I = 0; I < D.Shape.size(); ++I)
      C << "(size_t)nanort_dim" << (unsigned)I << " * ";
    C << "sizeof(*nanort_p);\n";
  } else if (D.Sections.empty()) {
    C << Auto << "nanort_p = &"; Base(); C << ";\nsize_t nanort_size = sizeof(*nanort_p);\n";
  } else if (D.Sections.size() == 1) {
    C << Auto << "nanort_p = &"; Base(); C << "[nanort_lo0];\n"
      << "size_t nanort_size = (size_t)nanort_len0 * sizeof(*nanort_p);\n";
  } else {
    C << Auto << "nanort_row = &"; Base(); C << "[nanort_lo0];\n"
      << Auto << "nanort_p = &(*nanort_row)[nanort_lo1];\n"
      << "size_t nanort_rows = (size_t)nanort_len0;\n"
      << "size_t nanort_row_bytes = (size_t)nanort_len1 * sizeof(*nanort_p);\n"
      << "size_t nanort_stride = sizeof(*nanort_row);\n";
  }
}

// nanort_task_access / nanort_task_copy of one item, 1-D or 2-D.
void emitAccess(Code &C, const DepItem &D, const char *Fn, const char *Mode, bool CPP,
                const ItemChecks &Check) {
  C << "{ ";
  emitItem(C, D, CPP, Check);
  if (D.Sections.size() == 2)
    C << "nanort_check(" << Fn << "_2d(nanort_t, (const void *)nanort_p, nanort_row_bytes, "
      << "nanort_rows, nanort_stride, " << Mode << "), \"" << Fn << "\"); }\n";
  else
    C << "nanort_check(" << Fn << "(nanort_t, (const void *)nanort_p, nanort_size, " << Mode
      << "), \"" << Fn << "\"); }\n";
}

// ---------------------------------------------------------------------------------------------
// The lowering of one file.

enum class Sharing { Shared, Firstprivate, Private };

struct Capture {
  VarDecl *Var;
  Sharing How;
  std::vector<SourceLocation> Uses; // DeclRefExpr locations inside the task body
  std::optional<VMType> VM;         // a variably modified type (VariablyModified.h)
  // C: the body names the variable through a pointer, (*nanort_s_x): a variable-length
  // array, or a shared variable of a variably modified type.
  bool viewed() const { return VM && (How == Sharing::Shared || VM->isArray()); }
};

class Lowerer {
public:
  Lowerer(ASTContext &Ctx, std::vector<Pragma> &Pragmas, DiagSink &Diags,
          const LoweringOptions &Options)
      : Ctx(Ctx), SM(Ctx.getSourceManager()), LO(Ctx.getLangOpts()), Pragmas(Pragmas),
        Diags(Diags), Options(Options), RW(SM, LO), Policy(Ctx.getPrintingPolicy()),
        CPP(LO.CPlusPlus) {
    Policy.SuppressUnwrittenScope = true;
  }

  bool run(bool DefineKernelKeywords, std::string &Out,
           std::map<std::string, std::string> &Headers);

private:
  ASTContext &Ctx;
  SourceManager &SM;
  const LangOptions &LO;
  std::vector<Pragma> &Pragmas;
  DiagSink &Diags;
  const LoweringOptions &Options;
  Rewriter RW;
  PrintingPolicy Policy;
  bool CPP;
  std::vector<Candidate> Candidates;
  std::vector<FunctionDecl *> Bodies;
  std::vector<VarDecl *> Vars;
  unsigned Counter = 0;
  std::set<std::string> CriticalNames;
  std::map<std::string, std::string> FileModules; // file(...) path -> module variable
  std::string FileModuleDefs;                     // their definitions, in the prelude
  bool UsesCuda = false;  // a device(cuda) task: the prelude declares nanort_cuda_program
  bool UsesSectionChecks = false; // the prelude defines nanort_section_error
  std::map<unsigned, std::string> SourceKernels;  // single-source kernels, by offset
  llvm::SmallPtrSet<const FunctionDecl *, 8> TaskFunctions;

  void error(SourceLocation L, const std::string &M) { Diags.error(L, M); }
  std::string dirName(const Pragma &P) const {
    return "'#pragma " + P.Namespace + " " + P.DirSpelling + "'";
  }
  std::string text(SourceLocation B, SourceLocation E) const {
    return Lexer::getSourceText(CharSourceRange::getTokenRange(B, E), SM, LO).str();
  }
  std::string decl(QualType T, StringRef Name) const {
    std::string S;
    llvm::raw_string_ostream OS(S);
    T.print(OS, Policy, Name);
    return OS.str();
  }
  static std::vector<const VarDecl *> params(const FunctionDecl *FD) {
    return std::vector<const VarDecl *>(FD->param_begin(), FD->param_end());
  }
  // Whether a section's base is an array or a pointer: for a base that is one name, of a
  // variable in Scope or at file scope.
  BaseKind baseKind(const DepItem &D, ArrayRef<const VarDecl *> Scope) const {
    if (D.Base.size() != 1 || D.Base[0].Kind != tok::identifier)
      return BaseKind::Unknown;
    const VarDecl *V = nullptr;
    for (const VarDecl *S : Scope)
      if (S->getName() == D.Base[0].Text)
        V = S;
    if (!V)
      for (NamedDecl *N : Ctx.getTranslationUnitDecl()->lookup(&Ctx.Idents.get(D.Base[0].Text)))
        if (auto *G = dyn_cast<VarDecl>(N))
          V = G;
    if (!V || V->getType()->isDependentType())
      return BaseKind::Unknown;
    QualType T = V->getType().getNonReferenceType();
    if (T->isArrayType())
      return BaseKind::Array;
    return T->isPointerType() ? BaseKind::Pointer : BaseKind::Other;
  }
  StringRef fileName(SourceLocation L) const {
    PresumedLoc P = SM.getPresumedLoc(L);
    return P.isValid() ? P.getFilename() : "";
  }
  std::string fileLiteral(SourceLocation L) const {
    return "\"" + Code::escape(fileName(L)) + "\"";
  }
  unsigned lineOf(SourceLocation L) const {
    PresumedLoc P = SM.getPresumedLoc(L);
    return P.isValid() ? P.getLine() : 0;
  }
  SourceLocation lineStart(SourceLocation L) const {
    std::pair<FileID, unsigned> D = SM.getDecomposedLoc(L);
    unsigned Line = SM.getLineNumber(D.first, D.second);
    return SM.translateLineCol(D.first, Line, 1);
  }
  SourceLocation afterToken(SourceLocation L) const {
    return Lexer::getLocForEndOfToken(L, 0, SM, LO);
  }

  bool onlyBlankBetween(SourceLocation A, SourceLocation B) const;
  const Candidate *following(const Pragma &P) const;
  bool insideTemplateHead(const Pragma &P) const;
  Decl *topLevel(Decl *D) const;
  SourceLocation topLevelStart(Decl *D) const;
  SourceLocation declStart(Decl *D) const;
  bool checkLocalType(QualType T, SourceLocation Use, const std::string &Var);

  void lowerTaskwait(const Pragma &P);

  // Where a function runs: its devices in the order written (smp when there is no target),
  // and for its kernel devices the kernel's name and file.
  struct Devices {
    std::vector<std::string> List;
    std::string KernelName;
    const Clause *File = nullptr;
    bool OpenCL = false, Cuda = false, Smp = false;
    bool kernel() const { return OpenCL || Cuda; }
  };
  bool checkDevices(const Pragma &Task, const Pragma *Target, FunctionDecl *FD, bool Version,
                    Devices &Dev);
  std::vector<bool> bufferParameters(const Pragma &Task, const Pragma *Target,
                                     const FunctionDecl *FD) const;
  bool checkCudaParameters(const Pragma &Task, FunctionDecl *FD, const std::vector<bool> &Buffer);
  // The argument block of a function task, which every implementation of it reads.
  struct ArgBlock {
    const FunctionDecl *FD;           // the task's function: the members' types
    std::string Type;                 // nanort_args_N (C: struct nanort_args_N)
    std::vector<std::string> Members; // one per parameter
    std::vector<bool> Buffer;         // the parameter is named in a dependence or copy clause
  };
  bool emitImplementations(Code &C, const ArgBlock &Args, const Devices &Dev, bool SingleSource,
                           const std::string &Suffix, const std::string &SmpCall,
                           std::vector<std::string> &Impls);
  SourceLocation addSourceKernel(const Pragma &Task);
  std::vector<FunctionRef> Refs; // the uses of function tasks by their names
  struct Placement {
    SourceLocation At;       // in a scope that encloses the function's
    SourceLocation Top;      // at file scope, not after At: for the prelude
    std::string Open, Close; // the function's namespaces that At is outside of, reopened
  };
  bool beforeFirstUse(const FunctionDecl *FD, SourceLocation From, Placement &P);
  bool isHeaderKernel(const Pragma &Task, const Pragma *Target, const FunctionDecl *FD) const;
  void nameHeaderKernel(const FunctionDecl *FD);
  std::map<const FunctionDecl *, std::string> KernelWrappers; // by canonical declaration
  std::set<std::string> WrapperNames;
  void reopen(const FunctionDecl *FD, const DeclContext *Outer, Placement &P) const;
  void lowerFunctionTask(const Pragma &Task, const Pragma *Target, FunctionDecl *FD,
                         SourceLocation &PreludeAt);

  // Versions (implements): functions that are other implementations of a function task.
  struct FunctionTask {
    const Pragma *Task, *Target;
    FunctionDecl *FD;
  };
  std::map<const FunctionDecl *, FunctionTask> FunctionTasks; // by canonical declaration
  struct Version {
    const Pragma *Task, *Target;
    FunctionDecl *FD;
    Devices Dev;
  };
  // The versions of each function task, in the order of their pragmas; and the reverse.
  std::map<const FunctionDecl *, std::vector<Version>> VersionsOf;
  std::map<const FunctionDecl *, const FunctionDecl *> TaskOfVersion;
  bool sameTypesIgnoringAddressSpaces(QualType A, QualType B) const;
  std::string byPosition(const Toks &T, const FunctionDecl *FD) const;
  std::vector<std::string> dataClauses(const Pragma &Task, const Pragma *Target,
                                       const FunctionDecl *FD) const;
  std::string launchClause(const Pragma *Target, ClauseKind Kind, const FunctionDecl *FD) const;
  void resolveVersion(const Pragma &Task, const Pragma &Target, FunctionDecl *G);
  void checkVersionLaunches();
  void checkVersionUses();
  bool placeAfterVersions(const FunctionDecl *Place, const std::vector<Version> &Versions,
                          SourceLocation &At);
  std::string versionCall(const FunctionDecl *G) const;
  struct InlinePlan {
    bool OK = false;
    SourceLocation Begin, End; // the statement, with its ';'
    std::vector<Capture> Caps;
    QualType ThisType;         // C++ member functions: the task uses 'this'
    bool Nested = false;       // inside another inline task (whose body names it nanort_self)
    std::map<std::string, std::string> Views; // C: shared captures -> (*nanort_a->x)
  };
  std::map<const Pragma *, InlinePlan> Plans;
  // The innermost planned inline task whose statement holds L (other than Self).
  const InlinePlan *enclosingPlan(SourceLocation L, const InlinePlan *Self) const {
    const InlinePlan *Best = nullptr;
    for (const auto &E : Plans) {
      const InlinePlan &P = E.second;
      if (&P == Self || !P.OK || !SM.isBeforeInTranslationUnit(P.Begin, L) ||
          !SM.isBeforeInTranslationUnit(L, P.End))
        continue;
      if (!Best || SM.isBeforeInTranslationUnit(Best->Begin, P.Begin))
        Best = &P;
    }
    return Best;
  }
  // The statement of an inline task, with its ';'.
  void statementRange(const Candidate &Cand, SourceLocation &Begin, SourceLocation &End) const;
  std::set<unsigned> ThisEdits; // locations already rewritten to nanort_self
  void planInlineTask(const Pragma &Task, const Candidate &C, InlinePlan &Plan);
  void lowerInlineTask(const Pragma &Task, const Candidate &C, const InlinePlan &Plan,
                       SourceLocation &PreludeAt);
  std::string enclosingPrototype(FunctionDecl *Fn, Stmt *Body, SourceLocation Top);
  llvm::SmallPtrSet<const FunctionDecl *, 4> Prototyped;
  void lowerCritical(const Pragma &P, const Candidate &C);
  void lowerAtomic(const Pragma &P, const Candidate &C);
  // Who: the task in messages, "task 'f'" or "inline task".
  // Scope: the variables that dependences may name (parameters, captures), whose types
  // tell messages whether a base is an array or a pointer.
  void emitTaskClauses(Code &C, const Pragma &Task, const std::string &Who,
                       ArrayRef<const VarDecl *> Scope, const Pragma *Target,
                       const Pragma *LaunchFrom = nullptr,
                       const std::map<std::string, std::string> *Rename = nullptr);
  void emitLaunchClause(Code &C, const Clause &Cl);
  bool fileModule(const Clause &File, std::string &Module);
  std::string prelude() const;
};

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

// Types declared inside a function cannot be named by the code generated at file scope.
bool Lowerer::checkLocalType(QualType T, SourceLocation Use, const std::string &Var) {
  for (int Guard = 0; Guard < 16 && !T.isNull(); ++Guard) {
    if (const auto *TT = T->getAs<TypedefType>())
      if (TT->getDecl()->getDeclContext()->isFunctionOrMethod()) {
        error(Use, "variable '" + Var + "' has a type declared inside the function; inline "
                   "tasks cannot capture it yet");
        return false;
      }
    if (const TagDecl *TD = T->getAsTagDecl())
      if (TD->getDeclContext()->isFunctionOrMethod()) {
        error(Use, "variable '" + Var + "' has a type declared inside the function; inline "
                   "tasks cannot capture it yet");
        return false;
      }
    if (T->isPointerType() || T->isReferenceType())
      T = T->getPointeeType();
    else if (const ArrayType *AT = Ctx.getAsArrayType(T))
      T = AT->getElementType();
    else
      break;
  }
  return true;
}

std::string Lowerer::prelude() const {
  std::string S = "\n#include <nanort/nanort.h>\n#include <stdio.h>\n#include <stdlib.h>\n";
  // A failing call: in C the program ends with exit status 1 (statistics and trace written,
  // nanort_exit); in C++ it throws (a failed taskwait rethrows the task's own exception).
  // 'unused': a file may have a taskwait and no task (clang warns of unused static inline
  // functions in the main file).
  if (CPP)
    S += "#include <new>\n#include <type_traits>\n#include <nanort/error.hpp>\n"
         "static inline __attribute__((unused)) void nanort_check(nanort_status nanort_s, "
         "const char *nanort_what) {\n"
         "  (void)nanort_what;\n  nanort::detail::raise(nanort_s);\n}\n";
  else
    S += "static inline __attribute__((unused)) void nanort_check(nanort_status nanort_s, "
         "const char *nanort_what) {\n"
         "  if (nanort_s != NANORT_SUCCESS) {\n"
         "    fprintf(stderr, \"nanort: %s: %s\\n\", nanort_what, nanort_last_error());\n"
         "    nanort_exit(1);\n  }\n}\n";
  S += 
       "static inline __attribute__((unused)) nanort_task *nanort_created(nanort_task "
       "*nanort_t) {\n"
       "  if (!nanort_t) nanort_check(NANORT_ERROR_INTERNAL, \"nanort_task_create\");\n"
       "  return nanort_t;\n}\n";
  if (!CriticalNames.empty()) {
    S += "static inline void nanort_critical_enter(int *nanort_l) {\n"
         "  while (__atomic_exchange_n(nanort_l, 1, __ATOMIC_ACQUIRE))\n"
         "    while (__atomic_load_n(nanort_l, __ATOMIC_RELAXED)) {}\n}\n"
         "static inline void nanort_critical_leave(int *nanort_l) {\n"
         "  __atomic_store_n(nanort_l, 0, __ATOMIC_RELEASE);\n}\n";
    for (const std::string &N : CriticalNames)
      S += std::string(CPP ? "extern \"C\" { " : "") + "__attribute__((weak)) int " + N +
           " = 0;" + (CPP ? " }" : "") + "\n";
  }
  if (UsesSectionChecks)
    // A dependence whose section or shape has a negative length or size, or starts before its
    // base, found when the task is created: the message names the pragma's file and line, the
    // task and the item as written; the task, not submitted, is dropped.
    S += "#include <stdarg.h>\n"
         "static inline __attribute__((noreturn, format(printf, 2, 3))) void "
         "nanort_section_error(nanort_task *nanort_t, const char *nanort_format, ...) {\n"
         "  va_list nanort_args;\n"
         "  va_start(nanort_args, nanort_format);\n"
         "  vfprintf(stderr, nanort_format, nanort_args);\n"
         "  va_end(nanort_args);\n"
         "  if (nanort_t) nanort_task_discard(nanort_t);\n"
         "  exit(1);\n}\n";
  S += FileModuleDefs;
  if (UsesCuda) {
    // The program's CUDA fatbin, which nanocc / nanocxx / nanort_annotate embed from the .cu
    // files they are given. Weak: a program linked without it fails when it creates a CUDA
    // task, with a message that says what is missing.
    S += std::string(CPP ? "extern \"C\" " : "extern ") +
         "const nanort_kernel_module nanort_cuda_program __attribute__((weak));\n"
         "static inline void nanort_need_cuda_program(const char *nanort_task, const char "
         "*nanort_file, int nanort_line) {\n"
         "  if ((const void *)&nanort_cuda_program == (const void *)0) {\n"
         "    fprintf(stderr, \"nanort: %s:%d: task '%s' has a device(cuda) version, but the "
         "program holds no CUDA kernels: give the .cu files to nanocc or nanocxx (or to "
         "nanort_annotate's CUDA argument)\\n\", nanort_file, nanort_line, nanort_task);\n"
         "    exit(1);\n  }\n}\n";
  }
  if (!SourceKernels.empty()) {
    // The kernels defined in this file, in their order: one OpenCL program.
    S += "static const nanort_kernel_module nanort_source_module = {NANORT_ABI_VERSION, "
         "NANORT_MODULE_OPENCL_SOURCE,";
    for (const auto &K : SourceKernels)
      S += quotedLines(K.second);
    S += ",\n  0, 0, \"" + Code::escape(SM.getFileEntryRefForID(SM.getMainFileID())
                                             ? SM.getFileEntryRefForID(SM.getMainFileID())
                                                   ->getName()
                                             : StringRef()) +
         "\"};\n";
  }
  return S;
}

// Label, priority, if, final, dependences, and the target's clauses. A task whose own
// devices have no kernel takes its index space (ndrange, shmem) from the target of a version
// (LaunchFrom), whose parameter names Rename turns into the task's.
void Lowerer::emitTaskClauses(Code &C, const Pragma &Task, const std::string &Who,
                              ArrayRef<const VarDecl *> Scope, const Pragma *Target,
                              const Pragma *LaunchFrom,
                              const std::map<std::string, std::string> *Rename) {
  ItemChecks Check{"nanort: " + std::string(fileName(Task.Begin)) + ":" +
                       std::to_string(lineOf(Task.Begin)) + ": " + Who + ": ",
                   "nanort_t", &UsesSectionChecks, &Diags,
                   [&](const DepItem &D) { return baseKind(D, Scope); }};
  for (const Clause &Cl : Task.Clauses) {
    switch (Cl.Info->Kind) {
    case ClauseKind::In:
    case ClauseKind::Out:
    case ClauseKind::Inout:
    case ClauseKind::Concurrent:
    case ClauseKind::Commutative:
    case ClauseKind::Depend:
      for (const DepItem &D : Cl.Deps)
        emitAccess(C, D, "nanort_task_access", modeName(D.Mode), CPP, Check);
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
    default:
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
      !(Target && (Target->find(ClauseKind::CopyDeps) || Target->find(ClauseKind::NoCopyDeps))))
    C << "nanort_task_set_copy_deps(nanort_t, 0);\n";
  if (!Target)
    return;
  for (const Clause &Cl : Target->Clauses) {
    switch (Cl.Info->Kind) {
    case ClauseKind::CopyIn:
    case ClauseKind::CopyOut:
    case ClauseKind::CopyInout:
      for (const DepItem &D : Cl.Deps)
        emitAccess(C, D, "nanort_task_copy", modeName(D.Mode), CPP, Check);
      break;
    case ClauseKind::NoCopyDeps:
      C << "nanort_task_set_copy_deps(nanort_t, 0);\n";
      break;
    case ClauseKind::CopyDeps:
      C << "nanort_task_set_copy_deps(nanort_t, 1);\n";
      break;
    default:
      if (!LaunchFrom)
        emitLaunchClause(C, Cl);
      break;
    }
  }
}

// ndrange and shmem: the index space of the task's kernels.
void Lowerer::emitLaunchClause(Code &C, const Clause &Cl) {
  switch (Cl.Info->Kind) {
  case ClauseKind::Ndrange: {
    unsigned Dims = std::stoi(Cl.Args[0][0].Text);
    bool Local = Cl.Args.size() == 1 + 2 * Dims;
    auto Sizes = [&](const char *Name, unsigned First) {  // Dims arguments from First on
      C << "size_t " << Name << "[] = {";
      for (unsigned I = 0; I < Dims; ++I) {
        C << (I ? ", " : "") << "(size_t)("; C.user(Cl.Args[First + I]); C << ")";
      }
      C << "};\n";
    };
    C << "{ ";
    Sizes("nanort_global", 1);
    if (Local)
      Sizes("nanort_local", 1 + Dims);
    C << "nanort_check(nanort_task_set_ndrange(nanort_t, " << Dims << ", nanort_global, "
      << (Local ? "nanort_local" : "0") << "), \"ndrange\"); }\n";
    break;
  }
  case ClauseKind::Shmem:
    C << "nanort_task_set_shmem(nanort_t, (size_t)("; C.user(Cl.Args[0]); C << "));\n";
    break;
  default:
    break;
  }
}

// The OpenCL module of a file(...) clause: the file's text, embedded in this translation unit
// (one module per file, shared by the kernels that name it). A relative name is resolved from
// the folder of the file that holds the pragma.
bool Lowerer::fileModule(const Clause &File, std::string &Module) {
  SourceLocation Loc = File.WordLocs[0];
  std::string Name = File.Words[0];
  SmallString<256> Path(Name);
  if (!llvm::sys::path::is_absolute(Path)) {
    StringRef Here = SM.getFilename(SM.getExpansionLoc(Loc));
    Path = llvm::sys::path::parent_path(Here);
    llvm::sys::path::append(Path, Name);
  }
  llvm::sys::path::remove_dots(Path, /*remove_dot_dot=*/true);
  auto Known = FileModules.find(std::string(Path));
  if (Known != FileModules.end()) {
    Module = Known->second;
    return true;
  }
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> Buf = llvm::MemoryBuffer::getFile(Path);
  if (!Buf) {
    error(Loc, "cannot read the kernel file '" + std::string(Path) +
                   "': " + Buf.getError().message());
    return false;
  }
  Module = "nanort_file_module_" + std::to_string(FileModules.size() + 1);
  FileModules[std::string(Path)] = Module;
  // The text as a string literal, one source line a line; '?' escaped against trigraphs. The
  // __has_include line puts the file in the compile's dependency output (clang's -MD).
  std::string Lit = quotedLines("#line 1 \"" + escapeStringLiteral(Path) + "\"\n" +
                                (*Buf)->getBuffer().str());
  FileModuleDefs += "#if defined(__has_include)\n#if __has_include(\"" + Code::escape(Path) +
                    "\")\n#endif\n#endif\n";
  FileModuleDefs += std::string("static const nanort_kernel_module ") + Module +
                    " = {NANORT_ABI_VERSION, NANORT_MODULE_OPENCL_SOURCE," + Lit +
                    ",\n  0, 0, \"" + Code::escape(Path) + "\"};\n";
  return true;
}

void Lowerer::lowerTaskwait(const Pragma &P) {
  const Clause *On = P.find(ClauseKind::On);
  bool NoFlush = P.find(ClauseKind::Noflush) != nullptr;
  if (On && NoFlush) {
    error(P.DirLoc, "'noflush' cannot be combined with 'on' (taskwait on flushes only the "
                    "named data)");
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
    if (!On || !F || !F->getBody())
      continue;
    SourceLocation B = SM.getExpansionLoc(F->getBody()->getBeginLoc()),
                   E = SM.getExpansionLoc(F->getBody()->getEndLoc());
    if (SM.isBeforeInTranslationUnit(P.Begin, B) || SM.isBeforeInTranslationUnit(E, P.Begin) ||
        !SM.isBeforeInTranslationUnit(SM.getExpansionLoc(V->getLocation()), P.Begin))
      continue;
    Scope.push_back(V);
  }
  if (!On) {
    C << "nanort_check(" << (NoFlush ? "nanort_taskwait_noflush" : "nanort_taskwait")
      << "(), \"taskwait\");";
  } else {
    size_t N = On->Deps.size();
    C << "{ const void *nanort_addresses[" << (unsigned)N << "]; size_t nanort_sizes["
      << (unsigned)N << "];\n";
    for (size_t I = 0; I < N; ++I) {
      const DepItem &D = On->Deps[I];
      C << "{ ";
      emitItem(C, D, CPP,
               {"nanort: " + std::string(fileName(P.Begin)) + ":" +
                    std::to_string(lineOf(P.Begin)) + ": taskwait ",
                "0", &UsesSectionChecks, &Diags,
                [&](const DepItem &D) { return baseKind(D, Scope); }});
      C << "nanort_addresses[" << (unsigned)I << "] = (const void *)nanort_p;\n"
        << "nanort_sizes[" << (unsigned)I << "] = ";
      if (D.Sections.size() == 2) // from the first to the last byte of the block
        C << "(nanort_rows - 1) * nanort_stride + nanort_row_bytes; }\n";
      else
        C << "nanort_size; }\n";
    }
    C << "nanort_check(nanort_taskwait_on(nanort_addresses, nanort_sizes, " << (unsigned)N
      << "), \"taskwait on\"); }";
  }
  std::string S = C.str();
  if (S.find('\n') != std::string::npos)
    S += Code::marker(SM, P.End);
  RW.InsertTextAfter(P.End, S);
}

// The devices of a function task or of a version, and what its target clauses need: kernels
// an ndrange, file/name/shmem a kernel device, a kernel-only device no host body. Versions
// may have an smp device without a body here (it is called by name).
bool Lowerer::checkDevices(const Pragma &Task, const Pragma *Target, FunctionDecl *FD,
                           bool Version, Devices &Dev) {
  std::string Name = FD->getNameAsString();
  auto Fail = [&](SourceLocation L, const std::string &M) {
    error(L, M);
    return false;
  };
  // The devices, in the order written: the runtime runs the task on the first one present.
  Dev.List = {"smp"};
  Dev.KernelName = Name;
  if (Target) {
    if (const Clause *Cl = Target->find(ClauseKind::Device)) {
      Dev.List.clear();
      for (size_t I = 0; I < Cl->Words.size(); ++I) {
        const std::string &D = Cl->Words[I];
        if (std::find(Dev.List.begin(), Dev.List.end(), D) != Dev.List.end())
          return Fail(Cl->WordLocs[I], "device '" + D + "' appears twice in 'device'");
        Dev.List.push_back(D);
      }
    }
  }
  auto Has = [&](const char *D) {
    return std::find(Dev.List.begin(), Dev.List.end(), D) != Dev.List.end();
  };
  Dev.OpenCL = Has("opencl");
  Dev.Cuda = Has("cuda");
  Dev.Smp = Has("smp");
  bool OpenCL = Dev.OpenCL, Cuda = Dev.Cuda, Smp = Dev.Smp, Kernel = Dev.kernel();
  // The first kernel device named, for messages about kernels.
  std::string KernelDevice;
  for (const std::string &D : Dev.List)
    if (D != "smp" && KernelDevice.empty())
      KernelDevice = D;
  if (Target) {
    const Clause *Nd = Target->find(ClauseKind::Ndrange);
    if (OpenCL && !Nd)
      return Fail(Target->DirLoc, "a device(opencl) kernel needs an 'ndrange' clause");
    if (Cuda && !Nd)
      return Fail(Target->DirLoc, "a device(cuda) kernel needs an 'ndrange' clause (its "
                                  "grid and block sizes)");
    for (const Clause &Cl : Target->Clauses) {
      if (Cl.Info->Kind == ClauseKind::File && !OpenCL)
        return Fail(Cl.Loc, Cuda ? "clause 'file' needs device(opencl) (CUDA kernels come "
                                   "from the .cu files given to nanocc or nanocxx)"
                                 : "clause 'file' needs device(opencl)");
      if (!Kernel && (Cl.Info->Kind == ClauseKind::Ndrange ||
                      Cl.Info->Kind == ClauseKind::Shmem || Cl.Info->Kind == ClauseKind::Name))
        return Fail(Cl.Loc, std::string("clause '") + Cl.Info->Spelling +
                                "' needs device(opencl) or device(cuda)");
    }
    if (const Clause *NameCl = Target->find(ClauseKind::Name))
      Dev.KernelName = NameCl->Words[0];
    Dev.File = Target->find(ClauseKind::File);
    if (Nd) {
      const Toks &D = Nd->Args[0];
      unsigned Dims = 0;
      if (D.size() == 1 && D[0].Kind == tok::numeric_constant &&
          (D[0].Text == "1" || D[0].Text == "2" || D[0].Text == "3"))
        Dims = D[0].Text[0] - '0';
      if (!Dims)
        return Fail(D[0].Loc, "the first argument of 'ndrange' is the number of dimensions: "
                              "1, 2 or 3");
      size_t Got = Nd->Args.size() - 1;
      if (Got != Dims && Got != 2 * Dims)
        return Fail(Nd->Loc, "ndrange(" + std::to_string(Dims) + ", ...) takes " +
                                 std::to_string(Dims) + " global sizes and optionally " +
                                 std::to_string(Dims) + " local sizes; got " +
                                 std::to_string(Got) + " arguments after the dimensions");
    }
  }
  FunctionDecl *Def = FD->getDefinition();
  if (Cuda && !Smp && Def)
    return Fail(Task.DirLoc, "a device(cuda) task must be a kernel declaration without a body "
                             "(the kernel is compiled by nvcc from a .cu file given to nanocc "
                             "or nanocxx)");
  if (OpenCL && !Smp && Def)
    return Fail(Task.DirLoc, "a device(opencl) task must be a kernel declaration without a "
                             "body, or a '__kernel' function defined in this file (its body "
                             "is OpenCL C)");
  if (Kernel && isa<CXXMethodDecl>(FD))
    return Fail(Task.DirLoc, "a member function cannot have a device(" + KernelDevice +
                                 ") version");
  if (Kernel && Smp && !Def && !Version)
    return Fail(Task.DirLoc, "device(smp) needs the body of '" + Name +
                                 "' in this file (its smp version)");
  if (Task.KernelClose.isValid() && Dev.File)
    return Fail(Dev.File->Loc, "a kernel defined in this file takes no 'file' clause");
  return true;
}

// Which parameters are named as the base of a dependence or copy clause: the kernels' buffers.
std::vector<bool> Lowerer::bufferParameters(const Pragma &Task, const Pragma *Target,
                                            const FunctionDecl *FD) const {
  std::set<std::string> Named;
  for (const Pragma *P : {&Task, Target})
    if (P)
      for (const Clause &Cl : P->Clauses)
        for (const DepItem &D : Cl.Deps)
          Named.insert(D.BaseVar);
  std::vector<bool> Buffer;
  for (const ParmVarDecl *PV : FD->parameters())
    Buffer.push_back(!PV->getName().empty() && Named.count(PV->getName().str()));
  return Buffer;
}

// CUDA kernels get buffers and values only.
bool Lowerer::checkCudaParameters(const Pragma &Task, FunctionDecl *FD,
                                  const std::vector<bool> &Buffer) {
  for (unsigned I = 0; I < FD->getNumParams(); ++I) {
    ParmVarDecl *PV = FD->getParamDecl(I);
    SourceLocation L = PV->getLocation().isValid() ? PV->getLocation() : Task.DirLoc;
    QualType T = PV->getType();
    if (T->isReferenceType()) {
      error(L, "a device(cuda) kernel cannot take a reference parameter");
      return false;
    }
    if (T->isPointerType() && !Buffer[I]) {
      error(L, "pointer parameter" +
                   (PV->getName().empty() ? std::string() : " '" + PV->getName().str() + "'") +
                   " of a device(cuda) kernel must be named in a dependence or copy clause "
                   "(CUDA kernels get buffers only; dynamic shared memory is given with "
                   "'shmem' and declared 'extern __shared__' in the kernel)");
      return false;
    }
  }
  return true;
}

// The implementations of a function task on the devices of one function (the task's own, or
// a version): the kernels' argument tables and the smp entry point, which calls SmpCall; then
// one nanort_task_impl initializer per device, in the order of the device clause, appended to
// Impls. Every implementation reads the task's argument block.
bool Lowerer::emitImplementations(Code &C, const ArgBlock &A, const Devices &Dev,
                                  bool SingleSource, const std::string &Suffix,
                                  const std::string &SmpCall, std::vector<std::string> &Impls) {
  unsigned NumParams = A.FD->getNumParams();
  std::string Module = "nanort_opencl_program";
  if (SingleSource)
    Module = "nanort_source_module";
  else if (Dev.OpenCL && Dev.File && !fileModule(*Dev.File, Module))
    return false;
  if (Dev.OpenCL) {
    // Kernel arguments: buffers for pointers named in data clauses, __local memory for other
    // pointers, values for the rest.
    if (!Dev.File && !SingleSource)
      C << (CPP ? "extern \"C\" " : "extern ")
        << "const nanort_kernel_module nanort_opencl_program;\n";
    C << "static const nanort_kernel_arg nanort_kernel_args_" << Suffix << "[] = {";
    for (unsigned I = 0; I < NumParams; ++I) {
      QualType T = A.FD->getParamDecl(I)->getType();
      bool Local = T->isPointerType() && !A.Buffer[I];
      const char *Kind = !T->isPointerType() ? "NANORT_ARG_VALUE"
                         : Local             ? "NANORT_ARG_LOCAL"
                                             : "NANORT_ARG_BUFFER";
      C << (I ? ", " : "") << "{offsetof(" << A.Type << ", " << A.Members[I] << "), "
        << (Local ? std::string("0") : "sizeof(" + decl(T, "") + ")") << ", " << Kind << "}";
    }
    if (NumParams == 0)
      C << "{0, 0, NANORT_ARG_VALUE}";
    C << "};\n";
  }
  if (Dev.Cuda) {
    // Kernel arguments: buffers for pointers (each named in a data clause), values for the
    // rest.
    C << "static const nanort_kernel_arg nanort_cuda_args_" << Suffix << "[] = {";
    for (unsigned I = 0; I < NumParams; ++I) {
      QualType T = A.FD->getParamDecl(I)->getType();
      C << (I ? ", " : "") << "{offsetof(" << A.Type << ", " << A.Members[I] << "), sizeof("
        << decl(T, "") << "), "
        << (T->isPointerType() ? "NANORT_ARG_BUFFER" : "NANORT_ARG_VALUE") << "}";
    }
    if (NumParams == 0)
      C << "{0, 0, NANORT_ARG_VALUE}";
    C << "};\n";
  }
  if (Dev.Smp) {
    // C++: the body runs guarded, so that an exception it throws fails the task and is
    // rethrown at the taskwait (nanort/error.hpp).
    C << "static void nanort_smp_" << Suffix << (CPP ? "_body" : "") << "(void *nanort_v) {\n  "
      << A.Type << " *nanort_a = (" << A.Type << " *)nanort_v;\n  (void)nanort_a;\n  "
      << SmpCall << "(";
    for (unsigned I = 0; I < NumParams; ++I)
      C << (I ? ", " : "") << "nanort_a->" << A.Members[I];
    C << ");\n}\n";
    if (CPP)
      C << "static void nanort_smp_" << Suffix << "(void *nanort_v) {\n"
        << "  nanort::detail::run_guarded(&nanort_smp_" << Suffix << "_body, nanort_v);\n}\n";
  }
  std::string Args = std::to_string(NumParams);
  for (const std::string &D : Dev.List) {
    if (D == "smp")
      Impls.push_back("{NANORT_DEVICE_SMP, nanort_smp_" + Suffix + ", 0, 0, 0, 0}");
    else if (D == "cuda")
      Impls.push_back("{NANORT_DEVICE_CUDA, 0, \"" + Code::escape(Dev.KernelName) +
                      "\", &nanort_cuda_program, nanort_cuda_args_" + Suffix + ", " + Args +
                      "}");
    else
      Impls.push_back("{NANORT_DEVICE_OPENCL, 0, \"" + Code::escape(Dev.KernelName) + "\", &" +
                      Module + ", nanort_kernel_args_" + Suffix + ", " + Args + "}");
  }
  return true;
}

// Single-source OpenCL: the kernel's text goes to the translation unit's OpenCL program, and
// host code keeps its declaration. Returns the place after it.
SourceLocation Lowerer::addSourceKernel(const Pragma &Task) {
  PresumedLoc PL = SM.getPresumedLoc(Task.KernelBegin);
  std::string K = "#line " + std::to_string(PL.getLine()) + " \"" +
                  escapeStringLiteral(PL.getFilename()) + "\"\n" +
                  std::string(PL.getColumn() - 1, ' ') + text(Task.KernelBegin, Task.KernelClose) +
                  "\n";
  SourceKernels[SM.getFileOffset(Task.KernelBegin)] = K;
  RW.ReplaceText(SourceRange(Task.KernelOpen, Task.KernelClose), ";");
  return afterToken(Task.KernelClose);
}

void Lowerer::lowerFunctionTask(const Pragma &Task, const Pragma *Target, FunctionDecl *FD,
                                SourceLocation &PreludeAt) {
  std::string Name = FD->getNameAsString();
  auto Fail = [&](const std::string &M) { error(Task.DirLoc, M); };
  if (FD->isMain())
    return Fail("'main' cannot be a task");
  if (!FD->getReturnType()->isVoidType())
    return Fail("function task '" + Name + "' must return void");
  if (FD->isVariadic())
    return Fail("function task '" + Name + "' cannot be variadic");
  auto *Method = dyn_cast<CXXMethodDecl>(FD);
  bool Instance = Method && Method->isInstance();
  if (Method && Method->isVirtual())
    return Fail("virtual member functions cannot be tasks yet");
  if (Method && Method->getRefQualifier() != RQ_None)
    return Fail("ref-qualified member functions cannot be tasks yet");
  FunctionTemplateDecl *Template = FD->getDescribedFunctionTemplate();
  if (FD->isTemplated() && !Template && !Method)
    return Fail("functions inside templates as tasks are not supported yet");
  if (FD->getQualifier() && !Method)
    return Fail("a task pragma on a qualified name is not supported yet; put it on the "
                "declaration inside the namespace");
  // C before C23: 'void f()' declares f without saying its parameters. The definition says
  // them: 'void f() { ... }' has none, 'void f(int *x) { ... }' after a 'void f();' with the
  // pragma has x (and the clauses may name it).
  if (!FD->hasWrittenPrototype() && !CPP) {
    FunctionDecl *Def = FD->getDefinition();
    if (Def && Def->hasWrittenPrototype())
      FD = Def;
    else if (Def && Def->param_empty())
      ; // no parameters
    else if (Def)
      return Fail("function task '" + Name + "' needs a prototype: its definition lists its "
                  "parameters without their types in the parentheses (old style)");
    else if (FD->isReferenced())
      return Fail("function task '" + Name + "' needs a prototype: it is declared without "
                  "parameters ('" + Name + "()') and not defined in this file; declare its "
                  "parameters, or '" + Name + "(void)'");
  }
  if (!FD->getDeclName().isIdentifier())
    return Fail("operators and conversion functions cannot be tasks");
  for (const char *K : {"shared", "private", "firstprivate", "default"})
    if (const Clause *Cl = [&]() -> const Clause * {
          for (const Clause &X : Task.Clauses)
            if (StringRef(X.Info->Spelling) == K)
              return &X;
          return nullptr;
        }())
      return error(Cl->Loc, "data-sharing clauses apply to inline tasks only (the parameters "
                            "of a function task are its private copies)");

  // Single-source OpenCL: the private parse saw the kernel's declaration only.
  bool SingleSource = Task.KernelClose.isValid();
  FunctionDecl *Def = FD->getDefinition();
  bool FromHeader = !SM.isWrittenInMainFile(Task.Begin);
  bool DefinedHere = Def && SM.isWrittenInMainFile(SM.getExpansionLoc(Def->getBeginLoc()));
  if (FromHeader && Def && !DefinedHere)
    return Fail("function task '" + Name + "' is defined in an included file, which is not "
                "lowered yet: define it in a source file (the header keeps its declaration "
                "with the pragma)");
  Devices Dev;
  // A declaration in a header may leave the smp body to the file that defines it.
  if (!checkDevices(Task, Target, FD, /*Version=*/FromHeader && !DefinedHere, Dev))
    return;
  bool Cuda = Dev.Cuda, Smp = Dev.Smp, Kernel = Dev.kernel();
  const std::vector<Version> *Versions = nullptr;
  if (auto It = VersionsOf.find(FD->getCanonicalDecl()); It != VersionsOf.end())
    Versions = &It->second;

  // A kernel task declared in a header has no host definition: every file that names the
  // kernel makes its tasks itself, with a wrapper of its own (internal linkage, another name,
  // so that the header stays as it is for every file and compiler) that its uses call.
  bool HeaderKernel = isHeaderKernel(Task, Target, FD);
  if (FromHeader && !DefinedHere && !HeaderKernel)
    return; // defined in another file: that file's compile renames it and adds the wrapper
  // A task that this file neither defines nor uses needs nothing here.
  if (!Def && !Kernel && !FD->isReferenced())
    return;
  if (!Def && !Kernel)
    return Fail("function task '" + Name + "' must be defined in this file, or declared with "
                "its pragma in a header that the defining file includes");
  if (Def && !SM.isWrittenInMainFile(SM.getExpansionLoc(Def->getBeginLoc())))
    return Fail("the definition of function task '" + Name + "' is not in this file");
  if (Def && Def->getLocation().isMacroID())
    return Fail("the name of function task '" + Name + "' comes from a macro");
  for (ParmVarDecl *PV : FD->parameters()) {
    QualType T = PV->getType();
    if (T->isRValueReferenceType())
      return Fail("rvalue reference parameters of task functions are not supported yet");
    if (T->isVariablyModifiedType() &&
        (CPP || !T->isPointerType() || !T->getPointeeType()->isArrayType()))
      return Fail("variably modified parameter types are not supported yet");
  }
  std::vector<bool> Buffer = bufferParameters(Task, Target, FD);
  if (Cuda && !checkCudaParameters(Task, FD, Buffer))
    return;
  bool AnyCuda = Cuda; // the task, or one of its versions, has a CUDA kernel
  if (Versions)
    for (const Version &V : *Versions)
      AnyCuda |= V.Dev.Cuda;
  // A header kernel that this file does not name needs nothing here (uses in other included
  // files are errors, see nameHeaderKernel).
  Placement Place;
  if (HeaderKernel && !beforeFirstUse(FD, SourceLocation(), Place))
    return;
  if (AnyCuda)
    UsesCuda = true;

  unsigned N = ++Counter;
  std::string Id = std::to_string(N);
  std::string Args = "nanort_args_" + Id;
  std::string ArgsType = CPP ? Args : "struct " + Args;
  std::string Body = "nanort_body_" + Name;
  std::string WrapperName = HeaderKernel ? KernelWrappers[FD->getCanonicalDecl()] : Name;
  bool ExternC = CPP && FD->isExternC() && !HeaderKernel;

  // Parameter names as the annotated declaration has them (its clauses use them).
  std::vector<std::string> PNames;
  for (unsigned I = 0; I < FD->getNumParams(); ++I) {
    ParmVarDecl *PV = FD->getParamDecl(I);
    PNames.push_back(PV->getName().empty() ? "nanort_p" + std::to_string(I)
                                           : PV->getName().str());
  }
  std::string Params;
  for (unsigned I = 0; I < FD->getNumParams(); ++I)
    Params += (I ? ", " : "") + decl(FD->getParamDecl(I)->getType(), PNames[I]);
  if (Params.empty())
    Params = CPP ? "" : "void";
  std::string Storage;
  // A CUDA kernel only declared here: its wrapper has internal linkage, since an object made
  // by nvcc -c that holds the kernel defines a global host stub of the same name.
  if (FD->getStorageClass() == SC_Static || HeaderKernel ||
      (Cuda && !FD->doesThisDeclarationHaveABody() && !Method))
    Storage += "static ";
  if (FD->isInlineSpecified())
    Storage += "inline ";
  std::string Signature = Storage + "void " + WrapperName + "(" + Params + ")";
  // Member functions: the wrapper is defined where the user's definition is, in the class or
  // out of it (then with the class's qualifier, and without 'static').
  std::string Qualifiers;
  bool OutOfLine = false;
  if (Method) {
    if (Method->isConst())
      Qualifiers += " const";
    if (Method->isVolatile())
      Qualifiers += " volatile";
    FunctionDecl *D = FD->getDefinition();
    OutOfLine = D && D->isOutOfLine();
    if (OutOfLine) {
      if (D->isTemplated())
        return Fail("out-of-line members of class templates as tasks are not supported yet");
      NestedNameSpecifierLoc Q = D->getQualifierLoc();
      std::string QText = Q ? text(Q.getBeginLoc(), Q.getEndLoc()) : std::string();
      Signature = std::string(FD->isInlineSpecified() ? "inline " : "") + "void " + QText +
                  Name + "(" + Params + ")";
    }
    Signature += Qualifiers;
  }

  // Function templates: the wrapper is a template with the same parameters, and everything
  // it needs lives inside it (a local struct, function-local statics), so that each
  // instantiation gets its own.
  std::string TemplateHead, TemplateArgs;
  if (Template) {
    if (Kernel)
      return Fail("a kernel cannot be a template");
    TemplateParameterList *TPL = Template->getTemplateParameters();
    for (NamedDecl *P : *TPL) {
      if (P->getName().empty())
        return Fail("unnamed template parameters of a task function are not supported yet");
      TemplateArgs += (TemplateArgs.empty() ? "" : ", ") + P->getName().str() +
                      (P->isParameterPack() ? "..." : "");
    }
    TemplateHead = text(TPL->getTemplateLoc(), TPL->getRAngleLoc()) + " ";
    TemplateArgs = "<" + TemplateArgs + ">";
  }

  Code C(SM);
  if (Template || Method) {
    std::string Label =
        Task.find(ClauseKind::Label) ? Task.find(ClauseKind::Label)->Words[0] : Name;
    C << "\n" << TemplateHead << Signature << " {\n";
    C << "struct " << Args << " {";
    if (Instance)
      C << " " << decl(Method->getThisType(), "nanort_self") << ";";
    for (unsigned I = 0; I < FD->getNumParams(); ++I)
      C << " " << decl(FD->getParamDecl(I)->getType().getUnqualifiedType(), PNames[I]) << ";";
    C << "\n  static void nanort_body(void *nanort_v) {\n    " << Args << " *nanort_a = static_cast<"
      << Args << " *>(nanort_v);\n    (void)nanort_a;\n    "
      << (Instance ? "nanort_a->nanort_self->" : "") << Body << TemplateArgs << "(";
    for (unsigned I = 0; I < PNames.size(); ++I)
      C << (I ? ", " : "") << "nanort_a->" << PNames[I];
    C << ");\n  }\n  static void run(void *nanort_v) { nanort::detail::run_guarded(&nanort_body, "
         "nanort_v); }\n  static void destroy(void *nanort_v) { static_cast<" << Args
      << " *>(nanort_v)->~" << Args << "(); }\n};\n";
    C << "static const nanort_task_impl nanort_impl[] = {{NANORT_DEVICE_SMP, &" << Args
      << "::run, 0, 0, 0, 0}};\n";
    C << "static const nanort_task_site nanort_site = {NANORT_ABI_VERSION, \""
      << Code::escape(Label) << "\", " << fileLiteral(Task.Begin) << ", "
      << lineOf(Task.Begin) << ", nanort_impl, 1, &" << Args << "::destroy};\n";
    C << "nanort_task *nanort_t = nanort_created(nanort_task_create(&nanort_site, sizeof("
      << Args << ")));\n";
    C << "::new (nanort_task_args(nanort_t)) " << Args << "{" << (Instance ? "this" : "");
    for (unsigned I = 0; I < PNames.size(); ++I)
      C << (I || Instance ? ", " : "") << PNames[I];
    C << "};\n";
    emitTaskClauses(C, Task, "task '" + Label + "'", params(FD), Target);
    C << "nanort_check(nanort_task_submit(nanort_t), \"nanort_task_submit\");\n}\n";
  } else {
  // The argument block: one member per parameter.
  C << "\nstruct " << Args << " {";
  for (unsigned I = 0; I < FD->getNumParams(); ++I) {
    // C: a pointer to a variable-length array (float A[n][n]) cannot be a struct member; it
    // travels as void * and converts back at the call of the body.
    QualType T = FD->getParamDecl(I)->getType().getUnqualifiedType();
    C << " " << (T->isVariablyModifiedType() ? "void *" + PNames[I] : decl(T, PNames[I])) << ";";
  }
  if (FD->getNumParams() == 0)
    C << " char nanort_unused;";
  C << " };\n";
  if (CPP)
    C << "static void nanort_destroy_" << Id << "(void *nanort_v) { static_cast<" << Args
      << " *>(nanort_v)->~" << Args << "(); }\n";

  std::string Label =
      Task.find(ClauseKind::Label) ? Task.find(ClauseKind::Label)->Words[0] : Name;
  std::string Impl = "nanort_impl_" + Id;
  ArgBlock Block{FD, ArgsType, PNames, Buffer};
  std::vector<std::string> Impls;
  if (!emitImplementations(C, Block, Dev, SingleSource, Id, Body, Impls))
    return;
  // The versions' implementations follow the task's own, in the order of their pragmas. A
  // task without a kernel of its own takes its index space from its first kernel version.
  const Pragma *LaunchFrom = nullptr;
  std::map<std::string, std::string> Rename; // the version's parameter names -> the task's
  for (size_t K = 0; Versions && K < Versions->size(); ++K) {
    const Version &V = (*Versions)[K];
    if (!emitImplementations(C, Block, V.Dev, V.Task->KernelClose.isValid(),
                             Id + "_" + std::to_string(K + 1), versionCall(V.FD), Impls))
      return;
    if (!Kernel && !LaunchFrom && V.Dev.kernel()) {
      LaunchFrom = V.Target;
      for (unsigned I = 0; I < V.FD->getNumParams(); ++I)
        if (!V.FD->getParamDecl(I)->getName().empty())
          Rename[V.FD->getParamDecl(I)->getName().str()] = PNames[I];
    }
  }
  C << "static const nanort_task_impl " << Impl << "[] = {";
  for (size_t I = 0; I < Impls.size(); ++I)
    C << (I ? ", " : "") << Impls[I];
  C << "};\n";
  C << "static const nanort_task_site nanort_site_" << Id << " = {NANORT_ABI_VERSION, \""
    << Code::escape(Label) << "\", " << fileLiteral(Task.Begin) << ", " << lineOf(Task.Begin)
    << ", " << Impl << ", " << (unsigned)Impls.size() << ", "
    << (CPP ? "nanort_destroy_" + Id : std::string("0")) << "};\n";

  // The wrapper: same name and signature, creates the task.
  C << (ExternC ? "extern \"C\" {\n" : "") << Signature << " {\n";
  if (AnyCuda)
    C << "nanort_need_cuda_program(\"" << Code::escape(Label) << "\", "
      << fileLiteral(Task.Begin) << ", " << lineOf(Task.Begin) << ");\n";
  C << "nanort_task *nanort_t = nanort_created(nanort_task_create(&nanort_site_" << Id
    << ", sizeof(" << ArgsType << ")));\n";
  if (CPP) {
    C << "::new (nanort_task_args(nanort_t)) " << Args << "{";
    for (unsigned I = 0; I < PNames.size(); ++I)
      C << (I ? ", " : "") << PNames[I];
    C << "};\n";
  } else {
    C << ArgsType << " nanort_init = {";
    for (unsigned I = 0; I < PNames.size(); ++I)
      C << (I ? ", " : "") << PNames[I];
    if (PNames.empty())
      C << "0";
    C << "};\n__builtin_memcpy(nanort_task_args(nanort_t), &nanort_init, sizeof nanort_init);\n";
  }
  emitTaskClauses(C, Task, "task '" + Label + "'", params(FD), Target, LaunchFrom, &Rename);
  C << "nanort_check(nanort_task_submit(nanort_t), \"nanort_task_submit\");\n}\n"
    << (ExternC ? "}\n" : "");
  }

  // Where the generated code goes: after the kernel or the user's definition.
  SourceLocation At;
  if (SingleSource) {
    At = addSourceKernel(Task);
  } else if (!Smp) {
    if (Cuda && !FD->doesThisDeclarationHaveABody() && !Method && !HeaderKernel) {
      // The user's declaration gets internal linkage too, as its wrapper has (see Storage):
      // a one-declaration extern "C" in front of it goes, as it cannot hold a static one.
      SourceLocation Begin = SM.getExpansionLoc(FD->getBeginLoc());
      if (auto *LS = dyn_cast<LinkageSpecDecl>(FD->getDeclContext()); LS && !LS->hasBraces())
        RW.RemoveText(
            CharSourceRange::getCharRange(SM.getExpansionLoc(LS->getBeginLoc()), Begin));
      RW.InsertTextBefore(Begin, "static ");
    }
    // After the kernel's declaration.
    SourceLocation End = SM.getExpansionRange(FD->getEndLoc()).getEnd();
    SourceLocation Semi = Lexer::findLocationAfterToken(End, tok::semi, SM, LO, false);
    At = Semi.isValid() ? Semi : afterToken(End);
  } else {
    // The user's definition keeps its place under a new name; a declaration of the wrapper
    // before it serves recursive calls, and the wrapper follows it.
    SourceLocation DefBegin = SM.getExpansionLoc(Def->getBeginLoc());
    if (FunctionTemplateDecl *DT = Def->getDescribedFunctionTemplate())
      DefBegin = SM.getExpansionLoc(DT->getBeginLoc());
    std::string Proto = (ExternC ? "extern \"C\" { " : "") + TemplateHead + Signature + ";" +
                        (ExternC ? " }" : "") + Code::marker(SM, DefBegin);
    if (!Method) // members are declared in their class; a redeclaration there is an error
      RW.InsertTextBefore(DefBegin, Proto);
    if (OutOfLine) {
      // The renamed definition needs its declaration in the class, after the user's one.
      FunctionDecl *InClass = FD->getCanonicalDecl();
      SourceLocation E = SM.getExpansionRange(InClass->getEndLoc()).getEnd();
      SourceLocation Semi = Lexer::findLocationAfterToken(E, tok::semi, SM, LO, false);
      if (Semi.isInvalid())
        return Fail("cannot find the end of the declaration of '" + Name + "' in its class");
      RW.InsertTextAfter(Semi, std::string(" ") + (Method->isStatic() ? "static " : "") +
                                   "void " + Body + "(" + Params + ")" + Qualifiers + ";");
    }
    RW.ReplaceText(Def->getLocation(), Name.size(), Body);
    At = afterToken(SM.getExpansionRange(Def->getEndLoc()).getEnd());
  }
  // The code goes later: before the first declaration at file or namespace scope that names
  // the function after its declaration or definition, or at the end of the file when none
  // does. Clause expressions are evaluated at each call with the parameters bound to its
  // arguments; the other names in them are those visible there.
  auto AtEnd = [&](Placement &P) {
    P.At = P.Top = SM.getLocForEndOfFile(SM.getMainFileID());
    reopen(FD, Ctx.getTranslationUnitDecl(), P);
  };
  bool Moved = false;
  if (HeaderKernel) {
    At = Place.At;
    Moved = true;
  } else if (!Method && !FD->isTemplated()) {
    Placement Later;
    if (!beforeFirstUse(FD, At, Later))
      AtEnd(Later);
    if (SM.isBeforeInTranslationUnit(At, Later.At)) {
      Place = Later;
      At = Later.At;
      Moved = true;
    }
  }
  SourceLocation Chosen = At;
  if (Versions && !placeAfterVersions(Def ? Def : FD, *Versions, At))
    return;
  if (At != Chosen) { // after a version's declaration, in the function's own scope
    if (HeaderKernel) // the uses from Chosen on call it
      RW.InsertTextBefore(Chosen, "\n" + Place.Open + Signature + ";" + Place.Close +
                                      Code::marker(SM, Chosen));
    Moved = false;
  }
  std::string Text = C.str();
  if (Moved && !Place.Open.empty())
    Text = "\n" + Place.Open + Text + Place.Close;
  Text += Code::marker(SM, At);
  // A header kernel's wrapper goes before the C inline tasks outlined at the same place,
  // which may call it.
  if (HeaderKernel && At == Chosen)
    RW.InsertTextBefore(At, Text);
  else
    RW.InsertTextAfter(At, Text);
  SourceLocation Top = HeaderKernel ? Place.Top : topLevelStart(Def ? Def : FD);
  if (PreludeAt.isInvalid() || SM.isBeforeInTranslationUnit(Top, PreludeAt))
    PreludeAt = Top;
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
      error(SM.getExpansionLoc(R.NameLoc),
            "kernel task '" + Name + "' is declared in an included file, so each source file "
            "calls a wrapper of its own: name it in the source file itself, not in a macro "
            "body, an included file or an overloaded call in a template");
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

// ---------------------------------------------------------------------------------------------
// Versions: 'target ... implements(f)' before a function task declares another implementation
// of the function task f. A call of f makes one task, whose site lists f's implementations
// first, then each version's, in the order of their pragmas; the runtime chooses one per task.

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
  auto Fail = [&](const std::string &M) { error(Impl->Loc, M); };
  if (isa<CXXMethodDecl>(G) || G->isTemplated())
    return Fail("versions of member functions and function templates are not supported yet");
  if (!G->getLexicalDeclContext()->getRedeclContext()->isFileContext())
    return Fail("a version must be declared at file or namespace scope");
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
    return Fail("no function '" + FName + "' is declared: 'implements' names the function " +
                "task that '" + GName + "' is a version of");
  if (!F)
    return Fail("'" + FName + "' is not a function task: 'implements' names a function with a "
                "'#pragma " + Task.Namespace + " task' of its own");
  if (F == G->getCanonicalDecl())
    return Fail("'" + GName + "' cannot implement itself: 'implements' names the function task "
                "that this one is a version of");
  const FunctionTask &FT = FunctionTasks[F];
  if (const Clause *Up = FT.Target ? FT.Target->find(ClauseKind::Implements) : nullptr)
    return Fail("'" + FName + "' is itself a version (of '" + Up->Words[0] +
                "'): name the function task that it implements");
  if (isa<CXXMethodDecl>(F) || F->isTemplated())
    return Fail("versions of member functions and function templates are not supported yet");

  // The same signature: the same argument block serves every implementation.
  std::string Cannot = "'" + GName + "' cannot implement '" + FName + "': ";
  if (!CPP && !G->hasWrittenPrototype())
    return Fail(Cannot + "it needs a prototype");
  if (!G->getReturnType()->isVoidType() || G->isVariadic())
    return Fail(Cannot + "a version returns void and takes no variable arguments");
  if (G->getNumParams() != F->getNumParams())
    return Fail(Cannot + "it has " + std::to_string(G->getNumParams()) + " parameters and '" +
                FName + "' has " + std::to_string(F->getNumParams()));
  for (unsigned I = 0; I < F->getNumParams(); ++I) {
    QualType TF = F->getParamDecl(I)->getType(), TG = G->getParamDecl(I)->getType();
    if (!sameTypesIgnoringAddressSpaces(TF, TG))
      return Fail(Cannot + "parameter " + std::to_string(I + 1) + " has type '" +
                  TG.getAsString(Policy) + "' here and '" + TF.getAsString(Policy) + "' in '" +
                  FName + "'");
  }

  // The task's clauses are f's: a version may repeat its dependences and copies, nothing else.
  for (const Clause &Cl : Task.Clauses)
    if (!isDataClause(Cl.Info->Kind))
      return error(Cl.Loc, std::string("clause '") + Cl.Info->Spelling +
                               "' does not apply to a version: calls of '" + FName +
                               "' make the task, with the clauses of its pragma");
  std::vector<std::string> Mine = dataClauses(Task, &Target, G);
  if (!Mine.empty() && Mine != dataClauses(*FT.Task, FT.Target, FT.FD)) {
    SourceLocation L = Task.DirLoc;
    for (const Pragma *P : {&Task, &Target})
      for (const Clause &Cl : P->Clauses)
        if (isDataClause(Cl.Info->Kind) && L == Task.DirLoc)
          L = Cl.Loc;
    return error(L, "the dependences and copies of '" + GName + "' differ from those of '" +
                        FName + "': a version has those of the task it implements (parameter "
                        "names aside), or none");
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
    return Fail("function task '" + FName + "' is defined in another file, which makes its "
                "task: declare this version where that file sees it (in a header it includes)");
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
          error(Cl->Loc, std::string("clause '") + Cl->Info->Spelling + "' of '" +
                             V.FD->getNameAsString() + "' differs from that of '" + FirstName +
                             "': a task has one index space for all its kernels (parameter "
                             "names aside)");
        }
      }
    }
  }
}

class FunctionRefFinder : public RecursiveASTVisitor<FunctionRefFinder> {
public:
  std::vector<DeclRefExpr *> Refs;
  bool VisitDeclRefExpr(DeclRefExpr *E) {
    if (isa<FunctionDecl>(E->getDecl()))
      Refs.push_back(E);
    return true;
  }
};

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
    error(L, "'" + E->getDecl()->getNameAsString() + "' is a version of function task '" +
                 It->second->getNameAsString() + "': call '" + It->second->getNameAsString() +
                 "', whose task runs one of its versions");
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
      error(V.Target->find(ClauseKind::Implements)->Loc,
            "'" + V.FD->getNameAsString() + "' is declared after '" + Place->getNameAsString() +
                "', in another scope or file: declare it before '" + Place->getNameAsString() +
                "' (the code that makes the task calls its smp version)");
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

// A statement that would jump out of a task body or a critical region once it is outlined
// or wrapped (break and continue of an enclosing loop do not compile there anyway).
class JumpFinder : public RecursiveASTVisitor<JumpFinder> {
public:
  Stmt *Found = nullptr;
  bool TraverseLambdaExpr(LambdaExpr *) { return true; } // its returns are its own
  bool VisitReturnStmt(ReturnStmt *S) { return record(S); }
  bool VisitGotoStmt(GotoStmt *S) { return record(S); }
  bool VisitIndirectGotoStmt(IndirectGotoStmt *S) { return record(S); }

private:
  bool record(Stmt *S) {
    if (!Found)
      Found = S;
    return true;
  }
};

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
std::optional<Sharing> dependenceSharing(const Pragma &Task, const VarDecl *V) {
  bool Own = false, Through = false;
  for (const Clause &Cl : Task.Clauses)
    for (const DepItem &D : Cl.Deps) {
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
void Lowerer::planInlineTask(const Pragma &Task, const Candidate &Cand, InlinePlan &Plan) {
  Stmt *S = Cand.S;
  FunctionDecl *Fn = Cand.Enclosing;
  if (Cand.InLambda || !Fn)
    return error(Task.DirLoc, "inline tasks inside lambdas are not supported yet");
  if (isa<DeclStmt>(S))
    return error(Task.DirLoc, "a task cannot apply to a declaration: put the statement in a "
                              "block");
  {
    JumpFinder JF;
    JF.TraverseStmt(S);
    if (JF.Found)
      return error(JF.Found->getBeginLoc(), std::string(isa<ReturnStmt>(JF.Found) ? "'return'"
                                                                                 : "'goto'") +
                                                " cannot leave a task");
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
    if (&P != &Task && SM.isBeforeInTranslationUnit(Begin, P.Begin) &&
        SM.isBeforeInTranslationUnit(P.Begin, End))
      Nested.push_back(&P);
  if (!CPP)
    for (const Pragma *P : Nested) {
      if (!P->Dir || P->Dir->Kind != DirectiveKind::Task)
        continue;
      const Candidate *In = following(*P);
      if (!In || In->FD)
        continue; // an error of its own

      SourceLocation NB, NE;
      statementRange(*In, NB, NE);
      NestedTasks.push_back({NB, NE});
    }

  UseFinder UF(SM, SourceRange(Begin, End));
  UF.TraverseStmt(S);
  // Variables that only nested pragmas name (C++): the nearest earlier declaration.
  for (const Pragma *P : Nested)
    for (const std::string &Id : P->Identifiers) {
      VarDecl *Found = nullptr;
      for (VarDecl *V : Vars) {
        if (V->getName() != Id || !Fn->getBody())
          continue;
        SourceLocation DL = SM.getExpansionLoc(V->getLocation());
        if (!SM.isBeforeInTranslationUnit(DL, Begin))
          continue;
        if (V->getDeclContext() != Fn && !Fn->Encloses(V->getDeclContext()) &&
            !isa<ParmVarDecl>(V))
          continue;
        if (isa<ParmVarDecl>(V) && V->getDeclContext() != Fn)
          continue;
        if (!Found || SM.isBeforeInTranslationUnit(SM.getExpansionLoc(Found->getLocation()), DL))
          Found = V;
      }
      if (Found && !UF.Uses.count(Found)) {
        UF.Order.push_back(Found);
        UF.Uses[Found];
      }
    }

  // Data sharing: the clauses, then the dependences, then static storage, then the default.
  std::set<std::string> Shared, Private, First;
  std::string Default = "firstprivate";
  for (const Clause &Cl : Task.Clauses) {
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
    else if ((FromDeps = dependenceSharing(Task, V)))
      Cap.How = *FromDeps;
    else if (V->isStaticLocal())
      Cap.How = Sharing::Shared;
    else if (Default == "shared")
      Cap.How = Sharing::Shared;
    else if (Default == "none") {
      error(Task.DirLoc, "variable '" + N + "' must be listed in a data-sharing clause "
                         "(default(none))");
      OK = false;
      continue;
    }
    QualType T = V->getType();
    if (T->isVariablyModifiedType()) {
      Cap.VM = splitVariablyModified(Ctx, T.getNonReferenceType());
      if (CPP) {
        error(Task.DirLoc, "variable '" + N + "' has a variably modified type (a "
                           "variable-length array or a pointer to one, a C feature): C++ "
                           "inline tasks cannot capture it; use a pointer to its first "
                           "element");
        OK = false;
        continue;
      }
      if (!Cap.VM) {
        error(Task.DirLoc, "variable '" + N + "' has a variably modified type that inline "
                           "tasks cannot capture (only variable-length arrays and pointers "
                           "to them)");
        OK = false;
        continue;
      }
    }
    if (!CPP) // C++ spells the captured types with decltype, inside the function
      OK &= checkLocalType(Cap.VM ? Cap.VM->Elem : T.getNonReferenceType(), Task.DirLoc, N);
    // A reference's task gets an object of the referenced type (OpenMP 4.5 and later).
    if (Cap.How == Sharing::Private && T.getNonReferenceType().isConstQualified()) {
      error(Task.DirLoc, "private variable '" + N + "' cannot be const");
      OK = false;
    }
    if (CPP && Cap.How == Sharing::Firstprivate && T.getNonReferenceType()->isArrayType() &&
        !T.getNonReferenceType().isTriviallyCopyableType(Ctx)) {
      error(Task.DirLoc, "firstprivate array '" + N + "' must be trivially copyable");
      OK = false;
    }
    Caps.push_back(Cap);
  }
  if (!OK)
    return;

  // C: uses of shared variables become (*nanort_a->x) in place, before the body is copied.
  if (!CPP)
    for (const Capture &Cap : Caps) {
      if (Cap.How != Sharing::Shared && !Cap.viewed())
        continue;
      std::string Name = Cap.Var->getName().str();
      std::string View = Cap.VM ? "(*nanort_s_" + Name + ")" : "(*nanort_a->" + Name + ")";
      Plan.Views[Name] = View;
      std::set<unsigned> Done; // a macro argument may expand to several uses
      for (SourceLocation L : Cap.Uses) {
        SourceLocation Spelled = SM.getExpansionLoc(L);
        bool InNested = false;
        for (const auto &R : NestedTasks)
          if (!SM.isBeforeInTranslationUnit(Spelled, R.first) &&
              SM.isBeforeInTranslationUnit(Spelled, R.second))
            InNested = true;
        if (InNested)
          continue;
        if (L.isMacroID()) {
          if (!SM.isMacroArgExpansion(L)) {
            error(L, "variable '" + Name + "' is used through a macro body inside a C inline "
                     "task; pass it as a macro argument");
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
    TF.TraverseStmt(S);
    if (TF.Lambda)
      return error(TF.Lambda->getBeginLoc(), "lambdas that capture 'this' inside an inline "
                                             "task are not supported yet");
    for (CXXThisExpr *E : TF.Uses) {
      SourceLocation L = E->getLocation();
      if (L.isMacroID()) {
        if (!SM.isMacroArgExpansion(L))
          return error(L, "'this' is used through a macro body inside an inline task; pass "
                          "it as a macro argument");
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

void Lowerer::lowerInlineTask(const Pragma &Task, const Candidate &Cand, const InlinePlan &Plan,
                              SourceLocation &PreludeAt) {
  FunctionDecl *Fn = Cand.Enclosing;
  SourceLocation Begin = Plan.Begin, End = Plan.End;
  const std::vector<Capture> &Caps = Plan.Caps;
  unsigned N = ++Counter;
  std::string Id = std::to_string(N);
  std::string Args = "nanort_args_" + Id;
  std::string ArgsType = CPP ? Args : "struct " + Args;
  std::string BodyText = RW.getRewrittenText(CharSourceRange::getCharRange(Begin, End));

  // C++: the argument block is a local class at the task's place, its static member function
  // runs the body, and the site is a function-local static. So the task works inside
  // function templates, and captured variables may have types local to the function
  // (lambdas): the members are spelled with decltype.
  Code L(SM);
  if (CPP) {
    L << "struct " << Args << " {";
    if (!Plan.ThisType.isNull())
      L << " " << decl(Plan.ThisType, "nanort_self") << ";";
    for (const Capture &Cap : Caps) {
      std::string Name = Cap.Var->getName().str();
      // Members are prefixed: a class may not declare a name it used before (decltype(x)).
      if (Cap.How == Sharing::Shared)
        L << " decltype(__builtin_addressof(" << Name << ")) nanort_c_" << Name << ";";
      else if (Cap.How == Sharing::Firstprivate)
        L << " std::remove_cv_t<std::remove_reference_t<decltype(" << Name << ")>> nanort_c_"
          << Name << ";";
    }
    L << " char nanort_unused;\n  static void nanort_body(void *nanort_v) {\n    " << Args
      << " *nanort_a = static_cast<" << Args << " *>(nanort_v);\n    (void)nanort_a;\n";    if (!Plan.ThisType.isNull())
      L << "    auto nanort_self = nanort_a->nanort_self;\n";
    for (const Capture &Cap : Caps) {
      std::string Name = Cap.Var->getName().str();
      if (Cap.How == Sharing::Private)
        L << "    std::remove_cv_t<std::remove_reference_t<decltype(" << Name << ")>> " << Name
          << ";\n";
      else
        L << "    auto &" << Name << " = " << (Cap.How == Sharing::Shared ? "*" : "")
          << "nanort_a->nanort_c_" << Name << ";\n";
      L << "    (void)" << Name << ";\n"; // names seen only in nested clauses may go unused
    }
    L.at(Begin);
    L << BodyText << "\n  }\n  static void run(void *nanort_v) { nanort::detail::run_guarded("
         "&nanort_body, nanort_v); }\n  static void destroy(void *nanort_v) { static_cast<" << Args
      << " *>(nanort_v)->~" << Args << "(); }\n};\n";
    const Clause *LabelC = Task.find(ClauseKind::Label);
    L << "static const nanort_task_impl nanort_impl_" << Id
      << "[] = {{NANORT_DEVICE_SMP, &" << Args << "::run, 0, 0, 0, 0}};\n";
    L << "static const nanort_task_site nanort_site_" << Id << " = {NANORT_ABI_VERSION, "
      << (LabelC ? "\"" + Code::escape(LabelC->Words[0]) + "\"" : std::string("0")) << ", "
      << fileLiteral(Task.Begin) << ", " << lineOf(Task.Begin) << ", nanort_impl_" << Id
      << ", 1, &" << Args << "::destroy};\n";
  }

  // C: the argument block, the outlined body and the site go before the function.
  Code F(SM);
  if (!CPP) {
    F << "\nstruct " << Args << " {";
    for (const Capture &Cap : Caps) {
      QualType T = Cap.Var->getType().getNonReferenceType();
      std::string Name = Cap.Var->getName().str();
      if (Cap.VM) { // the variable's address or value untyped, or where its copy is
        if (Cap.How == Sharing::Shared || (Cap.How == Sharing::Firstprivate && !Cap.VM->isArray()))
          F << " void *" << Name << ";";
        else if (Cap.VM->isArray())
          F << " size_t nanort_o_" << Name << ";";
        for (unsigned K = 0; K < Cap.VM->varDims(); ++K)
          F << " size_t nanort_d_" << Name << "_" << K << ";";
      } else if (Cap.How == Sharing::Shared)
        F << " " << decl(Ctx.getPointerType(T), Name) << ";";
      else if (Cap.How == Sharing::Firstprivate)
        F << " " << decl(T, Name) << ";";
    }
    F << " char nanort_unused; };\n";
    F << "static void nanort_task_" << Id << "(void *nanort_v) {\n  " << ArgsType
      << " *nanort_a = (" << ArgsType << " *)nanort_v;\n  (void)nanort_a;\n";
    // Private and firstprivate variables are locals of the same name (shared ones were
    // rewritten in the body).
    for (const Capture &Cap : Caps) {
      QualType T = Cap.Var->getType().getNonReferenceType();
      std::string Name = Cap.Var->getName().str();
      if (Cap.VM) {
        std::vector<std::string> Lengths;
        for (unsigned K = 0; K < Cap.VM->varDims(); ++K)
          Lengths.push_back("nanort_a->nanort_d_" + Name + "_" + std::to_string(K));
        if (Cap.How == Sharing::Shared)
          F << "  " << vmDeclaration(*Cap.VM, "nanort_s_" + Name, Lengths, 1, Policy)
            << " = nanort_a->" << Name << ";\n  (void)nanort_s_" << Name << ";\n";
        else if (Cap.VM->isArray()) // its own copy, after the argument block
          F << "  " << vmDeclaration(*Cap.VM, "nanort_s_" + Name, Lengths, 1, Policy)
            << " = (void *)((char *)nanort_v + nanort_a->nanort_o_" << Name << ");\n  (void)nanort_s_"
            << Name << ";\n";
        else
          F << "  " << vmDeclaration(*Cap.VM, Name, Lengths, 0, Policy)
            << (Cap.How == Sharing::Firstprivate ? " = nanort_a->" + Name : std::string())
            << ";\n  (void)" << Name << ";\n";
        continue;
      }
      if (Cap.How == Sharing::Private) {
        F << "  " << decl(T, Name) << ";\n";
      } else if (Cap.How == Sharing::Firstprivate) {
        Qualifiers Q;
        QualType U = Ctx.getUnqualifiedArrayType(T, Q);
        F << "  " << decl(U, Name) << ";\n  __builtin_memcpy((void *)&" << Name
          << ", (const void *)&nanort_a->" << Name << ", sizeof " << Name << ");\n";
      }
    }
    F.at(Begin);
    F << BodyText << "\n}\n";
    const Clause *LabelC = Task.find(ClauseKind::Label);
    F << "static const nanort_task_impl nanort_impl_" << Id
      << "[] = {{NANORT_DEVICE_SMP, nanort_task_" << Id << ", 0, 0, 0, 0}};\n";
    F << "static const nanort_task_site nanort_site_" << Id << " = {NANORT_ABI_VERSION, "
      << (LabelC ? "\"" + Code::escape(LabelC->Words[0]) + "\"" : std::string("0")) << ", "
      << fileLiteral(Task.Begin) << ", " << lineOf(Task.Begin) << ", nanort_impl_" << Id
      << ", 1, 0};\n";
  }

  // In place of the statement: create, fill, submit. C, inside another inline task: the
  // variables that one shares are spelled (*nanort_a->x), so the new block is nanort_n.
  Code C(SM);
  const InlinePlan *Outer = CPP ? nullptr : enclosingPlan(Begin, &Plan);
  std::string A = Outer ? "nanort_n" : "nanort_a";
  auto View = [&](const std::string &Name) {
    if (Outer) {
      auto It = Outer->Views.find(Name);
      if (It != Outer->Views.end())
        return It->second;
    }
    return Name;
  };
  if (Outer)
    C.Subst = &Outer->Views;
  // C: a firstprivate or private variable-length array gets its bytes after the block.
  std::string ArgsSize = "sizeof(" + ArgsType + ")";
  std::string Extra;
  if (!CPP)
    for (const Capture &Cap : Caps) {
      if (!Cap.VM || Cap.How == Sharing::Shared || !Cap.VM->isArray())
        continue;
      std::string Name = Cap.Var->getName().str();
      Extra += "size_t nanort_o_" + Name + " = (" + ArgsSize + " + 15) / 16 * 16;\n";
      ArgsSize = "nanort_o_" + Name + " + sizeof " + View(Name);
    }
  C << "{ " << L.str() << Extra
    << "nanort_task *nanort_t = nanort_created(nanort_task_create(&nanort_site_" << Id
    << ", " << ArgsSize << "));\n";
  if (CPP) {
    C << "::new (nanort_task_args(nanort_t)) " << Args << "{";
    if (!Plan.ThisType.isNull())
      C << (Plan.Nested ? "nanort_self, " : "this, ");
    for (const Capture &Cap : Caps) {
      std::string Name = Cap.Var->getName().str();
      if (Cap.How == Sharing::Shared)
        C << "__builtin_addressof(" << Name << "), ";
      else if (Cap.How == Sharing::Firstprivate)
        C << (Cap.Var->getType().getNonReferenceType()->isArrayType() ? "{}, " : Name + ", ");
    }
    C << "0};\n";
    for (const Capture &Cap : Caps)
      if (Cap.How == Sharing::Firstprivate &&
          Cap.Var->getType().getNonReferenceType()->isArrayType()) {
        std::string Name = Cap.Var->getName().str();
        C << "__builtin_memcpy((void *)&static_cast<" << Args
          << " *>(nanort_task_args(nanort_t))->nanort_c_" << Name << ", (const void *)&" << Name
          << ", sizeof " << Name << ");\n";
      }
  } else {
    C << ArgsType << " *" << A << " = (" << ArgsType << " *)nanort_task_args(nanort_t);\n";
    for (const Capture &Cap : Caps) {
      std::string Name = Cap.Var->getName().str();
      if (Cap.VM) {
        std::vector<std::string> Lengths = vmLengths(*Cap.VM, View(Name));
        for (unsigned K = 0; K < Lengths.size(); ++K)
          C << A << "->nanort_d_" << Name << "_" << K << " = " << Lengths[K] << ";\n";
        if (Cap.How == Sharing::Shared)
          C << A << "->" << Name << " = (void *)&" << View(Name) << ";\n";
        else if (!Cap.VM->isArray()) {
          if (Cap.How == Sharing::Firstprivate)
            C << A << "->" << Name << " = (void *)" << View(Name) << ";\n";
        } else {
          C << A << "->nanort_o_" << Name << " = nanort_o_" << Name << ";\n";
          if (Cap.How == Sharing::Firstprivate)
            C << "__builtin_memcpy((char *)" << A << " + nanort_o_" << Name
              << ", (const void *)&" << View(Name) << ", sizeof " << View(Name) << ");\n";
        }
        continue;
      }
      if (Cap.How == Sharing::Shared)
        C << A << "->" << Name << " = &" << View(Name) << ";\n";
      else if (Cap.How == Sharing::Firstprivate)
        C << "__builtin_memcpy((void *)&" << A << "->" << Name << ", (const void *)&"
          << View(Name) << ", sizeof " << View(Name) << ");\n";
      else if (!Outer || !Outer->Views.count(Name)) // the task has its own: no unused warning
        C << "(void)" << Name << ";\n";
    }
  }
  const Clause *LabelC = Task.find(ClauseKind::Label);
  std::vector<const VarDecl *> Scope;
  for (const Capture &Cap : Caps)
    Scope.push_back(Cap.Var);
  emitTaskClauses(C, Task, LabelC ? "task '" + LabelC->Words[0] + "'" : "inline task", Scope,
                  nullptr);
  C << "nanort_check(nanort_task_submit(nanort_t), \"nanort_task_submit\"); }";
  C.at(End);
  RW.RemoveText(CharSourceRange::getCharRange(Begin, End));
  RW.InsertTextAfter(Begin, C.str());

  SourceLocation Top = topLevelStart(Fn);
  if (!CPP) {
    F.at(Top);
    RW.InsertTextAfter(Top, enclosingPrototype(Fn, Cand.S, Top) + F.str());
  }
  if (PreludeAt.isInvalid() || SM.isBeforeInTranslationUnit(Top, PreludeAt))
    PreludeAt = Top;
}

// C: the outlined body goes before its function, so a body that calls that function (a
// recursive fib) needs a declaration of it there, when the function has none before.
std::string Lowerer::enclosingPrototype(FunctionDecl *Fn, Stmt *Body, SourceLocation Top) {
  const FunctionDecl *First = Fn->getCanonicalDecl();
  if (!Fn->hasWrittenPrototype() || !Fn->getBody() || Prototyped.count(First) ||
      SM.isBeforeInTranslationUnit(SM.getExpansionLoc(First->getLocation()), Top))
    return "";
  FunctionRefFinder Finder;
  Finder.TraverseStmt(Body);
  bool Calls = false;
  for (DeclRefExpr *E : Finder.Refs)
    Calls |= E->getDecl()->getCanonicalDecl() == First;
  if (!Calls)
    return "";
  bool Invalid = false;
  StringRef Head = Lexer::getSourceText(
      CharSourceRange::getCharRange(SM.getExpansionLoc(Fn->getBeginLoc()),
                                    SM.getExpansionLoc(Fn->getBody()->getBeginLoc())),
      SM, LO, &Invalid);
  if (Invalid || Head.empty())
    return "";
  Prototyped.insert(First);
  return "\n" + Head.rtrim().str() + ";";
}

void Lowerer::lowerCritical(const Pragma &P, const Candidate &C) {
  JumpFinder JF;
  JF.TraverseStmt(C.S);
  if (JF.Found)
    return error(JF.Found->getBeginLoc(), std::string(isa<ReturnStmt>(JF.Found) ? "'return'"
                                                                               : "'goto'") +
                                              " cannot leave a critical region");
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
    return error(P.DirLoc, "'#pragma " + P.Namespace + " atomic' applies to 'x op= expr;', "
                           "'x++;', '++x;', 'x--;' or '--x;'");
  // A type that depends on a template parameter is checked where the template is
  // instantiated, by a static_assert in the lowered code.
  bool Dependent = LHS->isTypeDependent();
  if (!Dependent && !LHS->getType()->isScalarType())
    return error(P.DirLoc, "the target of an atomic update must have a scalar type");
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
            ")>>::value, \"the target of an atomic update must have a scalar type\"); ";
  Code += "__typeof__(" + L + ") *nanort_p = &(" + L + "); __typeof__(" + L +
                     ") nanort_old, nanort_new; __atomic_load(nanort_p, &nanort_old, "
                     "__ATOMIC_RELAXED); do { nanort_new = nanort_old " + Op + " (" + R +
                     "); } while (!__atomic_compare_exchange(nanort_p, &nanort_old, "
                     "&nanort_new, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)); }";
  RW.RemoveText(CharSourceRange::getCharRange(C.Begin, End));
  RW.InsertTextAfter(C.Begin, Code);
}

bool Lowerer::run(bool DefineKernelKeywords, std::string &Out,
                  std::map<std::string, std::string> &Headers) {
  Collector Col(SM);
  Col.TraverseDecl(Ctx.getTranslationUnitDecl());
  Candidates = std::move(Col.Candidates);
  Bodies = std::move(Col.Bodies);
  Vars = std::move(Col.Vars);

  // Pair each target with the task pragma after it; find what each pragma applies to.
  struct Work {
    Pragma *P;
    Pragma *Target = nullptr;
    const Candidate *C = nullptr;
    bool Skip = false;
    bool Version = false; // its target has 'implements'
  };
  std::vector<Work> Works;
  for (size_t I = 0; I < Pragmas.size(); ++I) {
    Pragma &P = Pragmas[I];
    if (!P.Valid)
      continue;
    if (P.Dir->Kind == DirectiveKind::Target) {
      Pragma *Next = I + 1 < Pragmas.size() ? &Pragmas[I + 1] : nullptr;
      if (!Next || Next->Dir == nullptr || Next->Dir->Kind != DirectiveKind::Task ||
          !onlyBlankBetween(P.End, Next->Begin)) {
        error(P.DirLoc, dirName(P) + " must be followed by a '#pragma " + P.Namespace +
                            " task' line");
        continue;
      }
      continue;
    }
    Work W{&P};
    bool InHeader = !SM.isWrittenInMainFile(P.Begin);
    if (InHeader && P.Dir->Kind != DirectiveKind::Task) {
      error(P.DirLoc, "in an included file, only task pragmas on function declarations are "
                      "lowered yet");
      continue;
    }
    if (I > 0 && Pragmas[I - 1].Dir && Pragmas[I - 1].Dir->Kind == DirectiveKind::Target &&
        onlyBlankBetween(Pragmas[I - 1].End, P.Begin)) {
      if (!Pragmas[I - 1].Valid)
        continue;
      W.Target = &Pragmas[I - 1];
    }
    if (P.Dir->Standalone) {
      bool Inside = false;
      for (FunctionDecl *FD : Bodies) {
        SourceRange R = FD->getBody()->getSourceRange();
        if (SM.isBeforeInTranslationUnit(SM.getExpansionLoc(R.getBegin()), P.Begin) &&
            SM.isBeforeInTranslationUnit(P.Begin, SM.getExpansionLoc(R.getEnd())))
          Inside = true;
      }
      if (!Inside) {
        error(P.DirLoc, dirName(P) + " must be inside a function body");
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
          error(P.DirLoc, "a macro that holds _Pragma(\"" + P.Namespace + " " + P.DirSpelling +
                              " ...\") must expand to that _Pragma alone");
          continue;
        }
      }
      W.C = following(P);
      bool WantsDecl = P.Dir->Kind == DirectiveKind::Task;
      if (!W.C && WantsDecl && insideTemplateHead(P)) {
        error(P.DirLoc, dirName(P) + " goes before 'template <...>', not between the template "
                                     "head and the function");
        continue;
      }
      if (W.C && WantsDecl) {
        // OmpSs allows a function task declared in a block; nanort wants it at file scope.
        const FunctionDecl *Local = nullptr;
        if (W.C->FD && W.C->FD->getLexicalDeclContext()->isFunctionOrMethod())
          Local = W.C->FD;
        if (auto *DS = dyn_cast_or_null<DeclStmt>(W.C->S))
          for (Decl *D : DS->decls())
            if (auto *F = dyn_cast<FunctionDecl>(D))
              Local = F;
        if (Local) {
          error(P.DirLoc, "a task pragma on a function declared inside a function is not "
                          "supported: declare '" + Local->getNameAsString() +
                              "' with its pragma at " + (CPP ? "namespace" : "file") +
                              " scope (its calls after that are tasks)");
          continue;
        }
      }
      if (!W.C || (W.C->FD && !WantsDecl)) {
        error(P.DirLoc, dirName(P) + (WantsDecl ? " must be followed by a function "
                                                  "declaration or a statement"
                                                : " must be followed by a statement"));
        continue;
      }
      const Clause *Implements = W.Target ? W.Target->find(ClauseKind::Implements) : nullptr;
      // In a header: declarations (kernels, and functions defined in a source file).
      if (InHeader && !W.C->FD) {
        error(P.DirLoc, "in an included file, a task pragma applies to function declarations "
                        "only (inline tasks are lowered in source files)");
        continue;
      }
      if (InHeader && W.C->FD->doesThisDeclarationHaveABody()) {
        error(P.DirLoc, "in an included file, a task pragma on a function definition is not "
                        "lowered yet: declare '" + W.C->FD->getNameAsString() +
                            "' with its pragma there and define it in a source file");
        continue;
      }
      if (Implements && !W.C->FD) {
        error(Implements->Loc, "'implements' applies to a function declaration (a version of "
                               "a function task), not to an inline task");
        continue;
      }
      if (W.Target && !W.C->FD) {
        error(W.Target->DirLoc, "'#pragma " + P.Namespace + " target' applies to function "
                                "declarations only");
        continue;
      }
    }
    Works.push_back(W);
  }
  // From here on, a construct with an error is skipped and the others still lowered, so that
  // one compile reports every error; the text is not used when there was any.

  // The pragma lines go away (their lines stay, empty).
  for (const Pragma &P : Pragmas) {
    RW.RemoveText(CharSourceRange::getCharRange(P.Begin, P.End));
    if (SM.getPresumedLineNumber(P.Begin) != SM.getPresumedLineNumber(P.End))
      RW.InsertTextAfter(P.End, Code::marker(SM, P.End));
  }

  // One task pragma per function, reported at the second one.
  for (Work &W : Works)
    if (W.P->Dir->Kind == DirectiveKind::Task && W.C && W.C->FD &&
        !TaskFunctions.insert(W.C->FD->getCanonicalDecl()).second) {
      error(W.P->DirLoc, "function '" + W.C->FD->getNameAsString() +
                             "' already has a task pragma");
      W.Skip = true;
    }

  // The uses of function tasks (where their code goes, header kernels' wrappers).
  RefCollector RC(TaskFunctions);
  RC.TraverseDecl(Ctx.getTranslationUnitDecl());
  Refs = std::move(RC.Refs);

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

  for (Work &W : Works)
    if (W.P->Dir->Kind == DirectiveKind::Task && W.C && !W.C->FD)
      planInlineTask(*W.P, *W.C, Plans[W.P]);
  for (auto &A : Plans)
    for (auto &B : Plans)
      if (A.first != B.first && A.second.OK && B.second.OK &&
          SM.isBeforeInTranslationUnit(B.second.Begin, A.second.Begin) &&
          SM.isBeforeInTranslationUnit(A.second.Begin, B.second.End))
        A.second.Nested = true;

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
        lowerInlineTask(*W.P, *W.C, Plans[W.P], PreludeAt);
      }
      break;
    case DirectiveKind::Critical:
      lowerCritical(*W.P, *W.C);
      break;
    case DirectiveKind::Atomic:
      lowerAtomic(*W.P, *W.C);
      break;
    case DirectiveKind::Target:
      break;
    }
    if (W.P->Dir->Kind != DirectiveKind::Task) {
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
  if (Diags.hasErrors())
    return false;

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

} // namespace

bool lowerMainFile(ASTContext &Ctx, std::vector<Pragma> &Pragmas, DiagSink &Diags,
                   const LoweringOptions &Options, bool DefineKernelKeywords, std::string &Out,
                   std::map<std::string, std::string> &Headers) {
  Lowerer L(Ctx, Pragmas, Diags, Options);
  return L.run(DefineKernelKeywords, Out, Headers);
}

} // namespace nanort
