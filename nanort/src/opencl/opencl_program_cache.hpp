// ProgramCache: builds OpenCL programs from source and keeps their binaries on disk, so that a
// program's second run skips the compiler (seconds per kernel file on some platforms).
//
// One entry per (program, device): the file <sha256 of the key text>.bin in the cache folder.
// The key text names everything that can change the binary (source, options, the headers the
// source includes, device, driver, platform, our format) and is stored whole in the entry, so
// a hash collision or a stale file is found by comparing, never trusted. Any entry that fails a
// check is deleted and rebuilt. A program whose headers cannot all be found (an #include the
// compiler resolves in folders of its own, or on a branch not taken) is not cached at all:
// a change to such a header could not be seen (opencl_program_includes.hpp).
#pragma once

#include "opencl_api.hpp"

#include <array>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace nanort::rt::opencl {

// A program that failed to build: what() holds the origin, the failing devices' names and their
// build logs; 'log' holds the logs alone.
class ProgramBuildError : public std::runtime_error {
 public:
  ProgramBuildError(const std::string &message, std::string build_log)
      : std::runtime_error(message), log(std::move(build_log)) {}
  std::string log;
};

// Counted per build() call (hits, misses, not_cached) and per entry file (rejected, written,
// write_failed).
struct ProgramCacheStats {
  std::uint64_t hits = 0;          // built from cached binaries
  std::uint64_t misses = 0;        // built from source (every build when the cache is off)
  std::uint64_t not_cached = 0;    // of the misses: programs whose headers were not all found
  std::uint64_t rejected = 0;      // entries found corrupt, stale or refused by OpenCL; deleted
  std::uint64_t written = 0;       // entries written
  std::uint64_t write_failed = 0;  // entries that could not be written (disk full, ...)
};

// Bumped whenever the entry format or the key text changes: old entries then stop matching.
inline constexpr std::uint32_t kProgramCacheFormat = 2;  // 2: the included headers

// The fixed start of an entry file, in host byte order (a cache belongs to one machine). Then
// follow key_size bytes of key text and binary_size bytes of binary; nothing else.
struct ProgramCacheEntryHeader {
  char magic[8];           // "NRTCLPB\0"
  std::uint32_t format;    // kProgramCacheFormat
  std::uint32_t reserved;  // 0
  std::uint64_t key_size;
  std::uint64_t binary_size;
  unsigned char binary_sha256[32];  // checksum of the binary
};
static_assert(sizeof(ProgramCacheEntryHeader) == 64);

class ProgramCache {
 public:
  // 'folder': where binaries are kept; empty string: no disk cache (always builds from source).
  // A missing folder is created (mode 0700); one that is not private disables the cache.
  explicit ProgramCache(std::string folder);

  // Returns a built program for every device in 'devices' (all from 'context'). Uses cached
  // binaries when a valid entry exists for every device, else builds from source and writes
  // one entry per device. Thread-safe. Throws ProgramBuildError (build failed, with log) or
  // OpenClError. 'origin' names the source in messages (a file name, a kernel's location).
  cl_program build(cl_context context, const std::vector<cl_device_id> &devices,
                   std::string_view source, std::string_view options, std::string_view origin);

  ProgramCacheStats stats() const;
  // Why programs were not cached: one line per program (for NANORT_STATS).
  std::vector<std::string> notes() const;
  // The statistics' lines about OpenCL programs ("" when none was built).
  std::string summary() const;
  const std::string &folder() const { return folder_; }
  // Whether entries are read and written.
  bool enabled() const { return enabled_; }
  // Why the disk cache is off, if it is ("" when on): e.g. folder not private. Worth a warning
  // only when folder() is not empty (an empty folder is the user's choice).
  const std::string &disabled_reason() const { return disabled_reason_; }

  // The full key text of one device's entry, and the entry's file path (for tests and tools).
  // 'includes': IncludeScan::key of the source and options.
  static std::string key_text(cl_device_id device, std::string_view source,
                              std::string_view options, std::string_view includes);
  std::string entry_path(const std::string &key_text) const;

 private:
  enum class Load { kMissing, kRejected, kLoaded };
  Load load_entry(const std::string &path, const std::string &key, std::string &binary);
  void write_entry(const std::string &path, const std::string &key, const std::string &binary);
  void reject(const std::string &path);

  std::string folder_;
  bool enabled_ = false;
  std::string disabled_reason_;
  mutable std::mutex mutex_;  // guards stats_ and notes_ only: builds run concurrently
  ProgramCacheStats stats_;
  std::vector<std::string> notes_;
};

// NANORT_OPENCL_CACHE if set ("" or "off" = no cache), else $XDG_CACHE_HOME/nanort/opencl,
// else $HOME/.cache/nanort/opencl ("" when none of them is set).
std::string default_program_cache_folder();

// SHA-256 (FIPS 180-4): the key's hash and the binaries' checksum.
using Sha256Digest = std::array<unsigned char, 32>;
Sha256Digest sha256(std::string_view data);
std::string to_hex(const Sha256Digest &digest);

}  // namespace nanort::rt::opencl
