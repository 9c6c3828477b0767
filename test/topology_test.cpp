#define BOOST_TEST_MODULE topology
#include <boost/test/unit_test.hpp>

#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include <topocoll/topocoll.hpp>

#include "support/silent_transport.hpp"

using namespace topocoll;

BOOST_AUTO_TEST_CASE(mesh_sides_are_balanced_like_mpi_dims_create) {
  BOOST_TEST((Mesh<2>::sides(12) == std::array<int, 2>{4, 3}));
  BOOST_TEST((Mesh<2>::sides(16) == std::array<int, 2>{4, 4}));
  BOOST_TEST((Mesh<2>::sides(7) == std::array<int, 2>{7, 1}));
  BOOST_TEST((Mesh<3>::sides(8) == std::array<int, 3>{2, 2, 2}));
  BOOST_TEST((Mesh<3>::sides(12) == std::array<int, 3>{3, 2, 2}));
  BOOST_TEST((Mesh<2>::sides(36) == std::array<int, 2>{6, 6}));
}

BOOST_AUTO_TEST_CASE(shapes_have_the_seeds_dimensions) {
  auto h = Hypercube<3>::shape(8);
  BOOST_TEST(h.ndims == 3);
  BOOST_TEST(h.extent == 8);
  for (int j = 0; j < 3; ++j) {
    BOOST_TEST(h.dims[j].radix == 2);
    BOOST_TEST(h.dims[j].stride == (1 << j));
  }
  auto h6 = Hypercube<>::shape(6);
  BOOST_TEST(h6.ndims == 3);
  BOOST_TEST(h6.extent == 8);
  BOOST_TEST(!h6.exists(6));
  auto r = Ring::shape(5);
  BOOST_TEST(r.ndims == 1);
  BOOST_TEST(r.dims[0].radix == 5);
  BOOST_TEST(Ring::shape(1).ndims == 0);
  auto m = Mesh<2>::shape(12);  // 4 rows x 3 columns, row-major
  BOOST_TEST(m.ndims == 2);
  BOOST_TEST(m.dims[0].radix == 3);
  BOOST_TEST(m.dims[1].radix == 4);
  BOOST_TEST(m.dims[1].stride == 3);
  auto t = Tree<3>::shape(10);
  BOOST_TEST(t.ndims == 3);
  BOOST_TEST(t.extent == 18);  // 3 x 3 x 2: the last digit is 0 or 1
  BOOST_TEST(t.dims[2].radix == 2);
  // complete digit groups where p = r K^j with r <= K
  for (int p : {1, 2, 3, 4, 8, 12, 16, 32, 48, 64})
    BOOST_TEST(Tree<4>::shape(p).extent == p, "Tree<4> on " << p);
  BOOST_TEST(Tree<4>::shape(5).extent == 8);
  BOOST_TEST(Tree<4>::shape(17).extent == 32);
  BOOST_TEST(Tree<2>::shape(6).extent == 8);
  BOOST_TEST(Hypercube<0>::holds(1));
  BOOST_TEST(!Hypercube<3>::holds(6));
}

// Hypercube<D> writes its D dimensions out at compile time; they are the
// ones layout::uniform builds in a loop (Hypercube<> builds them so).
template <int... D>
void fixed_cubes_are_uniform(std::integer_sequence<int, D...>) {
  auto same = [](const layout& a, const layout& b) {
    if (a.p != b.p || a.extent != b.extent || a.ndims != b.ndims) return false;
    for (int j = 0; j < a.ndims; ++j)
      if (a.dims[j].radix != b.dims[j].radix || a.dims[j].stride != b.dims[j].stride) return false;
    return true;
  };
  const std::pair<int, bool> checks[] = {
      {D, same(Hypercube<D>::shape(1 << D), Hypercube<>::shape(1 << D))}...};
  for (const auto& [d, ok] : checks) BOOST_TEST(ok, "D = " << d);
}
BOOST_AUTO_TEST_CASE(fixed_hypercubes_have_the_uniform_dimensions) {
  fixed_cubes_are_uniform(std::make_integer_sequence<int, 21>{});
}

// The binary step's bit arithmetic says what the layout's mixed-radix
// arithmetic says on a hypercube, and its exchange pairs v with v XOR 2^j.
BOOST_AUTO_TEST_CASE(the_binary_step_is_the_layouts_arithmetic_on_bits) {
  using step = topocoll::detail::dim_step<topocoll::dim_kind::binary>;
  const auto l = Hypercube<>::shape(1 << 10);
  int wrong = 0;
  for (int v = 0; v < l.p; ++v)
    for (int j = 0; j < l.ndims; ++j) {
      const int k = step::coord(l, v, j);
      if (k != l.coord(v, j)) ++wrong;
      for (int c : {0, 1})
        if (step::with_coord(l, v, j, c) != l.with_coord(v, j, c)) ++wrong;
      const auto e = step::at(2, k, 0);
      if (e.to != 1 - k || e.from != 1 - k || e.send != k || e.recv != 1 - k) ++wrong;
      if (step::with_coord(l, v, j, e.to) != (v ^ (1 << j))) ++wrong;
    }
  BOOST_TEST(wrong == 0);
}

template <class Topo>
void relabel_is_a_bijection_with_root_at_zero(int p) {
  auto l = Topo::shape(p);
  for (int root = 0; root < p; ++root) {
    std::set<int> seen;
    BOOST_TEST(Topo::to_virtual(l, root, root) == 0);
    for (int r = 0; r < p; ++r) {
      int v = Topo::to_virtual(l, r, root);
      BOOST_TEST((v >= 0 && v < p));
      BOOST_TEST(Topo::to_real(l, v, root) == r);
      seen.insert(v);
    }
    BOOST_TEST(static_cast<int>(seen.size()) == p);
  }
}

BOOST_AUTO_TEST_CASE(relabelling_puts_any_root_at_virtual_zero) {
  for (int p : {1, 2, 3, 5, 6, 8, 12, 16, 17, 31}) {
    relabel_is_a_bijection_with_root_at_zero<Ring>(p);
    relabel_is_a_bijection_with_root_at_zero<Mesh<2>>(p);
    relabel_is_a_bijection_with_root_at_zero<Mesh<3>>(p);
    relabel_is_a_bijection_with_root_at_zero<Hypercube<>>(p);
    relabel_is_a_bijection_with_root_at_zero<Tree<3>>(p);
  }
  auto l = Hypercube<3>::shape(8);
  BOOST_TEST(Hypercube<3>::to_virtual(l, 5, 3) == (5 ^ 3));  // the seeds' XOR mapping
}

BOOST_AUTO_TEST_CASE(a_topology_that_cannot_hold_p_names_the_rule) {
  try {
    tc_test::silent_transport c{2, 6};  // must reject before it sends
    std::vector<int> buf(1);
    broadcast<Hypercube<3>>(c, buf, 0);
    BOOST_FAIL("no exception");
  } catch (const std::invalid_argument& e) {
    std::string w = e.what();
    BOOST_TEST(w.find("topocoll::broadcast on rank 2 of 6") != std::string::npos);
    BOOST_TEST(w.find("Hypercube<3> needs 2^3 = 8 ranks, got 6") != std::string::npos);
  }
}

BOOST_AUTO_TEST_CASE(commutativity_trait) {
  BOOST_TEST((is_commutative_v<std::plus<>, int>));
  BOOST_TEST((is_commutative_v<ops::min, double>));
  BOOST_TEST((is_commutative_v<std::bit_xor<>, unsigned>));
  BOOST_TEST(!(is_commutative_v<std::plus<>, std::string>));
  struct mine {
    int operator()(int a, int b) const { return a - b; }
  };
  BOOST_TEST(!(is_commutative_v<mine, int>));
}

static_assert(Transport<loopback::Comm>);
static_assert(Transport<model::Counting<loopback::Comm>>);
static_assert(Topology<Ring> && Topology<Mesh<3>> && Topology<Hypercube<4>> && Topology<Tree<5>>);

// The algorithm table (core/algorithm_table.hpp) against the topologies:
// what each need admits, and the rejection of a forced algorithm that does
// not apply, which names exactly the algorithms that do apply there.
BOOST_AUTO_TEST_CASE(the_algorithm_table_decides_where_an_algorithm_applies) {
  const algorithm_row& bcast = algorithms_of("broadcast");
  BOOST_TEST(detail::applies<Ring>(bcast, algorithm::pipelined, Ring::shape(5)));
  BOOST_TEST(detail::applies<Mesh<2>>(bcast, algorithm::pipelined, Mesh<2>::shape(6)));
  BOOST_TEST(!detail::applies<Hypercube<>>(bcast, algorithm::pipelined, Hypercube<>::shape(8)));
  BOOST_TEST(!detail::applies<Tree<2>>(bcast, algorithm::pipelined, Tree<2>::shape(8)));
  BOOST_TEST(!detail::applies<Ring>(bcast, algorithm::fold, Ring::shape(5)));  // not broadcast's
  const algorithm_row& ag = algorithms_of("all_gather");
  BOOST_TEST(detail::applies<Tree<3>>(ag, algorithm::fold, Tree<3>::shape(9)));
  BOOST_TEST(detail::applies<Tree<3>>(ag, algorithm::fold, Tree<3>::shape(6)));  // 2 * 3
  BOOST_TEST(!detail::applies<Tree<3>>(ag, algorithm::fold, Tree<3>::shape(7)));
  BOOST_TEST(detail::applies<Hypercube<>>(ag, algorithm::fold, Hypercube<>::shape(7)));
  BOOST_TEST(algorithms_of("no_such_collective").algorithms().empty());
  static_assert(table_need("all_reduce", algorithm::recursive_doubling) ==
                topology_need::complete_groups);
  static_assert(table_need("all_to_all", algorithm::bidirectional) == topology_need::linear_dims);

  auto rejection = []<class Topo>(Topo, const char* name, int p, algorithm a) -> std::string {
    const detail::call_args call(name, 0, p);
    try {
      detail::check_algorithm<Topo>(call, a);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "accepted";
  };
  BOOST_TEST(rejection(Hypercube<>{}, "reduce", 4, algorithm::recursive_doubling) ==
             "topocoll::reduce on rank 0 of 4: algorithm::recursive_doubling does not apply to "
             "reduce on Hypercube<> (use algorithm::automatic, algorithm::tree, "
             "algorithm::reduce_scatter_gather, algorithm::naive)");
  BOOST_TEST(rejection(Hypercube<>{}, "scatter", 4, algorithm::pipelined) ==
             "topocoll::scatter on rank 0 of 4: algorithm::pipelined needs the Ring or a Mesh<K> "
             "(a topology of linear dimensions), got Hypercube<> (use algorithm::automatic, "
             "algorithm::tree)");
  BOOST_TEST(rejection(Tree<4>{}, "all_reduce", 5, algorithm::reduce_scatter_all_gather) ==
             "topocoll::all_reduce on rank 0 of 5: algorithm::reduce_scatter_all_gather on "
             "Tree<4> needs complete digit groups, p = r K^j with r <= K, got p = 5 (use "
             "algorithm::automatic, algorithm::reduce_broadcast, algorithm::tree)");
  BOOST_TEST(rejection(Ring{}, "scatter", 4, algorithm::pipelined) == "accepted");
  BOOST_TEST(rejection(Tree<4>{}, "all_reduce", 16, algorithm::recursive_doubling) == "accepted");
  BOOST_TEST(rejection(Ring{}, "all_reduce", 4, algorithm::automatic) == "accepted");
}
