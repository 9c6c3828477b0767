#include "byte_image.hpp"

#include <algorithm>
#include <climits>

namespace topocoll::pmpi {

bool contiguous(MPI_Datatype dt) {
  MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
  int size = 0;
  PMPI_Type_get_extent(dt, &lb, &extent);
  PMPI_Type_get_true_extent(dt, &tlb, &textent);
  PMPI_Type_size(dt, &size);
  return lb == 0 && tlb == 0 && extent == size && textent == size;
}

std::size_t type_size(MPI_Datatype dt) {
  MPI_Count n = 0;
  PMPI_Type_size_x(dt, &n);
  return static_cast<std::size_t>(n);
}

byte_image::byte_image(const void* buf, std::size_t count, MPI_Datatype dt)
    : user_(static_cast<std::byte*>(const_cast<void*>(buf))), count_(count), dt_(dt) {
  item_ = type_size(dt);
  size_ = item_ * count;
  if (contiguous(dt)) {
    data_ = user_;
    return;
  }
  packed_ = true;
  copy_.resize(size_);
  data_ = copy_.data();
}

// PMPI_Pack and PMPI_Unpack count in int: runs of items of at most INT_MAX
// bytes, each into its own place of the copy.
void pack_items(const void* items, std::size_t n, MPI_Datatype dt, std::byte* to) {
  const std::size_t item = type_size(dt);
  if (item == 0) return;
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(dt, &lb, &extent);
  const auto* from = static_cast<const std::byte*>(items);
  const std::size_t run = std::max<std::size_t>(1, INT_MAX / item);
  for (std::size_t i = 0; i < n; i += run) {
    const std::size_t k = std::min(run, n - i);
    int pos = 0;
    PMPI_Pack(from + static_cast<std::ptrdiff_t>(i) * extent, static_cast<int>(k), dt,
              to + i * item, static_cast<int>(k * item), &pos, MPI_COMM_SELF);
  }
}

void unpack_items(const std::byte* from, std::size_t n, MPI_Datatype dt, void* items) {
  const std::size_t item = type_size(dt);
  if (item == 0) return;
  MPI_Aint lb = 0, extent = 0;
  PMPI_Type_get_extent(dt, &lb, &extent);
  auto* to = static_cast<std::byte*>(items);
  const std::size_t run = std::max<std::size_t>(1, INT_MAX / item);
  for (std::size_t i = 0; i < n; i += run) {
    const std::size_t k = std::min(run, n - i);
    int pos = 0;
    PMPI_Unpack(from + i * item, static_cast<int>(k * item), &pos,
                to + static_cast<std::ptrdiff_t>(i) * extent, static_cast<int>(k), dt,
                MPI_COMM_SELF);
  }
}

void byte_image::load() {
  if (packed_) pack_items(user_, count_, dt_, data_);
}

void byte_image::store() {
  if (packed_) unpack_items(data_, count_, dt_, user_);
}

}  // namespace topocoll::pmpi
