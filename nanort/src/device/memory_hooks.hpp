// The runtime's memory hooks: free, realloc, reallocarray, munmap, mremap, madvise, mmap over
// a mapping, brk, sbrk and shmdt, defined by the runtime in front of the C library's, tell the
// host lock cache (host_lock_cache.hpp) what the program gives back before it is given back,
// then call the C library. Calls made inside the C library (its malloc's own unmapping) are
// not seen: free and realloc are, which covers them. A raw system call is not seen either.
#pragma once

#include <cstdint>
#include <string>

namespace nanort::rt::hooks {

// Whether every hook is the one the program's calls reach, and free is the C library's behind
// it; 'why' names what is in front of them otherwise (a sanitizer, another allocator).
bool in_effect(std::string &why);
// Cheap: whether 'start' may be memory the cache knows (host_lock_cache.cpp).
bool may_hold(std::uintptr_t start);
// [start, end) is given back by the program: 'pages' for an unmapping, else a heap block.
void program_gives_back(std::uintptr_t start, std::uintptr_t end, bool pages);

}  // namespace nanort::rt::hooks
