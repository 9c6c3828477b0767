#define BOOST_TEST_MODULE one_to_all
#include "support/harness.hpp"
#include "support/suite.hpp"

// broadcast, reduce, scatter, gather on every topology x transport, swept over
// p, roots, message sizes and element types (with non-commutative operators),
// plus the communication pattern (model::Counting), bad input, and a
// synchronous-send run that proves the send/recv order deadlock-free.

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

namespace {

using namespace topocoll;
using tc_test::Check;
using tc_test::Mat2;
using tc_test::Particle;

// Inputs and references of one element type at one m, computed once per p.
template <class T, class Op>
struct Ref {
  std::size_t m;
  std::vector<std::vector<T>> in;  // in[r]: rank r's block
  std::vector<T> all;              // in[0] ++ in[1] ++ ... : scatter's source, gather's result
  std::vector<T> total;            // in[0] op in[1] op ... op in[p-1], elementwise
};

template <class T, class Op>
struct Family {
  using type = T;
  using op_type = Op;
  const char* name;
  unsigned salt;
  std::vector<Ref<T, Op>> by_size;  // one per tc_test::sizes
};

template <class T, class Op>
Family<T, Op> family(const char* name, unsigned salt, int p) {
  Family<T, Op> f{name, salt, {}};
  for (std::size_t m : tc_test::sizes) {
    Ref<T, Op> r{m, {}, {}, tc_test::fold<T>(0, p - 1, m, Op{}, salt)};
    for (int q = 0; q < p; ++q) {
      r.in.push_back(tc_test::input<T>(q, m, salt));
      r.all.insert(r.all.end(), r.in.back().begin(), r.in.back().end());
    }
    f.by_size.push_back(std::move(r));
  }
  return f;
}

// The four element types, each with an associative operator; only int + plus
// is commutative. ThreadSanitizer takes int and string only: the transport
// moves every trivially copyable type as the same raw bytes, so Mat2 and
// Particle add no way for the rank threads to meet.
auto families(int p) {
  auto raw_and_moved = std::make_tuple(family<int, std::plus<>>("int", 1, p),
                                       family<std::string, tc_test::concat>("string", 4, p));
  if constexpr (tc_test::thread_sanitized)
    return raw_and_moved;
  else
    return std::tuple_cat(
        std::move(raw_and_moved),
        std::make_tuple(family<Mat2, tc_test::mat_mul>("Mat2", 2, p),
                        family<Particle, tc_test::particle_op>("Particle", 3, p)));
}

template <class Tuple, class F>
void for_each_family(const Tuple& t, F&& f) {
  std::apply([&](const auto&... fam) { (f(fam), ...); }, t);
}

// The tree algorithm everywhere; on a topology of linear dimensions (Ring,
// Mesh<K>) also the pipelined one, with a cost model that cuts broadcast and
// reduce messages into several segments.
template <class Topo>
std::vector<options> one_to_all_options() {
  if constexpr (detail::chain_dims<Topo>)
    return {options{algorithm::automatic}, options{algorithm::pipelined, cost_model{1.0, 0.01}}};
  else
    return {options{algorithm::automatic}};
}

// ... and for broadcast and reduce, in pieces (`pieces`: scatter_all_gather,
// reduce_scatter_gather): with tc_test::sizes that is m = 0, m < p and m that
// p does not divide, non-commutative operators on Mat2, Particle and string;
// and naive, the seeds' baseline, on every topology.
template <class Topo>
std::vector<options> with_pieces(algorithm pieces) {
  std::vector<options> v = one_to_all_options<Topo>();
  v.push_back(options{pieces});
  v.push_back(options{algorithm::naive});
  return v;
}

// The tree with a reduction's partials in segments: in_segments(opt, m, sizeof(T))
// cuts a partial of m elements into 3 or 4, the last one shorter.
options tree_in_segments() {
  options opt{algorithm::tree};
  opt.cost.segment_bytes = 1;
  return opt;
}
void in_segments(options& opt, std::size_t m, std::size_t elem_bytes) {
  if (opt.cost.segment_bytes != 0)
    opt.cost.segment_bytes = std::max<std::size_t>(3 * elem_bytes, m * elem_bytes / 3);
}

}  // namespace

TOPOCOLL_TEST_SUITE(broadcast)
BOOST_AUTO_TEST_CASE_TEMPLATE(broadcast_gives_every_rank_the_roots_buffer, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    const auto data = families(p);
    on_ranks([&](auto& comm, Check& check) {
      const int r = comm.rank();
      for (const options& opt : with_pieces<Topo>(algorithm::scatter_all_gather))
        for (int root : tc_test::roots_for(p))
          for_each_family(data, [&](const auto& fam) {
            using T = typename std::remove_cvref_t<decltype(fam)>::type;
            for (const auto& ref : fam.by_size) {
              std::vector<T> buf = r == root ? ref.in[root] : std::vector<T>(ref.m);
              broadcast<Topo>(comm, std::span<T>(buf), root, opt);
              check.equal(buf, ref.in[root], Topo::name(), " broadcast<", fam.name, "> (",
                          to_string(opt.algo), ") rank ", r, " root ", root, " m ", ref.m);
            }
          });
    });
  });
}
BOOST_AUTO_TEST_SUITE_END()

TOPOCOLL_TEST_SUITE(reduce)
BOOST_AUTO_TEST_CASE_TEMPLATE(reduce_keeps_rank_order_at_the_root, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    const auto data = families(p);
    on_ranks([&](auto& comm, Check& check) {
      const int r = comm.rank();
      std::vector<options> opts = with_pieces<Topo>(algorithm::reduce_scatter_gather);
      opts.push_back(tree_in_segments());
      for (const options& ring_opt : opts)
        for (int root : tc_test::roots_for(p))
          for_each_family(data, [&](const auto& fam) {
            using F = std::remove_cvref_t<decltype(fam)>;
            using T = typename F::type;
            for (const auto& ref : fam.by_size) {
              const std::vector<T>& in = ref.in[r];
              // Off the root, out is either empty or holds data that must survive.
              const bool keep_out = r != root && r % 2 == 1;
              std::vector<T> out = r == root  ? std::vector<T>(ref.m)
                                   : keep_out ? ref.in[r]
                                              : std::vector<T>{};
              options opt = ring_opt;
              if (opt.algo == algorithm::automatic && root % 2 == 1) opt.algo = algorithm::tree;
              in_segments(opt, ref.m, sizeof(T));
              reduce<Topo>(comm, std::span<const T>(in), std::span<T>(out), typename F::op_type{},
                           root, opt);
              if (r == root)
                check.equal(out, ref.total, Topo::name(), " reduce<", fam.name, "> (",
                            to_string(opt.algo), ") root ", root, " m ", ref.m);
              else if (keep_out)
                check.equal(out, ref.in[r], Topo::name(), " reduce<", fam.name,
                            "> touched out on rank ", r, ", root ", root, " m ", ref.m);
              if (opt.algo != algorithm::reduce_scatter_gather) continue;
              std::vector<T> same = in;  // in place at the root
              reduce<Topo>(comm, std::span<const T>(same), std::span<T>(same),
                           typename F::op_type{}, root, opt);
              if (r == root)
                check.equal(same, ref.total, Topo::name(), " reduce<", fam.name,
                            "> in pieces, in place, root ", root, " m ", ref.m);
            }
          });
    });
  });
}
BOOST_AUTO_TEST_SUITE_END()

TOPOCOLL_TEST_SUITE(scatter)
BOOST_AUTO_TEST_CASE_TEMPLATE(scatter_gives_rank_r_block_r, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    const auto data = families(p);
    on_ranks([&](auto& comm, Check& check) {
      const int r = comm.rank();
      for (const options& opt : one_to_all_options<Topo>())
        for (int root : tc_test::roots_for(p))
          for_each_family(data, [&](const auto& fam) {
            using T = typename std::remove_cvref_t<decltype(fam)>::type;
            for (const auto& ref : fam.by_size) {
              // the root's in is the contract's span; elsewhere an empty vector
              const std::vector<T> none;
              const std::vector<T>& in = r == root ? ref.all : none;
              std::vector<T> out(ref.m);
              if (r == root)
                scatter<Topo>(comm, std::span<const T>(in), std::span<T>(out), root, opt);
              else
                scatter<Topo>(comm, in, out, root, opt);
              check.equal(out, ref.in[r], Topo::name(), " scatter<", fam.name, "> (",
                          to_string(opt.algo), ") rank ", r, " root ", root, " m ", ref.m);
            }
          });
    });
  });
}
BOOST_AUTO_TEST_SUITE_END()

TOPOCOLL_TEST_SUITE(gather)
BOOST_AUTO_TEST_CASE_TEMPLATE(gather_collects_blocks_in_rank_order, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    const auto data = families(p);
    on_ranks([&](auto& comm, Check& check) {
      const int r = comm.rank();
      for (const options& opt : one_to_all_options<Topo>())
        for (int root : tc_test::roots_for(p))
          for_each_family(data, [&](const auto& fam) {
            using T = typename std::remove_cvref_t<decltype(fam)>::type;
            for (const auto& ref : fam.by_size) {
              // Off the root, out is empty or p*m elements that must survive (checked
              // at small m: the copy is p*m elements per rank).
              const bool keep_out = r != root && r % 2 == 1 && ref.m <= 7;
              std::vector<T> out = r == root  ? std::vector<T>(ref.all.size())
                                   : keep_out ? ref.all
                                              : std::vector<T>{};
              gather<Topo>(comm, std::span<const T>(ref.in[r]), std::span<T>(out), root, opt);
              if (r == root)
                check.equal(out, ref.all, Topo::name(), " gather<", fam.name, "> (",
                            to_string(opt.algo), ") root ", root, " m ", ref.m);
              else if (keep_out)
                check.equal(out, ref.all, Topo::name(), " gather<", fam.name,
                            "> touched out on rank ", r, ", root ", root, " m ", ref.m);
            }
          });
    });
  });
}
BOOST_AUTO_TEST_SUITE_END()

// std::vector and std::array work as buffers too, and broadcast/reduce compose.
BOOST_AUTO_TEST_CASE_TEMPLATE(containers_work_as_buffers, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    on_ranks([&](auto& comm, Check& check) {
      const int r = comm.rank();
      const int root = p - 1;
      std::array<double, 3> a{};
      if (r == root) a = {1.5, -2.0, 3.25};
      broadcast<Topo>(comm, a, root);
      check.expect(a == std::array<double, 3>{1.5, -2.0, 3.25}, "broadcast<std::array> rank ", r);
      std::vector<long> x(4, r + 1), sum(4, -1);
      reduce<Topo>(comm, x, sum, ops::max{}, root);
      if (r == root)
        check.equal(sum, std::vector<long>(4, p), "reduce<vector, max> at root");
      else
        check.equal(sum, std::vector<long>(4, -1), "reduce touched out on rank ", r);
    });
  });
}

// ---------------------------------------------------------------------------
// The communication pattern, recorded with model::Counting.

namespace {

// Algorithm 4.2 / 4.3 literally, over the relabelling the library uses on a
// hypercube (XOR for a power of two, a shift otherwise): the (send?, peer)
// sequence of virtual rank v.
std::vector<std::pair<bool, int>> mask_loop(int p, int root, int rank, bool reduce) {
  const int d = detail::ceil_log2(p);
  const bool pow2 = detail::is_pow2(p);
  const int v = pow2 ? rank ^ root : (rank - root + p) % p;
  auto real = [&](int u) { return pow2 ? u ^ root : (u + root) % p; };
  std::vector<std::pair<bool, int>> ev;
  if (!reduce) {
    int mask = (1 << d) - 1;
    for (int i = d - 1; i >= 0; --i) {
      mask ^= 1 << i;
      if ((v & mask) != 0) continue;
      const int partner = v ^ (1 << i);
      if ((v & (1 << i)) == 0) {
        if (partner < p) ev.emplace_back(true, real(partner));
      } else {
        ev.emplace_back(false, real(partner));
      }
    }
  } else {
    int mask = 0;
    for (int i = 0; i < d; ++i) {
      if ((v & mask) == 0) {
        const int partner = v ^ (1 << i);
        if ((v & (1 << i)) != 0)
          ev.emplace_back(true, real(partner));
        else if (partner < p)
          ev.emplace_back(false, real(partner));
      }
      mask ^= 1 << i;
    }
  }
  return ev;
}

template <class C>
std::vector<std::pair<bool, int>> pattern(const model::Counting<C>& cc) {
  std::vector<std::pair<bool, int>> ev;
  for (const auto& e : cc.events()) ev.emplace_back(e.kind == model::event::send, e.peer);
  return ev;
}

template <class C>
std::vector<std::size_t> recv_counts(const model::Counting<C>& cc) {
  std::vector<std::size_t> v;
  for (const auto& e : cc.events())
    if (e.kind == model::event::recv) v.push_back(e.count);
  return v;
}

// The peers of this rank's sends (or receives), in order.
template <class C>
std::vector<int> peers(const model::Counting<C>& cc, model::event::kind_t k) {
  std::vector<int> v;
  for (const auto& e : cc.events())
    if (e.kind == k) v.push_back(e.peer);
  return v;
}

}  // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(every_rank_receives_once_and_the_root_sends_m_times_p_minus_1, Cfg,
                              tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    on_ranks([&](auto& comm, Check& check) {
      const int r = comm.rank();
      model::Counting cc(comm);
      const std::size_t m = 5;
      for (int root : tc_test::roots_for(p)) {
        const std::string ctx =
            Topo::name() + " rank " + std::to_string(r) + " root " + std::to_string(root) + ": ";
        std::vector<int> buf(m, r), out(m);
        cc.clear();
        broadcast<Topo>(cc, std::span<int>(buf), root);
        check.expect(cc.recvs() == (r == root ? 0u : 1u), ctx, "broadcast received ", cc.recvs(),
                     " times");
        if constexpr (Topo::kind == dim_kind::linear) {
          // linear arrays dimension by dimension: sum of ceil(log2 s_j) from the root
          const layout l = Topo::shape(p);
          std::size_t want = 0;
          for (int j = 0; j < l.ndims; ++j) want += detail::ceil_log2(l.dims[j].radix);
          if (r == root)
            check.expect(cc.sends() == want, ctx, "broadcast root sent ", cc.sends(),
                         " messages, expected ", want);
        }
        cc.clear();
        reduce<Topo>(cc, std::span<const int>(buf), std::span<int>(out), std::plus<>{}, root);
        check.expect(cc.sends() == (r == root ? 0u : 1u), ctx, "reduce sent ", cc.sends(),
                     " times");
        std::vector<int> all(r == root ? p * m : 0, 1), mine(m);
        for (const options& opt : one_to_all_options<Topo>()) {
          cc.clear();
          scatter<Topo>(cc, all, mine, root, opt);
          if (r == root)
            check.expect(cc.bytes_sent() == (p - 1) * m * sizeof(int) && cc.recvs() == 0, ctx,
                         "scatter root sent ", cc.bytes_sent(), " bytes");
          else if (opt.algo != algorithm::pipelined)
            check.expect(cc.recvs() == 1, ctx, "scatter received ", cc.recvs(), " times");
          cc.clear();
          gather<Topo>(cc, mine, all, root, opt);
          if (r == root)
            check.expect(cc.bytes_received() == (p - 1) * m * sizeof(int) && cc.sends() == 0, ctx,
                         "gather root received ", cc.bytes_received(), " bytes");
          else if (opt.algo != algorithm::pipelined)
            check.expect(cc.sends() == 1, ctx, "gather sent ", cc.sends(), " times");
        }
      }
    });
  });
}

// The naive baselines, on every topology: the broadcast's root sends p - 1
// messages of m, one to each other rank, and nobody else sends; the reduce's
// root receives one from each other rank, in rank order from rank 0 up where
// it is rank 0 (root + 1 up, wrapping, for a commutative operator), and a
// non-commutative reduction to another root gathers at rank 0, which forwards.
BOOST_AUTO_TEST_CASE_TEMPLATE(naive_baselines_go_straight_from_and_to_the_root, Cfg,
                              tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    on_ranks([&](auto& comm, Check& check) {
      const int r = comm.rank();
      model::Counting cc(comm);
      const std::size_t m = 5;
      const options naive{algorithm::naive};
      for (int root : tc_test::roots_for(p)) {
        const std::string ctx = Topo::name() + " naive, rank " + std::to_string(r) + " root " +
                                std::to_string(root) + ": ";
        std::vector<int> buf(m, r), out(m);
        cc.clear();
        broadcast<Topo>(cc, std::span<int>(buf), root, naive);
        std::vector<int> want;  // the root's destinations: root - 1, root - 2, ... (mod p)
        for (int k = p - 1; r == root && k >= 1; --k) want.push_back((root + k) % p);
        check.expect(peers(cc, model::event::send) == want, ctx,
                     "broadcast sent to the wrong ranks");
        check.expect(
            cc.recvs() == (r == root ? 0u : 1u) && cc.bytes_sent() == want.size() * m * sizeof(int),
            ctx, "broadcast received ", cc.recvs(), " times");
        cc.clear();
        reduce<Topo>(cc, std::span<const int>(buf), std::span<int>(out), std::plus<>{}, root,
                     naive);
        want.clear();
        for (int k = 1; r == root && k < p; ++k) want.push_back((root + k) % p);
        check.expect(peers(cc, model::event::recv) == want && cc.sends() == (r == root ? 0u : 1u),
                     ctx, "commutative reduce received from the wrong ranks");
        cc.clear();
        std::vector<Mat2> x(m), y(m);
        reduce<Topo>(cc, std::span<const Mat2>(x), std::span<Mat2>(y), tc_test::mat_mul{}, root,
                     naive);
        want.clear();
        for (int k = 1; r == 0 && k < p; ++k) want.push_back(k);
        if (r == root && root != 0) want.push_back(0);  // the forwarded result
        check.expect(peers(cc, model::event::recv) == want, ctx,
                     "non-commutative reduce received from the wrong ranks");
      }
    });
  });
}

BOOST_AUTO_TEST_CASE_TEMPLATE(hypercube_follows_the_mask_loop, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  if constexpr (Topo::kind == dim_kind::binary) {
    Cfg::sweep([&](int p, auto on_ranks) {
      const int d = detail::ceil_log2(p);
      on_ranks([&](auto& comm, Check& check) {
        const int r = comm.rank();
        model::Counting cc(comm);
        const std::size_t m = 3;
        for (int root : tc_test::roots_for(p)) {
          const std::string ctx = Topo::name() + " p " + std::to_string(p) + " rank " +
                                  std::to_string(r) + " root " + std::to_string(root) + ": ";
          std::vector<int> buf(m, 1);
          cc.clear();
          broadcast<Topo>(cc, std::span<int>(buf), root);
          check.expect(pattern(cc) == mask_loop(p, root, r, false), ctx,
                       "broadcast differs from Algorithm 4.2");
          if (detail::is_pow2(p) && r == root)
            check.expect(cc.steps() == d && cc.sends() == static_cast<std::size_t>(d), ctx,
                         "broadcast root took ", cc.steps(), " steps, expected ", d);

          // A commutative and a non-commutative operator: with the XOR
          // relabelling both take exactly Algorithm 4.3's d steps.
          std::vector<int> out(m);
          cc.clear();
          reduce<Topo>(cc, std::span<const int>(buf), std::span<int>(out), std::plus<>{}, root);
          check.expect(pattern(cc) == mask_loop(p, root, r, true), ctx,
                       "reduce differs from Algorithm 4.3");
          if (detail::is_pow2(p)) {
            std::vector<Mat2> x(m, Mat2{1, 2, 3, 4}), y(m);
            cc.clear();
            reduce<Topo>(cc, std::span<const Mat2>(x), std::span<Mat2>(y), tc_test::mat_mul{},
                         root);
            check.expect(pattern(cc) == mask_loop(p, root, r, true), ctx,
                         "non-commutative reduce differs from Algorithm 4.3");
            if (r == root)
              check.expect(cc.steps() == d && cc.recvs() == static_cast<std::size_t>(d), ctx,
                           "reduce root took ", cc.steps(), " steps, expected ", d);

            // scatter: m p/2, m p/4, ..., m words from the root; a rank whose
            // virtual label ends in k zero bits receives its subtree, m 2^k.
            std::vector<int> all(r == root ? p * m : 0, 1), mine(m);
            cc.clear();
            scatter<Topo>(cc, all, mine, root);
            const int v = r ^ root;
            if (r == root) {
              std::vector<std::size_t> want;
              for (int i = d - 1; i >= 0; --i) want.push_back(m << i);
              check.expect(cc.send_counts() == want, ctx, "scatter message sizes do not halve");
            } else {
              const std::size_t sub = m << std::countr_zero(static_cast<unsigned>(v));
              check.expect(recv_counts(cc) == std::vector<std::size_t>{sub}, ctx,
                           "scatter: expected one message of ", sub);
            }
            cc.clear();
            gather<Topo>(cc, mine, all, root);
            if (r == root) {
              std::vector<std::size_t> want;
              for (int i = 0; i < d; ++i) want.push_back(m << i);
              check.expect(recv_counts(cc) == want, ctx, "gather message sizes do not double");
            }
          }
        }
      });
    });
  }
}

// Scatter + all-gather on a 3-cube is what the seed's cost says,
// 2 (t_s log p + t_w m (p - 1) / p): the root sends log p messages of
// shrinking size (m/2, m/4, m/8), then log p of growing size (m/8, m/4,
// m/2); reduce-scatter + gather is its mirror image at the root. And
// automatic takes the pieces where that cost is below the tree's
// (t_s + t_w m) log p (above 12 000 bytes under the default model) and every
// piece carries at least a pipeline segment's minimum, 50 t_s / t_w bytes
// (250 KB): from 2 MB on 8 ranks.
BOOST_AUTO_TEST_CASE_TEMPLATE(pieces_on_a_3_cube_follow_the_seeds_cost, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  if constexpr (std::is_same_v<Topo, Hypercube<3>>) {
    Cfg::sweep([&](int p, auto on_ranks) {
      on_ranks([&](auto& comm, Check& check) {
        const int r = comm.rank();
        model::Counting cc(comm);
        const std::size_t m = 64;
        const std::vector<std::size_t> down{32, 16, 8}, up{8, 16, 32};
        const cost_model cm{};
        for (int root = 0; root < p; ++root) {
          const std::string ctx = "rank " + std::to_string(r) + " root " + std::to_string(root);
          std::vector<double> buf(m, r == root ? 1.5 : 0.0), out(m);
          cc.clear();
          broadcast<Topo>(cc, std::span<double>(buf), root, {algorithm::scatter_all_gather});
          check.equal(buf, std::vector<double>(m, 1.5), "scatter_all_gather result, ", ctx);
          std::vector<std::size_t> sent = cc.send_counts(), got = recv_counts(cc);
          if (r == root) {
            std::vector<std::size_t> want = down;
            want.insert(want.end(), up.begin(), up.end());
            check.equal(sent, want, "scatter_all_gather root's sends, ", ctx);
            double t = 0;
            for (std::size_t n : sent) t += cm.message(n * sizeof(double));
            const double seed =
                2 * (3 * cm.ts_us + cm.tw_us_per_byte * double(m * sizeof(double)) * 7 / 8);
            check.expect(std::abs(t - seed) < 1e-9, "root's sends cost ", t, ", the seed ", seed);
          } else {  // one piece of the scatter, then the three all-gather steps
            check.expect(got.size() == 4 && got[1] == 8 && got[2] == 16 && got[3] == 32,
                         "scatter_all_gather receives, ", ctx);
          }
          cc.clear();
          reduce<Topo>(cc, std::span<const double>(buf), std::span<double>(out), std::plus<>{},
                       root, {algorithm::reduce_scatter_gather});
          if (r == root) {
            check.equal(out, std::vector<double>(m, 1.5 * p), "reduce_scatter_gather, ", ctx);
            check.equal(cc.send_counts(), down, "reduce_scatter_gather root's sends, ", ctx);
            std::vector<std::size_t> want = down;
            want.insert(want.end(), up.begin(), up.end());
            check.equal(recv_counts(cc), want, "reduce_scatter_gather root's receives, ", ctx);
          }
          // automatic: 3 sends from the root (tree) just below pieces of
          // min_segment_bytes, 6 (pieces) from there on: n doubles in 8 pieces
          // of n bytes
          const std::size_t edge = detail::pipeline::min_segment_bytes(cm);
          for (std::size_t n : {edge - 1, edge}) {
            std::vector<double> x(n, 2.0), y(n);
            cc.clear();
            broadcast<Topo>(cc, std::span<double>(x), root);
            if (r == root)
              check.expect(cc.sends() == (n < edge ? 3u : 6u), "automatic broadcast of ", n,
                           " doubles sent ", cc.sends(), " messages, ", ctx);
            cc.clear();
            reduce<Topo>(cc, std::span<const double>(x), std::span<double>(y), std::plus<>{}, root);
            // the tree's partials travel in segments of cm.segment_bytes
            const std::size_t segs =
                detail::one_to_all::partial_segments<double>(n, cm.segment_bytes);
            if (r == root)
              check.expect(cc.recvs() == (n < edge ? 3 * segs : 6u), "automatic reduce of ", n,
                           " doubles received ", cc.recvs(), " messages, ", ctx);
          }
        }
      });
    });
  }
}

BOOST_AUTO_TEST_CASE_TEMPLATE(ring_is_recursive_halving_or_a_pipeline, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  if constexpr (std::is_same_v<Topo, Ring>) {
    Cfg::sweep([&](int p, auto on_ranks) {
      on_ranks([&](auto& comm, Check& check) {
        const int r = comm.rank();
        model::Counting cc(comm);
        const std::size_t m = 2;
        for (int root : tc_test::roots_for(p)) {
          const std::string ctx = "Ring p " + std::to_string(p) + " rank " + std::to_string(r) +
                                  " root " + std::to_string(root) + ": ";
          // Figure 4.2: the root sends to the farthest node of the other half
          // first, then distances halve: ceil(p/2), ceil(p/4), ..., 1.
          std::vector<int> buf(m, 1);
          cc.clear();
          broadcast<Topo>(cc, std::span<int>(buf), root);
          if (r == root) {
            std::vector<std::pair<bool, int>> want;
            for (int hi = p; hi > 1; hi = (hi + 1) / 2)
              want.emplace_back(true, (root + (hi + 1) / 2) % p);
            check.expect(pattern(cc) == want, ctx, "broadcast is not farthest-first halving");
          }
          // ICS 632 ring scatter: p - 1 messages of m from the root to its
          // successor; the rank at distance k receives p - k and passes p - k - 1.
          std::vector<int> all(r == root ? p * m : 0, 1), mine(m);
          cc.clear();
          scatter<Topo>(cc, all, mine, root, options{algorithm::pipelined});
          const int k = (r - root + p) % p;
          if (r == root) {
            check.expect(cc.send_counts() == std::vector<std::size_t>(p - 1, m) && cc.recvs() == 0,
                         ctx, "pipelined scatter root: ", cc.sends(), " sends");
            for (const auto& e : cc.events())
              check.expect(e.peer == (root + 1) % p, ctx, "pipelined scatter sent to ", e.peer);
          } else {
            check.expect(cc.recvs() == static_cast<std::size_t>(p - k) &&
                             cc.sends() == static_cast<std::size_t>(p - k - 1),
                         ctx, "pipelined scatter: ", cc.recvs(), " receives, ", cc.sends(),
                         " sends");
          }
          cc.clear();
          gather<Topo>(cc, mine, all, root, options{algorithm::pipelined});
          if (r == root)
            check.expect(recv_counts(cc) == std::vector<std::size_t>(p - 1, m), ctx,
                         "pipelined gather root: ", cc.recvs(), " receives");
          else
            check.expect(cc.sends() == static_cast<std::size_t>(p - k), ctx,
                         "pipelined gather: ", cc.sends(), " sends");

          // The segmented pipeline (ICS 632 "a faster broadcast"): r segments
          // that add up to the message flow root -> root+1 -> ... -> root-1,
          // r from the cost model's optimum; reduce streams them back.
          const std::size_t big = 40;
          const options seg{algorithm::pipelined, cost_model{1.0, 1.0}};
          const std::size_t nseg = detail::pipeline::ring_segments<int>(big, p, seg.cost);
          if (p > 2) check.expect(nseg > 1, ctx, "expected several segments, got ", nseg);
          std::vector<int> long_buf(big, r == root ? 3 : 0), sum(r == root ? big : 0);
          for (bool red : {false, true}) {
            cc.clear();
            if (red)
              reduce<Topo>(cc, long_buf, sum, std::plus<>{}, root, seg);
            else
              broadcast<Topo>(cc, long_buf, root, seg);
            const int up = red ? (r + p - 1) % p : (r + 1) % p;  // where data flows to
            const bool first = red ? k == p - 1 : k == 0;        // only sends
            const bool last = red ? k == 0 : k == p - 1;         // only receives
            std::size_t words = 0;
            for (const auto& e : cc.events()) {
              words += e.kind == model::event::send ? e.count : 0;
              check.expect(
                  e.peer ==
                      (e.kind == model::event::send ? up : (red ? (r + 1) % p : (r + p - 1) % p)),
                  ctx, red ? "pipelined reduce" : "pipelined broadcast", " talks to ", e.peer);
            }
            check.expect(cc.sends() == (last ? 0 : nseg) && cc.recvs() == (first ? 0 : nseg) &&
                             words == (last ? 0 : big),
                         ctx, red ? "pipelined reduce: " : "pipelined broadcast: ", cc.sends(),
                         " sends of ", words, " words, ", cc.recvs(), " receives; expected ", nseg,
                         " segments");
          }
          check.equal(long_buf, std::vector<int>(big, 3), ctx, "pipelined broadcast");
          if (r == root) check.equal(sum, std::vector<int>(big, 3 * p), ctx, "pipelined reduce");
        }

        // automatic follows the cost model: for a long message the pipeline
        // (p >= 3), else the tree's ceil(log2 p) sends from the root. Under
        // the default model 256 KiB is one segment's minimum (50 t_s / t_w),
        // so the tree; with a 100x smaller t_s, segments of 2.5 KB, the pipeline.
        const int root = p - 1;
        const std::size_t m_long = std::size_t{1} << 16;
        for (const cost_model cost : {cost_model{}, cost_model{0.01, 2e-4}}) {
          std::vector<int> x(m_long, r == root ? 5 : 0);
          cc.clear();
          broadcast<Topo>(cc, x, root, options{algorithm::automatic, cost});
          check.equal(x, std::vector<int>(m_long, 5), "automatic broadcast of 2^16 ints, rank ", r);
          const bool pipe = detail::plan::pipeline::ring_pipeline_wins<int>(m_long, p, cost);
          if (p >= 3)
            check.expect(pipe == (cost.ts_us < 1.0), "the model (t_s ", cost.ts_us,
                         ") should prefer the ", cost.ts_us < 1.0 ? "pipeline" : "tree", " at p ",
                         p);
          // ... unless the pieces are cheaper still: p - 1 sends to scatter, p - 1 to all-gather
          const bool pieces = detail::plan::one_to_all_pieces::pieces_win<Topo, int>(
              Topo::shape(p), m_long, root, detail::all_to_all_broadcast::rs_messages::one, cost);
          if (r == root)
            check.expect(
                cc.sends() == (pieces ? 2 * static_cast<std::size_t>(p - 1)
                               : pipe ? detail::pipeline::ring_segments<int>(m_long, p, cost)
                                      : static_cast<std::size_t>(detail::ceil_log2(p))),
                "automatic broadcast on Ring p ", p, ": root sent ", cc.sends(), " messages");
        }
      });
    });
  }
}

// ---------------------------------------------------------------------------
// The pipeline along every linear dimension (Ring, Mesh<K>): broadcast goes
// down the root's column, then along every row; reduce the other way round.
// The expected pattern is computed here from real coordinates, without the
// library's relabelling.

namespace {

// Rank `rank` on the line along dimension j through the root's coordinates
// below j (on: whether it is on it): its position, coordinate j minus the
// root's mod the side n, and its real neighbours along j.
struct on_line {
  bool on;
  int pos, n, prev, next;
};
on_line line_along(const layout& l, int rank, int root, int j) {
  on_line s{true, 0, l.dims[j].radix, 0, 0};
  for (int i = 0; i < j; ++i) s.on = s.on && l.coord(rank, i) == l.coord(root, i);
  const int c = l.coord(rank, j);
  s.pos = (c - l.coord(root, j) + s.n) % s.n;
  s.prev = l.with_coord(rank, j, (c + s.n - 1) % s.n);
  s.next = l.with_coord(rank, j, (c + 1) % s.n);
  return s;
}

// One pipelined broadcast or reduce, as one rank should record it.
struct expected_pipeline {
  layout l;
  int rank, root;  // root: where the chains start (broadcast) or end (reduce)
  std::size_t m;
  cost_model cost;
  detail::sweep dir;  // up: reduce, partials towards the root, lowest dimension first
};

// The events, one dimension after the other (high to low for broadcast, low
// to high for reduce): on the line along j a rank receives r_j segments from
// upstream unless it is the first, sends r_j downstream unless it is the
// last, m words each way, and talks to no one else. Returns the index of the
// first event past the pipeline.
template <class T, class C>
std::size_t check_phases(const model::Counting<C>& cc, const expected_pipeline& x, Check& check,
                         const std::string& ctx) {
  const auto& ev = cc.events();
  std::size_t at = 0;
  const bool up = x.dir == detail::sweep::up;
  for (int i = 0; i < x.l.ndims; ++i) {
    const int j = up ? i : x.l.ndims - 1 - i;
    const on_line s = line_along(x.l, x.rank, x.root, j);
    if (!s.on) continue;
    const std::size_t r = detail::pipeline::ring_segments<T>(x.m, s.n, x.cost);
    const bool gets = s.pos != (up ? s.n - 1 : 0), gives = s.pos != (up ? 0 : s.n - 1);
    const int from = up ? s.next : s.prev, to = up ? s.prev : s.next;
    std::size_t sends = 0, recvs = 0, sent = 0, got = 0;
    for (; at < ev.size() && sends + recvs < (gets ? r : 0) + (gives ? r : 0); ++at) {
      const bool send = ev[at].kind == model::event::send;
      check.expect(ev[at].peer == (send ? to : from), ctx, "dimension ", j, ": ",
                   send ? "sent to " : "received from ", ev[at].peer, ", expected ",
                   send ? to : from);
      (send ? sends : recvs) += 1;
      (send ? sent : got) += ev[at].count;
    }
    check.expect(sends == (gives ? r : 0) && recvs == (gets ? r : 0) && sent == (gives ? x.m : 0) &&
                     got == (gets ? x.m : 0),
                 ctx, "dimension ", j, ": ", sends, " sends of ", sent, " words, ", recvs,
                 " receives of ", got, "; expected ", r, " segments of ", x.m, " words");
  }
  return at;
}

// Whether a and b are neighbours along one dimension of l (a torus).
bool mesh_neighbours(const layout& l, int a, int b) {
  int differ = 0, step = 0;
  for (int j = 0; j < l.ndims; ++j) {
    const int d = (l.coord(b, j) - l.coord(a, j) + l.dims[j].radix) % l.dims[j].radix;
    differ += d != 0;
    step += d == 1 || d == l.dims[j].radix - 1;
  }
  return differ == 1 && step == 1;
}

// What every root's pipelines are checked against.
struct pipeline_data {
  layout l;
  std::size_t m;
  options seg;
  std::vector<std::vector<Mat2>> in;  // rank q's input
  std::vector<Mat2> total;            // their product, in rank order
};

// Broadcast and reduce (commutative and not) from one root, each checked
// dimension by dimension.
template <class Topo, class C>
void check_pipelines_from(model::Counting<C>& cc, const pipeline_data& d, int root, Check& check) {
  const int r = cc.rank(), p = cc.size();
  const std::size_t m = d.m;
  const std::string ctx = Topo::name() + " p " + std::to_string(p) + " rank " + std::to_string(r) +
                          " root " + std::to_string(root) + ": ";
  std::vector<Mat2> buf = r == root ? d.in[root] : std::vector<Mat2>(m);
  cc.clear();
  broadcast<Topo>(cc, buf, root, d.seg);
  check.equal(buf, d.in[root], ctx, "pipelined broadcast");
  std::size_t end =
      check_phases<Mat2>(cc, {d.l, r, root, m, d.seg.cost, detail::sweep::down}, check, ctx);
  check.expect(end == cc.events().size(), ctx, "broadcast sent more than the pipeline");

  // commutative: the chains end at the root
  std::vector<int> x(m, r + 1), sum(r == root ? m : 0);
  cc.clear();
  reduce<Topo>(cc, x, sum, std::plus<>{}, root, d.seg);
  if (r == root) check.equal(sum, std::vector<int>(m, p * (p + 1) / 2), ctx, "pipelined reduce");
  end = check_phases<int>(cc, {d.l, r, root, m, d.seg.cost, detail::sweep::up}, check,
                          ctx + "reduce ");
  check.expect(end == cc.events().size(), ctx, "reduce sent more than the pipeline");

  // not commutative: the chains end at real coordinate 0, so at rank 0,
  // which forwards the product to the root
  std::vector<Mat2> prod(r == root ? m : 0);
  cc.clear();
  reduce<Topo>(cc, d.in[r], prod, tc_test::mat_mul{}, root, d.seg);
  if (r == root) check.equal(prod, d.total, ctx, "non-commutative pipelined reduce");
  end = check_phases<Mat2>(cc, {d.l, r, 0, m, d.seg.cost, detail::sweep::up}, check,
                           ctx + "mat_mul ");
  std::vector<std::pair<bool, int>> rest, want;
  for (std::size_t e = end; e < cc.events().size(); ++e)
    rest.emplace_back(cc.events()[e].kind == model::event::send, cc.events()[e].peer);
  if (root != 0 && r == 0) want.emplace_back(true, root);
  if (root != 0 && r == root) want.emplace_back(false, 0);
  check.expect(rest == want, ctx, "mat_mul: ", rest.size(), " events past the pipeline");
}

// Scatter and gather from one root: neighbours only; the root sends s_j - 1
// messages of stride_j blocks along every dimension j, highest first, and
// gather's root receives them back lowest first.
template <class Topo, class C>
void check_block_pipelines_from(model::Counting<C>& cc, const layout& l, int root, Check& check) {
  const int r = cc.rank(), p = cc.size();
  const std::size_t m = 3;
  const std::string ctx = Topo::name() + " p " + std::to_string(p) + " rank " + std::to_string(r) +
                          " root " + std::to_string(root) + ": ";
  std::vector<int> ref(p * m), mine(m, -1);
  for (std::size_t i = 0; i < ref.size(); ++i) ref[i] = static_cast<int>(i / m);
  std::vector<int> all = r == root ? ref : std::vector<int>{};
  std::vector<std::size_t> want;  // the root's sends
  for (int j = l.ndims - 1; j >= 0; --j)
    want.insert(want.end(), l.dims[j].radix - 1, l.dims[j].stride * m);
  for (bool up : {false, true}) {
    cc.clear();
    if (up)
      gather<Topo>(cc, mine, all, root, options{algorithm::pipelined});
    else
      scatter<Topo>(cc, all, mine, root, options{algorithm::pipelined});
    check.equal(mine, std::vector<int>(m, r), ctx, "pipelined scatter");
    if (r == root && up) check.equal(all, ref, ctx, "pipelined gather");
    std::fill(all.begin(), all.end(), -1);  // for gather to fill in
    for (const auto& e : cc.events())
      check.expect(mesh_neighbours(l, r, e.peer), ctx, up ? "gather" : "scatter", " talks to ",
                   e.peer, ", not a neighbour");
    if (r == root && up)
      check.expect(recv_counts(cc) == std::vector<std::size_t>(want.rbegin(), want.rend()), ctx,
                   "pipelined gather: the root's receives are not the dimensions' blocks");
    else if (r == root)
      check.expect(cc.send_counts() == want, ctx,
                   "pipelined scatter: the root's sends are not the dimensions' blocks");
  }
}

// automatic: the pipeline when its time summed over the dimensions beats the
// tree's; the root heads a chain along every dimension. Unless the pieces are
// cheaper than both: then the root sends s_j - 1 pieces along every dimension
// to scatter, and as many to all-gather.
template <class Topo, class C>
void check_automatic_choice(model::Counting<C>& cc, const layout& l, Check& check) {
  const int r = cc.rank(), p = cc.size(), root = p - 1;
  const std::size_t m = std::size_t{1} << 16;
  for (const cost_model cost : {cost_model{}, cost_model{0.01, 2e-4}}) {
    std::vector<int> y(m, r == root ? 5 : 0);
    cc.clear();
    broadcast<Topo>(cc, y, root, options{algorithm::automatic, cost});
    check.equal(y, std::vector<int>(m, 5), Topo::name(), " automatic broadcast, rank ", r);
    const bool pipe = detail::plan::pipeline::pipeline_wins<int>(l, m, cost);
    const bool pieces = detail::plan::one_to_all_pieces::pieces_win<Topo, int>(
        l, m, root, detail::all_to_all_broadcast::rs_messages::one, cost);
    bool long_side = false;
    std::size_t root_sends = 0;
    for (int j = 0; j < l.ndims; ++j) {
      const int s = l.dims[j].radix;
      long_side = long_side || s >= 3;
      root_sends += pieces ? 2 * static_cast<std::size_t>(s - 1)
                    : pipe ? detail::pipeline::ring_segments<int>(m, s, cost)
                           : static_cast<std::size_t>(detail::ceil_log2(s));
    }
    check.expect(pipe == (long_side && cost.ts_us < 1.0), Topo::name(), " p ", p,
                 ": the model (t_s ", cost.ts_us, ") prefers the ", pipe ? "pipeline" : "tree");
    if (r == root)
      check.expect(cc.sends() == root_sends, Topo::name(), " p ", p, ": automatic root sent ",
                   cc.sends(), " messages, expected ", root_sends);
  }
}

}  // namespace

BOOST_AUTO_TEST_CASE_TEMPLATE(pipeline_runs_down_the_column_then_along_the_rows, Cfg,
                              tc_test::Configs) {
  using Topo = typename Cfg::topology;
  if constexpr (detail::chain_dims<Topo>) {
    Cfg::sweep([&](int p, auto on_ranks) {
      // 40 elements in 3 segments of int, 12 of Mat2, along every side of 3 or more
      pipeline_data d{Topo::shape(p), 40, {algorithm::pipelined, cost_model{1.0, 1.0}}, {}, {}};
      for (int q = 0; q < p; ++q) d.in.push_back(tc_test::input<Mat2>(q, d.m, 5));
      d.total = tc_test::fold<Mat2>(0, p - 1, d.m, tc_test::mat_mul{}, 5);
      std::vector<int> roots = tc_test::roots_for(p);
      for (int root = 10; root < p && p <= 17; ++root) roots.push_back(root);  // every root
      on_ranks([&](auto& comm, Check& check) {
        model::Counting cc(comm);
        for (int j = 0; j < d.l.ndims; ++j)
          check.expect(d.l.dims[j].radix < 3 || detail::pipeline::ring_segments<int>(
                                                    d.m, d.l.dims[j].radix, d.seg.cost) > 1,
                       Topo::name(), " p ", p, ": one segment along a side of ", d.l.dims[j].radix);
        for (int root : roots) {
          check_pipelines_from<Topo>(cc, d, root, check);
          check_block_pipelines_from<Topo>(cc, d.l, root, check);
        }
        check_automatic_choice<Topo>(cc, d.l, check);
      });
    });
  }
}

// ---------------------------------------------------------------------------
// Bad input: every rank throws std::invalid_argument before communicating (a
// rank that sent or waited would leave a message behind or deadlock, and the
// runner reports both).

BOOST_AUTO_TEST_CASE_TEMPLATE(bad_arguments_throw_on_every_rank_before_communicating, Cfg,
                              tc_test::Configs) {
  using Topo = typename Cfg::topology;
  using E = std::invalid_argument;
  Cfg::sweep([&](int p, auto on_ranks) {
    on_ranks([&](auto& comm, Check& check) {
      const int r = comm.rank();
      const std::string who = "rank " + std::to_string(r) + " of " + std::to_string(p);
      const std::size_t m = 3;
      std::vector<int> buf(m, 1), out(m), big(p * m + 1), small(p * m - 1);
      for (int root : {p, -1}) {
        const std::string bad = "root " + std::to_string(root);
        check.throws<E>([&] { broadcast<Topo>(comm, buf, root); }, {"broadcast", who, bad}, bad);
        check.throws<E>([&] { reduce<Topo>(comm, buf, out, std::plus<>{}, root); },
                        {"reduce", who, bad}, bad);
        check.throws<E>([&] { scatter<Topo>(comm, big, out, root); }, {"scatter", who, bad}, bad);
        check.throws<E>([&] { gather<Topo>(comm, buf, out, root); }, {"gather", who, bad}, bad);
      }
      const int root = p / 2;
      std::vector<int> out_long(m + 1);
      check.throws<E>([&] { reduce<Topo>(comm, buf, out_long, std::plus<>{}, root); },
                      {"reduce", who, "holds 4", "expected 3"}, "reduce out size");
      check.throws<E>([&] { scatter<Topo>(comm, big, out, root); },
                      {"scatter", who, "holds " + std::to_string(p * m + 1)}, "scatter in size");
      check.throws<E>([&] { gather<Topo>(comm, buf, small, root); },
                      {"gather", who, "holds " + std::to_string(p * m - 1)}, "gather out size");
      check.throws<E>([&] { broadcast<Topo>(comm, buf, root, options{algorithm::pairwise}); },
                      {"broadcast", who, "pairwise"}, "broadcast pairwise");
      check.throws<E>(
          [&] {
            reduce<Topo>(comm, buf, out, std::plus<>{}, root,
                         options{algorithm::recursive_doubling});
          },
          {"reduce", who, "recursive_doubling"}, "reduce recursive_doubling");
      std::vector<int> fine(p * m);
      check.throws<E>(
          [&] { broadcast<Topo>(comm, buf, root, options{algorithm::reduce_scatter_gather}); },
          {"broadcast", who, "reduce_scatter_gather does not apply", "scatter_all_gather"},
          "broadcast reduce_scatter_gather");
      check.throws<E>(
          [&] {
            reduce<Topo>(comm, buf, out, std::plus<>{}, root,
                         options{algorithm::scatter_all_gather});
          },
          {"reduce", who, "scatter_all_gather does not apply", "reduce_scatter_gather"},
          "reduce scatter_all_gather");
      check.throws<E>(
          [&] { scatter<Topo>(comm, fine, out, root, options{algorithm::scatter_all_gather}); },
          {"scatter", who, "scatter_all_gather does not apply"}, "scatter scatter_all_gather");
      check.throws<E>(
          [&] { gather<Topo>(comm, buf, fine, root, options{algorithm::reduce_scatter_gather}); },
          {"gather", who, "reduce_scatter_gather does not apply"}, "gather reduce_scatter_gather");
      if constexpr (!detail::chain_dims<Topo>) {
        check.throws<E>(
            [&] { scatter<Topo>(comm, fine, out, root, options{algorithm::pipelined}); },
            {"scatter", who, "pipelined needs the Ring"}, "scatter pipelined");
        check.throws<E>([&] { broadcast<Topo>(comm, buf, root, options{algorithm::pipelined}); },
                        {"broadcast", who, "pipelined needs", Topo::name()}, "broadcast pipelined");
        check.throws<E>(
            [&] {
              reduce<Topo>(comm, buf, out, std::plus<>{}, root, options{algorithm::pipelined});
            },
            {"reduce", who, "pipelined needs", Topo::name()}, "reduce pipelined");
        check.throws<E>([&] { gather<Topo>(comm, buf, fine, root, options{algorithm::pipelined}); },
                        {"gather", who, "pipelined needs the Ring"}, "gather pipelined");
      }
      if (p != 8) {
        const std::string need = "Hypercube<3> needs 2^3 = 8 ranks";
        check.throws<E>([&] { broadcast<Hypercube<3>>(comm, buf, 0); }, {"broadcast", who, need},
                        "Hypercube<3>");
        check.throws<E>([&] { reduce<Hypercube<3>>(comm, buf, out, std::plus<>{}, 0); },
                        {"reduce", need}, "Hypercube<3>");
        check.throws<E>([&] { gather<Hypercube<3>>(comm, buf, out, 0); }, {"gather", need},
                        "Hypercube<3>");
      }
      // Still in step with the others: a real collective works afterwards.
      std::vector<int> x(m, r == root ? 9 : 0);
      broadcast<Topo>(comm, x, root);
      check.equal(x, std::vector<int>(m, 9), "broadcast after the errors, rank ", r);
    });
  });
}

// Strings move through the tree encoded, as bytes. broadcast: a rank whose
// buffer holds another count gets message_error naming both counts; the
// others, its subtree included, get the root's strings. gather: the root
// names the rank whose block has another count.
BOOST_AUTO_TEST_CASE_TEMPLATE(
    string_broadcast_and_gather_with_a_mismatched_count_throw_message_error, Cfg,
    tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    if (p == 1) return;
    on_ranks([&](auto& comm, Check& check) {
      const int r = comm.rank();
      const int root = p / 2, odd = (root + 1) % p;
      const std::vector<std::string> want{"alpha", "", std::string(300, 'x'), "delta"};
      std::vector<std::string> buf = r == root ? want : std::vector<std::string>(4, "stale");
      if (r == odd) buf.resize(5);
      const std::string who = "rank " + std::to_string(r) + " of " + std::to_string(p);
      if (r == odd)
        check.throws<message_error>([&] { broadcast<Topo>(comm, buf, root); },
                                    {"broadcast", who, "broadcast 4 strings", "holds 5"},
                                    "mismatched string count");
      else {
        broadcast<Topo>(comm, buf, root);
        check.equal(buf, want, Topo::name(), " string broadcast, ", who);
      }
      // gather: the root finds the odd block when it decodes; the others return.
      std::vector<std::string> mine(r == odd ? 5 : 4, std::to_string(r)),
          all(r == root ? 4 * p : 0);
      if (r == root)
        check.throws<message_error>(
            [&] { gather<Topo>(comm, mine, all, root); },
            {"gather", who, "rank " + std::to_string(odd) + " sent 5 strings", "holds"},
            "gather of a mismatched string count");
      else
        gather<Topo>(comm, mine, all, root);
    });
  });
}

// Broadcasts `want` from rank 0 past rank p - 1 (a leaf or an inner node, by
// topology), whose buffer holds one string more: that rank gets message_error
// naming both counts, every other rank gets `want`.
template <class Topo, class Comm>
void broadcast_past_a_mismatched_count(Comm& comm, Check& check,
                                       const std::vector<std::string>& want,
                                       const std::string& what) {
  const int r = comm.rank(), p = comm.size(), odd = p - 1;
  const std::string who = "rank " + std::to_string(r) + " of " + std::to_string(p);
  std::vector<std::string> buf = r == 0 ? want : std::vector<std::string>(want.size() + (r == odd));
  if (r == odd)
    check.throws<message_error>(
        [&] { broadcast<Topo>(comm, buf, 0); },
        {"broadcast", who, "broadcast " + std::to_string(want.size()) + " strings",
         "holds " + std::to_string(want.size() + 1)},
        what + " of a mismatched count");
  else {
    broadcast<Topo>(comm, buf, 0);
    check.equal(buf, want, Topo::name(), " ", what, " past a mismatch, ", who);
  }
}

TOPOCOLL_TEST_SUITE(broadcast)
// A long string message (600 KB, far beyond the 2 KiB head that announces
// its size): every root, strings of every length including empty ones, and a
// rank with another count still passes the message on to its subtree before
// it throws.
BOOST_AUTO_TEST_CASE_TEMPLATE(long_string_broadcast_from_every_root, Cfg, tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    if (p > (tc_test::sanitized ? 5 : 17)) return;  // 600 KB per rank per root
    std::vector<std::string> want(1200);
    for (std::size_t i = 0; i < want.size(); ++i)
      want[i] = std::string((i * 37) % 997, static_cast<char>('a' + i % 26)) + std::to_string(i);
    want[5].clear();
    want.back().clear();
    on_ranks([&](auto& comm, Check& check) {
      const int r = comm.rank();
      const std::string who = "rank " + std::to_string(r) + " of " + std::to_string(p);
      for (int root = 0; root < p; ++root) {
        std::vector<std::string> buf = r == root ? want : std::vector<std::string>(want.size());
        broadcast<Topo>(comm, buf, root);
        check.equal(buf, want, Topo::name(), " long string broadcast, root ", root, ", ", who);
      }
      if (p > 1) broadcast_past_a_mismatched_count<Topo>(comm, check, want, "long broadcast");
    });
  });
}
BOOST_AUTO_TEST_SUITE_END()

// A few long strings (the encoding past the 2 KiB head, 32 KiB of characters
// per string after the first) skip the encoding: the head carries their
// lengths, then each string's characters are broadcast straight into the
// receivers' strings, which held other contents. Every root, an empty string
// among them, a wider character type, one string just past the head, and a
// rank with another count that passes every string on to its subtree before
// it throws.
BOOST_AUTO_TEST_CASE_TEMPLATE(few_long_strings_broadcast_straight_into_place, Cfg,
                              tc_test::Configs) {
  using Topo = typename Cfg::topology;
  Cfg::sweep([&](int p, auto on_ranks) {
    if (p > (tc_test::sanitized ? 5 : 17)) return;
    std::vector<std::string> want{std::string(90000, 'a') + "end", "", std::string(50000, 'b'),
                                  "tail"};
    for (std::size_t i = 0; i < want[0].size(); i += 997) want[0][i] = 'z';
    const std::vector<std::u32string> want32{std::u32string(20000, U'\x1F600'), U"y"};
    on_ranks([&](auto& comm, Check& check) {
      const int r = comm.rank();
      const std::string who = "rank " + std::to_string(r) + " of " + std::to_string(p);
      for (int root = 0; root < p; ++root) {
        std::vector<std::string> buf =
            r == root ? want : std::vector<std::string>{"stale", std::string(70000, 's'), "", ""};
        broadcast<Topo>(comm, buf, root);
        check.expect(buf == want, Topo::name(), " long strings straight into place, root ", root,
                     ", ", who);
        std::vector<std::u32string> b32 = r == root ? want32 : std::vector<std::u32string>(2);
        broadcast<Topo>(comm, b32, root);
        check.expect(b32 == want32, Topo::name(), " long u32strings, root ", root, ", ", who);
        // one string just past the head goes straight into place too
        std::vector<std::string> one{r == root ? std::string(2100, 'o') + "!" : "stale"};
        broadcast<Topo>(comm, one, root);
        check.expect(one[0] == std::string(2100, 'o') + "!", Topo::name(),
                     " one string past the head, root ", root, ", ", who);
      }
      if (p > 1) broadcast_past_a_mismatched_count<Topo>(comm, check, want, "long strings");
    });
  });
}

// ---------------------------------------------------------------------------
// Every send synchronous (eager_limit 0): the order of sends and receives must
// be deadlock-free on its own, without buffering.

#ifndef TOPOCOLL_TEST_MPI
template <class Topo>
void run_synchronous() {
  tc_test::Loopback::sweep<Topo>(
      [&](int p, auto on_ranks) {
        const auto data = families(p);
        on_ranks([&](auto& comm, Check& check) {
          const int r = comm.rank();
          for (int root : tc_test::roots_for(p))
            for_each_family(data, [&](const auto& fam) {
              using F = std::remove_cvref_t<decltype(fam)>;
              using T = typename F::type;
              const auto& ref = fam.by_size[2];  // m = 7
              for (options opt : one_to_all_options<Topo>()) {
                if (opt.algo == algorithm::pipelined)
                  opt.cost = cost_model{1.0, 1.0};  // 7 segments
                // broadcast and reduce as automatic takes them, and forced to
                // the tree, in pieces and naive
                std::vector<std::pair<algorithm, algorithm>> rooted{{opt.algo, opt.algo}};
                if (opt.algo == algorithm::automatic)
                  rooted.insert(rooted.end(),
                                {{algorithm::tree, algorithm::tree},
                                 {algorithm::scatter_all_gather, algorithm::reduce_scatter_gather},
                                 {algorithm::naive, algorithm::naive}});
                for (const auto& [down, up] : rooted) {
                  std::vector<T> buf = r == root ? ref.in[root] : std::vector<T>(ref.m);
                  broadcast<Topo>(comm, buf, root, options{down, opt.cost});
                  check.equal(buf, ref.in[root], Topo::name(), " sync broadcast<", fam.name, "> (",
                              to_string(down), ")");
                  std::vector<T> out(r == root ? ref.m : 0);
                  reduce<Topo>(comm, ref.in[r], out, typename F::op_type{}, root,
                               options{up, opt.cost});
                  if (r == root)
                    check.equal(out, ref.total, Topo::name(), " sync reduce<", fam.name, "> (",
                                to_string(up), ")");
                }
                const std::vector<T> none;
                std::vector<T> mine(ref.m), all(r == root ? ref.all.size() : 0);
                scatter<Topo>(comm, r == root ? ref.all : none, mine, root, opt);
                check.equal(mine, ref.in[r], Topo::name(), " sync scatter<", fam.name, ">");
                gather<Topo>(comm, mine, all, root, opt);
                if (r == root)
                  check.equal(all, ref.all, Topo::name(), " sync gather<", fam.name, ">");
              }
            });
        });
      },
      {1, 2, 3, 5, 6, 8, 12, 13, 16}, loopback::options{0});
}

BOOST_AUTO_TEST_CASE(send_order_is_deadlock_free_with_synchronous_sends) {
  run_synchronous<Ring>();
  run_synchronous<Mesh<2>>();
  run_synchronous<Hypercube<>>();
  run_synchronous<Tree<3>>();
  run_synchronous<Tree<4>>();
}
#endif
