//===- FunctionTasks.cpp - Function and kernel tasks ----------------------===//
//
// A function task's definition is renamed and a wrapper with its name and signature makes
// the task; a kernel task's wrapper launches the kernel on its devices.
//
//===----------------------------------------------------------------------===//
#include "LowererImpl.h"

using namespace clang;

namespace nanort {
namespace lowering {

// The implementations of a function task on the devices of one function (the task's own, or
// a version): the kernels' argument tables and the smp entry point, which calls SmpCall; then
// one nanort_task_impl initializer per device, in the order of the device clause, appended to
// Impls. Every implementation reads the task's argument block.
bool Lowerer::emitImplementations(Code &C, const ArgBlock &A, const Devices &Dev,
                                  bool SingleSource, const std::string &Suffix,
                                  const std::string &SmpCall, std::vector<std::string> &Impls,
                                  const std::string &Store) {
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
      << A.Type << " *nanort_a = (" << A.Type << " *)nanort_v;\n  (void)nanort_a;\n  ";
    if (Onready) {
      // onready(expr), with the parameters bound to the task's arguments.
      C << "{ ";
      for (unsigned I = 0; I < NumParams; ++I)
        C << (CPP ? "auto &" + A.Members[I] : "__typeof__(nanort_a->" + A.Members[I] + ") " +
                                                  A.Members[I])
          << " = nanort_a->" << A.Members[I] << "; (void)" << A.Members[I] << "; ";
      C << "(void)("; C.user(Onready->Args[0]); C << "); }\n  ";
    }
    C << (Store.empty() ? "" : Store + "(nanort_a, ") << SmpCall << "(";
    for (unsigned I = 0; I < NumParams; ++I) {
      C << (I ? ", " : "");
      if (I < A.CallArgs.size() && !A.CallArgs[I].empty())
        C << A.CallArgs[I];
      else
        C << "nanort_a->" << A.Members[I];
    }
    C << (Store.empty() ? "" : ")") << ");\n}\n";
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
                                SourceLocation &PreludeAt, const LocalSite *Local) {
  std::string Name = FD->getNameAsString();
  auto Fail = [&](DiagId Id, const DiagArgs &Args = {}) { report(Id, Task.DirLoc, Args); };
  if (FD->isMain())
    return Fail(DiagId::MainTask);
  // Non-void function tasks (NonVoid.h): the task delivers the result.
  QualType Ret = FD->getReturnType();
  bool NonVoid = !Ret->isVoidType();
  if (NonVoid)
    if (std::optional<DiagId> Problem = resultTypeProblem(FD))
      return Fail(*Problem, {Name});
  if (FD->isVariadic())
    return Fail(DiagId::TaskVariadic, {Name});
  auto *Method = dyn_cast<CXXMethodDecl>(FD);
  bool Instance = Method && Method->isInstance();
  if (Method && Method->isVirtual())
    return Fail(DiagId::VirtualTask);
  if (Method && Method->getRefQualifier() != RQ_None)
    return Fail(DiagId::RefQualifiedTask);
  FunctionTemplateDecl *Template = FD->getDescribedFunctionTemplate();
  if (FD->isTemplated() && !Template && !Method)
    return Fail(DiagId::TemplatedTask);
  if (FD->getQualifier() && !Method)
    return Fail(DiagId::QualifiedTask);
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
      return Fail(DiagId::TaskOldStyleDefinition, {Name});
    else if (FD->isReferenced())
      return Fail(DiagId::TaskWithoutPrototype, {Name});
  }
  if (!FD->getDeclName().isIdentifier())
    return Fail(DiagId::OperatorTask);
  for (const char *K : {"shared", "private", "firstprivate", "default"})
    if (const Clause *Cl = [&]() -> const Clause * {
          for (const Clause &X : Task.Clauses)
            if (StringRef(X.Info->Spelling) == K)
              return &X;
          return nullptr;
        }())
      return report(DiagId::FunctionTaskSharing, Cl->Loc);

  // Single-source OpenCL: the private parse saw the kernel's declaration only.
  bool SingleSource = Task.KernelClose.isValid();
  FunctionDecl *Def = FD->getDefinition();
  bool FromHeader = !SM.isWrittenInMainFile(Task.Begin);
  bool DefinedHere = Def && SM.isWrittenInMainFile(SM.getExpansionLoc(Def->getBeginLoc()));
  if (FromHeader && Def && !DefinedHere)
    return Fail(DiagId::HeaderFunctionBody, {Name});
  Devices Dev;
  // A declaration in a header may leave the smp body to the file that defines it.
  if (!checkDevices(Task, Target, FD, /*Version=*/FromHeader && !DefinedHere, Dev))
    return;
  bool Cuda = Dev.Cuda, Smp = Dev.Smp, Kernel = Dev.kernel();
  const std::vector<Version> *Versions = nullptr;
  if (auto It = VersionsOf.find(FD->getCanonicalDecl()); It != VersionsOf.end() && !Local)
    Versions = &It->second;
  if (NonVoid && Kernel)
    return Fail(DiagId::TaskResultOnDevice, {Name, Cuda ? "cuda" : "opencl"});
  if (NonVoid && Versions)
    return Fail(DiagId::TaskResultWithVersions, {Name});

  // A kernel task declared in a header has no host definition: every file that names the
  // kernel makes its tasks itself, with a wrapper of its own (internal linkage, another name,
  // so that the header stays as it is for every file and compiler) that its uses call.
  bool HeaderKernel = isHeaderKernel(Task, Target, FD);
  if (FromHeader && !DefinedHere && !HeaderKernel)
    return; // defined in another file: that file's compile renames it and adds the wrapper
  // A task that this file neither defines nor uses needs nothing here.
  // A task declared in a block calls the function by its name: defined anywhere.
  if (!Def && !Kernel && !FD->isReferenced() && !Local)
    return;
  if (!Def && !Kernel && !Local)
    return Fail(DiagId::TaskNotDefined, {Name});
  if (Def && !SM.isWrittenInMainFile(SM.getExpansionLoc(Def->getBeginLoc())) && !Local)
    return Fail(DiagId::DefinitionElsewhere, {Name});
  if (Def && Def->getLocation().isMacroID() && !Local)
    return Fail(DiagId::TaskNameFromMacro, {Name});
  for (ParmVarDecl *PV : FD->parameters()) {
    QualType T = PV->getType();
    if (T->isRValueReferenceType())
      return Fail(DiagId::RvalueReferenceParameter);
    if (T->isVariablyModifiedType() &&
        (CPP || !T->isPointerType() || !T->getPointeeType()->isArrayType()))
      return Fail(DiagId::VariablyModifiedParameter);
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
  std::string Body = Local ? Local->Callee : "nanort_body_" + Name;
  std::string WrapperName = Local          ? Local->Wrapper
                            : HeaderKernel ? KernelWrappers[FD->getCanonicalDecl()]
                                           : Name;
  bool ExternC = CPP && FD->isExternC() && !HeaderKernel && !Local;

  // Parameter names as the annotated declaration has them (its clauses use them).
  std::vector<std::string> PNames;
  for (unsigned I = 0; I < FD->getNumParams(); ++I) {
    ParmVarDecl *PV = FD->getParamDecl(I);
    PNames.push_back(PV->getName().empty() ? "nanort_p" + std::to_string(I)
                                           : PV->getName().str());
  }
  // Reductions (Reduction.cpp): the body receives its private copy through the parameter
  // that the item goes through (a pointer, or a C++ reference).
  Reductions Red;
  std::vector<std::string> CallArgs(FD->getNumParams());
  std::string RedMembers;
  for (const Clause &Cl : Task.Clauses) {
    if (!isReduction(Cl))
      continue;
    if (Kernel)
      return report(DiagId::ReductionOnDevice, Cl.Loc,
                    {Cl.Info->Spelling, Dev.Cuda ? "cuda" : "opencl"});
    if (!isPrivatized(Cl))
      continue;
    for (const DepItem &D : Cl.Deps) {
      unsigned I = 0;
      while (I < PNames.size() && PNames[I] != D.BaseVar)
        ++I;
      if (I == PNames.size())
        return report(DiagId::ReductionNotParameter, D.Loc, {itemText(Cl, D), Name});
      QualType T = FD->getParamDecl(I)->getType();
      std::string K = std::to_string(Red.Slots.size());
      std::string Copy =
          "nanort_reduction_copy(nanort_a->nanort_r" + K + ", nanort_a->nanort_o" + K + ")";
      if (T->isReferenceType()) {
        Red.Slots.push_back({&D, "__builtin_addressof(" + PNames[I] + ")", 0});
        CallArgs[I] = "*(" + decl(Ctx.getPointerType(T.getNonReferenceType()), "") + ")" + Copy;
      } else if (T->isPointerType()) {
        Red.Slots.push_back({&D, PNames[I], 0});
        CallArgs[I] = "(" + decl(T.getUnqualifiedType(), "") + ")" + Copy;
      } else {
        return report(DiagId::ReductionByValue, D.Loc, {itemText(Cl, D), PNames[I]});
      }
      Red.Slots.back().K = (unsigned)Red.Slots.size() - 1;
      RedMembers += " void *nanort_r" + K + "; long long nanort_o" + K + ";";
    }
  }

  std::string Params;
  for (unsigned I = 0; I < FD->getNumParams(); ++I)
    Params += (I ? ", " : "") + decl(FD->getParamDecl(I)->getType(), PNames[I]);
  if (Params.empty())
    Params = CPP ? "" : "void";
  std::string Storage;
  // A CUDA kernel only declared here: its wrapper has internal linkage, since an object made
  // by nvcc -c that holds the kernel defines a global host stub of the same name.
  if (FD->getStorageClass() == SC_Static || HeaderKernel || Local ||
      (Cuda && !FD->doesThisDeclarationHaveABody() && !Method))
    Storage += "static ";
  if (FD->isInlineSpecified())
    Storage += "inline ";
  // A declarator with the return type, which may wrap the name (int (*f(int))[4]).
  auto Returning = [&](const std::string &Declarator) {
    return NonVoid ? decl(Ret, Declarator) : "void " + Declarator;
  };
  std::string Signature = Storage + Returning(WrapperName + "(" + Params + ")");
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
        return Fail(DiagId::OutOfLineTemplateMember);
      NestedNameSpecifierLoc Q = D->getQualifierLoc();
      std::string QText = Q ? text(Q.getBeginLoc(), Q.getEndLoc()) : std::string();
      Signature = std::string(FD->isInlineSpecified() ? "inline " : "") +
                  Returning(QText + Name + "(" + Params + ")");
    }
    Signature += Qualifiers;
  }

  // Function templates: the wrapper is a template with the same parameters, and everything
  // it needs lives inside it (a local struct, function-local statics), so that each
  // instantiation gets its own.
  std::string TemplateHead, TemplateArgs;
  if (Template) {
    if (Kernel)
      return Fail(DiagId::KernelTemplate);
    TemplateParameterList *TPL = Template->getTemplateParameters();
    for (NamedDecl *P : *TPL) {
      if (P->getName().empty())
        return Fail(DiagId::UnnamedTemplateParameter);
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
    // A non-void one waits for its result, which the task puts in the wrapper's
    // std::optional.
    std::string Slot = NonVoid ? "std::optional<" + decl(Ret.getUnqualifiedType(), "") + ">"
                               : std::string();
    UsesOptional |= NonVoid;
    C << "\n" << TemplateHead << Signature << " {\n";
    if (NonVoid)
      C << Slot << " nanort_r;\n";
    C << "struct " << Args << " {";
    if (Instance)
      C << " " << decl(Method->getThisType(), "nanort_self") << ";";
    for (unsigned I = 0; I < FD->getNumParams(); ++I)
      C << " " << decl(FD->getParamDecl(I)->getType().getUnqualifiedType(), PNames[I]) << ";";
    if (NonVoid)
      C << " " << Slot << " *nanort_slot;";
    C << RedMembers; // after the members that the initializer below fills
    C << "\n  static void nanort_body(void *nanort_v) {\n    " << Args << " *nanort_a = static_cast<"
      << Args << " *>(nanort_v);\n    (void)nanort_a;\n    ";
    if (const Clause *On = Task.find(ClauseKind::Onready)) {
      // onready(expr), with the parameters bound to the task's arguments.
      C << "{ ";
      for (unsigned I = 0; I < PNames.size(); ++I)
        C << "auto &" << PNames[I] << " = nanort_a->" << PNames[I] << "; (void)" << PNames[I]
          << "; ";
      C << "(void)("; C.user(On->Args[0]); C << "); }\n    ";
    }
    C << (NonVoid ? "nanort_a->nanort_slot->emplace(" : "")
      << (Instance ? "nanort_a->nanort_self->" : "") << Body << TemplateArgs << "(";
    for (unsigned I = 0; I < PNames.size(); ++I)
      C << (I ? ", " : "") << (CallArgs[I].empty() ? "nanort_a->" + PNames[I] : CallArgs[I]);
    C << (NonVoid ? ")" : "") << ");\n  }\n  static void run(void *nanort_v) { nanort::detail::run_guarded(&nanort_body, "
         "nanort_v); }\n  static void destroy(void *nanort_v) { static_cast<" << Args
      << " *>(nanort_v)->~" << Args << "(); }\n};\n";
    C << "static const nanort_task_impl nanort_impl[] = {{NANORT_DEVICE_SMP, &" << Args
      << "::run, 0, 0, 0, 0}};\n";
    C << "static const nanort_task_site nanort_site = {NANORT_ABI_VERSION, \""
      << Code::escape(Label) << "\", " << fileLiteral(Task.Begin) << ", "
      << lineOf(Task.Begin) << ", nanort_impl, 1, " << trivialOrDestroy(Args) << "};\n";
    C << "nanort_task *nanort_t = nanort_created(nanort_task_create(&nanort_site, sizeof("
      << Args << ")));\n";
    C << "::new (nanort_task_args(nanort_t)) " << Args << "{" << (Instance ? "this" : "");
    for (unsigned I = 0; I < PNames.size(); ++I)
      C << (I || Instance ? ", " : "") << PNames[I];
    if (NonVoid)
      C << (PNames.empty() && !Instance ? "" : ", ") << "&nanort_r";
    C << "};\n";
    Red.ArgsAt = "static_cast<" + Args + " *>(nanort_task_args(nanort_t))";
    emitTaskClauses(C, Task, "task '" + Label + "'", params(FD), Target, nullptr, nullptr, nullptr, &Red);
    C << "nanort_check(nanort_task_submit(nanort_t), \"nanort_task_submit\");\n";
    if (NonVoid)
      C << "nanort_check(nanort_taskwait(), \"taskwait\");\nreturn std::move(*nanort_r);\n";
    C << "}\n";
  } else {
  // The argument block: one member per parameter.
  C << "\nstruct " << Args << " {";
  for (unsigned I = 0; I < FD->getNumParams(); ++I) {
    // C: a pointer to a variable-length array (float A[n][n]) cannot be a struct member; it
    // travels as void * and converts back at the call of the body.
    QualType T = FD->getParamDecl(I)->getType().getUnqualifiedType();
    C << " " << (T->isVariablyModifiedType() ? "void *" + PNames[I] : decl(T, PNames[I])) << ";";
  }
  // A non-void task delivers its result (NonVoid.h): where, and how (nanort_op).
  QualType RetU = Ret.getUnqualifiedType();
  std::string Slot = CPP ? "std::optional<" + decl(RetU, "") + ">" : std::string();
  if (NonVoid)
    C << " " << decl(Ctx.getPointerType(RetU), "nanort_dst") << ";"
      << (CPP ? " void *nanort_slot;" : "") << " int nanort_op;";
  else if (FD->getNumParams() == 0)
    C << " char nanort_unused;";
  C << RedMembers << " };\n";
  if (CPP)
    C << "static void nanort_destroy_" << Id << "(void *nanort_v) { static_cast<" << Args
      << " *>(nanort_v)->~" << Args << "(); }\n";
  std::string Store, Into;
  if (NonVoid) {
    UsesOptional |= CPP;
    Store = "nanort_store_" + Id;
    auto Plan = ResultPlans.find(FD->getCanonicalDecl());
    Into = Plan != ResultPlans.end() ? Plan->second.Into : "nanort_into_" + Id;
    C << "static void " << Store << "(" << ArgsType << " *nanort_a, " << decl(RetU, "nanort_v")
      << ") {\n  switch (nanort_a->nanort_op) {\n";
    if (CPP)
      C << "  case " << (unsigned)ResultWait << ": static_cast<" << Slot
        << " *>(nanort_a->nanort_slot)->emplace(std::move(nanort_v)); break;\n";
    else
      C << "  case " << (unsigned)ResultWait << ":\n";
    std::set<int> Ops;
    if (Plan != ResultPlans.end())
      Ops = Plan->second.Ops;
    if (!CPP)
      Ops.insert(ResultAssign);
    for (int Op : Ops)
      if (Op >= ResultAssign)
        C << "  case " << (unsigned)Op << ": *nanort_a->nanort_dst " << resultOperator(Op)
          << (CPP ? " std::move(nanort_v)" : " nanort_v") << "; break;\n";
    C << "  default: (void)nanort_v; break;\n  }\n}\n";
  }

  std::string Label =
      Task.find(ClauseKind::Label) ? Task.find(ClauseKind::Label)->Words[0] : Name;
  std::string Impl = "nanort_impl_" + Id;
  ArgBlock Block{FD, ArgsType, PNames, Buffer, CallArgs};
  std::vector<std::string> Impls;
  Onready = Task.find(ClauseKind::Onready); // the task's own smp body only, not its versions'
  bool Emitted = emitImplementations(C, Block, Dev, SingleSource, Id, Body, Impls, Store);
  Onready = nullptr;
  if (!Emitted)
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

  // The wrapper: same name and signature, creates the task. A non-void task's is made by
  // Into, which the wrapper calls and then waits for the result.
  if (NonVoid)
    C << intoSignature(FD, Into, PNames) << " {\n";
  else
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
    if (NonVoid)
      C << (PNames.empty() ? "" : ", ") << "nanort_dst, nanort_slot, nanort_op";
    C << "};\n";
  } else {
    C << ArgsType << " nanort_init = {";
    for (unsigned I = 0; I < PNames.size(); ++I)
      C << (I ? ", " : "") << PNames[I];
    if (NonVoid)
      C << (PNames.empty() ? "" : ", ") << "nanort_dst, nanort_op";
    else if (PNames.empty())
      C << "0";
    C << "};\n__builtin_memcpy(nanort_task_args(nanort_t), &nanort_init, sizeof nanort_init);\n";
  }
  if (NonVoid)
    C << "if (nanort_op >= " << (unsigned)ResultAssign
      << ") nanort_check(nanort_task_access(nanort_t, nanort_dst, sizeof *nanort_dst, nanort_op "
         "== "
      << (unsigned)ResultAssign
      << " ? NANORT_OUT : NANORT_INOUT), \"nanort_task_access\");\n";
  Red.ArgsAt = "((" + ArgsType + " *)nanort_task_args(nanort_t))";
  emitTaskClauses(C, Task, "task '" + Label + "'", params(FD), Target, LaunchFrom, &Rename, nullptr, &Red);
  C << "nanort_check(nanort_task_submit(nanort_t), \"nanort_task_submit\");\n}\n";
  if (NonVoid) {
    C << (ExternC ? "extern \"C\" {\n" : "") << Signature << " {\n"
      << (CPP ? Slot : decl(RetU, "")) << " nanort_r;\n"
      << Into << (CPP ? "(nullptr, &nanort_r, " : "(&nanort_r, ") << (unsigned)ResultWait;
    for (const std::string &P : PNames)
      C << ", " << (CPP ? "static_cast<decltype(" + P + ") &&>(" + P + ")" : P);
    C << ");\nnanort_check(nanort_taskwait(), \"taskwait\");\nreturn "
      << (CPP ? "std::move(*nanort_r)" : "nanort_r") << ";\n}\n";
  }
  C << (ExternC ? "}\n" : "");
  }

  if (Local) {
    // Before the function whose block declares it, after a declaration of what it calls.
    const Placement &P = Local->Place;
    RW.InsertTextBefore(P.At, "\n" + P.Open + Local->Declare + C.str() + P.Close +
                                  Code::marker(SM, P.At));
    if (PreludeAt.isInvalid() || SM.isBeforeInTranslationUnit(P.Top, PreludeAt))
      PreludeAt = P.Top;
    return;
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
        return Fail(DiagId::MemberDeclarationEnd, {Name});
      RW.InsertTextAfter(Semi, std::string(" ") + (Method->isStatic() ? "static " : "") +
                                   Returning(Body + "(" + Params + ")") + Qualifiers + ";");
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

} // namespace lowering
} // namespace nanort
