//===- Taskiter.cpp - taskiter loops and taskgraph regions -------------------===//
//
// '#pragma oss|omp taskiter' before a loop: the first iteration (or the first 'unroll' ones)
// runs and its tasks are recorded; the later iterations replay the recorded tasks, with the
// argument values of the recording, without running the loop's body again
// (nanort_taskiter_*). The loop is kept as written; code goes around its body and into its
// condition:
//
// - a 'for' loop whose trip count is known when it starts (a taskloop's forms; 'unroll(n)'
//   needs one): the first n iterations (1 without unroll) are recorded; then the loop's
//   increment is run for the replayed iterations and the replays (trip count / n - 1 of them)
//   run at once; the iterations left (fewer than n) run as usual.
// - any other 'for', 'while' or 'do' loop: before the condition is evaluated after the
//   recorded iteration, the recording ends and its tasks are waited for and their results
//   brought home (a taskwait); each later iteration whose condition holds is one replay,
//   waited for the same way before the condition is evaluated again. The condition may so
//   read what the tasks wrote (a residual).
//
// With 'update' every iteration runs its body: the first n are recorded, and the tasks of each
// later group of n update the recorded tasks' argument blocks (nanort_taskiter_update), the
// group replayed when the next one starts or after the loop (a counted loop), or before the
// condition (any other loop).
//
// '#pragma omp taskgraph' before a block (OpenMP 6.0): the first encounter of the construct
// (per graph_id) runs the block and records its tasks; later encounters replay them instead
// of running the block, unless graph_reset(expr) holds (nanort_taskgraph_*).
//
//===----------------------------------------------------------------------===//
#include "LowererImpl.h"

using namespace clang;

namespace nanort {
namespace lowering {

namespace {

// A statement that leaves the loop body or region S: break (and, for a region, continue) of
// no loop or switch inside S, return, goto.
class ExitFinder : public RecursiveASTVisitor<ExitFinder> {
  using Base = RecursiveASTVisitor<ExitFinder>;

public:
  explicit ExitFinder(bool ContinueLeaves) : ContinueLeaves(ContinueLeaves) {}
  Stmt *Found = nullptr;
  bool TraverseLambdaExpr(LambdaExpr *) { return true; } // its returns are its own
  bool TraverseForStmt(ForStmt *S) { return inner(S, true); }
  bool TraverseWhileStmt(WhileStmt *S) { return inner(S, true); }
  bool TraverseDoStmt(DoStmt *S) { return inner(S, true); }
  bool TraverseCXXForRangeStmt(CXXForRangeStmt *S) { return inner(S, true); }
  bool TraverseSwitchStmt(SwitchStmt *S) { return inner(S, false); }
  bool VisitBreakStmt(BreakStmt *S) { return Breakable ? true : record(S); }
  bool VisitContinueStmt(ContinueStmt *S) {
    return Loops || !ContinueLeaves ? true : record(S);
  }
  bool VisitReturnStmt(ReturnStmt *S) { return record(S); }
  bool VisitGotoStmt(GotoStmt *S) { return record(S); }
  bool VisitIndirectGotoStmt(IndirectGotoStmt *S) { return record(S); }

private:
  bool ContinueLeaves;
  int Breakable = 0, Loops = 0;
  template <class T> bool inner(T *S, bool Loop) {
    ++Breakable;
    Loops += Loop;
    bool R = Base::WalkUpFromStmt(S);
    for (Stmt *Child : S->children())
      R = R && TraverseStmt(Child);
    --Breakable;
    Loops -= Loop;
    return R;
  }
  bool record(Stmt *S) {
    if (!Found)
      Found = S;
    return true;
  }
};

const char *exitName(const Stmt *S) {
  return isa<BreakStmt>(S)      ? "'break'"
         : isa<ContinueStmt>(S) ? "'continue'"
         : isa<ReturnStmt>(S)   ? "'return'"
                                : "'goto'";
}

} // namespace

// The file range of a statement, with its ';' when it does not end with '}'.
void Lowerer::stmtRange(const Stmt *S, SourceLocation &Begin, SourceLocation &End) const {
  Candidate C;
  C.Begin = SM.getExpansionLoc(S->getBeginLoc());
  C.End = SM.getExpansionRange(S->getEndLoc()).getEnd();
  statementRange(C, Begin, End);
}

// What a replay cannot repeat in the body (outside the tasks made there): the waits.
bool Lowerer::checkReplayedBody(const Pragma &P, SourceLocation Begin, SourceLocation End) {
  bool OK = true;
  for (const Pragma &Q : Pragmas) {
    if (&Q == &P || !SM.isBeforeInTranslationUnit(Begin, Q.Begin) ||
        !SM.isBeforeInTranslationUnit(Q.Begin, End))
      continue;
    DirectiveKind K = Q.Dir->Kind;
    if (K != DirectiveKind::Taskwait && K != DirectiveKind::Taskgroup &&
        K != DirectiveKind::Taskiter && K != DirectiveKind::Taskgraph &&
        !(K == DirectiveKind::Taskloop && taskloopHasGroup(Q)))
      continue;
    // Inside a task made in the body: that task waits, not the replay.
    const InlinePlan *Around = enclosingPlan(Q.Begin, nullptr);
    if (Around && SM.isBeforeInTranslationUnit(Begin, Around->Begin))
      continue;
    report(DiagId::SyncInTaskiter, Q.DirLoc, {dirName(Q), dirName(P)});
    OK = false;
  }
  return OK;
}

void Lowerer::lowerTaskiter(const Pragma &P, const Candidate &Cand) {
  const std::string Dir = dirName(P);
  Stmt *S = Cand.S;
  Stmt *Body = nullptr;
  Expr *Cond = nullptr;
  if (auto *F = dyn_cast_or_null<ForStmt>(S)) {
    Body = F->getBody();
    Cond = F->getCond();
  } else if (auto *W = dyn_cast_or_null<WhileStmt>(S)) {
    Body = W->getBody();
    Cond = W->getCond();
  } else if (auto *D = dyn_cast_or_null<DoStmt>(S)) {
    Body = D->getBody();
    Cond = D->getCond();
  } else {
    return report(isa_and_nonnull<CXXForRangeStmt>(S) ? DiagId::TaskiterRangeFor
                                                       : DiagId::TaskiterWithoutLoop,
                  P.DirLoc, {Dir});
  }
  if (!Cond)
    return report(DiagId::TaskiterNoCondition, S->getBeginLoc(), {Dir});
  ExitFinder Exits(false);
  Exits.TraverseStmt(Body);
  if (Exits.Found)
    return report(DiagId::JumpOutOfTaskiter, Exits.Found->getBeginLoc(),
                  {exitName(Exits.Found)});
  const Clause *Unroll = P.find(ClauseKind::Unroll);
  TaskloopLoop Loop;
  // Counted: the trip count taken before the loop starts, as a taskloop's (unroll needs it; a
  // 'for' loop in that form without unroll takes it too, so that its replays run at once,
  // without the host looking at their results between them).
  bool Counted = false;
  if (Unroll) {
    if (!analyzeTaskloop(Ctx, P, S, Diags, Loop))
      return report(DiagId::TaskiterUnrollLoop, Unroll->Loc);
    Counted = true;
  } else if (isa<ForStmt>(S)) {
    DiagSink Unused(SM); // (a loop of another form is lowered the other way, no error)
    Counted = analyzeTaskloop(Ctx, P, S, Unused, Loop);
  }
  SourceLocation Begin, End, BodyBegin, BodyEnd;
  statementRange(Cand, Begin, End);
  stmtRange(Body, BodyBegin, BodyEnd);
  if (!checkReplayedBody(P, BodyBegin, BodyEnd))
    return;
  const std::string At =
      std::string(fileName(P.Begin)) + ":" + std::to_string(lineOf(P.Begin)) + ": " + Dir;
  const std::string Where = cLiteral(At); // what nanort_check names
  // In C, an enclosing inline task's shared variables are spelled through its views.
  const InlinePlan *Outer = CPP ? nullptr : enclosingPlan(P.Begin, nullptr);
  SourceRange CondRange(SM.getExpansionLoc(Cond->getBeginLoc()),
                        SM.getExpansionRange(Cond->getEndLoc()).getEnd());

  Code Head(SM);
  Code Enter(SM); // before the body: the recording starts, or the iteration is a replay
  Head.Subst = Enter.Subst = Outer ? &Outer->Views : nullptr;
  Head << "{ nanort_taskiter *nanort_ti = 0; unsigned long long nanort_ti_k = 0;\n";
  if (CPP) // an exception out of the loop ends the recording (its tasks are waited for)
    Head << "struct nanort_ti_unwind { nanort_taskiter *&t; int n; ~nanort_ti_unwind() { if (t "
            "&& std::uncaught_exceptions() > n) nanort_taskiter_end(t, 0); } } nanort_ti_uw{"
            "nanort_ti, std::uncaught_exceptions()};\n";
  const bool Update = P.find(ClauseKind::Update) != nullptr;
  if (!Counted) {
    UsesTaskiter = true;
    UsesTaskiterUpdate = UsesTaskiterUpdate || Update;
    // The condition, after the recorded iteration and after each replay, once they ended and
    // their results are home (it may read what they wrote, on a device too).
    RW.InsertTextBefore(CondRange.getBegin(),
                        std::string(Update ? "nanort_ti_wait_u" : "nanort_ti_wait") +
                            "(nanort_ti, nanort_ti_k, " + Where + ") && (");
    RW.InsertTextAfter(afterToken(CondRange.getEnd()), ")");
    // (In a final task nothing records: nanort_ti stays null and every iteration runs.)
    if (Update) // every iteration runs its body; the later ones update the recorded tasks,
                // replayed before the condition (nanort_ti_wait_u)
      Enter << "{ if (nanort_ti_k++ == 0) nanort_check(nanort_taskiter_begin(&nanort_ti), "
            << Where << ");\nelse nanort_check(nanort_taskiter_update(nanort_ti), " << Where
            << ");\n";
    else
      Enter << "{ if (nanort_ti_k++ && nanort_ti) { nanort_check(nanort_taskiter_replay("
               "nanort_ti, 1), "
            << Where << "); continue; }\nnanort_check(nanort_taskiter_begin(&nanort_ti), "
            << Where << ");\n";
  } else if (Update) {
    // Every iteration runs its body. The first n (unroll(n), else 1) are recorded; each later
    // group of n updates the recorded tasks' argument blocks and is replayed when the next
    // group starts, or after the loop; the iterations left (fewer than n) run as written.
    UsesTaskloop = true; // the trip count's run-time errors
    emitTripCount(Head, P, Loop, "_ti");
    emitUnrollCount(Head, P, Unroll, At);
    Head << "int nanort_ti_open = 0;\n";
    // (A group replayed while an updated group follows is launched, not waited for: the
    // next group's body runs meanwhile, and its results stay on the device.)
    Enter << "{ if (nanort_ti_k % nanort_ti_u == 0) {\n"
             "int nanort_ti_more = nanort_ti && nanort_ti_k && "
             "nanort_ti_k <= nanort_ti_reps * nanort_ti_u;\n"
             "if (nanort_ti_open) { nanort_ti_open = 0; nanort_check(nanort_ti_more ? "
             "nanort_taskiter_launch(nanort_ti, 1) : nanort_taskiter_replay(nanort_ti, 1), "
          << Where
          << "); }\n"
             "if (nanort_ti_k == 0) { if (nanort_ti_reps) "
             "nanort_check(nanort_taskiter_begin(&nanort_ti), "
          << Where
          << "); }\n"
             "else if (nanort_ti_more) { nanort_check(nanort_taskiter_update(nanort_ti), "
          << Where
          << "); nanort_ti_open = 1; }\n"
             "else if (nanort_ti) { nanort_check(nanort_taskiter_end(nanort_ti, 0), "
          << Where << "); nanort_ti = 0; }\n}\n++nanort_ti_k;\n";
  } else {
    UsesTaskloop = true; // the trip count's run-time errors
    emitTripCount(Head, P, Loop, "_ti");
    auto *F = cast<ForStmt>(S);
    emitUnrollCount(Head, P, Unroll, At);
    // At the first iteration after the recorded ones: the replays, then the increment for
    // each replayed iteration, and the iterations left run as usual.
    Enter << "{ if (nanort_ti && nanort_ti_k == nanort_ti_u) {\n"
             "nanort_check(nanort_taskiter_end(nanort_ti, nanort_ti_reps), "
          << Where
          << ");\nnanort_ti = 0;\n{ unsigned long long nanort_ti_j; for (nanort_ti_j = 0; "
             "nanort_ti_j < nanort_ti_reps * nanort_ti_u; ++nanort_ti_j) { (void)(";
    emitSource(Enter, SourceRange(SM.getExpansionLoc(F->getInc()->getBeginLoc()),
                                  SM.getExpansionRange(F->getInc()->getEndLoc()).getEnd()));
    Enter << "); } }\nnanort_ti_k += nanort_ti_reps * nanort_ti_u;\nif (!(";
    emitSource(Enter, CondRange);
    Enter << ")) break;\n}\nif (nanort_ti_k++ == 0 && nanort_ti_reps) "
             "nanort_check(nanort_taskiter_begin(&nanort_ti), "
          << Where << ");\n";
  }
  Head.at(Begin);
  RW.InsertTextBefore(Begin, Head.str());
  Enter.at(BodyBegin);
  RW.InsertTextBefore(BodyBegin, Enter.str());
  RW.InsertTextAfter(BodyEnd, " }");
  RW.InsertTextAfter(End, std::string(Counted && Update
                                          ? " if (nanort_ti_open) "
                                            "nanort_check(nanort_taskiter_replay(nanort_ti, 1), " +
                                                Where + ");"
                                          : "") +
                              " nanort_check(nanort_taskiter_end(nanort_ti, 0), " + Where +
                              "); }");
}

// The unroll count 'n' (1 without the clause), checked, and the replays after the recorded
// group: nanort_ti_u and nanort_ti_reps, from the trip count nanort_tl_n_ti.
void Lowerer::emitUnrollCount(Code &Head, const Pragma &, const Clause *Unroll,
                              const std::string &At) {
  Head << "long long nanort_ti_uv = (long long)(";
  if (Unroll)
    Head.user(Unroll->Args[0]);
  else
    Head << "1";
  Head << ");\nunsigned long long nanort_ti_u, nanort_ti_reps;\n";
  if (Unroll)
    Head << "if (nanort_ti_uv <= 0) nanort_tl_error("
         << cLiteral(printfText("nanort: " + At + ": unroll(" + spellTokens(Unroll->Args[0]) +
                                ") is ") +
                     "%lld; it must be positive\n")
         << ", nanort_ti_uv);\n";
  Head << "nanort_ti_u = (unsigned long long)nanort_ti_uv;\n"
          "nanort_ti_reps = nanort_tl_n_ti > nanort_ti_u ? (nanort_tl_n_ti - nanort_ti_u) / "
          "nanort_ti_u : 0;\n";
}

void Lowerer::lowerTaskgraph(const Pragma &P, const Candidate &Cand) {
  if (isa<DeclStmt>(Cand.S))
    return report(DiagId::TaskgraphOnDeclaration, P.DirLoc);
  ExitFinder Exits(true);
  Exits.TraverseStmt(Cand.S);
  if (Exits.Found)
    return report(DiagId::JumpOutOfTaskgraph, Exits.Found->getBeginLoc(),
                  {exitName(Exits.Found)});
  SourceLocation Begin, End;
  statementRange(Cand, Begin, End);
  if (!checkReplayedBody(P, Begin, End))
    return;
  const std::string Where = cLiteral(std::string(fileName(P.Begin)) + ":" +
                                     std::to_string(lineOf(P.Begin)) + ": " + dirName(P));
  Code C(SM);
  if (!CPP)
    if (const InlinePlan *Outer = enclosingPlan(P.Begin, nullptr))
      C.Subst = &Outer->Views;
  auto Arg = [&](ClauseKind K, const char *Default) {
    if (const Clause *Cl = P.find(K); Cl && Cl->Args.empty()) {
      C << "1";  // graph_reset alone
    } else if (Cl) {
      C << "(";
      C.user(Cl->Args[0]);
      C << ")";
    } else {
      C << Default;
    }
  };
  // The construct's own static variable: its address names the construct's graphs.
  C << "{ static char nanort_tg_construct; nanort_taskgraph *nanort_tg = 0; int nanort_tg_run "
       "= 1;\n(void)nanort_tg_construct;\n";
  if (CPP) // an exception out of the region ends its recording
    C << "struct nanort_tg_unwind { nanort_taskgraph *&g; int n; ~nanort_tg_unwind() { if "
         "(std::uncaught_exceptions() > n) nanort_taskgraph_end(g, 1); } } nanort_tg_uw{"
         "nanort_tg, std::uncaught_exceptions()};\n";
  C << "if (";
  Arg(ClauseKind::If, "1");
  C << ") nanort_check(nanort_taskgraph_begin(&nanort_tg_construct, (unsigned long long)";
  Arg(ClauseKind::GraphId, "0");
  C << ", (";
  Arg(ClauseKind::GraphReset, "0");
  C << ") ? 1 : 0, &nanort_tg, &nanort_tg_run), " << Where << ");\nif (nanort_tg_run) ";
  C.at(Begin);
  RW.InsertTextBefore(Begin, C.str());
  RW.InsertTextAfter(End, std::string(" nanort_check(nanort_taskgraph_end(nanort_tg, ") +
                              (P.find(ClauseKind::Nogroup) ? "0" : "1") + "), " + Where +
                              "); }");
}

} // namespace lowering
} // namespace nanort
