// Internal invariants: a check that fails only through a bug in nanort itself, never through
// what the program asked for. It throws InternalError, whose message says so, names the file
// and line of the check and asks for a report; the C interface turns it into
// NANORT_ERROR_INTERNAL (a mistake of the caller is std::invalid_argument or std::logic_error
// instead, reported as an invalid argument).
//
//   NANORT_INVARIANT(valid != 0, "coherence: a fragment with no valid copy");
//   NANORT_UNREACHABLE_STATE("coherence: unknown event");  // where no state may lead
//
// Shared by the directory/cache and the runtime: the runtime links this library.
#pragma once

#include <cstring>
#include <stdexcept>
#include <string>

namespace nanort {

// A broken internal invariant (not a std::logic_error: those are the caller's mistakes).
struct InternalError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

namespace detail {

// The path of 'file' from the project's root: from the library folder above its src/ or
// include/ (or from tests/), whatever folder the build ran in.
inline const char *project_path(const char *file) {
  const char *start = file;
  for (const char *marker : {"/src/", "/include/"})
    for (const char *at = std::strstr(file, marker); at; at = std::strstr(at + 1, marker)) {
      const char *folder = at;  // back to the start of the folder above the marker
      while (folder > file && folder[-1] != '/') --folder;
      if (folder > start) start = folder;
    }
  for (const char *at = std::strstr(file, "/tests/"); at; at = std::strstr(at + 1, "/tests/"))
    if (at + 1 > start) start = at + 1;
  return start;
}

[[noreturn]] inline void invariant_failed(const char *file, int line, const std::string &what) {
  throw InternalError("internal error in nanort at " + std::string(project_path(file)) + ":" +
                      std::to_string(line) + ": " + what +
                      " (a bug in nanort: please report it, with the program that shows it)");
}

}  // namespace detail
}  // namespace nanort

// Throws nanort::InternalError naming this file and line when 'condition' is false. 'what'
// (a C string or std::string) is evaluated only then.
#define NANORT_INVARIANT(condition, what)                                   \
  do {                                                                      \
    if (!(condition)) [[unlikely]]                                          \
      ::nanort::detail::invariant_failed(__FILE__, __LINE__, (what));       \
  } while (0)

// Throws nanort::InternalError naming this file and line: a state that no path may reach.
#define NANORT_UNREACHABLE_STATE(what) ::nanort::detail::invariant_failed(__FILE__, __LINE__, (what))
