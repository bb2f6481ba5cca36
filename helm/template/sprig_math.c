/* Sprig's integer and float math (numeric.go and the arithmetic lambdas of
 * functions.go): cast conversions, Go's int64 wrap-around and panics, and
 * shopspring/decimal for addf/subf/mulf/divf. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "helm/template/sprig_internal.h"

static int64_t i64(const tpl_value_t *v) {
  int64_t r;
  tpl_value_t a = sprig__arg(v);
  if (sprig__to_int64(&a, &r)) r = 0;
  return r;
}
static double f64(const tpl_value_t *v) {
  double r;
  tpl_value_t a = sprig__arg(v);
  if (sprig__to_float64(&a, &r)) r = 0;
  return r;
}

SPRIG_FN(f_add1) {
  *out = tpl_value_int64((int64_t)((uint64_t)i64(&args[0]) + 1));
  return 0;
}
SPRIG_FN(f_add) {
  uint64_t a = 0;
  for (size_t i = 0; i < n; i++) a += (uint64_t)i64(&args[i]);
  *out = tpl_value_int64((int64_t)a);
  return 0;
}
SPRIG_FN(f_sub) {
  *out = tpl_value_int64((int64_t)((uint64_t)i64(&args[0]) - (uint64_t)i64(&args[1])));
  return 0;
}
SPRIG_FN(f_mul) {
  uint64_t a = (uint64_t)i64(&args[0]);
  for (size_t i = 1; i < n; i++) a *= (uint64_t)i64(&args[i]);
  *out = tpl_value_int64((int64_t)a);
  return 0;
}
SPRIG_FN(f_div) {
  int64_t a = i64(&args[0]), b = i64(&args[1]);
  if (b == 0) return tpl_call_errorf(c, "runtime error: integer divide by zero");
  *out = tpl_value_int64(b == -1 ? (int64_t)(0 - (uint64_t)a) : a / b);
  return 0;
}
SPRIG_FN(f_mod) {
  int64_t a = i64(&args[0]), b = i64(&args[1]);
  if (b == 0) return tpl_call_errorf(c, "runtime error: integer divide by zero");
  *out = tpl_value_int64(b == -1 ? 0 : a % b);
  return 0;
}
SPRIG_FN(f_max) {
  int64_t a = i64(&args[0]);
  for (size_t i = 1; i < n; i++) {
    int64_t b = i64(&args[i]);
    if (b > a) a = b;
  }
  *out = tpl_value_int64(a);
  return 0;
}
SPRIG_FN(f_min) {
  int64_t a = i64(&args[0]);
  for (size_t i = 1; i < n; i++) {
    int64_t b = i64(&args[i]);
    if (b < a) a = b;
  }
  *out = tpl_value_int64(a);
  return 0;
}
/* math.Max / math.Min with Go's NaN and signed-zero rules. */
static double go_max(double x, double y) {
  if (isinf(x) && x > 0) return x;
  if (isinf(y) && y > 0) return y;
  if (isnan(x) || isnan(y)) return NAN;
  if (x == 0 && x == y) return signbit(x) ? y : x;
  return x > y ? x : y;
}
static double go_min(double x, double y) {
  if (isinf(x) && x < 0) return x;
  if (isinf(y) && y < 0) return y;
  if (isnan(x) || isnan(y)) return NAN;
  if (x == 0 && x == y) return signbit(x) ? x : y;
  return x < y ? x : y;
}
SPRIG_FN(f_maxf) {
  double a = f64(&args[0]);
  for (size_t i = 1; i < n; i++) a = go_max(a, f64(&args[i]));
  *out = tpl_value_float(a);
  return 0;
}
SPRIG_FN(f_minf) {
  double a = f64(&args[0]);
  for (size_t i = 1; i < n; i++) a = go_min(a, f64(&args[i]));
  *out = tpl_value_float(a);
  return 0;
}
SPRIG_FN(f_floor) {
  *out = tpl_value_float(floor(f64(&args[0])));
  return 0;
}
SPRIG_FN(f_ceil) {
  *out = tpl_value_float(ceil(f64(&args[0])));
  return 0;
}
SPRIG_FN(f_round) {
  double on = n > 2 ? args[2].u.f : 0.5;
  double val = f64(&args[0]);
  double places = (double)args[1].u.i;
  double p = pow(10, places);
  double digit = p * val;
  double ip;
  double div = modf(digit, &ip);
  double r = div >= on ? ceil(digit) : floor(digit);
  *out = tpl_value_float(r / p);
  return 0;
}

SPRIG_FN(f_randint) {
  int64_t lo = args[0].u.i, hi = args[1].u.i;
  if (hi - lo <= 0) return tpl_call_errorf(c, "invalid argument to Intn");
  uint64_t r = ((uint64_t)rand() << 31) ^ (uint64_t)rand();
  *out = tpl_value_int((int64_t)(r % (uint64_t)(hi - lo)) + lo);
  return 0;
}

/* ---- shopspring/decimal: exact decimal arithmetic on the shortest forms of float64s ---- */

typedef struct {
  __int128 m; /* value = m * 10^e */
  int e;
  bool ok;
} dec_t;

static dec_t dec_from(double f) {
  dec_t d = {0, 0, true};
  if (f == 0) return d;
  buf_t b = BUF_INIT;
  tpl_fmt_float(&b, f, 'e', -1); /* d.ddddde±XX */
  const char *s = b.data;
  bool neg = false;
  if (*s == '-') neg = true, s++;
  __int128 m = 0;
  int nd = 0;
  for (; *s && *s != 'e'; s++)
    if (*s >= '0' && *s <= '9') m = m * 10 + (*s - '0'), nd++;
  int ex = *s == 'e' ? atoi(s + 1) : 0;
  d.m = neg ? -m : m;
  d.e = ex - (nd - 1);
  buf_free(&b);
  return d;
}

static const __int128 I128_LIMIT = (__int128)1 << 120;

static bool scale(dec_t *d, int to) { /* lowers d->e to `to`, multiplying m */
  while (d->e > to) {
    if (d->m > I128_LIMIT / 10 || d->m < -I128_LIMIT / 10) return false;
    d->m *= 10;
    d->e--;
  }
  return true;
}

static double dec_to_double(dec_t d) {
  char buf[80];
  char *p = buf + sizeof buf - 1;
  *p = 0;
  bool neg = d.m < 0;
  unsigned __int128 u = neg ? (unsigned __int128)(-d.m) : (unsigned __int128)d.m;
  if (u == 0) return 0;
  while (u) {
    *--p = (char)('0' + (int)(u % 10));
    u /= 10;
  }
  char s[120];
  snprintf(s, sizeof s, "%s%se%d", neg ? "-" : "", p, d.e);
  return strtod(s, NULL);
}

enum { D_ADD, D_SUB, D_MUL, D_DIV };

static int dec_op(tpl_call_t *c, double a, double b, int op, double *res) {
  if (isnan(a) || isinf(a) || isnan(b) || isinf(b)) {
    double bad = (isnan(a) || isinf(a)) ? a : b;
    buf_t t = BUF_INIT;
    tpl_value_t v = tpl_value_float(bad);
    tpl_fmt_value(&t, &v);
    int rc = tpl_call_errorf(c, "Cannot create a Decimal from %s", t.data);
    buf_free(&t);
    return rc;
  }
  dec_t x = dec_from(a), y = dec_from(b), r = {0, 0, true};
  switch (op) {
  case D_ADD:
  case D_SUB: {
    int e = x.e < y.e ? x.e : y.e;
    if (!scale(&x, e) || !scale(&y, e)) {
      *res = op == D_ADD ? a + b : a - b;
      return 0;
    }
    r.m = op == D_ADD ? x.m + y.m : x.m - y.m;
    r.e = e;
    break;
  }
  case D_MUL:
    r.m = x.m * y.m; /* both < 10^17 */
    r.e = x.e + y.e;
    break;
  case D_DIV: {
    if (y.m == 0) return tpl_call_errorf(c, "decimal division by 0");
    /* q = round-half-away(x/y, 16 places) */
    int k = x.e - y.e + 16; /* x.m * 10^k / y.m, result exponent -16 */
    __int128 num = x.m, den = y.m;
    bool ok = true;
    while (k > 0 && ok) {
      if (num > I128_LIMIT / 10 || num < -I128_LIMIT / 10) ok = false;
      else num *= 10, k--;
    }
    while (k < 0 && ok) {
      if (den > I128_LIMIT / 10 || den < -I128_LIMIT / 10) ok = false;
      else den *= 10, k++;
    }
    if (!ok) {
      *res = a / b;
      return 0;
    }
    __int128 q = num / den, rem = num % den;
    __int128 ar = rem < 0 ? -rem : rem, ad = den < 0 ? -den : den;
    if (2 * ar >= ad) q += ((num < 0) != (den < 0)) ? -1 : 1;
    r.m = q;
    r.e = -16;
    break;
  }
  }
  *res = dec_to_double(r);
  return 0;
}

static int dec_fold(tpl_call_t *c, double start, tpl_value_t *args, size_t n, int op, tpl_value_t *out) {
  double acc = start;
  if (isnan(acc) || isinf(acc)) {
    double dummy;
    int rc = dec_op(c, acc, 0, op, &dummy);
    if (rc) return rc;
  }
  /* The accumulator stays a Decimal in Go; between steps we keep the exact value only as far
   * as float64 shortest forms allow, which is exact for the usual short decimals. */
  for (size_t i = 0; i < n; i++) {
    int rc = dec_op(c, acc, f64(&args[i]), op, &acc);
    if (rc) return rc;
  }
  *out = tpl_value_float(acc);
  return 0;
}

SPRIG_FN(f_add1f) {
  tpl_value_t one = tpl_value_int(1);
  return dec_fold(c, f64(&args[0]), &one, 1, D_ADD, out);
}
SPRIG_FN(f_addf) { return dec_fold(c, 0, args, n, D_ADD, out); }
SPRIG_FN(f_subf) { return dec_fold(c, f64(&args[0]), args + 1, n - 1, D_SUB, out); }
SPRIG_FN(f_mulf) { return dec_fold(c, f64(&args[0]), args + 1, n - 1, D_MUL, out); }
SPRIG_FN(f_divf) { return dec_fold(c, f64(&args[0]), args + 1, n - 1, D_DIV, out); }

const tpl_func_t sprig__math_fns[] = {
    {"add1", "a", f_add1, NULL, "func(interface {}) int64"},
    {"add", "a*", f_add, NULL, "func(...interface {}) int64"},
    {"sub", "aa", f_sub, NULL, "func(interface {}, interface {}) int64"},
    {"mul", "aa*", f_mul, NULL, "func(interface {}, ...interface {}) int64"},
    {"div", "aa", f_div, NULL, "func(interface {}, interface {}) int64"},
    {"mod", "aa", f_mod, NULL, "func(interface {}, interface {}) int64"},
    {"max", "aa*", f_max, NULL, "func(interface {}, ...interface {}) int64"},
    {"biggest", "aa*", f_max, NULL, "func(interface {}, ...interface {}) int64"},
    {"min", "aa*", f_min, NULL, "func(interface {}, ...interface {}) int64"},
    {"maxf", "aa*", f_maxf, NULL, "func(interface {}, ...interface {}) float64"},
    {"minf", "aa*", f_minf, NULL, "func(interface {}, ...interface {}) float64"},
    {"floor", "a", f_floor, NULL, "func(interface {}) float64"},
    {"ceil", "a", f_ceil, NULL, "func(interface {}) float64"},
    {"round", "aif*", f_round, NULL, "func(interface {}, int, ...float64) float64"},
    {"randInt", "ii", f_randint, NULL, "func(int, int) int"},
    {"add1f", "a", f_add1f, NULL, "func(interface {}) float64"},
    {"addf", "a*", f_addf, NULL, "func(...interface {}) float64"},
    {"subf", "aa*", f_subf, NULL, "func(interface {}, ...interface {}) float64"},
    {"mulf", "aa*", f_mulf, NULL, "func(interface {}, ...interface {}) float64"},
    {"divf", "aa*", f_divf, NULL, "func(interface {}, ...interface {}) float64"},
};
const size_t sprig__math_nfns = sizeof sprig__math_fns / sizeof sprig__math_fns[0];
