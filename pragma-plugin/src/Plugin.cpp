//===- Plugin.cpp - The nanort pragma plugin for Clang 19 --------------------===//
//
// An AddBeforeMainAction plugin. Before the real compile starts, it parses the main file in
// a private CompilerInstance (syntax only) with its own '#pragma omp' and '#pragma oss'
// handlers, lowers the pragmas with a Rewriter, and hands the lowered text to the real compile
// under the original file name. Its own errors are reported through the real compile's
// DiagnosticsEngine, so the compile fails at the user's line and column.
//
//   clang-19 -fplugin=nanort-plugin.so [-fplugin-arg-nanort-emit=out.c] -c f.c
//
//===----------------------------------------------------------------------===//
#include "Lowering.h"
#include "Pragma.h"

#include "clang/AST/ASTConsumer.h"
#include "clang/AST/ASTContext.h"
#include "clang/Basic/Version.h"
#include "clang/Frontend/CompilerInstance.h"
#include "clang/Frontend/FrontendAction.h"
#include "clang/Frontend/FrontendActions.h"
#include "clang/Frontend/FrontendPluginRegistry.h"
#include "clang/Lex/Lexer.h"
#include "clang/Lex/Pragma.h"
#include "clang/Lex/Preprocessor.h"
#include "clang/Lex/PreprocessorOptions.h"
#include "clang/Sema/Sema.h"
#include "clang/Sema/SemaConsumer.h"
#include "llvm/Support/Path.h"
#include <map>
#include <set>
#include "llvm/Support/raw_ostream.h"

#if CLANG_VERSION_MAJOR != 19
#error "the nanort plugin is written against Clang 19"
#endif

using namespace clang;

namespace nanort {
namespace {

// The private parse instantiates the registered plugins again; they must stay out of it.
bool InAnalysis = false;

std::string directiveLine(const std::string &NS, const std::string &Dir) {
  return "'#pragma " + NS + " " + Dir + "'";
}

// Records the pragmas of the main file during the private parse.
class RecordingHandler : public PragmaHandler {
public:
  RecordingHandler(StringRef NS, std::vector<Pragma> &Out, DiagSink &Diags)
      : PragmaHandler(NS), Out(Out), Diags(Diags) {}

  void HandlePragma(Preprocessor &PP, PragmaIntroducer Intro, Token &First) override {
    SourceManager &SM = PP.getSourceManager();
    Toks T;
    Token Tok;
    PP.LexUnexpandedToken(Tok);
    SourceLocation DirLoc = Tok.getLocation();
    std::string DirName;
    if (Tok.isNot(tok::eod) && Tok.getIdentifierInfo())
      DirName = Tok.getIdentifierInfo()->getName().str();
    if (Tok.isNot(tok::eod))
      PP.LexUnexpandedToken(Tok);
    while (Tok.isNot(tok::eod) && Tok.isNot(tok::eof)) {
      T.push_back({Tok.getKind(), PP.getSpelling(Tok), Tok.getLocation()});
      PP.LexUnexpandedToken(Tok);
    }
    SourceLocation Eod = Tok.getLocation();
    SourceLocation Begin = Intro.Loc;
    if (Intro.Kind == PIK__Pragma) {
      // _Pragma("omp task ..."), written in the main file or by a macro used there: the
      // pragma stands where the _Pragma (or the macro invocation) is, and that text goes.
      Begin = SM.getExpansionLoc(Intro.Loc);
      if (!SM.isWrittenInMainFile(Begin) || SM.isInSystemHeader(Begin)) {
        if (!SM.isInSystemHeader(Begin))
          Diags.report(DiagId::PragmaOperatorOutsideMain, Begin, {getName().str()});
        return;
      }
      SourceLocation Last = operatorEnd(PP, Intro.Loc);
      if (Last.isInvalid()) {
        Diags.report(DiagId::PragmaOperatorEnd, Begin);
        return;
      }
      DirLoc = Begin;
      for (auto &K : T)
        K.Loc = Begin;
      Eod = Lexer::getLocForEndOfToken(Last, 0, SM, PP.getLangOpts());
    } else if (Intro.Kind != PIK_HashPragma) {
      Diags.report(DiagId::MicrosoftPragma, SM.getExpansionLoc(Intro.Loc), {getName().str()});
      return;
    }
    // Included files: task pragmas on function declarations are lowered (the file that
    // defines the function renames it); a file included twice is recorded once.
    if (SM.isInSystemHeader(Begin))
      return;
    if (!SM.isWrittenInMainFile(Begin)) {
      std::pair<FileID, unsigned> D = SM.getDecomposedLoc(Begin);
      OptionalFileEntryRef FE = SM.getFileEntryRefForID(D.first);
      if (!FE || !Seen.insert({FE->getName().str(), D.second}).second)
        return;
    }
    Pragma P;
    P.Namespace = getName().str();
    P.DirSpelling = DirName;
    P.Begin = Begin;
    P.Operator = Intro.Kind == PIK__Pragma;
    P.DirLoc = DirLoc;
    P.End = Eod;
    P.Dir = findDirective(DirName);
    // 'declare simd' is a hint like 'simd'; 'declare reduction' and 'declare target' are not.
    if (DirName == "declare" && !T.empty() && T[0].Text == "simd")
      P.Dir = findDirective("simd");
    if (DirName.empty()) {
      Diags.report(DiagId::ExpectedDirective, DirLoc, {P.Namespace});
    } else if (!P.Dir) {
      if (isOtherOpenMPDirective(DirName)) {
        Diags.report(DiagId::UnsupportedDirective, DirLoc, {directiveLine(P.Namespace, DirName)});
        if (std::optional<DiagId> Instead = insteadOfDirective(DirName))
          Diags.report(*Instead, DirLoc, {P.Namespace});
      } else
        Diags.report(DiagId::UnknownDirective, DirLoc, {directiveLine(P.Namespace, DirName)});
    } else if (P.Dir->Kind == DirectiveKind::Ignored && DirName != "taskyield") {
      P.Valid = true; // simd and declare simd: hints whose clauses (safelen, ...) are not read
    } else {
      // Constant section bounds may be written with macros (x[0;-N]): their definitions here.
      MacroLookup Macros = [&PP](const std::string &Name, Toks &Out) {
        const MacroInfo *MI = PP.getMacroInfo(PP.getIdentifierInfo(Name));
        if (!MI || !MI->isObjectLike())
          return false;
        for (const Token &K : MI->tokens())
          Out.push_back({K.getKind(), PP.getSpelling(K), K.getLocation()});
        return true;
      };
      parsePragma(P, T, Eod, Diags, &Macros);
    }
    bool AfterOpenCLTarget = false;
    if (!Out.empty() && Out.back().Valid && Out.back().Dir &&
        Out.back().Dir->Kind == DirectiveKind::Target) {
      const Clause *Dev = Out.back().find(ClauseKind::Device);
      AfterOpenCLTarget = Dev && Dev->Words.size() == 1 && Dev->Words[0] == "opencl";
    }
    Out.push_back(std::move(P));
    // Also after a task pragma with errors: its kernel's body is still OpenCL C.
    if (AfterOpenCLTarget && Out.back().Dir && Out.back().Dir->Kind == DirectiveKind::Task &&
        !Out.back().Operator && SM.isWrittenInMainFile(Intro.Loc))
      skipKernelBody(PP, Out.back());
  }

private:
  std::vector<Pragma> &Out;
  DiagSink &Diags;
  std::set<std::pair<std::string, unsigned>> Seen;

  // The last token of a _Pragma: the end of the macro invocation that expands to it, or the
  // ')' of _Pragma("...") written in the file. Invalid when the text is not as expected.
  static SourceLocation operatorEnd(Preprocessor &PP, SourceLocation Loc) {
    SourceManager &SM = PP.getSourceManager();
    if (Loc.isMacroID())
      return SM.getExpansionRange(Loc).getEnd();
    std::pair<FileID, unsigned> At = SM.getDecomposedLoc(Loc);
    bool Invalid = false;
    StringRef Buf = SM.getBufferData(At.first, &Invalid);
    if (Invalid || At.second >= Buf.size())
      return SourceLocation();
    Lexer Raw(SM.getLocForStartOfFile(At.first), PP.getLangOpts(), Buf.begin(),
              Buf.begin() + At.second, Buf.end());
    Token T;
    Raw.LexFromRawLexer(T);
    if (T.isNot(tok::raw_identifier) || T.getRawIdentifier() != "_Pragma")
      return SourceLocation();
    Raw.LexFromRawLexer(T);
    if (T.isNot(tok::l_paren))
      return SourceLocation();
    Raw.LexFromRawLexer(T);
    if (!tok::isStringLiteral(T.getKind()))
      return SourceLocation();
    Raw.LexFromRawLexer(T);
    return T.is(tok::r_paren) ? T.getLocation() : SourceLocation();
  }

  // Single-source OpenCL: when a kernel definition follows the task pragma, the preprocessor
  // skips its body (OpenCL C, which the host parse cannot compile: get_global_id, barrier)
  // and the parser gets its declaration instead ('__kernel void k(...);'). Anything else
  // after the pragma (a declaration, a statement, something this scan does not recognise) is
  // left to the parser, which reports what is wrong with it.
  void skipKernelBody(Preprocessor &PP, Pragma &P) {
    SourceManager &SM = PP.getSourceManager();
    const LangOptions &LO = PP.getLangOpts();
    std::pair<FileID, unsigned> At = SM.getDecomposedLoc(P.End);
    bool Invalid = false;
    StringRef Buf = SM.getBufferData(At.first, &Invalid);
    auto *L = static_cast<Lexer *>(PP.getCurrentLexer());
    if (Invalid || At.second > Buf.size() || !L || L->getFileID() != At.first ||
        L->getBufferLocation() < Buf.begin() || L->getBufferLocation() > Buf.end())
      return;
    Lexer Raw(SM.getLocForStartOfFile(At.first), LO, Buf.begin(), Buf.begin() + At.second,
              Buf.end());
    std::vector<Token> Decl;
    Token T;
    int Paren = 0;
    for (;;) { // the declarator, up to the '{' of the body
      Raw.LexFromRawLexer(T);
      if (T.isOneOf(tok::eof, tok::hash, tok::r_brace) || (T.is(tok::semi) && Paren == 0))
        return;
      if (T.is(tok::l_paren))
        ++Paren;
      else if (T.is(tok::r_paren))
        --Paren;
      if (T.is(tok::l_brace)) {
        if (Paren != 0)
          return;
        break;
      }
      Decl.push_back(T);
    }
    if (Decl.empty() || Decl.back().isNot(tok::r_paren))
      return;
    bool Kernel = false; // spelled as an OpenCL kernel
    for (const Token &K : Decl)
      if (K.is(tok::raw_identifier) && K.getRawIdentifier() == "__kernel")
        Kernel = true;
    if (!Kernel)
      return;
    SourceLocation Open = T.getLocation();
    for (int Depth = 1; Depth > 0;) { // the body; its directives are OpenCL's
      Raw.LexFromRawLexer(T);
      if (T.is(tok::eof))
        return;
      if (T.is(tok::l_brace))
        ++Depth;
      else if (T.is(tok::r_brace))
        --Depth;
    }
    SourceLocation Close = T.getLocation();
    unsigned After = SM.getFileOffset(Close) + 1;
    if (After > Buf.size() ||
        Buf.begin() + After <= L->getBufferLocation()) // the lexer must still be before it
      return;
    auto Toks = std::make_unique<Token[]>(Decl.size() + 1);
    for (size_t I = 0; I < Decl.size(); ++I) {
      Token K = Decl[I];
      if (K.is(tok::raw_identifier))
        PP.LookUpIdentifierInfo(K);
      Toks[I] = K;
    }
    Token Semi;
    Semi.startToken();
    Semi.setKind(tok::semi);
    Semi.setLocation(Open);
    Semi.setLength(1);
    Toks[Decl.size()] = Semi;
    L->seek(After, /*IsAtStartOfLine=*/false);
    PP.EnterTokenStream(std::move(Toks), Decl.size() + 1, /*DisableMacroExpansion=*/false,
                        /*IsReinject=*/false);
    P.KernelBegin = Decl.front().getLocation();
    P.KernelOpen = Open;
    P.KernelClose = Close;
  }
};

struct AnalysisResult {
  std::vector<StoredDiag> Diags;
  bool ClangErrors = false;
  bool Lowered = false;
  std::string Text;
  std::map<std::string, std::string> Headers; // rewritten included files, by name
  // The original text with the bodies of single-source kernels blanked (lines kept), for
  // the real compile when lowering failed: it reports the errors of host code only.
  std::string Fallback;
  // The parse failed, and an included file of the user's uses OpenCL or CUDA keywords (a
  // header that declares kernels): worth parsing again with the keywords defined away.
  bool HeadersUseKernelKeywords = false;
  unsigned Errors = 0; // the parse's errors, of every kind
};

bool usesKernelKeywords(StringRef Text) {
  for (const char *const *K = KernelKeywords; *K; ++K)
    if (Text.contains(*K))
      return true;
  return false;
}

// Takes the "omp" namespace from the Parser (which registers its own handler after the
// plugins' ones) and adds "oss".
void installHandler(Preprocessor &PP, PragmaHandler *Omp, PragmaHandler *Oss) {
  EmptyPragmaHandler Probe("omp");
  PP.RemovePragmaHandler(&Probe);
  PP.AddPragmaHandler(Omp);
  PP.AddPragmaHandler(Oss);
}

class AnalysisConsumer : public SemaConsumer {
public:
  AnalysisConsumer(AnalysisResult &R, bool KernelKeywords, const LoweringOptions &Options)
      : R(R), KernelKeywords(KernelKeywords), Options(Options) {}

  void InitializeSema(Sema &S) override {
    Preprocessor &PP = S.getPreprocessor();
    Diags = std::make_unique<DiagSink>(PP.getSourceManager());
    installHandler(PP, new RecordingHandler("omp", Pragmas, *Diags),
                   new RecordingHandler("oss", Pragmas, *Diags));
  }

  void HandleTranslationUnit(ASTContext &Ctx) override {
    if (!Diags)
      return;
    if (Ctx.getDiagnostics().hasErrorOccurred()) {
      // The real compile reports the program's own errors; lowering an incomplete AST
      // would only add noise.
      R.ClangErrors = true;
      SourceManager &SM = Ctx.getSourceManager();
      for (unsigned I = 0; !KernelKeywords && I < SM.local_sloc_entry_size(); ++I) {
        const SrcMgr::SLocEntry &E = SM.getLocalSLocEntry(I);
        if (!E.isFile() || E.getFile().getFileCharacteristic() != SrcMgr::C_User)
          continue;
        if (std::optional<StringRef> Data = E.getFile().getContentCache().getBufferDataIfLoaded())
          R.HeadersUseKernelKeywords |= usesKernelKeywords(*Data);
      }
    } else {
      R.Lowered =
          lowerMainFile(Ctx, Pragmas, *Diags, Options, KernelKeywords, R.Text, R.Headers);
    }
    R.Diags = Diags->diags();
    SourceManager &SM = Ctx.getSourceManager();
    for (const Pragma &P : Pragmas) {
      if (P.KernelClose.isInvalid())
        continue;
      if (R.Fallback.empty())
        R.Fallback = SM.getBufferData(SM.getMainFileID()).str();
      unsigned B = SM.getFileOffset(P.KernelOpen), E = SM.getFileOffset(P.KernelClose);
      if (B >= E || E >= R.Fallback.size())
        continue;
      R.Fallback[B] = ';';
      for (unsigned I = B + 1; I <= E; ++I)
        if (R.Fallback[I] != '\n')
          R.Fallback[I] = ' ';
    }
  }

private:
  AnalysisResult &R;
  bool KernelKeywords;
  const LoweringOptions &Options;
  std::vector<Pragma> Pragmas;
  std::unique_ptr<DiagSink> Diags;
};

class AnalysisAction : public ASTFrontendAction {
public:
  AnalysisAction(AnalysisResult &R, bool KernelKeywords, const LoweringOptions &Options)
      : R(R), KernelKeywords(KernelKeywords), Options(Options) {}
  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &, StringRef) override {
    return std::make_unique<AnalysisConsumer>(R, KernelKeywords, Options);
  }

private:
  AnalysisResult &R;
  bool KernelKeywords;
  const LoweringOptions &Options;
};

// In the real compile: every pragma of the files the plugin lowered is gone, so a pragma seen
// here was missed (a safety net: an error, never a dropped task). After an error the original
// text is compiled, and its pragmas are dropped quietly (they were reported already).
class GuardHandler : public PragmaHandler {
public:
  GuardHandler(StringRef NS, bool Strict) : PragmaHandler(NS), Strict(Strict) {}
  void HandlePragma(Preprocessor &PP, PragmaIntroducer Intro, Token &First) override {
    Token Tok;
    PP.LexUnexpandedToken(Tok);
    std::string Dir =
        Tok.getIdentifierInfo() ? Tok.getIdentifierInfo()->getName().str() : std::string();
    while (Tok.isNot(tok::eod) && Tok.isNot(tok::eof))
      PP.LexUnexpandedToken(Tok);
    SourceManager &SM = PP.getSourceManager();
    if (!Strict || SM.isInSystemHeader(Intro.Loc))
      return;
    reportDiag(PP.getDiagnostics(), Intro.Loc, DiagId::NotLowered,
               {directiveLine(getName().str(), Dir)});
  }

private:
  bool Strict;
};

class GuardConsumer : public SemaConsumer {
public:
  explicit GuardConsumer(bool Strict) : Strict(Strict) {}
  void InitializeSema(Sema &S) override {
    installHandler(S.getPreprocessor(), new GuardHandler("omp", Strict),
                   new GuardHandler("oss", Strict));
  }

private:
  bool Strict;
};

// Sets Found at an 'omp' or 'oss' pragma outside system headers.
class ScanHandler : public PragmaHandler {
public:
  ScanHandler(StringRef NS, bool &Found) : PragmaHandler(NS), Found(Found) {}
  void HandlePragma(Preprocessor &PP, PragmaIntroducer Intro, Token &) override {
    if (!PP.getSourceManager().isInSystemHeader(Intro.Loc))
      Found = true;
    PP.DiscardUntilEndOfDirective();
  }

private:
  bool &Found;
};

// Preprocesses the file only: cheaper than the parse, for files whose own text has no
// pragma but whose headers may.
class ScanAction : public PreprocessorFrontendAction {
public:
  explicit ScanAction(bool &Found) : Found(Found) {}

protected:
  void ExecuteAction() override {
    Preprocessor &PP = getCompilerInstance().getPreprocessor();
    PP.AddPragmaHandler(new ScanHandler("omp", Found));
    PP.AddPragmaHandler(new ScanHandler("oss", Found));
    PP.EnterMainSourceFile();
    Token Tok;
    do
      PP.Lex(Tok);
    while (Tok.isNot(tok::eof) && !Found);
  }

private:
  bool &Found;
};

// Whether the text may hold a '#pragma omp|oss' or a _Pragma.
bool mayHavePragmas(StringRef Text) {
  if (Text.contains("_Pragma") || Text.contains("__pragma"))
    return true;
  for (size_t I = Text.find("pragma"); I != StringRef::npos; I = Text.find("pragma", I + 1)) {
    size_t J = I + 6;
    while (J < Text.size() && (Text[J] == ' ' || Text[J] == '\t'))
      ++J;
    StringRef Rest = Text.substr(J);
    if (Rest.starts_with("omp") || Rest.starts_with("oss"))
      return true;
  }
  return false;
}

class NanortAction : public PluginASTAction {
public:
  bool ParseArgs(const CompilerInstance &CI, const std::vector<std::string> &Args) override {
    for (const std::string &A : Args) {
      StringRef S(A);
      if (S.consume_front("emit=") && !S.empty()) {
        EmitPath = S.str();
        continue;
      }
      if (S.consume_front("emit-dir=") && !S.empty()) {
        EmitDir = S.str();
        continue;
      }
      if (S == "lower-only") { // for other host compilers: no second look at the text
        LowerOnly = true;
        continue;
      }
      if (S == "no-copy-deps" || S == "copy-deps") { // the default of device tasks; last wins
        Options.NoCopyDepsByDefault = S == "no-copy-deps";
        continue;
      }
      reportDiag(CI.getDiagnostics(), SourceLocation(), DiagId::UnknownArgument, {A});
      return false;
    }
    return true;
  }

  ActionType getActionType() override { return AddBeforeMainAction; }

  std::unique_ptr<ASTConsumer> CreateASTConsumer(CompilerInstance &CI, StringRef) override {
    if (InAnalysis)
      return std::make_unique<ASTConsumer>();
    const LangOptions &LO = CI.getLangOpts();
    if (LO.OpenCL || LO.CUDA || LO.ObjC || LO.HLSL)
      return std::make_unique<ASTConsumer>();
    SourceManager &SM = CI.getSourceManager();
    DiagnosticsEngine &D = CI.getDiagnostics();
    FileID Main = SM.getMainFileID();
    OptionalFileEntryRef FE = SM.getFileEntryRefForID(Main);
    if (!FE) {
      reportDiag(D, SourceLocation(), DiagId::InputNotFile);
      return std::make_unique<ASTConsumer>();
    }
    StringRef Text = SM.getBufferData(Main);
    bool Kernel = usesKernelKeywords(Text);
    Preprocessor &PP = CI.getPreprocessor();
    if (Kernel)
      PP.setPredefines(PP.getPredefines() + "\n" + kernelKeywordDefines());

    std::string Lowered;
    bool OK = true, Replace = false;
    if (mayHavePragmas(Text) || headersHavePragmas(CI)) {
      AnalysisResult R = analyse(CI, Kernel, Options);
      if (R.HeadersUseKernelKeywords) {
        // A header declares kernels (versions) with keywords that this file does not use.
        // They are defined away when that explains errors, also when the file has errors of
        // its own: the compile then reports those, not "unknown type name '__kernel'" in the
        // header.
        AnalysisResult Again = analyse(CI, /*Kernel=*/true, Options);
        if (!Again.ClangErrors || Again.Errors < R.Errors) {
          R = std::move(Again);
          Kernel = true;
          PP.setPredefines(PP.getPredefines() + "\n" + kernelKeywordDefines());
        }
      }
      // Warnings follow -w and -Werror as clang's own do (clang 19 does not apply them to a
      // plugin's diagnostics); the notes after a warning left out go too.
      bool SkipNotes = false, HasErrors = false;
      for (const StoredDiag &SD : R.Diags) {
        if (SD.Severity == DiagSeverity::Note && SkipNotes)
          continue;
        SkipNotes = false;
        FileID F;
        if (SD.File == FE->getName())
          F = Main;
        else if (OptionalFileEntryRef H = CI.getFileManager().getOptionalFileRef(SD.File))
          F = SM.getOrCreateFileID(*H, SrcMgr::C_User);
        SourceLocation L;
        if (F.isValid())
          L = SM.getLocForStartOfFile(F).getLocWithOffset(SD.Offset);
        DiagnosticsEngine::Level Level = diagLevel(SD.Severity);
        if (SD.Severity == DiagSeverity::Warning) {
          if (D.getIgnoreAllWarnings() ||
              (L.isValid() && D.getSuppressSystemWarnings() && SM.isInSystemHeader(L))) {
            SkipNotes = true;
            continue;
          }
          if (D.getWarningsAsErrors())
            Level = DiagnosticsEngine::Error;
        }
        HasErrors |= SD.Severity == DiagSeverity::Error;
        // Formatted from Diagnostics.def by the private parse's DiagSink.
        DiagnosticBuilder B = D.Report(L, D.getCustomDiagID(Level, "%0"));
        B << SD.Message;
        if (SD.HasFix && L.isValid())
          B << FixItHint::CreateReplacement(
              CharSourceRange::getCharRange(L, L.getLocWithOffset(SD.FixLength)), SD.FixText);
      }
      // Warnings do not stop the lowering (with -Werror the compile fails all the same).
      OK = R.Lowered && !R.ClangErrors && !HasErrors;
      if (OK) {
        Lowered = std::move(R.Text);
        Replace = true;
        // Included files whose pragmas were lowered: the real compile reads them rewritten.
        for (auto &H : R.Headers)
          if (OptionalFileEntryRef HF = CI.getFileManager().getOptionalFileRef(H.first))
            SM.overrideFileContents(*HF, llvm::MemoryBuffer::getMemBufferCopy(H.second, H.first));
      }
      if (!OK && !R.Fallback.empty()) {
        SM.overrideFileContents(*FE,
                                llvm::MemoryBuffer::getMemBufferCopy(R.Fallback, FE->getName()));
        SM.setMainFileID(SM.createFileID(*FE, SourceLocation(), SrcMgr::C_User));
      }
    } else {
      Lowered = (Kernel ? kernelKeywordDefines() : std::string()) + "#line 1 \"" +
                escapeStringLiteral(FE->getName()) + "\"\n" + Text.str();
    }

    if (Replace) {
      SM.overrideFileContents(*FE, llvm::MemoryBuffer::getMemBufferCopy(Lowered, FE->getName()));
      SM.setMainFileID(SM.createFileID(*FE, SourceLocation(), SrcMgr::C_User));
    }
    // emit-dir: <dir>/<stem>.nanort<ext>, so that several sources of one command do not
    // overwrite each other.
    std::string Path = EmitPath;
    if (Path.empty() && !EmitDir.empty())
      Path = EmitDir + "/" + llvm::sys::path::stem(FE->getName()).str() + ".nanort" +
             llvm::sys::path::extension(FE->getName()).str();
    if (OK && !Path.empty()) {
      std::error_code EC;
      llvm::raw_fd_ostream OS(Path, EC);
      if (EC)
        reportDiag(D, SourceLocation(), DiagId::CannotWrite, {Path, EC.message()});
      else
        OS << Lowered;
    }
    if (OK && LowerOnly) {
      // The lowered text goes to another compiler, which reports its errors; the real
      // compile here gets an empty file.
      SM.overrideFileContents(*FE, llvm::MemoryBuffer::getMemBufferCopy("\n", FE->getName()));
      SM.setMainFileID(SM.createFileID(*FE, SourceLocation(), SrcMgr::C_User));
    }
    return std::make_unique<GuardConsumer>(OK);
  }

private:
  std::string EmitPath, EmitDir;
  bool LowerOnly = false;
  LoweringOptions Options;

  // A private invocation like the real one, without outputs and without warnings.
  static std::shared_ptr<CompilerInvocation> privateInvocation(CompilerInstance &CI,
                                                               frontend::ActionKind Kind) {
    auto Inv = std::make_shared<CompilerInvocation>(CI.getInvocation());
    FrontendOptions &FO = Inv->getFrontendOpts();
    FO.ProgramAction = Kind;
    FO.OutputFile.clear();
    FO.TimeTracePath.clear();
    Inv->getDependencyOutputOpts() = DependencyOutputOptions();
    DiagnosticOptions &DO = Inv->getDiagnosticOpts();
    DO.VerifyDiagnostics = false;
    DO.IgnoreWarnings = true;
    DO.ErrorLimit = 0; // every error counted (analyse compares the counts)
    DO.DiagnosticSerializationFile.clear();
    return Inv;
  }

  static bool headersHavePragmas(CompilerInstance &CI) {
    CompilerInstance A;
    A.setInvocation(privateInvocation(CI, frontend::RunPreprocessorOnly));
    A.createDiagnostics(new IgnoringDiagConsumer(), /*ShouldOwnClient=*/true);
    bool Found = false;
    ScanAction Act(Found);
    InAnalysis = true;
    A.ExecuteAction(Act);
    InAnalysis = false;
    return Found;
  }

  static AnalysisResult analyse(CompilerInstance &CI, bool Kernel,
                                const LoweringOptions &Options) {
    AnalysisResult R;
    auto Inv = privateInvocation(CI, frontend::ParseSyntaxOnly);
    if (Kernel) {
      for (const char *const *K = KernelKeywords; *K; ++K)
        Inv->getPreprocessorOpts().addMacroDef(std::string(*K) + "=");
      Inv->getPreprocessorOpts().addMacroDef("__launch_bounds__(...)=");
    }
    CompilerInstance A;
    A.setInvocation(Inv);
    A.createDiagnostics(new IgnoringDiagConsumer(), /*ShouldOwnClient=*/true);
    AnalysisAction Act(R, Kernel, Options);
    InAnalysis = true;
    A.ExecuteAction(Act);
    InAnalysis = false;
    R.Errors = A.getDiagnostics().getNumErrors();
    return R;
  }
};

} // namespace
} // namespace nanort

static clang::FrontendPluginRegistry::Add<nanort::NanortAction>
    X("nanort", "lowers OmpSs task pragmas to nanort runtime calls");
