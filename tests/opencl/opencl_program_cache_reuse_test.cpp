// The on-disk program cache across runs, end to end: opencl_cache_run (a tiny OpenCL program)
// runs as a separate process, on each device found, with NANORT_OPENCL_CACHE set to a fresh
// folder. The first run writes an entry; the second run uses it (the entry is not written
// again: a build from source would replace it, with a new inode); a corrupt entry is detected
// and rebuilt. With a kernel file that includes headers: a header changed between runs gives
// the new result, not the old binary's; an #include found nowhere keeps the program out of the
// cache. This process never starts the runtime.
#include "opencl_test.hpp"

#include <gtest/gtest.h>

#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern char **environ;

namespace {

namespace fs = std::filesystem;
using namespace nanort_cl_test;

// The environment as the process started. OpenCL's start-up may change this process's own:
// the ocl-icd loader cuts OCL_ICD_FILENAMES at its first ':' in place (seen on a GPU machine
// whose image lists PoCL and NVIDIA there: a child then found PoCL alone), and PoCL sets
// HWLOC_PLUGINS_PATH. Children get the environment from before (this runs at static
// initialisation, before the device list below asks OpenCL).
std::vector<std::string> environment_at_start() {
  std::vector<std::string> env;
  for (char **entry = environ; *entry; ++entry) env.emplace_back(*entry);
  return env;
}
const std::vector<std::string> kEnvironmentAtStart = environment_at_start();

struct RunResult {
  int exit_code = -1;
  std::string output;
};

// Runs opencl_cache_run with 'arguments', in 'folder' (when not empty) and in the environment
// this process started with, changed by 'variables': "NAME=value" sets NAME, "NAME" removes
// it. Its output goes through a file.
RunResult run_child(const std::vector<std::string> &variables, const fs::path &output,
                    std::vector<std::string> arguments = {}, const fs::path &folder = {}) {
  std::vector<std::string> env;
  for (const std::string &text : kEnvironmentAtStart) {
    bool replaced = false;
    for (const std::string &variable : variables)
      replaced = replaced || text.rfind(variable.substr(0, variable.find('=')) + "=", 0) == 0;
    if (!replaced) env.push_back(text);
  }
  for (const std::string &variable : variables)
    if (variable.find('=') != std::string::npos) env.push_back(variable);
  std::vector<char *> envp;
  for (std::string &text : env) envp.push_back(text.data());
  envp.push_back(nullptr);
  std::string program = OPENCL_CACHE_RUN;
  std::vector<char *> argv = {program.data()};
  for (std::string &argument : arguments) argv.push_back(argument.data());
  argv.push_back(nullptr);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  // The output file first: a relative path names it from this process's folder.
  posix_spawn_file_actions_addopen(&actions, 1, output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  if (!folder.empty()) posix_spawn_file_actions_addchdir_np(&actions, folder.c_str());
  RunResult result;
  pid_t pid = 0;
  const int error = posix_spawn(&pid, program.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    result.output = "posix_spawn " + program + " failed: " + std::to_string(error);
    return result;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream in(output);
  result.output.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return result;
}

struct EntryState {
  fs::path path;
  ino_t inode = 0;
  struct timespec mtime {};
  off_t size = 0;
};

// The cache's entries (*.bin; temporary files are not entries).
std::vector<EntryState> entries(const fs::path &folder) {
  std::vector<EntryState> found;
  std::error_code error;
  for (const auto &item : fs::directory_iterator(folder, error)) {
    if (item.path().extension() != ".bin") continue;
    struct stat st {};
    if (::stat(item.path().c_str(), &st) != 0) continue;
    found.push_back({item.path(), st.st_ino, st.st_mtim, st.st_size});
  }
  return found;
}

// Whether the file is a complete entry: the header's magic, and its sizes adding up to the
// file's (the layout of ProgramCacheEntryHeader: 8 bytes of magic, two 32-bit words, the key
// size, the binary size, a 32-byte checksum; then the key and the binary).
bool is_whole_entry(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  char header[64];
  if (!in.read(header, sizeof header)) return false;
  std::uint64_t key_size = 0, binary_size = 0;
  std::memcpy(&key_size, header + 16, 8);
  std::memcpy(&binary_size, header + 24, 8);
  return std::memcmp(header, "NRTCLPB", 8) == 0 &&
         sizeof header + key_size + binary_size == fs::file_size(path);
}

class ProgramCacheReuse : public ::testing::TestWithParam<ClDevice> {
 protected:
  void SetUp() override {
    if (GetParam().index < 0)
      GTEST_SKIP() << "no OpenCL device: the ICD loader found no platform with a device";
    char name[] = "/tmp/nanort-cache-reuse-XXXXXX";
    ASSERT_NE(mkdtemp(name), nullptr);
    scratch_ = name;
    cache_ = scratch_ / "cache";  // does not exist yet: the first run creates it
  }
  void TearDown() override {
    std::error_code error;
    if (!scratch_.empty()) fs::remove_all(scratch_, error);
  }
  RunResult run(const char *which) {
    return run_child({"NANORT_OPENCL_DEVICES=" + std::to_string(GetParam().index),
                      "NANORT_OPENCL_CACHE=" + cache_.string()},
                     scratch_ / (std::string(which) + ".log"));
  }
  fs::path scratch_, cache_;
};

TEST_P(ProgramCacheReuse, SecondRunUsesTheEntryOfTheFirst) {
  const RunResult first = run("first");
  ASSERT_EQ(first.exit_code, 0) << first.output;
  ASSERT_TRUE(contains(first.output, "cache run: ok"));
  struct stat folder {};
  ASSERT_EQ(::stat(cache_.c_str(), &folder), 0) << "the first run did not create the cache folder";
  EXPECT_EQ(folder.st_mode & 0777, 0700u) << "the cache folder is private";
  const std::vector<EntryState> after_first = entries(cache_);
  ASSERT_EQ(after_first.size(), 1u) << "one program on one device: one entry";
  EXPECT_GT(after_first[0].size, 64) << "an entry holds a header, the key and a binary";

  const RunResult second = run("second");
  ASSERT_EQ(second.exit_code, 0) << second.output;
  const std::vector<EntryState> after_second = entries(cache_);
  ASSERT_EQ(after_second.size(), 1u);
  EXPECT_EQ(after_second[0].path, after_first[0].path);
  EXPECT_EQ(after_second[0].inode, after_first[0].inode)
      << "the entry was written again: the second run built from source";
  EXPECT_EQ(after_second[0].mtime.tv_sec, after_first[0].mtime.tv_sec);
  EXPECT_EQ(after_second[0].mtime.tv_nsec, after_first[0].mtime.tv_nsec);

  EXPECT_TRUE(is_whole_entry(after_first[0].path));

  // A corrupt entry (its binary cut short) is detected, deleted and rebuilt; the run is right.
  fs::resize_file(after_second[0].path, static_cast<std::uintmax_t>(after_second[0].size - 16));
  ASSERT_FALSE(is_whole_entry(after_second[0].path));
  const RunResult third = run("third");
  ASSERT_EQ(third.exit_code, 0) << third.output;
  const std::vector<EntryState> after_third = entries(cache_);
  ASSERT_EQ(after_third.size(), 1u);
  EXPECT_EQ(after_third[0].path, after_first[0].path);
  // (Not the inode: the corrupt file is deleted before the new one is made, which may get
  // its inode number. Not the size either: PoCL's binaries hold the kernels it compiled so
  // far, so a rebuilt entry may be larger than the first one.)
  EXPECT_TRUE(is_whole_entry(after_third[0].path)) << "the corrupt entry was not rebuilt";
}

// Without NANORT_OPENCL_CACHE the cache lives in $XDG_CACHE_HOME/nanort/opencl; with
// NANORT_OPENCL_CACHE=off nothing is written there, and the program runs all the same.
TEST_P(ProgramCacheReuse, DefaultFolderAndCacheOff) {
  const std::string device = "NANORT_OPENCL_DEVICES=" + std::to_string(GetParam().index);
  const fs::path xdg = scratch_ / "xdg";
  fs::create_directories(xdg);
  const std::vector<std::string> common = {device, "XDG_CACHE_HOME=" + xdg.string(),
                                           "POCL_CACHE_DIR=" + (scratch_ / "pocl").string()};
  std::vector<std::string> off = common;
  off.push_back("NANORT_OPENCL_CACHE=off");
  const RunResult without = run_child(off, scratch_ / "off.log");
  ASSERT_EQ(without.exit_code, 0) << without.output;
  EXPECT_FALSE(fs::exists(xdg / "nanort")) << "NANORT_OPENCL_CACHE=off wrote a cache";

  std::vector<std::string> by_default = common;
  by_default.push_back("NANORT_OPENCL_CACHE");  // unset
  const RunResult with = run_child(by_default, scratch_ / "default.log");
  ASSERT_EQ(with.exit_code, 0) << with.output;
  EXPECT_EQ(entries(xdg / "nanort" / "opencl").size(), 1u)
      << "no entry in $XDG_CACHE_HOME/nanort/opencl";
}

// ---- Headers the program includes (#include with -I folders): part of the key.

void write_text(const fs::path &path, const std::string &text) {
  fs::create_directories(path.parent_path());
  std::ofstream(path, std::ios::trunc) << text;
}

// The statistics' line about OpenCL programs (NANORT_STATS=1), "" when there is none.
std::string programs_line(const std::string &output) {
  const std::string start = "  OpenCL programs: ";
  const std::size_t at = output.find(start);
  if (at == std::string::npos) return "";
  return output.substr(at, output.find('\n', at) - at);
}

std::string stats_line(int from_cache, int from_source, int written) {
  return "  OpenCL programs: " + std::to_string(from_cache) + " from the disk cache, " +
         std::to_string(from_source) + " built from source; cache entries written " +
         std::to_string(written) + ", rejected 0, not written 0";
}

constexpr const char *kIncludingKernel = R"CL(#include "offset.h"
__kernel void triple_plus(__global int *x, int add, int n) {
  int i = get_global_id(0);
  if (i < n) x[i] = 3 * x[i] + add + OFFSET;
}
)CL";

class ProgramCacheHeaders : public ProgramCacheReuse {
 protected:
  // opencl_cache_run on 'kernel' with 'options', expecting 'offset', in 'folder' if given.
  RunResult run_kernel(const std::string &which, const fs::path &kernel, const std::string &options,
                       int offset, const fs::path &folder = {}) {
    return run_child({"NANORT_OPENCL_DEVICES=" + std::to_string(GetParam().index),
                      "NANORT_OPENCL_CACHE=" + cache_.string(), "NANORT_STATS=1"},
                     scratch_ / (which + ".log"),
                     {kernel.string(), options, std::to_string(offset)}, folder);
  }
};

// The header changes between two runs: the second builds again and computes with the new
// value, where a key without the header's text would have run the first run's binary. The
// unchanged header hits the cache (with NANORT_STATS=1 the child reports its builds).
TEST_P(ProgramCacheHeaders, ChangedHeaderIsBuiltAgain) {
  const fs::path kernel = scratch_ / "kernel.cl", header = scratch_ / "include" / "offset.h";
  write_text(kernel, kIncludingKernel);
  write_text(header, "#define OFFSET 5\n");
  const std::string options = "-I " + header.parent_path().string();

  const RunResult first = run_kernel("first", kernel, options, 5);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_EQ(programs_line(first.output), stats_line(0, 1, 1)) << first.output;
  const std::vector<EntryState> after_first = entries(cache_);
  ASSERT_EQ(after_first.size(), 1u);

  const RunResult same = run_kernel("same", kernel, options, 5);
  ASSERT_EQ(same.exit_code, 0) << same.output;
  EXPECT_EQ(programs_line(same.output), stats_line(1, 0, 0)) << same.output;
  ASSERT_EQ(entries(cache_).size(), 1u);
  EXPECT_EQ(entries(cache_)[0].inode, after_first[0].inode);

  write_text(header, "#define OFFSET 9\n");  // the same size: only the text tells
  const RunResult changed = run_kernel("changed", kernel, options, 9);
  ASSERT_EQ(changed.exit_code, 0) << "the old header's binary ran\n" << changed.output;
  EXPECT_EQ(programs_line(changed.output), stats_line(0, 1, 1)) << changed.output;
  EXPECT_EQ(entries(cache_).size(), 2u) << "the new header's entry is one of its own";

  const RunResult again = run_kernel("again", kernel, options, 9);
  ASSERT_EQ(again.exit_code, 0) << again.output;
  EXPECT_EQ(programs_line(again.output), stats_line(1, 0, 0)) << again.output;
}

// Nested headers, the inner ones found next to the header that includes them, and a relative
// -I folder, taken from the process's current folder (as nanocc's --opencl-build-opts=-I.).
TEST_P(ProgramCacheHeaders, NestedHeaderChangeIsSeen) {
  const fs::path project = scratch_ / "project";
  const fs::path kernel = project / "kernel.cl";
  write_text(kernel, kIncludingKernel);
  write_text(project / "inc" / "offset.h", "#include \"parts/value.h\"\n#define OFFSET VALUE\n");
  write_text(project / "inc" / "parts" / "value.h", "#include \"deep.h\"\n");
  const fs::path deep = project / "inc" / "parts" / "deep.h";
  write_text(deep, "#define VALUE 4\n");

  const RunResult first = run_kernel("first", "kernel.cl", "-Iinc", 4, project);
  ASSERT_EQ(first.exit_code, 0) << first.output;
  EXPECT_EQ(programs_line(first.output), stats_line(0, 1, 1)) << first.output;
  const RunResult same = run_kernel("same", "kernel.cl", "-Iinc", 4, project);
  ASSERT_EQ(same.exit_code, 0) << same.output;
  EXPECT_EQ(programs_line(same.output), stats_line(1, 0, 0)) << same.output;

  write_text(deep, "#define VALUE 6\n");
  const RunResult changed = run_kernel("changed", "kernel.cl", "-Iinc", 6, project);
  ASSERT_EQ(changed.exit_code, 0) << "the old header's binary ran\n" << changed.output;
  EXPECT_EQ(programs_line(changed.output), stats_line(0, 1, 1)) << changed.output;
}

// An #include that is found nowhere (here on a branch the build does not take): the program
// runs, built from source every time, and is never written to the cache; the statistics say
// why, once.
TEST_P(ProgramCacheHeaders, IncludeFoundNowhereIsNotCached) {
  const fs::path kernel = scratch_ / "kernel.cl";
  write_text(kernel, R"CL(#define OFFSET 3
#ifdef NEVER_DEFINED
#include "missing.h"
#endif
__kernel void triple_plus(__global int *x, int add, int n) {
  int i = get_global_id(0);
  if (i < n) x[i] = 3 * x[i] + add + OFFSET;
}
)CL");
  const fs::path include = scratch_ / "include";
  fs::create_directories(include);
  for (const char *which : {"first", "second"}) {
    const RunResult run = run_kernel(which, kernel, "-I" + include.string(), 3, scratch_);
    ASSERT_EQ(run.exit_code, 0) << run.output;
    EXPECT_EQ(programs_line(run.output),
              "  OpenCL programs: 0 from the disk cache, 1 built from source (1 not cacheable); "
              "cache entries written 0, rejected 0, not written 0")
        << run.output;
    const std::string note = "\n  OpenCL program '" + kernel.string() +
                             "' is not cached: '#include \"missing.h\"' at " + kernel.string() +
                             ":3 is found in none of the folders '" + scratch_.string() + "', '" +
                             include.string() + "'\n";
    EXPECT_TRUE(contains(run.output, note)) << run.output;
    EXPECT_TRUE(entries(cache_).empty());
  }
}

INSTANTIATE_TEST_SUITE_P(OpenCL, ProgramCacheHeaders, ::testing::ValuesIn(device_params()),
                         device_param_name);

INSTANTIATE_TEST_SUITE_P(OpenCL, ProgramCacheReuse, ::testing::ValuesIn(device_params()),
                         device_param_name);

}  // namespace
