//===- Emission.cpp - Generated code --------------------------------------===//
//
// The lowered code is C that a C++ compiler also accepts, except where C++ needs its own forms
// (placement new of the argument block; inline tasks and function templates as local classes
// with references as aliases of the captured variables). Generated names start with
// 'nanort_'. Every user expression is emitted on a line of its own after '#line', padded to
// its column, so that errors inside clause arguments point at the user's line and column;
// after each generated block a '#line' puts the following user text back at its own line and
// column.
//
//===----------------------------------------------------------------------===//
#include "LowererImpl.h"

using namespace clang;

namespace nanort {
namespace lowering {

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
      Check.Diags->report(DiagId::ConstantItem, S.Lower.front().Loc,
                          {D.Written, sectionStartMessage(I, D.Sections.size(), Kind, D.BaseText,
                                                          std::to_string(*S.ConstLower), Offset,
                                                          L)});
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

// A multidependence ({v[i], i=0;n}): a loop per iterator, outer first, around the item's own
// block, with the iterator declared as an int of the user's name, which the item's
// expressions use (the runtime takes accesses one call at a time). Returns the number of
// blocks to close. In C inside another inline task, the iterators hide the outer task's
// shared variables of the same names: Saved keeps the substitutions to restore.
struct IteratorScope {
  std::map<std::string, std::string> Subst;
  const std::map<std::string, std::string> *Saved = nullptr;
  unsigned Open = 0;
};
void openIterators(Code &C, const DepItem &D, const ItemChecks &Check, IteratorScope &S) {
  S.Saved = C.Subst;
  if (C.Subst && !D.Iters.empty()) {
    S.Subst = *C.Subst;
    for (const DepIterator &It : D.Iters)
      S.Subst.erase(It.Name);
    C.Subst = &S.Subst;
  }
  for (size_t K = 0; K < D.Iters.size(); ++K) {
    const DepIterator &It = D.Iters[K];
    std::string N = std::to_string(K);
    if (!It.Values.empty()) {
      C << "{ long long nanort_values" << N << "[] = {";
      for (size_t V = 0; V < It.Values.size(); ++V) {
        C << (V ? ", " : "") << "(long long)("; C.user(It.Values[V]); C << ")";
      }
      C << "};\nfor (size_t nanort_k" << N << " = 0; nanort_k" << N << " < "
        << (unsigned)It.Values.size() << "; ++nanort_k" << N << ") { int " << It.Name
        << " = (int)nanort_values" << N << "[nanort_k" << N << "]; (void)" << It.Name << ";\n";
      S.Open += 2;
      continue;
    }
    C << "{ long long nanort_first" << N << " = (long long)("; C.user(It.Lower); C << ");\n";
    C << "long long nanort_end" << N << " = ";
    if (It.Length)
      C << "nanort_first" << N << " + ";
    C << "(long long)("; C.user(It.Second); C << ")" << (It.Length ? "" : " + 1") << ";\n";
    C << "long long nanort_step" << N << " = ";
    if (It.Step.empty()) {
      C << "1;\n";
    } else {
      C << "(long long)("; C.user(It.Step); C << ");\n";
      *Check.Used = true;
      C << "if (nanort_step" << N << " <= 0) nanort_section_error(" << Check.Task << ", "
        << cLiteral(printfText(Check.Where + D.Written + ": ") + "the step of iterator '" +
                    It.Name + "' is %lld\n")
        << ", nanort_step" << N << ");\n";
    }
    C << "for (long long nanort_i" << N << " = nanort_first" << N << "; nanort_i" << N
      << " < nanort_end" << N << "; nanort_i" << N << " += nanort_step" << N << ") { int "
      << It.Name << " = (int)nanort_i" << N << "; (void)" << It.Name << ";\n";
    S.Open += 2;
  }
}
void closeIterators(Code &C, IteratorScope &S) {
  for (unsigned K = 0; K < S.Open; ++K)
    C << "}";
  if (S.Open)
    C << "\n";
  C.Subst = S.Saved;
}

// nanort_task_access / nanort_task_copy of one item, 1-D or 2-D.
void emitAccess(Code &C, const DepItem &D, const char *Fn, const char *Mode, bool CPP,
                const ItemChecks &Check) {
  IteratorScope Scope;
  openIterators(C, D, Check, Scope);
  C << "{ ";
  emitItem(C, D, CPP, Check);
  if (D.Sections.size() == 2)
    C << "nanort_check(" << Fn << "_2d(nanort_t, (const void *)nanort_p, nanort_row_bytes, "
      << "nanort_rows, nanort_stride, " << Mode << "), \"" << Fn << "\"); }\n";
  else
    C << "nanort_check(" << Fn << "(nanort_t, (const void *)nanort_p, nanort_size, " << Mode
      << "), \"" << Fn << "\"); }\n";
  closeIterators(C, Scope);
}

// A dependence of a chunk that names the loop variable: the item for each iteration of the
// chunk, the variable bound to the iteration's value; successive items that touch or overlap
// are merged into one access (2-D items are registered one by one).
void emitTaskloopAccess(Code &C, const DepItem &D,
                        const std::vector<std::pair<std::string, std::string>> &Vars, bool CPP,
                        const ItemChecks &Check) {
  const char *Mode = modeName(D.Mode);
  const std::map<std::string, std::string> *Saved = C.Subst;
  std::map<std::string, std::string> Own;
  for (const auto &V : Vars)
    if (Saved && Saved->count(V.second)) { // the iteration's own variable, not the enclosing
      if (C.Subst != &Own)                 // task's
        Own = *Saved;
      Own.erase(V.second);
      C.Subst = &Own;
    }
  C << "{ __UINTPTR_TYPE__ nanort_tl_lo = 0, nanort_tl_hi = 0; unsigned long long nanort_tl_j;\n"
       "for (nanort_tl_j = 0; nanort_tl_j < nanort_tl_ccount; ++nanort_tl_j) {\n";
  if (Vars.size() == 1) {
    const std::string &Type = Vars[0].first, &Var = Vars[0].second;
    C << Type << " " << Var << " = (" << Type
      << ")((unsigned long long)nanort_tl_lb + (nanort_tl_cfirst + nanort_tl_j) * "
         "nanort_tl_step);\n";
  } else { // collapse(n): the loops' variables of the iteration, from the head's locals
    C << taskloopCollapsedVars(Vars, "nanort_tl_cfirst + nanort_tl_j", [](const char *F,
                                                                          unsigned L) {
      return std::string("nanort_tl_") + F + std::to_string(L);
    });
  }
  IteratorScope Iterators; // a multidependence: its items for each iteration
  openIterators(C, D, Check, Iterators);
  C << "{ ";
  emitItem(C, D, CPP, Check);
  if (D.Sections.size() == 2)
    C << "nanort_check(nanort_task_access_2d(nanort_t, (const void *)nanort_p, "
         "nanort_row_bytes, nanort_rows, nanort_stride, "
      << Mode << "), \"nanort_task_access_2d\"); }\n";
  else
    C << "nanort_tl_add(nanort_t, &nanort_tl_lo, &nanort_tl_hi, (const void *)nanort_p, "
         "nanort_size, "
      << Mode << "); }\n";
  closeIterators(C, Iterators);
  C << "}\nnanort_tl_access(nanort_t, nanort_tl_lo, nanort_tl_hi, " << Mode << "); }\n";
  C.Subst = Saved;
}

} // namespace

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

std::string Lowerer::prelude() const {
  std::string S = "\n#include <nanort/nanort.h>\n#include <stdio.h>\n#include <stdlib.h>\n";
  // A failing call: in C the program ends with exit status 1 (statistics and trace written,
  // nanort_exit); in C++ it throws (a failed taskwait rethrows the task's own exception).
  // 'unused': a file may have a taskwait and no task (clang warns of unused static inline
  // functions in the main file).
  if (CPP)
    S += std::string(UsesOptional ? "#include <optional>\n" : "") +
         "#include <new>\n#include <type_traits>\n#include <nanort/error.hpp>\n"
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

// Label, priority, if, final, dependences, and the target's clauses. A task whose own
// devices have no kernel takes its index space (ndrange, shmem) from the target of a version
// (LaunchFrom), whose parameter names Rename turns into the task's.
void Lowerer::emitTaskClauses(Code &C, const Pragma &Task, const std::string &Who,
                              ArrayRef<const VarDecl *> Scope, const Pragma *Target,
                              const Pragma *LaunchFrom,
                              const std::map<std::string, std::string> *Rename,
                              const TaskloopLoop *Loop,
                              const Reductions *Red) {
  ItemChecks Check{"nanort: " + std::string(fileName(Task.Begin)) + ":" +
                       std::to_string(lineOf(Task.Begin)) + ": " + Who + ": ",
                   "nanort_t", &UsesSectionChecks, &Diags,
                   [&](const DepItem &D) { return baseKind(D, Scope); }};
  checkSectionBounds(Task, Scope);
  if (Target)
    checkSectionBounds(*Target, Scope);
  for (const Clause &Cl : Task.Clauses) {
    switch (Cl.Info->Kind) {
    case ClauseKind::In:
    case ClauseKind::Out:
    case ClauseKind::Inout:
    case ClauseKind::Concurrent:
    case ClauseKind::Commutative:
    case ClauseKind::Depend:
    case ClauseKind::Inprivate:
      for (const DepItem &D : Cl.Deps)
        if (Loop && namesTaskloopVariable(D, *Loop))
          emitTaskloopAccess(C, D, loopVars(*Loop), CPP, Check);
        else
          emitAccess(C, D, "nanort_task_access", modeName(D.Mode), CPP, Check);
      break;
    case ClauseKind::Reduction:
    case ClauseKind::WeakReduction:
    case ClauseKind::InReduction: {
      // An OpenMP taskloop's reduction: the chunks join its group's (which reported errors).
      bool OfGroup = Loop && Cl.Info->Kind == ClauseKind::Reduction && taskloopReductionGroup(Task);
      Muted = OfGroup;
      for (const DepItem &D : Cl.Deps)
        emitReduction(C, Cl, D, Scope, Check.Where, "nanort_t",
                      Cl.Info->Kind == ClauseKind::InReduction || OfGroup
                          ? "nanort_task_in_reduction(nanort_t, "
                          : "nanort_task_reduction(nanort_t, ",
                      Red);
      Muted = false;
      break;
    }
    // OmpSs-1 device clauses written on the task itself (no target line), as Mercurium takes
    // them: the same as on the target.
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
    case ClauseKind::Cost:
      // Evaluated, as OmpSs-2 does when it creates the task, and not used: the C ABI has no
      // cost hint (the dmda scheduler measures task times instead).
      C << "(void)("; C.user(Cl.Args[0]); C << ");\n";
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
      !(Target && (Target->find(ClauseKind::CopyDeps) || Target->find(ClauseKind::NoCopyDeps))) &&
      !Task.find(ClauseKind::CopyDeps) && !Task.find(ClauseKind::NoCopyDeps))
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

// One reduction item (Reduction.cpp): its bytes, with the operator built on the stack (the
// runtime copies it); a private-copy slot records where the item starts.
void Lowerer::emitReduction(Code &C, const Clause &Cl, const DepItem &D,
                            ArrayRef<const VarDecl *> Scope, const std::string &Where,
                            const char *TaskVar, const std::string &Prefix,
                            const Reductions *Red) {
  std::string Op = reductionOpInit(Cl, D, Scope);
  if (Op.empty())
    return;
  C << "{ ";
  emitItem(C, D, CPP,
           {Where, TaskVar, &UsesSectionChecks, &Diags,
            [&](const DepItem &D) { return baseKind(D, Scope); }});
  C << "nanort_reduction_op nanort_op = " << Op << ";\n";
  C << "nanort_check(" << Prefix << "(void *)nanort_p, nanort_size, &nanort_op), \""
    << Cl.Info->Spelling << "\");\n";
  if (Red)
    for (const ReductionSlot &S : Red->Slots)
      if (S.Item == &D) {
        std::string K = std::to_string(S.K);
        C << Red->ArgsAt << "->nanort_r" << K << " = (void *)nanort_p;\n"
          << Red->ArgsAt << "->nanort_o" << K
          << " = (long long)((const char *)(const void *)nanort_p - (const char *)(const void "
             "*)("
          << S.Base << "));\n";
      }
  C << "}\n";
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

// taskwait, taskwait noflush, and taskwait with dependences: OmpSs-1's on(...), OmpSs-2's
// in/out/inout(...) and OpenMP's depend(...). Each of the latter waits only for the earlier
// sibling tasks that access the named bytes, whatever their mode, and makes those bytes
// current on the host (nanort_taskwait_on). OmpSs-2 and OpenMP define them as an empty task
// with those dependences that the thread waits for: for out and inout that is the same set of
// tasks; in(x) would wait for the writers of x only, nanort waits for its readers too (more
// waiting, never less).
void Lowerer::lowerTaskwait(const Pragma &P) {
  std::vector<const DepItem *> Items;
  const Clause *First = nullptr;
  for (const Clause &Cl : P.Clauses)
    if (Cl.Info->Arg == ArgKind::DepList || Cl.Info->Arg == ArgKind::DependList) {
      if (!First)
        First = &Cl;
      for (const DepItem &D : Cl.Deps)
        Items.push_back(&D);
    }
  bool NoFlush = P.find(ClauseKind::Noflush) != nullptr;
  if (First && NoFlush) {
    if (First->Info->Kind == ClauseKind::On)
      report(DiagId::NoflushWithOn, P.DirLoc);
    else
      report(DiagId::NoflushWithDependences, P.DirLoc, {First->Info->Spelling});
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
    if (!First || !F || !F->getBody())
      continue;
    SourceLocation B = SM.getExpansionLoc(F->getBody()->getBeginLoc()),
                   E = SM.getExpansionLoc(F->getBody()->getEndLoc());
    if (SM.isBeforeInTranslationUnit(P.Begin, B) || SM.isBeforeInTranslationUnit(E, P.Begin) ||
        !SM.isBeforeInTranslationUnit(SM.getExpansionLoc(V->getLocation()), P.Begin))
      continue;
    Scope.push_back(V);
  }
  ItemChecks Check{"nanort: " + std::string(fileName(P.Begin)) + ":" +
                       std::to_string(lineOf(P.Begin)) + ": taskwait ",
                   "0", &UsesSectionChecks, &Diags,
                   [&](const DepItem &D) { return baseKind(D, Scope); }};
  checkSectionBounds(P, Scope);
  bool Multi = false;
  for (const DepItem *D : Items)
    Multi |= !D->Iters.empty();
  if (!First) {
    C << "nanort_check(" << (NoFlush ? "nanort_taskwait_noflush" : "nanort_taskwait")
      << "(), \"taskwait\");";
  } else if (!Multi) {
    size_t N = Items.size();
    C << "{ const void *nanort_addresses[" << (unsigned)N << "]; size_t nanort_sizes["
      << (unsigned)N << "];\n";
    for (size_t I = 0; I < N; ++I) {
      const DepItem &D = *Items[I];
      C << "{ ";
      emitItem(C, D, CPP, Check);
      C << "nanort_addresses[" << (unsigned)I << "] = (const void *)nanort_p;\n"
        << "nanort_sizes[" << (unsigned)I << "] = ";
      if (D.Sections.size() == 2) // from the first to the last byte of the block
        C << "(nanort_rows - 1) * nanort_stride + nanort_row_bytes; }\n";
      else
        C << "nanort_size; }\n";
    }
    C << "nanort_check(nanort_taskwait_on(nanort_addresses, nanort_sizes, " << (unsigned)N
      << "), \"taskwait on\"); }";
  } else {
    // Multidependences: the number of items is known when the taskwait runs only; waiting for
    // each item in turn waits for the same tasks.
    C << "{ ";
    for (const DepItem *D : Items) {
      IteratorScope It;
      openIterators(C, *D, Check, It);
      C << "{ ";
      emitItem(C, *D, CPP, Check);
      C << "const void *nanort_address = (const void *)nanort_p;\nsize_t nanort_bytes = ";
      if (D->Sections.size() == 2)
        C << "(nanort_rows - 1) * nanort_stride + nanort_row_bytes;\n";
      else
        C << "nanort_size;\n";
      C << "nanort_check(nanort_taskwait_on(&nanort_address, &nanort_bytes, 1), "
           "\"taskwait on\"); }\n";
      closeIterators(C, It);
    }
    C << "}";
  }
  std::string S = C.str();
  if (S.find('\n') != std::string::npos)
    S += Code::marker(SM, P.End);
  RW.InsertTextAfter(P.End, S);
}

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
      if (Cap.VM) { // as in C: untyped, with the row lengths (a class has no VLA members)
        if (Cap.How == Sharing::Shared || (Cap.How == Sharing::Firstprivate && !Cap.VM->isArray()))
          L << " void *nanort_c_" << Name << ";";
        else if (Cap.VM->isArray())
          L << " std::size_t nanort_o_" << Name << ";";
        for (unsigned K = 0; K < Cap.VM->varDims(); ++K)
          L << " std::size_t nanort_d_" << Name << "_" << K << ";";
      } else if (Cap.How == Sharing::Shared || Cap.How == Sharing::Inprivate)
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
        std::vector<std::string> Lengths;
        for (unsigned K = 0; K < Cap.VM->varDims(); ++K)
          Lengths.push_back("nanort_a->nanort_d_" + Name + "_" + std::to_string(K));
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
      } else if (Cap.How == Sharing::Shared || Cap.How == Sharing::Inprivate)
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
      else if (Cap.How == Sharing::Firstprivate)
        C << "__builtin_memcpy((void *)&" << A << "->" << Name << ", (const void *)&"
          << View(Name) << ", sizeof " << View(Name) << ");\n";
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
  for (unsigned L = 0; L < Levels.size(); ++L) {
    const TaskloopLoop &Lv = *Levels[L];
    std::string X = Collapsed ? std::to_string(L) : "";
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
    return report(DiagId::JumpOutOfCritical, JF.Found->getBeginLoc(),
                  {isa<ReturnStmt>(JF.Found) ? "'return'" : "'goto'"});
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
    return report(DiagId::AtomicForm, P.DirLoc, {P.Namespace});
  // A type that depends on a template parameter is checked where the template is
  // instantiated, by a static_assert in the lowered code.
  bool Dependent = LHS->isTypeDependent();
  if (!Dependent && !LHS->getType()->isScalarType())
    return report(DiagId::AtomicScalar, P.DirLoc);
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
            ")>>::value, " + cLiteral(formatDiag(DiagId::AtomicScalar)) + "); ";
  Code += "__typeof__(" + L + ") *nanort_p = &(" + L + "); __typeof__(" + L +
                     ") nanort_old, nanort_new; __atomic_load(nanort_p, &nanort_old, "
                     "__ATOMIC_RELAXED); do { nanort_new = nanort_old " + Op + " (" + R +
                     "); } while (!__atomic_compare_exchange(nanort_p, &nanort_old, "
                     "&nanort_new, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)); }";
  RW.RemoveText(CharSourceRange::getCharRange(C.Begin, End));
  RW.InsertTextAfter(C.Begin, Code);
}

} // namespace lowering
} // namespace nanort
