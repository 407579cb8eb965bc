#include <nanort/dc/coherence.hpp>
#include <nanort/dc/invariant.hpp>

#include <bit>
#include <stdexcept>

namespace nanort::dc {

CopyState state_of(SpaceMask valid, SpaceId space) {
  if (!(valid & bit(space))) return CopyState::Invalid;
  if (valid == bit(space) && space != kHost) return CopyState::Modified;
  return CopyState::Shared;
}

const char *state_name(CopyState state) {
  switch (state) {
    case CopyState::Invalid: return "I";
    case CopyState::Shared: return "S";
    case CopyState::Modified: return "M";
  }
  return "?";
}

const char *event_name(CoherenceEvent event) {
  switch (event) {
    case CoherenceEvent::Read: return "read";
    case CoherenceEvent::Write: return "write";
    case CoherenceEvent::ReadWrite: return "read-write";
    case CoherenceEvent::Evict: return "evict";
    case CoherenceEvent::Flush: return "flush";
    case CoherenceEvent::WriteBack: return "write-back";
    case CoherenceEvent::Landed: return "landed";
  }
  return "?";
}

namespace {

SpaceId lowest(SpaceMask mask) { return static_cast<SpaceId>(std::countr_zero(mask)); }

Transition read(SpaceMask valid, SpaceId space, SpaceMask direct) {
  Transition t;
  if (valid & bit(space)) {
    t.valid = valid;
    t.hit = true;
    return t;
  }
  if (space == kHost) {  // every device copies to the host directly
    t.copies = 1;
    t.copy[0] = {lowest(valid), kHost};
    t.valid = valid | bit(kHost);
  } else if (valid & bit(kHost)) {
    t.copies = 1;
    t.copy[0] = {kHost, space};
    t.valid = valid | bit(space);
  } else if (SpaceMask peers = valid & direct & ~bit(kHost)) {
    t.copies = 1;
    t.copy[0] = {lowest(peers), space};
    t.valid = valid | bit(space);
  } else {
    // Through the host, which keeps its copy: the next reader elsewhere finds it there.
    t.copies = 2;
    t.copy[0] = {lowest(valid), kHost};
    t.copy[1] = {kHost, space};
    t.valid = valid | bit(kHost) | bit(space);
  }
  return t;
}

// The copies arriving that the transition's own copies wait for: into their sources, and
// into the host for a copy to the host.
SpaceMask waits_of_copies(const Transition &t, SpaceMask arriving) {
  SpaceMask wait = 0;
  for (int i = 0; i < t.copies; ++i) {
    wait |= arriving & bit(t.copy[i].from);
    if (t.copy[i].to == kHost) wait |= arriving & kHostOnly;
  }
  return wait;
}

}  // namespace

Transition coherence_transition(FragmentCoherence state, CoherenceEvent event, SpaceId space,
                                const EventContext &context) {
  const SpaceMask valid = state.valid, arriving = state.arriving;
  NANORT_INVARIANT(valid != 0, "coherence: a fragment with no valid copy");
  NANORT_INVARIANT(space < kMaxSpaces, "coherence: no such memory space");
  NANORT_INVARIANT((arriving & ~(valid | kHostOnly)) == 0,
                   "coherence: a copy in flight into a device whose copy is stale");
  Transition t;
  switch (event) {
    case CoherenceEvent::Read:
      t = read(valid, space, context.direct);
      t.arriving = arriving;
      if (t.hit) {
        t.wait = arriving & bit(space);
      } else {
        t.wait = waits_of_copies(t, arriving);
        if (space != kHost) t.arriving |= bit(space) | (t.copies == 2 ? kHostOnly : 0);
        // (a host reader waits for its copy)
      }
      return t;
    case CoherenceEvent::Write:
    case CoherenceEvent::ReadWrite: {
      if (event == CoherenceEvent::ReadWrite) {
        t = read(valid, space, context.direct);
        t.wait = t.hit ? arriving & bit(space) : waits_of_copies(t, arriving);
      }
      t.valid = bit(space);
      t.new_version = true;
      if (space == kHost) {  // host memory changes: every copy in flight first
        t.wait = arriving;
        t.arriving = 0;
      } else {  // the copies the writer read came first; a write-back into the host stays
        t.arriving = (arriving & kHostOnly) |
                     (!t.hit && t.copies == 2 ? kHostOnly : 0) |
                     (context.launched ? bit(space) : 0);
      }
      return t;
    }
    case CoherenceEvent::Evict:
      NANORT_INVARIANT(space != kHost, "coherence: the host never drops its memory");
      if (valid == bit(space)) {  // Modified: write back first
        t.copies = 1;
        t.copy[0] = {space, kHost};
        t.valid = kHostOnly;
      } else {
        t.valid = valid & ~bit(space);
      }
      t.wait = (arriving & bit(space)) | waits_of_copies(t, arriving);
      t.arriving = arriving & ~bit(space);
      return t;
    case CoherenceEvent::Flush:
      if (!(valid & bit(kHost))) {
        t.copies = 1;
        t.copy[0] = {lowest(valid), kHost};
      }
      t.valid = kHostOnly;
      t.wait = arriving;
      t.arriving = 0;
      return t;
    case CoherenceEvent::WriteBack:
      t.valid = valid;
      t.arriving = arriving;
      if (space != kHost && valid == bit(space) && context.host_locked) {
        t.copies = 1;
        t.copy[0] = {space, kHost};
        t.valid = valid | kHostOnly;
        t.arriving = arriving | kHostOnly;
        t.wait = waits_of_copies(t, arriving);
      }
      return t;
    case CoherenceEvent::Landed:
      t.valid = valid;
      t.arriving = arriving & ~bit(space);
      return t;
  }
  NANORT_UNREACHABLE_STATE("coherence: unknown event");
}

Transition coherence_transition(SpaceMask valid, CoherenceEvent event, SpaceId space,
                                SpaceMask direct) {
  return coherence_transition(FragmentCoherence{valid, 0}, event, space,
                              EventContext{direct, false, false});
}

std::string describe_state(SpaceMask valid, SpaceId count) {
  std::string text;
  for (SpaceId s = 0; s < count; ++s) {
    if (!text.empty()) text += ' ';
    text += (s == kHost ? std::string("host") : "space" + std::to_string(s)) + ":" +
            state_name(state_of(valid, s));
  }
  return text;
}

}  // namespace nanort::dc
