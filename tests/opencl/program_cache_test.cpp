// ProgramCache on a real OpenCL platform (PoCL in CI): hits and misses, the key, the headers
// a program includes, corrupt and stale entries, build errors, folder privacy. Each test has its
// own cache folder under /tmp. Skipped when no OpenCL platform or device is found (the tests of
// the include scan need none).
#include <opencl/opencl_program_cache.hpp>
#include <opencl/opencl_program_includes.hpp>

#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace fs = std::filesystem;
using nanort::rt::opencl::ProgramBuildError;
using nanort::rt::opencl::ProgramCache;
using nanort::rt::opencl::ProgramCacheEntryHeader;

constexpr const char *kAddSource = R"(
#ifndef VALUE
#define VALUE 1
#endif
__kernel void add(__global int *data) { data[get_global_id(0)] += VALUE; }
)";

// Same kernel name, different result: a wrongly accepted entry shows in the values.
constexpr const char *kOtherSource = R"(
__kernel void add(__global int *data) { data[get_global_id(0)] += 10; }
)";

constexpr int kCount = 64;

std::string read_file(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path &path, const std::string &data) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << data;
}

class ProgramCacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    cl_uint count = 0;
    if (clGetPlatformIDs(0, nullptr, &count) != CL_SUCCESS || count == 0)
      GTEST_SKIP() << "no OpenCL platform found";
    std::vector<cl_platform_id> platforms(count);
    ASSERT_EQ(clGetPlatformIDs(count, platforms.data(), nullptr), CL_SUCCESS);
    for (cl_platform_id platform : platforms) {
      cl_uint devices = 0;
      if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device_, &devices) == CL_SUCCESS &&
          devices > 0)
        break;
      device_ = nullptr;
    }
    if (device_ == nullptr) GTEST_SKIP() << "no OpenCL device found";
    cl_int status = CL_SUCCESS;
    context_ = clCreateContext(nullptr, 1, &device_, nullptr, nullptr, &status);
    ASSERT_EQ(status, CL_SUCCESS);
    queue_ = clCreateCommandQueue(context_, device_, 0, &status);
    ASSERT_EQ(status, CL_SUCCESS);
    char name[] = "/tmp/nanort-program-cache-XXXXXX";
    ASSERT_NE(mkdtemp(name), nullptr);
    folder_ = name;
  }

  void TearDown() override {
    for (cl_program program : programs_) clReleaseProgram(program);
    if (queue_ != nullptr) clReleaseCommandQueue(queue_);
    if (context_ != nullptr) clReleaseContext(context_);
    if (!folder_.empty()) {
      std::error_code ignored;
      fs::remove_all(folder_, ignored);
    }
  }

  // Built programs are released at the end of the test.
  cl_program build(ProgramCache &cache, const char *source, const std::string &options = "") {
    cl_program program = cache.build(context_, {device_}, source, options, "test.cl");
    programs_.push_back(program);
    return program;
  }

  // Runs 'add' on 0, 1, ..., kCount - 1 and checks that every value grew by 'value'.
  void expect_adds(cl_program program, int value) {
    std::vector<int> data(kCount);
    for (int i = 0; i < kCount; ++i) data[i] = i;
    cl_int status = CL_SUCCESS;
    cl_kernel kernel = clCreateKernel(program, "add", &status);
    ASSERT_EQ(status, CL_SUCCESS);
    cl_mem buffer = clCreateBuffer(context_, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR,
                                   sizeof(int) * kCount, data.data(), &status);
    ASSERT_EQ(status, CL_SUCCESS);
    const std::size_t global = kCount;
    EXPECT_EQ(clSetKernelArg(kernel, 0, sizeof buffer, &buffer), CL_SUCCESS);
    EXPECT_EQ(
        clEnqueueNDRangeKernel(queue_, kernel, 1, nullptr, &global, nullptr, 0, nullptr, nullptr),
        CL_SUCCESS);
    EXPECT_EQ(clEnqueueReadBuffer(queue_, buffer, CL_TRUE, 0, sizeof(int) * kCount, data.data(), 0,
                                  nullptr, nullptr),
              CL_SUCCESS);
    clReleaseMemObject(buffer);
    clReleaseKernel(kernel);
    for (int i = 0; i < kCount; ++i) ASSERT_EQ(data[i], i + value) << "at " << i;
  }

  // The entry files (*.bin) in 'folder', sorted.
  static std::vector<fs::path> entries(const std::string &folder) {
    std::vector<fs::path> result;
    for (const auto &file : fs::directory_iterator(folder))
      if (file.path().extension() == ".bin") result.push_back(file.path());
    std::sort(result.begin(), result.end());
    return result;
  }
  std::vector<fs::path> entries() const { return entries(folder_); }

  std::size_t files_in_folder() const {
    return static_cast<std::size_t>(
        std::distance(fs::directory_iterator(folder_), fs::directory_iterator()));
  }

  // Builds kAddSource once (a miss) and returns its single entry.
  fs::path make_entry() {
    ProgramCache cache(folder_);
    build(cache, kAddSource);
    EXPECT_EQ(cache.stats().written, 1u);
    const auto files = entries();
    EXPECT_EQ(files.size(), 1u);
    return files.empty() ? fs::path() : files[0];
  }

  // A fresh cache on the folder must reject the entry once, rebuild, and rewrite it valid.
  void expect_rejected_then_repaired() {
    {
      ProgramCache cache(folder_);
      expect_adds(build(cache, kAddSource), 1);
      const auto stats = cache.stats();
      EXPECT_EQ(stats.rejected, 1u);
      EXPECT_EQ(stats.hits, 0u);
      EXPECT_EQ(stats.misses, 1u);
      EXPECT_EQ(stats.written, 1u);
    }
    ProgramCache third(folder_);
    expect_adds(build(third, kAddSource), 1);
    EXPECT_EQ(third.stats().hits, 1u);
    EXPECT_EQ(third.stats().rejected, 0u);
    EXPECT_EQ(files_in_folder(), 1u);
  }

  cl_device_id device_ = nullptr;
  cl_context context_ = nullptr;
  cl_command_queue queue_ = nullptr;
  std::string folder_;
  std::vector<cl_program> programs_;
};

TEST(Sha256, KnownVectors) {
  using nanort::rt::opencl::sha256;
  using nanort::rt::opencl::to_hex;
  EXPECT_EQ(to_hex(sha256("")), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(to_hex(sha256("abc")),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(to_hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(to_hex(sha256(std::string(1000000, 'a'))),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // Lengths around the padding's block boundaries; expected values from Python's hashlib.
  const std::pair<int, const char *> cases[] = {
      {55, "8af594de0e003fdee5c8bb088216c824349b4137070f559574f4a4bddd27b714"},
      {56, "db81bc2bfd43620591df192139062da77d4c376f1888ea3d2190bd07c8d901f9"},
      {63, "bd535b38bf0d0d1a09d370b7e34b2696cea3767801a45d5611a4aaa6954e8527"},
      {64, "292be91abe8c0909fe3d26575af5755eee74d23816dc68c3ba41765136967654"},
      {65, "ba65aedf7884642499a59ae124894611d986cf429e69f569488048af3a99e25a"},
      {119, "d367ab298e74477421127b0b448667c37c006c636f5738f081c39388756e5fad"},
      {120, "be7beb9c82089eb08da8fe6eb30c13b9d56869014e228a8c3eb0fdfe832efab2"},
      {200, "fcfa8eb2ae47de09df3e42e48371d9ea7446fb378097f8ef9bf743d9856f50b6"}};
  for (const auto &[length, expected] : cases) {
    std::string data;
    for (int i = 0; i < length; ++i) data += static_cast<char>(i * 7 % 251);
    EXPECT_EQ(to_hex(sha256(data)), expected) << "length " << length;
  }
}

TEST_F(ProgramCacheTest, MissWritesEntryThenHitRunsCorrectly) {
  {
    ProgramCache cache(folder_);
    EXPECT_TRUE(cache.enabled());
    EXPECT_EQ(cache.disabled_reason(), "");
    expect_adds(build(cache, kAddSource), 1);
    const auto stats = cache.stats();
    EXPECT_EQ(stats.misses, 1u);
    EXPECT_EQ(stats.hits, 0u);
    EXPECT_EQ(stats.written, 1u);
    EXPECT_EQ(stats.rejected, 0u);
  }
  const auto files = entries();
  ASSERT_EQ(files.size(), 1u);
  EXPECT_EQ(files_in_folder(), 1u) << "a temporary file was left behind";
  ProgramCache cache(folder_);
  EXPECT_EQ(files[0].string(),
            cache.entry_path(ProgramCache::key_text(device_, kAddSource, "", "")));
  EXPECT_EQ(files[0].filename().string().size(), 64u + 4u);
  struct stat st {};
  ASSERT_EQ(stat(files[0].c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  expect_adds(build(cache, kAddSource), 1);
  const auto stats = cache.stats();
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.misses, 0u);
  EXPECT_EQ(stats.written, 0u);
  // The same cache object hits too.
  expect_adds(build(cache, kAddSource), 1);
  EXPECT_EQ(cache.stats().hits, 2u);
}

TEST_F(ProgramCacheTest, OptionsArePartOfTheKey) {
  {
    ProgramCache cache(folder_);
    expect_adds(build(cache, kAddSource, "-DVALUE=2"), 2);
    expect_adds(build(cache, kAddSource, "-DVALUE=3"), 3);
    EXPECT_EQ(cache.stats().misses, 2u);
    EXPECT_EQ(cache.stats().written, 2u);
  }
  EXPECT_EQ(entries().size(), 2u);
  ProgramCache cache(folder_);
  expect_adds(build(cache, kAddSource, "-DVALUE=3"), 3);
  expect_adds(build(cache, kAddSource, "-DVALUE=2"), 2);
  EXPECT_EQ(cache.stats().hits, 2u);
  EXPECT_EQ(cache.stats().misses, 0u);
}

TEST_F(ProgramCacheTest, CorruptBinaryIsRejected) {
  const fs::path entry = make_entry();
  std::string data = read_file(entry);
  ASSERT_GT(data.size(), sizeof(ProgramCacheEntryHeader) + 16);
  for (std::size_t i = data.size() - 16; i < data.size(); ++i)
    data[i] = static_cast<char>(~data[i]);
  write_file(entry, data);
  expect_rejected_then_repaired();
}

TEST_F(ProgramCacheTest, TruncatedEntryIsRejected) {
  const fs::path entry = make_entry();
  fs::resize_file(entry, fs::file_size(entry) / 2);
  expect_rejected_then_repaired();
  // Shorter than the header, and empty.
  for (std::uintmax_t size : {std::uintmax_t{10}, std::uintmax_t{0}}) {
    fs::resize_file(entry, size);
    expect_rejected_then_repaired();
  }
}

TEST_F(ProgramCacheTest, BadMagicOrFormatIsRejected) {
  const fs::path entry = make_entry();
  const std::string good = read_file(entry);
  std::string data = good;
  data[0] = 'X';
  write_file(entry, data);
  expect_rejected_then_repaired();
  // Rewritten with the right magic and format. (Not byte for byte the same: a platform's
  // binaries need not be reproducible, as PoCL 5's on Ubuntu are not.)
  data = read_file(entry);
  ASSERT_GE(data.size(), sizeof(ProgramCacheEntryHeader));
  ProgramCacheEntryHeader good_header, repaired;
  std::memcpy(&good_header, good.data(), sizeof good_header);
  std::memcpy(&repaired, data.data(), sizeof repaired);
  ASSERT_EQ(std::memcmp(repaired.magic, good_header.magic, sizeof repaired.magic), 0);
  ASSERT_EQ(repaired.format, good_header.format);
  ProgramCacheEntryHeader header;
  std::memcpy(&header, data.data(), sizeof header);
  header.format += 1;
  std::memcpy(data.data(), &header, sizeof header);
  write_file(entry, data);
  expect_rejected_then_repaired();
}

TEST_F(ProgramCacheTest, BinaryRefusedByOpenClIsRejected) {
  // A well-formed entry (right key, size and checksum) whose binary is garbage: only the
  // OpenCL platform can refuse it.
  const fs::path entry = make_entry();
  std::string data = read_file(entry);
  ProgramCacheEntryHeader header;
  std::memcpy(&header, data.data(), sizeof header);
  const std::string key = data.substr(sizeof header, header.key_size);
  const std::string garbage(4096, '\x5a');
  header.binary_size = garbage.size();
  const auto checksum = nanort::rt::opencl::sha256(garbage);
  std::memcpy(header.binary_sha256, checksum.data(), checksum.size());
  data.assign(reinterpret_cast<const char *>(&header), sizeof header);
  write_file(entry, data + key + garbage);
  expect_rejected_then_repaired();
}

TEST_F(ProgramCacheTest, StaleEntryIsRejected) {
  ProgramCache cache(folder_);
  build(cache, kAddSource);
  const fs::path add_entry = entries().at(0);
  build(cache, kOtherSource);
  ASSERT_EQ(entries().size(), 2u);
  fs::path other_entry;
  for (const auto &file : entries())
    if (file != add_entry) other_entry = file;
  // The other source's valid entry under this source's name: only the key text tells.
  fs::copy_file(other_entry, add_entry, fs::copy_options::overwrite_existing);
  fs::remove(other_entry);
  expect_rejected_then_repaired();
}

TEST_F(ProgramCacheTest, BadSourceThrowsBuildErrorWithLog) {
  ProgramCache cache(folder_);
  const std::string origin = "kernels/broken.cl (task 'scale' at main.c:42)";
  try {
    cache.build(context_, {device_},
                "__kernel void broken(__global int *d) { d[0] = undeclared_thing_42; }", "",
                origin);
    FAIL() << "no ProgramBuildError";
  } catch (const ProgramBuildError &error) {
    const std::string what = error.what();
    EXPECT_NE(what.find(origin), std::string::npos) << what;
    EXPECT_NE(what.find("undeclared_thing_42"), std::string::npos) << what;
    char name[256] = {};
    clGetDeviceInfo(device_, CL_DEVICE_NAME, sizeof name - 1, name, nullptr);
    EXPECT_NE(what.find(name), std::string::npos) << what;
    EXPECT_NE(error.log.find("undeclared_thing_42"), std::string::npos) << error.log;
  }
  EXPECT_EQ(cache.stats().written, 0u);
  EXPECT_EQ(files_in_folder(), 0u);
}

TEST_F(ProgramCacheTest, BadOptionsThrowBuildError) {
  ProgramCache cache(folder_);
  EXPECT_THROW(cache.build(context_, {device_}, kAddSource, "-cl-no-such-option", "test.cl"),
               ProgramBuildError);
  EXPECT_EQ(files_in_folder(), 0u);
}

TEST_F(ProgramCacheTest, WorldWritableFolderIsNotUsed) {
  const std::string open_folder = folder_ + "/open";
  ASSERT_EQ(mkdir(open_folder.c_str(), 0700), 0);
  ASSERT_EQ(chmod(open_folder.c_str(), 0777), 0);  // chmod: mkdir's mode passes the umask
  ProgramCache cache(open_folder);
  EXPECT_FALSE(cache.enabled());
  EXPECT_NE(cache.disabled_reason(), "");
  EXPECT_NE(cache.disabled_reason().find("0777"), std::string::npos) << cache.disabled_reason();
  expect_adds(build(cache, kAddSource), 1);
  EXPECT_EQ(cache.stats().written, 0u);
  EXPECT_TRUE(fs::is_empty(open_folder));
}

TEST_F(ProgramCacheTest, GroupWritableFolderIsNotUsed) {
  const std::string group_folder = folder_ + "/group";
  ASSERT_EQ(mkdir(group_folder.c_str(), 0700), 0);
  ASSERT_EQ(chmod(group_folder.c_str(), 0770), 0);
  ProgramCache cache(group_folder);
  EXPECT_NE(cache.disabled_reason(), "");
}

TEST_F(ProgramCacheTest, SymbolicLinkAndFileAreNotUsed) {
  const std::string private_folder = folder_ + "/private";
  ASSERT_EQ(mkdir(private_folder.c_str(), 0700), 0);
  const std::string link = folder_ + "/link";
  ASSERT_EQ(symlink(private_folder.c_str(), link.c_str()), 0);
  EXPECT_NE(ProgramCache(link).disabled_reason(), "");
  EXPECT_NE(ProgramCache(link + "/").disabled_reason(), "");
  EXPECT_EQ(ProgramCache(private_folder).disabled_reason(), "");
  const std::string file = folder_ + "/file";
  write_file(file, "x");
  EXPECT_NE(ProgramCache(file).disabled_reason(), "");
}

TEST_F(ProgramCacheTest, FolderOfAnotherUserIsNotUsed) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give a folder away";
  const std::string foreign = folder_ + "/foreign";
  ASSERT_EQ(mkdir(foreign.c_str(), 0700), 0);
  ASSERT_EQ(chown(foreign.c_str(), 65534, 65534), 0);
  ProgramCache cache(foreign);
  EXPECT_NE(cache.disabled_reason().find("owned by uid 65534"), std::string::npos)
      << cache.disabled_reason();
}

TEST_F(ProgramCacheTest, MissingFolderIsCreatedPrivate) {
  const std::string nested = folder_ + "/a/b/opencl";
  ProgramCache cache(nested);
  EXPECT_TRUE(cache.enabled()) << cache.disabled_reason();
  for (const std::string &path : {folder_ + "/a", folder_ + "/a/b", nested}) {
    struct stat st {};
    ASSERT_EQ(lstat(path.c_str(), &st), 0) << path;
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0700u) << path;
  }
  expect_adds(build(cache, kAddSource), 1);
  EXPECT_EQ(entries(nested).size(), 1u);
}

TEST_F(ProgramCacheTest, EmptyFolderDisablesTheCache) {
  ProgramCache cache("");
  EXPECT_FALSE(cache.enabled());
  EXPECT_NE(cache.disabled_reason(), "");
  expect_adds(build(cache, kAddSource), 1);
  expect_adds(build(cache, kAddSource, "-DVALUE=5"), 5);
  EXPECT_EQ(cache.stats().misses, 2u);
  EXPECT_EQ(cache.stats().written, 0u);
}

TEST_F(ProgramCacheTest, ConcurrentBuildsShareTheCache) {
  ProgramCache cache(folder_);
  constexpr int kThreads = 8;
  std::vector<cl_program> built(kThreads, nullptr);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      built[t] = cache.build(context_, {device_}, kAddSource, "-DVALUE=" + std::to_string(t % 2),
                             "concurrent.cl");
    });
  for (auto &thread : threads) thread.join();
  programs_.insert(programs_.end(), built.begin(), built.end());
  for (int t = 0; t < kThreads; ++t) expect_adds(built[t], t % 2);
  const auto stats = cache.stats();
  EXPECT_EQ(stats.hits + stats.misses, std::uint64_t{kThreads});
  EXPECT_EQ(stats.rejected, 0u);
  EXPECT_EQ(entries().size(), 2u);
  EXPECT_EQ(files_in_folder(), 2u);
}

// ---- The headers a program includes

using nanort::rt::opencl::find_include_directives;
using nanort::rt::opencl::IncludeDirective;
using nanort::rt::opencl::parse_include_options;
using nanort::rt::opencl::scan_includes;

TEST(IncludeDirectives, FormsCommentsSplicesAndLineNumbers) {
  const auto found = find_include_directives(R"(
#include "a.h"
  #  include <b/c.h>   // a comment after it
/* #include "block_comment.h" */
// #include "line_comment.h"
#include_next "next.h"
#import "imported.h"
#inc\
lude "spliced.h"
#include /* a comment */ "after_comment.h"
#include HEADER_MACRO
char text[] = "/*";
#include "after_string.h" /* a comment
#include "in_block_comment.h" */
#line 100 "other.cl"
#include "after_line.h"
#if 0
#include "not_taken.h"
#endif
)");
  using Form = IncludeDirective::Form;
  struct Expected {
    Form form;
    const char *name, *file;
    int line;
  };
  const Expected expected[] = {{Form::kQuoted, "a.h", "", 2},
                               {Form::kAngled, "b/c.h", "", 3},
                               {Form::kQuoted, "next.h", "", 6},
                               {Form::kQuoted, "imported.h", "", 7},
                               {Form::kQuoted, "spliced.h", "", 8},
                               {Form::kQuoted, "after_comment.h", "", 10},
                               {Form::kComputed, "HEADER_MACRO", "", 11},
                               {Form::kQuoted, "after_string.h", "", 13},
                               {Form::kQuoted, "after_line.h", "other.cl", 100},
                               {Form::kQuoted, "not_taken.h", "other.cl", 102}};
  ASSERT_EQ(found.size(), std::size(expected));
  for (std::size_t i = 0; i < found.size(); ++i) {
    EXPECT_EQ(found[i].form, expected[i].form) << i;
    EXPECT_EQ(found[i].name, expected[i].name) << i;
    EXPECT_EQ(found[i].file, expected[i].file) << i;
    EXPECT_EQ(found[i].line, expected[i].line) << i;
  }
  EXPECT_TRUE(find_include_directives(kAddSource).empty());
}

TEST(IncludeOptions, FoldersAndFiles) {
  const auto options = parse_include_options(
      R"(-I a -Ib -DX=1 -iquote q -isystems -idirafter d -include f.h -imacros m.h -I "with space")"
      " -cl-mad-enable -include-pch p.pch");
  EXPECT_EQ(options.folders, (std::vector<std::string>{"a", "b", "q", "s", "d", "with space"}));
  EXPECT_EQ(options.files, (std::vector<std::string>{"f.h", "m.h"}));
  EXPECT_TRUE(parse_include_options("-DVALUE=2 -cl-fast-relaxed-math").folders.empty());
}

// Each test has a folder of its own, the working folder of the scans.
class IncludeScanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/nanort-include-scan-XXXXXX";
    ASSERT_NE(mkdtemp(name), nullptr);
    folder_ = name;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(folder_, ignored);
  }
  void write(const std::string &path, const std::string &text) {
    const fs::path full = fs::path(folder_) / path;
    fs::create_directories(full.parent_path());
    write_file(full, text);
  }
  nanort::rt::opencl::IncludeScan scan(const char *source, const std::string &options = "-Iinc") {
    return scan_includes(source, options, "k.cl", folder_);
  }
  std::string folder_;
};

TEST_F(IncludeScanTest, NoIncludeNoKey) {
  const auto result = scan(kAddSource, "-I inc -DVALUE=3");
  EXPECT_EQ(result.key, "");
  EXPECT_EQ(result.problem, "");
  EXPECT_EQ(result.headers, 0u);
}

TEST_F(IncludeScanTest, KeyFollowsTheHeadersText) {
  write("inc/h.h", "#define VALUE 2\n");
  const auto first = scan("#include \"h.h\"\n");
  EXPECT_EQ(first.problem, "");
  EXPECT_EQ(first.headers, 1u);
  EXPECT_NE(first.key.find(folder_ + "/inc/h.h sha256 "), std::string::npos) << first.key;
  EXPECT_NE(first.key.find(folder_ + "/h.h absent"), std::string::npos) << first.key;
  write("inc/h.h", "#define VALUE 3\n");
  EXPECT_NE(scan("#include \"h.h\"\n").key, first.key);
  write("inc/h.h", "#define VALUE 2\n");
  EXPECT_EQ(scan("#include \"h.h\"\n").key, first.key);
  // The folder given whole is the same place.
  EXPECT_EQ(scan("#include \"h.h\"\n", "-I " + folder_ + "/inc").key, first.key);
  // A header of that name put in front of it (the current folder is searched first).
  write("h.h", "#define VALUE 2\n");
  const auto shadowed = scan("#include \"h.h\"\n");
  EXPECT_NE(shadowed.key, first.key);
  EXPECT_EQ(shadowed.headers, 2u);
  fs::remove(fs::path(folder_) / "h.h");
  EXPECT_EQ(scan("#include \"h.h\"\n").key, first.key);
}

TEST_F(IncludeScanTest, NestedHeadersAndCycles) {
  // a.h -> sub/b.h -> c.h (next to b.h) and a.h again (through -I).
  write("inc/a.h", "#ifndef A\n#define A\n#include \"sub/b.h\"\n#endif\n");
  write("inc/sub/b.h", "#include \"c.h\"\n#include <a.h>\n");
  write("inc/sub/c.h", "#define C 1\n");
  const auto first = scan("#include <a.h>\n");
  EXPECT_EQ(first.problem, "");
  EXPECT_EQ(first.headers, 3u);
  write("inc/sub/c.h", "#define C 2\n");
  const auto changed = scan("#include <a.h>\n");
  EXPECT_EQ(changed.problem, "");
  EXPECT_NE(changed.key, first.key);
}

TEST_F(IncludeScanTest, IncludeFoundNowhere) {
  EXPECT_EQ(scan("\n#if 0\n#include \"nowhere.h\"\n#endif\n").problem,
            "'#include \"nowhere.h\"' at k.cl:3 is found in none of the folders '" + folder_ +
                "', '" + folder_ + "/inc'");
  // <...> is not looked for next to the header that includes it (nor does the compiler).
  write("inc/sub/b.h", "#include <near.h>\n");
  write("inc/sub/near.h", "\n");
  EXPECT_EQ(scan("#include \"sub/b.h\"\n").problem,
            "'#include <near.h>' at " + folder_ +
                "/inc/sub/b.h:1 is found in none of the folders '" + folder_ + "', '" + folder_ +
                "/inc'");
  // A header whose name a macro gives.
  EXPECT_EQ(
      scan("#define H \"h.h\"\n#include H\n").problem,
      "'#include H' at k.cl:2 names its file through a macro, which only the compiler expands");
  // #line names the place in messages (nanocc's embedded sources start with one).
  EXPECT_EQ(
      scan("#line 1 \"kernels/k.cl\"\n#include \"gone.h\"\n", "").problem,
      "'#include \"gone.h\"' at kernels/k.cl:1 is found in none of the folders '" + folder_ + "'");
}

TEST_F(IncludeScanTest, ForcedIncludeOption) {
  write("forced.h", "#include \"inner.h\"\n");
  write("inc/inner.h", "#define INNER 1\n");
  const auto found = scan("__kernel void k(void) {}\n", "-Iinc -include forced.h");
  EXPECT_EQ(found.problem, "");
  EXPECT_EQ(found.headers, 2u);
  EXPECT_EQ(
      scan("__kernel void k(void) {}\n", "-include nothere.h").problem,
      "the build options' file 'nothere.h' is found in none of the folders '" + folder_ + "'");
}

// The cache on a program that includes a header: a changed header is a miss, and the program
// computes with its new text; the unchanged one hits.
TEST_F(ProgramCacheTest, IncludedHeaderIsPartOfTheKey) {
  const std::string headers = folder_ + "-headers";
  ASSERT_EQ(mkdir(headers.c_str(), 0700), 0);
  const std::string source = R"(#include "value.h"
__kernel void add(__global int *data) { data[get_global_id(0)] += VALUE; }
)";
  const std::string options = "-I " + headers;
  write_file(headers + "/value.h", "#define VALUE 2\n");
  {
    ProgramCache cache(folder_);
    expect_adds(build(cache, source.c_str(), options), 2);
    expect_adds(build(cache, source.c_str(), options), 2);
    EXPECT_EQ(cache.stats().misses, 1u);
    EXPECT_EQ(cache.stats().hits, 1u);
    EXPECT_EQ(cache.stats().written, 1u);
  }
  write_file(headers + "/value.h", "#define VALUE 7\n");
  ProgramCache cache(folder_);
  expect_adds(build(cache, source.c_str(), options), 7);
  expect_adds(build(cache, source.c_str(), options), 7);
  const auto stats = cache.stats();
  EXPECT_EQ(stats.misses, 1u);
  EXPECT_EQ(stats.hits, 1u);
  EXPECT_EQ(stats.not_cached, 0u);
  EXPECT_EQ(entries().size(), 2u);
  EXPECT_TRUE(cache.notes().empty());
  fs::remove_all(headers);
}

// An #include found nowhere: built from source each time, never written; one note says why.
TEST_F(ProgramCacheTest, ProgramWithAnIncludeFoundNowhereIsNotCached) {
  const char *source = R"(#ifdef NOT_DEFINED
#include "/nonexistent/nanort/missing.h"
#endif
__kernel void add(__global int *data) { data[get_global_id(0)] += 3; }
)";
  ProgramCache cache(folder_);
  expect_adds(build(cache, source), 3);
  expect_adds(build(cache, source), 3);
  const auto stats = cache.stats();
  EXPECT_EQ(stats.misses, 2u);
  EXPECT_EQ(stats.not_cached, 2u);
  EXPECT_EQ(stats.hits, 0u);
  EXPECT_EQ(stats.written, 0u);
  EXPECT_EQ(files_in_folder(), 0u);
  const std::string note =
      "OpenCL program 'test.cl' is not cached: '#include \"/nonexistent/nanort/missing.h\"' at "
      "test.cl:2 names a file that does not exist";
  EXPECT_EQ(cache.notes(), std::vector<std::string>{note});
  EXPECT_EQ(
      cache.summary(),
      "  OpenCL programs: 0 from the disk cache, 2 built from source (2 not cacheable); cache "
      "entries written 0, rejected 0, not written 0\n  " +
          note + "\n");
}

// Sets or unsets an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char *name, const char *value) : name_(name) {
    if (const char *old = getenv(name)) old_ = old;
    value ? setenv(name, value, 1) : unsetenv(name);
  }
  ~ScopedEnv() { old_ ? setenv(name_, old_->c_str(), 1) : unsetenv(name_); }

 private:
  const char *name_;
  std::optional<std::string> old_;
};

TEST(DefaultProgramCacheFolder, FollowsTheEnvironment) {
  using nanort::rt::opencl::default_program_cache_folder;
  ScopedEnv home("HOME", "/home/someone");
  ScopedEnv xdg("XDG_CACHE_HOME", nullptr);
  {
    ScopedEnv cache("NANORT_OPENCL_CACHE", nullptr);
    EXPECT_EQ(default_program_cache_folder(), "/home/someone/.cache/nanort/opencl");
    ScopedEnv xdg_set("XDG_CACHE_HOME", "/var/cache/me");
    EXPECT_EQ(default_program_cache_folder(), "/var/cache/me/nanort/opencl");
  }
  {
    ScopedEnv cache("NANORT_OPENCL_CACHE", "/scratch/cl");
    EXPECT_EQ(default_program_cache_folder(), "/scratch/cl");
  }
  for (const char *off : {"", "off"}) {
    ScopedEnv cache("NANORT_OPENCL_CACHE", off);
    EXPECT_EQ(default_program_cache_folder(), "");
  }
}

}  // namespace
