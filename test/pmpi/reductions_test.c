/* MPI_Reduce, MPI_Allreduce, MPI_Reduce_scatter_block, MPI_Reduce_scatter,
 * MPI_Scan and MPI_Exscan through the adapter against PMPI_: every
 * predefined datatype family with every operation MPI defines on it, the
 * MINLOC/MAXLOC pairs, contiguous derived datatypes, user operations
 * (commutative and not), MPI_IN_PLACE, count 0, every root, on
 * MPI_COMM_WORLD and on a communicator from MPI_Comm_split. */
#include <complex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pmpi_check.h"

enum family { CINT, FINT, REAL, COMPLEX, LOGICAL, PAIR };

/* Values are small integers so that every order of summation is exact. */
#define SETTER(name, T)               \
  static void name(void* p, long v) { \
    T x = (T)v;                       \
    memcpy(p, &x, sizeof x);          \
  }
SETTER(set_char, char)
SETTER(set_schar, signed char)
SETTER(set_uchar, unsigned char)
SETTER(set_short, short)
SETTER(set_ushort, unsigned short)
SETTER(set_int, int)
SETTER(set_uint, unsigned)
SETTER(set_long, long)
SETTER(set_ulong, unsigned long)
SETTER(set_llong, long long)
SETTER(set_ullong, unsigned long long)
SETTER(set_i8, int8_t)
SETTER(set_u16, uint16_t)
SETTER(set_i32, int32_t)
SETTER(set_u64, uint64_t)
SETTER(set_aint, MPI_Aint)
SETTER(set_float, float)
SETTER(set_double, double)
SETTER(set_ldouble, long double)
SETTER(set_bool, bool)
static void set_fcomplex(void* p, long v) {
  float complex x = (float)v + (float)(v % 3) * I;
  memcpy(p, &x, sizeof x);
}
static void set_dcomplex(void* p, long v) {
  double complex x = (double)v - (double)(v % 2) * I;
  memcpy(p, &x, sizeof x);
}
static void set_ldcomplex(void* p, long v) {
  long double complex x = (long double)v + (long double)(v % 2) * I;
  memcpy(p, &x, sizeof x);
}
/* Pairs: the value repeats across ranks (ties), the index is the caller's. */
#define PAIR_SETTER(name, V)          \
  static void name(void* p, long v) { \
    struct {                          \
      V v;                            \
      int i;                          \
    } x;                              \
    memset(&x, 0, sizeof x);          \
    x.v = (V)(v % 4);                 \
    x.i = (int)(v / 8);               \
    memcpy(p, &x, sizeof x);          \
  }
PAIR_SETTER(set_float_int, float)
PAIR_SETTER(set_double_int, double)
PAIR_SETTER(set_long_int, long)
PAIR_SETTER(set_2int, int)
PAIR_SETTER(set_short_int, short)
PAIR_SETTER(set_ldouble_int, long double)

struct type_case {
  MPI_Datatype dt;
  const char* name;
  enum family fam;
  void (*set)(void*, long);
  size_t bytes;  /* one base element */
  size_t vbytes; /* the value's significant bytes (long double: 10), 0: all */
  size_t ioff;   /* a pair's index offset */
};

/* Whether byte b of a result holds data: not padding inside a long double or
 * a MINLOC/MAXLOC pair, which neither side is bound to write. */
static int significant(const struct type_case* t, size_t b) {
  b %= t->bytes;
  if (t->fam == PAIR) return b < t->vbytes || (b >= t->ioff && b < t->ioff + sizeof(int));
  return t->vbytes == 0 || b % 16 < t->vbytes;
}

/* -0.0 becomes +0.0 in floating-point results: the sign of a zero that
 * comes from cancellation (complex products) depends on the order of the
 * operations, which MPI leaves open. */
static void unsigned_zeros(const struct type_case* t, char* buf, size_t n) {
  if (t->fam != REAL && t->fam != COMPLEX) return;
  const size_t part = t->fam == COMPLEX ? t->bytes / 2 : t->bytes;
  for (size_t at = 0; at + part <= n; at += part) {
    if (part == sizeof(float)) {
      float x;
      memcpy(&x, buf + at, part);
      if (x == 0) memset(buf + at, 0, part);
    } else if (part == sizeof(double)) {
      double x;
      memcpy(&x, buf + at, part);
      if (x == 0) memset(buf + at, 0, part);
    } else {
      long double x;
      memcpy(&x, buf + at, part);
      if (x == 0) memset(buf + at, 0, part);
    }
  }
}

static void same_values(const struct type_case* t, char* got, char* want, size_t n,
                        const char* what) {
  unsigned_zeros(t, got, n);
  unsigned_zeros(t, want, n);
  for (size_t i = 0; i < n; ++i)
    if (significant(t, i) && got[i] != want[i]) {
      CHECK(0, "%s: byte %zu of %zu is %u, PMPI gives %u", what, i, n, (unsigned char)got[i],
            (unsigned char)want[i]);
      return;
    }
}

struct op_case {
  MPI_Op op;
  const char* name;
  unsigned families; /* bit per family */
};
#define BIT(f) (1u << (f))

static const struct op_case ops[] = {
    {MPI_MAX, "MAX", BIT(CINT) | BIT(FINT) | BIT(REAL)},
    {MPI_MIN, "MIN", BIT(CINT) | BIT(FINT) | BIT(REAL)},
    {MPI_SUM, "SUM", BIT(CINT) | BIT(FINT) | BIT(REAL) | BIT(COMPLEX)},
    {MPI_PROD, "PROD", BIT(CINT) | BIT(FINT) | BIT(REAL) | BIT(COMPLEX)},
    {MPI_LAND, "LAND", BIT(CINT) | BIT(LOGICAL)},
    {MPI_LOR, "LOR", BIT(CINT) | BIT(LOGICAL)},
    {MPI_LXOR, "LXOR", BIT(CINT) | BIT(LOGICAL)},
    {MPI_BAND, "BAND", BIT(CINT) | BIT(FINT)},
    {MPI_BOR, "BOR", BIT(CINT) | BIT(FINT)},
    {MPI_BXOR, "BXOR", BIT(CINT) | BIT(FINT)},
    {MPI_MAXLOC, "MAXLOC", BIT(PAIR)},
    {MPI_MINLOC, "MINLOC", BIT(PAIR)},
};

/* An associative, non-commutative operation: composition of affine maps
 * x -> a x + b on unsigned integers (an element is two MPI_UNSIGNED). */
static void compose(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  unsigned* f = (unsigned*)in; /* the lower ranks' map, applied first */
  unsigned* g = (unsigned*)inout;
  for (int i = 0; i < *len; ++i) {
    unsigned a = g[2 * i] * f[2 * i], b = g[2 * i] * f[2 * i + 1] + g[2 * i + 1];
    g[2 * i] = a;
    g[2 * i + 1] = b;
  }
}
/* A commutative one on MPI_DOUBLE, declared commutative. */
static void add_doubles(void* in, void* inout, int* len, MPI_Datatype* dt) {
  (void)dt;
  for (int i = 0; i < *len; ++i) ((double*)inout)[i] += ((double*)in)[i];
}

static int fill_seed = 1;
static void fill(void* buf, const struct type_case* t, size_t elems, int rank, int prod_safe) {
  for (size_t i = 0; i < elems; ++i) {
    long v = (long)((i * 7 + (size_t)rank * 13 + (size_t)fill_seed) % 23);
    if (prod_safe) v = 1 + v % 3;
    if (t->fam == LOGICAL) v = v % 3 == 0;
    if (t->fam == PAIR) v = (v % 4) + 8 * rank;
    t->set((char*)buf + i * t->bytes, v);
  }
}

enum fn { REDUCE, ALLREDUCE, RSB, RS, SCAN, EXSCAN, FN_COUNT };
static const char* fn_names[] = {"MPI_Reduce",         "MPI_Allreduce", "MPI_Reduce_scatter_block",
                                 "MPI_Reduce_scatter", "MPI_Scan",      "MPI_Exscan"};

/* One function on (dt, count, op), through MPI_ (adapter) or PMPI_. */
static void run(int fn, int pmpi, int in_place, const void* send, void* recv, int count,
                MPI_Datatype dt, MPI_Op op, int root, MPI_Comm comm) {
  int p, rank;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &rank);
  const void* s = in_place ? MPI_IN_PLACE : send;
  int* counts = malloc(sizeof(int) * (size_t)p);
  for (int j = 0; j < p; ++j) counts[j] = count;
  int rc = MPI_SUCCESS;
  switch (fn) {
    case REDUCE:
      if (in_place && rank != root) s = send;
      rc = pmpi ? PMPI_Reduce(s, recv, count, dt, op, root, comm)
                : MPI_Reduce(s, recv, count, dt, op, root, comm);
      break;
    case ALLREDUCE:
      rc = pmpi ? PMPI_Allreduce(s, recv, count, dt, op, comm)
                : MPI_Allreduce(s, recv, count, dt, op, comm);
      break;
    case RSB:
      rc = pmpi ? PMPI_Reduce_scatter_block(s, recv, count, dt, op, comm)
                : MPI_Reduce_scatter_block(s, recv, count, dt, op, comm);
      break;
    case RS:
      rc = pmpi ? PMPI_Reduce_scatter(s, recv, counts, dt, op, comm)
                : MPI_Reduce_scatter(s, recv, counts, dt, op, comm);
      break;
    case SCAN:
      rc = pmpi ? PMPI_Scan(s, recv, count, dt, op, comm) : MPI_Scan(s, recv, count, dt, op, comm);
      break;
    case EXSCAN:
      rc = pmpi ? PMPI_Exscan(s, recv, count, dt, op, comm)
                : MPI_Exscan(s, recv, count, dt, op, comm);
      break;
  }
  CHECK(rc == MPI_SUCCESS, "%s returned %d", fn_names[fn], rc);
  free(counts);
}

/* Adapter and PMPI on the same inputs; the bytes MPI defines must agree. */
/* The reference: PMPI_ on `ref` datatype (the adapter's dt, or for a
 * predefined operation on a derived datatype, which Open MPI does not take,
 * its base type with count * per_item). */
static MPI_Datatype ref = MPI_DATATYPE_NULL;

static void compare(int fn, int in_place, int root, const struct type_case* t, MPI_Datatype dt,
                    int per_item, const char* op_name, MPI_Op op, int count, MPI_Comm comm,
                    const char* comm_name) {
  int p, rank;
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &rank);
  const int blocks = (fn == RSB || fn == RS) ? p : 1;
  const size_t item = (size_t)extent_of(dt);
  const size_t in_bytes = item * (size_t)count * (size_t)blocks;
  const size_t out_bytes = in_place ? in_bytes : item * (size_t)count;
  char* send = sentinel_alloc(in_bytes);
  fill(send, t, (size_t)count * (size_t)blocks * (size_t)per_item, rank, op == MPI_PROD);
  char* got = sentinel_alloc(out_bytes);
  char* want = sentinel_alloc(out_bytes);
  const int use_in_place = in_place && (fn != REDUCE || rank == root);
  if (use_in_place) {
    memcpy(got, send, in_bytes);
    memcpy(want, send, in_bytes);
  }
  run(fn, 0, in_place, send, got, count, dt, op, root, comm);
  if (ref == MPI_DATATYPE_NULL)
    run(fn, 1, in_place, send, want, count, dt, op, root, comm);
  else
    run(fn, 1, in_place, send, want, count * per_item, ref, op, root, comm);
  const int defined = !(fn == REDUCE && rank != root) && !(fn == EXSCAN && rank == 0);
  char what[256];
  snprintf(what, sizeof what, "%s%s %s %s count %d root %d on %s (rank %d of %d)", fn_names[fn],
           in_place ? " (MPI_IN_PLACE)" : "", t->name, op_name, count, root, comm_name, rank, p);
  if (defined) same_values(t, got, want, item * (size_t)count, what);
  free(send);
  free(got);
  free(want);
}

static void every_function(const struct type_case* t, MPI_Datatype dt, int per_item,
                           const char* op_name, MPI_Op op, int count, MPI_Comm comm,
                           const char* comm_name) {
  int p;
  MPI_Comm_size(comm, &p);
  for (int fn = 0; fn < FN_COUNT; ++fn)
    for (int in_place = 0; in_place < 2; ++in_place) {
      if (fn == REDUCE) {
        compare(fn, in_place, 0, t, dt, per_item, op_name, op, count, comm, comm_name);
        if (p > 1)
          compare(fn, in_place, p - 1, t, dt, per_item, op_name, op, count, comm, comm_name);
      } else {
        compare(fn, in_place, 0, t, dt, per_item, op_name, op, count, comm, comm_name);
      }
    }
}

#define T(dt, fam, set, C) \
  { dt, #dt, fam, set, sizeof(C), 0, 0 }
#define LD(dt, fam, set, C) \
  { dt, #dt, fam, set, sizeof(C), 10, 0 }
#define P(dt, set, V)                     \
  {                                       \
    dt, #dt, PAIR, set, sizeof(struct {   \
      V v;                                \
      int i;                              \
    }),                                   \
        sizeof(V) == 16 ? 10 : sizeof(V), \
        offsetof(                         \
            struct {                      \
              V v;                        \
              int i;                      \
            },                            \
            i)                            \
  }
static const struct type_case types[] = {
    T(MPI_CHAR, CINT, set_char, char),
    T(MPI_SIGNED_CHAR, CINT, set_schar, signed char),
    T(MPI_UNSIGNED_CHAR, CINT, set_uchar, unsigned char),
    T(MPI_BYTE, CINT, set_uchar, unsigned char),
    T(MPI_SHORT, CINT, set_short, short),
    T(MPI_UNSIGNED_SHORT, CINT, set_ushort, unsigned short),
    T(MPI_INT, CINT, set_int, int),
    T(MPI_UNSIGNED, CINT, set_uint, unsigned),
    T(MPI_LONG, CINT, set_long, long),
    T(MPI_UNSIGNED_LONG, CINT, set_ulong, unsigned long),
    T(MPI_LONG_LONG, CINT, set_llong, long long),
    T(MPI_UNSIGNED_LONG_LONG, CINT, set_ullong, unsigned long long),
    T(MPI_INT8_T, CINT, set_i8, int8_t),
    T(MPI_UINT16_T, CINT, set_u16, uint16_t),
    T(MPI_INT32_T, CINT, set_i32, int32_t),
    T(MPI_UINT64_T, CINT, set_u64, uint64_t),
    T(MPI_AINT, CINT, set_aint, MPI_Aint),
    T(MPI_INTEGER, FINT, set_int, int),
    T(MPI_FLOAT, REAL, set_float, float),
    T(MPI_DOUBLE, REAL, set_double, double),
    LD(MPI_LONG_DOUBLE, REAL, set_ldouble, long double),
    T(MPI_REAL, REAL, set_float, float),
    T(MPI_DOUBLE_PRECISION, REAL, set_double, double),
    T(MPI_C_BOOL, LOGICAL, set_bool, bool),
    T(MPI_LOGICAL, LOGICAL, set_int, int),
    T(MPI_C_FLOAT_COMPLEX, COMPLEX, set_fcomplex, float complex),
    T(MPI_C_DOUBLE_COMPLEX, COMPLEX, set_dcomplex, double complex),
    LD(MPI_C_LONG_DOUBLE_COMPLEX, COMPLEX, set_ldcomplex, long double complex),
    P(MPI_FLOAT_INT, set_float_int, float),
    P(MPI_DOUBLE_INT, set_double_int, double),
    P(MPI_LONG_INT, set_long_int, long),
    P(MPI_2INT, set_2int, int),
    P(MPI_SHORT_INT, set_short_int, short),
    P(MPI_LONG_DOUBLE_INT, set_ldouble_int, long double),
};
#define NTYPES (sizeof types / sizeof types[0])

static void predefined(MPI_Comm comm, const char* comm_name, const int* counts, int ncounts) {
  for (size_t t = 0; t < NTYPES; ++t)
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; ++o) {
      if (!(ops[o].families & BIT(types[t].fam))) continue;
      for (int c = 0; c < ncounts; ++c)
        every_function(&types[t], types[t].dt, 1, ops[o].name, ops[o].op, counts[c], comm,
                       comm_name);
    }
}

/* Contiguous derived datatypes of predefined ones (pairs included). */
static void derived(MPI_Comm comm, const char* comm_name) {
  MPI_Datatype three_doubles, two_pairs, dup_int;
  MPI_Type_contiguous(3, MPI_DOUBLE, &three_doubles);
  MPI_Type_commit(&three_doubles);
  MPI_Type_contiguous(2, MPI_DOUBLE_INT, &two_pairs);
  MPI_Type_commit(&two_pairs);
  MPI_Type_dup(MPI_INT, &dup_int);
  const struct type_case* dbl = &types[19];
  const struct type_case* dint = &types[29];
  const struct type_case* i32 = &types[6];
  const int counts[] = {0, 5, 300};
  for (int c = 0; c < 3; ++c) {
    ref = MPI_DOUBLE;
    every_function(dbl, three_doubles, 3, "SUM", MPI_SUM, counts[c], comm, comm_name);
    every_function(dbl, three_doubles, 3, "MAX", MPI_MAX, counts[c], comm, comm_name);
    ref = MPI_DOUBLE_INT;
    every_function(dint, two_pairs, 2, "MINLOC", MPI_MINLOC, counts[c], comm, comm_name);
    ref = MPI_INT;
    every_function(i32, dup_int, 1, "BXOR", MPI_BXOR, counts[c], comm, comm_name);
    ref = MPI_DATATYPE_NULL;
  }
  MPI_Type_free(&three_doubles);
  MPI_Type_free(&two_pairs);
  MPI_Type_free(&dup_int);
}

static void user_ops(MPI_Comm comm, const char* comm_name) {
  MPI_Op affine, plus;
  MPI_Op_create(compose, 0, &affine);
  MPI_Op_create(add_doubles, 1, &plus);
  MPI_Datatype map;
  MPI_Type_contiguous(2, MPI_UNSIGNED, &map);
  MPI_Type_commit(&map);
  const struct type_case* u = &types[7];
  const struct type_case* dbl = &types[19];
  const int counts[] = {0, 1, 9, 2000};
  for (int c = 0; c < 4; ++c) {
    every_function(u, map, 2, "user (non-commutative)", affine, counts[c], comm, comm_name);
    every_function(dbl, MPI_DOUBLE, 1, "user (commutative)", plus, counts[c], comm, comm_name);
  }
  MPI_Type_free(&map);
  MPI_Op_free(&affine);
  MPI_Op_free(&plus);
}

/* --quick (the sanitizer builds): counts 0 and 17 only, no large count. */
static int quick = 0;

static void everything(MPI_Comm comm, const char* comm_name) {
  const int counts[] = {0, 17, 1};
  predefined(comm, comm_name, counts, quick ? 2 : 3);
  if (!quick) { /* the pipelined and bandwidth-optimal algorithms */
    fill_seed = 5;
    every_function(&types[19], MPI_DOUBLE, 1, "SUM", MPI_SUM, 40000, comm, comm_name);
    every_function(&types[6], MPI_INT, 1, "BXOR", MPI_BXOR, 40000, comm, comm_name);
  }
  derived(comm, comm_name);
  user_ops(comm, comm_name);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  int rank;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  everything(MPI_COMM_WORLD, "MPI_COMM_WORLD");
  /* Odd and even ranks, each ordered backwards. */
  MPI_Comm half;
  MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
  everything(half, "a split communicator");
  MPI_Comm_free(&half);
  return check_finish("reductions_test");
}
