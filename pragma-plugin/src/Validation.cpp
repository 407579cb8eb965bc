//===- Validation.cpp - What tasks may use --------------------------------===//
//
// Checks of what the grammar cannot check: devices and their clauses, the parameters of
// kernels, types that generated code cannot name.
//
//===----------------------------------------------------------------------===//
#include "LowererImpl.h"

using namespace clang;

namespace nanort {
namespace lowering {

// Types declared inside a function cannot be named by the code generated at file scope.
bool Lowerer::checkLocalType(QualType T, SourceLocation Use, const std::string &Var) {
  for (int Guard = 0; Guard < 16 && !T.isNull(); ++Guard) {
    if (const auto *TT = T->getAs<TypedefType>())
      if (TT->getDecl()->getDeclContext()->isFunctionOrMethod()) {
        report(DiagId::LocalType, Use, {Var});
        return false;
      }
    if (const TagDecl *TD = T->getAsTagDecl())
      if (TD->getDeclContext()->isFunctionOrMethod()) {
        report(DiagId::LocalType, Use, {Var});
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

// The devices of a function task or of a version, and what its target clauses need: kernels
// an ndrange, file/name/shmem a kernel device, a kernel-only device no host body. Versions
// may have an smp device without a body here (it is called by name).
bool Lowerer::checkDevices(const Pragma &Task, const Pragma *Target, FunctionDecl *FD,
                           bool Version, Devices &Dev) {
  std::string Name = FD->getNameAsString();
  auto Fail = [&](DiagId Id, SourceLocation L, const DiagArgs &Args = {}) {
    report(Id, L, Args);
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
          return Fail(DiagId::DeviceTwice, Cl->WordLocs[I], {D});
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
      return Fail(DiagId::OpenCLWithoutNdrange, Target->DirLoc);
    if (Cuda && !Nd)
      return Fail(DiagId::CudaWithoutNdrange, Target->DirLoc);
    for (const Clause &Cl : Target->Clauses) {
      if (Cl.Info->Kind == ClauseKind::File && !OpenCL)
        return Fail(Cuda ? DiagId::FileWithCuda : DiagId::FileWithoutOpenCL, Cl.Loc);
      if (!Kernel && (Cl.Info->Kind == ClauseKind::Ndrange ||
                      Cl.Info->Kind == ClauseKind::Shmem || Cl.Info->Kind == ClauseKind::Name))
        return Fail(DiagId::LaunchWithoutKernel, Cl.Loc, {Cl.Info->Spelling});
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
        return Fail(DiagId::NdrangeDimensions, D[0].Loc);
      size_t Got = Nd->Args.size() - 1;
      if (Got != Dims && Got != 2 * Dims)
        return Fail(DiagId::NdrangeArity, Nd->Loc,
                    {std::to_string(Dims), std::to_string(Got)});
    }
  }
  FunctionDecl *Def = FD->getDefinition();
  if (Cuda && !Smp && Def)
    return Fail(DiagId::CudaWithBody, Task.DirLoc);
  if (OpenCL && !Smp && Def)
    return Fail(DiagId::OpenCLWithBody, Task.DirLoc);
  if (Kernel && isa<CXXMethodDecl>(FD))
    return Fail(DiagId::MemberKernel, Task.DirLoc, {KernelDevice});
  if (Kernel && Smp && !Def && !Version)
    return Fail(DiagId::SmpWithoutBody, Task.DirLoc, {Name});
  if (Task.KernelClose.isValid() && Dev.File)
    return Fail(DiagId::SourceKernelFile, Dev.File->Loc);
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
      report(DiagId::CudaReference, L);
      return false;
    }
    if (T->isPointerType() && !Buffer[I]) {
      report(DiagId::CudaPointer, L,
             {PV->getName().empty() ? std::string() : " '" + PV->getName().str() + "'"});
      return false;
    }
  }
  return true;
}

// OmpSs-1's '#pragma omp target device(smp)' before an inline task: the task runs on the CPU,
// its copy clauses are accepted (on the CPU they move nothing) and name shared data. Kernels
// are functions: other devices, and the clauses that launch kernels, need a function task.
bool Lowerer::checkInlineTarget(const Pragma &Target) {
  if (const Clause *Dev = Target.find(ClauseKind::Device))
    for (size_t I = 0; I < Dev->Words.size(); ++I)
      if (Dev->Words[I] != "smp") {
        report(DiagId::TargetDeviceInlineTask, Dev->WordLocs[I],
               {Target.Namespace, Dev->Words[I],
                Dev->Words[I] == "cuda" ? "a CUDA" : "an OpenCL"});
        return false;
      }
  for (const Clause &Cl : Target.Clauses)
    switch (Cl.Info->Kind) {
    case ClauseKind::Ndrange:
    case ClauseKind::Shmem:
    case ClauseKind::File:
    case ClauseKind::Name:
      report(DiagId::LaunchClauseInlineTask, Cl.Loc, {Cl.Info->Spelling});
      return false;
    default:
      break;
    }
  return true;
}

} // namespace lowering
} // namespace nanort
