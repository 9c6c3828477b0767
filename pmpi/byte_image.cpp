#include "byte_image.hpp"

#include <algorithm>
#include <array>
#include <climits>

namespace topocoll::pmpi {

namespace {

// The predefined datatypes this thread has found contiguous, with their
// sizes. A predefined handle means the same type until MPI_Finalize, so a
// call on one again needs none of MPI's type queries. A program uses a few;
// past eight, the others are queried at every call.
struct named_type {
  MPI_Datatype dt;
  std::size_t size;
};
thread_local std::array<named_type, 8> named_types{};
thread_local std::size_t named_count = 0;

const named_type* known_named(MPI_Datatype dt) {
  for (std::size_t i = 0; i < named_count; ++i)
    if (named_types[i].dt == dt) return &named_types[i];
  return nullptr;
}

// Whether packing one item of dt gives its bytes unchanged. No gap and
// extent == size still allow a typemap out of memory order (indexed with
// displacements {1, 0}), whose packed bytes, the type signature's order, are
// what travels under native MPI. Each byte of a probe item is labelled by its
// offset, one base-256 digit per pass, so a byte that packs to another place
// shows in some pass. Types too large to probe cheaply are packed anyway
// (always right, only slower).
bool packs_in_place(MPI_Datatype dt, std::size_t size) {
  constexpr std::size_t probe_limit = std::size_t{1} << 20;
  if (size > probe_limit) return false;
  std::vector<unsigned char> item(size), packed(size);
  for (std::size_t digit = 1; digit == 1 || digit < size; digit *= 256) {
    for (std::size_t i = 0; i < size; ++i) item[i] = static_cast<unsigned char>(i / digit);
    int pos = 0;
    PMPI_Pack(item.data(), 1, dt, packed.data(), static_cast<int>(size), &pos, MPI_COMM_SELF);
    if (static_cast<std::size_t>(pos) != size || packed != item) return false;
  }
  return true;
}

// A predefined type, or a duplicate or contiguous run of one in memory order:
// its bytes are in order without a probe.
bool in_memory_order(MPI_Datatype dt, std::size_t size) {
  int ints = 0, addresses = 0, types = 0, combiner = 0;
  PMPI_Type_get_envelope(dt, &ints, &addresses, &types, &combiner);
  if (combiner == MPI_COMBINER_NAMED) {
    if (named_count < named_types.size()) named_types[named_count++] = {dt, size};
    return true;
  }
  if ((combiner != MPI_COMBINER_DUP && combiner != MPI_COMBINER_CONTIGUOUS) || types != 1)
    return packs_in_place(dt, size);
  std::vector<int> iv(static_cast<std::size_t>(ints));
  std::vector<MPI_Aint> av(static_cast<std::size_t>(addresses));
  MPI_Datatype old = MPI_DATATYPE_NULL;
  PMPI_Type_get_contents(dt, ints, addresses, 1, iv.data(), av.data(), &old);
  const bool ordered = contiguous(old);
  PMPI_Type_get_envelope(old, &ints, &addresses, &types, &combiner);
  if (combiner != MPI_COMBINER_NAMED) PMPI_Type_free(&old);
  return ordered;
}

}  // namespace

bool contiguous(MPI_Datatype dt) {
  if (known_named(dt) != nullptr) return true;
  MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
  int size = 0;
  PMPI_Type_get_extent(dt, &lb, &extent);
  PMPI_Type_get_true_extent(dt, &tlb, &textent);
  PMPI_Type_size(dt, &size);
  return lb == 0 && tlb == 0 && extent == size && textent == size &&
         in_memory_order(dt, static_cast<std::size_t>(size));
}

std::size_t type_size(MPI_Datatype dt) {
  if (const named_type* t = known_named(dt)) return t->size;
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
