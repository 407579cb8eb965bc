// The files an OpenCL program's build can read through #include, for the program cache's key:
// a cached binary is valid only while every header that went into it is unchanged.
//
// The search copies what the OpenCL compilers do, widened where they differ (a wider search
// costs a few stat calls; a narrower one would miss a change):
//  - the folders of the build options' -I (also -iquote, -isystem, -idirafter), a relative one
//    taken from the current folder of the process, as clang (PoCL) and NVIDIA's compiler do;
//  - the current folder itself, which PoCL searches first (it adds "-I." to every build);
//  - for #include "...", the including header's folder (the program's own text has no folder
//    a user could put headers in: PoCL compiles it from a temporary file in its own cache);
//  - -include and -imacros files, as #include "..." lines before the program's first.
// Every #include line is followed, whatever #if around it, and at every place it could be found
// (not only the first the compiler would take): each place's state (the file's SHA-256, "absent",
// "not a file") goes into the key, so a header changed, added in front of another or removed
// changes the key. A header found in several places is followed in each.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace nanort::rt::opencl {

struct IncludeDirective {
  enum class Form { kQuoted, kAngled, kComputed };  // "x.h", <x.h>, a macro
  Form form = Form::kQuoted;
  std::string name;  // the file's name as written; for kComputed, the directive's text
  std::string file;  // where the line is, after #line directives ("" when none named one)
  int line = 0;      // its line number, after #line directives
};

// The #include, #include_next and #import lines of 'text' (comments and line splices handled
// as the preprocessor does), in order. Fast when the text holds neither "include" nor "import".
std::vector<IncludeDirective> find_include_directives(std::string_view text);

// What the build options say about headers. Options are split at white space, and double
// quotes group and are removed, as PoCL does (NVIDIA's compiler keeps them as part of the path:
// write folders unquoted for it).
struct IncludeOptions {
  std::vector<std::string> folders;  // -I, -iquote, -isystem, -idirafter, as written
  std::vector<std::string> files;    // -include, -imacros, as written
};
IncludeOptions parse_include_options(std::string_view options);

struct IncludeScan {
  // One line per place searched: its path and state (sorted; "" when nothing is included).
  std::string key;
  // Why the program must not be cached ("" when it may): an #include found nowhere, or naming
  // its file through a macro. Such a file, if the compiler finds it at all, is somewhere this
  // scan does not look (the compiler's own folders), where a change could not be seen.
  std::string problem;
  std::size_t headers = 0;  // files found and read
};

// Scans 'source' (named 'origin' in messages) built with 'options'. 'working_folder' is the
// folder relative paths start from; "" means the current folder of the process.
IncludeScan scan_includes(std::string_view source, std::string_view options,
                          std::string_view origin, const std::string &working_folder = "");

}  // namespace nanort::rt::opencl
