//===- LowererImpl.h - The lowering of one file, shared by its parts ------===//
//
// Lowerer coordinates the lowering of one file (Lowering.cpp); its parts live in files named
// for what they do: Association.cpp (what each pragma applies to, where generated code goes),
// Validation.cpp (devices, kernels and types that tasks may use), Versions.cpp (implements),
// Capture.cpp (the data sharing of inline tasks), InlineTasks.cpp (their code),
// TaskloopChunks.cpp (the loop over a taskloop's chunks), FunctionTasks.cpp (function and
// kernel tasks), LocalTasks.cpp (function tasks declared in a block), NonVoid.cpp (the calls
// of function tasks that return a value), TaskClauses.cpp and TargetClauses.cpp (the clauses
// of a task where it is created, with Dependences.h for their items), Reduction.cpp,
// Synchronization.cpp (taskwait, critical and atomic), SectionBounds.cpp (warnings where an
// array section is very likely off by one) and Prelude.cpp (the helpers at the top of the
// lowered file).
//
//===----------------------------------------------------------------------===//
#ifndef NANORT_PLUGIN_LOWERERIMPL_H
#define NANORT_PLUGIN_LOWERERIMPL_H

#include <deque>

#include "Code.h"
#include "Lowering.h"
#include "NonVoid.h"
#include "Taskloop.h"
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

namespace nanort {
namespace lowering {

// Private to the lowering's files, which all speak Clang's names.
using namespace clang;

// ---------------------------------------------------------------------------------------------
// Where pragmas can apply: function declarations and statement-level statements.

struct Candidate {
  SourceLocation Begin, End; // file locations: first and last token
  FunctionDecl *FD = nullptr;
  Stmt *S = nullptr;
  FunctionDecl *Enclosing = nullptr; // for statements: the function around them
  bool InLambda = false;
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


class FunctionRefFinder : public RecursiveASTVisitor<FunctionRefFinder> {
public:
  std::vector<DeclRefExpr *> Refs;
  bool VisitDeclRefExpr(DeclRefExpr *E) {
    if (isa<FunctionDecl>(E->getDecl()))
      Refs.push_back(E);
    return true;
  }
};

// Inprivate (OmpSs-1 inprivate(x)): captured by address like a shared variable, and copied
// into a private variable when the task starts, after its 'in' dependence on x is satisfied.
enum class Sharing { Shared, Firstprivate, Private, Inprivate };

struct Capture {
  VarDecl *Var;
  Sharing How;
  std::vector<SourceLocation> Uses; // DeclRefExpr locations inside the task body
  std::optional<VMType> VM;         // a variably modified type (VariablyModified.h)
  // C: the body names the variable through a pointer, (*nanort_s_x): a variable-length
  // array, or a shared variable of a variably modified type.
  bool viewed() const { return VM && (How == Sharing::Shared || VM->isArray()); }
  // C: a private or firstprivate variable that the body names in the argument block,
  // (nanort_a->x), so that it lives until the task's children are done (OmpSs-2).
  bool InBlock = false;
};

// The variable 'Name' among 'Scope' (the last one of that name), else a global of that name.
const clang::VarDecl *findVariable(clang::ASTContext &Ctx, const std::string &Name,
                                   llvm::ArrayRef<const clang::VarDecl *> Scope);

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
  // A pragma and what it applies to (Association.cpp).
  struct Work {
    Pragma *P;
    Pragma *Target = nullptr;
    const Candidate *C = nullptr;
    bool Skip = false;
    bool Version = false; // its target has 'implements'
  };
  void collect();
  std::vector<Work> associate();
  void collectRefs();
  void answerInFinal();

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
  std::deque<Candidate> Adopted; // tasks whose statement is an atomic or critical construct
  std::vector<FunctionDecl *> Bodies;
  std::vector<VarDecl *> Vars;
  unsigned Counter = 0;
  std::set<std::string> CriticalNames;
  std::map<std::string, std::string> FileModules; // file(...) path -> module variable
  std::string FileModuleDefs;                     // their definitions, in the prelude
  bool UsesCuda = false;  // a device(cuda) task: the prelude declares nanort_cuda_program
  bool UsesSectionChecks = false; // the prelude defines nanort_section_error
  // OmpSs-2's onready(expr) of the function task being lowered: its smp entry points run it
  // before the body (emitImplementations).
  const Clause *Onready = nullptr;
  std::map<unsigned, std::string> SourceKernels;  // single-source kernels, by offset
  llvm::SmallPtrSet<const FunctionDecl *, 8> TaskFunctions;

  void report(DiagId Id, SourceLocation L, const DiagArgs &Args = {}) {
    if (!Muted)
      Diags.report(Id, L, Args);
  }
  // Set while code is emitted a second time for items already reported on (the chunks of an
  // OpenMP taskloop's reduction, after its taskgroup's).
  bool Muted = false;
  std::string dirName(const Pragma &P) const {
    return "'#pragma " + P.Namespace + " " + P.DirSpelling + "'";
  }
  std::string text(SourceLocation B, SourceLocation E) const {
    return Lexer::getSourceText(CharSourceRange::getTokenRange(B, E), SM, LO).str();
  }
  // A C++ argument block's destructor for its site: none (0) when the block is trivially
  // copyable and destructible, so that the runtime may copy it (taskiter replays).
  static std::string trivialOrDestroy(const std::string &Args) {
    return "(std::is_trivially_copyable<" + Args + ">::value && std::is_trivially_destructible<" +
           Args + ">::value ? (void (*)(void *))0 : &" + Args + "::destroy)";
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
  const Candidate *constructAfter(size_t I);
  bool insideTemplateHead(const Pragma &P) const;
  Decl *topLevel(Decl *D) const;
  SourceLocation topLevelStart(Decl *D) const;
  SourceLocation declStart(Decl *D) const;
  bool checkLocalType(QualType T, SourceLocation Use, const std::string &Var);
  // Warnings where a section of P is very likely off by one (SectionBounds.cpp); once per
  // pragma.
  // The lowering goes from the last construct to the first: the warnings are kept and
  // reported in the order of the file by reportSectionBounds().
  void checkSectionBounds(const Pragma &P, ArrayRef<const VarDecl *> Scope);
  void reportSectionBounds();
  struct SectionWarning {
    SourceLocation Loc;
    DiagId Id;
    DiagArgs Args;
    bool HasFix = false;
    unsigned FixLength = 0;
    std::string FixText;
  };
  std::set<const Pragma *> SectionBoundsChecked;
  std::vector<std::vector<SectionWarning>> SectionWarnings; // a warning and its notes

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
    std::vector<std::string> CallArgs; // non-empty: the argument of the smp body's call
  };
  bool emitImplementations(Code &C, const ArgBlock &Args, const Devices &Dev, bool SingleSource,
                           const std::string &Suffix, const std::string &SmpCall,
                           std::vector<std::string> &Impls, const std::string &Store = "");
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
  // A task declared in a block (LocalTasks.cpp): its wrapper's name, the function its task
  // runs (the user's function, or a file-scope task's renamed body), a declaration of that
  // function, and where the wrapper goes.
  struct LocalSite {
    std::string Wrapper, Callee, Declare;
    Placement Place;
  };
  void lowerFunctionTask(const Pragma &Task, const Pragma *Target, FunctionDecl *FD,
                         SourceLocation &PreludeAt, const LocalSite *Local = nullptr);
  // Task pragmas on function declarations in a block (LocalTasks.cpp): the uses of the
  // function that the declaration is visible to (after it, to the end of its block, not
  // qualified) call a wrapper of their own, which makes a task with the declaration's clauses.
  struct LocalTask {
    Pragma *Task, *Target;
    FunctionDecl *FD;        // the declaration in the block
    FunctionDecl *Enclosing; // the function whose body holds it
    SourceLocation From, To; // its scope: the end of the declaration, the end of its block
    std::string Wrapper;
    std::vector<SourceLocation> Uses; // the names rewritten to the wrapper
    bool OK = true;
  };
  std::deque<LocalTask> LocalTasks;
  // The function that a declaration after a task pragma declares in a block, if any.
  FunctionDecl *localDeclaration(const Candidate &C) const;
  void addLocalTask(Pragma &P, Pragma *Target, FunctionDecl *FD);
  void planLocalTasks();
  void lowerLocalTasks(SourceLocation &PreludeAt);
  // Non-void function tasks (NonVoid.h): the function that makes the task and delivers its
  // result, and the result codes its calls use, by canonical declaration.
  struct ResultPlan {
    std::string Into;
    std::set<int> Ops;
    SourceLocation From; // Into is declared here
  };
  std::map<const FunctionDecl *, ResultPlan> ResultPlans;
  std::set<const CallExpr *> ResultCalls;    // calls rewritten to call an Into function
  std::vector<SourceLocation> ResultPreludes; // functions whose statements wait for results
  bool UsesOptional = false; // C++: a wrapper waits for a result in a std::optional
  std::string intoSignature(const FunctionDecl *FD, const std::string &Into,
                            const std::vector<std::string> &PNames) const;
  void planResultUses(const Pragma *Target, FunctionDecl *FD);
  // Statements that call non-void tasks several times (after planResultUses).
  void planJointCalls(const std::vector<SourceRange> &Outside);
  // C: a prototype, or 'f()' in a definition (no parameters), in every declaration.
  static bool noArguments(const FunctionDecl *FD) {
    if (FD->hasWrittenPrototype())
      return true;
    const FunctionDecl *Def = FD->getDefinition();
    return Def && Def->getNumParams() == 0 && FD->getNumParams() == 0;
  }

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
    std::vector<std::pair<const DepItem *, std::string>> Privatized; // reduction items, base var
    // A taskloop: its loop; the chunk task's body is the loop's body (BodyBegin..BodyEnd).
    std::optional<TaskloopLoop> Loop;
    SourceLocation BodyBegin, BodyEnd;
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
  void planInlineTask(const Pragma &Task, const Pragma *Target, const Candidate &C,
                      InlinePlan &Plan);
  bool checkInlineTarget(const Pragma &Target);
  void lowerInlineTask(const Pragma &Task, const Pragma *Target, const Candidate &C,
                       const InlinePlan &Plan, SourceLocation &PreludeAt);
  std::string enclosingPrototype(FunctionDecl *Fn, Stmt *Body, SourceLocation Top);
  llvm::SmallPtrSet<const FunctionDecl *, 4> Prototyped;
  void lowerCritical(const Pragma &P, const Candidate &C);
  void lowerAtomic(const Pragma &P, const Candidate &C);
  // Who: the task in messages, "task 'f'" or "inline task".
  // Scope: the variables that dependences may name (parameters, captures), whose types
  // tell messages whether a base is an array or a pointer.
  // Reductions (Reduction.cpp). A reduction item whose task works on a private copy: at
  // creation, the argument block's members nanort_rK (the item's first byte) and nanort_oK
  // (its distance from Base) are set; the body finds its copy of Base's storage from them.
  struct ReductionSlot {
    const DepItem *Item;
    std::string Base; // at creation: "&x" (x's own storage) or "p" (memory p points to)
    unsigned K;
  };
  struct Reductions {
    std::string ArgsAt; // the argument block at creation, as an expression
    std::vector<ReductionSlot> Slots;
  };
  static bool isReduction(const Clause &Cl) {
    ClauseKind K = Cl.Info->Kind;
    return K == ClauseKind::Reduction || K == ClauseKind::WeakReduction ||
           K == ClauseKind::InReduction || K == ClauseKind::TaskReduction;
  }
  // The task's copy is used in the body: reduction and in_reduction (not weakreduction).
  static bool isPrivatized(const Clause &Cl) {
    return Cl.Info->Kind == ClauseKind::Reduction || Cl.Info->Kind == ClauseKind::InReduction;
  }
  const VarDecl *findVar(const std::string &Name, ArrayRef<const VarDecl *> Scope) const {
    return findVariable(Ctx, Name, Scope);
  }
  bool reductionElement(const DepItem &D, ArrayRef<const VarDecl *> Scope, QualType &Elem) const;
  static std::string itemText(const Clause &Cl, const DepItem &D);
  std::string reductionOpInit(const Clause &Cl, const DepItem &D,
                              ArrayRef<const VarDecl *> Scope);
  // One item: its bytes and operator given to Prefix ("nanort_task_reduction(nanort_t, "),
  // and its slot in Red, if any, filled. Where: how run-time checks name the construct.
  void emitReduction(Code &C, const Clause &Cl, const DepItem &D, ArrayRef<const VarDecl *> Scope,
                     const std::string &Where, const char *TaskVar, const std::string &Prefix,
                     const Reductions *Red);
  bool UsesReductions = false; // the prelude defines nanort_reduction_copy
  void lowerTaskgroup(const Pragma &P, const Candidate &C);
  // taskiter and taskgraph (Taskiter.cpp).
  void lowerTaskiter(const Pragma &P, const Candidate &C);
  void lowerTaskgraph(const Pragma &P, const Candidate &C);
  bool checkReplayedBody(const Pragma &P, SourceLocation Begin, SourceLocation End);
  void stmtRange(const Stmt *S, SourceLocation &Begin, SourceLocation &End) const;
  bool UsesTaskiter = false; // the prelude defines nanort_ti_wait
  bool UsesTaskiterUpdate = false; // ... and nanort_ti_wait_u
  // declare reduction: per type, a typedef and the functions of a NANORT_REDUCE_USER operator.
  struct DeclaredReduction {
    const Toks *Type;
    std::string Typedef, Init, Combine, Destroy;
  };
  std::map<std::string, std::vector<DeclaredReduction>> DeclaredReductions;
  void lowerDeclareReduction(const Pragma &P);
  QualType resolveType(const Toks &T) const;
  void emitTaskClauses(Code &C, const Pragma &Task, const std::string &Who,
                       ArrayRef<const VarDecl *> Scope, const Pragma *Target,
                       const Pragma *LaunchFrom = nullptr,
                       const std::map<std::string, std::string> *Rename = nullptr,
                       const TaskloopLoop *Loop = nullptr,
                       const Reductions *Red = nullptr);
  // Taskloops (TaskloopChunks.cpp): the code around a chunk's inline task.
  bool UsesTaskloop = false; // the prelude defines the taskloop helpers
  Toks sourceToks(SourceRange R) const;
  void emitSource(Code &C, SourceRange R) const;
  void emitTaskloopHead(Code &C, const Pragma &Task, const TaskloopLoop &Loop,
                        ArrayRef<const VarDecl *> Scope);
  void emitTripCount(Code &C, const Pragma &Task, const TaskloopLoop &Lv, const std::string &X);
  void emitUnrollCount(Code &Head, const Pragma &P, const Clause *Unroll, const std::string &At);
  // The loop variables' types and names, outermost first (one unless collapse(n)).
  std::vector<std::pair<std::string, std::string>> loopVars(const TaskloopLoop &Loop) const {
    std::vector<std::pair<std::string, std::string>> V;
    for (const TaskloopLoop *L : Loop.levels())
      V.push_back({decl(L->Var->getType().getNonReferenceType().getUnqualifiedType(), ""),
                   L->Var->getName().str()});
    return V;
  }
  void emitTaskloopTail(Code &C, const Pragma &Task);
  void emitLaunchClause(Code &C, const Clause &Cl);
  bool fileModule(const Clause &File, std::string &Module);
  std::string prelude() const;
};

} // namespace lowering
} // namespace nanort

#endif
