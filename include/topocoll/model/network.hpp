#pragma once
// model::network: the physical network the simulator (model/simulate.hpp)
// routes messages over. Processor i of the network hosts rank i; a network
// may have more processors than ranks, never fewer.
//
//   network::ring(p)              p processors in a ring; a message takes the
//                                 shorter way, a tie the way of increasing rank
//   network::mesh({a, b, ...})    a mesh with wrap-around (a torus), sides as
//                                 Mesh<K>::sides gives them: row-major, the last
//                                 side varies fastest; dimension-order routing,
//                                 the fastest-varying dimension first (stride 1,
//                                 as layout dimension 0), each the shorter way
//   network::linear(p)            p processors in a line, no wrap-around (Grama's
//                                 linear array): straight along it
//   network::open_mesh({a, b, ...})  a mesh without wrap-around, sides and
//                                 dimension-order routing as mesh's, each
//                                 dimension straight along its line
//   network::hypercube(d)         2^d processors; E-cube routing (differing bits,
//                                 lowest first)
//   network::tree(p)              p processors at the leaves of a balanced binary
//                                 tree of switches (Grama Figure 4.7): up to the
//                                 lowest common switch and down again
//   network::complete(p)          a link between every ordered pair
//   network::parse(spec, p)       "ring", "linear", "mesh:4x4", "open_mesh:4x4",
//                                 "hypercube", "tree", "complete" (the
//                                 program's --network)
//
// Links are directed: a route is the list of link ids route(src, dst) passes;
// links() bounds the ids. ports() says how a rank's posted sends go out:
//   ports::multi   the kernels see a transport with non-blocking sends (as on
//                  mpi::Comm and loopback::Comm) and a rank's posted sends travel
//                  at once, each on its own route (the default)
//   ports::single  the kernels see a blocking transport: one call at a time per
//                  rank, the seeds' single-ported node
// receives() says how a rank takes the messages that reach it:
//   receives::at_once     every message on its own route, at once (the default)
//   receives::one_at_a_time  one at a time, in the order they were sent: a
//                  message starts once the last one sent to the same rank
//                  has arrived (the single-ported receive, where the naive
//                  all_to_all's p - 1 first messages queue at rank 0)
// routing() says what a message pays for its hops (model/timeline.hpp):
//   routing::cut_through        t_s + t_h * hops + t_w * m: the head opens the
//                               route, the body follows it (the default)
//   routing::store_and_forward  hops * (t_s + t_w * m) + t_h * hops: every
//                               processor on the way takes the whole message
//                               before sending it on (ICS 632's q(L + m b))

#include <bit>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "../version.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::model {

enum class ports { multi, single };
enum class receives { at_once, one_at_a_time };
enum class routing { cut_through, store_and_forward };

class network {
 public:
  enum class shape { ring, mesh, hypercube, tree, complete, linear, open_mesh };

  static network ring(int p) { return network(shape::ring, {positive("ring", p)}); }
  static network mesh(std::vector<int> sides) {
    if (sides.empty())
      throw std::invalid_argument("topocoll::model::network::mesh: no sides given");
    for (int s : sides) positive("mesh side", s);
    return network(shape::mesh, std::move(sides));
  }
  static network mesh(std::initializer_list<int> sides) { return mesh(std::vector<int>(sides)); }
  static network linear(int p) { return network(shape::linear, {positive("linear", p)}); }
  static network open_mesh(std::vector<int> sides) {
    network n = mesh(std::move(sides));
    n.kind_ = shape::open_mesh;
    return n;
  }
  static network open_mesh(std::initializer_list<int> sides) {
    return open_mesh(std::vector<int>(sides));
  }
  static network hypercube(int d) {
    if (d < 0 || d > 28)
      throw std::invalid_argument("topocoll::model::network::hypercube: dimension " +
                                  std::to_string(d) + " is outside [0, 28]");
    return network(shape::hypercube, {d});
  }
  static network tree(int p) { return network(shape::tree, {positive("tree", p)}); }
  static network complete(int p) { return network(shape::complete, {positive("complete", p)}); }

  // The smallest network of the named shape that holds p processors (mesh:
  // "mesh:AxB[x...]" names the sides; plain "mesh" is square-ish via the
  // factors of p, as Mesh<2>).
  static network parse(std::string_view spec, int p);

  network& with(ports k) {
    ports_ = k;
    return *this;
  }
  ports port_model() const { return ports_; }
  network& with(receives k) {
    receives_ = k;
    return *this;
  }
  receives receive_model() const { return receives_; }
  network& with(routing k) {
    routing_ = k;
    return *this;
  }
  routing routing_model() const { return routing_; }
  shape kind() const { return kind_; }
  int processors() const { return n_; }
  const std::vector<int>& sides() const { return sides_; }
  std::string name() const;

  // Directed link ids lie in [0, links()).
  std::uint64_t links() const;

  static constexpr std::uint64_t no_link = ~std::uint64_t{0};

  // The first link of route(src, dst) (the port a message leaves by), or
  // no_link when src == dst; without walking the route.
  std::uint64_t first_link(int src, int dst) const {
    if (src == dst) return no_link;
    const auto s = static_cast<std::uint64_t>(src);
    switch (kind_) {
      case shape::ring:
      case shape::linear:
        return 2 * s + (up(src, dst, n_, 1, wraps()) ? 0 : 1);
      case shape::mesh:
      case shape::open_mesh: {
        const auto k = static_cast<std::uint64_t>(sides_.size());
        int stride = 1;
        for (std::uint64_t dim = 0; dim < k; ++dim) {
          const int n = sides_[static_cast<std::size_t>(k - 1 - dim)];
          if ((src / stride) % n != (dst / stride) % n)
            return 2 * (s * k + dim) + (up(src, dst, n, stride, wraps()) ? 0 : 1);
          stride *= n;
        }
        return no_link;
      }
      case shape::hypercube:
        return s * static_cast<std::uint64_t>(sides_[0]) +
               static_cast<std::uint64_t>(std::countr_zero(static_cast<unsigned>(src ^ dst)));
      case shape::tree:
        return 2 * (static_cast<std::uint64_t>(leaves_) + s);
      case shape::complete:
        return s * static_cast<std::uint64_t>(n_) + static_cast<std::uint64_t>(dst);
    }
    return no_link;
  }

  // Calls f(link id) for every link of the route from src to dst, in order;
  // returns the number of hops.
  template <class F>
  int route(int src, int dst, F&& f) const {
    switch (kind_) {
      case shape::ring:
      case shape::linear:
        return ring_route(src, dst, n_, 1, 0, 1, wraps(), f);
      case shape::mesh:
      case shape::open_mesh:
        return mesh_route(src, dst, f);
      case shape::hypercube:
        return cube_route(src, dst, f);
      case shape::tree:
        return tree_route(src, dst, f);
      case shape::complete:
        if (src == dst) return 0;
        f(static_cast<std::uint64_t>(src) * static_cast<std::uint64_t>(n_) +
          static_cast<std::uint64_t>(dst));
        return 1;
    }
    return 0;
  }

 private:
  network(shape k, std::vector<int> sides) : kind_(k), sides_(std::move(sides)) {
    n_ = 1;
    if (k == shape::hypercube) {
      n_ = 1 << sides_[0];
    } else if (k == shape::mesh || k == shape::open_mesh) {
      long long n = 1;
      for (int s : sides_) {
        n *= s;
        if (n > (1 << 28))
          throw std::invalid_argument("topocoll::model::network::mesh: more than 2^28 processors");
      }
      n_ = static_cast<int>(n);
    } else {
      n_ = sides_[0];
    }
    leaves_ = 1;
    while (leaves_ < n_) leaves_ *= 2;
  }

  static int positive(const char* what, int p) {
    if (p < 1 || p > (1 << 28))
      throw std::invalid_argument(std::string("topocoll::model::network::") + what + ": " +
                                  std::to_string(p) + " processors, outside [1, 2^28]");
    return p;
  }

  // Whether the links wrap around (ring, mesh) or end at the edges (linear,
  // open_mesh).
  bool wraps() const { return kind_ == shape::ring || kind_ == shape::mesh; }

  // Whether the way from src to dst along a ring (wrap) or line of n
  // positions, stride apart, goes up: on a ring the shorter way, a tie up;
  // on a line towards dst.
  static bool up(int src, int dst, int n, int stride, bool wrap) {
    const int a = (src / stride) % n, b = (dst / stride) % n;
    if (!wrap) return b >= a;
    return 2 * (((b - a) % n + n) % n) <= n;
  }

  // Along one ring or line of n positions whose processors lie `stride`
  // apart, from coordinate a to b; link id 2 * (node * ndims + dim) + direction.
  template <class F>
  static int ring_route(int src, int dst, int n, int stride, int dim, int ndims, bool wrap, F& f) {
    const int a = (src / stride) % n, b = (dst / stride) % n;
    const int fwd = ((b - a) % n + n) % n;
    const bool up = network::up(src, dst, n, stride, wrap);
    const int hops = up ? fwd : n - fwd;
    int node = src, c = a;
    for (int h = 0; h < hops; ++h) {
      f(2 * (static_cast<std::uint64_t>(node) * static_cast<std::uint64_t>(ndims) +
             static_cast<std::uint64_t>(dim)) +
        (up ? 0 : 1));
      const int next = up ? (c + 1) % n : (c - 1 + n) % n;
      node += (next - c) * stride;
      c = next;
    }
    return hops;
  }

  template <class F>
  int mesh_route(int src, int dst, F& f) const {
    const int k = static_cast<int>(sides_.size());
    int hops = 0, stride = 1, at = src;
    for (int j = k - 1; j >= 0; --j) {  // the last side varies fastest: dimension 0
      const int dim = k - 1 - j, n = sides_[static_cast<std::size_t>(j)];
      const int target = at + ((dst / stride) % n - (at / stride) % n) * stride;
      hops += ring_route(at, target, n, stride, dim, k, wraps(), f);
      at = target;
      stride *= n;
    }
    return hops;
  }

  template <class F>
  int cube_route(int src, int dst, F& f) const {
    const int d = sides_[0];
    int at = src, hops = 0;
    for (int j = 0; j < d; ++j)
      if (((at ^ dst) >> j) & 1) {
        f(static_cast<std::uint64_t>(at) * static_cast<std::uint64_t>(d) +
          static_cast<std::uint64_t>(j));
        at ^= 1 << j;
        ++hops;
      }
    return hops;
  }

  // Heap numbering: switches 1 .. leaves - 1, processor i at leaves + i; node
  // n's link up is 2n, its link down 2n + 1.
  template <class F>
  int tree_route(int src, int dst, F& f) const {
    std::uint64_t a = static_cast<std::uint64_t>(leaves_ + src),
                  b = static_cast<std::uint64_t>(leaves_ + dst);
    int levels = 0;
    for (std::uint64_t x = a, y = b; x != y; x /= 2, y /= 2) ++levels;
    for (int i = 0; i < levels; ++i, a /= 2) f(2 * a);
    for (int i = levels - 1; i >= 0; --i) f(2 * (b >> i) + 1);
    return 2 * levels;
  }

  shape kind_;
  std::vector<int> sides_;
  int n_ = 1;
  int leaves_ = 1;
  ports ports_ = ports::multi;
  receives receives_ = receives::at_once;
  routing routing_ = routing::cut_through;
};

inline std::uint64_t network::links() const {
  const auto n = static_cast<std::uint64_t>(n_);
  switch (kind_) {
    case shape::ring:
    case shape::linear:
      return 2 * n;
    case shape::mesh:
    case shape::open_mesh:
      return 2 * n * sides_.size();
    case shape::hypercube:
      return n * static_cast<std::uint64_t>(sides_[0]);
    case shape::tree:
      return 4 * static_cast<std::uint64_t>(leaves_);
    case shape::complete:
      return n * n;
  }
  return 0;
}

inline std::string network::name() const {
  switch (kind_) {
    case shape::ring:
      return "ring(" + std::to_string(n_) + ")";
    case shape::linear:
      return "linear(" + std::to_string(n_) + ")";
    case shape::mesh:
    case shape::open_mesh: {
      std::string s = kind_ == shape::mesh ? "mesh(" : "open_mesh(";
      for (std::size_t i = 0; i < sides_.size(); ++i)
        s += (i ? "x" : "") + std::to_string(sides_[i]);
      return s + ")";
    }
    case shape::hypercube:
      return "hypercube(" + std::to_string(sides_[0]) + ")";
    case shape::tree:
      return "tree(" + std::to_string(n_) + ")";
    case shape::complete:
      return "complete(" + std::to_string(n_) + ")";
  }
  return "?";
}

namespace detail {
// The sides of "mesh:AxB..." after the colon at `colon`; none given: the
// square-ish pair from the factors of p, as Mesh<2>.
inline std::vector<int> parse_sides(std::string_view spec, std::size_t colon, int p) {
  if (colon == std::string_view::npos) {
    int a = 1;  // the largest factor of p not above sqrt(p)
    for (int f = 1; static_cast<long long>(f) * f <= p; ++f)
      if (p % f == 0) a = f;
    return {p / a, a};
  }
  std::vector<int> sides;
  std::string rest(spec.substr(colon + 1));
  std::size_t at = 0;
  while (at <= rest.size()) {
    const std::size_t x = rest.find('x', at);
    const std::string part = rest.substr(at, x == std::string::npos ? std::string::npos : x - at);
    try {
      std::size_t used = 0;
      sides.push_back(std::stoi(part, &used));
      if (used != part.size()) throw std::invalid_argument(part);
    } catch (const std::exception&) {
      throw std::invalid_argument("topocoll::model::network::parse: mesh side \"" + part +
                                  "\" in \"" + std::string(spec) + "\" is not a number");
    }
    if (x == std::string::npos) break;
    at = x + 1;
  }
  return sides;
}
}  // namespace detail

inline network network::parse(std::string_view spec, int p) {
  const auto colon = spec.find(':');
  const std::string_view head = spec.substr(0, colon);
  if (head == "ring") return ring(p);
  if (head == "linear") return linear(p);
  if (head == "tree") return tree(p);
  if (head == "complete") return complete(p);
  if (head == "hypercube") {
    int d = 0;
    while ((1LL << d) < p) ++d;
    return hypercube(d);
  }
  if (head == "mesh") return mesh(detail::parse_sides(spec, colon, p));
  if (head == "open_mesh") return open_mesh(detail::parse_sides(spec, colon, p));
  throw std::invalid_argument(
      "topocoll::model::network::parse: unknown network shape \"" + std::string(spec) +
      "\" (ring, linear, mesh, mesh:AxB..., open_mesh, open_mesh:AxB..., hypercube, tree, "
      "complete)");
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE::model
