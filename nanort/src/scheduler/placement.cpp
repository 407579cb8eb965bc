#include "placement.hpp"

namespace nanort::rt {

std::size_t LocalityPolicy::choose(std::span<const PlacementCandidate> candidates) const {
  const std::size_t none = candidates.size();
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

std::size_t EarliestFinishPolicy::choose(std::span<const PlacementCandidate> candidates) const {
  const std::size_t none = candidates.size();
  std::size_t idle_unknown = none, best = none;
  bool unknown = false;
  double best_finish = 0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const PlacementCandidate &c = candidates[i];
    if (c.expected < 0) {
      unknown = true;
      if (idle_unknown == none && c.load == 0) idle_unknown = i;
      continue;
    }
    const double finish = c.free_in + c.transfer + c.expected;
    if (best == none || finish < best_finish) {
      best = i;
      best_finish = finish;
    }
  }
  if (idle_unknown != none) return idle_unknown;  // measure it there
  if (unknown) return LocalityPolicy().choose(candidates);
  return best;
}

std::unique_ptr<PlacementPolicy> make_placement(std::string_view name) {
  if (name == "locality") return std::make_unique<LocalityPolicy>();
  if (name == "dmda") return std::make_unique<EarliestFinishPolicy>();
  return nullptr;
}

}  // namespace nanort::rt
