#include "opencl_program_cache.hpp"

#include "opencl_program_includes.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace nanort::rt::opencl {

namespace {

// ---- SHA-256, FIPS 180-4. Chosen over a pair of fast 64-bit hashes: entries are few and
// built rarely, and a cryptographic hash makes accidental collisions a non-question (the key
// text is compared anyway).

constexpr std::uint32_t kRound[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

std::uint32_t rotr(std::uint32_t x, int n) {
  return (x >> n) | (x << (32 - n));
}

void compress(std::uint32_t state[8], const unsigned char *block) {
  std::uint32_t w[64];
  for (int i = 0; i < 16; ++i)
    w[i] = std::uint32_t{block[4 * i]} << 24 | std::uint32_t{block[4 * i + 1]} << 16 |
           std::uint32_t{block[4 * i + 2]} << 8 | std::uint32_t{block[4 * i + 3]};
  for (int i = 16; i < 64; ++i) {
    const std::uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const std::uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  std::uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
  std::uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
  for (int i = 0; i < 64; ++i) {
    const std::uint32_t t1 =
        h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kRound[i] + w[i];
    const std::uint32_t t2 =
        (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
  }
  state[0] += a, state[1] += b, state[2] += c, state[3] += d;
  state[4] += e, state[5] += f, state[6] += g, state[7] += h;
}

// ---- OpenCL queries

std::string device_string(cl_device_id device, cl_device_info param) {
  std::size_t size = 0;
  NANORT_CL_CHECK(clGetDeviceInfo(device, param, 0, nullptr, &size));
  std::string value(size, '\0');
  NANORT_CL_CHECK(clGetDeviceInfo(device, param, size, value.data(), nullptr));
  while (!value.empty() && value.back() == '\0') value.pop_back();
  return value;
}

std::string platform_string(cl_platform_id platform, cl_platform_info param) {
  std::size_t size = 0;
  NANORT_CL_CHECK(clGetPlatformInfo(platform, param, 0, nullptr, &size));
  std::string value(size, '\0');
  NANORT_CL_CHECK(clGetPlatformInfo(platform, param, size, value.data(), nullptr));
  while (!value.empty() && value.back() == '\0') value.pop_back();
  return value;
}

// Never throws: used while reporting a failure, where a second error would hide the first.
std::string build_log(cl_program program, cl_device_id device) {
  std::size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS)
    return "(no build log)";
  std::string log(size, '\0');
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr) !=
      CL_SUCCESS)
    return "(no build log)";
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

std::string device_name_or_unknown(cl_device_id device) {
  try {
    return device_string(device, CL_DEVICE_NAME);
  } catch (const OpenClError &) {
    return "(unknown device)";
  }
}

// Releases the program unless release() handed it on.
class ProgramHandle {
 public:
  explicit ProgramHandle(cl_program program) : program_(program) {}
  ProgramHandle(const ProgramHandle &) = delete;
  ProgramHandle &operator=(const ProgramHandle &) = delete;
  ~ProgramHandle() {
    if (program_ != nullptr) clReleaseProgram(program_);
  }
  cl_program get() const { return program_; }
  cl_program release() { return std::exchange(program_, nullptr); }

 private:
  cl_program program_;
};

[[noreturn]] void throw_build_error(cl_program program, const std::vector<cl_device_id> &devices,
                                    cl_int status, const std::string &options,
                                    std::string_view origin) {
  std::string message = "OpenCL program '" + std::string(origin) + "' failed to build";
  if (!options.empty()) message += " with options '" + options + "'";
  message += " (" + error_name(status) + ")";
  // Report the devices that say they failed; all of them when none says so.
  std::vector<cl_device_id> failed;
  for (cl_device_id device : devices) {
    cl_build_status build_status = CL_BUILD_NONE;
    if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_STATUS, sizeof build_status,
                              &build_status, nullptr) == CL_SUCCESS &&
        build_status == CL_BUILD_ERROR)
      failed.push_back(device);
  }
  if (failed.empty()) failed = devices;
  std::string logs;
  for (cl_device_id device : failed) {
    const std::string part =
        "--- device '" + device_name_or_unknown(device) + "':\n" + build_log(program, device);
    message += "\n" + part;
    logs += logs.empty() ? part : "\n" + part;
  }
  throw ProgramBuildError(message, logs);
}

cl_program build_from_source(cl_context context, const std::vector<cl_device_id> &devices,
                             std::string_view source, const std::string &options,
                             std::string_view origin) {
  const char *text = source.data();
  const std::size_t length = source.size();
  cl_int status = CL_SUCCESS;
  ProgramHandle program(clCreateProgramWithSource(context, 1, &text, &length, &status));
  NANORT_CL_CHECK_STATUS(status, "clCreateProgramWithSource");
  status = clBuildProgram(program.get(), static_cast<cl_uint>(devices.size()), devices.data(),
                          options.c_str(), nullptr, nullptr);
  // Bad options are the program's fault as much as bad source: both get the build log.
  if (status == CL_BUILD_PROGRAM_FAILURE || status == CL_INVALID_BUILD_OPTIONS)
    throw_build_error(program.get(), devices, status, options, origin);
  NANORT_CL_CHECK_STATUS(status, "clBuildProgram");
  return program.release();
}

// nullptr when OpenCL refuses the binaries at any step: the caller then rejects the entries.
cl_program build_from_binaries(cl_context context, const std::vector<cl_device_id> &devices,
                               const std::vector<std::string> &binaries,
                               const std::string &options) {
  std::vector<std::size_t> sizes;
  std::vector<const unsigned char *> pointers;
  for (const std::string &binary : binaries) {
    sizes.push_back(binary.size());
    pointers.push_back(reinterpret_cast<const unsigned char *>(binary.data()));
  }
  const auto count = static_cast<cl_uint>(devices.size());
  std::vector<cl_int> binary_status(devices.size(), CL_INVALID_BINARY);
  cl_int status = CL_SUCCESS;
  ProgramHandle program(clCreateProgramWithBinary(context, count, devices.data(), sizes.data(),
                                                  pointers.data(), binary_status.data(), &status));
  if (status != CL_SUCCESS || program.get() == nullptr) return nullptr;
  for (cl_int s : binary_status)
    if (s != CL_SUCCESS) return nullptr;
  if (clBuildProgram(program.get(), count, devices.data(), options.c_str(), nullptr, nullptr) !=
      CL_SUCCESS)
    return nullptr;
  return program.release();
}

// The binaries of a built program, in the order of 'devices'; "" where the platform gives none.
// Never throws: a program that built is worth returning even when its binaries cannot be had.
std::vector<std::string> program_binaries(cl_program program,
                                          const std::vector<cl_device_id> &devices) {
  std::vector<std::string> result(devices.size());
  // A program made from source belongs to every device of its context, not only 'devices'.
  cl_uint count = 0;
  if (clGetProgramInfo(program, CL_PROGRAM_NUM_DEVICES, sizeof count, &count, nullptr) !=
          CL_SUCCESS ||
      count == 0)
    return result;
  std::vector<cl_device_id> program_devices(count);
  std::vector<std::size_t> sizes(count);
  if (clGetProgramInfo(program, CL_PROGRAM_DEVICES, count * sizeof(cl_device_id),
                       program_devices.data(), nullptr) != CL_SUCCESS ||
      clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, count * sizeof(std::size_t), sizes.data(),
                       nullptr) != CL_SUCCESS)
    return result;
  std::vector<std::string> binaries(count);
  std::vector<unsigned char *> pointers(count, nullptr);
  for (cl_uint i = 0; i < count; ++i) {
    binaries[i].resize(sizes[i]);
    if (sizes[i] > 0) pointers[i] = reinterpret_cast<unsigned char *>(binaries[i].data());
  }
  if (clGetProgramInfo(program, CL_PROGRAM_BINARIES, count * sizeof(unsigned char *),
                       pointers.data(), nullptr) != CL_SUCCESS)
    return result;
  for (std::size_t d = 0; d < devices.size(); ++d)
    for (cl_uint i = 0; i < count; ++i)
      if (program_devices[i] == devices[d]) result[d] = std::move(binaries[i]);
  return result;
}

// ---- Files

constexpr char kMagic[8] = {'N', 'R', 'T', 'C', 'L', 'P', 'B', '\0'};

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor &) = delete;
  FileDescriptor &operator=(const FileDescriptor &) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

bool write_all(int fd, const void *data, std::size_t size) {
  const auto *bytes = static_cast<const char *>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, bytes, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    bytes += n, size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool read_all(int fd, char *data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::read(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n, size -= static_cast<std::size_t>(n);
  }
  return true;
}

void add_field(std::string &key, std::string_view name, std::string_view value) {
  // Length-prefixed, so no value can imitate the fields after it.
  key.append(name).append(" ").append(std::to_string(value.size())).append("\n");
  key.append(value).append("\n");
}

// Creates 'folder' and its missing parents, each with mode 0700.
bool make_folders(const std::string &folder) {
  for (std::size_t slash = folder.find('/', 1); slash != std::string::npos;
       slash = folder.find('/', slash + 1)) {
    if (::mkdir(folder.substr(0, slash).c_str(), 0700) != 0 && errno != EEXIST) return false;
  }
  return ::mkdir(folder.c_str(), 0700) == 0 || errno == EEXIST;
}

// "" when 'folder' (created if missing) is a private directory of ours, else why it is not.
std::string prepare_folder(const std::string &folder) {
  const std::string quoted = "'" + folder + "'";
  struct stat st {};
  if (::lstat(folder.c_str(), &st) != 0) {
    if (errno != ENOENT) return "cannot inspect " + quoted + ": " + std::strerror(errno);
    if (!make_folders(folder)) return "cannot create " + quoted + ": " + std::strerror(errno);
    if (::lstat(folder.c_str(), &st) != 0)
      return "cannot inspect " + quoted + ": " + std::strerror(errno);
  }
  // lstat: a symbolic link is refused, since whoever can change it can redirect the cache.
  if (S_ISLNK(st.st_mode)) return quoted + " is a symbolic link";
  if (!S_ISDIR(st.st_mode)) return quoted + " is not a directory";
  if (st.st_uid != ::geteuid())
    return quoted + " is owned by uid " + std::to_string(st.st_uid) + ", not by this user (uid " +
           std::to_string(::geteuid()) + ")";
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return quoted + " is writable by group or others (mode " + mode + ")";
  }
  return "";
}

}  // namespace

Sha256Digest sha256(std::string_view data) {
  std::uint32_t state[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                            0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  const auto *bytes = reinterpret_cast<const unsigned char *>(data.data());
  const std::size_t full = data.size() / 64 * 64;
  for (std::size_t i = 0; i < full; i += 64) compress(state, bytes + i);
  // The rest, 0x80, zeros, and the length in bits (big-endian) fill one or two last blocks.
  unsigned char tail[128] = {};
  const std::size_t rest = data.size() - full;
  if (rest > 0) std::memcpy(tail, bytes + full, rest);
  tail[rest] = 0x80;
  const std::size_t tail_size = rest < 56 ? 64 : 128;
  const std::uint64_t bits = static_cast<std::uint64_t>(data.size()) * 8;
  for (int i = 0; i < 8; ++i) tail[tail_size - 1 - i] = static_cast<unsigned char>(bits >> (8 * i));
  compress(state, tail);
  if (tail_size == 128) compress(state, tail + 64);
  Sha256Digest digest;
  for (int i = 0; i < 32; ++i)
    digest[i] = static_cast<unsigned char>(state[i / 4] >> (24 - 8 * (i % 4)));
  return digest;
}

std::string to_hex(const Sha256Digest &digest) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char byte : digest) hex += {kDigits[byte >> 4], kDigits[byte & 15]};
  return hex;
}

ProgramCache::ProgramCache(std::string folder) : folder_(std::move(folder)) {
  // A trailing slash would make lstat follow a symbolic link.
  while (folder_.size() > 1 && folder_.back() == '/') folder_.pop_back();
  disabled_reason_ = folder_.empty() ? "no cache folder given" : prepare_folder(folder_);
  enabled_ = disabled_reason_.empty();
}

std::string ProgramCache::key_text(cl_device_id device, std::string_view source,
                                   std::string_view options, std::string_view includes) {
  cl_platform_id platform = nullptr;
  NANORT_CL_CHECK(clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr));
  std::string key = "nanort OpenCL program cache\n";
  add_field(key, "format", std::to_string(kProgramCacheFormat));
  add_field(key, "platform name", platform_string(platform, CL_PLATFORM_NAME));
  add_field(key, "platform version", platform_string(platform, CL_PLATFORM_VERSION));
  add_field(key, "device name", device_string(device, CL_DEVICE_NAME));
  add_field(key, "device vendor", device_string(device, CL_DEVICE_VENDOR));
  add_field(key, "device version", device_string(device, CL_DEVICE_VERSION));
  add_field(key, "driver version", device_string(device, CL_DRIVER_VERSION));
  add_field(key, "options", options);
  add_field(key, "source", source);
  add_field(key, "included files", includes);
  return key;
}

std::string ProgramCache::entry_path(const std::string &key_text) const {
  return folder_ + "/" + to_hex(sha256(key_text)) + ".bin";
}

cl_program ProgramCache::build(cl_context context, const std::vector<cl_device_id> &devices,
                               std::string_view source, std::string_view options,
                               std::string_view origin) {
  if (devices.empty())
    throw OpenClError(CL_INVALID_VALUE,
                      "ProgramCache::build: no device given for '" + std::string(origin) + "'");
  const std::string options_text(options);
  std::vector<std::string> keys, paths;
  // Once per build, not per device: the headers are read here, just before the compiler does.
  const IncludeScan includes = enabled_ ? scan_includes(source, options, origin) : IncludeScan{};
  const bool cached = enabled_ && includes.problem.empty();
  if (enabled_ && !cached) {
    std::lock_guard lock(mutex_);
    ++stats_.not_cached;
    const std::string note =
        "OpenCL program '" + std::string(origin) + "' is not cached: " + includes.problem;
    if (std::find(notes_.begin(), notes_.end(), note) == notes_.end()) notes_.push_back(note);
  }
  if (cached) {
    bool all_loaded = true;
    std::vector<std::string> binaries(devices.size());
    for (std::size_t i = 0; i < devices.size(); ++i) {
      keys.push_back(key_text(devices[i], source, options, includes.key));
      paths.push_back(entry_path(keys[i]));
      // Read every entry even after a miss, so that corrupt ones are counted and removed.
      if (load_entry(paths[i], keys[i], binaries[i]) != Load::kLoaded) all_loaded = false;
    }
    if (all_loaded) {
      if (cl_program program = build_from_binaries(context, devices, binaries, options_text)) {
        std::lock_guard lock(mutex_);
        ++stats_.hits;
        return program;
      }
      for (const std::string &path : paths) reject(path);
    }
  }
  cl_program program = build_from_source(context, devices, source, options_text, origin);
  {
    std::lock_guard lock(mutex_);
    ++stats_.misses;
  }
  if (cached) {
    const std::vector<std::string> binaries = program_binaries(program, devices);
    for (std::size_t i = 0; i < devices.size(); ++i)
      if (!binaries[i].empty()) write_entry(paths[i], keys[i], binaries[i]);
  }
  return program;
}

ProgramCacheStats ProgramCache::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

std::vector<std::string> ProgramCache::notes() const {
  std::lock_guard lock(mutex_);
  return notes_;
}

std::string ProgramCache::summary() const {
  const ProgramCacheStats s = stats();
  if (s.hits + s.misses == 0) return "";
  auto number = [](std::uint64_t n) { return std::to_string(n); };
  std::string text = "  OpenCL programs: " + number(s.hits) + " from the disk cache, " +
                     number(s.misses) + " built from source";
  if (!enabled_) return text + " (no disk cache)\n";
  if (s.not_cached > 0) text += " (" + number(s.not_cached) + " not cacheable)";
  text += "; cache entries written " + number(s.written) + ", rejected " + number(s.rejected) +
          ", not written " + number(s.write_failed) + "\n";
  for (const std::string &note : notes()) text += "  " + note + "\n";
  return text;
}

ProgramCache::Load ProgramCache::load_entry(const std::string &path, const std::string &key,
                                            std::string &binary) {
  FileDescriptor fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
  if (fd.get() < 0 && errno == ENOENT) return Load::kMissing;
  struct stat st {};
  std::string data;
  bool valid = fd.get() >= 0 && ::fstat(fd.get(), &st) == 0 && S_ISREG(st.st_mode) &&
               static_cast<std::size_t>(st.st_size) >= sizeof(ProgramCacheEntryHeader);
  if (valid) {
    data.resize(static_cast<std::size_t>(st.st_size));
    valid = read_all(fd.get(), data.data(), data.size());
  }
  if (valid) {
    ProgramCacheEntryHeader header;
    std::memcpy(&header, data.data(), sizeof header);
    const std::size_t after_header = data.size() - sizeof header;
    // Every check compares with what this build expects; the file's word is never enough.
    valid = std::memcmp(header.magic, kMagic, sizeof kMagic) == 0 &&
            header.format == kProgramCacheFormat && header.reserved == 0 &&
            header.key_size == key.size() && key.size() <= after_header &&
            header.binary_size == after_header - key.size() && header.binary_size > 0 &&
            std::string_view(data).substr(sizeof header, key.size()) == key;
    if (valid) {
      binary.assign(data, sizeof header + key.size(), header.binary_size);
      valid = sha256(binary) == std::to_array(header.binary_sha256);
    }
  }
  if (valid) return Load::kLoaded;
  binary.clear();
  reject(path);
  return Load::kRejected;
}

void ProgramCache::write_entry(const std::string &path, const std::string &key,
                               const std::string &binary) {
  static std::atomic<std::uint64_t> counter{0};
  // Unique per process and call; rename() then replaces the entry atomically, so readers in
  // other threads or processes see the old file or the new one, never a half-written one.
  const std::string temporary =
      path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  ProgramCacheEntryHeader header{};
  std::memcpy(header.magic, kMagic, sizeof kMagic);
  header.format = kProgramCacheFormat;
  header.key_size = key.size();
  header.binary_size = binary.size();
  const Sha256Digest checksum = sha256(binary);
  std::memcpy(header.binary_sha256, checksum.data(), checksum.size());

  FileDescriptor fd(
      ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
  bool ok = fd.get() >= 0 && write_all(fd.get(), &header, sizeof header) &&
            write_all(fd.get(), key.data(), key.size()) &&
            write_all(fd.get(), binary.data(), binary.size());
  if (fd.get() >= 0) ok = ::close(fd.release()) == 0 && ok;
  ok = ok && ::rename(temporary.c_str(), path.c_str()) == 0;
  if (!ok) ::unlink(temporary.c_str());
  std::lock_guard lock(mutex_);
  ++(ok ? stats_.written : stats_.write_failed);
}

void ProgramCache::reject(const std::string &path) {
  ::unlink(path.c_str());
  std::lock_guard lock(mutex_);
  ++stats_.rejected;
}

std::string default_program_cache_folder() {
  if (const char *value = std::getenv("NANORT_OPENCL_CACHE")) {
    const std::string folder = value;
    return folder == "off" ? "" : folder;
  }
  // The XDG spec says to ignore a relative XDG_CACHE_HOME.
  if (const char *xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && xdg[0] == '/')
    return std::string(xdg) + "/nanort/opencl";
  if (const char *home = std::getenv("HOME"); home != nullptr && home[0] != '\0')
    return std::string(home) + "/.cache/nanort/opencl";
  return "";
}

}  // namespace nanort::rt::opencl
