// Placement: where a ready task runs when more than one place could run it (several devices of
// its kind, or devices and the CPU workers through its implementations).
//
// A placement policy sees the candidates of one task, each with its load and where the task's
// data lives, and picks one; it is a pure function of what it is shown, so that its decisions
// can be tested on made-up machines (tests/unit/placement_test.cpp). The runtime builds the
// candidates (Runtime::place) and sends the task to the one chosen: a device's own queue, or the
// CPU workers' queue.
//
// breadth-first places nothing: device tasks wait in one queue per device kind, taken by
// whichever device of that kind is free first, with the first implementation the machine can
// run (the behaviour before placement existed).
#pragma once

#include <nanort/nanort.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>

namespace nanort::rt {

struct PlacementCandidate {
  const nanort_task_impl *impl = nullptr;  // what the task runs there
  nanort_device_kind kind = NANORT_DEVICE_SMP;
  int device = -1;          // the device's manager number; -1: the CPU workers
  double load = 0;          // tasks waiting or running there, per execution unit
  std::uint64_t valid = 0;  // bytes the task reads that are valid there
  std::uint64_t owned = 0;  // bytes the task writes whose only valid copy is there
  // For the performance-model policy, in seconds:
  double free_in = 0;    // until the place is done with what it holds already
  double transfer = 0;   // to bring there the bytes it reads that are not valid there
  double expected = -1;  // the task's execution there, from the model; negative: unknown
  // Hints and energy:
  double affinity = 0;  // the user's score for the task kind there (lower is better); 0: none
  double watts = 0;     // the place's power while it runs a task (for the energy policy)
};

// The candidate the affinity scores prefer: among those with a score, the least
// (load + 1) x score, a score being a relative cost; candidates.size() when none has one.
// Under breadth-first (no policy), the runtime places tasks with scores by this alone.
std::size_t choose_by_affinity(std::span<const PlacementCandidate> candidates);

class PlacementPolicy {
 public:
  virtual ~PlacementPolicy() = default;
  virtual const char *name() const = 0;
  // The index of the chosen candidate; 'candidates' is never empty.
  virtual std::size_t choose(std::span<const PlacementCandidate> candidates) const = 0;
};

// Locality (PaRSEC's rule) among the devices, for task kinds without affinity scores (those
// with scores go by them): where the task's written data already lives
// alone; else the device where most of the bytes it reads are valid, unless it is markedly more
// loaded than the least loaded device (more than twice its load plus one task); else the least
// loaded device. The CPU workers run it only when no device can: this policy knows no speeds,
// and an idle CPU is no reason to leave a busy GPU that would still finish far sooner (dmda
// weighs that).
class LocalityPolicy final : public PlacementPolicy {
 public:
  const char *name() const override { return "locality"; }
  std::size_t choose(std::span<const PlacementCandidate> candidates) const override;
  static bool markedly_more_loaded(double load, double than) { return load > 2 * than + 1; }
};

// Performance model (HEFT, StarPU's dmda): the earliest expected finish, free_in + transfer +
// expected. While the model does not know the task on some candidates, it behaves like
// locality, except that an idle candidate the model does not know yet gets the task, so that
// every place gets measured: calibration is automatic, one task at a time per idle place.
// Affinity scores, where given, stand in for the model until it knows every candidate.
class EarliestFinishPolicy final : public PlacementPolicy {
 public:
  const char *name() const override { return "dmda"; }
  std::size_t choose(std::span<const PlacementCandidate> candidates) const override;
  // The earliest finish among candidates the model knows; candidates.size() when it knows none.
  static std::size_t earliest(std::span<const PlacementCandidate> candidates);
};

// Time for energy (COMPSs-Mobile's DynEn): like dmda, but a later finish is accepted when each
// millisecond of it saves at least 'joules_per_ms' joules: the least
// watts x expected + joules_per_ms x finish (ms). 0 minimises energy alone; a large rate is
// dmda. Until the model knows every candidate it calibrates as dmda does.
class EnergyPolicy final : public PlacementPolicy {
 public:
  explicit EnergyPolicy(double joules_per_ms) : joules_per_ms_(joules_per_ms) {}
  const char *name() const override { return "energy"; }
  std::size_t choose(std::span<const PlacementCandidate> candidates) const override;
  double joules_per_ms() const { return joules_per_ms_; }

 private:
  double joules_per_ms_;
};

// The placement of the policy named 'name' (NANORT_SCHEDULER); null for breadth-first, which
// places nothing. energy_rate: EnergyPolicy's joules per millisecond.
std::unique_ptr<PlacementPolicy> make_placement(std::string_view name, double energy_rate = 1.0);

}  // namespace nanort::rt
