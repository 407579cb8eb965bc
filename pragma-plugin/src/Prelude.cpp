//===- Prelude.cpp - What a lowered file starts with ----------------------===//
//
// The includes and helpers that a lowered file's generated code uses, each only where the
// file needs it.
//
//===----------------------------------------------------------------------===//
#include "LowererImpl.h"

using namespace clang;

namespace nanort {
namespace lowering {

std::string Lowerer::prelude() const {
  std::string S = "\n#include <nanort/nanort.h>\n#include <stdio.h>\n#include <stdlib.h>\n";
  // A failing call: in C the program ends with exit status 1 (statistics and trace written,
  // nanort_exit); in C++ it throws (a failed taskwait rethrows the task's own exception).
  // 'unused': a file may have a taskwait and no task (clang warns of unused static inline
  // functions in the main file).
  if (CPP)
    S += std::string(UsesOptional ? "#include <optional>\n" : "") +
         "#include <exception>\n#include <new>\n#include <type_traits>\n#include <nanort/error.hpp>\n"
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
  if (UsesReductions) {
    // The start of a reduction task's private copy of the storage at nanort_o bytes before
    // nanort_r, one of the bytes it reduces (docs/reductions.md).
    S += "static inline __attribute__((unused)) void *nanort_reduction_copy(const void "
         "*nanort_r, long long nanort_o) {\n"
         "  char *nanort_c = (char *)nanort_reduction_private(nanort_r);\n"
         "  if (!nanort_c) nanort_check(NANORT_ERROR_INVALID_ARGUMENT, "
         "\"nanort_reduction_private\");\n"
         "  return nanort_c - nanort_o;\n}\n";
    if (CPP)
      // The element type of an item whose type depends on template parameters.
      S += "template <class nanort_T> static constexpr unsigned nanort_reduction_type_of() {\n"
           "  using T = nanort_T;\n  return std::is_same<T, bool>::value ? NANORT_TYPE_BOOL\n"
           "    : std::is_same<T, char>::value ? NANORT_TYPE_CHAR\n"
           "    : std::is_same<T, signed char>::value ? NANORT_TYPE_SIGNED_CHAR\n"
           "    : std::is_same<T, unsigned char>::value ? NANORT_TYPE_UNSIGNED_CHAR\n"
           "    : std::is_same<T, short>::value ? NANORT_TYPE_SHORT\n"
           "    : std::is_same<T, unsigned short>::value ? NANORT_TYPE_UNSIGNED_SHORT\n"
           "    : std::is_same<T, int>::value ? NANORT_TYPE_INT\n"
           "    : std::is_same<T, unsigned>::value ? NANORT_TYPE_UNSIGNED_INT\n"
           "    : std::is_same<T, long>::value ? NANORT_TYPE_LONG\n"
           "    : std::is_same<T, unsigned long>::value ? NANORT_TYPE_UNSIGNED_LONG\n"
           "    : std::is_same<T, long long>::value ? NANORT_TYPE_LONG_LONG\n"
           "    : std::is_same<T, unsigned long long>::value ? NANORT_TYPE_UNSIGNED_LONG_LONG\n"
           "    : std::is_same<T, float>::value ? NANORT_TYPE_FLOAT\n"
           "    : std::is_same<T, double>::value ? NANORT_TYPE_DOUBLE\n"
           "    : std::is_same<T, long double>::value ? NANORT_TYPE_LONG_DOUBLE : 0;\n}\n";
  }
  // A taskiter loop without a trip count: before its condition after the recorded iteration,
  // the recording ends; after every iteration, its tasks are waited for and their results
  // brought home (the condition may read what they wrote).
  if (UsesTaskiter)
    S += "static inline __attribute__((unused)) int nanort_ti_wait(nanort_taskiter *nanort_t, "
         "unsigned long long nanort_k, const char *nanort_what) {\n"
         "  if (nanort_k == 1) nanort_check(nanort_taskiter_replay(nanort_t, 0), nanort_what);\n"
         "  if (nanort_k >= 1) nanort_check(nanort_taskwait(), nanort_what);\n"
         "  return 1;\n}\n";
  // With update: each later iteration's body updated the recorded tasks; they are replayed
  // before the condition.
  if (UsesTaskiterUpdate)
    S += "static inline __attribute__((unused)) int nanort_ti_wait_u(nanort_taskiter *nanort_t, "
         "unsigned long long nanort_k, const char *nanort_what) {\n"
         "  if (nanort_k >= 1) nanort_check(nanort_taskiter_replay(nanort_t, nanort_k > 1), "
         "nanort_what);\n"
         "  if (nanort_k >= 1) nanort_check(nanort_taskwait(), nanort_what);\n"
         "  return 1;\n}\n";
  if (UsesTaskloop)
    S += taskloopPrelude();
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

} // namespace lowering
} // namespace nanort
