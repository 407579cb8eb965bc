// NANORT_HOT_TLS: for the thread-locals on every task's path.
//
// In a shared library, a thread-local is by default reached through a call to __tls_get_addr
// on each access; the initial-exec model reads it at a fixed offset from the thread pointer,
// one instruction. Those marked are a few words in all, so a libnanort opened with dlopen
// still finds room for them in the static TLS block that the loader keeps for that.
#pragma once

#define NANORT_HOT_TLS __attribute__((tls_model("initial-exec")))
