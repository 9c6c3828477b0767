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
#include <utility>
#include <vector>

namespace topocoll::pmpi {

// A duplicate of a datatype (PMPI_Type_dup), freed with its owner: what a
// nonblocking call unpacks with at completion, after the caller may have
// freed its own handle (MPI lets it).
class owned_type {
 public:
  owned_type() = default;
  explicit owned_type(MPI_Datatype dt) { PMPI_Type_dup(dt, &dt_); }
  owned_type(owned_type&& o) noexcept : dt_(std::exchange(o.dt_, MPI_DATATYPE_NULL)) {}
  owned_type& operator=(owned_type&& o) noexcept {
    std::swap(dt_, o.dt_);
    return *this;
  }
  ~owned_type() {
    if (dt_ != MPI_DATATYPE_NULL) PMPI_Type_free(&dt_);
  }
  MPI_Datatype get() const { return dt_; }

 private:
  MPI_Datatype dt_ = MPI_DATATYPE_NULL;
};

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
  // Frees what a packed image holds (its copy, its datatype); a direct one
  // holds nothing, and its views stay unread until it is assigned again.
  void release() {
    if (packed_) *this = byte_image{};
  }
  // From now on, a datatype of its own (a packed image's), which the
  // caller's MPI_Type_free leaves alone.
  void hold_type() {
    if (!packed_) return;
    held_ = owned_type(dt_);
    dt_ = held_.get();
  }

 private:
  std::byte* user_ = nullptr;
  std::size_t count_ = 0;
  MPI_Datatype dt_ = MPI_DATATYPE_NULL;
  owned_type held_;
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
