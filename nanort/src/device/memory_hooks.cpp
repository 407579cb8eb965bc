#include "memory_hooks.hpp"

#include <dlfcn.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstring>

extern "C" {
void __libc_free(void *);
void *__libc_realloc(void *, std::size_t);
}

// Under a sanitizer, its allocator and interceptors own these calls (and run before it is
// set up, where instrumented hooks could not): the runtime defines none, and locks nothing.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define NANORT_MEMORY_HOOKS 0
#else
#define NANORT_MEMORY_HOOKS 1
#endif

#if NANORT_MEMORY_HOOKS
namespace {

using FreeFn = void (*)(void *);
using ReallocFn = void *(*)(void *, std::size_t);
using ReallocArrayFn = void *(*)(void *, std::size_t, std::size_t);
using MunmapFn = int (*)(void *, std::size_t);
using MremapFn = void *(*)(void *, std::size_t, std::size_t, int, ...);
using MadviseFn = int (*)(void *, std::size_t, int);
using MmapFn = void *(*)(void *, std::size_t, int, int, int, off_t);
using BrkFn = int (*)(void *);
using SbrkFn = void *(*)(intptr_t);
using ShmdtFn = int (*)(const void *);

// The C library's (or whatever is next), behind ours. Found when the runtime is loaded, or at
// the first call before that (from another library's constructor).
FreeFn next_free = nullptr;
ReallocFn next_realloc = nullptr;
ReallocArrayFn next_reallocarray = nullptr;
MunmapFn next_munmap = nullptr;
MremapFn next_mremap = nullptr;
MadviseFn next_madvise = nullptr;
MmapFn next_mmap = nullptr;
BrkFn next_brk = nullptr;
SbrkFn next_sbrk = nullptr;
ShmdtFn next_shmdt = nullptr;

template <class Fn>
Fn find_next(const char *name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

__attribute__((constructor(101))) void find_next_functions() {
  next_free = find_next<FreeFn>("free");
  next_realloc = find_next<ReallocFn>("realloc");
  next_reallocarray = find_next<ReallocArrayFn>("reallocarray");
  next_munmap = find_next<MunmapFn>("munmap");
  next_mremap = find_next<MremapFn>("mremap");
  next_madvise = find_next<MadviseFn>("madvise");
  next_mmap = find_next<MmapFn>("mmap");
  next_brk = find_next<BrkFn>("brk");
  next_sbrk = find_next<SbrkFn>("sbrk");
  next_shmdt = find_next<ShmdtFn>("shmdt");
}

using nanort::rt::hooks::may_hold;
using nanort::rt::hooks::program_gives_back;

void heap_block_goes(void *block) {
  const auto start = reinterpret_cast<std::uintptr_t>(block);
  if (block && may_hold(start)) program_gives_back(start, start + malloc_usable_size(block), false);
}

void pages_go(const void *address, std::size_t bytes) {
  const auto start = reinterpret_cast<std::uintptr_t>(address);
  if (may_hold(start)) program_gives_back(start, start + bytes, true);
}

// The end of the mapping that holds 'address' (from /proc/self/maps; for shmdt, rare).
std::uintptr_t mapping_end(const void *address) {
  const auto at = reinterpret_cast<std::uintptr_t>(address);
  std::FILE *maps = std::fopen("/proc/self/maps", "r");
  if (!maps) return at;
  std::uintptr_t end = at;
  unsigned long lo = 0, hi = 0;
  char line[512];
  while (std::fgets(line, sizeof line, maps))
    if (std::sscanf(line, "%lx-%lx", &lo, &hi) == 2 && lo <= at && at < hi) {
      end = hi;
      break;
    }
  std::fclose(maps);
  return end;
}

}  // namespace

// The hooks. Each tells the cache first, then does what the C library's does.
extern "C" {

// (Found here if called before the constructor: the allocator behind may not be the C
// library's, a sanitizer's for one.)
__attribute__((visibility("default"))) void free(void *block) {
  heap_block_goes(block);
  if (!next_free) next_free = find_next<FreeFn>("free");
  if (next_free)
    next_free(block);
  else
    __libc_free(block);
}

__attribute__((visibility("default"))) void *realloc(void *block, std::size_t bytes) {
  heap_block_goes(block);  // (it may move, or shrink and give its tail back)
  if (!next_realloc) next_realloc = find_next<ReallocFn>("realloc");
  return next_realloc ? next_realloc(block, bytes) : __libc_realloc(block, bytes);
}

__attribute__((visibility("default"))) void *reallocarray(void *block, std::size_t count,
                                                          std::size_t size) {
  heap_block_goes(block);
  if (!next_reallocarray) next_reallocarray = find_next<ReallocArrayFn>("reallocarray");
  if (next_reallocarray) return next_reallocarray(block, count, size);
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(count, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return __libc_realloc(block, bytes);
}

__attribute__((visibility("default"))) int munmap(void *address, std::size_t bytes) {
  if (bytes) pages_go(address, bytes);
  if (next_munmap) return next_munmap(address, bytes);
  return static_cast<int>(syscall(SYS_munmap, address, bytes));
}

__attribute__((visibility("default"))) void *mremap(void *address, std::size_t old_bytes,
                                                    std::size_t new_bytes, int flags, ...) {
  void *new_address = nullptr;
  if (flags & MREMAP_FIXED) {
    va_list args;
    va_start(args, flags);
    new_address = va_arg(args, void *);
    va_end(args);
    if (new_bytes) pages_go(new_address, new_bytes);  // (what was mapped there goes)
  }
  if (old_bytes) pages_go(address, old_bytes);
  if (!next_mremap) next_mremap = find_next<MremapFn>("mremap");
  if (!next_mremap) {
    errno = ENOSYS;
    return MAP_FAILED;
  }
  return next_mremap(address, old_bytes, new_bytes, flags, new_address);
}

__attribute__((visibility("default"))) int madvise(void *address, std::size_t bytes, int advice) {
  // These drop the pages: the next touch maps new ones, which the driver never locked.
  bool drops = advice == MADV_DONTNEED || advice == MADV_FREE || advice == MADV_REMOVE;
#ifdef MADV_DONTNEED_LOCKED
  drops = drops || advice == MADV_DONTNEED_LOCKED;
#endif
  if (bytes && drops) pages_go(address, bytes);
  if (next_madvise) return next_madvise(address, bytes, advice);
  return static_cast<int>(syscall(SYS_madvise, address, bytes, advice));
}

__attribute__((visibility("default"))) void *mmap(void *address, std::size_t bytes, int protection,
                                                  int flags, int fd, off_t offset) {
  if ((flags & MAP_FIXED) && bytes) pages_go(address, bytes);  // replaces what was there
  if (next_mmap) return next_mmap(address, bytes, protection, flags, fd, offset);
  const long result = syscall(SYS_mmap, address, bytes, protection, flags, fd, offset);
  return reinterpret_cast<void *>(result);
}

__attribute__((visibility("default"))) void *mmap64(void *address, std::size_t bytes,
                                                    int protection, int flags, int fd,
                                                    off_t offset) {
  return mmap(address, bytes, protection, flags, fd, offset);
}

__attribute__((visibility("default"))) int brk(void *end) {
  if (!next_sbrk) next_sbrk = find_next<SbrkFn>("sbrk");
  if (!next_brk) next_brk = find_next<BrkFn>("brk");
  if (!next_sbrk || !next_brk) {
    errno = ENOSYS;
    return -1;
  }
  const auto now = reinterpret_cast<std::uintptr_t>(next_sbrk(0));
  const auto to = reinterpret_cast<std::uintptr_t>(end);
  if (to < now) pages_go(end, now - to);
  return next_brk(end);
}

__attribute__((visibility("default"))) void *sbrk(intptr_t increment) {
  if (!next_sbrk) next_sbrk = find_next<SbrkFn>("sbrk");
  if (!next_sbrk) {
    errno = ENOSYS;
    return reinterpret_cast<void *>(-1);
  }
  if (increment < 0) {
    const auto now = reinterpret_cast<std::uintptr_t>(next_sbrk(0));
    pages_go(reinterpret_cast<void *>(now - static_cast<std::uintptr_t>(-increment)),
             static_cast<std::size_t>(-increment));
  }
  return next_sbrk(increment);
}

__attribute__((visibility("default"))) int shmdt(const void *address) {
  const std::uintptr_t end = mapping_end(address);
  const auto start = reinterpret_cast<std::uintptr_t>(address);
  if (end > start) pages_go(address, end - start);
  if (!next_shmdt) next_shmdt = find_next<ShmdtFn>("shmdt");
  if (!next_shmdt) {
    errno = ENOSYS;
    return -1;
  }
  return next_shmdt(address);
}

// Our own, for in_effect(): what the program's calls reach must be these. (Aliases with the
// C library's attributes of each.)
void nanort_hook_free(void *) __attribute__((alias("free"), copy(free), visibility("hidden")));
void *nanort_hook_realloc(void *, std::size_t)
    __attribute__((alias("realloc"), copy(realloc), visibility("hidden")));
int nanort_hook_munmap(void *, std::size_t)
    __attribute__((alias("munmap"), copy(munmap), visibility("hidden")));
void *nanort_hook_mremap(void *, std::size_t, std::size_t, int, ...)
    __attribute__((alias("mremap"), copy(mremap), visibility("hidden")));
int nanort_hook_madvise(void *, std::size_t, int)
    __attribute__((alias("madvise"), copy(madvise), visibility("hidden")));
void *nanort_hook_mmap(void *, std::size_t, int, int, int, off_t)
    __attribute__((alias("mmap"), copy(mmap), visibility("hidden")));
void *nanort_hook_mmap64(void *, std::size_t, int, int, int, off_t)
    __attribute__((alias("mmap64"), copy(mmap64), visibility("hidden")));
void *nanort_hook_reallocarray(void *, std::size_t, std::size_t)
    __attribute__((alias("reallocarray"), copy(reallocarray), visibility("hidden")));
int nanort_hook_brk(void *) __attribute__((alias("brk"), copy(brk), visibility("hidden")));
void *nanort_hook_sbrk(intptr_t) __attribute__((alias("sbrk"), copy(sbrk), visibility("hidden")));
int nanort_hook_shmdt(const void *)
    __attribute__((alias("shmdt"), copy(shmdt), visibility("hidden")));
}

#endif  // NANORT_MEMORY_HOOKS

namespace nanort::rt::hooks {

#if !NANORT_MEMORY_HOOKS
bool in_effect(std::string &why) {
  why = "the runtime was built with a sanitizer, whose allocator comes first";
  return false;
}
#else
bool in_effect(std::string &why) {
  struct Hook {
    const char *name;
    void *ours;
  };
  const Hook hooks[] = {{"free", reinterpret_cast<void *>(&nanort_hook_free)},
                        {"realloc", reinterpret_cast<void *>(&nanort_hook_realloc)},
                        {"munmap", reinterpret_cast<void *>(&nanort_hook_munmap)},
                        {"mremap", reinterpret_cast<void *>(&nanort_hook_mremap)},
                        {"madvise", reinterpret_cast<void *>(&nanort_hook_madvise)},
                        {"mmap", reinterpret_cast<void *>(&nanort_hook_mmap)},
                        {"mmap64", reinterpret_cast<void *>(&nanort_hook_mmap64)},
                        {"reallocarray", reinterpret_cast<void *>(&nanort_hook_reallocarray)},
                        {"brk", reinterpret_cast<void *>(&nanort_hook_brk)},
                        {"sbrk", reinterpret_cast<void *>(&nanort_hook_sbrk)},
                        {"shmdt", reinterpret_cast<void *>(&nanort_hook_shmdt)}};
  for (const Hook &hook : hooks)
    if (dlsym(RTLD_DEFAULT, hook.name) != hook.ours) {
      why = std::string("the program's calls to ") + hook.name +
            " reach another definition first (a sanitizer, or an allocator loaded ahead of "
            "the runtime)";
      return false;
    }
  // Block sizes come from the C library's malloc_usable_size: its malloc must be the one.
  if (!next_free || reinterpret_cast<void *>(next_free) != dlsym(RTLD_DEFAULT, "__libc_free")) {
    why = "free behind the runtime's is not the C library's (another allocator)";
    return false;
  }
  return true;
}
#endif

}  // namespace nanort::rt::hooks
