#pragma once
// Kernels of all-to-all personalized communication (total exchange), Grama et
// al. section 4.5: every rank holds one m-element block for every rank.
//
// Three algorithms:
//  * store_and_forward: a fold over the topology's dimensions. Every packet is
//    named by its *relative address* rho (source -> destination); a rank always
//    holds exactly one packet per rho, so a packet that moves lands in the same
//    slot it left. Per dimension, the packets whose rho has a nonzero digit
//    there travel along that dimension, ONE consolidated message per sub-step
//    of the dimension's personalized step (topology/step.hpp): Figure 4.18 on
//    the ring (m(p - 1) words, m fewer each of the p - 1 steps), Figure 4.19 on
//    the mesh (the ring algorithm in every row, then every column, generalised
//    to K dimensions), Figure 4.20 on the hypercube (log p steps of m p / 2
//    words), and its radix-K analogue on Tree<K>. Before each dimension the
//    blocks are rearranged (one block copy each) so that the packets of one
//    sub-step are contiguous.
//  * pairwise: p - 1 direct exchanges, Algorithm 4.10. Where the transport
//    has non-blocking sends (core/nonblocking.hpp), every send is posted at
//    once and the blocks are received in the schedule's order, so the p - 1
//    messages overlap instead of running as p - 1 blocking rounds.
//  * naive: the same direct exchange with the lecture's naive order, ranks 0,
//    1, ..., p - 1 (exchange_order::naive).

#include <algorithm>
#include <array>
#include <cstddef>
#include <exception>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "../core/concepts.hpp"
#include "../core/elementwise.hpp"
#include "../core/errors.hpp"
#include "../core/nonblocking.hpp"
#include "../core/options.hpp"
#include "../core/transfer.hpp"
#include "../core/workspace.hpp"
#include "../topology/layout.hpp"
#include "../topology/step.hpp"
#include "../topology/topology.hpp"
#include "../version.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::personalized {

inline std::size_t to_size(int i) {
  return static_cast<std::size_t>(i);
}

// ---- relative addresses ----------------------------------------------------------
// rho of the packet from s to d is d's virtual rank when s is the root, in the
// relabelling the dimension step routes (dim_step<K>::personal_relabel): XOR
// for a hypercube of p = 2^d ranks, (d - s) mod p for Hypercube<> on other p
// and for Tree<K> (relative addresses >= p do not exist and are skipped, so any
// p works with ceil(log_radix p) dimensions), and per coordinate
// (d_j - s_j) mod side_j on the ring and the mesh (a ring step in each row /
// column, neighbours only). That is the topology's own relabelling for Ring,
// Mesh and Hypercube (Hypercube<D> then XORs without testing p); Tree<K>'s
// XORs when p = 2^k, which the k-nomial shifts do not follow.
template <Topology Topo>
using relative =
    std::conditional_t<std::is_base_of_v<typename dim_step<Topo::kind>::personal_relabel, Topo>,
                       Topo, typename dim_step<Topo::kind>::personal_relabel>;

// ---- the block layout per dimension ----------------------------------------------
// While dimension j is processed, the p slots are ordered by (digit_j(rho),
// rho): the packets that share a digit (a "group") are contiguous, and a
// sub-step sends one group or a tail of groups (personal_move::first, last).
struct dim_plan {
  std::vector<int> order;  // position -> rho
  std::vector<int> pos;    // rho -> position
  std::vector<int> off;    // group z occupies positions [off[z], off[z+1])
};

inline std::vector<dim_plan> make_plans(const layout& l) {
  const int p = l.p;
  std::vector<dim_plan> plans(to_size(l.ndims));
  for (int j = 0; j < l.ndims; ++j) {
    dim_plan& d = plans[to_size(j)];
    const int r = l.dims[j].radix;
    d.off.assign(to_size(r + 1), 0);
    for (int rho = 0; rho < p; ++rho) ++d.off[to_size(l.coord(rho, j) + 1)];
    for (int z = 0; z < r; ++z) d.off[to_size(z + 1)] += d.off[to_size(z)];
    d.order.resize(to_size(p));
    d.pos.resize(to_size(p));
    std::vector<int> fill(d.off.begin(), d.off.end() - 1);
    for (int rho = 0; rho < p; ++rho) {
      const int at = fill[to_size(l.coord(rho, j))]++;
      d.order[to_size(at)] = rho;
      d.pos[to_size(rho)] = at;
    }
  }
  return plans;
}

// ---- the schedule ----------------------------------------------------------------
// One message of store-and-forward: the positions [first, last) it sends and
// receives.
struct step {
  int dim;    // dimension index
  int t;      // sub-step within the dimension, from 1
  int first;  // positions [first, last) travel
  int last;
};

// How many relative addresses rho in [0, p) have digit j below z: the start of
// group z in dim_plan::off, without building the plans (the cost model runs on
// every call).
inline int digit_offset(const layout& l, int j, int z) {
  const int s = l.dims[j].stride;
  const int period = l.dims[j].radix * s;
  return (l.p / period) * z * s + std::min(l.p % period, z * s);
}

// The sub-steps of dimension j that move anything, in order: f(step, move),
// group g starting at position group_start(g). The kernel reads the group
// starts from its plans and the cost model from digit_offset, and both walk
// this one loop, so the cost model prices exactly what the kernel does
// (personalized_test checks that the two kinds of group start agree).
template <dim_kind K, class GroupStart, class F>
void for_each_sub_step(const layout& l, int j, ring_way way, const GroupStart& group_start, F&& f) {
  for (int t = 1; t < dim_step<K>::radix(l, j); ++t) {
    const personal_move mv = dim_step<K>::sub_step(l, j, t, way);
    const int first = group_start(mv.first), last = group_start(mv.last);
    if (last > first) f(step{j, t, first, last}, mv);  // else a digit no rho < p has
  }
}

// Every message of store-and-forward on Topo's layout l, in order.
template <Topology Topo, class F>
void for_each_step(const layout& l, ring_way way, F&& f) {
  for_each_dim<Topo>(l, [&](int j) {
    for_each_sub_step<Topo::kind>(
        l, j, way, [&](int g) { return digit_offset(l, j, g); },
        [&](const step& s, const personal_move&) { f(s); });
  });
}

// ---- store-and-forward ---------------------------------------------------------
// Its work space: two scratch buffers of p blocks.
inline std::size_t store_and_forward_scratch(int p, std::size_t m) {
  return 2 * to_size(p) * m;
}

// The three buffers of p blocks store-and-forward rotates through: out and the
// two scratch halves. Each dimension reads hold[0] (what the rank kept),
// receives into hold[1], and rearranges both into `next`; the rotation is set
// up so that the last dimension's `next` is out itself.
template <class T>
class rotation {
 public:
  struct dimension_buffers {
    std::array<T*, 2> hold;
    T* next;
  };

  rotation(T* out, T* scratch, std::size_t pm, int ndims)
      : o_(out), x_(scratch), y_(scratch + pm), nd_(ndims), cur_((ndims - 1) % 2 == 1 ? o_ : x_) {}

  T* first() const { return cur_; }  // where the initial arrangement goes
  dimension_buffers enter(int j) {
    const bool into_out = (nd_ - 1 - j) % 2 == 0;  // else cur_ is out
    const dimension_buffers b{{cur_, into_out ? (cur_ == x_ ? y_ : x_) : x_}, into_out ? o_ : y_};
    cur_ = b.next;
    return b;
  }

 private:
  T* o_;
  T* x_;
  T* y_;
  int nd_;
  T* cur_;
};

// One store-and-forward exchange on Topo's layout: blocks of m elements.
template <Topology Topo, Transport C, class T>
class store_and_forward_run {
  using geometry = dim_step<Topo::kind>;
  using personal = dim_step<Topo::kind>;
  using rel = relative<Topo>;

 public:
  store_and_forward_run(C& c, const layout& l, std::size_t m, ring_way way, int tag)
      : c_(c), l_(l), m_(m), way_(way), tag_(tag), v_(c.rank()), plans_(make_plans(l)) {}

  void operator()(std::span<const T> in, std::span<T> out) const {
    const scratch<T> tmp(store_and_forward_scratch(l_.p, m_));
    rotation<T> rot(out.data(), tmp.data(), to_size(l_.p) * m_, l_.ndims);
    arrange(in, rot.first());
    for_each_dim<Topo>(l_, [&](int j) {
      const auto b = rot.enter(j);
      exchange(j, b.hold);
      if (j + 1 < l_.ndims) {  // rearranged for the next dimension
        const dim_plan& next = plans_[to_size(j + 1)];
        collect(j, b.hold, b.next, [&](int i) { return next.order[to_size(i)]; });
      } else {  // out block s (b.next is out): the packet from s
        collect(j, b.hold, b.next, [&](int s) { return rel::to_virtual(l_, v_, s); });
      }
    });
  }

 private:
  // positions [first, last) of a buffer of p blocks
  std::span<T> blocks(T* buf, int first, int last) const {
    return {buf + to_size(first) * m_, to_size(last - first) * m_};
  }
  std::span<T> block(T* buf, int position) const { return blocks(buf, position, position + 1); }

  // The initial arrangement: slot rho holds the block for the rank at
  // relative address rho from this one.
  void arrange(std::span<const T> in, T* cur) const {
    const dim_plan& d0 = plans_[0];
    for (int i = 0; i < l_.p; ++i) {
      const int dest = rel::to_real(l_, d0.order[to_size(i)], v_);
      copy_to(in.subspan(to_size(dest) * m_, m_), block(cur, i));
    }
  }

  // The sub-steps of dimension j: to the rank at relative address hop from
  // this one, from the rank this one is at hop from.
  void exchange(int j, const std::array<T*, 2>& hold) const {
    const std::vector<int>& off = plans_[to_size(j)].off;
    for_each_sub_step<Topo::kind>(
        l_, j, way_, [&](int g) { return off[to_size(g)]; },
        [&](const step& s, const personal_move& mv) {
          c_.sendrecv(rel::to_real(l_, mv.hop, v_),
                      cspan(blocks(hold[to_size(mv.src)], s.first, s.last)),
                      rel::to_virtual(l_, v_, mv.hop),
                      blocks(hold[to_size(mv.dst)], s.first, s.last), tag_);
        });
  }

  // Block i of dst: the packet with address rho_at(i), from where dimension j
  // left it.
  template <class RhoAt>
  void collect(int j, const std::array<T*, 2>& hold, T* dst, const RhoAt& rho_at) const {
    const dim_plan& d = plans_[to_size(j)];
    for (int i = 0; i < l_.p; ++i) {
      const int rho = rho_at(i);
      const int g = geometry::coord(l_, rho, j);
      T* const holder = hold[to_size(personal::holder(l_, j, g, way_))];
      move_to(block(holder, d.pos[to_size(rho)]), block(dst, i));
    }
  }

  C& c_;
  const layout& l_;
  std::size_t m_;
  ring_way way_;
  int tag_;
  int v_;
  std::vector<dim_plan> plans_;
};

template <Topology Topo, Transport C, class T>
void store_and_forward(C& c, const layout& l, in_out<T> io, ring_way way, int tag) {
  const std::size_t m = io.in.size() / to_size(l.p);
  store_and_forward_run<Topo, C, T>(c, l, m, way, tag)(io.in, io.out);
}

// ---- pairwise exchange -------------------------------------------------------------
// The order in which a direct exchange meets its partners: step j = 1 .. p - 1
// sends to partner_to(o, v, j, p) and receives from partner_from(o, v, j, p).
//   pairwise  pair_to and pair_from (topology/topology.hpp): rank XOR j, or
//             rank + j and rank - j mod p (Algorithm 4.10)
//   naive     the lecture's naive exchange: ranks 0, 1, ..., p - 1 in that
//             order, this one skipped, both ways, so every rank sends to rank
//             0 first. Deadlock-free with blocking exchanges too: every rank
//             meets its pairs {u, w} in increasing (min, max) order.
enum class exchange_order { pairwise, naive };
inline int partner_to(exchange_order o, int v, int j, int p) {
  if (o == exchange_order::naive) return j - 1 < v ? j - 1 : j;
  return pair_to(v, j, p);
}
inline int partner_from(exchange_order o, int v, int j, int p) {
  if (o == exchange_order::naive) return j - 1 < v ? j - 1 : j;
  return pair_from(v, j, p);
}

// Whether an empty block is a message.
//   skipped  the ranks agree on every size (all_to_all, or all_to_all_v after
//            its count exchange): an empty block is no message at all
//   sent     every pair exchanges a message, empty ones too, so that the
//            receiver's size check catches every disagreement
enum class empty_blocks { skipped, sent };

// The blocks of a direct exchange, of any sizes: send(to) is this rank's block
// for rank `to`, recv(from) the buffer for rank `from`'s block, local() copies
// the rank's own block.
template <class Send, class Recv, class Local>
struct exchange_blocks {
  Send send;
  Recv recv;
  Local local;
};
template <class Send, class Recv, class Local>
exchange_blocks(Send, Recv, Local) -> exchange_blocks<Send, Recv, Local>;

// Non-blocking transport: every send is posted at once (schedule order), then
// local(), then the blocks are received in schedule order (the first to be
// sent to this rank first), then the sends are completed. A receive (or
// local()) that throws message_error does not end the exchange: the remaining
// receives still run and every send completes before the first such error is
// rethrown, so no peer is left waiting for this rank and no message is left
// unreceived.
template <class T, Transport C, class Blocks>
void direct_exchange_posted(C& c, const Blocks& b, empty_blocks e, exchange_order o, int tag) {
  const int p = c.size();
  const int v = c.rank();
  const bool skip = e == empty_blocks::skipped;
  send_batch<C, T> sb(c, to_size(p - 1));
  for (int j = 1; j < p; ++j) {
    const int to = partner_to(o, v, j, p);
    const std::span<const T> s = b.send(to);
    if (!skip || !s.empty()) sb.send(to, tag, s);
  }
  std::exception_ptr err;
  try {
    b.local();
  } catch (const message_error&) {  // an own block of the wrong size: the rest still runs
    err = std::current_exception();
  }
  for (int j = 1; j < p; ++j) {
    const int from = partner_from(o, v, j, p);
    const std::span<T> r = b.recv(from);
    if (skip && r.empty()) continue;
    try {
      c.recv(from, tag, r);
    } catch (const message_error&) {
      if (!err) err = std::current_exception();
    }
  }
  sb.wait();
  if (err) std::rethrow_exception(err);
}

// Blocking transport: local(), then p - 1 rounds of sendrecv (an empty side
// left out when empty blocks are skipped: a rank that only sends targets one
// that receives from it in the same round, so no wait can cycle); an error
// ends it at once.
template <class T, Transport C, class Blocks>
void direct_exchange_blocking(C& c, const Blocks& b, empty_blocks e, exchange_order o, int tag) {
  const int p = c.size();
  const int v = c.rank();
  const bool skip = e == empty_blocks::skipped;
  b.local();
  for (int j = 1; j < p; ++j) {
    const int to = partner_to(o, v, j, p);
    const int from = partner_from(o, v, j, p);
    const std::span<const T> s = b.send(to);
    const std::span<T> r = b.recv(from);
    transfer(c, skip && s.empty() ? none : to, s, skip && r.empty() ? none : from, r, tag);
  }
}

// The direct exchange of the blocks b, its partners in order o.
template <class T, Transport C, class Blocks>
void direct_exchange(C& c, const Blocks& b, empty_blocks e, int tag,
                     exchange_order o = exchange_order::pairwise) {
  if constexpr (send_batch<C, T>::nonblocking)
    direct_exchange_posted<T>(c, b, e, o, tag);
  else
    direct_exchange_blocking<T>(c, b, e, o, tag);
}

// Blocks go straight from in to out: no copy but the rank's own block.
// exchange_order::pairwise: algorithm::pairwise; exchange_order::naive:
// algorithm::naive, the lecture's naive exchange.
template <Transport C, class T>
void direct(C& c, in_out<T> io, std::size_t m, exchange_order o, int tag) {
  const std::span<const T> in = io.in;
  const std::span<T> out = io.out;
  const std::size_t self = to_size(c.rank()) * m;
  direct_exchange<T>(c,
                     exchange_blocks{[&](int to) { return in.subspan(to_size(to) * m, m); },
                                     [&](int from) { return out.subspan(to_size(from) * m, m); },
                                     [&] { copy_to(in.subspan(self, m), out.subspan(self, m)); }},
                     empty_blocks::skipped, tag, o);
}

// The whole fixed-size exchange, once the arguments are checked: in and out
// hold p blocks of m elements, or are the same elements (in-place use: in is
// read from a private copy). algo (plan::personalized::choose_for): store_and_forward,
// bidirectional, pairwise or naive.
template <Topology Topo, Transport C, class T>
void all_to_all(C& c, const layout& l, std::span<const T> in, std::span<T> out, algorithm algo,
                int tag) {
  const std::size_t m = in.size() / to_size(l.p);
  if (m == 0) return;
  if (l.p == 1) return copy_to(in, out);
  std::optional<detail::scratch<T>> copy;
  if (in.data() == out.data()) {
    copy.emplace(in.size());
    copy_to(in, copy->span());
    in = copy->span();
  }
  if (algo == algorithm::store_and_forward || algo == algorithm::bidirectional)
    store_and_forward<Topo>(c, l, in_out<T>{in, out},
                            algo == algorithm::bidirectional ? ring_way::both : ring_way::forward,
                            tag);
  else
    direct(c, in_out<T>{in, out}, m,
           algo == algorithm::naive ? exchange_order::naive : exchange_order::pairwise, tag);
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::detail::personalized
