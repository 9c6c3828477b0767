// Must not compile: the mistakes users make calling a collective, one per
// build, chosen by -DCASE_<collective>_<mistake> (test/CMakeLists.txt). Each
// must be answered by the readable static_assert in
// collectives/diagnostics.hpp among the compiler's first lines
// (expect_error.cmake checks where and what).
//   wrong_op          an operator that does not reduce two T into a T
//   const_out         the written buffer passed as std::span<const T> or const
//   no_topology       the topology template argument forgotten
// The light header and a do-nothing transport: a third less to parse than
// <topocoll/topocoll.hpp>, and diagnostics.hpp comes with collectives.hpp.
#include <topocoll/collectives.hpp>

#include <cstddef>
#include <string>
#include <vector>

#include "../support/silent_transport.hpp"

namespace tc = topocoll;

// Combines strings, not the ints the buffers hold.
struct concat {
  std::string operator()(const std::string& a, const std::string& b) const { return a + b; }
};

void misuse(tc_test::silent_transport& c, std::span<const int> in, std::span<int> out,
            std::span<const int> const_out, const std::vector<int>& const_vector,
            std::span<const std::size_t> counts) {
  (void)in, (void)out, (void)const_out, (void)const_vector, (void)counts;
#if defined(CASE_broadcast_const_out)
  tc::broadcast<tc::Ring>(c, const_out, 0);
#elif defined(CASE_broadcast_no_topology)
  tc::broadcast(c, out, 0);
#elif defined(CASE_reduce_wrong_op)
  tc::reduce<tc::Ring>(c, in, out, concat{}, 0);
#elif defined(CASE_reduce_const_out)
  tc::reduce<tc::Ring>(c, in, const_vector, std::plus<>{}, 0);
#elif defined(CASE_reduce_no_topology)
  tc::reduce(c, in, out, std::plus<>{}, 0);
#elif defined(CASE_all_reduce_wrong_op)
  tc::all_reduce<tc::Ring>(c, in, out, concat{});
#elif defined(CASE_all_reduce_const_out)
  tc::all_reduce<tc::Ring>(c, in, const_out, std::plus<>{});
#elif defined(CASE_all_reduce_no_topology)
  tc::all_reduce(c, in, out, std::plus<>{});
#elif defined(CASE_all_gather_const_out)
  tc::all_gather<tc::Ring>(c, in, const_out);
#elif defined(CASE_all_gather_no_topology)
  tc::all_gather(c, in, out);
#elif defined(CASE_reduce_scatter_wrong_op)
  tc::reduce_scatter<tc::Ring>(c, in, out, concat{});
#elif defined(CASE_reduce_scatter_const_out)
  tc::reduce_scatter<tc::Ring>(c, in, const_vector, std::plus<>{});
#elif defined(CASE_reduce_scatter_no_topology)
  tc::reduce_scatter(c, in, out, std::plus<>{});
#elif defined(CASE_scan_wrong_op)
  tc::scan<tc::Ring>(c, in, out, concat{});
#elif defined(CASE_scan_const_out)
  tc::scan<tc::Ring>(c, in, const_out, std::plus<>{});
#elif defined(CASE_scan_no_topology)
  tc::scan(c, in, out, std::plus<>{});
#elif defined(CASE_exclusive_scan_wrong_op)
  tc::exclusive_scan<tc::Ring>(c, in, out, concat{});
#elif defined(CASE_exclusive_scan_const_out)
  tc::exclusive_scan<tc::Ring>(c, in, const_out, std::plus<>{});
#elif defined(CASE_exclusive_scan_no_topology)
  tc::exclusive_scan(c, in, out, std::plus<>{});
#elif defined(CASE_scatter_const_out)
  tc::scatter<tc::Ring>(c, in, const_out, 0);
#elif defined(CASE_scatter_no_topology)
  tc::scatter(c, in, out, 0);
#elif defined(CASE_gather_const_out)
  tc::gather<tc::Ring>(c, in, const_vector, 0);
#elif defined(CASE_gather_no_topology)
  tc::gather(c, in, out, 0);
#elif defined(CASE_all_to_all_const_out)
  tc::all_to_all<tc::Ring>(c, in, const_out);
#elif defined(CASE_all_to_all_no_topology)
  tc::all_to_all(c, in, out);
#elif defined(CASE_all_to_all_v_const_out)
  tc::all_to_all_v<tc::Ring>(c, in, counts, const_out, counts);
#elif defined(CASE_all_to_all_v_no_topology)
  (void)tc::all_to_all_v(c, in, counts);
#else
#error "misuse.cpp: define one CASE_<collective>_<mistake> (test/CMakeLists.txt lists them)"
#endif
}
