// Coherence: the state of one fragment of host memory across memory spaces, and how events
// change it. A pure function, so that a table (tests/unit/coherence_test.cpp) can pin every
// transition down.
//
// The state of a fragment is the set of memory spaces holding a valid copy (space 0 is the
// host, the home of all data). Seen from one space, that is MSI:
//
//   Modified  the space holds the only valid copy and it is not the host: the host is stale
//             and the copy must be written back before it is dropped;
//   Shared    the space holds a valid copy and so does another space, or it is the host;
//   Invalid   the space's copy (if it has one) is stale.
//
// Data the directory never saw is valid on the host only. A write anywhere leaves the writer
// the only valid copy and bumps the fragment's version. Invariants: the set is never empty; a
// copy is only ever made from a valid space into an invalid one.
//
// The transient part of the state: the spaces a copy is still on its way into ('arriving': a
// copy to a device, a read-out through the host, an early write-back, a launched kernel's
// results). A space arriving is valid once its copy lands; the host may also be arriving while
// stale (a write-back of values a later write replaced: later copies into the host land after
// it). A transition says which of those copies must complete first ('wait'): the caller
// waits for them, or makes its task or its copies wait. A copy waits for the copies arriving
// into its source, and a copy into the host for the one arriving there.
#pragma once

#include <cstdint>
#include <string>

namespace nanort::dc {

using SpaceId = std::uint32_t;
using SpaceMask = std::uint64_t;  // bit s set: space s holds a valid copy
constexpr SpaceId kHost = 0;
constexpr SpaceId kMaxSpaces = 64;
constexpr SpaceMask kHostOnly = 1;

constexpr SpaceMask bit(SpaceId space) { return SpaceMask(1) << space; }

enum class CopyState : std::uint8_t { Invalid, Shared, Modified };

CopyState state_of(SpaceMask valid, SpaceId space);
const char *state_name(CopyState state);

enum class CoherenceEvent : std::uint8_t {
  Read,       // a task on 'space' reads: the space needs a valid copy
  Write,      // a task on 'space' overwrote the fragment without reading it
  ReadWrite,  // both
  Evict,      // 'space' drops its copy (not the host)
  Flush,      // the host needs the latest values and devices drop their copies (taskwait)
  WriteBack,  // 'space', the only valid copy, starts home early (page-locked host memory)
  Landed,     // the copy into 'space' completed
};
const char *event_name(CoherenceEvent event);

// A copy the transition needs, made before the new state holds. When a transition has two,
// the first must complete before the second starts.
struct CopyStep {
  SpaceId from = kHost, to = kHost;
  bool operator==(const CopyStep &) const = default;
};

struct FragmentCoherence {
  SpaceMask valid = kHostOnly;
  SpaceMask arriving = 0;  // copies in flight into these spaces (valid ones, or the host)
};

// What else an event depends on.
struct EventContext {
  SpaceMask direct = 0;      // spaces that copy into 'space' without the host
  bool launched = false;     // Write: the writer is a kernel still running (results arriving)
  bool host_locked = false;  // WriteBack: the host memory is page-locked (else nothing starts)
};

struct Transition {
  SpaceMask valid = kHostOnly;  // the new state
  SpaceMask arriving = 0;
  SpaceMask wait = 0;           // copies arriving into these spaces complete first
  int copies = 0;               // 0, 1 or 2 steps below
  CopyStep copy[2];
  bool hit = false;             // a read found a valid copy in place
  bool new_version = false;     // the contents changed
};

// The transition of a fragment in 'state' on 'event' in 'space'. For a device's read of a
// fragment that the host does not hold, the source is the lowest valid space of
// context.direct, else the lowest valid space through the host (the host keeps that copy: it
// is arriving there too); a host read copies from the lowest valid space, and the host's
// reader waits for its copy (nothing stays arriving). A flush writes back from the lowest
// valid space and waits for every copy in flight (copies into devices read host memory that
// the program may change after it); so does a write at the host. A write at a device leaves
// only the host's write-back arriving, and the writer's results if it was launched.
Transition coherence_transition(FragmentCoherence state, CoherenceEvent event, SpaceId space,
                                const EventContext &context);
// The same for a fragment with nothing in flight.
Transition coherence_transition(SpaceMask valid, CoherenceEvent event, SpaceId space,
                                SpaceMask direct);

// "host:S opencl1:I" style, for messages and test failures (spaces 0..count-1).
std::string describe_state(SpaceMask valid, SpaceId count);

}  // namespace nanort::dc
