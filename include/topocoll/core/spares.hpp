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

// Up to N objects of one kind per thread; Free disposes of one. The list is
// constant-initialized and trivially destroyed, so reaching it tests no guard
// of first use; the thread's first give() makes its owner, a thread_local
// that frees what the list holds at thread exit. After that, give() refuses
// and the caller frees the object itself. An object given on another thread
// than it came from stays with that thread.
template <class T, std::size_t N, class Free = std::default_delete<T>>
class thread_spares {
 public:
  static T* take() noexcept {
    list& l = list_;
    return l.n == 0 ? nullptr : l.items[--l.n];
  }
  // Whether p was kept; if not, it is still the caller's.
  static bool give(T* p) noexcept {
    list& l = list_;
    if (l.n == N || l.gone) return false;
    if (!l.owned) [[unlikely]]
      own();
    l.items[l.n++] = p;
    return true;
  }

 private:
  struct list {
    std::array<T*, N> items{};
    std::size_t n = 0;
    bool owned = false;  // the thread's owner is made
    bool gone = false;   // and has freed the list: the thread is ending
  };
  struct owner {
    ~owner() {
      list& l = list_;
      l.gone = true;
      for (std::size_t i = 0; i < l.n; ++i) Free{}(l.items[i]);
      l.n = 0;
    }
  };
  [[gnu::cold, gnu::noinline]] static void own() noexcept {
    thread_local owner o;
    static_cast<void>(o);
    list_.owned = true;
  }
  static inline thread_local constinit list list_{};
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
