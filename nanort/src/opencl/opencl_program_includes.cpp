#include "opencl_program_includes.hpp"

#include "opencl_program_cache.hpp"  // sha256

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <deque>
#include <map>
#include <utility>

namespace nanort::rt::opencl {

namespace {

// A bound on the headers followed: past it the program is not cached (a runaway include tree
// would cost more to scan than to compile).
constexpr std::size_t kMaxHeaders = 4096;

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\v' || c == '\f' || c == '\r';
}
bool is_identifier(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// A logical line: splices removed, comments replaced by a space; the physical line it starts on.
struct LogicalLine {
  std::string text;
  int physical = 0;
};

std::vector<LogicalLine> logical_lines(std::string_view text) {
  // Pass 1: remove backslash-newline splices; remember the physical line after each newline kept.
  std::string spliced;
  spliced.reserve(text.size());
  std::vector<int> line_after_newline;
  int physical = 1;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\') {
      std::size_t j = i + 1;
      if (j < text.size() && text[j] == '\r') ++j;
      if (j < text.size() && text[j] == '\n') {
        ++physical;
        i = j;
        continue;
      }
    }
    if (text[i] == '\n') line_after_newline.push_back(++physical);
    spliced += text[i];
  }
  // Pass 2: comments and literals. A block comment becomes one space and does not end the line.
  std::vector<LogicalLine> lines(1);
  lines.back().physical = 1;
  std::size_t newlines = 0;
  for (std::size_t i = 0; i < spliced.size(); ++i) {
    const char c = spliced[i];
    const char next = i + 1 < spliced.size() ? spliced[i + 1] : '\0';
    if (c == '\n') {
      lines.push_back({std::string(), line_after_newline[newlines++]});
    } else if (c == '/' && next == '/') {
      while (i + 1 < spliced.size() && spliced[i + 1] != '\n') ++i;
    } else if (c == '/' && next == '*') {
      i += 2;
      while (i < spliced.size() &&
             !(spliced[i] == '*' && i + 1 < spliced.size() && spliced[i + 1] == '/')) {
        if (spliced[i] == '\n') ++newlines;
        ++i;
      }
      ++i;  // on the '/' (or past the end: an unterminated comment runs to the end)
      lines.back().text += ' ';
    } else if (c == '"' || c == '\'') {
      // A literal (or a quoted header name) runs to its closing quote or the line's end.
      lines.back().text += c;
      while (i + 1 < spliced.size() && spliced[i + 1] != '\n') {
        const char d = spliced[++i];
        lines.back().text += d;
        if (d == '\\' && i + 1 < spliced.size() && spliced[i + 1] != '\n') {
          lines.back().text += spliced[++i];
        } else if (d == c) {
          break;
        }
      }
    } else {
      lines.back().text += c;
    }
  }
  return lines;
}

std::string trimmed(std::string_view text) {
  while (!text.empty() && is_space(text.front())) text.remove_prefix(1);
  while (!text.empty() && is_space(text.back())) text.remove_suffix(1);
  return std::string(text);
}

std::string quoted(std::string_view text) {
  return "'" + std::string(text) + "'";
}

std::string folder_of(const std::string &path) {
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string joined(const std::string &folder, const std::string &name) {
  if (folder.empty()) return name;
  return folder.back() == '/' ? folder + name : folder + "/" + name;
}

std::string absolute(const std::string &working_folder, const std::string &path) {
  return !path.empty() && path.front() == '/' ? path : joined(working_folder, path);
}

bool read_fd(int fd, std::string &data) {
  char buffer[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) return true;
    data.append(buffer, static_cast<std::size_t>(n));
  }
}

class Scanner {
 public:
  Scanner(std::string working_folder, std::vector<std::string> folders)
      : working_folder_(std::move(working_folder)), folders_(std::move(folders)) {}

  // Follows the directives of one file; false (with problem_ set) when the program must not
  // be cached.
  bool follow(const std::vector<IncludeDirective> &directives, const std::string &includer_folder,
              std::string_view where) {
    for (const IncludeDirective &directive : directives) {
      const std::string at = (directive.file.empty() ? std::string(where) : directive.file) + ":" +
                             std::to_string(directive.line);
      if (directive.form == IncludeDirective::Form::kComputed) {
        problem_ = "'#include " + directive.name + "' at " + at +
                   " names its file through a macro, which only the compiler expands";
        return false;
      }
      const bool quoted_form = directive.form == IncludeDirective::Form::kQuoted;
      const std::string spelled =
          quoted_form ? "\"" + directive.name + "\"" : "<" + directive.name + ">";
      if (directive.name.empty()) {
        problem_ = "'#include " + spelled + "' at " + at + " names no file";
        return false;
      }
      if (!look_up(directive.name, quoted_form ? &includer_folder : nullptr)) {
        if (!problem_.empty()) return false;
        problem_ = "'#include " + spelled + "' at " + at +
                   (directive.name.front() == '/'
                        ? std::string(" names a file that does not exist")
                        : " is found in none of the folders " +
                              searched(quoted_form ? &includer_folder : nullptr));
        return false;
      }
    }
    return true;
  }

  // -include and -imacros files: found as by #include "..." in the program's own text.
  bool follow_forced(const std::vector<std::string> &files) {
    for (const std::string &file : files) {
      if (file.empty()) continue;  // (from -include "": clang refuses it)
      if (!look_up(file, &working_folder_)) {
        if (!problem_.empty()) return false;
        problem_ = "the build options' file " + quoted(file) +
                   (file.front() == '/'
                        ? std::string(" does not exist")
                        : " is found in none of the folders " + searched(&working_folder_));
        return false;
      }
    }
    return true;
  }

  // Scans the headers found so far, and those they include, until none is left.
  bool follow_headers() {
    while (!to_scan_.empty()) {
      auto [path, text] = std::move(to_scan_.front());
      to_scan_.pop_front();
      if (!follow(find_include_directives(text), folder_of(path), path)) return false;
    }
    return true;
  }

  std::string key() const {
    std::string key;
    for (const auto &[path, state] : places_)  // length-prefixed: a path may hold anything
      key.append(std::to_string(path.size()))
          .append(" ")
          .append(path)
          .append(" ")
          .append(state)
          .append("\n");
    return key;
  }
  const std::string &problem() const { return problem_; }
  std::size_t headers() const { return headers_; }

 private:
  // Records every place 'name' could be; queues each file found for scanning. False when it is
  // found nowhere, or (with problem_ set) when a place cannot be read.
  bool look_up(const std::string &name, const std::string *includer_folder) {
    std::vector<std::string> candidates;
    if (name.front() == '/') {
      candidates.push_back(name);
    } else {
      if (includer_folder) candidates.push_back(joined(*includer_folder, name));
      for (const std::string &folder : folders_) candidates.push_back(joined(folder, name));
    }
    bool found = false;
    for (const std::string &path : candidates) {
      auto [place, added] = places_.try_emplace(path);
      if (added) place->second = probe(path);
      if (!problem_.empty()) return false;
      found = found || place->second.rfind("sha256 ", 0) == 0;
    }
    return found;
  }

  // The state of one place; a file found is queued for scanning.
  std::string probe(const std::string &path) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);  // a FIFO: no wait
    if (fd < 0) {
      if (errno == ENOENT || errno == ENOTDIR || errno == EISDIR) return "absent";
      problem_ = "the header " + quoted(path) + " cannot be read: " + std::strerror(errno);
      return "";
    }
    struct stat st {};
    std::string text;
    const bool is_file = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    const bool read = is_file && read_fd(fd, text);
    const int error = errno;
    ::close(fd);
    if (!is_file) return "not a file";  // a folder of that name: the compiler goes on searching
    if (!read) {
      problem_ = "the header " + quoted(path) + " cannot be read: " + std::strerror(error);
      return "";
    }
    if (++headers_ > kMaxHeaders) {
      problem_ = "more than " + std::to_string(kMaxHeaders) + " headers are included";
      return "";
    }
    std::string state = "sha256 " + to_hex(sha256(text));
    to_scan_.emplace_back(path, std::move(text));
    return state;
  }

  std::string searched(const std::string *includer_folder) const {
    std::vector<std::string> folders;
    if (includer_folder) folders.push_back(*includer_folder);
    for (const std::string &folder : folders_)
      if (std::find(folders.begin(), folders.end(), folder) == folders.end())
        folders.push_back(folder);
    std::string text;
    for (const std::string &folder : folders) text += (text.empty() ? "" : ", ") + quoted(folder);
    return text;
  }

  std::string working_folder_;
  std::vector<std::string> folders_;           // absolute, the current folder first
  std::map<std::string, std::string> places_;  // each path probed once: a header read once
  std::size_t headers_ = 0;
  std::deque<std::pair<std::string, std::string>> to_scan_;
  std::string problem_;
};

}  // namespace

std::vector<IncludeDirective> find_include_directives(std::string_view text) {
  std::vector<IncludeDirective> found;
  if (text.find("include") == std::string_view::npos &&
      text.find("import") == std::string_view::npos)
    return found;
  std::string file;      // from the last #line that named one
  long line_offset = 0;  // presumed line = physical line + offset
  bool line_pending = false;
  long pending_line = 0;
  for (const LogicalLine &logical : logical_lines(text)) {
    if (line_pending) {
      line_offset = pending_line - logical.physical;
      line_pending = false;
    }
    std::string_view rest = logical.text;
    while (!rest.empty() && is_space(rest.front())) rest.remove_prefix(1);
    if (rest.empty() || rest.front() != '#') continue;
    rest.remove_prefix(1);
    while (!rest.empty() && is_space(rest.front())) rest.remove_prefix(1);
    std::size_t length = 0;
    while (length < rest.size() && is_identifier(rest[length])) ++length;
    const std::string_view word = rest.substr(0, length);
    rest.remove_prefix(length);
    while (!rest.empty() && is_space(rest.front())) rest.remove_prefix(1);
    if (word == "line" || (!word.empty() && is_digit(word.front()))) {
      // #line N "file", or a line marker # N "file": the next line is line N.
      std::string_view digits = word == "line" ? rest : word;
      if (word == "line") {
        std::size_t count = 0;
        while (count < rest.size() && is_digit(rest[count])) ++count;
        digits = rest.substr(0, count);
        rest.remove_prefix(count);
      }
      if (digits.empty() || digits.size() > 9) continue;
      pending_line = std::stol(std::string(digits));
      line_pending = true;
      while (!rest.empty() && is_space(rest.front())) rest.remove_prefix(1);
      if (rest.size() >= 2 && rest.front() == '"') {
        const std::size_t close = rest.find('"', 1);
        if (close != std::string_view::npos) file = std::string(rest.substr(1, close - 1));
      }
      continue;
    }
    if (word != "include" && word != "include_next" && word != "import") continue;
    IncludeDirective directive;
    directive.file = file;
    directive.line = static_cast<int>(logical.physical + line_offset);
    const char open = rest.empty() ? '\0' : rest.front();
    const char close = open == '"' ? '"' : open == '<' ? '>' : '\0';
    const std::size_t end = close ? rest.find(close, 1) : std::string_view::npos;
    if (end != std::string_view::npos) {
      directive.form =
          open == '"' ? IncludeDirective::Form::kQuoted : IncludeDirective::Form::kAngled;
      directive.name = std::string(rest.substr(1, end - 1));
    } else {
      directive.form = IncludeDirective::Form::kComputed;
      directive.name = trimmed(rest);
    }
    found.push_back(std::move(directive));
  }
  return found;
}

IncludeOptions parse_include_options(std::string_view options) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false, in_quotes = false;
  for (char c : options) {
    if (c == '"') {
      in_quotes = !in_quotes;
      in_word = true;
    } else if (!in_quotes && (is_space(c) || c == '\n')) {
      if (in_word) words.push_back(std::move(word));
      word.clear();
      in_word = false;
    } else {
      word += c;
      in_word = true;
    }
  }
  if (in_word) words.push_back(std::move(word));

  IncludeOptions result;
  static constexpr std::pair<std::string_view, bool> kOptions[] = {
      // the option, and whether it names a folder (else a file)
      {"-I", true},         {"-iquote", true},   {"-isystem", true},
      {"-idirafter", true}, {"-include", false}, {"-imacros", false}};
  for (std::size_t i = 0; i < words.size(); ++i) {
    const std::string &w = words[i];
    for (const auto &[option, folder] : kOptions) {
      if (w.rfind(option, 0) != 0) continue;
      // "-Idir" or "-I dir", and so for the others (clang takes both forms of each).
      std::string value;
      if (w.size() > option.size()) {
        value = w.substr(option.size());
        if (value.front() == '-') continue;  // another option (-include-pch), not ours
      } else if (i + 1 < words.size()) {
        value = words[++i];
      } else {
        break;
      }
      (folder ? result.folders : result.files).push_back(std::move(value));
      break;
    }
  }
  return result;
}

IncludeScan scan_includes(std::string_view source, std::string_view options,
                          std::string_view origin, const std::string &working_folder) {
  IncludeScan scan;
  const std::vector<IncludeDirective> directives = find_include_directives(source);
  const IncludeOptions include_options = parse_include_options(options);
  // The common case, no #include and no -include: nothing more to do.
  if (directives.empty() && include_options.files.empty()) return scan;

  std::string folder = working_folder;
  if (folder.empty()) {
    char buffer[PATH_MAX];
    if (!::getcwd(buffer, sizeof buffer)) {
      scan.problem = std::string("the current folder cannot be found: ") + std::strerror(errno);
      return scan;
    }
    folder = buffer;
  }
  std::vector<std::string> folders = {folder};
  for (const std::string &option_folder : include_options.folders) {
    std::string path = absolute(folder, option_folder);
    if (std::find(folders.begin(), folders.end(), path) == folders.end())
      folders.push_back(std::move(path));
  }
  Scanner scanner(folder, std::move(folders));
  const bool complete = scanner.follow_forced(include_options.files) &&
                        scanner.follow(directives, folder, origin) && scanner.follow_headers();
  scan.headers = scanner.headers();
  if (!complete) {
    scan.problem = scanner.problem();
    return scan;
  }
  scan.key = scanner.key();
  return scan;
}

}  // namespace nanort::rt::opencl
