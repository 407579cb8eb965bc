//===- Diagnostics.h - The plugin's diagnostics, from one table -------------===//
//
// Every message that the plugin reports is declared in Diagnostics.def: an ID, a severity
// and a format whose %0, %1, ... are the arguments of the report. pragma-plugin/README.md
// lists the table (test plugin.diagnostics.documented checks that it matches).
//
//===----------------------------------------------------------------------===//
#ifndef NANORT_PLUGIN_DIAGNOSTICS_H
#define NANORT_PLUGIN_DIAGNOSTICS_H

#include "clang/Basic/Diagnostic.h"
#include "clang/Basic/SourceLocation.h"

#include <string>
#include <vector>

namespace nanort {

enum class DiagId {
#define NANORT_DIAG(ID, SEVERITY, FORMAT) ID,
#include "Diagnostics.def"
#undef NANORT_DIAG
};

enum class DiagSeverity { Error, Warning, Note };

// A report's arguments, in the order of the format's placeholders.
using DiagArgs = std::vector<std::string>;

DiagSeverity diagSeverity(DiagId Id);
// The message: the format with each %N replaced by Args[N].
std::string formatDiag(DiagId Id, const DiagArgs &Args = {});
// Reports Id now, through the compile's DiagnosticsEngine (at Loc, when valid).
void reportDiag(clang::DiagnosticsEngine &D, clang::SourceLocation Loc, DiagId Id,
                const DiagArgs &Args = {});
// The DiagnosticsEngine level of a severity.
clang::DiagnosticsEngine::Level diagLevel(DiagSeverity S);

} // namespace nanort

#endif
