//===- TargetClauses.cpp - Kernel launches and OpenCL modules -------------===//
#include "LowererImpl.h"

using namespace clang;

namespace nanort {
namespace lowering {

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
    report(DiagId::CannotReadKernelFile, Loc, {std::string(Path), Buf.getError().message()});
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

} // namespace lowering
} // namespace nanort
