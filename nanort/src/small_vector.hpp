// SmallVector: a vector that keeps its first N elements inline, so that the usual task (a few
// accesses, one or two successors) costs no allocation. For trivially copyable T only.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>

namespace nanort::rt {

template <class T, std::size_t N>
class SmallVector {
  static_assert(std::is_trivially_copyable_v<T>, "SmallVector holds trivially copyable types");

 public:
  SmallVector() = default;
  SmallVector(const SmallVector &) = delete;
  SmallVector &operator=(const SmallVector &) = delete;
  ~SmallVector() {
    if (data_ != inline_) std::free(data_);
  }

  void push_back(const T &value) {
    if (size_ == capacity_) grow();
    data_[size_++] = value;
  }
  void clear() { size_ = 0; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T &back() { return data_[size_ - 1]; }
  T &operator[](std::size_t i) { return data_[i]; }
  const T &operator[](std::size_t i) const { return data_[i]; }
  T *begin() { return data_; }
  T *end() { return data_ + size_; }
  const T *begin() const { return data_; }
  const T *end() const { return data_ + size_; }

 private:
  void grow() {
    std::size_t capacity = capacity_ * 2;
    T *data = static_cast<T *>(std::malloc(capacity * sizeof(T)));
    if (!data) throw std::bad_alloc();
    std::memcpy(static_cast<void *>(data), data_, size_ * sizeof(T));
    if (data_ != inline_) std::free(data_);
    data_ = data;
    capacity_ = capacity;
  }

  T inline_[N];
  T *data_ = inline_;
  std::size_t size_ = 0;
  std::size_t capacity_ = N;
};

}  // namespace nanort::rt
