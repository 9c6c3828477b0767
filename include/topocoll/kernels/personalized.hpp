#pragma once
// Kernels of all-to-all personalized communication (total exchange), Grama et
// al. section 4.5: every rank holds one m-element block for every rank.
//
// Two algorithms:
//  * store_and_forward: a fold over the topology's dimensions. Every packet is
//    named by its *relative address* rho (source -> destination); a rank always
//    holds exactly one packet per rho, so a packet that moves lands in the same
//    slot it left. Per dimension, the packets whose rho has a nonzero digit
//    there travel along that dimension as ONE consolidated message per step;
//    before each dimension the blocks are rearranged (one block copy each) so
//    that the packets of one step are contiguous.
//  * pairwise: p - 1 direct exchanges (Algorithm 4.10). Where the transport
//    has non-blocking sends (core/nonblocking.hpp), every send is posted at
//    once and the blocks are received in the schedule's order, so the p - 1
//    messages overlap instead of running as p - 1 blocking rounds.

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <exception>
#include <functional>
#include <optional>
#include <span>
#include <type_traits>
#include <vector>

#include "../core/concepts.hpp"
#include "../core/errors.hpp"
#include "../core/nonblocking.hpp"
#include "../core/options.hpp"
#include "../core/workspace.hpp"
#include "../topology/layout.hpp"
#include "../topology/topology.hpp"

namespace topocoll::detail::personalized {

// ---- block moves -------------------------------------------------------------
// Every rearrangement is a copy of whole blocks: memcpy for trivially copyable
// T, element copies / moves otherwise.
template <class T>
void copy_n(const T* from, std::size_t n, T* to) {
  if constexpr (std::is_trivially_copyable_v<T>) {
    if (n != 0) std::memcpy(to, from, n * sizeof(T));
  } else {
    std::copy(from, from + n, to);
  }
}
template <class T>
void move_n(T* from, std::size_t n, T* to) {
  if constexpr (std::is_trivially_copyable_v<T>) {
    if (n != 0) std::memcpy(to, from, n * sizeof(T));
  } else {
    std::move(from, from + n, to);
  }
}

// in and out share memory: the kernels read in while they write out.
template <class T>
bool overlap(std::span<const T> a, std::span<const T> b) {
  if (a.empty() || b.empty()) return false;
  std::less<const T*> lt;
  return lt(a.data(), b.data() + b.size()) && lt(b.data(), a.data() + a.size());
}

inline std::size_t to_size(int i) {
  return static_cast<std::size_t>(i);
}

// ---- relative addresses ----------------------------------------------------------
// How rho = source -> destination is formed, which fixes who talks to whom:
//   xor_bits  rho = s XOR d, per bit: partner v XOR 2^i  (hypercube, p = 2^d; Fig. 4.20)
//   torus     rho_j = (d_j - s_j) mod side_j per coordinate: a ring step in each
//             row / column, neighbours only (Ring Fig. 4.18, Mesh Fig. 4.19)
//   modular   rho = (d - s) mod p in the layout's mixed radix: digit z of
//             dimension j goes to rank v + z * stride_j (mod p). Relative
//             addresses >= p do not exist and are skipped, so any p works with
//             ceil(log_radix p) dimensions (Hypercube<> with p not a power of
//             two, Tree<K>: the radix-K analogue of the hypercube algorithm).
enum class addressing { xor_bits, torus, modular };

template <Topology Topo>
constexpr addressing addressing_for(const layout& l) {
  if constexpr (Topo::kind == dim_kind::linear) {
    return addressing::torus;
  } else if constexpr (Topo::kind == dim_kind::binary) {
    return l.extent == l.p ? addressing::xor_bits : addressing::modular;
  } else {
    return addressing::modular;
  }
}

struct addresser {
  const layout* l;
  addressing a;

  // rho of the packet from s to d
  int rel(int s, int d) const {
    switch (a) {
      case addressing::xor_bits:
        return s ^ d;
      case addressing::modular:
        return (d - s + l->p) % l->p;
      case addressing::torus:
        break;
    }
    int rho = 0;
    for (int j = 0; j < l->ndims; ++j) {
      const int r = l->dims[j].radix;
      rho += ((l->coord(d, j) - l->coord(s, j) + r) % r) * l->dims[j].stride;
    }
    return rho;
  }
  // destination of the packet with address rho that starts at s
  int dest(int s, int rho) const {
    switch (a) {
      case addressing::xor_bits:
        return s ^ rho;
      case addressing::modular:
        return (s + rho) % l->p;
      case addressing::torus:
        break;
    }
    int d = 0;
    for (int j = 0; j < l->ndims; ++j) {
      const int r = l->dims[j].radix;
      d += ((l->coord(s, j) + l->coord(rho, j)) % r) * l->dims[j].stride;
    }
    return d;
  }
};

// ---- the block layout per dimension ----------------------------------------------
// While dimension j is processed, the p slots are ordered by (digit_j(rho),
// rho): the packets that share a digit (a "group") are contiguous, and a step
// sends one group (hypercube, modular) or a tail of groups (ring step).
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

// Visits every exchange of store-and-forward in order, with the positions
// [first, last) it sends and receives, without moving data: the same groups as
// the kernel's loop below (which reads them from the plans), so the cost model
// prices exactly what the kernel does (personalized_test checks the two agree).
struct step {
  int dim;    // dimension index
  int t;      // step within the dimension (ring step t, or digit z), from 1
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
template <class F>
void for_each_step(const layout& l, addressing a, F&& f) {
  for (int j = 0; j < l.ndims; ++j) {
    const int r = l.dims[j].radix;
    for (int t = 1; t < r; ++t) {
      // ring step t forwards every packet that still has hops to go in this
      // dimension (groups t..r-1); the others send group t alone.
      const int first = digit_offset(l, j, t);
      const int last = a == addressing::torus ? l.p : digit_offset(l, j, t + 1);
      if (last > first) f(step{j, t, first, last});
    }
  }
}

// ---- store-and-forward ---------------------------------------------------------
// Grama et al. 4.5: Figure 4.18 (ring: one consolidated message of m(p - 1)
// words, m fewer each of the p - 1 steps), Figure 4.19 (mesh: the ring
// algorithm in every row, then every column, generalised to K dimensions) and
// Figure 4.20 (hypercube: log p steps of m p / 2 words, local rearrangement
// before each step).
template <Topology Topo, Transport C, class T>
void store_and_forward(C& c, const layout& l, std::span<const T> in, std::span<T> out,
                       std::size_t m, int tag) {
  const int p = l.p;
  const int v = c.rank();
  const int nd = l.ndims;
  const addressing a = addressing_for<Topo>(l);
  const addresser ad{&l, a};
  const std::vector<dim_plan> plans = make_plans(l);
  const std::size_t pm = to_size(p) * m;
  auto at = [m](T* buf, int position) { return buf + to_size(position) * m; };

  // Three buffers of p blocks: out and two scratch halves. Each dimension reads
  // `cur`, receives into `recv`, and rearranges both into `next`; the rotation
  // is set up so that the last dimension's `next` is out itself.
  const detail::scratch<T> tmp(2 * pm);
  T* const X = tmp.data();
  T* const Y = X + pm;
  T* const O = out.data();
  T* cur = (nd - 1) % 2 == 1 ? O : X;

  {  // the initial arrangement: slot rho holds the block for dest(v, rho)
    const dim_plan& d0 = plans[0];
    for (int i = 0; i < p; ++i)
      copy_n(in.data() + to_size(ad.dest(v, d0.order[to_size(i)])) * m, m, at(cur, i));
  }

  for (int j = 0; j < nd; ++j) {
    T* recv;
    T* next;
    if ((nd - 1 - j) % 2 == 0) {
      recv = cur == X ? Y : X;
      next = O;
    } else {  // cur is out
      recv = X;
      next = Y;
    }
    const dimension dim = l.dims[j];
    const dim_plan& d = plans[to_size(j)];
    const int cj = l.coord(v, j);

    // The per-dimension step, fixed at compile time by the topology.
    // buf(g): the buffer that holds group g once the dimension is done.
    auto holder = [&](int g) -> T* {
      if constexpr (Topo::kind == dim_kind::linear)
        return g % 2 == 0 ? cur : recv;
      else
        return g == 0 ? cur : recv;
    };
    for (int t = 1; t < dim.radix; ++t) {
      int to, from, first, last;
      T* src;
      T* dst;
      if constexpr (Topo::kind == dim_kind::linear) {
        // ring step t: groups t..r-1 move one hop; double-buffered so the
        // message is sent straight from where the previous step received it.
        to = l.with_coord(v, j, (cj + 1) % dim.radix);
        from = l.with_coord(v, j, (cj - 1 + dim.radix) % dim.radix);
        first = d.off[to_size(t)];
        last = d.off[to_size(dim.radix)];
        src = holder(t - 1);
        dst = holder(t);
      } else {
        first = d.off[to_size(t)];
        last = d.off[to_size(t + 1)];
        if constexpr (Topo::kind == dim_kind::binary) {
          if (a == addressing::xor_bits) {
            to = from = v ^ dim.stride;  // Figure 4.20
          } else {
            to = (v + dim.stride) % p;
            from = (v - dim.stride % p + p) % p;
          }
        } else {  // knomial digit t
          const int shift = static_cast<int>((static_cast<long long>(t) * dim.stride) % p);
          to = (v + shift) % p;
          from = (v - shift + p) % p;
        }
        src = cur;
        dst = recv;
      }
      if (last <= first) continue;  // a digit no relative address < p has
      const std::size_t n = to_size(last - first) * m;
      c.sendrecv(to, std::span<const T>(at(src, first), n), from, std::span<T>(at(dst, first), n),
                 tag);
    }

    if (j + 1 < nd) {  // rearrange for the next dimension
      const dim_plan& dn = plans[to_size(j + 1)];
      for (int i = 0; i < p; ++i) {
        const int rho = dn.order[to_size(i)];
        move_n(at(holder(l.coord(rho, j)), d.pos[to_size(rho)]), m, at(next, i));
      }
    } else {  // out block s: the packet from s, address rel(s, v)
      for (int s = 0; s < p; ++s) {
        const int rho = ad.rel(s, v);
        move_n(at(holder(l.coord(rho, j)), d.pos[to_size(rho)]), m, at(O, s));
      }
    }
    cur = next;
  }
}

// ---- pairwise exchange -------------------------------------------------------------
// Algorithm 4.10, all-to-all personalized communication on a d-dimensional
// hypercube: in step j, exchange with rank XOR j (congestion-free under E-cube
// routing). For p not a power of two, the shifted schedule: send to
// (rank + j) mod p, receive from (rank - j) mod p. Blocks go straight from in
// to out: no copy but the rank's own block.
inline int pair_to(int v, int j, int p) {
  return is_pow2(p) ? v ^ j : (v + j) % p;
}
inline int pair_from(int v, int j, int p) {
  return is_pow2(p) ? v ^ j : (v - j + p) % p;
}

// The direct exchange, with blocks of any size: send(to) is this rank's block
// for rank `to`, recv(from) the buffer for rank `from`'s block, local() copies
// the rank's own block. `skip_empty`: the ranks agree on every size (all_to_all,
// or all_to_all_v after its count exchange), so an empty block is no message at
// all; otherwise every pair exchanges a message, empty ones too, so that the
// receiver's size check catches every disagreement.
//
// Non-blocking transport: every send is posted at once (schedule order), then
// local(), then the blocks are received in schedule order (the first to be
// sent to this rank first), then the sends are completed. A receive that
// throws message_error does not end the exchange: the remaining receives still
// run and every send completes before the first such error is rethrown, so no
// peer is left waiting for this rank and no message is left unreceived.
// Blocking transport: local(), then p - 1 rounds of sendrecv (an empty side
// left out when skip_empty: a rank that only sends targets one that receives
// from it in the same round, so no wait can cycle); an error ends it at once.
template <class T, Transport C, class SendBlock, class RecvBlock, class Local>
void direct_exchange(C& c, SendBlock&& send, RecvBlock&& recv, Local&& local, bool skip_empty,
                     int tag) {
  const int p = c.size();
  const int v = c.rank();
  if constexpr (send_batch<C, T>::nonblocking) {
    send_batch<C, T> sb(c, to_size(p - 1));
    for (int j = 1; j < p; ++j) {
      const int to = pair_to(v, j, p);
      const std::span<const T> s = send(to);
      if (!skip_empty || !s.empty()) sb.send(to, tag, s);
    }
    local();
    std::exception_ptr err;
    for (int j = 1; j < p; ++j) {
      const int from = pair_from(v, j, p);
      const std::span<T> r = recv(from);
      if (skip_empty && r.empty()) continue;
      try {
        c.recv(from, tag, r);
      } catch (const message_error&) {
        if (!err) err = std::current_exception();
      }
    }
    sb.wait();
    if (err) std::rethrow_exception(err);
  } else {
    local();
    for (int j = 1; j < p; ++j) {
      const int to = pair_to(v, j, p);
      const int from = pair_from(v, j, p);
      const std::span<const T> s = send(to);
      const std::span<T> r = recv(from);
      if (skip_empty && s.empty() && r.empty()) continue;
      if (skip_empty && s.empty())
        c.recv(from, tag, r);
      else if (skip_empty && r.empty())
        c.send(to, tag, s);
      else
        c.sendrecv(to, s, from, r, tag);
    }
  }
}

// Blocks go straight from in to out: no copy but the rank's own block.
template <Transport C, class T>
void pairwise(C& c, std::span<const T> in, std::span<T> out, std::size_t m, int tag) {
  const std::size_t self = to_size(c.rank()) * m;
  direct_exchange<T>(
      c, [&](int to) { return in.subspan(to_size(to) * m, m); },
      [&](int from) { return out.subspan(to_size(from) * m, m); },
      [&] { copy_n(in.data() + self, m, out.data() + self); }, true, tag);
}

// ---- the choice --------------------------------------------------------------
// The t_s + t_w * bytes model, summed over the messages one rank sends.
inline double store_and_forward_cost(const layout& l, addressing a, std::size_t block_bytes,
                                     const cost_model& cm) {
  double t = 0;
  for_each_step(l, a,
                [&](const step& s) { t += cm.message(to_size(s.last - s.first) * block_bytes); });
  return t;
}
// Blocking rounds: p - 1 messages one after the other.
inline double pairwise_cost(int p, std::size_t block_bytes, const cost_model& cm) {
  return (p - 1) * cm.message(block_bytes);
}
// With every send posted at once the p - 1 latencies overlap: one start-up on
// the critical path, plus each message's own software overhead (posting,
// matching, completing), taken as a quarter of a start-up, plus every word.
// Against the hypercube's store-and-forward this puts the cross-over about
// where MPI libraries switch from the linear exchange to Bruck's log p
// algorithm: under the default model store-and-forward wins only from 14 ranks
// on, for blocks below 100-200 B (p = 14-16) or 400 B (p = 64). Topologies
// with more store-and-forward steps (Ring, Mesh, Tree<K > 2>) cross later.
inline constexpr double posted_message_share = 0.25;
inline double concurrent_pairwise_cost(int p, std::size_t block_bytes, const cost_model& cm) {
  return cm.ts_us + (p - 1) * (posted_message_share * cm.ts_us +
                               cm.tw_us_per_byte * static_cast<double>(block_bytes));
}

// store_and_forward when its fewer start-ups outweigh its larger volume
// (small blocks), pairwise otherwise; a tie goes to pairwise, which copies less.
// `concurrent`: the transport posts pairwise's sends at once (non-blocking).
template <Topology Topo>
algorithm choose(const layout& l, std::size_t block_bytes, const cost_model& cm,
                 bool concurrent = false) {
  if (l.p <= 2) return algorithm::pairwise;
  const double sf = store_and_forward_cost(l, addressing_for<Topo>(l), block_bytes, cm);
  const double pw = concurrent ? concurrent_pairwise_cost(l.p, block_bytes, cm)
                               : pairwise_cost(l.p, block_bytes, cm);
  return sf < pw ? algorithm::store_and_forward : algorithm::pairwise;
}

// The whole fixed-size exchange, once the arguments are checked: in and out
// hold p blocks of m elements, or are the same elements (in-place use: in is
// read from a private copy). opt.algo: automatic, store_and_forward or pairwise.
template <Topology Topo, Transport C, class T>
void all_to_all(C& c, const layout& l, std::span<const T> in, std::span<T> out, const options& opt,
                int tag) {
  const std::size_t m = in.size() / to_size(l.p);
  if (m == 0) return;
  if (l.p == 1) return copy_to(in, out);
  std::optional<detail::scratch<T>> copy;
  if (in.data() == out.data()) {
    copy.emplace(in.size());
    copy_n(in.data(), in.size(), copy->data());
    in = copy->span();
  }
  algorithm algo = opt.algo;
  if (algo == algorithm::automatic)
    algo = choose<Topo>(l, m * sizeof(T), opt.cost, send_batch<C, T>::nonblocking);
  if (algo == algorithm::store_and_forward)
    store_and_forward<Topo>(c, l, in, out, m, tag);
  else
    pairwise(c, in, out, m, tag);
}

}  // namespace topocoll::detail::personalized
