#include "base/gofloat.h"
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Adds delta (+1 or -1) to the last of the n decimal digits in d (scientific form d[0].d[1..] x 10^*e),
 * carrying, and keeping n digits. */
static void gofloat__step(char *d, int n, int *e, int delta) {
  int i = n - 1;
  if (delta > 0) {
    while (i >= 0 && d[i] == '9') d[i--] = '0';
    if (i >= 0) d[i]++;
    else {
      d[0] = '1';
      for (i = 1; i < n; i++) d[i] = '0';
      (*e)++;
    }
  } else {
    while (i >= 0 && d[i] == '0') d[i--] = '9';
    if (i >= 0) d[i]--;
    if (d[0] == '0') {
      for (i = 0; i < n; i++) d[i] = '9';
      (*e)--;
    }
  }
}

/* The common case without printf: v (> 0) is exactly m / 10^k for an integer m below 2^50 (2^21 for
 * float32) and a small k, as integers and short decimals such as 8080, 0.5 or 12.25 are. Then m's
 * digits are the shortest that read back: values that round to v lie within half an ulp of it, and
 * ulp(v) < 10^-k / 4 there, so no other number on the 10^-k grid (and no shorter digit string) reads
 * back as v. The check m / 10^k == v is a correctly rounded division, i.e. what parsing the decimal
 * m e-k gives (10^k is exact). For float32, v must itself be a float32 (then the float interval,
 * far wider than the double one, holds m e-k as well). Returns the digit count, 0 when it does not
 * apply. */
int gofloat_exact(double v, int is32, char *d, size_t dlen, int *dp) {
  static const double p10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
  const double lim = is32 ? 2097152.0 : 1125899906842624.0; /* 2^21, 2^50 */
  if (is32 && (double)(float)v != v) return 0;
  for (int k = 0; k < (int)(sizeof p10 / sizeof *p10); k++) {
    double x = v * p10[k];
    if (x >= lim) return 0;
    if (x != (double)(uint64_t)x || (double)(uint64_t)x / p10[k] != v) continue;
    uint64_t m = (uint64_t)x;
    if (!m) return 0;
    char tmp[24];
    int n = 0;
    for (; m; m /= 10) tmp[n++] = (char)('0' + m % 10);
    int e = n - k; /* v = 0.digits x 10^e */
    while (n > 1 && tmp[0] == '0') memmove(tmp, tmp + 1, (size_t)--n); /* trailing zeros (reversed) */
    if ((size_t)n >= dlen) return 0;
    for (int i = 0; i < n; i++) d[i] = tmp[n - 1 - i];
    d[n] = 0;
    *dp = e;
    return n;
  }
  return 0;
}

/* Shortest decimal digits that read back as v (at float32 precision when is32), choosing, like Go's
 * strconv, the closest such string: digits (no dot, no trailing zeros) into d; v = 0.d x 10^dp. */
int gofloat_shortest(double v, int is32, char *d, size_t dlen, int *dp) {
  int fast = gofloat_exact(fabs(v), is32, d, dlen, dp);
  if (fast) return fast;
  char tmp[64], cand[64];
  int maxp = is32 ? 9 : 17;
  int n = 0, e = 0;
  for (int p = 1; p <= maxp; p++) {
    snprintf(tmp, sizeof tmp, "%.*e", p - 1, fabs(v));
    /* digits and exponent of the correctly rounded p-digit value */
    n = 0;
    const char *s = tmp;
    for (; *s && *s != 'e'; s++)
      if (*s != '.') cand[n++] = *s;
    e = atoi(s + 1);
    int found = 0;
    /* the rounded value first, then its neighbours: near a power of two the interval of values that
     * read back is lopsided and only the neighbour on the wide side may be inside it */
    for (int k = 0; k < 3 && !found; k++) {
      char dd[64];
      int ee = e;
      memcpy(dd, cand, (size_t)n);
      if (k) gofloat__step(dd, n, &ee, k == 1 ? 1 : -1);
      char num[80];
      snprintf(num, sizeof num, "%c.%.*se%d", dd[0], n - 1, dd + 1, ee);
      if (is32 ? strtof(num, NULL) == (float)fabs(v) : strtod(num, NULL) == fabs(v)) {
        memcpy(cand, dd, (size_t)n);
        e = ee;
        found = 1;
      }
    }
    if (found) break;
  }
  while (n > 1 && cand[n - 1] == '0') n--;
  if ((size_t)n >= dlen) n = (int)dlen - 1;
  memcpy(d, cand, (size_t)n);
  d[n] = 0;
  *dp = e + 1;
  return n;
}
