//===- Dependences.cpp - Dependence items and their checks ----------------===//
//
// The code that registers a task's dependence items and copies with the runtime, and that
// checks their sections and shapes when the task is created.
//
//===----------------------------------------------------------------------===//
#include "Dependences.h"
#include "Taskloop.h"

using namespace clang;

namespace nanort {
namespace lowering {

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
  // The shape's dimensions, nanort_dimK, each checked unless it is a constant.
  auto Dims = [&] {
    for (size_t I = 0; I < D.Shape.size(); ++I) {
      std::string K = std::to_string(I);
      C << "long long nanort_dim" << K << " = (long long)("; C.user(D.Shape[I]); C << ");\n";
      if (I < D.ConstShape.size() && Known(D.ConstShape[I]))
        continue;
      C << "if (nanort_dim" << K << " < 0) ";
      Fail(shapeSizeMessage(I, D.Shape.size(), "%lld"), "nanort_dim" + K);
    }
  };
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
    Dims();
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
    Dims();
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

} // namespace lowering
} // namespace nanort
