#include "base/gofloat.h"
#include <math.h>
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

/* Shortest decimal digits that read back as v (at float32 precision when is32), choosing, like Go's
 * strconv, the closest such string: digits (no dot, no trailing zeros) into d; v = 0.d x 10^dp. */
int gofloat_shortest(double v, int is32, char *d, size_t dlen, int *dp) {
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
