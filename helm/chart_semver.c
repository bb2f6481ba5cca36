/* Masterminds/semver v3 versions and constraints, as Helm uses them for chart versions,
 * dependency version ranges and kubeVersion. */
#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "helm/chart.h"

typedef struct sv_ver_s {
  uint64_t major, minor, patch;
  char pre[128];
  int has_minor, has_patch; /* given explicitly (for constraints) */
  int minor_dirty, patch_dirty, major_dirty; /* x, X or * wildcards (constraints only) */
} sv_ver_t;

static int sv_num(const char **p, uint64_t *out, int allow_leading_zero) {
  const char *s = *p;
  if (!isdigit((unsigned char)*s)) return -1;
  if (!allow_leading_zero && s[0] == '0' && isdigit((unsigned char)s[1])) return -1;
  uint64_t v = 0;
  while (isdigit((unsigned char)*s)) {
    if (v > (UINT64_MAX - 9) / 10) return -1;
    v = v * 10 + (uint64_t)(*s - '0');
    s++;
  }
  *out = v;
  *p = s;
  return 0;
}

/* Dot-separated identifiers [0-9A-Za-z-]+; numeric ones without leading zeros when strict_numeric. */
static int sv_idents(const char **p, char *out, size_t outlen, int strict_numeric) {
  const char *s = *p, *start = s;
  for (;;) {
    const char *id = s;
    int digits_only = 1;
    while (isalnum((unsigned char)*s) || *s == '-') {
      if (!isdigit((unsigned char)*s)) digits_only = 0;
      s++;
    }
    if (s == id) return -1;
    if (strict_numeric && digits_only && id[0] == '0' && s - id > 1) return -1;
    if (*s != '.') break;
    s++;
  }
  size_t n = (size_t)(s - start);
  if (out) {
    if (n >= outlen) return -1;
    memcpy(out, start, n);
    out[n] = 0;
  }
  *p = s;
  return 0;
}

/* semver.NewVersion (the loose regex: 1, 1.2, v1.2.3-pre+build). wildcards for constraint parsing. */
static int sv_parse(const char *s, size_t n, sv_ver_t *v, int wildcards) {
  char buf[256];
  if (n >= sizeof buf || n == 0) return -1;
  memcpy(buf, s, n);
  buf[n] = 0;
  memset(v, 0, sizeof *v);
  const char *p = buf;
  if (*p == 'v') p++;
  if (wildcards && (*p == 'x' || *p == 'X' || *p == '*')) {
    v->major_dirty = v->minor_dirty = v->patch_dirty = 1;
    p++;
    goto rest;
  }
  if (sv_num(&p, &v->major, 0)) return -1;
  if (*p == '.') {
    p++;
    v->has_minor = 1;
    if (wildcards && (*p == 'x' || *p == 'X' || *p == '*')) {
      v->minor_dirty = v->patch_dirty = 1;
      p++;
    } else if (sv_num(&p, &v->minor, 0)) return -1;
    if (*p == '.') {
      p++;
      v->has_patch = 1;
      if (wildcards && (*p == 'x' || *p == 'X' || *p == '*')) {
        v->patch_dirty = 1;
        p++;
      } else if (sv_num(&p, &v->patch, 0)) return -1;
    }
  }
  if (wildcards) {
    if (!v->has_minor) v->minor_dirty = v->patch_dirty = 1;
    else if (!v->has_patch) v->patch_dirty = 1;
  }
rest:
  if (*p == '-') {
    p++;
    if (sv_idents(&p, v->pre, sizeof v->pre, 1)) return -1;
  }
  if (*p == '+') {
    p++;
    if (sv_idents(&p, NULL, 0, 0)) return -1;
  }
  return *p ? -1 : 0;
}

int chart_semver_valid(const char *v) {
  sv_ver_t x;
  return sv_parse(v, strlen(v), &x, 0) == 0;
}

static int sv_cmp_pre(const char *a, const char *b) {
  if (!*a && !*b) return 0;
  if (!*a) return 1;
  if (!*b) return -1;
  while (*a || *b) {
    if (!*a) return -1;
    if (!*b) return 1;
    size_t la = strcspn(a, "."), lb = strcspn(b, ".");
    int na = 1, nb = 1;
    for (size_t i = 0; i < la; i++)
      if (!isdigit((unsigned char)a[i])) na = 0;
    for (size_t i = 0; i < lb; i++)
      if (!isdigit((unsigned char)b[i])) nb = 0;
    int c;
    if (na && nb) {
      c = la != lb ? (la < lb ? -1 : 1) : memcmp(a, b, la);
    } else if (na) {
      c = -1;
    } else if (nb) {
      c = 1;
    } else {
      size_t m = la < lb ? la : lb;
      c = memcmp(a, b, m);
      if (!c && la != lb) c = la < lb ? -1 : 1;
    }
    if (c) return c < 0 ? -1 : 1;
    a += la;
    b += lb;
    if (*a == '.') a++;
    if (*b == '.') b++;
  }
  return 0;
}

static int sv_cmp(const sv_ver_t *a, const sv_ver_t *b) {
  if (a->major != b->major) return a->major < b->major ? -1 : 1;
  if (a->minor != b->minor) return a->minor < b->minor ? -1 : 1;
  if (a->patch != b->patch) return a->patch < b->patch ? -1 : 1;
  return sv_cmp_pre(a->pre, b->pre);
}

static int sv_check_one(const char *op, const sv_ver_t *c, const sv_ver_t *v) {
  /* A prerelease version only satisfies constraints that carry a prerelease themselves. */
  if (v->pre[0] && !c->pre[0]) return 0;
  if (!strcmp(op, "") || !strcmp(op, "=") || !strcmp(op, "!=")) {
    int eq;
    if (c->major_dirty) eq = 1;
    else if (c->minor_dirty) eq = v->major == c->major;
    else if (c->patch_dirty) eq = v->major == c->major && v->minor == c->minor;
    else eq = sv_cmp(v, c) == 0;
    return !strcmp(op, "!=") ? !eq : eq;
  }
  if (!strcmp(op, ">")) {
    if (c->major_dirty) return 0;
    if (c->minor_dirty) return v->major > c->major;
    if (c->patch_dirty) return v->major > c->major || (v->major == c->major && v->minor > c->minor);
    return sv_cmp(v, c) > 0;
  }
  if (!strcmp(op, "<")) return sv_cmp(v, c) < 0;
  if (!strcmp(op, ">=") || !strcmp(op, "=>")) return sv_cmp(v, c) >= 0;
  if (!strcmp(op, "<=") || !strcmp(op, "=<")) {
    if (c->major_dirty) return 1;
    if (c->minor_dirty) return v->major <= c->major;
    if (c->patch_dirty) return v->major < c->major || (v->major == c->major && v->minor <= c->minor);
    return sv_cmp(v, c) <= 0;
  }
  if (!strcmp(op, "~") || !strcmp(op, "~>")) {
    if (sv_cmp(v, c) < 0) return 0;
    if (c->major_dirty) return 1;
    if (v->major != c->major) return 0;
    if (c->minor_dirty) return 1;
    return v->minor == c->minor;
  }
  if (!strcmp(op, "^")) {
    if (sv_cmp(v, c) < 0) return 0;
    if (c->major_dirty) return 1;
    if (c->major > 0 || c->minor_dirty) return v->major == c->major;
    if (c->minor > 0 || c->patch_dirty) return v->major == 0 && v->minor == c->minor;
    return v->major == 0 && v->minor == 0 && v->patch == c->patch;
  }
  return 0;
}

/* One AND group: constraints separated by commas and/or spaces; "a - b" hyphen ranges. */
static int sv_check_group(const char *g, size_t n, const sv_ver_t *v, int *ok) {
  char tok[64][96];
  size_t nt = 0, i = 0;
  while (i < n) {
    while (i < n && (g[i] == ' ' || g[i] == ',' || g[i] == '\t')) i++;
    size_t s = i;
    while (i < n && g[i] != ' ' && g[i] != ',' && g[i] != '\t') i++;
    if (i > s) {
      if (nt == 64 || i - s >= 96) return -1;
      memcpy(tok[nt], g + s, i - s);
      tok[nt][i - s] = 0;
      nt++;
    }
  }
  if (!nt) return -1;
  /* Join an operator written apart from its version (">= 1.2"). */
  int all = 1;
  for (size_t t = 0; t < nt; t++) {
    const char *op = "";
    const char *x = tok[t];
    char opbuf[4] = "";
    if (t + 2 < nt && !strcmp(tok[t + 1], "-")) { /* hyphen range */
      sv_ver_t lo, hi;
      if (sv_parse(tok[t], strlen(tok[t]), &lo, 1) || sv_parse(tok[t + 2], strlen(tok[t + 2]), &hi, 1)) return -1;
      if (!sv_check_one(">=", &lo, v) || !sv_check_one("<=", &hi, v)) all = 0;
      t += 2;
      continue;
    }
    size_t ol = strspn(x, "=<>!~^");
    if (ol > 2) return -1;
    memcpy(opbuf, x, ol);
    opbuf[ol] = 0;
    op = opbuf;
    x += ol;
    while (*x == ' ') x++;
    if (!*x) {
      if (t + 1 >= nt) return -1;
      x = tok[++t];
    }
    if (*op && strcmp(op, "=") && strcmp(op, "!=") && strcmp(op, ">") && strcmp(op, "<") && strcmp(op, ">=") &&
        strcmp(op, "=>") && strcmp(op, "<=") && strcmp(op, "=<") && strcmp(op, "~") && strcmp(op, "~>") &&
        strcmp(op, "^"))
      return -1;
    sv_ver_t c;
    if (sv_parse(x, strlen(x), &c, 1)) return -1;
    if (!sv_check_one(op, &c, v)) all = 0;
  }
  *ok = all;
  return 0;
}

int chart_semver_check(const char *constraint, const char *version) {
  sv_ver_t v;
  if (!constraint || !version || sv_parse(version, strlen(version), &v, 0)) return 0;
  const char *p = constraint;
  int any = 0;
  for (;;) {
    const char *bar = strstr(p, "||");
    size_t n = bar ? (size_t)(bar - p) : strlen(p);
    int ok = 0;
    if (sv_check_group(p, n, &v, &ok)) return 0; /* an invalid constraint matches nothing */
    if (ok) any = 1;
    if (!bar) break;
    p = bar + 2;
  }
  return any;
}
