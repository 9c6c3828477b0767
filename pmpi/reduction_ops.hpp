#pragma once
// The reduction operator of one call, chosen once per call from (datatype,
// MPI_Op) and applied a whole block at a time.
//
// The collectives combine through detail::combine_left / combine_right /
// combine_into (core/elementwise.hpp). For the adapter's element type
// elem<N> and operator block_op, the overloads below are found by
// argument-dependent lookup and are more specialized than the generic
// element loop, so each combination is one call on the whole block: a
// predefined operator's typed loop, or the user's MPI_User_function with
// len = the block's length. The algorithms see the operator as
// ordered_op<operand_order>: with operand_order::free (every predefined
// MPI_Op, and a user one created with commute = 1) topocoll::is_commutative
// holds and they may combine in any order; with operand_order::kept (a user
// operation created with commute = 0) every algorithm keeps rank order.

#include <mpi.h>

#include <cstddef>
#include <cstring>
#include <optional>
#include <span>
#include <type_traits>

#include <topocoll/core/ops.hpp>

#include "adapter.hpp"

namespace topocoll::pmpi {

// An element of N bytes: the datatype's base element (a predefined type, a
// MINLOC/MAXLOC pair, or the whole datatype for a user operation). Byte
// aligned: the typed loops read and write through memcpy.
template <std::size_t N>
struct elem {
  std::byte b[N];
};

// dst[i] = a[i] op b[i] for n elements; dst may be a or b.
using binary_fn = void (*)(const void* a, const void* b, void* dst, std::size_t n);

class block_op {
 public:
  static block_op predefined(binary_fn f, std::size_t elem_bytes) {
    block_op o;
    o.fn_ = f;
    o.bytes_ = elem_bytes;
    return o;
  }
  static block_op user(MPI_User_function* f, bool commute, MPI_Datatype dt,
                       std::size_t elem_bytes) {
    block_op o;
    o.user_ = f;
    o.commute_ = commute;
    o.dt_ = dt;
    o.bytes_ = elem_bytes;
    return o;
  }

  // dst = lo op hi (lo stands for the lower ranks)
  void into(void* dst, const void* lo, const void* hi, std::size_t n) const;
  // acc = x op acc
  void left(void* acc, const void* x, std::size_t n) const;
  // acc = acc op x
  void right(void* acc, const void* x, std::size_t n) const;

  // Whether MPI lets the operands be swapped: a predefined operation, or a
  // user one created with commute = 1.
  bool commutes() const { return fn_ != nullptr || commute_; }

  template <std::size_t N>
  elem<N> operator()(const elem<N>& a, const elem<N>& b) const {
    elem<N> r;
    into(&r, &a, &b, 1);
    return r;
  }

 private:
  // inout = in op inout through the user's function, len <= INT_MAX at a time
  void user_call(const void* in, void* inout, std::size_t n) const;

  binary_fn fn_ = nullptr;
  MPI_User_function* user_ = nullptr;
  bool commute_ = false;
  MPI_Datatype dt_ = MPI_DATATYPE_NULL;
  std::size_t bytes_ = 0;
};

// block_op as the algorithms see it: operand_order::free marks it
// commutative (the specialization of topocoll::is_commutative below).
enum class operand_order { kept, free };
template <operand_order O>
struct ordered_op : block_op {};

template <std::size_t N, operand_order O>
void combine_right(std::span<elem<N>> acc, std::span<const elem<N>> x, const ordered_op<O>& op) {
  op.right(acc.data(), x.data(), acc.size());
}
template <std::size_t N, operand_order O>
void combine_left(std::span<elem<N>> acc, std::span<const elem<N>> x, const ordered_op<O>& op) {
  op.left(acc.data(), x.data(), acc.size());
}
template <std::size_t N, operand_order O>
void combine(std::span<elem<N>> acc, std::span<const elem<N>> x, bool x_is_lower,
             const ordered_op<O>& op) {
  x_is_lower ? op.left(acc.data(), x.data(), acc.size())
             : op.right(acc.data(), x.data(), acc.size());
}
template <std::size_t N, operand_order O>
void combine_into(std::span<elem<N>> dst, std::span<const elem<N>> lo, std::span<const elem<N>> hi,
                  const ordered_op<O>& op) {
  op.into(dst.data(), lo.data(), hi.data(), dst.size());
}

// The reduction a call runs: the operator, the element size and how many
// elements one item of the datatype holds.
struct reduction {
  block_op op;
  std::size_t elem_bytes;
  std::size_t per_item;
};

// The reduction for (dt, op), or the reason to fall back. Throws usage_error
// for a predefined operation that is not defined on dt's base type
// (MPI_ERR_OP). Depends only on dt and op, which MPI requires to agree.
struct reduction_plan {
  std::optional<reduction> run;
  reason why = reason::none;
};
reduction_plan plan_reduction(MPI_Datatype dt, MPI_Op op);

// MPI_Op_create / MPI_Op_free bookkeeping: MPI gives no way back from an
// MPI_Op to its function.
void remember_user_op(MPI_Op op, MPI_User_function* f, bool commute);
void forget_user_op(MPI_Op op);

}  // namespace topocoll::pmpi

template <std::size_t N>
struct topocoll::is_commutative<topocoll::pmpi::ordered_op<topocoll::pmpi::operand_order::free>,
                                topocoll::pmpi::elem<N>> : std::true_type {};
