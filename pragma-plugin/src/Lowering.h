//===- Lowering.h - From recorded pragmas to rewritten source ---------------===//
#ifndef NANORT_PLUGIN_LOWERING_H
#define NANORT_PLUGIN_LOWERING_H

#include "Pragma.h"

#include <map>
#include <string>
#include <vector>

namespace clang {
class ASTContext;
}

namespace nanort {

// The words that OpenCL C host declarations use and that host code defines away.
extern const char *const KernelKeywords[];
// '#define' lines for KernelKeywords, each guarded by '#ifndef'.
std::string kernelKeywordDefines();

// Text for the inside of a C string literal ("#line 3 \"...\"", labels, file names).
std::string escapeStringLiteral(llvm::StringRef In);

// What the plugin's arguments choose for the lowering.
struct LoweringOptions {
  // no-copy-deps (mcc's --no-copy-deps): a task whose target says neither copy_deps nor
  // no_copy_deps moves only the data of its copy clauses.
  bool NoCopyDepsByDefault = false;
};

// Associates each pragma of the main file with the declaration or statement after it, checks
// what the grammar cannot (ndrange arity, shmem without ndrange, ...), and rewrites the main
// file. Returns false when an error was reported to Diags; Out is then unspecified.
// Included files with pragmas are rewritten too (their pragma lines removed) into Headers,
// by file name.
bool lowerMainFile(clang::ASTContext &Ctx, std::vector<Pragma> &Pragmas, DiagSink &Diags,
                   const LoweringOptions &Options, bool DefineKernelKeywords, std::string &Out,
                   std::map<std::string, std::string> &Headers);

} // namespace nanort

#endif
