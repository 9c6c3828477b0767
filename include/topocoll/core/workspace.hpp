#pragma once
// Work buffers for the algorithms, without an allocation, a page fault or a
// zero-fill per call.
//
//   detail::scratch<T> w(n);     // w.span(): n elements, contents unspecified
//
// For a trivially copyable T, up to scratch_inline_bytes live in the scratch
// object itself, on the caller's stack: a small collective's work space then
// costs neither the pool's bookkeeping nor a thread_local lookup. Larger ones
// come from a pool owned by the calling thread (an MPI process, or one
// loopback rank): blocks that keep their capacity from one collective to the
// next: faulting in fresh pages for a large collective's work space costs as
// much as the collective itself, and zeroing them another pass over memory. A
// large block is faulted in 2 MiB pages where the kernel allows it
// (core/pages.hpp), which makes even its first call cheaper. The elements are
// NOT initialised: every algorithm writes a work buffer before it reads it.
// (Tests build with TOPOCOLL_POISON_SCRATCH, which fills every buffer with 0xA5
// bytes, so that an algorithm that reads what it did not write gets a wrong
// answer, not the zero it happened to find.)
//
// Other types get a std::vector<T>(n): their elements must be constructed. An
// inert type (core/inert.hpp) gets T::topocoll_reserve(n), never touched.
//
// Blocks larger than workspace_retain_bytes are returned to the system when
// released; topocoll::release_workspace() frees the calling thread's pool.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <type_traits>
#include <vector>

#include "../version.hpp"
#include "inert.hpp"
#include "pages.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {

// A block of at most this many bytes is kept for the next collective.
inline constexpr std::size_t workspace_retain_bytes = std::size_t{256} << 20;

namespace detail {

class workspace_pool {
 public:
  static workspace_pool& local() {
    thread_local workspace_pool pool;
    return pool;
  }

  // A free block with room for n bytes: the first free one that is large
  // enough, else the first free one, grown (its old contents are not kept).
  // Returns the block's index, for release(). Inline where that is the
  // first block, as it is for a collective's one work buffer after its first
  // call; the search out of line.
  std::size_t acquire(std::size_t n, std::byte*& data) {
    if (!blocks_.empty() && !blocks_.front().in_use && blocks_.front().capacity >= n) [[likely]] {
      blocks_.front().in_use = true;
      data = blocks_.front().data.get();
#ifdef TOPOCOLL_POISON_SCRATCH
      if (n) std::memset(data, 0xA5, n);
#endif
      return 0;
    }
    return search(n, data);
  }

  void release(std::size_t i) noexcept {
    block& b = blocks_[i];
    b.in_use = false;
    if (b.capacity > workspace_retain_bytes) [[unlikely]] {
      b.data.reset();
      b.capacity = 0;
    }
  }

  // Frees every block no scratch currently holds.
  void trim() noexcept {
    for (block& b : blocks_)
      if (!b.in_use) {
        b.data.reset();
        b.capacity = 0;
      }
  }

 private:
  [[gnu::noinline]] std::size_t search(std::size_t n, std::byte*& data) {
    std::size_t pick = blocks_.size();
    for (std::size_t i = 0; i < blocks_.size(); ++i) {
      if (blocks_[i].in_use) continue;
      if (blocks_[i].capacity >= n) {
        pick = i;
        break;
      }
      if (pick == blocks_.size()) pick = i;
    }
    if (pick == blocks_.size()) blocks_.emplace_back();
    block& b = blocks_[pick];
    if (b.capacity < n) {
      b.data.reset();
      b.capacity = 0;
      b.data.reset(static_cast<std::byte*>(::operator new (n, std::align_val_t{64})));
      b.capacity = n;
      if (wants_huge_pages(n)) advise_huge_pages(b.data.get(), n);
    }
    b.in_use = true;
#ifdef TOPOCOLL_POISON_SCRATCH
    if (n) std::memset(b.data.get(), 0xA5, n);
#endif
    data = b.data.get();
    return pick;
  }

  struct aligned_delete {
    void operator()(std::byte* p) const noexcept { ::operator delete (p, std::align_val_t{64}); }
  };
  struct block {
    std::unique_ptr<std::byte, aligned_delete> data;
    std::size_t capacity = 0;
    bool in_use = false;
  };
  std::vector<block> blocks_;
};

// n bytes at p, filled with 0xA5 where the tests ask for it (see above).
inline std::byte* poisoned(std::byte* p, [[maybe_unused]] std::size_t n) {
#ifdef TOPOCOLL_POISON_SCRATCH
  std::memset(p, 0xA5, n);
#endif
  return p;
}

// A pool block of n bytes for a scratch (its index in slot), and its return:
// out of line, so that a scratch small enough for its own buffer inlines to
// a few instructions.
[[gnu::noinline]] inline std::byte* from_pool(std::size_t n, std::size_t& slot) {
  std::byte* d = nullptr;
  slot = workspace_pool::local().acquire(n, d);
  return d;
}
[[gnu::noinline]] inline void back_to_pool(std::size_t slot) noexcept {
  workspace_pool::local().release(slot);
}

template <class T>
inline constexpr bool pooled_scratch =
    std::is_trivially_copyable_v<T>&& std::is_trivially_destructible_v<T> && alignof(T) <= 64;

// The work space a scratch holds in itself, for element types no more
// aligned than this buffer.
inline constexpr std::size_t scratch_inline_bytes = 256;
inline constexpr std::size_t scratch_inline_align = alignof(std::max_align_t);
template <class T>
inline constexpr bool inline_scratch = pooled_scratch<T> && alignof(T) <= scratch_inline_align;

// The buffer itself: empty where T never uses it.
template <bool Used>
struct inline_space {
  alignas(scratch_inline_align) std::byte bytes[scratch_inline_bytes];
};
template <>
struct inline_space<false> {};

// n elements of work space; see the top of this file. Scoped; any number may
// be alive at once, created and destroyed in any order (on one thread).
template <class T>
class scratch {
 public:
  explicit scratch(std::size_t n) : n_(n) {
    if constexpr (inert_element<T>) {
      data_ = T::topocoll_reserve(n);
    } else if constexpr (pooled_scratch<T>) {
      if (n == 0) return;  // nothing to hold: the pool is not touched
      if constexpr (inline_scratch<T>) {
        if (n <= scratch_inline_bytes / sizeof(T)) {
          data_ = reinterpret_cast<T*>(poisoned(local_.bytes, n * sizeof(T)));
          return;
        }
      }
      data_ = reinterpret_cast<T*>(from_pool(n * sizeof(T), slot_));
    } else {
      store_.resize(n);
      data_ = store_.data();
    }
  }
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;
  ~scratch() {
    if constexpr (pooled_scratch<T> && !inert_element<T>)
      if (slot_ != no_slot) back_to_pool(slot_);
  }

  std::span<T> span() const { return {data_, n_}; }
  T* data() const { return data_; }
  std::size_t size() const { return n_; }

 private:
  struct none {};
  std::size_t n_;
  T* data_ = nullptr;
  static constexpr std::size_t no_slot = SIZE_MAX;
  std::size_t slot_ = no_slot;
  [[no_unique_address]] std::conditional_t<pooled_scratch<T> || inert_element<T>, none,
                                           std::vector<T>>
      store_;
  [[no_unique_address]] inline_space<inline_scratch<T> && !inert_element<T>> local_;
};

}  // namespace detail

// Frees the work buffers the calling thread keeps between collectives.
inline void release_workspace() noexcept {
  detail::workspace_pool::local().trim();
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
