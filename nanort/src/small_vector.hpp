// SmallVector: a vector that keeps its first N elements inline, so that the usual task (a few
// accesses, one or two successors) costs no allocation. For trivially copyable T only.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>

namespace nanort::rt {

template <class T, std::size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector holds trivially copyable types");

 public:
  SmallVector() = default;
  SmallVector(const SmallVector &other) { *this = other; }
  SmallVector &operator=(const SmallVector &other) {
    if (this == &other) return *this;
    clear();
    reserve(other.size_);
    std::memcpy(static_cast<void *>(data_), other.data_, other.size_ * sizeof(T));
    size_ = other.size_;
    return *this;
  }
  // A move takes the other's heap block, if it has one (no copy, no allocation); the other is
  // left empty.
  SmallVector(SmallVector &&other) noexcept { take(other); }
  SmallVector &operator=(SmallVector &&other) noexcept {
    if (this == &other) return *this;
    if (data_ != inline_storage()) std::free(data_);
    data_ = inline_storage();
    capacity_ = N;
    take(other);
    return *this;
  }
  ~SmallVector() {
    if (data_ != inline_storage()) std::free(data_);
  }

  void swap(SmallVector &other) {
    if (data_ != inline_storage() && other.data_ != other.inline_storage()) {  // both on the heap: swap pointers
      std::swap(data_, other.data_);
      std::swap(size_, other.size_);
      std::swap(capacity_, other.capacity_);
      return;
    }
    SmallVector held(std::move(*this));
    *this = std::move(other);
    other = std::move(held);
  }

  // Removes the elements for which drop(element) is true, keeping the order of the rest.
  template <class Drop>
  void erase_if(Drop &&drop) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < size_; ++i)
      if (!drop(data_[i])) data_[kept++] = data_[i];
    size_ = kept;
  }

  void push_back(const T &value) {
    if (size_ == capacity_) reserve(capacity_ * 2);
    data_[size_++] = value;
  }
  void clear() { size_ = 0; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T &back() { return data_[size_ - 1]; }
  const T &back() const { return data_[size_ - 1]; }
  T &operator[](std::size_t i) { return data_[i]; }
  const T &operator[](std::size_t i) const { return data_[i]; }
  T *begin() { return data_; }
  T *end() { return data_ + size_; }
  const T *begin() const { return data_; }
  const T *end() const { return data_ + size_; }

 private:
  void take(SmallVector &other) noexcept {  // (this one: empty, inline)
    if (other.data_ != other.inline_storage()) {
      data_ = other.data_;
      capacity_ = other.capacity_;
    } else {
      std::memcpy(static_cast<void *>(storage_), other.storage_, other.size_ * sizeof(T));
    }
    size_ = other.size_;
    other.data_ = other.inline_storage();
    other.capacity_ = N;
    other.size_ = 0;
  }
  void reserve(std::size_t capacity) {
    if (capacity <= capacity_) return;
    T *data = static_cast<T *>(std::malloc(capacity * sizeof(T)));
    if (!data) throw std::bad_alloc();
    std::memcpy(static_cast<void *>(data), data_, size_ * sizeof(T));
    if (data_ != inline_storage()) std::free(data_);
    data_ = data;
    capacity_ = capacity;
  }

  T *inline_storage() { return reinterpret_cast<T *>(storage_); }
  const T *inline_storage() const { return reinterpret_cast<const T *>(storage_); }

  // The bookkeeping first: an empty vector touches one cache line, not its inline storage.
  T *data_ = inline_storage();
  std::size_t size_ = 0;
  std::size_t capacity_ = N;
  // Raw storage: making a vector writes none of it (T is trivially copyable; elements come
  // into being as they are copied in).
  alignas(T) unsigned char storage_[N * sizeof(T)];
};

}  // namespace nanort::rt
