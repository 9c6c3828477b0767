#pragma once
// A flat byte encoding of a span of strings (any std::basic_string of a
// trivially copyable character):
//
//   [count][length_0]...[length_{count-1}][characters of 0][characters of 1]...
//
// count and lengths are std::uint64_t. Used by mpi::Comm to send strings
// without Boost.Serialization's archive, and by the one-to-all
// collectives to serialize a string message ONCE at the root and move bytes
// through the tree, instead of decoding and re-encoding it at every hop.

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>

#include "../version.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail {

template <class T>
struct is_flat_string : std::false_type {};
template <class C, class Tr, class A>
struct is_flat_string<std::basic_string<C, Tr, A>> : std::is_trivially_copyable<C> {};
template <class T>
inline constexpr bool is_flat_string_v = is_flat_string<T>::value;

// Bytes needed to encode s.
template <class S>
std::size_t flat_size(std::span<const S> s) {
  using C = typename S::value_type;
  std::size_t total = sizeof(std::uint64_t) * (1 + s.size());
  for (const S& x : s) total += x.size() * sizeof(C);
  return total;
}

// Encodes s into out, which holds flat_size(s) bytes.
template <class S>
void flat_encode(std::span<const S> s, void* out) {
  using C = typename S::value_type;
  auto* o = static_cast<unsigned char*>(out);
  const std::uint64_t n = s.size();
  std::memcpy(o, &n, sizeof n);
  o += sizeof n;
  for (const S& x : s) {
    const std::uint64_t len = x.size();
    std::memcpy(o, &len, sizeof len);
    o += sizeof len;
  }
  for (const S& x : s) {
    if (!x.empty()) std::memcpy(o, x.data(), x.size() * sizeof(C));
    o += x.size() * sizeof(C);
  }
}

// The element count an encoding announces (0 if it is too short to hold one).
inline std::uint64_t flat_count(const void* in, std::size_t size) {
  std::uint64_t n = 0;
  if (size >= sizeof n) std::memcpy(&n, in, sizeof n);
  return n;
}

// The length in bytes of the encoding that starts at in (of which avail bytes
// are readable), or 0 when those bytes cannot start a valid encoding.
template <class S>
std::size_t flat_extent(const void* in, std::size_t avail) {
  using C = typename S::value_type;
  const auto* b = static_cast<const unsigned char*>(in);
  const std::uint64_t n = flat_count(in, avail);
  if (avail < sizeof n || avail / sizeof n < 1 + n) return 0;
  std::size_t total = sizeof n * (1 + n);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t len;
    std::memcpy(&len, b + sizeof n * (1 + i), sizeof len);
    if (len > (avail - total) / sizeof(C)) return 0;
    total += static_cast<std::size_t>(len) * sizeof(C);
  }
  return total;
}

// Decodes size bytes into s, whose size must be flat_count(in, size). Returns
// false, leaving s unspecified but valid, when the bytes are not exactly one
// such encoding (the caller names the message and throws). One pass: each
// length is checked against the bytes left as it is used, and assign() reuses
// the capacity a string already has.
template <class S>
bool flat_decode(const void* in, std::size_t size, std::span<S> s) {
  using C = typename S::value_type;
  const auto* b = static_cast<const unsigned char*>(in);
  const std::uint64_t n = flat_count(in, size);
  if (size < sizeof n || size / sizeof n < 1 + n || n != s.size()) return false;
  const unsigned char* body = b + sizeof n * (1 + n);
  std::size_t left = size - sizeof n * (1 + n);
  for (std::size_t i = 0; i < n; ++i) {
    std::uint64_t len;
    std::memcpy(&len, b + sizeof n * (1 + i), sizeof len);
    if (len > left / sizeof(C)) return false;
    const auto bytes = static_cast<std::size_t>(len) * sizeof(C);
    if constexpr (alignof(C) == 1) {
      s[i].assign(reinterpret_cast<const C*>(body), static_cast<std::size_t>(len));
    } else {  // a wider character may sit unaligned in the byte stream
      s[i].resize(static_cast<std::size_t>(len));
      if (len) std::memcpy(s[i].data(), body, bytes);
    }
    body += bytes;
    left -= bytes;
  }
  return left == 0;
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail
