//===- InlineTasks.cpp - Inline tasks -------------------------------------===//
//
// A task on a statement: its body is outlined (C: a function before the enclosing one; C++:
// a local class at the task's place) and the statement becomes the code that creates the
// task, fills its argument block and submits it.
//
//===----------------------------------------------------------------------===//
#include "LowererImpl.h"

using namespace clang;

namespace nanort {
namespace lowering {

namespace {

// The argument block's members of a variably modified capture: its address or value untyped
// (Member), or where its own copy is after the block; then its variable lengths.
std::string vmMembers(const Capture &Cap, const std::string &Member, const std::string &Size) {
  std::string Name = Cap.Var->getName().str(), S;
  if (Cap.How == Sharing::Shared || (Cap.How == Sharing::Firstprivate && !Cap.VM->isArray()))
    S += " void *" + Member + ";";
  else if (Cap.VM->isArray())
    S += " " + Size + " nanort_o_" + Name + ";";
  for (unsigned K = 0; K < Cap.VM->varDims(); ++K)
    S += " " + Size + " nanort_d_" + Name + "_" + std::to_string(K) + ";";
  return S;
}

// In the body: the variable lengths of a variably modified capture, from the argument block.
std::vector<std::string> blockLengths(const Capture &Cap) {
  std::vector<std::string> Lengths;
  for (unsigned K = 0; K < Cap.VM->varDims(); ++K)
    Lengths.push_back("nanort_a->nanort_d_" + Cap.Var->getName().str() + "_" +
                      std::to_string(K));
  return Lengths;
}

} // namespace

void Lowerer::lowerInlineTask(const Pragma &Task, const Pragma *Target, const Candidate &Cand,
                              const InlinePlan &Plan, SourceLocation &PreludeAt) {
  FunctionDecl *Fn = Cand.Enclosing;
  SourceLocation Begin = Plan.Begin, End = Plan.End;
  const std::vector<Capture> &Caps = Plan.Caps;
  unsigned N = ++Counter;
  std::string Id = std::to_string(N);
  std::string Args = "nanort_args_" + Id;
  std::string ArgsType = CPP ? Args : "struct " + Args;
  std::string BodyText = RW.getRewrittenText(CharSourceRange::getCharRange(Begin, End));
  // A taskloop's chunk: the loop's body over the chunk's iterations, the loop variable private.
  const TaskloopLoop *Loop = Plan.Loop ? &*Plan.Loop : nullptr;
  if (Loop) {
    Code B(SM);
    B.at(Plan.BodyBegin);
    std::string User =
        B.str() + RW.getRewrittenText(CharSourceRange::getCharRange(Plan.BodyBegin, Plan.BodyEnd));
    BodyText = Loop->Inner.empty()
                   ? taskloopChunkBody(loopVars(*Loop)[0].first, Loop->Var->getName().str(),
                                       "nanort_a", User)
                   : taskloopCollapsedChunkBody(loopVars(*Loop), "nanort_a", User);
  }

  // Reductions: members for where each item starts, and the body's pointers to the variables
  // (or the pointers that the items go through) turned to the task's copies when it starts.
  std::string RedMembers, ToCopies;
  auto CapOf = [&](const std::string &Name) -> const Capture * {
    for (const Capture &Cap : Caps)
      if (Cap.Var->getName() == Name)
        return &Cap;
    return nullptr;
  };
  for (size_t K = 0; K < Plan.Privatized.size(); ++K) {
    std::string Ks = std::to_string(K);
    RedMembers += " void *nanort_r" + Ks + "; long long nanort_o" + Ks + ";";
    std::string M = "nanort_a->" + std::string(CPP ? "nanort_c_" : "") + Plan.Privatized[K].second;
    ToCopies += std::string("  ") + M + " = (" + (CPP ? "decltype(" : "__typeof__(") + M +
                "))nanort_reduction_copy(nanort_a->nanort_r" + Ks + ", nanort_a->nanort_o" + Ks +
                ");\n";
  }

  // The task's one implementation, which runs Run, and its site, whose tasks' blocks Destroy
  // ends.
  auto Site = [&](const std::string &Run, const std::string &Destroy) {
    const Clause *LabelC = Task.find(ClauseKind::Label);
    return "static const nanort_task_impl nanort_impl_" + Id +
           "[] = {{NANORT_DEVICE_SMP, " + Run + ", 0, 0, 0, 0}};\n" +
           "static const nanort_task_site nanort_site_" + Id + " = {NANORT_ABI_VERSION, " +
           (LabelC ? "\"" + Code::escape(LabelC->Words[0]) + "\"" : std::string("0")) + ", " +
           fileLiteral(Task.Begin) + ", " + std::to_string(lineOf(Task.Begin)) +
           ", nanort_impl_" + Id + ", 1, " + Destroy + "};\n";
  };

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
      if (Cap.VM) // as in C: untyped, with the row lengths (a class has no VLA members)
        L << vmMembers(Cap, "nanort_c_" + Name, "std::size_t");
      else if (Cap.How == Sharing::Shared || Cap.How == Sharing::Inprivate)
        L << " decltype(__builtin_addressof(" << Name << ")) nanort_c_" << Name << ";";
      else if (Cap.How == Sharing::Firstprivate)
        L << " std::remove_cv_t<std::remove_reference_t<decltype(" << Name << ")>> nanort_c_"
          << Name << ";";
    }
    L << " char nanort_unused;" << (Loop ? taskloopArgMembers(*Loop) : "") << RedMembers;
    // Private variables live in the block until the task's children are done (OmpSs-2); last,
    // so that the block's initializer leaves them to their default member initializers.
    for (const Capture &Cap : Caps)
      if (!Cap.VM && Cap.How == Sharing::Private) {
        std::string Name = Cap.Var->getName().str();
        L << " std::remove_cv_t<std::remove_reference_t<decltype(" << Name << ")>> nanort_c_"
          << Name << "{};";
      }
    L << "\n  static void nanort_body(void *nanort_v) {\n    " << Args
      << " *nanort_a = static_cast<" << Args << " *>(nanort_v);\n    (void)nanort_a;\n"
      << ToCopies;
    if (!Plan.ThisType.isNull())
      L << "    auto nanort_self = nanort_a->nanort_self;\n";
    for (const Capture &Cap : Caps) {
      std::string Name = Cap.Var->getName().str();
      if (Cap.VM) {
        // Declared with 'auto': clang's C++ takes two spellings of a variable-length type as
        // different types, so the cast's type is the variable's.
        std::vector<std::string> Lengths = blockLengths(Cap);
        std::string Ptr = vmDeclaration(*Cap.VM, "", Lengths, 1, Policy);
        std::string Own = vmDeclaration(*Cap.VM, "", Lengths, 0, Policy);
        // The user's declaration had the extension's warning already.
        L << "    _Pragma(\"GCC diagnostic push\") _Pragma(\"GCC diagnostic ignored \\\"-Wvla\\\"\")\n";
        if (Cap.How == Sharing::Shared)
          L << "    auto &" << Name << " = *(" << Ptr << ")nanort_a->nanort_c_" << Name << ";\n";
        else if (Cap.VM->isArray()) // its own copy, after the argument block
          L << "    auto &" << Name << " = *(" << Ptr << ")((char *)nanort_v + nanort_a->nanort_o_"
            << Name << ");\n";
        else
          L << "    auto " << Name << " = (" << Own << ")"
            << (Cap.How == Sharing::Firstprivate ? "nanort_a->nanort_c_" + Name : "nullptr")
            << ";\n";
        L << "    _Pragma(\"GCC diagnostic pop\") (void)" << Name << ";\n";
        continue;
      }
      if (Cap.How == Sharing::Inprivate &&
          Cap.Var->getType().getNonReferenceType()->isArrayType())
        L << "    std::remove_cv_t<std::remove_reference_t<decltype(" << Name << ")>> " << Name
          << ";\n    __builtin_memcpy((void *)&" << Name << ", (const void *)nanort_a->nanort_c_"
          << Name << ", sizeof " << Name << ");\n";
      else if (Cap.How == Sharing::Inprivate)
        L << "    std::remove_cv_t<std::remove_reference_t<decltype(" << Name << ")>> " << Name
          << " = *nanort_a->nanort_c_" << Name << ";\n";
      else
        L << "    auto &" << Name << " = " << (Cap.How == Sharing::Shared ? "*" : "")
          << "nanort_a->nanort_c_" << Name << ";\n";
      L << "    (void)" << Name << ";\n"; // names seen only in nested clauses may go unused
    }
    if (const Clause *On = Task.find(ClauseKind::Onready)) {
      L << "    (void)("; L.user(On->Args[0]); L << ");\n";
    }
    L.at(Begin);
    L << BodyText << "\n  }\n  static void run(void *nanort_v) { nanort::detail::run_guarded("
         "&nanort_body, nanort_v); }\n  static void destroy(void *nanort_v) { static_cast<" << Args
      << " *>(nanort_v)->~" << Args << "(); }\n};\n";
    // No destructor for trivial captures: the runtime then may copy the block (a taskiter's
    // replays repeat it byte for byte).
    L << Site("&" + Args + "::run", trivialOrDestroy(Args));
  }

  // C: the argument block, the outlined body and the site go before the function.
  Code F(SM);
  if (!CPP) {
    F << "\nstruct " << Args << " {";
    for (const Capture &Cap : Caps) {
      QualType T = Cap.Var->getType().getNonReferenceType();
      std::string Name = Cap.Var->getName().str();
      if (Cap.VM)
        F << vmMembers(Cap, Name, "size_t");
      else if (Cap.How == Sharing::Shared || Cap.How == Sharing::Inprivate)
        F << " " << decl(Ctx.getPointerType(T), Name) << ";";
      else if (Cap.How == Sharing::Firstprivate || Cap.InBlock)
        F << " " << decl(T, Name) << ";";
    }
    F << " char nanort_unused;" << (Loop ? taskloopArgMembers(*Loop) : "") << RedMembers << " };\n";
    F << "static void nanort_task_" << Id << "(void *nanort_v) {\n  " << ArgsType
      << " *nanort_a = (" << ArgsType << " *)nanort_v;\n  (void)nanort_a;\n" << ToCopies;
    // Private and firstprivate variables are locals of the same name (shared ones were
    // rewritten in the body).
    for (const Capture &Cap : Caps) {
      QualType T = Cap.Var->getType().getNonReferenceType();
      std::string Name = Cap.Var->getName().str();
      if (Cap.VM) {
        std::vector<std::string> Lengths = blockLengths(Cap);
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
      if (Cap.InBlock)
        continue; // the body names the block's copy
      if (Cap.How == Sharing::Private) {
        F << "  " << decl(T, Name) << ";\n";
      } else if (Cap.How == Sharing::Firstprivate || Cap.How == Sharing::Inprivate) {
        Qualifiers Q;
        QualType U = Ctx.getUnqualifiedArrayType(T, Q);
        F << "  " << decl(U, Name) << ";\n  __builtin_memcpy((void *)&" << Name
          << ", (const void *)" << (Cap.How == Sharing::Inprivate ? "" : "&") << "nanort_a->"
          << Name << ", sizeof " << Name << ");\n";
      }
    }
    if (const Clause *On = Task.find(ClauseKind::Onready)) {
      F.Subst = &Plan.Views;
      F << "  (void)("; F.user(On->Args[0]); F << ");\n";
      F.Subst = nullptr;
    }
    F.at(Begin);
    F << BodyText << "\n}\n";
    F << Site("nanort_task_" + Id, "0");
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
  std::vector<const VarDecl *> Scope;
  for (const Capture &Cap : Caps)
    Scope.push_back(Cap.Var);
  if (Loop)
    emitTaskloopHead(C, Task, *Loop, Scope);
  // A firstprivate or private variable-length array gets its bytes after the block.
  std::string ArgsSize = "sizeof(" + ArgsType + ")";
  std::string Extra;
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
      if (Cap.VM) {
        if (Cap.How == Sharing::Shared)
          C << "(void *)&" << Name << ", ";
        else if (Cap.VM->isArray())
          C << "nanort_o_" << Name << ", ";
        else if (Cap.How == Sharing::Firstprivate)
          C << "(void *)" << Name << ", ";
        for (const std::string &Length : vmLengths(*Cap.VM, Name))
          C << "(std::size_t)(" << Length << "), ";
        continue;
      }
      if (Cap.How == Sharing::Shared || Cap.How == Sharing::Inprivate)
        C << "__builtin_addressof(" << Name << "), ";
      else if (Cap.How == Sharing::Firstprivate)
        C << (Cap.Var->getType().getNonReferenceType()->isArrayType() ? "{}, " : Name + ", ");
    }
    C << (!Loop ? "0};\n" : Loop->Inner.empty() ? "0, 0, 0, 0};\n" : "0, 0, 0, 0, {}, {}, {}};\n");
    // (a chunk's range is set below)
    for (const Capture &Cap : Caps)
      if (Cap.VM && Cap.VM->isArray() && Cap.How == Sharing::Firstprivate) {
        std::string Name = Cap.Var->getName().str();
        C << "__builtin_memcpy((char *)nanort_task_args(nanort_t) + nanort_o_" << Name
          << ", (const void *)&" << Name << ", sizeof " << Name << ");\n";
      } else if (!Cap.VM && Cap.How == Sharing::Firstprivate &&
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
      if (Cap.How == Sharing::Shared || Cap.How == Sharing::Inprivate)
        C << A << "->" << Name << " = &" << View(Name) << ";\n";
      else if (Cap.How == Sharing::Firstprivate) // (the member's size: a parameter declared
        C << "__builtin_memcpy((void *)&" << A << "->" << Name // as an array is a pointer)
          << ", (const void *)&" << View(Name) << ", sizeof " << A << "->" << Name << ");\n";
      else if (!Outer || !Outer->Views.count(Name)) // the task has its own: no unused warning
        C << "(void)" << Name << ";\n";
    }
  }
  const Clause *LabelC = Task.find(ClauseKind::Label);
  if (Loop) {
    // The chunk's iterations; in a taskloop with a group, the token that its wait names.
    C << "{ " << (CPP ? Args + " *nanort_tl_a = static_cast<" + Args + " *>("
                      : ArgsType + " *nanort_tl_a = (" + ArgsType + " *)(")
      << "nanort_task_args(nanort_t));\n";
    if (Loop->Inner.empty())
      C << "nanort_tl_a->nanort_tl_first = (unsigned long long)nanort_tl_lb + nanort_tl_cfirst * "
           "nanort_tl_step;\n"
        << "nanort_tl_a->nanort_tl_count = nanort_tl_ccount;\n"
        << "nanort_tl_a->nanort_tl_step = nanort_tl_step; }\n";
    else { // the first iteration of the product space, and the loops
      C << "nanort_tl_a->nanort_tl_first = nanort_tl_cfirst;\n"
        << "nanort_tl_a->nanort_tl_count = nanort_tl_ccount;\nnanort_tl_a->nanort_tl_step = 1;\n";
      for (unsigned L = 0; L <= Loop->Inner.size(); ++L) {
        std::string Ls = std::to_string(L);
        C << "nanort_tl_a->nanort_tl_lbs[" << Ls << "] = (unsigned long long)nanort_tl_lb" << Ls
          << "; nanort_tl_a->nanort_tl_steps[" << Ls << "] = nanort_tl_step" << Ls
          << "; nanort_tl_a->nanort_tl_ns[" << Ls << "] = nanort_tl_n" << Ls << ";\n";
      }
      C << "}\n";
    }
    if (taskloopHasGroup(Task) && !taskloopReductionGroup(Task))
      C << "nanort_check(nanort_task_access(nanort_t, &nanort_tl_token, 1, NANORT_CONCURRENT), "
           "\"nanort_task_access\");\n";
  }
  Reductions Red;
  Red.ArgsAt = CPP ? "static_cast<" + Args + " *>(nanort_task_args(nanort_t))" : A;
  for (size_t K = 0; K < Plan.Privatized.size(); ++K) {
    const std::string &Name = Plan.Privatized[K].second;
    const Capture *Cap = CapOf(Name);
    bool Own = Cap && Cap->How == Sharing::Shared;
    std::string V = CPP ? Name : View(Name);
    Red.Slots.push_back({Plan.Privatized[K].first,
                         Own ? (CPP ? "__builtin_addressof(" + V + ")" : "&" + V) : V,
                         (unsigned)K});
  }
  std::string Who = LabelC ? "task '" + LabelC->Words[0] + "'" : Loop ? "taskloop" : "inline task";
  emitTaskClauses(C, Task, Who, Scope, Target, nullptr, nullptr, Loop, &Red);
  C << "nanort_check(nanort_task_submit(nanort_t), \"nanort_task_submit\"); }";
  if (Loop)
    emitTaskloopTail(C, Task);
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

} // namespace lowering
} // namespace nanort
