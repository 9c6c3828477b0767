#pragma once
// Work buffers for the algorithms, without an allocation, a page fault or a
// zero-fill per call.
//
//   detail::scratch<T> w(n);     // w.span(): n elements, contents unspecified
//
// For a trivially copyable T the storage comes from a pool owned by the
// calling thread (an MPI process, or one loopback rank): a stack of blocks
// that keep their capacity from one collective to the next. A reduce_scatter
// of 1 MiB blocks on 4 ranks needs 6 MiB of work space; fresh pages for it
// cost about 1 ms/MiB on a VM, as much as the collective itself, and zeroing
// them costs another pass over memory. The elements are NOT initialised: every
// algorithm writes a work buffer before it reads it. (Tests build with
// TOPOCOLL_POISON_SCRATCH, which fills every block with 0xA5 bytes, so that an
// algorithm that reads what it did not write gets a wrong answer, not the
// zero it happened to find.)
//
// Other types get a std::vector<T>(n): their elements must be constructed.
//
// Blocks larger than workspace_retain_bytes are returned to the system when
// released; topocoll::release_workspace() frees the calling thread's pool.

#include <cstddef>
#include <cstring>
#include <memory>
#include <new>
#include <span>
#include <type_traits>
#include <vector>

namespace topocoll {

// A block of at most this many bytes is kept for the next collective.
inline constexpr std::size_t workspace_retain_bytes = std::size_t{256} << 20;

namespace detail {

class workspace_pool {
 public:
  static workspace_pool& local() {
    thread_local workspace_pool pool;
    return pool;
  }

  // The next block of the stack, with room for n bytes.
  std::byte* acquire(std::size_t n) {
    if (depth_ == blocks_.size()) blocks_.emplace_back();
    block& b = blocks_[depth_++];
    if (b.capacity < n) {
      b.data.reset();
      b.capacity = 0;
      b.data.reset(static_cast<std::byte*>(::operator new (n, std::align_val_t{64})));
      b.capacity = n;
    }
#ifdef TOPOCOLL_POISON_SCRATCH
    if (n) std::memset(b.data.get(), 0xA5, n);
#endif
    return b.data.get();
  }

  void release() noexcept {
    block& b = blocks_[--depth_];
    if (b.capacity > workspace_retain_bytes) {
      b.data.reset();
      b.capacity = 0;
    }
  }

  // Frees every block no scratch currently holds.
  void trim() noexcept {
    blocks_.resize(depth_);
  }

 private:
  struct aligned_delete {
    void operator()(std::byte* p) const noexcept { ::operator delete (p, std::align_val_t{64}); }
  };
  struct block {
    std::unique_ptr<std::byte, aligned_delete> data;
    std::size_t capacity = 0;
  };
  std::vector<block> blocks_;
  std::size_t depth_ = 0;
};

template <class T>
inline constexpr bool pooled_scratch =
    std::is_trivially_copyable_v<T>&& std::is_trivially_destructible_v<T> && alignof(T) <= 64;

// n elements of work space; see the top of this file. Scoped: scratches are
// released in the reverse order of their creation.
template <class T>
class scratch {
 public:
  explicit scratch(std::size_t n) : n_(n) {
    if constexpr (pooled_scratch<T>) {
      data_ = reinterpret_cast<T*>(workspace_pool::local().acquire(n * sizeof(T)));
    } else {
      store_.resize(n);
      data_ = store_.data();
    }
  }
  scratch(const scratch&) = delete;
  scratch& operator=(const scratch&) = delete;
  ~scratch() {
    if constexpr (pooled_scratch<T>) workspace_pool::local().release();
  }

  std::span<T> span() const { return {data_, n_}; }
  T* data() const { return data_; }
  std::size_t size() const { return n_; }

 private:
  struct none {};
  std::size_t n_;
  T* data_ = nullptr;
  [[no_unique_address]] std::conditional_t<pooled_scratch<T>, none, std::vector<T>> store_;
};

}  // namespace detail

// Frees the work buffers the calling thread keeps between collectives.
inline void release_workspace() noexcept {
  detail::workspace_pool::local().trim();
}

}  // namespace topocoll
