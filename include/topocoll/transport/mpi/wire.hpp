#pragma once
// The MPI transport's wire format: what a span of T puts on the wire. A
// trivially copyable T goes as its raw bytes, in place; a std::basic_string
// of a trivially copyable character as its flat encoding
// (core/flat_string.hpp); any other T through a Boost.MPI packed archive,
// element count first. A message above options::max_int_bytes is one element
// of a contiguous derived datatype (doc/transports.md, "mpi: Boost.MPI").

#include <mpi.h>

#include <boost/core/demangle.hpp>
#include <boost/mpi/communicator.hpp>
#include <boost/mpi/packed_iarchive.hpp>
#include <boost/mpi/packed_oarchive.hpp>
#include <boost/serialization/string.hpp>

#include <climits>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <span>
#include <string>
#include <type_traits>
#include <typeinfo>

#include "../../core/errors.hpp"
#include "../../core/flat_string.hpp"
#include "../../version.hpp"
#include "errors.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::mpi::detail {

// A committed datatype covering n contiguous bytes, freed on scope exit (MPI
// lets pending operations that use it complete normally).
class byte_type {
 public:
  // For n <= max: MPI_BYTE, count n. Otherwise one element of a derived type.
  byte_type(std::size_t n, std::size_t max) {
    if (n <= max) [[likely]]
      count_ = static_cast<int>(n);
    else
      derive(n, max);
  }
  byte_type(const byte_type&) = delete;
  byte_type& operator=(const byte_type&) = delete;
  ~byte_type() {
    if (owned_) MPI_Type_free(&type_);
  }
  MPI_Datatype type() const { return type_; }
  int count() const { return count_; }

 private:
  // One element of a derived type of n bytes, built from blocks of at most max.
  [[gnu::noinline]] void derive(std::size_t n, std::size_t max) {
    // block * q + rem = n with q <= INT_MAX
    std::size_t block = max;
    const auto int_max = static_cast<std::size_t>(INT_MAX);
    if (n / block > int_max) block = n / int_max + 1;
    const std::size_t q = n / block, rem = n % block;
    MPI_Datatype blk, body;
    check(MPI_Type_contiguous(static_cast<int>(block), MPI_BYTE, &blk), "MPI_Type_contiguous");
    check(MPI_Type_contiguous(static_cast<int>(q), blk, &body), "MPI_Type_contiguous");
    MPI_Type_free(&blk);
    if (rem == 0) {
      type_ = body;
    } else {
      int lens[2] = {1, static_cast<int>(rem)};
      MPI_Aint disp[2] = {0, static_cast<MPI_Aint>(q * block)};
      MPI_Datatype types[2] = {body, MPI_BYTE};
      const int rc = MPI_Type_create_struct(2, lens, disp, types, &type_);
      MPI_Type_free(&body);
      check(rc, "MPI_Type_create_struct");
    }
    owned_ = true;
    count_ = 1;
    check(MPI_Type_commit(&type_), "MPI_Type_commit");
  }
  void check(int rc, const char* call) {
    if (rc == MPI_SUCCESS) return;
    if (owned_) MPI_Type_free(&type_);
    throw error(concat("topocoll::mpi: ", call, " failed: ", error_string(rc)), rc);
  }
  MPI_Datatype type_ = MPI_BYTE;
  int count_ = 0;
  bool owned_ = false;
};

using packed_buffer = boost::mpi::packed_oarchive::buffer_type;

// std::basic_string of a trivially copyable character type: serialized by
// hand (core/flat_string.hpp), faster than the archive's element-by-element
// path (doc/transports.md).
using topocoll::detail::is_flat_string;

// A message's bytes on the wire (see wire()).
struct bytes {
  const void* data;
  std::size_t size;
};

// Serializes data into buf; returns the message's size in bytes.
template <class T>
std::size_t pack(const boost::mpi::communicator& lib, std::span<const T> data, packed_buffer& buf) {
  const std::uint64_t n = data.size();
  if constexpr (is_flat_string<T>::value) {
    const std::size_t total = topocoll::detail::flat_size(data);
    if (buf.size() < total) buf.resize(total);  // grows only: no clearing per message
    topocoll::detail::flat_encode(data, buf.data());
    return total;
  } else {
    buf.clear();
    boost::mpi::packed_oarchive oa(lib, buf);
    oa << n;
    for (const T& x : data) oa << x;
    return buf.size();
  }
}

// What a message of `data` puts on the wire: data's own bytes when T is
// trivially copyable (no copy), otherwise data serialized into buf.
template <class T>
bytes wire(const boost::mpi::communicator& lib, std::span<const T> data, packed_buffer& buf) {
  if constexpr (std::is_trivially_copyable_v<T>) {
    return {data.data(), data.size_bytes()};
  } else {
    const std::size_t n = pack(lib, data, buf);  // may reallocate: take buf.data() after
    return {buf.data(), n};
  }
}

// Deserializes the rbuf.size() bytes of a message into data; rank of size
// received it from source with tag (named in a message_error).
template <class T>
void unpack(const boost::mpi::communicator& lib, packed_buffer& rbuf, std::span<T> data, int rank,
            int size, int source, int tag) {
  auto fail = [&](const std::string& what) {
    throw message_error(topocoll::detail::concat("topocoll::mpi recv on rank ", rank, " of ", size,
                                                 ": the message from rank ", source, " with tag ",
                                                 tag, " ", what));
  };
  auto count_differs = [&](std::uint64_t n) {
    fail(topocoll::detail::concat("has ", n, " elements of ",
                                  boost::core::demangle(typeid(T).name()),
                                  ", the receive buffer holds ", data.size()));
  };
  std::uint64_t n = 0;
  if (rbuf.size() < sizeof n) fail("is too short to hold an element count");
  if constexpr (is_flat_string<T>::value) {
    n = topocoll::detail::flat_count(rbuf.data(), rbuf.size());
    if (n != data.size()) count_differs(n);
    if (!topocoll::detail::flat_decode(rbuf.data(), rbuf.size(), data))
      fail(topocoll::detail::concat("is not ", n, " serialized strings (", rbuf.size(), " bytes)"));
  } else {
    try {
      boost::mpi::packed_iarchive ia(lib, rbuf);
      ia >> n;
      if (n != data.size()) count_differs(n);
      for (T& x : data) ia >> x;
    } catch (const message_error&) {
      throw;
    } catch (const std::exception& e) {
      fail(topocoll::detail::concat("could not be deserialized as ", data.size(), " elements of ",
                                    boost::core::demangle(typeid(T).name()), ": ", e.what()));
    }
  }
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::mpi::detail
