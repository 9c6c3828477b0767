#pragma once
// A buffer of `count` items of an MPI datatype seen as contiguous bytes, for
// the collectives that only move data. A contiguous datatype (no gaps, lower
// bound 0) is the caller's memory itself; any other is packed into a copy
// (PMPI_Pack) and unpacked back (PMPI_Unpack). The choice is local to this
// rank and never a reason to fall back: MPI lets ranks pass different
// datatypes of one type signature, and both forms carry the same bytes.

#include <mpi.h>

#include <cstddef>
#include <span>
#include <vector>

namespace topocoll::pmpi {

class byte_image {
 public:
  byte_image() = default;
  // buf: the first item (MPI's buffer argument); count >= 0.
  byte_image(const void* buf, std::size_t count, MPI_Datatype dt);
  // Moves keep the copy's storage (and so data_) with it; no copies.
  byte_image(byte_image&&) noexcept = default;
  byte_image& operator=(byte_image&&) noexcept = default;
  byte_image(const byte_image&) = delete;
  byte_image& operator=(const byte_image&) = delete;

  std::span<std::byte> bytes() { return {data_, size_}; }
  std::span<const std::byte> cbytes() const { return {data_, size_}; }
  std::size_t size() const { return size_; }
  // The bytes of items [first, first + n): a view into bytes().
  std::span<std::byte> items(std::size_t first, std::size_t n) {
    return bytes().subspan(first * item_, n * item_);
  }
  std::size_t item_bytes() const { return item_; }
  bool direct() const { return !packed_; }

  // The caller's items into the copy (a no-op when direct).
  void load();
  // The copy back into the caller's items.
  void store();

 private:
  std::byte* user_ = nullptr;
  std::size_t count_ = 0;
  MPI_Datatype dt_ = MPI_DATATYPE_NULL;
  std::size_t item_ = 0;  // bytes per item (the type size)
  bool packed_ = false;
  std::vector<std::byte> copy_;
  std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

// n items of dt at `items` to / from n * type_size(dt) packed bytes.
void pack_items(const void* items, std::size_t n, MPI_Datatype dt, std::byte* to);
void unpack_items(const std::byte* from, std::size_t n, MPI_Datatype dt, void* items);

// Whether count items of dt lie back to back at buf with no gap.
bool contiguous(MPI_Datatype dt);

// The type size in bytes.
std::size_t type_size(MPI_Datatype dt);

}  // namespace topocoll::pmpi
