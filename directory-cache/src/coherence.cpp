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

}  // namespace

Transition coherence_transition(SpaceMask valid, CoherenceEvent event, SpaceId space,
                                SpaceMask direct) {
  NANORT_INVARIANT(valid != 0, "coherence: a fragment with no valid copy");
  NANORT_INVARIANT(space < kMaxSpaces, "coherence: no such memory space");
  switch (event) {
    case CoherenceEvent::Read:
      return read(valid, space, direct);
    case CoherenceEvent::Write: {
      Transition t;
      t.valid = bit(space);
      t.new_version = true;
      return t;
    }
    case CoherenceEvent::ReadWrite: {
      Transition t = read(valid, space, direct);
      t.valid = bit(space);
      t.new_version = true;
      return t;
    }
    case CoherenceEvent::Evict: {
      NANORT_INVARIANT(space != kHost, "coherence: the host never drops its memory");
      Transition t;
      if (valid == bit(space)) {  // Modified: write back first
        t.copies = 1;
        t.copy[0] = {space, kHost};
        t.valid = kHostOnly;
      } else {
        t.valid = valid & ~bit(space);
      }
      return t;
    }
    case CoherenceEvent::Flush: {
      Transition t;
      if (!(valid & bit(kHost))) {
        t.copies = 1;
        t.copy[0] = {lowest(valid), kHost};
      }
      t.valid = kHostOnly;
      return t;
    }
  }
  NANORT_UNREACHABLE_STATE("coherence: unknown event");
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
