//===- TaskloopChunks.cpp - The code around a taskloop's chunks -----------===//
//
// A taskloop's chunk tasks are inline tasks (InlineTasks.cpp); this is the loop over the
// chunks around them and the wait of the taskloop's implicit taskgroup.
//
//===----------------------------------------------------------------------===//
#include "LowererImpl.h"

using namespace clang;

namespace nanort {
namespace lowering {

// The tokens of the main file's text R, as Code::user takes them (identifiers as such).
Toks Lowerer::sourceToks(SourceRange R) const {
  Toks Out;
  std::pair<FileID, unsigned> B = SM.getDecomposedLoc(R.getBegin());
  unsigned End = SM.getFileOffset(afterToken(R.getEnd()));
  StringRef Buf = SM.getBufferData(B.first);
  Lexer Raw(SM.getLocForStartOfFile(B.first), LO, Buf.begin(), Buf.begin() + B.second,
            Buf.end());
  Token T;
  while (true) {
    Raw.LexFromRawLexer(T);
    if (T.is(tok::eof) || SM.getFileOffset(T.getLocation()) >= End)
      break;
    Out.push_back({T.is(tok::raw_identifier) ? tok::identifier : T.getKind(),
                   Lexer::getSpelling(T, SM, LO), T.getLocation()});
  }
  return Out;
}

// An expression of a taskloop's loop header, evaluated where the taskloop is: C spells the
// variables that an enclosing task shares through its views; C++ takes the text that an
// enclosing task rewrote ('this' of a member function).
void Lowerer::emitSource(Code &C, SourceRange R) const {
  if (!CPP) {
    C.user(sourceToks(R));
    return;
  }
  C.at(R.getBegin());
  C << RW.getRewrittenText(CharSourceRange::getTokenRange(R)) << "\n";
}

// One loop's start, bound and step, evaluated once, and its trip count: nanort_tl_lbX,
// nanort_tl_ubX, nanort_tl_stepX, nanort_tl_nX (X: the loop's suffix); a step that never
// reaches the bound is a run-time error that names the pragma.
void Lowerer::emitTripCount(Code &C, const Pragma &Task, const TaskloopLoop &Lv,
                            const std::string &X) {
  std::string Where = printfText("nanort: " + std::string(fileName(Task.Begin)) + ":" +
                                 std::to_string(lineOf(Task.Begin)) + ": " + dirName(Task) +
                                 ": ");
  std::string Var = Lv.Var->getName().str();
  QualType T = Lv.Var->getType().getNonReferenceType().getUnqualifiedType();
  if (!Lv.DeclaredInInit) { // its value after the loop is unspecified (OpenMP): left as is
    auto View =
        C.Subst ? C.Subst->find(Var) : std::map<std::string, std::string>::const_iterator();
    C << "(void)" << (C.Subst && View != C.Subst->end() ? View->second : Var) << ";\n";
  }
  C << decl(T, "nanort_tl_lb" + X) << " = (";
  emitSource(C, Lv.Lower);
  C << ");\n" << (CPP ? "auto" : "__extension__ __auto_type") << " nanort_tl_ub" << X
    << " = (";
  emitSource(C, Lv.Upper);
  C << ");\nunsigned long long nanort_tl_step" << X << " = "
    << (Lv.StepNegated ? "0ULL - " : "") << "(unsigned long long)(";
  if (Lv.Step.isValid())
    emitSource(C, Lv.Step);
  else
    C << "1";
  C << ");\nunsigned long long nanort_tl_n" << X << " = 0;\n";
  const char *Op = Lv.Up ? (Lv.Inclusive ? "<=" : "<") : (Lv.Inclusive ? ">=" : ">");
  C << "if (nanort_tl_lb" << X << " " << Op << " nanort_tl_ub" << X
    << ") {\n  if ((long long)nanort_tl_step" << X << " " << (Lv.Up ? "<= 0" : ">= 0")
    << ") nanort_tl_error("
    << cLiteral(Where + "the loop's step is %lld: '" + printfText(Var) +
                "' never reaches its bound\n")
    << ", (long long)nanort_tl_step" << X << ");\n  nanort_tl_n" << X << " = ("
    << (Lv.Up ? "(unsigned long long)nanort_tl_ub" + X + " - (unsigned long long)nanort_tl_lb" + X
              : "(unsigned long long)nanort_tl_lb" + X + " - (unsigned long long)nanort_tl_ub" + X)
    << (Lv.Inclusive ? "" : " - 1") << ") / "
    << (Lv.Up ? "nanort_tl_step" + X : "(0ULL - nanort_tl_step" + X + ")") << " + 1;\n}\n";
}

// Where a taskloop's tasks are created: the loop's start, bound and step, evaluated once; the
// number of iterations; the number of chunks (grainsize, num_tasks, or 4 per CPU worker); then
// a loop over the chunks, each made by the inline task's code that follows.
void Lowerer::emitTaskloopHead(Code &C, const Pragma &Task, const TaskloopLoop &Loop,
                               ArrayRef<const VarDecl *> Scope) {
  UsesTaskloop = true;
  std::string Where = printfText("nanort: " + std::string(fileName(Task.Begin)) + ":" +
                                 std::to_string(lineOf(Task.Begin)) + ": " + dirName(Task) +
                                 ": ");
  C << "{ ";
  // OpenMP's reduction on a taskloop: its group is a taskgroup with the task_reductions.
  if (taskloopReductionGroup(Task)) {
    C << "nanort_check(nanort_taskgroup_begin(), \"taskloop\");\n";
    for (const Clause &Cl : Task.Clauses)
      if (Cl.Info->Kind == ClauseKind::Reduction)
        for (const DepItem &D : Cl.Deps)
          emitReduction(C, Cl, D, Scope,
                        "nanort: " + std::string(fileName(Task.Begin)) + ":" +
                            std::to_string(lineOf(Task.Begin)) + ": taskloop ",
                        "0", "nanort_taskgroup_reduction(", nullptr);
  }
  // Each loop's start, bound and step; its trip count (collapse(n): each loop's names end
  // with its level, and the count split is the product of theirs).
  std::vector<const TaskloopLoop *> Levels = Loop.levels();
  bool Collapsed = Levels.size() > 1;
  for (unsigned L = 0; L < Levels.size(); ++L)
    emitTripCount(C, Task, *Levels[L], Collapsed ? std::to_string(L) : "");
  if (Collapsed) {
    C << "unsigned long long nanort_tl_n = nanort_tl_n0";
    for (unsigned L = 1; L < Levels.size(); ++L)
      C << " * nanort_tl_n" << L;
    C << ";\n";
  }
  C << "if (nanort_tl_n) {\nunsigned long long nanort_tl_tasks;\n";
  auto Positive = [&](const Clause &Cl, const char *Name) {
    C << "{ long long nanort_tl_v = (long long)(";
    C.user(Cl.Args[0]);
    C << ");\nif (nanort_tl_v <= 0) nanort_tl_error("
      << cLiteral(Where + Name + "(" + printfText(spellTokens(Cl.Args[0])) +
                  ") is %lld; it must be positive\n")
      << ", nanort_tl_v);\n";
  };
  if (const Clause *G = Task.find(ClauseKind::Grainsize)) {
    // OpenMP's grainsize: as many chunks as hold at least grainsize iterations each (fewer
    // than twice as many), the iterations spread evenly.
    Positive(*G, "grainsize");
    C << "nanort_tl_tasks = nanort_tl_n / (unsigned long long)nanort_tl_v;\n"
         "if (!nanort_tl_tasks) nanort_tl_tasks = 1; }\n";
  } else if (const Clause *N = Task.find(ClauseKind::NumTasks)) {
    Positive(*N, "num_tasks");
    C << "nanort_tl_tasks = (unsigned long long)nanort_tl_v < nanort_tl_n ? (unsigned long "
         "long)nanort_tl_v : nanort_tl_n; }\n";
  } else {
    C << "{ int nanort_tl_w = nanort_device_count(NANORT_DEVICE_SMP);\n"
         "nanort_tl_tasks = 4ULL * (unsigned long long)(nanort_tl_w > 0 ? nanort_tl_w : 1);\n"
         "if (nanort_tl_tasks > nanort_tl_n) nanort_tl_tasks = nanort_tl_n; }\n";
  }
  C << "unsigned long long nanort_tl_size = nanort_tl_n / nanort_tl_tasks, nanort_tl_extra = "
       "nanort_tl_n % nanort_tl_tasks, nanort_tl_next = 0, nanort_tl_c;\n";
  if (taskloopHasGroup(Task) && !taskloopReductionGroup(Task))
    C << "char nanort_tl_token = 0;\n";
  C << "for (nanort_tl_c = 0; nanort_tl_c < nanort_tl_tasks; ++nanort_tl_c) {\n"
       "unsigned long long nanort_tl_cfirst = nanort_tl_next, nanort_tl_ccount = "
       "nanort_tl_size + (nanort_tl_c < nanort_tl_extra ? 1 : 0);\n"
       "nanort_tl_next += nanort_tl_ccount;\n";
}

// After the chunks: the implicit taskgroup of '#pragma omp taskloop' waits for the tasks that
// accessed the token, every chunk, each complete with its descendants.
void Lowerer::emitTaskloopTail(Code &C, const Pragma &Task) {
  C << "\n}\n";
  if (taskloopReductionGroup(Task)) // waits for the chunks and combines the reductions
    C << "} nanort_check(nanort_taskgroup_end(), \"taskloop\"); }";
  else {
    if (taskloopHasGroup(Task))
      C << "{ const void *nanort_tl_addr = (const void *)&nanort_tl_token; size_t nanort_tl_len "
           "= 1;\nnanort_check(nanort_taskwait_on(&nanort_tl_addr, &nanort_tl_len, 1), "
           "\"taskloop\"); }\n";
    C << "} }";
  }
}

} // namespace lowering
} // namespace nanort
