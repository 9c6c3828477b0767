#pragma once
// Per-thread spares: objects a thread has finished with, kept for its next
// use of the same kind so that a nonblocking call allocates nothing once a few
// have run. The fiber stacks (fiber.hpp), the started collectives' blocks
// (recycling_allocator, below) and the drop-in library's call records
// (pmpi/nonblocking.cpp) are kept this way.

#include <array>
#include <cstddef>
#include <memory>

#include "../version.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail {

// Up to N objects of one kind per thread; Free disposes of one. The list is a
// thread_local, so it goes at thread exit and frees what it holds; after
// that, give() refuses and the caller frees the object itself. An object
// given on another thread than it came from stays with that thread.
template <class T, std::size_t N, class Free = std::default_delete<T>>
class thread_spares {
 public:
  static T* take() noexcept {
    if (gone_) return nullptr;
    thread_spares& s = of_this_thread();
    return s.n_ == 0 ? nullptr : s.items_[--s.n_];
  }
  // Whether p was kept; if not, it is still the caller's.
  static bool give(T* p) noexcept {
    if (gone_) return false;
    thread_spares& s = of_this_thread();
    if (s.n_ == N) return false;
    s.items_[s.n_++] = p;
    return true;
  }
  ~thread_spares() {
    gone_ = true;
    for (std::size_t i = 0; i < n_; ++i) Free{}(items_[i]);
  }

 private:
  thread_spares() = default;
  static thread_spares& of_this_thread() noexcept {
    thread_local thread_spares s;
    return s;
  }
  static inline thread_local bool gone_ = false;
  std::array<T*, N> items_{};
  std::size_t n_ = 0;
};

// The memory of one T, not an object: what recycling_allocator keeps.
template <class T>
struct deallocate_one {
  void operator()(T* p) const noexcept { std::allocator<T>{}.deallocate(p, 1); }
};

// The allocator of started collectives (std::allocate_shared): the memory of
// single objects through up to 8 spares per thread, anything else through
// std::allocator.
template <class T>
struct recycling_allocator {
  using value_type = T;
  using spares = thread_spares<T, 8, deallocate_one<T>>;
  recycling_allocator() = default;
  template <class U>
  recycling_allocator(const recycling_allocator<U>&) noexcept {}
  T* allocate(std::size_t n) {
    if (n == 1)
      if (T* p = spares::take()) return p;
    return std::allocator<T>{}.allocate(n);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n != 1 || !spares::give(p)) std::allocator<T>{}.deallocate(p, n);
  }
  template <class U>
  bool operator==(const recycling_allocator<U>&) const noexcept {
    return true;
  }
};

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail
