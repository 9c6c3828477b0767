#pragma once
// The nonblocking collectives (MPI-3's MPI_Ibcast, ...): the blocking call's
// arguments, a topocoll::request back at once (collectives/requests.hpp).
//
//   tc::request r = tc::iall_reduce<Topo>(c, in, out, op);
//   /* compute; leave in and out alone */
//   r.wait();
//
// The i-call runs the blocking call's argument checks, with its words, and
// queues the collective on this thread (core/progress.hpp): test() and wait()
// of a request, blocking collectives and the transport's waits advance it,
// as a fiber on MPI. Buffers are held as spans: a temporary container as an
// input is refused at compile time, since it would die before the collective
// runs. The progress rule and what it means for overlap: doc/nonblocking.md.

#include <memory>
#include <ranges>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "../core/concepts.hpp"
#include "../core/options.hpp"
#include "../core/progress.hpp"
#include "../core/spares.hpp"
#include "../topology/topology.hpp"
#include "../version.hpp"
#include "all_gather.hpp"
#include "all_reduce.hpp"
#include "all_to_all.hpp"
#include "all_to_all_v.hpp"
#include "arguments.hpp"
#include "broadcast.hpp"
#include "gather.hpp"
#include "reduce.hpp"
#include "reduce_scatter.hpp"
#include "requests.hpp"
#include "scan.hpp"
#include "scatter.hpp"

namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE {

namespace detail {

// A buffer a started collective may keep: a named container, or a view.
template <class B>
inline constexpr bool lasting_buffer =
    std::is_lvalue_reference_v<B> || std::ranges::borrowed_range<std::remove_cvref_t<B>>;

// Refuses, at compile time, an input that would not last.
template <class B>
constexpr void check_lasting() {
  static_assert(lasting_buffer<B>,
                "topocoll: the input of a nonblocking or persistent collective is a temporary "
                "that would die before the collective runs; pass a named container or a span");
}

// A started collective and its steps (a callable of a stage, holding the
// collective's arguments, buffers as spans), in one allocation.
template <class Steps>
struct started_steps final : started_collective {
  explicit started_steps(Steps s) : steps(std::move(s)) {
    run = [](started_collective& self) { static_cast<started_steps&>(self).steps(stage::started); };
  }
  Steps steps;
};

// The collective `steps` on c, its arguments checked already, to run later
// as one started collective named `name`.
template <Transport C, class Steps>
std::shared_ptr<started_collective> to_start(const C& c, std::string_view name, Steps steps) {
  auto s = std::allocate_shared<started_steps<Steps>>(recycling_allocator<started_steps<Steps>>{},
                                                      std::move(steps));
  s->name = name;
  s->comm = &c;
  s->resumable = ResumableTransport<C>;
  return s;
}

// The same, checked now.
template <Transport C, class Steps>
std::shared_ptr<started_collective> checked_start(const C& c, std::string_view name, Steps steps) {
  steps(stage::check);
  return to_start(c, name, std::move(steps));
}

template <Transport C, class Steps>
request start_nonblocking(const C& c, std::string_view name, Steps steps) {
  std::shared_ptr<started_collective> s = checked_start(c, name, std::move(steps));
  started_on_this_thread().push(*s);
  return request(std::move(s));
}

}  // namespace detail

template <Topology Topo, Transport C, OutputBuffer Buf>
request ibroadcast(C& c, Buf&& buffer, int root, const options& opt = detail::default_options) {
  return detail::start_nonblocking(
      c, "ibroadcast",
      [&c, b = detail::out_span(buffer), root, opt = detail::kept_options(opt)](detail::stage s) {
        detail::checked_broadcast<Topo>(c, b, root, opt, s);
      });
}

template <Topology Topo, Transport C, class In, class Out, class Op>
requires ReductionBuffers<In, Out, Op> request ireduce(
    C& c, In&& input, Out&& output, Op op, int root, const options& opt = detail::default_options) {
  detail::check_lasting<In>();
  return detail::start_nonblocking(c, "ireduce",
                                   [&c, in = detail::in_span(input), out = detail::out_span(output),
                                    op, root, opt = detail::kept_options(opt)](detail::stage s) {
                                     detail::checked_reduce<Topo>(c, in, out, op, root, opt, s);
                                   });
}

template <Topology Topo, Transport C, class In, class Out, class Op>
requires ReductionBuffers<In, Out, Op> request
iall_reduce(C& c, In&& input, Out&& output, Op op, const options& opt = detail::default_options) {
  detail::check_lasting<In>();
  return detail::start_nonblocking(c, "iall_reduce",
                                   [&c, in = detail::in_span(input), out = detail::out_span(output),
                                    op, opt = detail::kept_options(opt)](detail::stage s) {
                                     detail::checked_all_reduce<Topo>(c, in, out, op, opt, s);
                                   });
}

template <Topology Topo, Transport C, class In, class Out>
requires BufferPair<In, Out> request iall_gather(C& c, In&& input, Out&& output,
                                                 const options& opt = detail::default_options) {
  detail::check_lasting<In>();
  return detail::start_nonblocking(c, "iall_gather",
                                   [&c, in = detail::in_span(input), out = detail::out_span(output),
                                    opt = detail::kept_options(opt)](detail::stage s) {
                                     detail::checked_all_gather<Topo>(c, in, out, opt, s);
                                   });
}

template <Topology Topo, Transport C, class In, class Out, class Op>
requires ReductionBuffers<In, Out, Op> request ireduce_scatter(
    C& c, In&& input, Out&& output, Op op, const options& opt = detail::default_options) {
  detail::check_lasting<In>();
  return detail::start_nonblocking(c, "ireduce_scatter",
                                   [&c, in = detail::in_span(input), out = detail::out_span(output),
                                    op, opt = detail::kept_options(opt)](detail::stage s) {
                                     detail::checked_reduce_scatter<Topo>(c, in, out, op, opt, s);
                                   });
}

template <Topology Topo, Transport C, class In, class Out, class Op>
requires ReductionBuffers<In, Out, Op> request iscan(C& c, In&& input, Out&& output, Op op,
                                                     const options& opt = detail::default_options) {
  detail::check_lasting<In>();
  return detail::start_nonblocking(
      c, "iscan",
      [&c, in = detail::in_span(input), out = detail::out_span(output), op,
       opt = detail::kept_options(opt)](detail::stage s) {
        detail::checked_scan<Topo, detail::prefix::scan_kind::inclusive>(c, in, out, op, opt, s);
      });
}

template <Topology Topo, Transport C, class In, class Out, class Op>
requires ReductionBuffers<In, Out, Op> request iexclusive_scan(
    C& c, In&& input, Out&& output, Op op, const options& opt = detail::default_options) {
  detail::check_lasting<In>();
  return detail::start_nonblocking(
      c, "iexclusive_scan",
      [&c, in = detail::in_span(input), out = detail::out_span(output), op,
       opt = detail::kept_options(opt)](detail::stage s) {
        detail::checked_scan<Topo, detail::prefix::scan_kind::exclusive>(c, in, out, op, opt, s);
      });
}

template <Topology Topo, Transport C, class In, class Out>
requires BufferPair<In, Out> request iscatter(C& c, In&& input, Out&& output, int root,
                                              const options& opt = detail::default_options) {
  detail::check_lasting<In>();
  return detail::start_nonblocking(c, "iscatter",
                                   [&c, in = detail::in_span(input), out = detail::out_span(output),
                                    root, opt = detail::kept_options(opt)](detail::stage s) {
                                     detail::checked_scatter<Topo>(c, in, out, root, opt, s);
                                   });
}

template <Topology Topo, Transport C, class In, class Out>
requires BufferPair<In, Out> request igather(C& c, In&& input, Out&& output, int root,
                                             const options& opt = detail::default_options) {
  detail::check_lasting<In>();
  return detail::start_nonblocking(c, "igather",
                                   [&c, in = detail::in_span(input), out = detail::out_span(output),
                                    root, opt = detail::kept_options(opt)](detail::stage s) {
                                     detail::checked_gather<Topo>(c, in, out, root, opt, s);
                                   });
}

template <Topology Topo, Transport C, class In, class Out>
requires BufferPair<In, Out> request iall_to_all(C& c, In&& input, Out&& output,
                                                 const options& opt = detail::default_options) {
  detail::check_lasting<In>();
  return detail::start_nonblocking(c, "iall_to_all",
                                   [&c, in = detail::in_span(input), out = detail::out_span(output),
                                    opt = detail::kept_options(opt)](detail::stage s) {
                                     detail::checked_all_to_all<Topo>(c, in, out, opt, s);
                                   });
}

// all_to_all_v with the receive counts known (MPI_Ialltoallv's contract);
// the count arrays are buffers too, held until the collective completes.
template <Topology Topo, Transport C, InputBuffer In, InputBuffer SendCounts, OutputBuffer Out,
          InputBuffer RecvCounts>
requires std::same_as<buffer_value_t<In>, buffer_value_t<Out>> &&
    std::same_as<buffer_value_t<SendCounts>, std::size_t> &&
    std::same_as<buffer_value_t<RecvCounts>, std::size_t>
        request iall_to_all_v(C& c, In&& input, SendCounts&& send_counts, Out&& output,
                              RecvCounts&& recv_counts,
                              const options& opt = detail::default_options) {
  detail::check_lasting<In>();
  detail::check_lasting<SendCounts>();
  detail::check_lasting<RecvCounts>();
  return detail::start_nonblocking(
      c, "iall_to_all_v",
      [&c, in = detail::in_span(input), sc = detail::in_span(send_counts),
       out = detail::out_span(output), rc = detail::in_span(recv_counts),
       opt = detail::kept_options(opt)](detail::stage s) {
        detail::checked_all_to_all_v<Topo>(c, in, sc, out, rc, opt, s);
      });
}

}  // namespace topocoll::inline TOPOCOLL_ABI_NAMESPACE
