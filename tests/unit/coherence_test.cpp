// Coherence: the MSI transition function of one fragment, pinned down by two tables.
//
// Three memory spaces: the host (0) and two devices (1, 2). A state is the set of spaces
// holding a valid copy; each row of the first table gives the state, the event, the acting
// space and the spaces that copy into it directly, and the expected new state, copy steps, hit
// and new version. The second table adds the transient part: the spaces a copy is still
// arriving into, what a transition waits for, and the events that start or end a copy in
// flight (an early write-back, a copy landing).
#include <nanort/dc/coherence.hpp>
#include <nanort/dc/invariant.hpp>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace {

using namespace nanort::dc;
using Event = CoherenceEvent;

constexpr SpaceId kCount = 3;
constexpr SpaceId D1 = 1, D2 = 2;
// Valid sets, named by their members.
constexpr SpaceMask H = bit(kHost), V1 = bit(D1), V2 = bit(D2);
constexpr SpaceMask None = 0;

std::string space_name(SpaceId s) { return s == kHost ? "host" : "space" + std::to_string(s); }

// "space2->host host->space1", "" for no copy.
std::string steps_text(const std::vector<CopyStep> &steps) {
  std::string text;
  for (const CopyStep &step : steps) {
    if (!text.empty()) text += ' ';
    text += space_name(step.from) + "->" + space_name(step.to);
  }
  return text;
}

std::string steps_text(const Transition &t) {
  return steps_text(std::vector<CopyStep>(t.copy, t.copy + t.copies));
}

struct Row {
  SpaceMask valid;
  Event event;
  SpaceId space;
  SpaceMask direct;  // spaces that copy into 'space' directly
  SpaceMask expect_valid;
  std::vector<CopyStep> steps;
  bool hit;
  bool new_version;
};

std::string describe(const Row &row) {
  std::string direct;
  for (SpaceId s = 0; s < kCount; ++s)
    if (row.direct & bit(s)) direct += (direct.empty() ? "" : ",") + space_name(s);
  return "[" + describe_state(row.valid, kCount) + "] " + event_name(row.event) + " at " +
         space_name(row.space) + ", direct {" + direct + "} -> expected [" +
         describe_state(row.expect_valid, kCount) + "] copies '" + steps_text(row.steps) + "'";
}

constexpr CopyStep step(SpaceId from, SpaceId to) { return CopyStep{from, to}; }
const std::vector<CopyStep> no_copy;

// clang-format off
const std::vector<Row> kTable = {
  // --- Read at a device -------------------------------------------------------------------
  // valid           event        space direct   new valid       copies                                  hit    new version
  // Invalid here, host valid: one copy from the host, which keeps its copy (Shared).
  {H,            Event::Read,      D1, None,    H | V1,         {step(kHost, D1)},                      false, false},
  // Invalid here, host and the peer valid: the host is the source even with a direct peer.
  {H | V2,       Event::Read,      D1, V2,      H | V1 | V2,    {step(kHost, D1)},                      false, false},
  {H | V2,       Event::Read,      D1, None,    H | V1 | V2,    {step(kHost, D1)},                      false, false},
  // Shared here (with the host, the peer, or both): a hit, nothing changes.
  {H | V1,       Event::Read,      D1, None,    H | V1,         no_copy,                                true,  false},
  {V1 | V2,      Event::Read,      D1, None,    V1 | V2,        no_copy,                                true,  false},
  {H | V1 | V2,  Event::Read,      D1, V2,      H | V1 | V2,    no_copy,                                true,  false},
  // Modified here: a hit.
  {V1,           Event::Read,      D1, None,    V1,             no_copy,                                true,  false},
  {V1,           Event::Read,      D1, V2,      V1,             no_copy,                                true,  false},
  // Modified on the peer, no direct copy: through the host (2 steps), the host keeps a copy.
  {V2,           Event::Read,      D1, None,    H | V1 | V2,    {step(D2, kHost), step(kHost, D1)},     false, false},
  {V1,           Event::Read,      D2, None,    H | V1 | V2,    {step(D1, kHost), step(kHost, D2)},     false, false},
  // Modified on the peer, direct copy: one step, the host stays invalid.
  {V2,           Event::Read,      D1, V2,      V1 | V2,        {step(D2, D1)},                         false, false},
  {V1,           Event::Read,      D2, V1,      V1 | V2,        {step(D1, D2)},                         false, false},
  // A direct set naming a space without a valid copy does not help.
  {V2,           Event::Read,      D1, H,       H | V1 | V2,    {step(D2, kHost), step(kHost, D1)},     false, false},

  // --- Read at the host --------------------------------------------------------------------
  {H,            Event::Read,      kHost, None, H,              no_copy,                                true,  false},
  {H | V1,       Event::Read,      kHost, None, H | V1,         no_copy,                                true,  false},
  {H | V1 | V2,  Event::Read,      kHost, None, H | V1 | V2,    no_copy,                                true,  false},
  // Device-only data: one step from the lowest valid device; the devices stay valid.
  {V1,           Event::Read,      kHost, None, H | V1,         {step(D1, kHost)},                      false, false},
  {V2,           Event::Read,      kHost, None, H | V2,         {step(D2, kHost)},                      false, false},
  {V1 | V2,      Event::Read,      kHost, None, H | V1 | V2,    {step(D1, kHost)},                      false, false},

  // --- Write: no copy from any state, the writer holds the only valid copy --------------------
  {H,            Event::Write,     D1, None,    V1,             no_copy,                                false, true},
  {H | V1,       Event::Write,     D1, None,    V1,             no_copy,                                false, true},
  {V1,           Event::Write,     D1, None,    V1,             no_copy,                                false, true},
  {V2,           Event::Write,     D1, None,    V1,             no_copy,                                false, true},
  {V2,           Event::Write,     D1, V2,      V1,             no_copy,                                false, true},
  {H | V2,       Event::Write,     D1, None,    V1,             no_copy,                                false, true},
  {V1 | V2,      Event::Write,     D1, None,    V1,             no_copy,                                false, true},
  {H | V1 | V2,  Event::Write,     D1, None,    V1,             no_copy,                                false, true},
  {V1,           Event::Write,     D2, V1,      V2,             no_copy,                                false, true},
  {H,            Event::Write,     kHost, None, H,              no_copy,                                false, true},
  {V1,           Event::Write,     kHost, None, H,              no_copy,                                false, true},
  {V1 | V2,      Event::Write,     kHost, None, H,              no_copy,                                false, true},
  {H | V2,       Event::Write,     kHost, None, H,              no_copy,                                false, true},

  // --- ReadWrite: the read's copies, then the writer alone ------------------------------------
  {H,            Event::ReadWrite, D1, None,    V1,             {step(kHost, D1)},                      false, true},
  {H | V1,       Event::ReadWrite, D1, None,    V1,             no_copy,                                true,  true},
  {V1,           Event::ReadWrite, D1, None,    V1,             no_copy,                                true,  true},
  {V1 | V2,      Event::ReadWrite, D1, None,    V1,             no_copy,                                true,  true},
  {H | V1 | V2,  Event::ReadWrite, D1, None,    V1,             no_copy,                                true,  true},
  {H | V2,       Event::ReadWrite, D1, V2,      V1,             {step(kHost, D1)},                      false, true},
  {V2,           Event::ReadWrite, D1, None,    V1,             {step(D2, kHost), step(kHost, D1)},     false, true},
  {V2,           Event::ReadWrite, D1, V2,      V1,             {step(D2, D1)},                         false, true},
  {V1,           Event::ReadWrite, D2, None,    V2,             {step(D1, kHost), step(kHost, D2)},     false, true},
  {V1,           Event::ReadWrite, D2, V1,      V2,             {step(D1, D2)},                         false, true},
  {H,            Event::ReadWrite, kHost, None, H,              no_copy,                                true,  true},
  {H | V1,       Event::ReadWrite, kHost, None, H,              no_copy,                                true,  true},
  {V1,           Event::ReadWrite, kHost, None, H,              {step(D1, kHost)},                      false, true},
  {V2,           Event::ReadWrite, kHost, None, H,              {step(D2, kHost)},                      false, true},
  {V1 | V2,      Event::ReadWrite, kHost, None, H,              {step(D1, kHost)},                      false, true},

  // --- Evict: Modified writes back, Shared and Invalid just drop -----------------------------
  {V1,           Event::Evict,     D1, None,    H,              {step(D1, kHost)},                      false, false},
  {V2,           Event::Evict,     D2, None,    H,              {step(D2, kHost)},                      false, false},
  {V1,           Event::Evict,     D1, V2,      H,              {step(D1, kHost)},                      false, false},
  {H | V1,       Event::Evict,     D1, None,    H,              no_copy,                                false, false},
  {V1 | V2,      Event::Evict,     D1, None,    V2,             no_copy,                                false, false},
  {H | V1 | V2,  Event::Evict,     D1, None,    H | V2,         no_copy,                                false, false},
  {H | V1 | V2,  Event::Evict,     D2, None,    H | V1,         no_copy,                                false, false},
  {H,            Event::Evict,     D1, None,    H,              no_copy,                                false, false},
  {V2,           Event::Evict,     D1, None,    V2,             no_copy,                                false, false},
  {H | V2,       Event::Evict,     D1, None,    H | V2,         no_copy,                                false, false},

  // --- Flush: the host gets the latest values (from the lowest valid device), devices drop --
  {H,            Event::Flush,     kHost, None, H,              no_copy,                                false, false},
  {H | V1,       Event::Flush,     kHost, None, H,              no_copy,                                false, false},
  {H | V1 | V2,  Event::Flush,     kHost, None, H,              no_copy,                                false, false},
  {V1,           Event::Flush,     kHost, None, H,              {step(D1, kHost)},                      false, false},
  {V2,           Event::Flush,     kHost, None, H,              {step(D2, kHost)},                      false, false},
  {V1 | V2,      Event::Flush,     kHost, None, H,              {step(D1, kHost)},                      false, false},
  // The acting space does not matter to a flush.
  {V2,           Event::Flush,     D1, V2,      H,              {step(D2, kHost)},                      false, false},
  {H | V2,       Event::Flush,     D1, None,    H,              no_copy,                                false, false},
  {V1,           Event::Flush,     D1, None,    H,              {step(D1, kHost)},                      false, false},
  {H | V1,       Event::Flush,     D1, None,    H,              no_copy,                                false, false},
};
// clang-format on

// --- The transient states -----------------------------------------------------------------
struct TransientRow {
  SpaceMask valid, arriving;
  Event event;
  SpaceId space;
  EventContext context;
  SpaceMask expect_valid, expect_arriving, expect_wait;
  std::vector<CopyStep> steps;
};

constexpr EventContext kNone{};
constexpr EventContext kLaunched{.launched = true};
constexpr EventContext kLocked{.host_locked = true};
constexpr EventContext kDirectFrom1{.direct = V1};

std::string mask_text(SpaceMask mask) {
  std::string text;
  for (SpaceId s = 0; s < kCount; ++s)
    if (mask & bit(s)) text += (text.empty() ? "" : ",") + space_name(s);
  return "{" + text + "}";
}

// clang-format off
const std::vector<TransientRow> kTransientTable = {
  // valid         arriving  event              space  context       new valid     arriving     wait       copies
  // A reader waits for the copy (or the kernel's results) arriving where it reads, and a copy
  // for those arriving into its source; a write-back in flight into the host delays copies
  // from or into the host only.
  {V1,           V1,     Event::Read,      D1,    kNone,        V1,           V1,          V1,        {}},
  {H | V1,       H,      Event::Read,      D1,    kNone,        H | V1,       H,           None,      {}},
  {H | V1,       H,      Event::Read,      D2,    kNone,        H | V1 | V2,  H | V2,      H,         {step(kHost, D2)}},
  {V1,           V1,     Event::Read,      D2,    kDirectFrom1, V1 | V2,      V1 | V2,     V1,        {step(D1, D2)}},
  {V1,           V1,     Event::Read,      D2,    kNone,        H | V1 | V2,  H | V1 | V2, V1,        {step(D1, kHost), step(kHost, D2)}},
  {V1,           H,      Event::Read,      D2,    kNone,        H | V1 | V2,  H | V2,      H,         {step(D1, kHost), step(kHost, D2)}},
  // The host's reader waits for its own copy: nothing stays arriving.
  {H | V1,       H,      Event::Read,      kHost, kNone,        H | V1,       H,           H,         {}},
  {V1,           V1,     Event::Read,      kHost, kNone,        H | V1,       V1,          V1,        {step(D1, kHost)}},
  {V1,           H | V1, Event::Read,      kHost, kNone,        H | V1,       H | V1,      H | V1,    {step(D1, kHost)}},
  // A write at a device keeps the host's write-back arriving (a later one lands after it),
  // and the writer's results if it was launched; at the host it waits for every copy.
  {H | V1,       H | V1, Event::Write,     D2,    kLaunched,    V2,           H | V2,      None,      {}},
  {H | V1,       H | V1, Event::Write,     D2,    kNone,        V2,           H,           None,      {}},
  {V1 | V2,      V2,     Event::Write,     D1,    kLaunched,    V1,           V1,          None,      {}},
  {H | V1,       H | V1, Event::Write,     kHost, kNone,        H,            None,        H | V1,    {}},
  {V2,           None,   Event::ReadWrite, D1,    kLaunched,    V1,           H | V1,      None,      {step(D2, kHost), step(kHost, D1)}},
  {V1,           V1,     Event::ReadWrite, D1,    kLaunched,    V1,           V1,          V1,        {}},
  // Evicting waits for what arrives there; its write-back for the host's too.
  {V1,           V1,     Event::Evict,     D1,    kNone,        H,            None,        V1,        {step(D1, kHost)}},
  {H | V1,       H | V1, Event::Evict,     D1,    kNone,        H,            H,           V1,        {}},
  {V1,           H | V1, Event::Evict,     D1,    kNone,        H,            H,           H | V1,    {step(D1, kHost)}},
  // A flush waits for every copy in flight (copies into devices read host memory).
  {H | V1 | V2,  V1 | V2, Event::Flush,    kHost, kNone,        H,            None,        V1 | V2,   {}},
  {V1,           H | V1, Event::Flush,     kHost, kNone,        H,            None,        H | V1,    {step(D1, kHost)}},
  // An early write-back: only of the only valid copy, only into page-locked host memory;
  // after the kernel's results and an earlier write-back.
  {V1,           None,   Event::WriteBack, D1,    kLocked,      H | V1,       H,           None,      {step(D1, kHost)}},
  {V1,           V1,     Event::WriteBack, D1,    kLocked,      H | V1,       H | V1,      V1,        {step(D1, kHost)}},
  {V1,           H,      Event::WriteBack, D1,    kLocked,      H | V1,       H,           H,         {step(D1, kHost)}},
  {V1,           None,   Event::WriteBack, D1,    kNone,        V1,           None,        None,      {}},
  {H | V1,       None,   Event::WriteBack, D1,    kLocked,      H | V1,       None,        None,      {}},
  {V1 | V2,      None,   Event::WriteBack, D1,    kLocked,      V1 | V2,      None,        None,      {}},
  // A copy lands: its space is no longer arriving, nothing else changes (a stale write-back
  // into the host too).
  {H | V1,       H | V1, Event::Landed,    kHost, kNone,        H | V1,       V1,          None,      {}},
  {V1,           V1,     Event::Landed,    D1,    kNone,        V1,           None,        None,      {}},
  {V1,           H,      Event::Landed,    kHost, kNone,        V1,           None,        None,      {}},
};
// clang-format on

TEST(Coherence, TransientTable) {
  for (const TransientRow &row : kTransientTable) {
    SCOPED_TRACE("[" + describe_state(row.valid, kCount) + ", arriving " + mask_text(row.arriving) +
                 "] " + event_name(row.event) + " at " + space_name(row.space));
    const Transition t = coherence_transition(FragmentCoherence{row.valid, row.arriving}, row.event,
                                              row.space, row.context);
    EXPECT_EQ(describe_state(t.valid, kCount), describe_state(row.expect_valid, kCount));
    EXPECT_EQ(mask_text(t.arriving), mask_text(row.expect_arriving));
    EXPECT_EQ(mask_text(t.wait), mask_text(row.expect_wait));
    EXPECT_EQ(steps_text(t), steps_text(row.steps));
  }
}

TEST(Coherence, TransientTableCoversEveryEvent) {
  for (Event event : {Event::Read, Event::Write, Event::ReadWrite, Event::Evict, Event::Flush,
                      Event::WriteBack, Event::Landed}) {
    bool with_arriving = false;
    for (const TransientRow &row : kTransientTable)
      with_arriving |= row.event == event && row.arriving != 0;
    EXPECT_TRUE(with_arriving) << event_name(event) << " with a copy in flight";
  }
}

// Over every state of three spaces with every set of copies in flight it may have, every
// event, acting space, direct set and context: what is in flight changes only what waits
// (the valid set, the copies, hit and version are those of the same state with nothing in
// flight); a transition waits only for copies in flight; the host alone may be arriving
// while stale; a flush and a write at the host leave nothing in flight; the copies of a
// device's read and of a write-back arrive; a landed copy clears its space alone.
TEST(Coherence, TransientInvariantsHoldForEveryTransition) {
  const SpaceMask all = (SpaceMask(1) << kCount) - 1;
  for (SpaceMask valid = 1; valid <= all; ++valid)
    for (SpaceMask arriving = 0; arriving <= all; ++arriving) {
      if (arriving & ~(valid | H)) continue;
      for (Event event : {Event::Read, Event::Write, Event::ReadWrite, Event::Evict, Event::Flush,
                          Event::WriteBack, Event::Landed})
        for (SpaceId space = 0; space < kCount; ++space)
          for (SpaceMask direct : {None, V1, V2})
            for (bool launched : {false, true})
              for (bool locked : {false, true}) {
                if (event == Event::Evict && space == kHost) continue;
                if (direct & bit(space)) continue;
                SCOPED_TRACE("[" + describe_state(valid, kCount) + ", arriving " +
                             mask_text(arriving) + "] " + event_name(event) + " at " +
                             space_name(space) + " direct " + mask_text(direct) +
                             (launched ? " launched" : "") + (locked ? " locked" : ""));
                const EventContext context{direct, launched, locked};
                const Transition t =
                    coherence_transition(FragmentCoherence{valid, arriving}, event, space, context);
                const Transition settled =
                    coherence_transition(FragmentCoherence{valid, 0}, event, space, context);
                EXPECT_EQ(t.valid, settled.valid);
                EXPECT_EQ(steps_text(t), steps_text(settled));
                EXPECT_EQ(t.hit, settled.hit);
                EXPECT_EQ(t.new_version, settled.new_version);
                EXPECT_EQ(t.wait & ~arriving, 0u) << "waits for a copy not in flight";
                EXPECT_EQ(t.arriving & ~(t.valid | H), 0u) << "a stale device arriving";
                if (event == Event::Flush || (event == Event::Write && space == kHost)) {
                  EXPECT_EQ(t.arriving, 0u);
                  EXPECT_EQ(t.wait, arriving);
                }
                if ((event == Event::Read && space != kHost) || event == Event::WriteBack) {
                  for (int i = 0; i < t.copies; ++i)
                    EXPECT_TRUE(t.arriving & bit(t.copy[i].to))
                        << "a copy into " << space_name(t.copy[i].to) << " not arriving";
                }
                if (event == Event::Landed) {
                  EXPECT_EQ(t.arriving, arriving & ~bit(space));
                  EXPECT_EQ(t.valid, valid);
                  EXPECT_EQ(t.wait, 0u);
                }
              }
    }
}

TEST(Coherence, ACopyInFlightIntoAStaleDeviceIsAnInternalError) {
  EXPECT_THROW(coherence_transition(FragmentCoherence{V1, V2}, Event::Read, D1, kNone),
               nanort::InternalError);
  EXPECT_NO_THROW(coherence_transition(FragmentCoherence{V1, H}, Event::Read, D1, kNone));
}

TEST(Coherence, TransitionTable) {
  for (const Row &row : kTable) {
    SCOPED_TRACE(describe(row));
    const Transition t = coherence_transition(row.valid, row.event, row.space, row.direct);
    EXPECT_EQ(describe_state(t.valid, kCount), describe_state(row.expect_valid, kCount));
    EXPECT_EQ(t.valid, row.expect_valid);
    ASSERT_GE(t.copies, 0);
    ASSERT_LE(t.copies, 2);
    EXPECT_EQ(steps_text(t), steps_text(row.steps));
    EXPECT_EQ(t.hit, row.hit);
    EXPECT_EQ(t.new_version, row.new_version);
  }
}

// Every event is in the table with every state of the acting space that applies.
TEST(Coherence, TableCoversEveryEventAndState) {
  for (Event event : {Event::Read, Event::Write, Event::ReadWrite, Event::Evict, Event::Flush}) {
    for (CopyState state : {CopyState::Invalid, CopyState::Shared, CopyState::Modified}) {
      bool found = false;
      for (const Row &row : kTable)
        found |= row.event == event && row.space != kHost && state_of(row.valid, row.space) == state;
      EXPECT_TRUE(found) << event_name(event) << " at a device in state " << state_name(state);
    }
  }
}

// The invariants of the header, over every state of three spaces, every event, every acting
// space and every direct set: the valid set is never empty; each copy goes from a space valid
// at that point into one that is not; the space that read or wrote ends valid; a write leaves
// the writer alone.
TEST(Coherence, InvariantsHoldForEveryTransition) {
  for (SpaceMask valid = 1; valid < (SpaceMask(1) << kCount); ++valid)
    for (Event event : {Event::Read, Event::Write, Event::ReadWrite, Event::Evict, Event::Flush})
      for (SpaceId space = 0; space < kCount; ++space)
        for (SpaceMask direct : {None, V1, V2, V1 | V2}) {
          if (event == Event::Evict && space == kHost) continue;
          if (direct & bit(space)) continue;
          SCOPED_TRACE("[" + describe_state(valid, kCount) + "] " + event_name(event) + " at " +
                       space_name(space) + " direct " + std::to_string(direct));
          const Transition t = coherence_transition(valid, event, space, direct);
          EXPECT_NE(t.valid, 0u);
          EXPECT_EQ(t.valid & ~((SpaceMask(1) << kCount) - 1), 0u) << "a space that does not exist";
          SpaceMask now = valid;
          for (int i = 0; i < t.copies; ++i) {
            const CopyStep c = t.copy[i];
            EXPECT_TRUE(now & bit(c.from)) << "copy from an invalid space " << space_name(c.from);
            EXPECT_FALSE(now & bit(c.to)) << "copy into a valid space " << space_name(c.to);
            EXPECT_TRUE(c.from == kHost || c.to == kHost || (direct & bit(c.from)))
                << "a device-to-device copy without a direct path";
            now |= bit(c.to);
          }
          if (event == Event::Read || event == Event::ReadWrite || event == Event::Write) {
            EXPECT_TRUE(t.valid & bit(space));
          }
          if (event == Event::Read) {
            EXPECT_EQ(t.hit, (valid & bit(space)) != 0);
          }
          if (event == Event::Write || event == Event::ReadWrite) {
            EXPECT_EQ(t.valid, bit(space));
          }
          if (event == Event::Flush) {
            EXPECT_EQ(t.valid, kHostOnly);
          }
          if (event == Event::Evict) {
            EXPECT_FALSE(t.valid & bit(space));
          }
          EXPECT_EQ(t.new_version, event == Event::Write || event == Event::ReadWrite);
          // Nothing is lost: a state whose only valid copy is dropped wrote it back first.
          if (event == Event::Evict && valid == bit(space)) {
            EXPECT_EQ(t.copies, 1);
          }
        }
}

TEST(Coherence, NoValidCopyIsAnInternalError) {
  for (Event event : {Event::Read, Event::Write, Event::ReadWrite, Event::Evict, Event::Flush})
    for (SpaceId space : {kHost, D1, D2}) {
      if (event == Event::Evict && space == kHost) continue;
      SCOPED_TRACE(std::string(event_name(event)) + " at " + space_name(space));
      EXPECT_THROW(coherence_transition(0, event, space, None), nanort::InternalError);
    }
}

// The message says that nanort is at fault, where, and what broke: not "invalid argument".
TEST(Coherence, InternalErrorNamesItsCheck) {
  try {
    coherence_transition(0, Event::Read, kHost, None);
    FAIL() << "no error for a fragment with no valid copy";
  } catch (const nanort::InternalError &e) {
    const std::string text = e.what();
    const std::string start = "internal error in nanort at directory-cache/src/coherence.cpp:";
    const std::string end =
        ": coherence: a fragment with no valid copy (a bug in nanort: please report it, with "
        "the program that shows it)";
    ASSERT_GT(text.size(), start.size() + end.size()) << text;
    EXPECT_EQ(text.substr(0, start.size()), start) << text;
    EXPECT_EQ(text.substr(text.size() - end.size()), end) << text;
    const std::string line = text.substr(start.size(), text.size() - start.size() - end.size());
    EXPECT_EQ(line.find_first_not_of("0123456789"), std::string::npos) << text;
    EXPECT_GT(std::stoi(line), 0) << text;
  }
}

TEST(Coherence, EvictingTheHostIsAnInternalError) {
  for (SpaceMask valid : {H, H | V1, V1, V1 | V2, H | V1 | V2}) {
    SCOPED_TRACE(describe_state(valid, kCount));
    EXPECT_THROW(coherence_transition(valid, Event::Evict, kHost, None), nanort::InternalError);
  }
}

TEST(Coherence, SpaceOutOfRangeIsAnInternalError) {
  EXPECT_THROW(coherence_transition(H, Event::Read, kMaxSpaces, None), nanort::InternalError);
  EXPECT_NO_THROW(coherence_transition(H, Event::Read, kMaxSpaces - 1, None));
}

TEST(Coherence, StateOf) {
  struct Case {
    SpaceMask valid;
    SpaceId space;
    CopyState state;
  };
  const Case cases[] = {
      {H, kHost, CopyState::Shared},  // the host is never Modified
      {H, D1, CopyState::Invalid},
      {H | V1, kHost, CopyState::Shared},
      {H | V1, D1, CopyState::Shared},
      {H | V1, D2, CopyState::Invalid},
      {V1, D1, CopyState::Modified},
      {V1, kHost, CopyState::Invalid},
      {V1, D2, CopyState::Invalid},
      {V1 | V2, D1, CopyState::Shared},  // shared between devices, host stale
      {V1 | V2, D2, CopyState::Shared},
      {V1 | V2, kHost, CopyState::Invalid},
      {V2, D2, CopyState::Modified},
      {bit(63), 63, CopyState::Modified},
  };
  for (const Case &c : cases) {
    SCOPED_TRACE(describe_state(c.valid, kCount) + " seen from " + space_name(c.space));
    EXPECT_EQ(state_of(c.valid, c.space), c.state);
  }
  EXPECT_STREQ(state_name(CopyState::Invalid), "I");
  EXPECT_STREQ(state_name(CopyState::Shared), "S");
  EXPECT_STREQ(state_name(CopyState::Modified), "M");
}

TEST(Coherence, DescribeState) {
  EXPECT_EQ(describe_state(H, 3), "host:S space1:I space2:I");
  EXPECT_EQ(describe_state(V1, 3), "host:I space1:M space2:I");
  EXPECT_EQ(describe_state(H | V2, 3), "host:S space1:I space2:S");
  EXPECT_EQ(describe_state(V1 | V2, 3), "host:I space1:S space2:S");
  EXPECT_EQ(describe_state(H, 1), "host:S");
  EXPECT_EQ(describe_state(H, 0), "");
}

TEST(Coherence, EventNames) {
  EXPECT_STREQ(event_name(Event::Read), "read");
  EXPECT_STREQ(event_name(Event::Write), "write");
  EXPECT_STREQ(event_name(Event::ReadWrite), "read-write");
  EXPECT_STREQ(event_name(Event::Evict), "evict");
  EXPECT_STREQ(event_name(Event::Flush), "flush");
  EXPECT_STREQ(event_name(Event::WriteBack), "write-back");
  EXPECT_STREQ(event_name(Event::Landed), "landed");
}

}  // namespace
