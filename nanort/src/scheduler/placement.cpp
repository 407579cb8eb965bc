#include "placement.hpp"

namespace nanort::rt {

std::size_t choose_by_affinity(std::span<const PlacementCandidate> candidates) {
  const std::size_t none = candidates.size();
  std::size_t best = none;
  double best_cost = 0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const PlacementCandidate &c = candidates[i];
    if (c.affinity <= 0) continue;
    const double cost = (c.load + 1) * c.affinity;
    if (best == none || cost < best_cost ||
        (cost == best_cost && c.load < candidates[best].load)) {
      best = i;
      best_cost = cost;
    }
  }
  return best;
}

std::size_t LocalityPolicy::choose(std::span<const PlacementCandidate> candidates) const {
  const std::size_t none = candidates.size();
  if (const std::size_t scored = choose_by_affinity(candidates); scored != none) return scored;
  // 1. The data it writes lives there alone: moving it would cost a copy out and a copy in.
  std::size_t best = none;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].owned > 0 && (best == none || candidates[i].owned > candidates[best].owned))
      best = i;
  if (best != none) return best;

  std::size_t least_device = none, cpu = none;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const PlacementCandidate &c = candidates[i];
    if (c.device < 0) {
      cpu = i;
    } else if (least_device == none || c.load < candidates[least_device].load) {
      least_device = i;
    }
  }
  if (least_device == none) return cpu;  // only the CPU workers can run it

  // 2. The device where most of what it reads is valid (fewer bytes to move), unless that
  // device is markedly more loaded than the least loaded one. The host holds every byte not on
  // a device, so the CPU workers do not take part here: devices first.
  best = none;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const PlacementCandidate &c = candidates[i];
    if (c.device < 0 || c.valid == 0) continue;
    if (best == none || c.valid > candidates[best].valid ||
        (c.valid == candidates[best].valid && c.load < candidates[best].load))
      best = i;
  }
  if (best != none &&
      !markedly_more_loaded(candidates[best].load, candidates[least_device].load))
    return best;

  // 3. The least loaded device. (Not the CPU workers, however idle: without a model of speeds
  // an idle CPU looks better than a busy GPU that would still finish far sooner.)
  return least_device;
}

namespace {

double finish_s(const PlacementCandidate &c) { return c.free_in + c.transfer + c.expected; }

// While the model does not know the task everywhere: an idle unknown candidate gets it (to be
// measured), else the affinity scores or locality decide. 'none' when the model knows it
// everywhere.
std::size_t calibrating_choice(std::span<const PlacementCandidate> candidates) {
  const std::size_t none = candidates.size();
  bool unknown = false;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].expected >= 0) continue;
    if (candidates[i].load == 0) return i;  // measure it there
    unknown = true;
  }
  if (!unknown) return none;
  return LocalityPolicy().choose(candidates);  // (scores first, then locality)
}

}  // namespace

std::size_t EarliestFinishPolicy::earliest(std::span<const PlacementCandidate> candidates) {
  const std::size_t none = candidates.size();
  std::size_t best = none;
  for (std::size_t i = 0; i < candidates.size(); ++i)
    if (candidates[i].expected >= 0 &&
        (best == none || finish_s(candidates[i]) < finish_s(candidates[best])))
      best = i;
  return best;
}

std::size_t EarliestFinishPolicy::choose(std::span<const PlacementCandidate> candidates) const {
  if (const std::size_t c = calibrating_choice(candidates); c != candidates.size()) return c;
  return earliest(candidates);
}

std::size_t EnergyPolicy::choose(std::span<const PlacementCandidate> candidates) const {
  if (const std::size_t c = calibrating_choice(candidates); c != candidates.size()) return c;
  const std::size_t none = candidates.size();
  std::size_t best = none;
  double best_cost = 0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const PlacementCandidate &c = candidates[i];
    if (c.watts <= 0) return EarliestFinishPolicy::earliest(candidates);  // unknown power: time alone
    const double cost = c.watts * c.expected + joules_per_ms_ * 1e3 * finish_s(c);
    if (best == none || cost < best_cost) {
      best = i;
      best_cost = cost;
    }
  }
  return best;
}

std::unique_ptr<PlacementPolicy> make_placement(std::string_view name, double energy_rate) {
  if (name == "locality") return std::make_unique<LocalityPolicy>();
  if (name == "dmda") return std::make_unique<EarliestFinishPolicy>();
  if (name == "energy") return std::make_unique<EnergyPolicy>(energy_rate);
  return nullptr;
}

}  // namespace nanort::rt
