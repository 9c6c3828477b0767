#include "reduction_ops.hpp"

#include <algorithm>
#include <climits>
#include <complex>
#include <cstdint>
#include <mutex>
#include <shared_mutex>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace topocoll::pmpi {
namespace {

enum class op_kind { max, min, sum, prod, land, band, lor, bor, lxor, bxor, maxloc, minloc, none };

// The datatype families of MPI's reduction table, as Open MPI applies them
// (C integers, MPI_CHAR and MPI_BYTE included, take every arithmetic,
// logical and bitwise operation; a Fortran INTEGER no logical one).
enum class family { c_integer, f_integer, floating, complex, logical, pair };

// Arithmetic wraps around instead of overflowing (as MPI implementations do):
// integers are combined as unsigned of at least int's width.
template <class T>
using wide_unsigned =
    std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, std::make_unsigned_t<T>>;

template <class T>
T add(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<wide_unsigned<T>>(a) + static_cast<wide_unsigned<T>>(b));
  else
    return a + b;
}
template <class T>
T mul(T a, T b) {
  if constexpr (std::is_integral_v<T>)
    return static_cast<T>(static_cast<wide_unsigned<T>>(a) * static_cast<wide_unsigned<T>>(b));
  else
    return a * b;
}

template <class V, class I>
struct pair {
  V v;
  I i;
};

template <op_kind K, class T>
T apply(T a, T b) {
  if constexpr (K == op_kind::max) return a > b ? a : b;
  if constexpr (K == op_kind::min) return a < b ? a : b;
  if constexpr (K == op_kind::sum) return add(a, b);
  if constexpr (K == op_kind::prod) return mul(a, b);
  if constexpr (K == op_kind::land) return static_cast<T>((a != T{}) && (b != T{}));
  if constexpr (K == op_kind::lor) return static_cast<T>((a != T{}) || (b != T{}));
  if constexpr (K == op_kind::lxor) return static_cast<T>((a != T{}) != (b != T{}));
  if constexpr (K == op_kind::band) return static_cast<T>(a & b);
  if constexpr (K == op_kind::bor) return static_cast<T>(a | b);
  if constexpr (K == op_kind::bxor) return static_cast<T>(a ^ b);
  if constexpr (K == op_kind::maxloc || K == op_kind::minloc) {
    const bool first = K == op_kind::maxloc ? a.v > b.v : a.v < b.v;
    if (a.v == b.v) return T{a.v, std::min(a.i, b.i)};
    return first ? a : b;
  }
}

// The whole block, read and written through memcpy: no alignment is assumed.
template <op_kind K, class T>
void loop(const void* a, const void* b, void* dst, std::size_t n) {
  const auto* pa = static_cast<const std::byte*>(a);
  const auto* pb = static_cast<const std::byte*>(b);
  auto* pd = static_cast<std::byte*>(dst);
  for (std::size_t i = 0; i < n; ++i) {
    T x, y;
    std::memcpy(&x, pa + i * sizeof(T), sizeof(T));
    std::memcpy(&y, pb + i * sizeof(T), sizeof(T));
    const T r = apply<K>(x, y);
    std::memcpy(pd + i * sizeof(T), &r, sizeof(T));
  }
}

constexpr bool defined_on(op_kind k, family f) {
  switch (f) {
    case family::c_integer:
      return k != op_kind::maxloc && k != op_kind::minloc;
    case family::f_integer:
      return k != op_kind::maxloc && k != op_kind::minloc && k != op_kind::land &&
             k != op_kind::lor && k != op_kind::lxor;
    case family::floating:
      return k == op_kind::max || k == op_kind::min || k == op_kind::sum || k == op_kind::prod;
    case family::complex:
      return k == op_kind::sum || k == op_kind::prod;
    case family::logical:
      return k == op_kind::land || k == op_kind::lor || k == op_kind::lxor;
    case family::pair:
      return k == op_kind::maxloc || k == op_kind::minloc;
  }
  return false;
}

template <op_kind K, class T, family F>
constexpr binary_fn fn_if() {
  if constexpr (defined_on(K, F))
    return &loop<K, T>;
  else
    return nullptr;
}

template <class T, family F>
binary_fn lookup(op_kind k) {
  using o = op_kind;
  constexpr binary_fn fns[] = {
      fn_if<o::max, T, F>(),  fn_if<o::min, T, F>(),    fn_if<o::sum, T, F>(),
      fn_if<o::prod, T, F>(), fn_if<o::land, T, F>(),   fn_if<o::band, T, F>(),
      fn_if<o::lor, T, F>(),  fn_if<o::bor, T, F>(),    fn_if<o::lxor, T, F>(),
      fn_if<o::bxor, T, F>(), fn_if<o::maxloc, T, F>(), fn_if<o::minloc, T, F>()};
  return k == o::none ? nullptr : fns[static_cast<int>(k)];
}

struct scalar {
  MPI_Datatype dt;
  binary_fn (*lookup)(op_kind);
  std::size_t bytes;  // the C type's size: the datatype's extent
  bool is_pair;
  const char* name;
};

template <class T, family F>
scalar entry(MPI_Datatype dt, const char* name) {
  return {dt, &lookup<T, F>, sizeof(T), F == family::pair, name};
}

// Every predefined datatype a predefined operation applies to.
const std::vector<scalar>& scalars() {
  using c = family;
  static const std::vector<scalar> table = [] {
    std::vector<scalar> t = {
        entry<char, c::c_integer>(MPI_CHAR, "MPI_CHAR"),
        entry<signed char, c::c_integer>(MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR"),
        entry<unsigned char, c::c_integer>(MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR"),
        entry<unsigned char, c::c_integer>(MPI_BYTE, "MPI_BYTE"),
        entry<short, c::c_integer>(MPI_SHORT, "MPI_SHORT"),
        entry<unsigned short, c::c_integer>(MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT"),
        entry<int, c::c_integer>(MPI_INT, "MPI_INT"),
        entry<unsigned, c::c_integer>(MPI_UNSIGNED, "MPI_UNSIGNED"),
        entry<long, c::c_integer>(MPI_LONG, "MPI_LONG"),
        entry<unsigned long, c::c_integer>(MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG"),
        entry<long long, c::c_integer>(MPI_LONG_LONG, "MPI_LONG_LONG"),
        entry<long long, c::c_integer>(MPI_LONG_LONG_INT, "MPI_LONG_LONG_INT"),
        entry<unsigned long long, c::c_integer>(MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG"),
        entry<std::int8_t, c::c_integer>(MPI_INT8_T, "MPI_INT8_T"),
        entry<std::int16_t, c::c_integer>(MPI_INT16_T, "MPI_INT16_T"),
        entry<std::int32_t, c::c_integer>(MPI_INT32_T, "MPI_INT32_T"),
        entry<std::int64_t, c::c_integer>(MPI_INT64_T, "MPI_INT64_T"),
        entry<std::uint8_t, c::c_integer>(MPI_UINT8_T, "MPI_UINT8_T"),
        entry<std::uint16_t, c::c_integer>(MPI_UINT16_T, "MPI_UINT16_T"),
        entry<std::uint32_t, c::c_integer>(MPI_UINT32_T, "MPI_UINT32_T"),
        entry<std::uint64_t, c::c_integer>(MPI_UINT64_T, "MPI_UINT64_T"),
        entry<MPI_Aint, c::c_integer>(MPI_AINT, "MPI_AINT"),
        entry<MPI_Offset, c::c_integer>(MPI_OFFSET, "MPI_OFFSET"),
        entry<MPI_Count, c::c_integer>(MPI_COUNT, "MPI_COUNT"),
        entry<float, c::floating>(MPI_FLOAT, "MPI_FLOAT"),
        entry<double, c::floating>(MPI_DOUBLE, "MPI_DOUBLE"),
        entry<long double, c::floating>(MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE"),
        entry<unsigned char, c::logical>(MPI_C_BOOL, "MPI_C_BOOL"),
        entry<unsigned char, c::logical>(MPI_CXX_BOOL, "MPI_CXX_BOOL"),
        entry<std::complex<float>, c::complex>(MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX"),
        entry<std::complex<float>, c::complex>(MPI_C_COMPLEX, "MPI_C_COMPLEX"),
        entry<std::complex<double>, c::complex>(MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX"),
        entry<std::complex<long double>, c::complex>(MPI_C_LONG_DOUBLE_COMPLEX,
                                                     "MPI_C_LONG_DOUBLE_COMPLEX"),
        entry<std::complex<float>, c::complex>(MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX"),
        entry<std::complex<double>, c::complex>(MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX"),
        entry<std::complex<long double>, c::complex>(MPI_CXX_LONG_DOUBLE_COMPLEX,
                                                     "MPI_CXX_LONG_DOUBLE_COMPLEX"),
        entry<pair<float, int>, c::pair>(MPI_FLOAT_INT, "MPI_FLOAT_INT"),
        entry<pair<double, int>, c::pair>(MPI_DOUBLE_INT, "MPI_DOUBLE_INT"),
        entry<pair<long, int>, c::pair>(MPI_LONG_INT, "MPI_LONG_INT"),
        entry<pair<int, int>, c::pair>(MPI_2INT, "MPI_2INT"),
        entry<pair<short, int>, c::pair>(MPI_SHORT_INT, "MPI_SHORT_INT"),
        entry<pair<long double, int>, c::pair>(MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT"),
        // Fortran, through the C bindings (default kinds of gfortran)
        entry<int, c::f_integer>(MPI_INTEGER, "MPI_INTEGER"),
        entry<float, c::floating>(MPI_REAL, "MPI_REAL"),
        entry<double, c::floating>(MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION"),
        entry<int, c::logical>(MPI_LOGICAL, "MPI_LOGICAL"),
        entry<std::complex<float>, c::complex>(MPI_COMPLEX, "MPI_COMPLEX"),
        entry<std::complex<double>, c::complex>(MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX"),
        entry<pair<int, int>, c::pair>(MPI_2INTEGER, "MPI_2INTEGER"),
        entry<pair<float, float>, c::pair>(MPI_2REAL, "MPI_2REAL"),
        entry<pair<double, double>, c::pair>(MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION"),
    };
    // A type this MPI lacks, or whose extent is not its C type's size, is
    // left to MPI.
    std::erase_if(t, [](const scalar& s) {
      MPI_Aint lb = 0, extent = 0;
      return s.dt == MPI_DATATYPE_NULL || PMPI_Type_get_extent(s.dt, &lb, &extent) != MPI_SUCCESS ||
             lb != 0 || static_cast<std::size_t>(extent) != s.bytes;
    });
    return t;
  }();
  return table;
}

const scalar* find_scalar(MPI_Datatype dt) {
  for (const scalar& s : scalars())
    if (s.dt == dt) return &s;
  return nullptr;
}

struct named_op {
  MPI_Op op;
  op_kind kind;
  const char* name;
};
constexpr std::size_t named_op_count = 12;

op_kind kind_of(MPI_Op op, const char** name) {
  const named_op ops[named_op_count] = {
      {MPI_MAX, op_kind::max, "MPI_MAX"},          {MPI_MIN, op_kind::min, "MPI_MIN"},
      {MPI_SUM, op_kind::sum, "MPI_SUM"},          {MPI_PROD, op_kind::prod, "MPI_PROD"},
      {MPI_LAND, op_kind::land, "MPI_LAND"},       {MPI_BAND, op_kind::band, "MPI_BAND"},
      {MPI_LOR, op_kind::lor, "MPI_LOR"},          {MPI_BOR, op_kind::bor, "MPI_BOR"},
      {MPI_LXOR, op_kind::lxor, "MPI_LXOR"},       {MPI_BXOR, op_kind::bxor, "MPI_BXOR"},
      {MPI_MAXLOC, op_kind::maxloc, "MPI_MAXLOC"}, {MPI_MINLOC, op_kind::minloc, "MPI_MINLOC"}};
  for (const named_op& o : ops)
    if (o.op == op) {
      *name = o.name;
      return o.kind;
    }
  return op_kind::none;
}

struct user_op {
  MPI_User_function* fn;
  bool commute;
};
std::shared_mutex user_ops_mutex;
std::unordered_map<MPI_Op, user_op>& user_ops() {
  static std::unordered_map<MPI_Op, user_op> m;
  return m;
}

bool is_named(MPI_Datatype dt) {
  int ni = 0, na = 0, nd = 0, combiner = 0;
  PMPI_Type_get_envelope(dt, &ni, &na, &nd, &combiner);
  return combiner == MPI_COMBINER_NAMED;
}

bool decodable(int combiner) {
  switch (combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_CONTIGUOUS:
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR:
    case MPI_COMBINER_INDEXED:
    case MPI_COMBINER_HINDEXED:
    case MPI_COMBINER_INDEXED_BLOCK:
    case MPI_COMBINER_HINDEXED_BLOCK:
    case MPI_COMBINER_STRUCT:
    case MPI_COMBINER_SUBARRAY:
    case MPI_COMBINER_RESIZED:
      return true;
    default:
      return false;
  }
}

// The one predefined datatype every leaf of dt's type tree is, or
// MPI_DATATYPE_NULL (mixed leaves, or a constructor not decoded here).
MPI_Datatype leaf_of(MPI_Datatype dt, int depth) {
  int ni = 0, na = 0, nd = 0, combiner = 0;
  PMPI_Type_get_envelope(dt, &ni, &na, &nd, &combiner);
  if (combiner == MPI_COMBINER_NAMED) return dt;
  if (depth > 32 || nd == 0 || !decodable(combiner)) return MPI_DATATYPE_NULL;
  std::vector<int> ints(static_cast<std::size_t>(ni));
  std::vector<MPI_Aint> aints(static_cast<std::size_t>(na));
  std::vector<MPI_Datatype> types(static_cast<std::size_t>(nd));
  PMPI_Type_get_contents(dt, ni, na, nd, ints.data(), aints.data(), types.data());
  MPI_Datatype leaf = MPI_DATATYPE_NULL;
  bool same = true;
  for (std::size_t i = 0; i < types.size(); ++i) {
    const MPI_Datatype l = leaf_of(types[i], depth + 1);
    same = same && l != MPI_DATATYPE_NULL && (i == 0 || l == leaf);
    leaf = l;
    if (!is_named(types[i])) PMPI_Type_free(&types[i]);
  }
  return same ? leaf : MPI_DATATYPE_NULL;
}

struct extents {
  MPI_Aint lb, extent, true_lb, true_extent;
  int size;
};
extents extents_of(MPI_Datatype dt) {
  extents e{};
  PMPI_Type_get_extent(dt, &e.lb, &e.extent);
  PMPI_Type_get_true_extent(dt, &e.true_lb, &e.true_extent);
  PMPI_Type_size(dt, &e.size);
  return e;
}

std::string type_name(MPI_Datatype dt) {
  if (const scalar* s = find_scalar(dt)) return s->name;
  char name[MPI_MAX_OBJECT_NAME] = {};
  int len = 0;
  PMPI_Type_get_name(dt, name, &len);
  return len > 0 ? std::string(name, static_cast<std::size_t>(len)) : "a derived datatype";
}

reduction_plan plan_predefined(MPI_Datatype dt, op_kind k, const char* op_name) {
  const scalar* base = find_scalar(dt);
  std::size_t per_item = 1;
  if (base == nullptr) {
    const MPI_Datatype leaf = leaf_of(dt, 0);
    base = leaf == MPI_DATATYPE_NULL ? nullptr : find_scalar(leaf);
    if (base == nullptr) return {std::nullopt, reason::reduction_datatype};
    // Contiguous: items of `per_item` base elements back to back, no gaps
    // (a MINLOC/MAXLOC pair's own padding aside).
    const extents e = extents_of(dt), b = extents_of(leaf);
    per_item = b.size == 0 ? 0 : static_cast<std::size_t>(e.size / b.size);
    const bool packed = e.lb == 0 && e.true_lb == 0 &&
                        static_cast<std::size_t>(e.extent) == per_item * base->bytes &&
                        (base->is_pair || e.true_extent == e.extent);
    if (!packed || per_item == 0) return {std::nullopt, reason::reduction_datatype};
  }
  const binary_fn f = base->lookup(k);
  if (f == nullptr)
    throw usage_error{MPI_ERR_OP,
                      std::string(op_name) + " is not defined on " + base->name +
                          (base->dt == dt ? "" : " (the base of " + type_name(dt) + ")")};
  return {reduction{block_op::predefined(f, base->bytes), base->bytes, per_item}, reason::none};
}

bool supported_element(std::size_t n) {
  return n == 1 || n == 2 || n == 4 || n == 8 || n == 16 || n == 32;
}

reduction_plan plan_user(MPI_Datatype dt, const user_op& u) {
  const extents e = extents_of(dt);
  const scalar* s = find_scalar(dt);
  const bool contiguous = e.lb == 0 && e.true_lb == 0 &&
                          ((e.extent == e.size && e.true_extent == e.size) || (s && s->is_pair));
  const auto n = static_cast<std::size_t>(e.extent);
  if (!contiguous || !supported_element(n)) return {std::nullopt, reason::reduction_datatype};
  return {reduction{block_op::user(u.fn, u.commute, dt, n), n, 1}, reason::none};
}

}  // namespace

reduction_plan plan_reduction(MPI_Datatype dt, MPI_Op op) {
  // The last plan of a predefined datatype and operation: both handles are
  // the MPI library's constants, never freed or reused, so the plan holds.
  thread_local MPI_Datatype last_dt = MPI_DATATYPE_NULL;
  thread_local MPI_Op last_op = MPI_OP_NULL;
  thread_local reduction_plan last;
  if (dt == last_dt && op == last_op) return last;
  const char* name = nullptr;
  const op_kind k = kind_of(op, &name);
  if (k != op_kind::none) {
    reduction_plan plan = plan_predefined(dt, k, name);
    if (plan.run && find_scalar(dt) != nullptr) last_dt = dt, last_op = op, last = plan;
    return plan;
  }
  std::optional<user_op> u;
  {
    std::shared_lock lock(user_ops_mutex);
    const auto it = user_ops().find(op);
    if (it != user_ops().end()) u = it->second;
  }
  if (!u) return {std::nullopt, reason::operation};
  return plan_user(dt, *u);
}

void remember_user_op(MPI_Op op, MPI_User_function* f, bool commute) {
  std::unique_lock lock(user_ops_mutex);
  user_ops()[op] = user_op{f, commute};
}

void forget_user_op(MPI_Op op) {
  std::unique_lock lock(user_ops_mutex);
  user_ops().erase(op);
}

void block_op::user_call(const void* in, void* inout, std::size_t n) const {
  auto* a = static_cast<std::byte*>(const_cast<void*>(in));  // MPI_User_function's signature
  auto* b = static_cast<std::byte*>(inout);
  while (n > 0) {
    const std::size_t k = std::min<std::size_t>(n, INT_MAX);
    int len = static_cast<int>(k);
    MPI_Datatype dt = dt_;
    user_(a, b, &len, &dt);
    a += k * bytes_;
    b += k * bytes_;
    n -= k;
  }
}

void block_op::into(void* dst, const void* lo, const void* hi, std::size_t n) const {
  if (fn_ != nullptr) return fn_(lo, hi, dst, n);
  if (dst == lo) return right(dst, hi, n);
  std::memmove(dst, hi, n * bytes_);
  user_call(lo, dst, n);
}

void block_op::left(void* acc, const void* x, std::size_t n) const {
  if (fn_ != nullptr) return fn_(x, acc, acc, n);
  user_call(x, acc, n);
}

void block_op::right(void* acc, const void* x, std::size_t n) const {
  if (fn_ != nullptr) return fn_(acc, x, acc, n);
  if (commute_) return user_call(x, acc, n);
  // acc op x with MPI's inout = in op inout: x goes into a scratch copy first
  thread_local std::vector<std::byte> scratch;
  if (scratch.size() < n * bytes_) scratch.resize(n * bytes_);
  std::memcpy(scratch.data(), x, n * bytes_);
  user_call(acc, scratch.data(), n);
  std::memcpy(acc, scratch.data(), n * bytes_);
}

}  // namespace topocoll::pmpi
