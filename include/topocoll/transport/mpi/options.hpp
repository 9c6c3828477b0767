#pragma once
// The MPI transport's options, as the environment amends them
// (TOPOCOLL_TIMEOUT, TOPOCOLL_CHECK, TOPOCOLL_SMALL_MESSAGE_BYTES take
// precedence over the values a program gives; doc/transports.md).

#include <chrono>
#include <climits>
#include <cmath>
#include <cstddef>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "../../core/agreement.hpp"
#include "../../core/errors.hpp"
#include "../../version.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::mpi {

struct options {
  // The largest byte count handed to MPI as one int. A larger message is sent
  // as a single message of a derived datatype (blocks of this many bytes plus
  // a remainder). Tests lower it to exercise that path with small messages.
  std::size_t max_int_bytes = static_cast<std::size_t>(INT_MAX);
  // How long one blocking receive or wait may take before it throws
  // topocoll::timeout_error. Zero: no limit (the untimed calls).
  // TOPOCOLL_TIMEOUT=<seconds> takes precedence.
  std::chrono::duration<double> timeout{0};
  // Whether every collective first checks that all ranks agree on it
  // (core/agreement.hpp). TOPOCOLL_CHECK=0 or 1 takes precedence.
  using agreement = topocoll::agreement;
  agreement check = agreement::by_build;  // on without NDEBUG
  // A receive of 0 to this many bytes does not probe (small_messages.hpp);
  // 0: every receive probes. Every rank must give the same value. The
  // default keeps a marker (this many bytes + 1) within MPI's eager limit on
  // shared memory, and a copy out of the bounce buffer costs no more than the
  // probe it saves (doc/transports.md).
  // TOPOCOLL_SMALL_MESSAGE_BYTES=<bytes> takes precedence.
  std::size_t small_message_bytes = 4000;
  static constexpr std::size_t max_small_message_bytes = 65536;
};

namespace detail {

using topocoll::detail::concat;

// opt as the environment amends it: TOPOCOLL_TIMEOUT=<seconds> (0: no
// timeout) and TOPOCOLL_CHECK=0|1, when set, take precedence.
inline options from_environment(options opt) {
  if (const char* v = std::getenv("TOPOCOLL_TIMEOUT"); v && *v) {
    char* end = nullptr;
    const double s = std::strtod(v, &end);
    if (*end != '\0' || !std::isfinite(s) || s < 0)
      throw std::invalid_argument(concat("topocoll::mpi::Comm: TOPOCOLL_TIMEOUT=", v,
                                         " is not a number of seconds >= 0 (0: no timeout)"));
    opt.timeout = std::chrono::duration<double>(s);
  }
  if (const char* v = std::getenv("TOPOCOLL_CHECK"); v && *v) {
    const std::string_view c(v);
    if (c != "0" && c != "1")
      throw std::invalid_argument(
          concat("topocoll::mpi::Comm: TOPOCOLL_CHECK=", v, " is neither 0 (off) nor 1 (on)"));
    opt.check = c == "1" ? options::agreement::on : options::agreement::off;
  }
  if (const char* v = std::getenv("TOPOCOLL_SMALL_MESSAGE_BYTES"); v && *v) {
    char* end = nullptr;
    const unsigned long long b = std::strtoull(v, &end, 10);
    if (*end != '\0' || *v == '-' || b > options::max_small_message_bytes)
      throw std::invalid_argument(concat("topocoll::mpi::Comm: TOPOCOLL_SMALL_MESSAGE_BYTES=", v,
                                         " is not a byte count in [0, ",
                                         options::max_small_message_bytes, "] (0: off)"));
    opt.small_message_bytes = static_cast<std::size_t>(b);
  }
  return opt;
}

using topocoll::checking;

// Throws std::invalid_argument unless opt is in range.
inline void validate(const options& opt) {
  if (opt.max_int_bytes == 0 || opt.max_int_bytes > static_cast<std::size_t>(INT_MAX))
    throw std::invalid_argument(topocoll::detail::concat(
        "topocoll::mpi::Comm: options::max_int_bytes = ", opt.max_int_bytes,
        ", need 1 <= max_int_bytes <= INT_MAX"));
  if (opt.small_message_bytes > options::max_small_message_bytes)
    throw std::invalid_argument(topocoll::detail::concat(
        "topocoll::mpi::Comm: options::small_message_bytes = ", opt.small_message_bytes,
        ", need <= ", options::max_small_message_bytes, " (0: off)"));
  if (!(opt.timeout.count() >= 0))
    throw std::invalid_argument(
        topocoll::detail::concat("topocoll::mpi::Comm: options::timeout = ", opt.timeout.count(),
                                 " s, need >= 0 (0: no timeout)"));
}

}  // namespace detail

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::mpi
