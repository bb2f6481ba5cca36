/* Sprig's date functions and Helm's duration helpers on a port of Go's time
 * package: time.Time and time.Duration as host objects, Format/Parse with Go
 * layouts (nextStdChunk, ParseError texts), ParseDuration, Duration.String,
 * Round/Truncate, and locations read from the system zoneinfo (TZif v1-v3
 * with the POSIX TZ footer for times past the last transition) as Go's
 * LoadLocation does; Local follows $TZ and /etc/localtime like Go's initLocal. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "helm/template/sprig_internal.h"

#define ALPHA_SEC INT64_MIN
#define OMEGA_SEC INT64_MAX

/* ---- locations ------------------------------------------------------------ */

typedef struct {
  const char *name;
  int32_t off;
  bool dst;
} tz_zone_t;

typedef struct {
  int64_t when;
  uint8_t idx;
} tz_tx_t;

typedef struct tz_loc_s {
  tz_zone_t *zones;
  size_t nz;
  tz_tx_t *tx;
  size_t ntx;
  const char *extend;
} tz_loc_t;

static const tz_loc_t loc_utc = {0};

typedef void *(*alloc_fn)(void *ctx, size_t n);

static uint32_t be32(const unsigned char *p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static int64_t be64(const unsigned char *p) { return (int64_t)((uint64_t)be32(p) << 32 | be32(p + 4)); }

/* LoadLocationFromTZData: 0 or -1 for malformed data. */
static int tz_parse(const unsigned char *d, size_t n, alloc_fn al, void *ctx, tz_loc_t *loc) {
  memset(loc, 0, sizeof *loc);
  if (n < 44 || memcmp(d, "TZif", 4)) return -1;
  int version = d[4] == 0 ? 1 : d[4] - '0';
  size_t p = 20;
  uint32_t cnt[6];
  for (int i = 0; i < 6; i++) cnt[i] = be32(d + p + 4 * i);
  p += 24;
  bool is64 = false;
  if (version > 1) {
    size_t skip = (size_t)cnt[3] * 5 + (size_t)cnt[4] * 6 + cnt[5] + (size_t)cnt[2] * 8 + cnt[1] + cnt[0];
    if (p + skip + 44 > n) return -1;
    p += skip;
    if (memcmp(d + p, "TZif", 4)) return -1;
    p += 20;
    for (int i = 0; i < 6; i++) cnt[i] = be32(d + p + 4 * i);
    p += 24;
    is64 = true;
  }
  size_t nutc = cnt[0], nstd = cnt[1], nleap = cnt[2], ntime = cnt[3], nzone = cnt[4], nchar = cnt[5];
  size_t tsz = is64 ? 8 : 4;
  size_t need = ntime * tsz + ntime + nzone * 6 + nchar + nleap * (tsz + 4) + nstd + nutc;
  if (p + need > n || nzone == 0 || nzone > 256) return -1;
  const unsigned char *txt = d + p, *txi = txt + ntime * tsz, *zt = txi + ntime, *ch = zt + nzone * 6;
  loc->zones = al(ctx, nzone * sizeof(tz_zone_t));
  if (!loc->zones) return -1;
  loc->nz = nzone;
  for (size_t i = 0; i < nzone; i++) {
    const unsigned char *z = zt + 6 * i;
    loc->zones[i].off = (int32_t)be32(z);
    loc->zones[i].dst = z[4] != 0;
    size_t ai = z[5];
    if (ai > nchar) return -1;
    size_t e = ai;
    while (e < nchar && ch[e]) e++;
    char *nm = al(ctx, e - ai + 1);
    if (!nm) return -1;
    memcpy(nm, ch + ai, e - ai);
    nm[e - ai] = 0;
    loc->zones[i].name = nm;
  }
  size_t ntx = ntime ? ntime : 1;
  loc->tx = al(ctx, ntx * sizeof(tz_tx_t));
  if (!loc->tx) return -1;
  loc->ntx = ntx;
  if (!ntime) {
    loc->tx[0].when = ALPHA_SEC;
    loc->tx[0].idx = 0;
  }
  for (size_t i = 0; i < ntime; i++) {
    loc->tx[i].when = is64 ? be64(txt + 8 * i) : (int64_t)(int32_t)be32(txt + 4 * i);
    if (txi[i] >= nzone) return -1;
    loc->tx[i].idx = txi[i];
  }
  p += need;
  if (version > 1 && n - p > 2 && d[p] == '\n' && d[n - 1] == '\n') {
    char *ex = al(ctx, n - p - 1);
    if (!ex) return -1;
    memcpy(ex, d + p + 1, n - p - 2);
    ex[n - p - 2] = 0;
    loc->extend = ex;
  }
  return 0;
}

static int read_file(const char *path, unsigned char **out, size_t *n) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  size_t cap = 4096, len = 0;
  unsigned char *b = malloc(cap);
  if (!b) return close(fd), -1;
  for (;;) {
    if (len == cap) {
      if (cap >= (1u << 22)) { /* Go refuses zone files over 10 MB; keep it small */
        free(b);
        close(fd);
        return -1;
      }
      unsigned char *nb = realloc(b, cap * 2);
      if (!nb) return free(b), close(fd), -1;
      b = nb;
      cap *= 2;
    }
    ssize_t k = read(fd, b + len, cap - len);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) return free(b), close(fd), -1;
    if (k == 0) break;
    len += (size_t)k;
  }
  close(fd);
  *out = b;
  *n = len;
  return 0;
}

static int tz_load_from(const char *const *dirs, size_t ndirs, const char *name, alloc_fn al, void *ctx,
                        tz_loc_t *loc) {
  for (size_t i = 0; i < ndirs; i++) {
    char path[4096];
    int k = snprintf(path, sizeof path, "%s%s", dirs[i], name);
    if (k < 0 || (size_t)k >= sizeof path) continue;
    unsigned char *d;
    size_t n;
    if (read_file(path, &d, &n)) continue;
    int rc = tz_parse(d, n, al, ctx, loc);
    free(d);
    if (!rc) return 0;
  }
  return -1;
}

static const char *const zone_dirs[] = {"/usr/share/zoneinfo/", "/usr/share/lib/zoneinfo/", "/usr/lib/locale/TZ/",
                                        "/etc/zoneinfo/"};

static void *arena_al(void *ctx, size_t n) { return tpl_arena_alloc(ctx, n); }
static void *malloc_al(void *ctx, size_t n) {
  (void)ctx;
  return calloc(1, n ? n : 1);
}

static tz_loc_t loc_local;
static pthread_once_t local_once = PTHREAD_ONCE_INIT;

/* Go's initLocal (the loaded data is kept for the life of the process, as Go does). */
static void local_init(void) {
  const char *tz = getenv("TZ");
  if (!tz) {
    const char *etc[] = {"/etc/"};
    if (!tz_load_from(etc, 1, "localtime", malloc_al, NULL, &loc_local)) return;
  } else if (*tz) {
    if (tz[0] == ':') tz++;
    if (tz[0] == '/') {
      const char *root[] = {""};
      if (!tz_load_from(root, 1, tz, malloc_al, NULL, &loc_local)) return;
    } else if (*tz && strcmp(tz, "UTC")) {
      if (!tz_load_from(zone_dirs, 4, tz, malloc_al, NULL, &loc_local)) return;
    }
  }
  memset(&loc_local, 0, sizeof loc_local);
}

static const tz_loc_t *local_loc(void) {
  pthread_once(&local_once, local_init);
  return &loc_local;
}

static bool contains_dotdot(const char *s) {
  size_t n = strlen(s);
  for (size_t i = 0; i + 1 < n; i++)
    if (s[i] == '.' && s[i + 1] == '.') return true;
  return false;
}

/* time.LoadLocation; NULL when unknown (callers then use UTC, as Sprig does). */
static const tz_loc_t *load_location(tpl_arena_t *a, const char *name) {
  if (!*name || !strcmp(name, "UTC")) return &loc_utc;
  if (!strcmp(name, "Local")) return local_loc();
  if (contains_dotdot(name) || name[0] == '/' || name[0] == '\\') return NULL;
  tz_loc_t *l = tpl_arena_alloc(a, sizeof *l);
  if (!l) return NULL;
  const char *zi = getenv("ZONEINFO");
  if (zi && *zi) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/", zi);
    const char *d1[] = {dir};
    if (!tz_load_from(d1, 1, name, arena_al, a, l)) return l;
  }
  if (!tz_load_from(zone_dirs, 4, name, arena_al, a, l)) return l;
  return NULL;
}

static tz_loc_t *fixed_zone(tpl_arena_t *a, const char *name, size_t nlen, int32_t off) {
  tz_loc_t *l = tpl_arena_alloc(a, sizeof *l);
  tz_zone_t *z = tpl_arena_alloc(a, sizeof *z);
  tz_tx_t *t = tpl_arena_alloc(a, sizeof *t);
  char *nm = tpl_arena_strndup(a, name, nlen);
  if (!l || !z || !t || !nm) return NULL;
  z->name = nm;
  z->off = off;
  t->when = ALPHA_SEC;
  l->zones = z;
  l->nz = 1;
  l->tx = t;
  l->ntx = 1;
  return l;
}

/* ---- calendar ----------------------------------------------------------- */

static int64_t floor_div(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

static int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, int *m, int *d) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t yy = yoe + era * 400;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  *d = (int)(doy - (153 * mp + 2) / 5 + 1);
  *m = (int)(mp < 10 ? mp + 3 : mp - 9);
  *y = yy + (*m <= 2);
}

static bool is_leap(int64_t y) { return y % 4 == 0 && (y % 100 != 0 || y % 400 == 0); }
static int days_in(int m, int64_t y) {
  static const int dm[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return m == 2 && is_leap(y) ? 29 : dm[m - 1];
}
static int days_before(int m) { /* days before month m (1-based), non-leap; m may be 13 */
  static const int db[] = {0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365};
  return db[m - 1];
}

/* ---- zone lookup ------------------------------------------------------------ */

typedef struct {
  const char *name;
  int32_t off;
  int64_t start, end;
} zinfo_t;

static bool tzset_name(const char **s, const char **name, size_t *nlen) {
  const char *p = *s;
  if (!*p) return false;
  if (*p != '<') {
    size_t i = 0;
    for (; p[i]; i++) {
      if ((p[i] >= '0' && p[i] <= '9') || p[i] == ',' || p[i] == '-' || p[i] == '+') {
        if (i < 3) return false;
        *name = p, *nlen = i, *s = p + i;
        return true;
      }
    }
    if (i < 3) return false;
    *name = p, *nlen = i, *s = p + i;
    return true;
  }
  const char *e = strchr(p, '>');
  if (!e) return false;
  *name = p + 1, *nlen = (size_t)(e - p - 1), *s = e + 1;
  return true;
}

static bool tzset_num(const char **s, int min, int max, int *out) {
  const char *p = *s;
  if (!*p) return false;
  int num = 0, i = 0;
  for (; p[i]; i++) {
    if (p[i] < '0' || p[i] > '9') {
      if (i == 0 || num < min) return false;
      *out = num, *s = p + i;
      return true;
    }
    num = num * 10 + (p[i] - '0');
    if (num > max) return false;
  }
  if (num < min) return false;
  *out = num, *s = p + i;
  return true;
}

static bool tzset_offset(const char **s, int *out) {
  const char *p = *s;
  if (!*p) return false;
  bool neg = false;
  if (*p == '+') p++;
  else if (*p == '-') p++, neg = true;
  int h, mi, se;
  if (!tzset_num(&p, 0, 24 * 7, &h)) return false;
  int off = h * 3600;
  if (*p == ':') {
    p++;
    if (!tzset_num(&p, 0, 59, &mi)) return false;
    off += mi * 60;
    if (*p == ':') {
      p++;
      if (!tzset_num(&p, 0, 59, &se)) return false;
      off += se;
    }
  }
  *out = neg ? -off : off;
  *s = p;
  return true;
}

typedef struct {
  int kind, day, week, mon, time;
} tzrule_t;

static bool tzset_rule(const char **s, tzrule_t *r) {
  const char *p = *s;
  memset(r, 0, sizeof *r);
  if (!*p) return false;
  if (*p == 'J') {
    p++;
    if (!tzset_num(&p, 1, 365, &r->day)) return false;
    r->kind = 0;
  } else if (*p == 'M') {
    p++;
    if (!tzset_num(&p, 1, 12, &r->mon) || *p != '.') return false;
    p++;
    if (!tzset_num(&p, 1, 5, &r->week) || *p != '.') return false;
    p++;
    if (!tzset_num(&p, 0, 6, &r->day)) return false;
    r->kind = 2;
  } else {
    if (!tzset_num(&p, 0, 365, &r->day)) return false;
    r->kind = 1;
  }
  if (*p != '/') {
    r->time = 2 * 3600;
  } else {
    p++;
    if (!tzset_offset(&p, &r->time)) return false;
  }
  *s = p;
  return true;
}

static int64_t tzrule_time(int64_t year, const tzrule_t *r, int off) {
  int64_t s = 0;
  if (r->kind == 0) {
    s = (int64_t)(r->day - 1) * 86400;
    if (is_leap(year) && r->day >= 60) s += 86400;
  } else if (r->kind == 1) {
    s = (int64_t)r->day * 86400;
  } else {
    int64_t m1 = (r->mon + 9) % 12 + 1, yy0 = year;
    if (r->mon <= 2) yy0--;
    int64_t yy1 = yy0 / 100, yy2 = yy0 % 100;
    int64_t dow = ((26 * m1 - 2) / 10 + 1 + yy2 + yy2 / 4 + yy1 / 4 - 2 * yy1) % 7;
    if (dow < 0) dow += 7;
    int64_t d = r->day - dow;
    if (d < 0) d += 7;
    for (int i = 1; i < r->week; i++) {
      if (d + 7 >= days_in(r->mon, year)) break;
      d += 7;
    }
    d += days_before(r->mon);
    if (is_leap(year) && r->mon > 2) d++;
    s = d * 86400;
  }
  return s + r->time - off;
}

static bool tz_footer(const char *s, int64_t last_tx, int64_t sec, zinfo_t *zi, char *nbuf, size_t nbufsz) {
  const char *stdn, *dstn;
  size_t stdl, dstl;
  int stdo, dsto;
  if (!tzset_name(&s, &stdn, &stdl) || !tzset_offset(&s, &stdo)) return false;
  stdo = -stdo;
  if (!*s || *s == ',') {
    snprintf(nbuf, nbufsz, "%.*s", (int)stdl, stdn);
    *zi = (zinfo_t){nbuf, stdo, last_tx, OMEGA_SEC};
    return true;
  }
  if (!tzset_name(&s, &dstn, &dstl)) return false;
  if (!*s || *s == ',') dsto = stdo + 3600;
  else {
    if (!tzset_offset(&s, &dsto)) return false;
    dsto = -dsto;
  }
  if (!*s) s = ",M3.2.0,M11.1.0";
  if (*s != ',' && *s != ';') return false;
  s++;
  tzrule_t sr, er;
  if (!tzset_rule(&s, &sr) || *s != ',') return false;
  s++;
  if (!tzset_rule(&s, &er) || *s) return false;
  int64_t days = floor_div(sec, 86400), year;
  int mo, dd;
  civil_from_days(days, &year, &mo, &dd);
  int64_t yday = days - days_from_civil(year, 1, 1) + 1;
  int64_t ysec = (yday - 1) * 86400 + sec % 86400;
  int64_t ystart = sec - ysec;
  int64_t ss = tzrule_time(year, &sr, stdo), es = tzrule_time(year, &er, dsto);
  if (es < ss) {
    int64_t t = ss; ss = es; es = t;
    const char *tn = stdn; stdn = dstn; dstn = tn;
    size_t tl = stdl; stdl = dstl; dstl = tl;
    int to = stdo; stdo = dsto; dsto = to;
  }
  if (ysec < ss) {
    snprintf(nbuf, nbufsz, "%.*s", (int)stdl, stdn);
    *zi = (zinfo_t){nbuf, stdo, ystart, ss + ystart};
  } else if (ysec >= es) {
    snprintf(nbuf, nbufsz, "%.*s", (int)stdl, stdn);
    *zi = (zinfo_t){nbuf, stdo, es + ystart, ystart + 365 * 86400};
  } else {
    snprintf(nbuf, nbufsz, "%.*s", (int)dstl, dstn);
    *zi = (zinfo_t){nbuf, dsto, ss + ystart, es + ystart};
  }
  return true;
}

static size_t first_zone(const tz_loc_t *l) {
  bool used = false;
  for (size_t i = 0; i < l->ntx; i++)
    if (l->tx[i].idx == 0) used = true;
  if (!used) return 0;
  if (l->ntx && l->zones[l->tx[0].idx].dst) {
    for (int zi = (int)l->tx[0].idx - 1; zi >= 0; zi--)
      if (!l->zones[zi].dst) return (size_t)zi;
  }
  for (size_t zi = 0; zi < l->nz; zi++)
    if (!l->zones[zi].dst) return zi;
  return 0;
}

/* Location.lookup; nbuf holds a name computed from the TZ footer. */
static zinfo_t loc_lookup(const tz_loc_t *l, int64_t sec, char *nbuf, size_t nbufsz) {
  zinfo_t z = {"UTC", 0, ALPHA_SEC, OMEGA_SEC};
  if (!l->nz) return z;
  if (!l->ntx || sec < l->tx[0].when) {
    const tz_zone_t *zz = &l->zones[first_zone(l)];
    z.name = zz->name;
    z.off = zz->off;
    z.end = l->ntx ? l->tx[0].when : OMEGA_SEC;
    return z;
  }
  size_t lo = 0, hi = l->ntx;
  int64_t end = OMEGA_SEC;
  while (hi - lo > 1) {
    size_t m = (lo + hi) / 2;
    if (sec < l->tx[m].when) end = l->tx[m].when, hi = m;
    else lo = m;
  }
  const tz_zone_t *zz = &l->zones[l->tx[lo].idx];
  z.name = zz->name;
  z.off = zz->off;
  z.start = l->tx[lo].when;
  z.end = end;
  if (lo == l->ntx - 1 && l->extend && *l->extend) {
    zinfo_t e;
    if (tz_footer(l->extend, z.start, sec, &e, nbuf, nbufsz)) return e;
  }
  return z;
}

static bool lookup_name(const tz_loc_t *l, const char *name, size_t nlen, int64_t ux, int32_t *off) {
  char nb[64];
  for (size_t i = 0; i < l->nz; i++) {
    const tz_zone_t *z = &l->zones[i];
    if (strlen(z->name) == nlen && !memcmp(z->name, name, nlen)) {
      zinfo_t r = loc_lookup(l, ux - z->off, nb, sizeof nb);
      if (!strcmp(r.name, z->name)) return *off = r.off, true;
    }
  }
  for (size_t i = 0; i < l->nz; i++) {
    const tz_zone_t *z = &l->zones[i];
    if (strlen(z->name) == nlen && !memcmp(z->name, name, nlen)) return *off = z->off, true;
  }
  return false;
}

/* ---- time values -------------------------------------------------------------- */

typedef struct {
  int64_t sec; /* Unix seconds */
  int32_t nsec;
  const tz_loc_t *loc;
  bool mono;
  int64_t mono_ns;
} gtime_t;

#define ZERO_TIME_SEC (-62135596800LL) /* 0001-01-01T00:00:00Z */

static gtime_t time_zero(void) { return (gtime_t){ZERO_TIME_SEC, 0, &loc_utc, false, 0}; }

/* time.Date */
static gtime_t time_date(int64_t y, int64_t mo, int64_t d, int64_t h, int64_t mi, int64_t s, int64_t ns,
                         const tz_loc_t *loc) {
  int64_t m = mo - 1;
  y += floor_div(m, 12);
  m -= floor_div(m, 12) * 12;
  s += floor_div(ns, 1000000000);
  ns -= floor_div(ns, 1000000000) * 1000000000;
  int64_t days = days_from_civil(y, m + 1, 1) + d - 1;
  int64_t ux = days * 86400 + h * 3600 + mi * 60 + s;
  char nb[64];
  zinfo_t z = loc_lookup(loc, ux, nb, sizeof nb);
  if (z.off) {
    int64_t utc = ux - z.off;
    if (utc < z.start || utc >= z.end) z = loc_lookup(loc, utc, nb, sizeof nb);
    ux -= z.off;
  }
  return (gtime_t){ux, (int32_t)ns, loc, false, 0};
}

static void put_int(buf_t *b, int64_t x, int width) {
  char t[32];
  uint64_t u = (uint64_t)x;
  if (x < 0) buf_putc(b, '-'), u = -(uint64_t)x;
  int n = 0;
  do t[n++] = (char)('0' + u % 10), u /= 10;
  while (u);
  for (int p = width - n; p > 0; p--) buf_putc(b, '0');
  while (n) buf_putc(b, t[--n]);
}

static const char *const long_days[] = {"Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"};
static const char *const short_days[] = {"Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"};
static const char *const short_months[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                           "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
static const char *const long_months[] = {"January", "February", "March",     "April",   "May",      "June",
                                          "July",    "August",   "September", "October", "November", "December"};

enum {
  STD_NONE = 0,
  STD_LONG_MONTH = 1 + 256, STD_MONTH, STD_NUM_MONTH, STD_ZERO_MONTH, STD_LONG_WEEKDAY, STD_WEEKDAY, STD_DAY,
  STD_UNDER_DAY, STD_ZERO_DAY,
  STD_UNDER_YEARDAY = 10 + 512, STD_ZERO_YEARDAY,
  STD_HOUR = 12 + 1024, STD_HOUR12, STD_ZERO_HOUR12, STD_MINUTE, STD_ZERO_MINUTE, STD_SECOND, STD_ZERO_SECOND,
  STD_LONG_YEAR = 19 + 256, STD_YEAR,
  STD_PM = 21 + 1024, STD_pm,
  STD_TZ = 23, STD_ISO8601_TZ, STD_ISO8601_SECONDS_TZ, STD_ISO8601_SHORT_TZ, STD_ISO8601_COLON_TZ,
  STD_ISO8601_COLON_SECONDS_TZ, STD_NUM_TZ, STD_NUM_SECONDS_TZ, STD_NUM_SHORT_TZ, STD_NUM_COLON_TZ,
  STD_NUM_COLON_SECONDS_TZ, STD_FRAC0, STD_FRAC9,
};
#define STD_NEED_DATE 256
#define STD_NEED_YDAY 512
#define STD_NEED_CLOCK 1024
#define STD_MASK 0xffff
#define STD_ARG_SHIFT 16
#define STD_SEP_SHIFT 28

static const int std0x[] = {STD_ZERO_MONTH, STD_ZERO_DAY, STD_ZERO_HOUR12, STD_ZERO_MINUTE, STD_ZERO_SECOND, STD_YEAR};

static bool starts_lower(const char *s, size_t n) { return n && s[0] >= 'a' && s[0] <= 'z'; }
static bool pre_is(const char *l, size_t n, size_t i, const char *w) {
  size_t k = strlen(w);
  return n >= i + k && !memcmp(l + i, w, k);
}

/* nextStdChunk: the prefix is l[0..*plen), the element l[*plen..*slo). */
static int next_std(const char *l, size_t n, size_t *plen, size_t *slo) {
  for (size_t i = 0; i < n; i++) {
    int c = (unsigned char)l[i];
    *plen = i;
#define RET(std, len) return *slo = i + (len), (std)
    switch (c) {
    case 'J':
      if (pre_is(l, n, i, "Jan")) {
        if (pre_is(l, n, i, "January")) RET(STD_LONG_MONTH, 7);
        if (!starts_lower(l + i + 3, n - i - 3)) RET(STD_MONTH, 3);
      }
      break;
    case 'M':
      if (n >= i + 3) {
        if (pre_is(l, n, i, "Mon")) {
          if (pre_is(l, n, i, "Monday")) RET(STD_LONG_WEEKDAY, 6);
          if (!starts_lower(l + i + 3, n - i - 3)) RET(STD_WEEKDAY, 3);
        }
        if (pre_is(l, n, i, "MST")) RET(STD_TZ, 3);
      }
      break;
    case '0':
      if (n >= i + 2 && l[i + 1] >= '1' && l[i + 1] <= '6') RET(std0x[l[i + 1] - '1'], 2);
      if (n >= i + 3 && l[i + 1] == '0' && l[i + 2] == '2') RET(STD_ZERO_YEARDAY, 3);
      break;
    case '1':
      if (n >= i + 2 && l[i + 1] == '5') RET(STD_HOUR, 2);
      RET(STD_NUM_MONTH, 1);
    case '2':
      if (pre_is(l, n, i, "2006")) RET(STD_LONG_YEAR, 4);
      RET(STD_DAY, 1);
    case '_':
      if (n >= i + 2 && l[i + 1] == '2') {
        if (n >= i + 5 && !memcmp(l + i + 1, "2006", 4)) {
          *plen = i + 1;
          RET(STD_LONG_YEAR, 5);
        }
        RET(STD_UNDER_DAY, 2);
      }
      if (n >= i + 3 && l[i + 1] == '_' && l[i + 2] == '2') RET(STD_UNDER_YEARDAY, 3);
      break;
    case '3': RET(STD_HOUR12, 1);
    case '4': RET(STD_MINUTE, 1);
    case '5': RET(STD_SECOND, 1);
    case 'P':
      if (n >= i + 2 && l[i + 1] == 'M') RET(STD_PM, 2);
      break;
    case 'p':
      if (n >= i + 2 && l[i + 1] == 'm') RET(STD_pm, 2);
      break;
    case '-':
      if (pre_is(l, n, i, "-070000")) RET(STD_NUM_SECONDS_TZ, 7);
      if (pre_is(l, n, i, "-07:00:00")) RET(STD_NUM_COLON_SECONDS_TZ, 9);
      if (pre_is(l, n, i, "-0700")) RET(STD_NUM_TZ, 5);
      if (pre_is(l, n, i, "-07:00")) RET(STD_NUM_COLON_TZ, 6);
      if (pre_is(l, n, i, "-07")) RET(STD_NUM_SHORT_TZ, 3);
      break;
    case 'Z':
      if (pre_is(l, n, i, "Z070000")) RET(STD_ISO8601_SECONDS_TZ, 7);
      if (pre_is(l, n, i, "Z07:00:00")) RET(STD_ISO8601_COLON_SECONDS_TZ, 9);
      if (pre_is(l, n, i, "Z0700")) RET(STD_ISO8601_TZ, 5);
      if (pre_is(l, n, i, "Z07:00")) RET(STD_ISO8601_COLON_TZ, 6);
      if (pre_is(l, n, i, "Z07")) RET(STD_ISO8601_SHORT_TZ, 3);
      break;
    case '.':
    case ',':
      if (i + 1 < n && (l[i + 1] == '0' || l[i + 1] == '9')) {
        char ch = l[i + 1];
        size_t j = i + 1;
        while (j < n && l[j] == ch) j++;
        if (!(j < n && l[j] >= '0' && l[j] <= '9')) {
          int code = ch == '9' ? STD_FRAC9 : STD_FRAC0;
          int std = code | (int)(((j - (i + 1)) & 0xfff) << STD_ARG_SHIFT);
          if (c == ',') std |= 1 << STD_SEP_SHIFT;
          *slo = j;
          return std;
        }
      }
      break;
    }
#undef RET
  }
  *plen = n;
  *slo = n;
  return 0;
}

static void put_nano(buf_t *b, int nsec, int std) {
  bool trim = (std & STD_MASK) == STD_FRAC9;
  int n = (std >> STD_ARG_SHIFT) & 0xfff;
  if (trim && (n == 0 || nsec == 0)) return;
  char dot = (std >> STD_SEP_SHIFT) ? ',' : '.';
  char t[16];
  snprintf(t, sizeof t, "%09d", nsec);
  size_t k = n < 9 ? (size_t)n : 9;
  if (trim)
    while (k > 0 && t[k - 1] == '0') k--;
  if (trim && k == 0) return;
  buf_putc(b, dot);
  buf_append(b, t, k);
}

/* Time.Format */
static void time_format(buf_t *b, const gtime_t *t, const char *l, size_t n) {
  char nb[64];
  zinfo_t z = loc_lookup(t->loc, t->sec, nb, sizeof nb);
  int64_t abs = t->sec + z.off;
  int64_t days = floor_div(abs, 86400);
  int64_t secofday = abs - days * 86400;
  int64_t year = -1;
  int month = 0, day = 0, yday = -1, hour = -1, min = 0, sec = 0;
  while (n) {
    size_t plen, slo;
    int std = next_std(l, n, &plen, &slo);
    if (plen) buf_append(b, l, plen);
    if (!std) break;
    l += slo;
    n -= slo;
    if (year < 0 && (std & STD_NEED_DATE)) civil_from_days(days, &year, &month, &day);
    if (yday < 0 && (std & STD_NEED_YDAY)) {
      int64_t yy;
      int mm, d2;
      civil_from_days(days, &yy, &mm, &d2);
      yday = (int)(days - days_from_civil(yy, 1, 1) + 1);
    }
    if (hour < 0 && (std & STD_NEED_CLOCK)) {
      hour = (int)(secofday / 3600);
      min = (int)(secofday % 3600 / 60);
      sec = (int)(secofday % 60);
    }
    int wd = (int)(((days + 4) % 7 + 7) % 7);
    switch (std & STD_MASK) {
    case STD_YEAR: put_int(b, (year < 0 ? -year : year) % 100, 2); break;
    case STD_LONG_YEAR: put_int(b, year, 4); break;
    case STD_MONTH: buf_puts(b, short_months[month - 1]); break;
    case STD_LONG_MONTH: buf_puts(b, long_months[month - 1]); break;
    case STD_NUM_MONTH: put_int(b, month, 0); break;
    case STD_ZERO_MONTH: put_int(b, month, 2); break;
    case STD_WEEKDAY: buf_puts(b, short_days[wd]); break;
    case STD_LONG_WEEKDAY: buf_puts(b, long_days[wd]); break;
    case STD_DAY: put_int(b, day, 0); break;
    case STD_UNDER_DAY:
      if (day < 10) buf_putc(b, ' ');
      put_int(b, day, 0);
      break;
    case STD_ZERO_DAY: put_int(b, day, 2); break;
    case STD_UNDER_YEARDAY:
      if (yday < 100) {
        buf_putc(b, ' ');
        if (yday < 10) buf_putc(b, ' ');
      }
      put_int(b, yday, 0);
      break;
    case STD_ZERO_YEARDAY: put_int(b, yday, 3); break;
    case STD_HOUR: put_int(b, hour, 2); break;
    case STD_HOUR12: put_int(b, hour % 12 == 0 ? 12 : hour % 12, 0); break;
    case STD_ZERO_HOUR12: put_int(b, hour % 12 == 0 ? 12 : hour % 12, 2); break;
    case STD_MINUTE: put_int(b, min, 0); break;
    case STD_ZERO_MINUTE: put_int(b, min, 2); break;
    case STD_SECOND: put_int(b, sec, 0); break;
    case STD_ZERO_SECOND: put_int(b, sec, 2); break;
    case STD_PM: buf_puts(b, hour >= 12 ? "PM" : "AM"); break;
    case STD_pm: buf_puts(b, hour >= 12 ? "pm" : "am"); break;
    case STD_ISO8601_TZ: case STD_ISO8601_COLON_TZ: case STD_ISO8601_SECONDS_TZ: case STD_ISO8601_SHORT_TZ:
    case STD_ISO8601_COLON_SECONDS_TZ: case STD_NUM_TZ: case STD_NUM_COLON_TZ: case STD_NUM_SECONDS_TZ:
    case STD_NUM_SHORT_TZ: case STD_NUM_COLON_SECONDS_TZ: {
      bool iso = std == STD_ISO8601_TZ || std == STD_ISO8601_COLON_TZ || std == STD_ISO8601_SECONDS_TZ ||
                 std == STD_ISO8601_SHORT_TZ || std == STD_ISO8601_COLON_SECONDS_TZ;
      if (z.off == 0 && iso) {
        buf_putc(b, 'Z');
        break;
      }
      int zone = z.off / 60, absoff = z.off;
      if (zone < 0) buf_putc(b, '-'), zone = -zone, absoff = -absoff;
      else buf_putc(b, '+');
      put_int(b, zone / 60, 2);
      if (std == STD_ISO8601_COLON_TZ || std == STD_NUM_COLON_TZ || std == STD_ISO8601_COLON_SECONDS_TZ ||
          std == STD_NUM_COLON_SECONDS_TZ)
        buf_putc(b, ':');
      if (std != STD_NUM_SHORT_TZ && std != STD_ISO8601_SHORT_TZ) put_int(b, zone % 60, 2);
      if (std == STD_ISO8601_SECONDS_TZ || std == STD_NUM_SECONDS_TZ || std == STD_NUM_COLON_SECONDS_TZ ||
          std == STD_ISO8601_COLON_SECONDS_TZ) {
        if (std == STD_NUM_COLON_SECONDS_TZ || std == STD_ISO8601_COLON_SECONDS_TZ) buf_putc(b, ':');
        put_int(b, absoff % 60, 2);
      }
      break;
    }
    case STD_TZ:
      if (z.name && *z.name) {
        buf_puts(b, z.name);
        break;
      }
      {
        int zone = z.off / 60;
        if (zone < 0) buf_putc(b, '-'), zone = -zone;
        else buf_putc(b, '+');
        put_int(b, zone / 60, 2);
        put_int(b, zone % 60, 2);
      }
      break;
    case STD_FRAC0:
    case STD_FRAC9: put_nano(b, t->nsec, std); break;
    }
  }
}

static int64_t process_start_ns;
static pthread_once_t start_once = PTHREAD_ONCE_INIT;
static void start_init(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  process_start_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Time.String */
static void time_string(buf_t *b, const gtime_t *t) {
  static const char lay[] = "2006-01-02 15:04:05.999999999 -0700 MST";
  time_format(b, t, lay, sizeof lay - 1);
  if (t->mono) {
    int64_t m = t->mono_ns;
    char sign = '+';
    uint64_t m2 = (uint64_t)m;
    if (m < 0) sign = '-', m2 = -(uint64_t)m;
    uint64_t m1 = m2 / 1000000000, m0;
    m2 %= 1000000000;
    m0 = m1 / 1000000000;
    m1 %= 1000000000;
    buf_puts(b, " m=");
    buf_putc(b, sign);
    int wid = 0;
    if (m0) put_int(b, (int64_t)m0, 0), wid = 9;
    put_int(b, (int64_t)m1, wid);
    buf_putc(b, '.');
    put_int(b, (int64_t)m2, 9);
  }
}

/* Go's time quote() for ParseError. */
static void tquote(buf_t *b, const char *s, size_t n) {
  static const char hx[] = "0123456789abcdef";
  buf_putc(b, '"');
  for (size_t i = 0; i < n;) {
    int32_t r;
    size_t w = tpl__utf8_decode(s + i, n - i, &r);
    if (r >= 0x80 || r < ' ') {
      for (size_t j = 0; j < w; j++) {
        buf_puts(b, "\\x");
        buf_putc(b, hx[(unsigned char)s[i + j] >> 4]);
        buf_putc(b, hx[(unsigned char)s[i + j] & 15]);
      }
    } else {
      if (r == '"' || r == '\\') buf_putc(b, '\\');
      buf_putc(b, (char)r);
    }
    i += w;
  }
  buf_putc(b, '"');
}

/* ---- parsing ---------------------------------------------------------------- */

typedef struct {
  const char *p;
  size_t n;
} sv_t;

static bool isdig(sv_t s, size_t i) { return i < s.n && s.p[i] >= '0' && s.p[i] <= '9'; }
static sv_t sadv(sv_t s, size_t k) { return (sv_t){s.p + k, s.n - k}; }

static int getnum(sv_t *s, bool fixed, int *out) {
  if (!isdig(*s, 0)) return -1;
  if (!isdig(*s, 1)) {
    if (fixed) return -1;
    *out = s->p[0] - '0';
    *s = sadv(*s, 1);
    return 0;
  }
  *out = (s->p[0] - '0') * 10 + (s->p[1] - '0');
  *s = sadv(*s, 2);
  return 0;
}

static int getnum3(sv_t *s, bool fixed, int *out) {
  int v = 0;
  size_t i = 0;
  for (; i < 3 && isdig(*s, i); i++) v = v * 10 + (s->p[i] - '0');
  if (i == 0 || (fixed && i != 3)) return -1;
  *out = v;
  *s = sadv(*s, i);
  return 0;
}

static int leading_int(sv_t s, uint64_t *x, size_t *used) {
  uint64_t v = 0;
  size_t i = 0;
  for (; i < s.n; i++) {
    char c = s.p[i];
    if (c < '0' || c > '9') break;
    if (v > (1ULL << 63) / 10) return -1;
    v = v * 10 + (uint64_t)(c - '0');
    if (v > (1ULL << 63)) return -1;
  }
  *x = v;
  *used = i;
  return 0;
}

static int tatoi(sv_t s, int64_t *out) {
  bool neg = false;
  if (s.n && (s.p[0] == '-' || s.p[0] == '+')) neg = s.p[0] == '-', s = sadv(s, 1);
  uint64_t q;
  size_t used;
  if (leading_int(s, &q, &used) || used != s.n) return -1;
  *out = neg ? -(int64_t)q : (int64_t)q;
  return 0;
}

static int skip_prefix(sv_t *v, sv_t pre) {
  while (pre.n) {
    if (pre.p[0] == ' ') {
      if (v->n && v->p[0] != ' ') return -1;
      while (pre.n && pre.p[0] == ' ') pre = sadv(pre, 1);
      while (v->n && v->p[0] == ' ') *v = sadv(*v, 1);
      continue;
    }
    if (!v->n || v->p[0] != pre.p[0]) return -1;
    pre = sadv(pre, 1);
    *v = sadv(*v, 1);
  }
  return 0;
}

static bool match_ci(const char *a, const char *b, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c1 = (unsigned char)a[i], c2 = (unsigned char)b[i];
    if (c1 != c2) {
      c1 |= 'a' - 'A';
      c2 |= 'a' - 'A';
      if (c1 != c2 || c1 < 'a' || c1 > 'z') return false;
    }
  }
  return true;
}

static int lookup_tab(const char *const *tab, int nt, sv_t *v, int *out) {
  for (int i = 0; i < nt; i++) {
    size_t k = strlen(tab[i]);
    if (v->n >= k && match_ci(v->p, tab[i], k)) {
      *out = i;
      *v = sadv(*v, k);
      return 0;
    }
  }
  return -1;
}

static bool comma_or_period(char c) { return c == '.' || c == ','; }

static int parse_nanos(sv_t v, size_t nbytes, int *ns, const char **range) {
  if (!comma_or_period(v.p[0])) return -1;
  if (nbytes > 10) nbytes = 10;
  int64_t x;
  if (tatoi((sv_t){v.p + 1, nbytes - 1}, &x)) return -1;
  if (x < 0) {
    *range = "fractional second";
    return 0;
  }
  for (size_t i = 0; i < 10 - nbytes; i++) x *= 10;
  *ns = (int)x;
  return 0;
}

static size_t parse_signed_offset(sv_t v) {
  if (!v.n || (v.p[0] != '-' && v.p[0] != '+')) return 0;
  uint64_t x;
  size_t used;
  if (leading_int(sadv(v, 1), &x, &used) || used == 0) return 0;
  if (x > 23) return 0;
  return 1 + used;
}

static bool parse_tz(sv_t v, size_t *len) {
  if (v.n < 3) return false;
  if (v.n >= 4 && (!memcmp(v.p, "ChST", 4) || !memcmp(v.p, "MeST", 4))) return *len = 4, true;
  if (!memcmp(v.p, "GMT", 3)) {
    *len = v.n == 3 ? 3 : 3 + parse_signed_offset(sadv(v, 3));
    return true;
  }
  if (v.p[0] == '+' || v.p[0] == '-') {
    *len = parse_signed_offset(v);
    return *len > 0;
  }
  size_t nu = 0;
  for (; nu < 6 && nu < v.n; nu++)
    if (v.p[nu] < 'A' || v.p[nu] > 'Z') break;
  switch (nu) {
  case 5:
    if (v.p[4] == 'T') return *len = 5, true;
    break;
  case 4:
    if (v.p[3] == 'T' || !memcmp(v.p, "WITA", 4)) return *len = 4, true;
    break;
  case 3: return *len = 3, true;
  }
  return false;
}

static void parse_err(buf_t *err, sv_t layout, sv_t value, sv_t lelem, sv_t velem, const char *msg, sv_t msgq) {
  buf_puts(err, "parsing time ");
  tquote(err, value.p, value.n);
  if (!msg) {
    buf_puts(err, " as ");
    tquote(err, layout.p, layout.n);
    buf_puts(err, ": cannot parse ");
    tquote(err, velem.p, velem.n);
    buf_puts(err, " as ");
    tquote(err, lelem.p, lelem.n);
  } else {
    buf_puts(err, msg);
    if (msgq.p) tquote(err, msgq.p, msgq.n);
  }
}

/* time.ParseInLocation(layout, value, local): 0 or -1 with Go's error text. */
static int time_parse(tpl_arena_t *a, sv_t layout, sv_t value, const tz_loc_t *local, gtime_t *out, buf_t *err) {
  sv_t al = layout, av = value;
  const char *range = NULL;
  bool am = false, pm = false;
  int64_t year = 0;
  int month = -1, day = -1, yday = -1, hour = 0, min = 0, sec = 0, nsec = 0;
  const tz_loc_t *z = NULL;
  int zone_off = -1;
  sv_t zname = {NULL, 0};
  static const sv_t none = {NULL, 0};
  for (;;) {
    size_t plen, slo;
    int std = next_std(layout.p, layout.n, &plen, &slo);
    sv_t prefix = {layout.p, plen}, stdstr = {layout.p + plen, slo - plen};
    if (skip_prefix(&value, prefix)) return parse_err(err, al, av, prefix, value, NULL, none), -1;
    if (!std) {
      if (value.n) return parse_err(err, al, av, none, value, ": extra text: ", value), -1;
      break;
    }
    layout = sadv(layout, slo);
    sv_t hold = value;
    int e = 0;
    int64_t x;
    switch (std & STD_MASK) {
    case STD_YEAR:
      if (value.n < 2) { e = -1; break; }
      e = tatoi((sv_t){value.p, 2}, &x);
      value = sadv(value, 2);
      if (e) break;
      year = x >= 69 ? x + 1900 : x + 2000;
      break;
    case STD_LONG_YEAR:
      if (value.n < 4 || !isdig(value, 0)) { e = -1; break; }
      e = tatoi((sv_t){value.p, 4}, &year);
      value = sadv(value, 4);
      break;
    case STD_MONTH: e = lookup_tab(short_months, 12, &value, &month); month++; break;
    case STD_LONG_MONTH: e = lookup_tab(long_months, 12, &value, &month); month++; break;
    case STD_NUM_MONTH:
    case STD_ZERO_MONTH:
      e = getnum(&value, std == STD_ZERO_MONTH, &month);
      if (!e && (month <= 0 || month > 12)) range = "month";
      break;
    case STD_WEEKDAY: { int w; e = lookup_tab(short_days, 7, &value, &w); break; }
    case STD_LONG_WEEKDAY: { int w; e = lookup_tab(long_days, 7, &value, &w); break; }
    case STD_DAY:
    case STD_UNDER_DAY:
    case STD_ZERO_DAY:
      if (std == STD_UNDER_DAY && value.n && value.p[0] == ' ') value = sadv(value, 1);
      e = getnum(&value, std == STD_ZERO_DAY, &day);
      break;
    case STD_UNDER_YEARDAY:
    case STD_ZERO_YEARDAY:
      for (int i = 0; i < 2; i++)
        if (std == STD_UNDER_YEARDAY && value.n && value.p[0] == ' ') value = sadv(value, 1);
      e = getnum3(&value, std == STD_ZERO_YEARDAY, &yday);
      break;
    case STD_HOUR:
      e = getnum(&value, false, &hour);
      if (hour < 0 || hour >= 24) range = "hour";
      break;
    case STD_HOUR12:
    case STD_ZERO_HOUR12:
      e = getnum(&value, std == STD_ZERO_HOUR12, &hour);
      if (hour < 0 || hour > 12) range = "hour";
      break;
    case STD_MINUTE:
    case STD_ZERO_MINUTE:
      e = getnum(&value, std == STD_ZERO_MINUTE, &min);
      if (min < 0 || min >= 60) range = "minute";
      break;
    case STD_SECOND:
    case STD_ZERO_SECOND:
      e = getnum(&value, std == STD_ZERO_SECOND, &sec);
      if (e) break;
      if (sec < 0 || sec >= 60) {
        range = "second";
        break;
      }
      if (value.n >= 2 && comma_or_period(value.p[0]) && isdig(value, 1)) {
        size_t p2, s2;
        int nstd = next_std(layout.p, layout.n, &p2, &s2) & STD_MASK;
        if (nstd == STD_FRAC0 || nstd == STD_FRAC9) break;
        size_t k = 2;
        while (k < value.n && isdig(value, k)) k++;
        e = parse_nanos(value, k, &nsec, &range);
        value = sadv(value, k);
      }
      break;
    case STD_PM:
    case STD_pm:
      if (value.n < 2) { e = -1; break; }
      {
        const char *P = std == STD_PM ? "PM" : "pm", *A = std == STD_PM ? "AM" : "am";
        if (!memcmp(value.p, P, 2)) pm = true;
        else if (!memcmp(value.p, A, 2)) am = true;
        else e = -1;
        value = sadv(value, 2);
      }
      break;
    case STD_ISO8601_TZ: case STD_ISO8601_SHORT_TZ: case STD_ISO8601_COLON_TZ: case STD_ISO8601_SECONDS_TZ:
    case STD_ISO8601_COLON_SECONDS_TZ:
      if (value.n >= 1 && value.p[0] == 'Z') {
        value = sadv(value, 1);
        z = &loc_utc;
        break;
      }
      /* fallthrough */
    case STD_NUM_TZ: case STD_NUM_SHORT_TZ: case STD_NUM_COLON_TZ: case STD_NUM_SECONDS_TZ:
    case STD_NUM_COLON_SECONDS_TZ: {
      char sign;
      sv_t hh, mm, ss = {"00", 2};
      if (std == STD_ISO8601_COLON_TZ || std == STD_NUM_COLON_TZ) {
        if (value.n < 6 || value.p[3] != ':') { e = -1; break; }
        sign = value.p[0], hh = (sv_t){value.p + 1, 2}, mm = (sv_t){value.p + 4, 2}, value = sadv(value, 6);
      } else if (std == STD_NUM_SHORT_TZ || std == STD_ISO8601_SHORT_TZ) {
        if (value.n < 3) { e = -1; break; }
        sign = value.p[0], hh = (sv_t){value.p + 1, 2}, mm = (sv_t){"00", 2}, value = sadv(value, 3);
      } else if (std == STD_ISO8601_COLON_SECONDS_TZ || std == STD_NUM_COLON_SECONDS_TZ) {
        if (value.n < 9 || value.p[3] != ':' || value.p[6] != ':') { e = -1; break; }
        sign = value.p[0], hh = (sv_t){value.p + 1, 2}, mm = (sv_t){value.p + 4, 2}, ss = (sv_t){value.p + 7, 2};
        value = sadv(value, 9);
      } else if (std == STD_ISO8601_SECONDS_TZ || std == STD_NUM_SECONDS_TZ) {
        if (value.n < 7) { e = -1; break; }
        sign = value.p[0], hh = (sv_t){value.p + 1, 2}, mm = (sv_t){value.p + 3, 2}, ss = (sv_t){value.p + 5, 2};
        value = sadv(value, 7);
      } else {
        if (value.n < 5) { e = -1; break; }
        sign = value.p[0], hh = (sv_t){value.p + 1, 2}, mm = (sv_t){value.p + 3, 2}, value = sadv(value, 5);
      }
      int hr = 0, mi = 0, se = 0;
      e = getnum(&hh, true, &hr);
      if (!e) {
        e = getnum(&mm, true, &mi);
        if (!e) e = getnum(&ss, true, &se);
      }
      if (hr > 24) range = "time zone offset hour";
      if (mi > 60) range = "time zone offset minute";
      if (se > 60) range = "time zone offset second";
      zone_off = (hr * 60 + mi) * 60 + se;
      if (sign == '-') zone_off = -zone_off;
      else if (sign != '+') e = -1;
      break;
    }
    case STD_TZ:
      if (value.n >= 3 && !memcmp(value.p, "UTC", 3)) {
        z = &loc_utc;
        value = sadv(value, 3);
        break;
      }
      {
        size_t len;
        if (!parse_tz(value, &len)) { e = -1; break; }
        zname = (sv_t){value.p, len};
        value = sadv(value, len);
      }
      break;
    case STD_FRAC0: {
      size_t nd = 1 + (size_t)((std >> STD_ARG_SHIFT) & 0xfff);
      if (value.n < nd) { e = -1; break; }
      e = parse_nanos(value, nd, &nsec, &range);
      value = sadv(value, nd);
      break;
    }
    case STD_FRAC9: {
      if (value.n < 2 || !comma_or_period(value.p[0]) || value.p[1] < '0' || value.p[1] > '9') break;
      size_t i = 0;
      while (i + 1 < value.n && value.p[i + 1] >= '0' && value.p[i + 1] <= '9') i++;
      e = parse_nanos(value, 1 + i, &nsec, &range);
      value = sadv(value, 1 + i);
      break;
    }
    }
    if (range) {
      char msg[64];
      snprintf(msg, sizeof msg, ": %s out of range", range);
      return parse_err(err, al, av, stdstr, value, msg, none), -1;
    }
    if (e) return parse_err(err, al, av, stdstr, hold, NULL, none), -1;
  }
  if (pm && hour < 12) hour += 12;
  else if (am && hour == 12) hour = 0;
  if (yday >= 0) {
    int d = 0, m = 0;
    if (is_leap(year)) {
      if (yday == 31 + 29) m = 2, d = 29;
      else if (yday > 31 + 29) yday--;
    }
    if (yday < 1 || yday > 365) return parse_err(err, al, av, none, value, ": day-of-year out of range", none), -1;
    if (m == 0) {
      m = (yday - 1) / 31 + 1;
      if (days_before(m + 1) < yday) m++;
      d = yday - days_before(m);
    }
    if (month >= 0 && month != m)
      return parse_err(err, al, av, none, value, ": day-of-year does not match month", none), -1;
    month = m;
    if (day >= 0 && day != d) return parse_err(err, al, av, none, value, ": day-of-year does not match day", none), -1;
    day = d;
  } else {
    if (month < 0) month = 1;
    if (day < 0) day = 1;
  }
  if (day < 1 || day > days_in(month, year)) return parse_err(err, al, av, none, value, ": day out of range", none), -1;
  if (z) {
    *out = time_date(year, month, day, hour, min, sec, nsec, z);
    return 0;
  }
  if (zone_off != -1) {
    gtime_t t = time_date(year, month, day, hour, min, sec, nsec, &loc_utc);
    t.sec -= zone_off;
    char nb[64];
    zinfo_t zi = loc_lookup(local, t.sec, nb, sizeof nb);
    if (zi.off == zone_off && (!zname.n || (strlen(zi.name) == zname.n && !memcmp(zi.name, zname.p, zname.n)))) {
      t.loc = local;
      *out = t;
      return 0;
    }
    t.loc = fixed_zone(a, zname.p ? zname.p : "", zname.n, zone_off);
    if (!t.loc) return TPL_ENOMEM;
    *out = t;
    return 0;
  }
  if (zname.n) {
    gtime_t t = time_date(year, month, day, hour, min, sec, nsec, &loc_utc);
    int32_t off = 0;
    if (lookup_name(local, zname.p, zname.n, t.sec, &off)) {
      t.sec -= off;
      t.loc = local;
      *out = t;
      return 0;
    }
    if (zname.n > 3 && !memcmp(zname.p, "GMT", 3)) {
      int64_t h = 0;
      tatoi(sadv(zname, 3), &h);
      off = (int32_t)(h * 3600);
    }
    t.loc = fixed_zone(a, zname.p, zname.n, off);
    if (!t.loc) return TPL_ENOMEM;
    *out = t;
    return 0;
  }
  *out = time_date(year, month, day, hour, min, sec, nsec, local);
  return 0;
}

/* ---- durations ---------------------------------------------------------------- */

static void dur_string(buf_t *b, int64_t d) {
  char buf[32];
  int w = 32;
  uint64_t u = (uint64_t)d;
  bool neg = d < 0;
  if (neg) u = -u;
#define FRAC(prec)                                                                                                    \
  do {                                                                                                                \
    bool pr = false;                                                                                                  \
    for (int i = 0; i < (prec); i++) {                                                                                \
      unsigned dg = (unsigned)(u % 10);                                                                               \
      pr = pr || dg != 0;                                                                                             \
      if (pr) buf[--w] = (char)('0' + dg);                                                                            \
      u /= 10;                                                                                                        \
    }                                                                                                                 \
    if (pr) buf[--w] = '.';                                                                                           \
  } while (0)
#define INT(v)                                                                                                        \
  do {                                                                                                                \
    uint64_t vv = (v);                                                                                                \
    if (!vv) buf[--w] = '0';                                                                                          \
    else                                                                                                              \
      while (vv) buf[--w] = (char)('0' + vv % 10), vv /= 10;                                                          \
  } while (0)
  if (u < 1000000000ULL) {
    int prec = 0;
    buf[--w] = 's';
    if (u == 0) {
      buf[--w] = '0';
      buf_append(b, buf + w, 32 - (size_t)w);
      return;
    } else if (u < 1000ULL) {
      prec = 0;
      buf[--w] = 'n';
    } else if (u < 1000000ULL) {
      prec = 3;
      w -= 2;
      memcpy(buf + w, "\xc2\xb5", 2);
    } else {
      prec = 6;
      buf[--w] = 'm';
    }
    FRAC(prec);
    INT(u);
  } else {
    buf[--w] = 's';
    FRAC(9);
    INT(u % 60);
    u /= 60;
    if (u > 0) {
      buf[--w] = 'm';
      INT(u % 60);
      u /= 60;
      if (u > 0) {
        buf[--w] = 'h';
        INT(u);
      }
    }
  }
  if (neg) buf[--w] = '-';
  buf_append(b, buf + w, 32 - (size_t)w);
#undef FRAC
#undef INT
}

static size_t leading_fraction(sv_t s, uint64_t *x, double *scale) {
  size_t i = 0;
  bool overflow = false;
  *x = 0;
  *scale = 1;
  for (; i < s.n; i++) {
    char c = s.p[i];
    if (c < '0' || c > '9') break;
    if (overflow) continue;
    if (*x > ((1ULL << 63) - 1) / 10) {
      overflow = true;
      continue;
    }
    uint64_t y = *x * 10 + (uint64_t)(c - '0');
    if (y > (1ULL << 63)) {
      overflow = true;
      continue;
    }
    *x = y;
    *scale *= 10;
  }
  return i;
}

/* time.ParseDuration: 0 or -1 with Go's error text. */
static int parse_duration(const char *p, size_t n, int64_t *out, buf_t *err) {
  sv_t orig = {p, n}, s = orig;
  uint64_t d = 0;
  bool neg = false;
#define DERR(msg) return buf_puts(err, "time: " msg " "), tquote(err, orig.p, orig.n), -1
  if (s.n && (s.p[0] == '-' || s.p[0] == '+')) neg = s.p[0] == '-', s = sadv(s, 1);
  if (s.n == 1 && s.p[0] == '0') return *out = 0, 0;
  if (!s.n) DERR("invalid duration");
  while (s.n) {
    uint64_t v, f = 0;
    double scale = 1;
    if (!(s.p[0] == '.' || (s.p[0] >= '0' && s.p[0] <= '9'))) DERR("invalid duration");
    size_t used;
    if (leading_int(s, &v, &used)) DERR("invalid duration");
    bool pre = used != 0;
    s = sadv(s, used);
    bool post = false;
    if (s.n && s.p[0] == '.') {
      s = sadv(s, 1);
      size_t k = leading_fraction(s, &f, &scale);
      post = k != 0;
      s = sadv(s, k);
    }
    if (!pre && !post) DERR("invalid duration");
    size_t i = 0;
    for (; i < s.n; i++)
      if (s.p[i] == '.' || (s.p[i] >= '0' && s.p[i] <= '9')) break;
    if (i == 0) DERR("missing unit in duration");
    sv_t u = {s.p, i};
    s = sadv(s, i);
    uint64_t unit = 0;
#define U(str, val) else if (u.n == sizeof(str) - 1 && !memcmp(u.p, str, u.n)) unit = (val)
    if (0) {}
    U("ns", 1ULL); U("us", 1000ULL); U("\xc2\xb5s", 1000ULL); U("\xce\xbcs", 1000ULL); U("ms", 1000000ULL);
    U("s", 1000000000ULL); U("m", 60000000000ULL); U("h", 3600000000000ULL);
#undef U
    if (!unit) {
      buf_puts(err, "time: unknown unit ");
      tquote(err, u.p, u.n);
      buf_puts(err, " in duration ");
      tquote(err, orig.p, orig.n);
      return -1;
    }
    if (v > (1ULL << 63) / unit) DERR("invalid duration");
    v *= unit;
    if (f > 0) {
      v += (uint64_t)((double)f * ((double)unit / scale));
      if (v > (1ULL << 63)) DERR("invalid duration");
    }
    d += v;
    if (d > (1ULL << 63)) DERR("invalid duration");
  }
  if (neg) return *out = (int64_t)(0 - d), 0;
  if (d > (1ULL << 63) - 1) DERR("invalid duration");
  *out = (int64_t)d;
  return 0;
#undef DERR
}

static int64_t dur_round(int64_t d, int64_t m) {
  if (m <= 0) return d;
  int64_t r = d % m;
  if (d < 0) {
    r = -r;
    if ((uint64_t)r + (uint64_t)r < (uint64_t)m) return d + r;
    int64_t d1 = (int64_t)((uint64_t)d - (uint64_t)m + (uint64_t)r);
    if (d1 < d) return d1;
    return INT64_MIN;
  }
  if ((uint64_t)r + (uint64_t)r < (uint64_t)m) return d - r;
  int64_t d1 = (int64_t)((uint64_t)d + (uint64_t)m - (uint64_t)r);
  if (d1 > d) return d1;
  return INT64_MAX;
}

/* ---- host objects ---------------------------------------------------------------- */

static int time_fmt_cb(void *self, buf_t *out) {
  time_string(out, self);
  return 0;
}
static int dur_fmt_cb(void *self, buf_t *out) {
  dur_string(out, *(int64_t *)self);
  return 0;
}

static const tpl_func_t *time_method(void *self, const char *name);
static const tpl_func_t *dur_method(void *self, const char *name);
static const tpl_type_t time_type = {"time.Time", NULL, time_method, time_fmt_cb};
static const tpl_type_t dur_type = {"time.Duration", NULL, dur_method, dur_fmt_cb};

static int ret_time(tpl_call_t *c, const gtime_t *t, tpl_value_t *out) {
  tpl_arena_t *a = tpl_call_arena(c);
  gtime_t *p = tpl_arena_alloc(a, sizeof *p);
  tpl_object_t *o = tpl_arena_alloc(a, sizeof *o);
  if (!p || !o) return TPL_ENOMEM;
  *p = *t;
  o->type = &time_type;
  o->self = p;
  *out = (tpl_value_t){.kind = TPL_OBJECT, .u.obj = o};
  return 0;
}

static int ret_dur(tpl_call_t *c, int64_t d, tpl_value_t *out) {
  tpl_arena_t *a = tpl_call_arena(c);
  int64_t *p = tpl_arena_alloc(a, sizeof *p);
  tpl_object_t *o = tpl_arena_alloc(a, sizeof *o);
  if (!p || !o) return TPL_ENOMEM;
  *p = d;
  o->type = &dur_type;
  o->self = p;
  *out = (tpl_value_t){.kind = TPL_OBJECT, .u.obj = o};
  return 0;
}

static const gtime_t *as_time(const tpl_value_t *v) {
  return v->kind == TPL_OBJECT && v->u.obj && v->u.obj->type == &time_type ? v->u.obj->self : NULL;
}
static const int64_t *as_dur(const tpl_value_t *v) {
  return v->kind == TPL_OBJECT && v->u.obj && v->u.obj->type == &dur_type ? v->u.obj->self : NULL;
}

bool sprig__semver_string(const tpl_value_t *v, buf_t *out);
bool sprig__object_marshal(const tpl_value_t *v, buf_t *out, bool *number) {
  *number = false;
  const gtime_t *t = as_time(v);
  if (t) { /* MarshalJSON: RFC 3339 with nanoseconds */
    static const char lay[] = "2006-01-02T15:04:05.999999999Z07:00";
    time_format(out, t, lay, sizeof lay - 1);
    return true;
  }
  const int64_t *d = as_dur(v);
  if (d) {
    *number = true;
    buf_printf(out, "%lld", (long long)*d);
    return true;
  }
  return sprig__semver_string(v, out);
}

static gtime_t time_now(void) {
  struct timespec ts, ms;
  clock_gettime(CLOCK_REALTIME, &ts);
  pthread_once(&start_once, start_init);
  clock_gettime(CLOCK_MONOTONIC, &ms);
  int64_t mono = (int64_t)ms.tv_sec * 1000000000 + ms.tv_nsec - process_start_ns + 1;
  return (gtime_t){(int64_t)ts.tv_sec, (int32_t)ts.tv_nsec, local_loc(), true, mono};
}

/* Time.Sub(now) as a Duration with Go's saturation. */
static int64_t since(const gtime_t *t) {
  gtime_t now = time_now();
  __int128 d = ((__int128)now.sec - t->sec) * 1000000000 + (now.nsec - t->nsec);
  if (d > INT64_MAX) return INT64_MAX;
  if (d < INT64_MIN) return INT64_MIN;
  return (int64_t)d;
}

static int wrong_time(tpl_call_t *c, const tpl_value_t *v) {
  /* Go's executor rejects the argument before the call. */
  buf_t t = BUF_INIT;
  if (v->kind == TPL_INVALID || v->kind == TPL_NIL) buf_puts(&t, "nil");
  else tpl_value_type_name(v, &t);
  int rc = tpl_call_errorf(c, "wrong type for value; expected time.Time; got %.*s", (int)t.len, t.data ? t.data : "");
  buf_free(&t);
  return rc;
}

/* dateInZone's choice of time from an interface{} argument. */
static gtime_t time_of_any(const tpl_value_t *v) {
  const gtime_t *t = as_time(v);
  if (t) return *t;
  if (v->kind == TPL_INT64 || v->kind == TPL_INT) return (gtime_t){v->u.i, 0, local_loc(), false, 0};
  return time_now();
}

static int date_in_zone(tpl_call_t *c, const char *lay, size_t ln, const tpl_value_t *date, const char *zone,
                        size_t zn, tpl_value_t *out) {
  gtime_t t = time_of_any(date);
  char *z = tpl_arena_strndup(tpl_call_arena(c), zone, zn);
  if (!z) return TPL_ENOMEM;
  const tz_loc_t *loc = memchr(zone, 0, zn) ? NULL : load_location(tpl_call_arena(c), z);
  t.loc = loc ? loc : &loc_utc;
  buf_t b = BUF_INIT;
  time_format(&b, &t, lay, ln);
  return sprig__ret_buf(c, &b, out);
}

SPRIG_FN(f_now) {
  (void)args, (void)n;
  gtime_t t = time_now();
  return ret_time(c, &t, out);
}
SPRIG_FN(f_date) {
  (void)n;
  tpl_value_t d = sprig__arg(&args[1]);
  return date_in_zone(c, args[0].u.s.p, args[0].u.s.n, &d, "Local", 5, out);
}
SPRIG_FN(f_date_in_zone) {
  (void)n;
  tpl_value_t d = sprig__arg(&args[1]);
  return date_in_zone(c, args[0].u.s.p, args[0].u.s.n, &d, args[2].u.s.p, args[2].u.s.n, out);
}
SPRIG_FN(f_html_date) {
  (void)n;
  tpl_value_t d = sprig__arg(&args[0]);
  return date_in_zone(c, "2006-01-02", 10, &d, "Local", 5, out);
}
SPRIG_FN(f_html_date_in_zone) {
  (void)n;
  tpl_value_t d = sprig__arg(&args[0]);
  return date_in_zone(c, "2006-01-02", 10, &d, args[1].u.s.p, args[1].u.s.n, out);
}

static int date_modify(tpl_call_t *c, tpl_value_t *args, bool must, tpl_value_t *out) {
  const gtime_t *t = as_time(&args[1]);
  if (!t) return wrong_time(c, &args[1]);
  int64_t d;
  buf_t err = BUF_INIT;
  if (parse_duration(args[0].u.s.p, args[0].u.s.n, &d, &err)) {
    if (must) {
      int rc = tpl_call_errorf(c, "%.*s", (int)err.len, err.data);
      buf_free(&err);
      return rc;
    }
    buf_free(&err);
    return ret_time(c, t, out);
  }
  gtime_t r = *t;
  int64_t ns = (int64_t)r.nsec + d % 1000000000, sec = r.sec + d / 1000000000;
  if (ns >= 1000000000) sec++, ns -= 1000000000;
  else if (ns < 0) sec--, ns += 1000000000;
  r.sec = sec;
  r.nsec = (int32_t)ns;
  if (r.mono) r.mono_ns += d;
  return ret_time(c, &r, out);
}
SPRIG_FN(f_date_modify) { (void)n; return date_modify(c, args, false, out); }
SPRIG_FN(f_must_date_modify) { (void)n; return date_modify(c, args, true, out); }

SPRIG_FN(f_ago) {
  (void)n;
  tpl_value_t v = sprig__arg(&args[0]);
  gtime_t t;
  const gtime_t *tp = as_time(&v);
  if (tp) t = *tp;
  else if (v.kind == TPL_INT64 || v.kind == TPL_INT) t = (gtime_t){v.u.i, 0, local_loc(), false, 0};
  else t = time_now();
  buf_t b = BUF_INIT;
  dur_string(&b, dur_round(since(&t), 1000000000));
  return sprig__ret_buf(c, &b, out);
}

SPRIG_FN(f_duration) {
  (void)n;
  tpl_value_t v = sprig__arg(&args[0]);
  int64_t s = 0;
  if (v.kind == TPL_STRING) {
    /* strconv.ParseInt's result, errors ignored: 0, or the clamped value on range errors */
    (void)sprig__parse_int(v.u.s.p, v.u.s.n, 10, &s);
  } else if (v.kind == TPL_INT64) {
    s = v.u.i;
  }
  buf_t b = BUF_INIT;
  dur_string(&b, (int64_t)((uint64_t)s * 1000000000ULL));
  return sprig__ret_buf(c, &b, out);
}

SPRIG_FN(f_duration_round) {
  (void)n;
  tpl_value_t v = sprig__arg(&args[0]);
  int64_t d = 0;
  const gtime_t *t;
  if (v.kind == TPL_STRING) {
    buf_t e = BUF_INIT;
    if (parse_duration(v.u.s.p, v.u.s.n, &d, &e)) d = 0;
    buf_free(&e);
  } else if (v.kind == TPL_INT64) {
    d = v.u.i;
  } else if ((t = as_time(&v))) {
    d = since(t);
  }
  uint64_t u = (uint64_t)d;
  if (d < 0) u = -u;
  const uint64_t sec = 1000000000ULL, minute = 60 * sec, hour = 60 * minute, day = 24 * hour, month = 30 * day,
                 year = 365 * day;
  char buf[48];
  if (u > year) snprintf(buf, sizeof buf, "%lluy", (unsigned long long)(u / year));
  else if (u > month) snprintf(buf, sizeof buf, "%llumo", (unsigned long long)(u / month));
  else if (u > day) snprintf(buf, sizeof buf, "%llud", (unsigned long long)(u / day));
  else if (u > hour) snprintf(buf, sizeof buf, "%lluh", (unsigned long long)(u / hour));
  else if (u > minute) snprintf(buf, sizeof buf, "%llum", (unsigned long long)(u / minute));
  else if (u > sec) snprintf(buf, sizeof buf, "%llus", (unsigned long long)(u / sec));
  else snprintf(buf, sizeof buf, "0s");
  return sprig__ret_str(c, buf, strlen(buf), out);
}

static int to_date(tpl_call_t *c, tpl_value_t *args, bool must, tpl_value_t *out) {
  gtime_t t;
  buf_t err = BUF_INIT;
  int rc = time_parse(tpl_call_arena(c), (sv_t){args[0].u.s.p, args[0].u.s.n}, (sv_t){args[1].u.s.p, args[1].u.s.n},
                      local_loc(), &t, &err);
  if (rc == TPL_ENOMEM) return buf_free(&err), rc;
  if (rc) {
    if (must) {
      rc = tpl_call_errorf(c, "%.*s", (int)err.len, err.data);
      buf_free(&err);
      return rc;
    }
    t = time_zero();
  }
  buf_free(&err);
  return ret_time(c, &t, out);
}
SPRIG_FN(f_to_date) { (void)n; return to_date(c, args, false, out); }
SPRIG_FN(f_must_to_date) { (void)n; return to_date(c, args, true, out); }

SPRIG_FN(f_unix_epoch) {
  (void)n;
  const gtime_t *t = as_time(&args[0]);
  if (!t) return wrong_time(c, &args[0]);
  char buf[32];
  snprintf(buf, sizeof buf, "%lld", (long long)t->sec);
  return sprig__ret_str(c, buf, strlen(buf), out);
}

/* ---- Helm's duration helpers ------------------------------------------------------ */

static void fmt_g(buf_t *b, double f) { tpl_fmt_float(b, f, 'g', -1); }

static int dur_from_float(double s, int64_t *d, buf_t *err) {
  if (isnan(s) || isinf(s)) {
    buf_puts(err, "invalid duration seconds: ");
    if (isnan(s)) buf_puts(err, "NaN");
    else buf_puts(err, s > 0 ? "+Inf" : "-Inf");
    return -1;
  }
  const double maxs = 9223372036854775807.0 / 1e9, mins = -9223372036854775808.0 / 1e9;
  if (s > maxs || s < mins) {
    buf_puts(err, "duration seconds overflow: ");
    fmt_g(err, s);
    return -1;
  }
  double ns = s * 1e9;
  if (ns > 9223372036854775807.0 || ns < -9223372036854775808.0) {
    buf_puts(err, "duration nanoseconds overflow: ");
    fmt_g(err, ns);
    return -1;
  }
  *d = sprig__f2i(ns);
  return 0;
}

/* Helm's asDuration. */
static int as_duration(const tpl_value_t *in, int64_t *d, buf_t *err) {
  tpl_value_t v = sprig__arg(in);
  const int64_t *dp = as_dur(&v);
  if (dp) return *d = *dp, 0;
  const int64_t maxs = INT64_MAX / 1000000000, mins = INT64_MIN / 1000000000;
  switch (v.kind) {
  case TPL_STRING: {
    const char *p = v.u.s.p;
    size_t len = v.u.s.n;
    while (len && (tpl_unicode_is_space((unsigned char)p[0]) || (unsigned char)p[0] >= 0x80)) {
      int32_t r;
      size_t w = tpl__utf8_decode(p, len, &r);
      if (!tpl_unicode_is_space(r)) break;
      p += w, len -= w;
    }
    while (len) {
      size_t k = len - 1;
      while (k > 0 && ((unsigned char)p[k] & 0xC0) == 0x80) k--;
      int32_t r;
      tpl__utf8_decode(p + k, len - k, &r);
      if (!tpl_unicode_is_space(r)) break;
      len = k;
    }
    if (!len) return buf_puts(err, "empty duration"), -1;
    buf_t e2 = BUF_INIT;
    int rc = parse_duration(p, len, d, &e2);
    buf_free(&e2);
    if (!rc) return 0;
    double f;
    int prc = sprig__parse_float(p, len, &f);
    if (prc == 0) return dur_from_float(f, d, err);
    buf_puts(err, "could not parse duration ");
    tpl_fmt_quote(err, v.u.s.p, v.u.s.n);
    return -1;
  }
  case TPL_NIL:
  case TPL_INVALID: return buf_puts(err, "invalid duration"), -1;
  case TPL_INT:
  case TPL_INT64:
    if (v.u.i > maxs || v.u.i < mins) return buf_printf(err, "duration seconds overflow: %lld", (long long)v.u.i), -1;
    return *d = v.u.i * 1000000000, 0;
  case TPL_UINT64:
    if (v.u.u > (uint64_t)maxs)
      return buf_printf(err, "duration seconds overflow: %llu", (unsigned long long)v.u.u), -1;
    return *d = (int64_t)v.u.u * 1000000000, 0;
  case TPL_FLOAT64: return dur_from_float(v.u.f, d, err);
  default: {
    buf_puts(err, "unsupported duration type ");
    tpl_value_type_name(&v, err);
    return -1;
  }
  }
}

SPRIG_FN(f_must_to_duration) {
  (void)n;
  int64_t d;
  buf_t err = BUF_INIT;
  if (as_duration(&args[0], &d, &err)) {
    int rc = tpl_call_errorf(c, "%.*s", (int)err.len, err.data);
    buf_free(&err);
    return rc;
  }
  buf_free(&err);
  return ret_dur(c, d, out);
}

static bool dur_arg(const tpl_value_t *a, int64_t *d) {
  buf_t err = BUF_INIT;
  int rc = as_duration(a, d, &err);
  buf_free(&err);
  return rc == 0;
}

static double d_seconds(int64_t d) { return (double)(d / 1000000000) + (double)(d % 1000000000) / 1e9; }
static double d_minutes(int64_t d) { return (double)(d / 60000000000LL) + (double)(d % 60000000000LL) / (60 * 1e9); }
static double d_hours(int64_t d) { return (double)(d / 3600000000000LL) + (double)(d % 3600000000000LL) / (3600 * 1e9); }

SPRIG_FN(f_dur_seconds) { (void)n; int64_t d; *out = tpl_value_float(dur_arg(&args[0], &d) ? d_seconds(d) : 0); return 0; }
SPRIG_FN(f_dur_minutes) { (void)n; int64_t d; *out = tpl_value_float(dur_arg(&args[0], &d) ? d_minutes(d) : 0); return 0; }
SPRIG_FN(f_dur_hours) { (void)n; int64_t d; *out = tpl_value_float(dur_arg(&args[0], &d) ? d_hours(d) : 0); return 0; }
SPRIG_FN(f_dur_days) { (void)n; int64_t d; *out = tpl_value_float(dur_arg(&args[0], &d) ? d_hours(d) / 24.0 : 0); return 0; }
SPRIG_FN(f_dur_weeks) {
  (void)n;
  int64_t d;
  *out = tpl_value_float(dur_arg(&args[0], &d) ? d_hours(d) / 24.0 / 7.0 : 0);
  return 0;
}
SPRIG_FN(f_dur_ms) { (void)n; int64_t d; *out = tpl_value_int64(dur_arg(&args[0], &d) ? d / 1000000 : 0); return 0; }
SPRIG_FN(f_dur_us) { (void)n; int64_t d; *out = tpl_value_int64(dur_arg(&args[0], &d) ? d / 1000 : 0); return 0; }
SPRIG_FN(f_dur_ns) { (void)n; int64_t d; *out = tpl_value_int64(dur_arg(&args[0], &d) ? d : 0); return 0; }

SPRIG_FN(f_dur_round_to) {
  (void)n;
  int64_t d, m;
  if (!dur_arg(&args[0], &d)) return ret_dur(c, 0, out);
  if (!dur_arg(&args[1], &m)) return ret_dur(c, d, out);
  return ret_dur(c, dur_round(d, m), out);
}
SPRIG_FN(f_dur_truncate_to) {
  (void)n;
  int64_t d, m;
  if (!dur_arg(&args[0], &d)) return ret_dur(c, 0, out);
  if (!dur_arg(&args[1], &m)) return ret_dur(c, d, out);
  return ret_dur(c, m <= 0 ? d : d - d % m, out);
}

/* ---- methods templates call on time.Time and time.Duration ---------------------------- */

#define TSELF ((const gtime_t *)tpl_call_self(c))
#define DSELF (*(const int64_t *)tpl_call_self(c))

static void civil_of(const gtime_t *t, int64_t *y, int *m, int *d, int64_t *secofday, int64_t *days) {
  char nb[64];
  zinfo_t z = loc_lookup(t->loc, t->sec, nb, sizeof nb);
  int64_t abs = t->sec + z.off;
  *days = floor_div(abs, 86400);
  *secofday = abs - *days * 86400;
  civil_from_days(*days, y, m, d);
}

SPRIG_FN(m_unix) { (void)args, (void)n; *out = tpl_value_int64(TSELF->sec); return 0; }
SPRIG_FN(m_unixnano) {
  (void)args, (void)n;
  *out = tpl_value_int64((int64_t)((uint64_t)TSELF->sec * 1000000000ULL + (uint64_t)TSELF->nsec));
  return 0;
}
SPRIG_FN(m_unixmilli) {
  (void)args, (void)n;
  *out = tpl_value_int64(TSELF->sec * 1000 + TSELF->nsec / 1000000);
  return 0;
}
SPRIG_FN(m_year) {
  (void)args, (void)n;
  int64_t y, s, d;
  int m, dd;
  civil_of(TSELF, &y, &m, &dd, &s, &d);
  *out = tpl_value_int(y);
  return 0;
}
SPRIG_FN(m_day) {
  (void)args, (void)n;
  int64_t y, s, d;
  int m, dd;
  civil_of(TSELF, &y, &m, &dd, &s, &d);
  *out = tpl_value_int(dd);
  return 0;
}
SPRIG_FN(m_hour) {
  (void)args, (void)n;
  int64_t y, s, d;
  int m, dd;
  civil_of(TSELF, &y, &m, &dd, &s, &d);
  *out = tpl_value_int(s / 3600);
  return 0;
}
SPRIG_FN(m_minute) {
  (void)args, (void)n;
  int64_t y, s, d;
  int m, dd;
  civil_of(TSELF, &y, &m, &dd, &s, &d);
  *out = tpl_value_int(s % 3600 / 60);
  return 0;
}
SPRIG_FN(m_second) {
  (void)args, (void)n;
  int64_t y, s, d;
  int m, dd;
  civil_of(TSELF, &y, &m, &dd, &s, &d);
  *out = tpl_value_int(s % 60);
  return 0;
}
SPRIG_FN(m_nanosecond) { (void)args, (void)n; *out = tpl_value_int(TSELF->nsec); return 0; }
SPRIG_FN(m_yearday) {
  (void)args, (void)n;
  int64_t y, s, d;
  int m, dd;
  civil_of(TSELF, &y, &m, &dd, &s, &d);
  *out = tpl_value_int(d - days_from_civil(y, 1, 1) + 1);
  return 0;
}
SPRIG_FN(m_format) {
  (void)n;
  buf_t b = BUF_INIT;
  time_format(&b, TSELF, args[0].u.s.p, args[0].u.s.n);
  return sprig__ret_buf(c, &b, out);
}
SPRIG_FN(m_tstring) {
  (void)args, (void)n;
  buf_t b = BUF_INIT;
  time_string(&b, TSELF);
  return sprig__ret_buf(c, &b, out);
}
SPRIG_FN(m_utc) {
  (void)args, (void)n;
  gtime_t t = *TSELF;
  t.loc = &loc_utc;
  return ret_time(c, &t, out);
}
SPRIG_FN(m_local) {
  (void)args, (void)n;
  gtime_t t = *TSELF;
  t.loc = local_loc();
  return ret_time(c, &t, out);
}
SPRIG_FN(m_iszero) {
  (void)args, (void)n;
  *out = tpl_value_bool(TSELF->sec == ZERO_TIME_SEC && TSELF->nsec == 0);
  return 0;
}
SPRIG_FN(m_dstring) {
  (void)args, (void)n;
  buf_t b = BUF_INIT;
  dur_string(&b, DSELF);
  return sprig__ret_buf(c, &b, out);
}
SPRIG_FN(m_dseconds) { (void)args, (void)n; *out = tpl_value_float(d_seconds(DSELF)); return 0; }
SPRIG_FN(m_dminutes) { (void)args, (void)n; *out = tpl_value_float(d_minutes(DSELF)); return 0; }
SPRIG_FN(m_dhours) { (void)args, (void)n; *out = tpl_value_float(d_hours(DSELF)); return 0; }
SPRIG_FN(m_dms) { (void)args, (void)n; *out = tpl_value_int64(DSELF / 1000000); return 0; }
SPRIG_FN(m_dus) { (void)args, (void)n; *out = tpl_value_int64(DSELF / 1000); return 0; }
SPRIG_FN(m_dns) { (void)args, (void)n; *out = tpl_value_int64(DSELF); return 0; }

static const tpl_func_t time_methods[] = {
    {"Unix", "", m_unix, NULL, "func() int64"},
    {"UnixNano", "", m_unixnano, NULL, "func() int64"},
    {"UnixMilli", "", m_unixmilli, NULL, "func() int64"},
    {"Year", "", m_year, NULL, "func() int"},
    {"Day", "", m_day, NULL, "func() int"},
    {"Hour", "", m_hour, NULL, "func() int"},
    {"Minute", "", m_minute, NULL, "func() int"},
    {"Second", "", m_second, NULL, "func() int"},
    {"Nanosecond", "", m_nanosecond, NULL, "func() int"},
    {"YearDay", "", m_yearday, NULL, "func() int"},
    {"Format", "s", m_format, NULL, "func(string) string"},
    {"String", "", m_tstring, NULL, "func() string"},
    {"UTC", "", m_utc, NULL, "func() time.Time"},
    {"Local", "", m_local, NULL, "func() time.Time"},
    {"IsZero", "", m_iszero, NULL, "func() bool"},
};
static const tpl_func_t dur_methods[] = {
    {"String", "", m_dstring, NULL, "func() string"},
    {"Seconds", "", m_dseconds, NULL, "func() float64"},
    {"Minutes", "", m_dminutes, NULL, "func() float64"},
    {"Hours", "", m_dhours, NULL, "func() float64"},
    {"Milliseconds", "", m_dms, NULL, "func() int64"},
    {"Microseconds", "", m_dus, NULL, "func() int64"},
    {"Nanoseconds", "", m_dns, NULL, "func() int64"},
};
static const tpl_func_t *time_method(void *self, const char *name) {
  (void)self;
  for (size_t i = 0; i < sizeof time_methods / sizeof time_methods[0]; i++)
    if (!strcmp(time_methods[i].name, name)) return &time_methods[i];
  return NULL;
}
static const tpl_func_t *dur_method(void *self, const char *name) {
  (void)self;
  for (size_t i = 0; i < sizeof dur_methods / sizeof dur_methods[0]; i++)
    if (!strcmp(dur_methods[i].name, name)) return &dur_methods[i];
  return NULL;
}

const tpl_func_t sprig__date_fns[] = {
    {"now", "", f_now, NULL, "func() time.Time"},
    {"date", "sa", f_date, NULL, "func(string, interface {}) string"},
    {"dateInZone", "sas", f_date_in_zone, NULL, "func(string, interface {}, string) string"},
    {"date_in_zone", "sas", f_date_in_zone, NULL, "func(string, interface {}, string) string"},
    {"htmlDate", "a", f_html_date, NULL, "func(interface {}) string"},
    {"htmlDateInZone", "as", f_html_date_in_zone, NULL, "func(interface {}, string) string"},
    {"dateModify", "sT", f_date_modify, NULL, "func(string, time.Time) time.Time"},
    {"date_modify", "sT", f_date_modify, NULL, "func(string, time.Time) time.Time"},
    {"mustDateModify", "sT", f_must_date_modify, NULL, "func(string, time.Time) (time.Time, error)"},
    {"must_date_modify", "sT", f_must_date_modify, NULL, "func(string, time.Time) (time.Time, error)"},
    {"ago", "a", f_ago, NULL, "func(interface {}) string"},
    {"duration", "a", f_duration, NULL, "func(interface {}) string"},
    {"durationRound", "a", f_duration_round, NULL, "func(interface {}) string"},
    {"toDate", "ss", f_to_date, NULL, "func(string, string) time.Time"},
    {"mustToDate", "ss", f_must_to_date, NULL, "func(string, string) (time.Time, error)"},
    {"unixEpoch", "T", f_unix_epoch, NULL, "func(time.Time) string"},
    {"mustToDuration", "a", f_must_to_duration, NULL, "func(interface {}) time.Duration"},
    {"durationSeconds", "a", f_dur_seconds, NULL, "func(interface {}) float64"},
    {"durationMilliseconds", "a", f_dur_ms, NULL, "func(interface {}) int64"},
    {"durationMicroseconds", "a", f_dur_us, NULL, "func(interface {}) int64"},
    {"durationNanoseconds", "a", f_dur_ns, NULL, "func(interface {}) int64"},
    {"durationMinutes", "a", f_dur_minutes, NULL, "func(interface {}) float64"},
    {"durationHours", "a", f_dur_hours, NULL, "func(interface {}) float64"},
    {"durationDays", "a", f_dur_days, NULL, "func(interface {}) float64"},
    {"durationWeeks", "a", f_dur_weeks, NULL, "func(interface {}) float64"},
    {"durationRoundTo", "aa", f_dur_round_to, NULL, "func(interface {}, interface {}) time.Duration"},
    {"durationTruncateTo", "aa", f_dur_truncate_to, NULL, "func(interface {}, interface {}) time.Duration"},
};
const size_t sprig__date_nfns = sizeof sprig__date_fns / sizeof sprig__date_fns[0];

/* ---- TOML datetimes (for fromToml, sprig_toml.c) ------------------------------------ */

/* BurntSushi/toml v1.6.0 valueDatetime: "z"/"t"/" " replaced by Z/T/T, then
 * the first of its layouts that time.ParseInLocation accepts, refusing values
 * with a missing leading zero. Local date-times get the library's fixed zones
 * ("datetime-local", "date-local", "time-local") at the current Local offset.
 * 1 (out set), 0 (invalid datetime) or TPL_ENOMEM. */
int sprig__toml_datetime(tpl_call_t *c, const char *s, size_t n, tpl_value_t *out) {
  static const struct {
    const char *fmt;
    int zone; /* 0 Local, 1 datetime-local, 2 date-local, 3 time-local */
  } dt[] = {{"2006-01-02T15:04:05.999999999Z07:00", 0}, {"2006-01-02T15:04:05.999999999", 1}, {"2006-01-02", 2},
            {"15:04:05.999999999", 3}, {"2006-01-02T15:04Z07:00", 0}, {"2006-01-02T15:04", 1}, {"15:04", 3}};
  static const char *const names[] = {NULL, "datetime-local", "date-local", "time-local"};
  tpl_arena_t *a = tpl_call_arena(c);
  char *v = tpl_arena_alloc(a, n + 1);
  if (!v) return TPL_ENOMEM;
  for (size_t i = 0; i < n; i++) v[i] = s[i] == 'z' ? 'Z' : s[i] == 't' || s[i] == ' ' ? 'T' : s[i];
  gtime_t now = time_now();
  char nb[64];
  int32_t off = loc_lookup(now.loc, now.sec, nb, sizeof nb).off;
  for (size_t k = 0; k < sizeof dt / sizeof dt[0]; k++) {
    const tz_loc_t *loc = dt[k].zone ? fixed_zone(a, names[dt[k].zone], strlen(names[dt[k].zone]), off) : local_loc();
    if (!loc) return TPL_ENOMEM;
    gtime_t t;
    buf_t err = BUF_INIT;
    sv_t lay = {dt[k].fmt, strlen(dt[k].fmt)}, val = {v, n};
    int rc = time_parse(a, lay, val, loc, &t, &err);
    buf_free(&err);
    if (rc == TPL_ENOMEM) return rc;
    if (rc) continue;
    /* missingLeadingZero */
    for (size_t i = 0; dt[k].fmt[i]; i++) {
      char ch = dt[k].fmt[i];
      if (ch == '.' || ch == 'Z') break;
      if ((ch < '0' || ch > '9') && (i >= n || v[i] != ch)) return 0;
    }
    return ret_time(c, &t, out) ? TPL_ENOMEM : 1;
  }
  return 0;
}
