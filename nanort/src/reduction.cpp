#include "reduction.hpp"

#include "task.hpp"

#include <algorithm>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <mutex>
#include <new>
#include <type_traits>

namespace nanort::rt {

namespace {

// ---------------------------------------------------------------------------------------------
// The built-in operators, per element type

template <class T>
constexpr bool is_complex = false;
template <class T>
constexpr bool is_complex<std::complex<T>> = true;

template <class T, std::uint32_t Op>
constexpr bool defined_for() {
  if constexpr (is_complex<T>)
    return Op == NANORT_REDUCE_SUM || Op == NANORT_REDUCE_PRODUCT;
  else if constexpr (std::is_floating_point_v<T>)
    return Op != NANORT_REDUCE_BIT_AND && Op != NANORT_REDUCE_BIT_OR &&
           Op != NANORT_REDUCE_BIT_XOR;
  else
    return true;
}

template <class T, std::uint32_t Op>
T identity() {
  if constexpr (Op == NANORT_REDUCE_PRODUCT || Op == NANORT_REDUCE_AND) {
    return T(1);
  } else if constexpr (Op == NANORT_REDUCE_MIN) {
    if constexpr (std::numeric_limits<T>::has_infinity) return std::numeric_limits<T>::infinity();
    return std::numeric_limits<T>::max();
  } else if constexpr (Op == NANORT_REDUCE_MAX) {
    if constexpr (std::numeric_limits<T>::has_infinity) return -std::numeric_limits<T>::infinity();
    return std::numeric_limits<T>::lowest();
  } else if constexpr (Op == NANORT_REDUCE_BIT_AND) {
    if constexpr (std::is_same_v<T, bool>)
      return true;
    else
      return static_cast<T>(~T(0));
  } else {
    return T(0);
  }
}

template <class T, std::uint32_t Op>
T apply(T out, T in) {
  if constexpr (Op == NANORT_REDUCE_SUM) return static_cast<T>(out + in);
  if constexpr (Op == NANORT_REDUCE_PRODUCT) return static_cast<T>(out * in);
  if constexpr (!is_complex<T>) {
    if constexpr (Op == NANORT_REDUCE_MIN) return in < out ? in : out;
    if constexpr (Op == NANORT_REDUCE_MAX) return out < in ? in : out;
    if constexpr (Op == NANORT_REDUCE_AND) return static_cast<T>(out && in);
    if constexpr (Op == NANORT_REDUCE_OR) return static_cast<T>(out || in);
    if constexpr (std::is_integral_v<T>) {
      if constexpr (Op == NANORT_REDUCE_BIT_AND) return static_cast<T>(out & in);
      if constexpr (Op == NANORT_REDUCE_BIT_OR) return static_cast<T>(out | in);
      if constexpr (Op == NANORT_REDUCE_BIT_XOR) return static_cast<T>(out ^ in);
    }
  }
  return out;  // (not reached: resolve_reduction_op refuses the other pairs)
}

template <class T, std::uint32_t Op>
void fill_identity(void *priv, std::size_t count) {
  const T value = identity<T, Op>();
  T *elements = static_cast<T *>(priv);
  for (std::size_t i = 0; i < count; ++i) elements[i] = value;
}

template <class T, std::uint32_t Op>
void combine_array(void *out, const void *in, std::size_t count) {
  T *to = static_cast<T *>(out);
  const T *from = static_cast<const T *>(in);
  for (std::size_t i = 0; i < count; ++i) to[i] = apply<T, Op>(to[i], from[i]);
}

template <class T, std::uint32_t Op>
bool resolve_for(ReductionOp &out) {
  if constexpr (defined_for<T, Op>()) {
    out.element_size = sizeof(T);
    out.fill_identity = &fill_identity<T, Op>;
    out.combine_array = &combine_array<T, Op>;
    return true;
  }
  return false;
}

template <class T>
bool resolve_type(std::uint32_t op, ReductionOp &out) {
  switch (op) {
    case NANORT_REDUCE_SUM: return resolve_for<T, NANORT_REDUCE_SUM>(out);
    case NANORT_REDUCE_PRODUCT: return resolve_for<T, NANORT_REDUCE_PRODUCT>(out);
    case NANORT_REDUCE_MIN: return resolve_for<T, NANORT_REDUCE_MIN>(out);
    case NANORT_REDUCE_MAX: return resolve_for<T, NANORT_REDUCE_MAX>(out);
    case NANORT_REDUCE_BIT_AND: return resolve_for<T, NANORT_REDUCE_BIT_AND>(out);
    case NANORT_REDUCE_BIT_OR: return resolve_for<T, NANORT_REDUCE_BIT_OR>(out);
    case NANORT_REDUCE_BIT_XOR: return resolve_for<T, NANORT_REDUCE_BIT_XOR>(out);
    case NANORT_REDUCE_AND: return resolve_for<T, NANORT_REDUCE_AND>(out);
    case NANORT_REDUCE_OR: return resolve_for<T, NANORT_REDUCE_OR>(out);
  }
  return false;
}

const char *type_name(std::uint32_t type) {
  switch (type) {
    case NANORT_TYPE_CHAR: return "char";
    case NANORT_TYPE_SIGNED_CHAR: return "signed char";
    case NANORT_TYPE_UNSIGNED_CHAR: return "unsigned char";
    case NANORT_TYPE_SHORT: return "short";
    case NANORT_TYPE_UNSIGNED_SHORT: return "unsigned short";
    case NANORT_TYPE_INT: return "int";
    case NANORT_TYPE_UNSIGNED_INT: return "unsigned int";
    case NANORT_TYPE_LONG: return "long";
    case NANORT_TYPE_UNSIGNED_LONG: return "unsigned long";
    case NANORT_TYPE_LONG_LONG: return "long long";
    case NANORT_TYPE_UNSIGNED_LONG_LONG: return "unsigned long long";
    case NANORT_TYPE_BOOL: return "bool";
    case NANORT_TYPE_FLOAT: return "float";
    case NANORT_TYPE_DOUBLE: return "double";
    case NANORT_TYPE_LONG_DOUBLE: return "long double";
    case NANORT_TYPE_FLOAT_COMPLEX: return "float complex";
    case NANORT_TYPE_DOUBLE_COMPLEX: return "double complex";
    case NANORT_TYPE_LONG_DOUBLE_COMPLEX: return "long double complex";
  }
  return nullptr;
}

const char *operator_name(std::uint32_t op) {
  switch (op) {
    case NANORT_REDUCE_SUM: return "+";
    case NANORT_REDUCE_PRODUCT: return "*";
    case NANORT_REDUCE_MIN: return "min";
    case NANORT_REDUCE_MAX: return "max";
    case NANORT_REDUCE_BIT_AND: return "&";
    case NANORT_REDUCE_BIT_OR: return "|";
    case NANORT_REDUCE_BIT_XOR: return "^";
    case NANORT_REDUCE_AND: return "&&";
    case NANORT_REDUCE_OR: return "||";
    case NANORT_REDUCE_USER: return "user-defined";
  }
  return nullptr;
}

bool resolve_builtin(std::uint32_t type, std::uint32_t op, ReductionOp &out) {
  switch (type) {
    case NANORT_TYPE_CHAR: return resolve_type<char>(op, out);
    case NANORT_TYPE_SIGNED_CHAR: return resolve_type<signed char>(op, out);
    case NANORT_TYPE_UNSIGNED_CHAR: return resolve_type<unsigned char>(op, out);
    case NANORT_TYPE_SHORT: return resolve_type<short>(op, out);
    case NANORT_TYPE_UNSIGNED_SHORT: return resolve_type<unsigned short>(op, out);
    case NANORT_TYPE_INT: return resolve_type<int>(op, out);
    case NANORT_TYPE_UNSIGNED_INT: return resolve_type<unsigned int>(op, out);
    case NANORT_TYPE_LONG: return resolve_type<long>(op, out);
    case NANORT_TYPE_UNSIGNED_LONG: return resolve_type<unsigned long>(op, out);
    case NANORT_TYPE_LONG_LONG: return resolve_type<long long>(op, out);
    case NANORT_TYPE_UNSIGNED_LONG_LONG: return resolve_type<unsigned long long>(op, out);
    case NANORT_TYPE_BOOL: return resolve_type<bool>(op, out);
    case NANORT_TYPE_FLOAT: return resolve_type<float>(op, out);
    case NANORT_TYPE_DOUBLE: return resolve_type<double>(op, out);
    case NANORT_TYPE_LONG_DOUBLE: return resolve_type<long double>(op, out);
    case NANORT_TYPE_FLOAT_COMPLEX: return resolve_type<std::complex<float>>(op, out);
    case NANORT_TYPE_DOUBLE_COMPLEX: return resolve_type<std::complex<double>>(op, out);
    case NANORT_TYPE_LONG_DOUBLE_COMPLEX:
      return resolve_type<std::complex<long double>>(op, out);
  }
  return false;
}

// Slots start on a cache line of their own and fill whole lines: two workers' copies never
// share one.
constexpr std::size_t kSlotAlign = 64;

}  // namespace

// ---------------------------------------------------------------------------------------------
// ReductionOp

bool ReductionOp::same_as(const ReductionOp &other) const {
  if (op != other.op) return false;
  if (op != NANORT_REDUCE_USER) return type == other.type;
  return element_size == other.element_size && initialize == other.initialize &&
         combine == other.combine && destroy == other.destroy;
}

std::string ReductionOp::describe() const {
  if (op == NANORT_REDUCE_USER)
    return name ? std::string("'") + name + "'" : std::string("a user-defined operator");
  const char *text = operator_name(op);
  return std::string(text ? text : "?") + " on " + (type_name(type) ? type_name(type) : "?");
}

std::optional<std::string> resolve_reduction_op(const nanort_reduction_op *op, ReductionOp &out) {
  if (!op) return std::string("the reduction operator is NULL");
  if (op->abi_version != NANORT_ABI_VERSION)
    return "the reduction operator was compiled for nanort ABI " +
           std::to_string(op->abi_version) + ", this runtime speaks ABI " +
           std::to_string(NANORT_ABI_VERSION);
  out = ReductionOp{};
  out.op = op->op;
  out.type = op->type;
  out.name = op->name;
  if (op->op == NANORT_REDUCE_USER) {
    if (!op->combine) return std::string("the user-defined reduction operator has no combiner");
    if (op->element_size == 0)
      return std::string("the user-defined reduction operator has an element size of 0 bytes");
    out.element_size = op->element_size;
    out.initialize = op->initialize;
    out.combine = op->combine;
    out.destroy = op->destroy;
    return std::nullopt;
  }
  const char *op_text = operator_name(op->op);
  if (!op_text)
    return "the reduction operator " + std::to_string(op->op) +
           " is not one of NANORT_REDUCE_SUM to NANORT_REDUCE_USER";
  const char *type_text = type_name(op->type);
  if (!type_text)
    return "the reduction type " + std::to_string(op->type) + " of operator " + op_text +
           " is not one of NANORT_TYPE_CHAR to NANORT_TYPE_LONG_DOUBLE_COMPLEX";
  if (!resolve_builtin(op->type, op->op, out))
    return std::string("the reduction operator ") + op_text + " is not defined for " + type_text;
  if (op->element_size != 0 && op->element_size != out.element_size)
    return "the reduction operator " + std::string(op_text) + " on " + type_text +
           " gives an element size of " + std::to_string(op->element_size) + " bytes, but " +
           type_text + " has " + std::to_string(out.element_size);
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// ReductionInfo

ReductionInfo::ReductionInfo(std::uintptr_t key, std::size_t bytes, unsigned char *target,
                             const ReductionOp &op)
    : key_(key), bytes_(bytes), target_(target), op_(op) {}

ReductionInfo::~ReductionInfo() {
  for (Slot &slot : slots_)
    if (slot.storage) {
      destroy_elements(slot.storage);
      std::free(slot.storage);
    }
}

void ReductionInfo::initialize(unsigned char *storage) {
  const std::size_t count = bytes_ / op_.element_size;
  if (op_.fill_identity) {
    op_.fill_identity(storage, count);
  } else if (op_.initialize) {
    for (std::size_t i = 0; i < count; ++i)
      op_.initialize(storage + i * op_.element_size, target_ + i * op_.element_size);
  } else {
    std::memset(storage, 0, bytes_);
  }
}

void ReductionInfo::destroy_elements(unsigned char *storage) {
  if (!op_.destroy) return;
  const std::size_t count = bytes_ / op_.element_size;
  for (std::size_t i = 0; i < count; ++i) op_.destroy(storage + i * op_.element_size);
}

unsigned char *ReductionInfo::take_slot(int lane, int &slot) {
  unsigned char *storage = nullptr;
  bool fresh = false;
  {
    std::lock_guard<SpinLock> guard(lock_);
    int index = -1;
    if (lane >= 0) {
      if (slots_.size() <= static_cast<std::size_t>(lane)) slots_.resize(lane + 1);
      if (!slots_[lane].in_use) index = lane;
    }
    // Threads without a lane of their own look from the end, away from the workers' slots.
    for (std::size_t i = slots_.size(); index < 0 && i-- > 0;)
      if (!slots_[i].in_use) index = static_cast<int>(i);
    if (index < 0) {
      slots_.emplace_back();
      index = static_cast<int>(slots_.size() - 1);
    }
    Slot &chosen = slots_[static_cast<std::size_t>(index)];
    if (!chosen.storage) {
      const std::size_t rounded = (bytes_ + kSlotAlign - 1) / kSlotAlign * kSlotAlign;
      chosen.storage = static_cast<unsigned char *>(std::aligned_alloc(kSlotAlign, rounded));
      if (!chosen.storage) throw std::bad_alloc();
      fresh = true;
    }
    chosen.in_use = true;
    storage = chosen.storage;
    slot = index;
  }
  if (fresh) {  // (the slot is ours: set outside the lock, a user's initializer may be slow)
    try {
      initialize(storage);
    } catch (...) {
      std::lock_guard<SpinLock> guard(lock_);
      std::free(slots_[static_cast<std::size_t>(slot)].storage);
      slots_[static_cast<std::size_t>(slot)] = Slot{};
      slot = -1;
      throw;
    }
  }
  return storage;
}

void ReductionInfo::release_slot(int slot) {
  std::lock_guard<SpinLock> guard(lock_);
  slots_[static_cast<std::size_t>(slot)].in_use = false;
}

void ReductionInfo::combine() {
  const std::size_t count = bytes_ / op_.element_size;
  for (Slot &slot : slots_) {
    if (!slot.storage) continue;
    if (op_.combine_array) {
      op_.combine_array(target_, slot.storage, count);
    } else {
      for (std::size_t i = 0; i < count; ++i)
        op_.combine(target_ + i * op_.element_size, slot.storage + i * op_.element_size);
    }
    destroy_elements(slot.storage);
    std::free(slot.storage);
    slot.storage = nullptr;
  }
}

// ---------------------------------------------------------------------------------------------
// TaskReductions

ReductionEntry *TaskReductions::find(std::uintptr_t address) {
  for (ReductionEntry &entry : entries)
    if (address >= entry.start && address < entry.end) return &entry;
  return nullptr;
}

// ---------------------------------------------------------------------------------------------
// A task's private copies

unsigned char *reduction_private_of(Task *task, std::uintptr_t address, int lane) {
  ReductionEntry *entry = task->reductions ? task->reductions->find(address) : nullptr;
  if (!entry) return nullptr;
  if (!entry->storage) {
    if (entry->info) {
      unsigned char *slot = entry->info->take_slot(lane, entry->slot);
      entry->storage = slot + (entry->start - entry->info->key());
    } else {
      // Run at once inside a final task, in program order: it works on what its parent works
      // on, the parent's private copy, else the original.
      unsigned char *outer =
          task->parent ? reduction_private_of(task->parent, entry->start, lane) : nullptr;
      entry->storage = outer ? outer : reinterpret_cast<unsigned char *>(entry->start);
    }
  }
  return entry->storage + (address - entry->start);
}

void release_reduction_slots(Task *task) {
  const bool failed = task->failed || task->not_run_after || task->ran_behind_failure;
  for (ReductionEntry &entry : task->reductions->entries) {
    if (entry.slot >= 0) {
      entry.info->release_slot(entry.slot);
      entry.slot = -1;
    }
    if (failed && entry.info) entry.info->participant_failed.store(true);
  }
}

}  // namespace nanort::rt
