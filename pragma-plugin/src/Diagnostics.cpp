//===- Diagnostics.cpp - Formatting the table's messages --------------------===//
#include "Diagnostics.h"

#include "clang/Basic/SourceManager.h"

using namespace clang;

namespace nanort {

namespace {
struct DiagInfo {
  DiagSeverity Severity;
  const char *Format;
};

const DiagInfo Table[] = {
#define NANORT_DIAG(ID, SEVERITY, FORMAT) {DiagSeverity::SEVERITY, FORMAT},
#include "Diagnostics.def"
#undef NANORT_DIAG
};
} // namespace

DiagSeverity diagSeverity(DiagId Id) { return Table[static_cast<unsigned>(Id)].Severity; }

std::string formatDiag(DiagId Id, const DiagArgs &Args) {
  std::string Out;
  for (const char *F = Table[static_cast<unsigned>(Id)].Format; *F; ++F) {
    if (F[0] == '%' && F[1] >= '0' && F[1] <= '9') {
      size_t N = static_cast<size_t>(F[1] - '0');
      if (N < Args.size())
        Out += Args[N];
      ++F;
      continue;
    }
    Out += *F;
  }
  return Out;
}

DiagnosticsEngine::Level diagLevel(DiagSeverity S) {
  switch (S) {
  case DiagSeverity::Error:
    return DiagnosticsEngine::Error;
  case DiagSeverity::Warning:
    return DiagnosticsEngine::Warning;
  case DiagSeverity::Note:
    return DiagnosticsEngine::Note;
  }
  return DiagnosticsEngine::Error;
}

void reportDiag(DiagnosticsEngine &D, SourceLocation Loc, DiagId Id, const DiagArgs &Args) {
  unsigned CustomID = D.getCustomDiagID(diagLevel(diagSeverity(Id)), "%0");
  D.Report(Loc, CustomID) << formatDiag(Id, Args);
}

} // namespace nanort
