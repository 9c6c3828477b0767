#pragma once
// Fresh memory for large buffers in 2 MiB pages, where the kernel allows it.
//
// A buffer the library allocates and then fills for the first time (the
// result of all_to_all_v, a work buffer the pool grows) costs a page fault
// per 4 KiB page on first touch. glibc serves blocks of 32 MiB and more by a
// fresh mapping every time, so a call that returns such a vector pays every
// fault every call, which on a VM can cost more than the data movement. Asking for transparent huge
// pages before the first touch (madvise MADV_HUGEPAGE, honoured when
// /sys/kernel/mm/transparent_hugepage/enabled is "always" or "madvise") makes
// it one fault per 2 MiB. Elsewhere it does nothing.

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>

#include "../version.hpp"
#endif

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail {

inline constexpr std::size_t huge_page_bytes = std::size_t{2} << 20;

// Advises the whole 2 MiB pages inside [p, p + bytes); the rest keeps its
// pages. Nothing is touched, and a refusal by the kernel changes nothing.
inline void advise_huge_pages(void* p, std::size_t bytes) noexcept {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  constexpr std::uintptr_t mask = huge_page_bytes - 1;
  const std::uintptr_t begin = (reinterpret_cast<std::uintptr_t>(p) + mask) & ~mask;
  const std::uintptr_t end = (reinterpret_cast<std::uintptr_t>(p) + bytes) & ~mask;
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)p;
  (void)bytes;
#endif
}

// Buffers from two huge pages up are advised: below that, no whole huge page
// need fit inside.
constexpr bool wants_huge_pages(std::size_t bytes) {
  return bytes >= 2 * huge_page_bytes;
}

// v.resize(n), with the new storage advised before its first touch when v must
// grow into a large block of trivially copyable elements.
template <class T, class A>
void resize_fresh(std::vector<T, A>& v, std::size_t n) {
  if constexpr (std::is_trivially_copyable_v<T>) {
    if (n > v.capacity() && wants_huge_pages(n * sizeof(T))) {
      v.reserve(n);
      advise_huge_pages(v.data(), n * sizeof(T));
    }
  }
  v.resize(n);
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail
