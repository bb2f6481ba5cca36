#include "base/err.h"
#include "helm/release/release.h"
#include "base/gofloat.h"
#include "helm/render/manifest.h"
#include "base/b64.h"
#include "base/gz.h"
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define RELEASE__ZERO_SEC INT64_C(-62135596800) /* 0001-01-01T00:00:00Z */
#define RELEASE__DEFAULT_MAX_JSON ((size_t)64 << 20)

/* ---------- freeing ---------- */

static void release__strv_free(char **v, size_t n) {
  for (size_t i = 0; i < n; i++) free(v[i]);
  free(v);
}

static void release__files_free(release_file_t *f, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(f[i].name);
    free(f[i].data);
  }
  free(f);
}

static void release__deps_free(release_dependency_t *d, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(d[i].name);
    free(d[i].version);
    free(d[i].repository);
    free(d[i].condition);
    release__strv_free(d[i].tags, d[i].ntags);
    cJSON_Delete(d[i].import_values);
    free(d[i].alias);
  }
  free(d);
}

static void release__metadata_free(release_metadata_t *m) {
  if (!m) return;
  free(m->name);
  free(m->home);
  release__strv_free(m->sources, m->nsources);
  free(m->version);
  free(m->description);
  release__strv_free(m->keywords, m->nkeywords);
  for (size_t i = 0; i < m->nmaintainers; i++) {
    free(m->maintainers[i].name);
    free(m->maintainers[i].email);
    free(m->maintainers[i].url);
  }
  free(m->maintainers);
  free(m->icon);
  free(m->api_version);
  free(m->condition);
  free(m->tags);
  free(m->app_version);
  cJSON_Delete(m->annotations);
  free(m->kube_version);
  release__deps_free(m->dependencies, m->ndependencies);
  free(m->type);
  free(m);
}

static void release__chart_free(release_chart_t *c) {
  if (!c) return;
  release__metadata_free(c->metadata);
  if (c->lock) {
    free(c->lock->digest);
    release__deps_free(c->lock->dependencies, c->lock->ndependencies);
    free(c->lock);
  }
  release__files_free(c->templates, c->ntemplates);
  cJSON_Delete(c->values);
  free(c->schema);
  release__files_free(c->files, c->nfiles);
  free(c);
}

static void release__hooks_free(release_hook_t *hooks, size_t n) {
  for (size_t i = 0; i < n; i++) {
    release_hook_t *h = &hooks[i];
    free(h->name);
    free(h->kind);
    free(h->path);
    free(h->manifest);
    release__strv_free(h->events, h->nevents);
    free(h->phase);
    release__strv_free(h->delete_policies, h->ndelete_policies);
    release__strv_free(h->output_log_policies, h->noutput_log_policies);
  }
  free(hooks);
}

void release_clear(release_t *rel) {
  if (!rel) return;
  free(rel->name);
  if (rel->info) {
    free(rel->info->description);
    free(rel->info->status);
    free(rel->info->notes);
    cJSON_Delete(rel->info->resources);
    free(rel->info);
  }
  release__chart_free(rel->chart);
  cJSON_Delete(rel->config);
  free(rel->manifest);
  release__hooks_free(rel->hooks, rel->nhooks);
  free(rel->namespace);
  cJSON_Delete(rel->labels);
  free(rel->apply_method);
  memset(rel, 0, sizeof *rel);
}

void release_free(release_t *rel) {
  release_clear(rel);
  free(rel);
}

static char **release__strv_dup(char *const *v, size_t n) {
  if (!n) return NULL;
  char **o = calloc(n, sizeof *o);
  if (!o) return NULL;
  for (size_t i = 0; i < n; i++)
    if (!(o[i] = strdup(v[i]))) {
      release__strv_free(o, i);
      return NULL;
    }
  return o;
}

int release_set_rendered(release_t *rel, const manifest_set_t *set) {
  char *manifest = strdup(set->manifest ? set->manifest : "");
  char *notes = set->notes && *set->notes ? strdup(set->notes) : NULL;
  release_info_t *info = rel->info ? NULL : calloc(1, sizeof *info);
  release_hook_t *hooks = set->nhooks ? calloc(set->nhooks, sizeof *hooks) : NULL;
  int ok = manifest && (!set->notes || !*set->notes || notes) && (rel->info || info) && (!set->nhooks || hooks);
  for (size_t i = 0; ok && i < set->nhooks; i++) {
    const manifest_hook_t *m = &set->hooks[i];
    release_hook_t *h = &hooks[i];
    h->weight = m->weight;
    h->nevents = m->nevents;
    h->ndelete_policies = m->ndelete_policies;
    h->noutput_log_policies = m->noutput_log_policies;
    h->name = strdup(m->doc.name);
    h->kind = strdup(m->doc.kind);
    h->path = strdup(m->doc.source);
    h->manifest = strdup(m->doc.content);
    h->events = release__strv_dup(m->events, m->nevents);
    h->delete_policies = release__strv_dup(m->delete_policies, m->ndelete_policies);
    h->output_log_policies = release__strv_dup(m->output_log_policies, m->noutput_log_policies);
    if (!h->name || !h->kind || !h->path || !h->manifest || (m->nevents && !h->events) ||
        (m->ndelete_policies && !h->delete_policies) || (m->noutput_log_policies && !h->output_log_policies)) {
      /* counts of the lists that failed to copy must not be freed as if filled */
      if (!h->events) h->nevents = 0;
      if (!h->delete_policies) h->ndelete_policies = 0;
      if (!h->output_log_policies) h->noutput_log_policies = 0;
      ok = 0;
    }
  }
  if (!ok) {
    free(manifest);
    free(notes);
    free(info);
    release__hooks_free(hooks, set->nhooks);
    return -ENOMEM;
  }
  if (info) rel->info = info;
  free(rel->manifest);
  rel->manifest = manifest;
  release__hooks_free(rel->hooks, rel->nhooks);
  rel->hooks = hooks;
  rel->nhooks = set->nhooks;
  free(rel->info->notes);
  rel->info->notes = notes;
  return 0;
}

/* ---------- time ---------- */

/* Days since 1970-01-01 of a proleptic Gregorian date, and back (Howard Hinnant's algorithms). */
static int64_t release__days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  unsigned yoe = (unsigned)(y - era * 400);
  unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + (int64_t)doe - 719468;
}

static void release__civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  unsigned doe = (unsigned)(z - era * 146097);
  unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  unsigned mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = (int64_t)yoe + era * 400 + (*m <= 2);
}

release_time_t release_time_make(int64_t sec, int32_t nsec, int32_t offset) {
  release_time_t t = {true, sec, nsec, offset};
  if (sec == RELEASE__ZERO_SEC && nsec == 0) t.set = false;
  return t;
}

release_time_t release_time_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  struct tm tm;
  time_t s = ts.tv_sec;
  int32_t off = 0;
  if (localtime_r(&s, &tm)) off = (int32_t)tm.tm_gmtoff;
  return release_time_make((int64_t)ts.tv_sec, (int32_t)ts.tv_nsec, off);
}

void release_time_format(const release_time_t *t, char *out, size_t outlen) {
  int64_t sec = t->set ? t->sec : RELEASE__ZERO_SEC;
  int32_t nsec = t->set ? t->nsec : 0, off = t->set ? t->offset : 0;
  if (nsec < 0 || nsec > 999999999) { /* keep the fraction well-formed whatever the caller set */
    sec += nsec / 1000000000;
    nsec %= 1000000000;
    if (nsec < 0) {
      nsec += 1000000000;
      sec--;
    }
  }
  char frac[16] = "";
  if (nsec) {
    snprintf(frac, sizeof frac, ".%09d", (int)nsec);
    for (size_t n = 10; n > 1 && frac[n - 1] == '0'; n--) frac[n - 1] = 0;
  }
  int64_t local = sec + off;
  int64_t days = local >= 0 ? local / 86400 : (local - 86399) / 86400;
  int64_t rem = local - days * 86400;
  int64_t y;
  unsigned m, d;
  release__civil_from_days(days, &y, &m, &d);
  char zone[16];
  if (off == 0) {
    snprintf(zone, sizeof zone, "Z");
  } else {
    int a = off < 0 ? -off : off;
    snprintf(zone, sizeof zone, "%c%02d:%02d", off < 0 ? '-' : '+', a / 3600, a / 60 % 60);
  }
  snprintf(out, outlen, "%04" PRId64 "-%02u-%02uT%02d:%02d:%02d%s%s", y, m, d, (int)(rem / 3600),
           (int)(rem / 60 % 60), (int)(rem % 60), frac, zone);
}

static int release__digits(const char **p, int n, int *out) {
  int v = 0;
  for (int i = 0; i < n; i++) {
    if ((*p)[i] < '0' || (*p)[i] > '9') return -1;
    v = v * 10 + ((*p)[i] - '0');
  }
  *p += n;
  *out = v;
  return 0;
}

int release_time_parse(const char *s, release_time_t *t) {
  memset(t, 0, sizeof *t);
  if (!*s) return 0;
  const char *p = s;
  int y, mo, d, h, mi, se, nsec = 0, off = 0;
  if (release__digits(&p, 4, &y) || *p++ != '-' || release__digits(&p, 2, &mo) || *p++ != '-' ||
      release__digits(&p, 2, &d) || (*p != 'T' && *p != 't') || !*p++ || release__digits(&p, 2, &h) ||
      *p++ != ':' || release__digits(&p, 2, &mi) || *p++ != ':' || release__digits(&p, 2, &se))
    return -EINVAL;
  if (*p == '.' || *p == ',') {
    p++;
    int n = 0;
    if (*p < '0' || *p > '9') return -EINVAL;
    for (; *p >= '0' && *p <= '9'; p++, n++)
      if (n < 9) nsec = nsec * 10 + (*p - '0');
    for (; n < 9; n++) nsec *= 10;
  }
  if (*p == 'Z' || *p == 'z') {
    p++;
  } else if (*p == '+' || *p == '-') {
    int sign = *p++ == '-' ? -1 : 1, oh, om;
    if (release__digits(&p, 2, &oh) || *p++ != ':' || release__digits(&p, 2, &om) || oh > 23 || om > 59)
      return -EINVAL;
    off = sign * (oh * 3600 + om * 60);
  } else {
    return -EINVAL;
  }
  if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 59) return -EINVAL;
  static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (d > mdays[mo - 1] || (mo == 2 && d == 29 && !leap)) return -EINVAL;
  int64_t days = release__days_from_civil(y, (unsigned)mo, (unsigned)d);
  int64_t sec = days * 86400 + h * 3600 + mi * 60 + se - off;
  *t = release_time_make(sec, nsec, off);
  return 0;
}

/* ---------- Go JSON writing ---------- */

int release_go_string_append(buf_t *out, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  if (buf_reserve(out, n + 2)) return -ENOMEM;
  if (buf_putc(out, '"')) return -ENOMEM;
  const unsigned char *p = (const unsigned char *)s;
  size_t start = 0, i = 0;
  while (i < n) {
    unsigned char b = p[i];
    if (b < 0x80) {
      if (b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&') {
        i++;
        continue;
      }
      if (buf_append(out, s + start, i - start)) return -ENOMEM;
      char e[7] = {'\\', 0, 0, 0, 0, 0, 0};
      size_t el = 2;
      switch (b) {
      case '\\': case '"': e[1] = (char)b; break;
      case '\b': e[1] = 'b'; break;
      case '\f': e[1] = 'f'; break;
      case '\n': e[1] = 'n'; break;
      case '\r': e[1] = 'r'; break;
      case '\t': e[1] = 't'; break;
      default:
        e[1] = 'u'; e[2] = '0'; e[3] = '0'; e[4] = hex[b >> 4]; e[5] = hex[b & 15];
        el = 6;
      }
      if (buf_append(out, e, el)) return -ENOMEM;
      i++;
      start = i;
      continue;
    }
    /* Multi-byte: validate as Go's utf8.DecodeRune; invalid bytes become \ufffd one at a time. */
    size_t need = b >= 0xC2 && b <= 0xDF ? 2 : b >= 0xE0 && b <= 0xEF ? 3 : b >= 0xF0 && b <= 0xF4 ? 4 : 0;
    int ok = need && i + need <= n;
    if (ok) {
      unsigned char lo = 0x80, hi = 0xBF;
      if (b == 0xE0) lo = 0xA0;
      else if (b == 0xED) hi = 0x9F;
      else if (b == 0xF0) lo = 0x90;
      else if (b == 0xF4) hi = 0x8F;
      if (p[i + 1] < lo || p[i + 1] > hi) ok = 0;
      for (size_t k = 2; ok && k < need; k++)
        if (p[i + k] < 0x80 || p[i + k] > 0xBF) ok = 0;
    }
    if (!ok) {
      if (buf_append(out, s + start, i - start) || buf_puts(out, "\\ufffd")) return -ENOMEM;
      i++;
      start = i;
      continue;
    }
    if (need == 3 && b == 0xE2 && p[i + 1] == 0x80 && (p[i + 2] == 0xA8 || p[i + 2] == 0xA9)) {
      if (buf_append(out, s + start, i - start) || buf_puts(out, p[i + 2] == 0xA8 ? "\\u2028" : "\\u2029"))
        return -ENOMEM;
      i += 3;
      start = i;
      continue;
    }
    i += need;
  }
  if (buf_append(out, s + start, n - start) || buf_putc(out, '"')) return -ENOMEM;
  return 0;
}

static int release__str(buf_t *out, const char *s) { return release_go_string_append(out, s ? s : "", s ? strlen(s) : 0); }

/* Go's encoding/json float64 text. */
static int release__float(buf_t *out, double v) {
  if (isnan(v) || isinf(v)) return -EINVAL;
  if (v == 0) return buf_puts(out, signbit(v) ? "-0" : "0") ? -ENOMEM : 0;
  char d[32];
  int dp, nd = gofloat_shortest(v, 0, d, sizeof d, &dp);
  double a = fabs(v);
  int neg = v < 0;
  if (a < 1e-6 || a >= 1e21) {
    /* strconv 'e' with shortest digits: d.ddde±XX (two exponent digits at least), then JSON's e-0X cleanup */
    int exp = dp - 1;
    if (buf_printf(out, "%s%c", neg ? "-" : "", d[0])) return -ENOMEM;
    if (nd > 1 && (buf_putc(out, '.') || buf_append(out, d + 1, (size_t)nd - 1))) return -ENOMEM;
    if (exp < 0) return buf_printf(out, "e-%d", -exp) ? -ENOMEM : 0;
    return buf_printf(out, "e+%02d", exp) ? -ENOMEM : 0;
  }
  if (neg && buf_putc(out, '-')) return -ENOMEM;
  if (dp <= 0) {
    if (buf_puts(out, "0.")) return -ENOMEM;
    for (int i = 0; i < -dp; i++)
      if (buf_putc(out, '0')) return -ENOMEM;
    return buf_append(out, d, (size_t)nd) ? -ENOMEM : 0;
  }
  for (int i = 0; i < dp; i++)
    if (buf_putc(out, i < nd ? d[i] : '0')) return -ENOMEM;
  if (nd > dp && (buf_putc(out, '.') || buf_append(out, d + dp, (size_t)(nd - dp)))) return -ENOMEM;
  return 0;
}

typedef struct release__member_s {
  const cJSON *item;
  size_t pos;
} release__member_t;

static int release__cmp_members(const void *a, const void *b) {
  const release__member_t *x = a, *y = b;
  int c = strcmp(x->item->string, y->item->string);
  if (c) return c;
  return x->pos < y->pos ? -1 : x->pos > y->pos;
}

int release_go_json_append(buf_t *out, const cJSON *v) {
  if (!v || cJSON_IsNull(v)) return buf_puts(out, "null") ? -ENOMEM : 0;
  if (cJSON_IsTrue(v)) return buf_puts(out, "true") ? -ENOMEM : 0;
  if (cJSON_IsFalse(v)) return buf_puts(out, "false") ? -ENOMEM : 0;
  if (cJSON_IsRaw(v)) return buf_puts(out, v->valuestring) ? -ENOMEM : 0;
  if (cJSON_IsNumber(v)) return release__float(out, v->valuedouble);
  if (cJSON_IsString(v)) return release__str(out, v->valuestring);
  if (cJSON_IsArray(v)) {
    if (buf_putc(out, '[')) return -ENOMEM;
    for (const cJSON *c = v->child; c; c = c->next) {
      if (c != v->child && buf_putc(out, ',')) return -ENOMEM;
      int rc = release_go_json_append(out, c);
      if (rc) return rc;
    }
    return buf_putc(out, ']') ? -ENOMEM : 0;
  }
  if (cJSON_IsObject(v)) {
    size_t n = 0;
    for (const cJSON *c = v->child; c; c = c->next) {
      if (!c->string) return -EINVAL;
      n++;
    }
    if (n == 0) return buf_puts(out, "{}") ? -ENOMEM : 0;
    /* Sorted by key; among equal keys Go's decoder kept the last one. */
    release__member_t *ord = malloc(n * sizeof *ord);
    if (!ord) return -ENOMEM;
    size_t i = 0;
    for (const cJSON *c = v->child; c; c = c->next, i++) {
      ord[i].item = c;
      ord[i].pos = i;
    }
    qsort(ord, n, sizeof *ord, release__cmp_members);
    int rc = buf_putc(out, '{') ? -ENOMEM : 0;
    int first = 1;
    for (i = 0; i < n && !rc; i++) {
      if (i + 1 < n && strcmp(ord[i].item->string, ord[i + 1].item->string) == 0) continue; /* last wins */
      if (!first && buf_putc(out, ',')) rc = -ENOMEM;
      first = 0;
      if (!rc) rc = release__str(out, ord[i].item->string);
      if (!rc && buf_putc(out, ':')) rc = -ENOMEM;
      if (!rc) rc = release_go_json_append(out, ord[i].item);
    }
    free(ord);
    if (!rc && buf_putc(out, '}')) rc = -ENOMEM;
    return rc;
  }
  return -EINVAL;
}

/* ---------- struct encoding ---------- */

/* Writes the separator and key of the next field of an object. */
typedef struct release__w_s {
  buf_t *b;
  int first;
  int rc;
} release__w_t;

static int release__key(release__w_t *w, const char *key) {
  if (w->rc) return w->rc;
  if (buf_printf(w->b, "%s\"%s\":", w->first ? "" : ",", key)) w->rc = -ENOMEM;
  w->first = 0;
  return w->rc;
}

static void release__open(release__w_t *w, buf_t *b) {
  w->b = b;
  w->first = 1;
  w->rc = buf_putc(b, '{') ? -ENOMEM : 0;
}

static int release__close(release__w_t *w) {
  if (!w->rc && buf_putc(w->b, '}')) w->rc = -ENOMEM;
  return w->rc;
}

static void release__f_str(release__w_t *w, const char *key, const char *v, int omitempty) {
  if (omitempty && (!v || !*v)) return;
  if (!release__key(w, key)) w->rc = release__str(w->b, v);
}

static void release__f_int(release__w_t *w, const char *key, int64_t v, int omitempty) {
  if (omitempty && !v) return;
  if (!release__key(w, key) && buf_printf(w->b, "%" PRId64, v)) w->rc = -ENOMEM;
}

static void release__f_bool(release__w_t *w, const char *key, bool v) {
  if (!v) return; /* every bool Helm stores is omitempty */
  if (!release__key(w, key) && buf_puts(w->b, "true")) w->rc = -ENOMEM;
}

static void release__f_time(release__w_t *w, const char *key, const release_time_t *t, int omitzero) {
  if (omitzero && !t->set) return;
  if (release__key(w, key)) return;
  char s[48];
  release_time_format(t, s, sizeof s);
  if (buf_printf(w->b, "\"%s\"", s)) w->rc = -ENOMEM;
}

static void release__f_strv(release__w_t *w, const char *key, char *const *v, size_t n) {
  if (!n) return; /* all string slices Helm stores are omitempty */
  if (release__key(w, key)) return;
  if (buf_putc(w->b, '[')) w->rc = -ENOMEM;
  for (size_t i = 0; i < n && !w->rc; i++) {
    if (i && buf_putc(w->b, ',')) w->rc = -ENOMEM;
    if (!w->rc) w->rc = release__str(w->b, v[i]);
  }
  if (!w->rc && buf_putc(w->b, ']')) w->rc = -ENOMEM;
}

static void release__f_json(release__w_t *w, const char *key, const cJSON *v, int omitempty) {
  if (omitempty && (!v || cJSON_IsNull(v) || ((cJSON_IsObject(v) || cJSON_IsArray(v)) && !v->child))) return;
  if (!release__key(w, key)) w->rc = release_go_json_append(w->b, v);
}

static void release__f_bytes(release__w_t *w, const char *key, const unsigned char *data, size_t len, bool nonnil) {
  if (release__key(w, key)) return;
  if (!len && !nonnil && !data) {
    if (buf_puts(w->b, "null")) w->rc = -ENOMEM;
    return;
  }
  if (buf_reserve(w->b, b64_encoded_len(len) + 2)) {
    w->rc = -ENOMEM;
    return;
  }
  w->b->data[w->b->len++] = '"';
  w->b->len += b64_encode(data, len, w->b->data + w->b->len);
  w->b->data[w->b->len++] = '"';
  w->b->data[w->b->len] = 0;
}

static void release__files(release__w_t *w, const char *key, const release_file_t *f, size_t n, bool has) {
  if (release__key(w, key)) return;
  if (!n && !has) {
    if (buf_puts(w->b, "null")) w->rc = -ENOMEM;
    return;
  }
  if (buf_putc(w->b, '[')) w->rc = -ENOMEM;
  for (size_t i = 0; i < n && !w->rc; i++) {
    if (i && buf_putc(w->b, ',')) {
      w->rc = -ENOMEM;
      break;
    }
    release__w_t o;
    release__open(&o, w->b);
    release__f_str(&o, "name", f[i].name, 0);
    release__f_bytes(&o, "data", f[i].data, f[i].len, f[i].data_nonnil);
    release__f_time(&o, "modtime", &f[i].modtime, 1);
    w->rc = release__close(&o);
  }
  if (!w->rc && buf_putc(w->b, ']')) w->rc = -ENOMEM;
}

static void release__deps(release__w_t *w, const char *key, const release_dependency_t *d, size_t n, int omitempty,
                          bool has) {
  if (omitempty && !n) return;
  if (release__key(w, key)) return;
  if (!n && !has) {
    if (buf_puts(w->b, "null")) w->rc = -ENOMEM;
    return;
  }
  if (buf_putc(w->b, '[')) w->rc = -ENOMEM;
  for (size_t i = 0; i < n && !w->rc; i++) {
    if (i && buf_putc(w->b, ',')) {
      w->rc = -ENOMEM;
      break;
    }
    release__w_t o;
    release__open(&o, w->b);
    release__f_str(&o, "name", d[i].name, 0);
    release__f_str(&o, "version", d[i].version, 1);
    release__f_str(&o, "repository", d[i].repository, 0);
    release__f_str(&o, "condition", d[i].condition, 1);
    release__f_strv(&o, "tags", d[i].tags, d[i].ntags);
    release__f_bool(&o, "enabled", d[i].enabled);
    release__f_json(&o, "import-values", d[i].import_values, 1);
    release__f_str(&o, "alias", d[i].alias, 1);
    w->rc = release__close(&o);
  }
  if (!w->rc && buf_putc(w->b, ']')) w->rc = -ENOMEM;
}

static void release__metadata(release__w_t *w, const release_metadata_t *m) {
  if (release__key(w, "metadata")) return;
  if (!m) {
    if (buf_puts(w->b, "null")) w->rc = -ENOMEM;
    return;
  }
  release__w_t o;
  release__open(&o, w->b);
  release__f_str(&o, "name", m->name, 1);
  release__f_str(&o, "home", m->home, 1);
  release__f_strv(&o, "sources", m->sources, m->nsources);
  release__f_str(&o, "version", m->version, 1);
  release__f_str(&o, "description", m->description, 1);
  release__f_strv(&o, "keywords", m->keywords, m->nkeywords);
  if (m->nmaintainers && !release__key(&o, "maintainers")) {
    if (buf_putc(o.b, '[')) o.rc = -ENOMEM;
    for (size_t i = 0; i < m->nmaintainers && !o.rc; i++) {
      if (i && buf_putc(o.b, ',')) {
        o.rc = -ENOMEM;
        break;
      }
      release__w_t mo;
      release__open(&mo, o.b);
      release__f_str(&mo, "name", m->maintainers[i].name, 1);
      release__f_str(&mo, "email", m->maintainers[i].email, 1);
      release__f_str(&mo, "url", m->maintainers[i].url, 1);
      o.rc = release__close(&mo);
    }
    if (!o.rc && buf_putc(o.b, ']')) o.rc = -ENOMEM;
  }
  release__f_str(&o, "icon", m->icon, 1);
  release__f_str(&o, "apiVersion", m->api_version, 1);
  release__f_str(&o, "condition", m->condition, 1);
  release__f_str(&o, "tags", m->tags, 1);
  release__f_str(&o, "appVersion", m->app_version, 1);
  release__f_bool(&o, "deprecated", m->deprecated);
  release__f_json(&o, "annotations", m->annotations, 1);
  release__f_str(&o, "kubeVersion", m->kube_version, 1);
  release__deps(&o, "dependencies", m->dependencies, m->ndependencies, 1, false);
  release__f_str(&o, "type", m->type, 1);
  w->rc = release__close(&o);
}

static void release__chart(release__w_t *w, const release_chart_t *c) {
  if (!c || release__key(w, "chart")) return;
  release__w_t o;
  release__open(&o, w->b);
  release__metadata(&o, c->metadata);
  if (!release__key(&o, "lock")) {
    if (!c->lock) {
      if (buf_puts(o.b, "null")) o.rc = -ENOMEM;
    } else {
      release__w_t l;
      release__open(&l, o.b);
      release__f_time(&l, "generated", &c->lock->generated, 0);
      release__f_str(&l, "digest", c->lock->digest, 0);
      release__deps(&l, "dependencies", c->lock->dependencies, c->lock->ndependencies, 0, c->lock->has_dependencies);
      o.rc = release__close(&l);
    }
  }
  release__files(&o, "templates", c->templates, c->ntemplates, c->has_templates);
  release__f_json(&o, "values", c->values, 0);
  release__f_bytes(&o, "schema", c->schema, c->schema_len, c->has_schema);
  release__f_time(&o, "schemamodtime", &c->schema_modtime, 0);
  release__files(&o, "files", c->files, c->nfiles, c->has_files);
  release__f_time(&o, "modtime", &c->modtime, 1);
  w->rc = release__close(&o);
}

static void release__info(release__w_t *w, const release_info_t *in) {
  if (!in || release__key(w, "info")) return;
  release__w_t o;
  release__open(&o, w->b);
  release__f_time(&o, "first_deployed", &in->first_deployed, 1);
  release__f_time(&o, "last_deployed", &in->last_deployed, 1);
  release__f_time(&o, "deleted", &in->deleted, 1);
  release__f_str(&o, "description", in->description, 1);
  release__f_str(&o, "status", in->status, 1);
  release__f_int(&o, "rollback_revision", in->rollback_revision, 1);
  release__f_str(&o, "notes", in->notes, 1);
  release__f_json(&o, "resources", in->resources, 1);
  w->rc = release__close(&o);
}

static void release__hooks(release__w_t *w, const release_hook_t *h, size_t n) {
  if (!n || release__key(w, "hooks")) return;
  if (buf_putc(w->b, '[')) w->rc = -ENOMEM;
  for (size_t i = 0; i < n && !w->rc; i++) {
    if (i && buf_putc(w->b, ',')) {
      w->rc = -ENOMEM;
      break;
    }
    release__w_t o;
    release__open(&o, w->b);
    release__f_str(&o, "name", h[i].name, 1);
    release__f_str(&o, "kind", h[i].kind, 1);
    release__f_str(&o, "path", h[i].path, 1);
    release__f_str(&o, "manifest", h[i].manifest, 1);
    release__f_strv(&o, "events", h[i].events, h[i].nevents);
    if (!release__key(&o, "last_run")) {
      release__w_t lr;
      release__open(&lr, o.b);
      release__f_time(&lr, "started_at", &h[i].started_at, 1);
      release__f_time(&lr, "completed_at", &h[i].completed_at, 1);
      release__f_str(&lr, "phase", h[i].phase, 0);
      o.rc = release__close(&lr);
    }
    release__f_int(&o, "weight", h[i].weight, 1);
    release__f_strv(&o, "delete_policies", h[i].delete_policies, h[i].ndelete_policies);
    release__f_strv(&o, "output_log_policies", h[i].output_log_policies, h[i].noutput_log_policies);
    w->rc = release__close(&o);
  }
  if (!w->rc && buf_putc(w->b, ']')) w->rc = -ENOMEM;
}

/* release_encode_json, and where what follows info begins in out (*tail; its changes of status
 * and times are in the part before). */
static int release__encode_json(const release_t *rel, buf_t *out, size_t *tail) {
  size_t start = out->len;
  release__w_t w;
  release__open(&w, out);
  release__f_str(&w, "name", rel->name, 1);
  release__info(&w, rel->info);
  *tail = out->len;
  release__chart(&w, rel->chart);
  release__f_json(&w, "config", rel->config, 1);
  release__f_str(&w, "manifest", rel->manifest, 1);
  release__hooks(&w, rel->hooks, rel->nhooks);
  release__f_int(&w, "version", rel->version, 1);
  release__f_str(&w, "namespace", rel->namespace, 1);
  release__f_str(&w, "apply_method", rel->apply_method, 1);
  int rc = release__close(&w);
  if (rc) {
    out->len = start;
    if (out->data) out->data[start] = 0;
  }
  return rc;
}

int release_encode_json(const release_t *rel, buf_t *out) {
  size_t tail;
  return release__encode_json(rel, out, &tail);
}

/* ---------- decoding ---------- */

typedef struct release__d_s {
  char *err;
  size_t errlen;
  int rc;
} release__d_t;

static int release__derr(release__d_t *d, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int release__derr(release__d_t *d, int code, const char *fmt, ...) {
  if (d->rc) return d->rc;
  d->rc = code;
  if (d->err && d->errlen) {
    if (code == -ENOMEM) {
      snprintf(d->err, d->errlen, "out of memory decoding release");
    } else {
      va_list ap;
      va_start(ap, fmt);
      vsnprintf(d->err, d->errlen, fmt, ap);
      va_end(ap);
    }
  }
  return code;
}

/* A member by name as Go's decoder matches it: exact, else ASCII case-insensitive; the last of equals. */
static const cJSON *release__get(const cJSON *obj, const char *key) {
  const cJSON *exact = NULL, *fold = NULL;
  if (!cJSON_IsObject(obj)) return NULL;
  for (const cJSON *c = obj->child; c; c = c->next) {
    if (!c->string) continue;
    if (strcmp(c->string, key) == 0) exact = c;
    else if (strcasecmp(c->string, key) == 0) fold = c;
  }
  return exact ? exact : fold;
}

static const char *release__tname(const cJSON *v) {
  return cJSON_IsObject(v) ? "object" : cJSON_IsArray(v) ? "array" : cJSON_IsString(v) ? "string"
       : cJSON_IsNumber(v) ? "number" : cJSON_IsBool(v) ? "bool" : "null";
}

static void release__d_str(release__d_t *d, const cJSON *obj, const char *key, const char *path, char **dst) {
  const cJSON *v = release__get(obj, key);
  if (d->rc || !v || cJSON_IsNull(v)) return;
  if (!cJSON_IsString(v)) {
    release__derr(d, -EINVAL, "release JSON: %s%s: expected a string, found %s", path, key, release__tname(v));
    return;
  }
  free(*dst);
  if (!(*dst = strdup(v->valuestring))) release__derr(d, -ENOMEM, " ");
}

static void release__d_int(release__d_t *d, const cJSON *obj, const char *key, const char *path, int64_t *dst) {
  const cJSON *v = release__get(obj, key);
  if (d->rc || !v || cJSON_IsNull(v)) return;
  if (!cJSON_IsNumber(v) || v->valuedouble != floor(v->valuedouble) || fabs(v->valuedouble) > 9.2e18) {
    release__derr(d, -EINVAL, "release JSON: %s%s: expected an integer", path, key);
    return;
  }
  *dst = (int64_t)v->valuedouble;
}

static void release__d_bool(release__d_t *d, const cJSON *obj, const char *key, const char *path, bool *dst) {
  const cJSON *v = release__get(obj, key);
  if (d->rc || !v || cJSON_IsNull(v)) return;
  if (!cJSON_IsBool(v)) {
    release__derr(d, -EINVAL, "release JSON: %s%s: expected a bool, found %s", path, key, release__tname(v));
    return;
  }
  *dst = cJSON_IsTrue(v);
}

static void release__d_time(release__d_t *d, const cJSON *obj, const char *key, const char *path, release_time_t *dst) {
  const cJSON *v = release__get(obj, key);
  if (d->rc || !v || cJSON_IsNull(v)) return;
  if (!cJSON_IsString(v) || release_time_parse(v->valuestring, dst))
    release__derr(d, -EINVAL, "release JSON: %s%s: not an RFC 3339 time", path, key);
}

static void release__d_bytes(release__d_t *d, const cJSON *obj, const char *key, const char *path,
                             unsigned char **dst, size_t *len, bool *nonnil) {
  const cJSON *v = release__get(obj, key);
  if (d->rc || !v || cJSON_IsNull(v)) return;
  if (!cJSON_IsString(v)) {
    release__derr(d, -EINVAL, "release JSON: %s%s: expected base64 text, found %s", path, key, release__tname(v));
    return;
  }
  char e[96];
  int rc = b64_decode_alloc(v->valuestring, strlen(v->valuestring), dst, len, e, sizeof e);
  if (rc) {
    release__derr(d, rc, "release JSON: %s%s: %s", path, key, e);
    return;
  }
  *nonnil = true;
}

static void release__d_json(release__d_t *d, const cJSON *obj, const char *key, const char *path, int want_object,
                            cJSON **dst) {
  const cJSON *v = release__get(obj, key);
  if (d->rc || !v || cJSON_IsNull(v)) return;
  if (want_object == 1 ? !cJSON_IsObject(v) : want_object == 2 ? !cJSON_IsArray(v) : 0) {
    release__derr(d, -EINVAL, "release JSON: %s%s: expected an %s, found %s", path, key,
                  want_object == 1 ? "object" : "array", release__tname(v));
    return;
  }
  if (!(*dst = cJSON_Duplicate(v, 1))) release__derr(d, -ENOMEM, " ");
}

/* An array member: *arr is the JSON array or NULL when absent/null. */
static const cJSON *release__d_array(release__d_t *d, const cJSON *obj, const char *key, const char *path) {
  const cJSON *v = release__get(obj, key);
  if (d->rc || !v || cJSON_IsNull(v)) return NULL;
  if (!cJSON_IsArray(v)) {
    release__derr(d, -EINVAL, "release JSON: %s%s: expected an array, found %s", path, key, release__tname(v));
    return NULL;
  }
  return v;
}

static void release__d_strv(release__d_t *d, const cJSON *obj, const char *key, const char *path, char ***dst, size_t *n) {
  const cJSON *a = release__d_array(d, obj, key, path);
  if (!a) return;
  size_t cnt = (size_t)cJSON_GetArraySize(a);
  if (!cnt) return;
  char **v = calloc(cnt, sizeof *v);
  if (!v) {
    release__derr(d, -ENOMEM, " ");
    return;
  }
  size_t i = 0;
  for (const cJSON *e = a->child; e; e = e->next, i++) {
    if (!cJSON_IsNull(e) && !cJSON_IsString(e)) { /* null leaves Go's "" */
      release__derr(d, -EINVAL, "release JSON: %s%s[%zu]: expected a string", path, key, i);
      break;
    }
    if (!(v[i] = strdup(cJSON_IsString(e) ? e->valuestring : ""))) {
      release__derr(d, -ENOMEM, " ");
      break;
    }
  }
  *dst = v;
  *n = cnt;
}

/* Decodes the array of objects at obj[key] into a zeroed array of esize-byte elements, returned
 * with its length in *n (NULL when absent or empty), calling each() on every object with its path
 * "<path><key>[i].". A null element stays zero when nulls_ok, else it is an error, as is any other
 * non-object. */
static void *release__d_objects(release__d_t *d, const cJSON *obj, const char *key, const char *path, size_t esize,
                                bool nulls_ok, size_t *n, bool *has,
                                void (*each)(release__d_t *d, const cJSON *e, const char *p, void *elem)) {
  const cJSON *a = release__d_array(d, obj, key, path);
  if (!a) return NULL;
  if (has) *has = true;
  size_t cnt = (size_t)cJSON_GetArraySize(a);
  if (!cnt) return NULL;
  char *v = calloc(cnt, esize);
  if (!v) {
    release__derr(d, -ENOMEM, " ");
    return NULL;
  }
  *n = cnt;
  char p[96];
  size_t i = 0;
  for (const cJSON *e = a->child; e && !d->rc; e = e->next, i++) {
    if (nulls_ok && cJSON_IsNull(e)) continue;
    if (!cJSON_IsObject(e)) {
      release__derr(d, -EINVAL, "release JSON: %s%s[%zu]: expected an object", path, key, i);
      break;
    }
    snprintf(p, sizeof p, "%s%s[%zu].", path, key, i);
    each(d, e, p, v + i * esize);
  }
  return v;
}

static void release__d_file(release__d_t *d, const cJSON *e, const char *p, void *elem) {
  release_file_t *f = elem;
  release__d_str(d, e, "name", p, &f->name);
  release__d_bytes(d, e, "data", p, &f->data, &f->len, &f->data_nonnil);
  release__d_time(d, e, "modtime", p, &f->modtime);
}

static void release__d_files(release__d_t *d, const cJSON *obj, const char *key, const char *path,
                             release_file_t **dst, size_t *n, bool *has) {
  release_file_t *v = release__d_objects(d, obj, key, path, sizeof *v, false, n, has, release__d_file);
  if (v) *dst = v;
}

static void release__d_dep(release__d_t *d, const cJSON *e, const char *p, void *elem) {
  release_dependency_t *dep = elem;
  release__d_str(d, e, "name", p, &dep->name);
  release__d_str(d, e, "version", p, &dep->version);
  release__d_str(d, e, "repository", p, &dep->repository);
  release__d_str(d, e, "condition", p, &dep->condition);
  release__d_strv(d, e, "tags", p, &dep->tags, &dep->ntags);
  release__d_bool(d, e, "enabled", p, &dep->enabled);
  release__d_json(d, e, "import-values", p, 2, &dep->import_values);
  release__d_str(d, e, "alias", p, &dep->alias);
}

static void release__d_deps(release__d_t *d, const cJSON *obj, const char *key, const char *path,
                            release_dependency_t **dst, size_t *n, bool *has) {
  release_dependency_t *v = release__d_objects(d, obj, key, path, sizeof *v, false, n, has, release__d_dep);
  if (v) *dst = v;
}

static void release__d_string_map(release__d_t *d, const cJSON *obj, const char *key, const char *path, cJSON **dst) {
  release__d_json(d, obj, key, path, 1, dst);
  if (d->rc || !*dst) return;
  for (const cJSON *c = (*dst)->child; c; c = c->next)
    if (!cJSON_IsString(c) && !cJSON_IsNull(c)) {
      release__derr(d, -EINVAL, "release JSON: %s%s.%s: expected a string", path, key, c->string);
      return;
    }
}

static void release__d_metadata(release__d_t *d, const cJSON *m, release_metadata_t *md) {
  const char *p = "chart.metadata.";
  release__d_str(d, m, "name", p, &md->name);
  release__d_str(d, m, "home", p, &md->home);
  release__d_strv(d, m, "sources", p, &md->sources, &md->nsources);
  release__d_str(d, m, "version", p, &md->version);
  release__d_str(d, m, "description", p, &md->description);
  release__d_strv(d, m, "keywords", p, &md->keywords, &md->nkeywords);
  const cJSON *ma = release__d_array(d, m, "maintainers", p);
  size_t cnt = ma ? (size_t)cJSON_GetArraySize(ma) : 0;
  if (cnt) {
    if (!(md->maintainers = calloc(cnt, sizeof *md->maintainers))) {
      release__derr(d, -ENOMEM, " ");
      return;
    }
    md->nmaintainers = cnt;
    size_t i = 0;
    for (const cJSON *e = ma->child; e && !d->rc; e = e->next, i++) {
      if (cJSON_IsNull(e)) continue;
      if (!cJSON_IsObject(e)) {
        release__derr(d, -EINVAL, "release JSON: chart.metadata.maintainers[%zu]: expected an object", i);
        return;
      }
      release__d_str(d, e, "name", "chart.metadata.maintainers[].", &md->maintainers[i].name);
      release__d_str(d, e, "email", "chart.metadata.maintainers[].", &md->maintainers[i].email);
      release__d_str(d, e, "url", "chart.metadata.maintainers[].", &md->maintainers[i].url);
    }
  }
  release__d_str(d, m, "icon", p, &md->icon);
  release__d_str(d, m, "apiVersion", p, &md->api_version);
  release__d_str(d, m, "condition", p, &md->condition);
  release__d_str(d, m, "tags", p, &md->tags);
  release__d_str(d, m, "appVersion", p, &md->app_version);
  release__d_bool(d, m, "deprecated", p, &md->deprecated);
  release__d_string_map(d, m, "annotations", p, &md->annotations);
  release__d_str(d, m, "kubeVersion", p, &md->kube_version);
  release__d_deps(d, m, "dependencies", p, &md->dependencies, &md->ndependencies, NULL);
  release__d_str(d, m, "type", p, &md->type);
}

static void release__d_chart(release__d_t *d, const cJSON *c, release_chart_t *ch) {
  const char *p = "chart.";
  const cJSON *m = release__get(c, "metadata");
  if (m && !cJSON_IsNull(m)) {
    if (!cJSON_IsObject(m)) {
      release__derr(d, -EINVAL, "release JSON: chart.metadata: expected an object");
      return;
    }
    if (!(ch->metadata = calloc(1, sizeof *ch->metadata))) {
      release__derr(d, -ENOMEM, " ");
      return;
    }
    release__d_metadata(d, m, ch->metadata);
  }
  const cJSON *l = release__get(c, "lock");
  if (!d->rc && l && !cJSON_IsNull(l)) {
    if (!cJSON_IsObject(l)) {
      release__derr(d, -EINVAL, "release JSON: chart.lock: expected an object");
      return;
    }
    if (!(ch->lock = calloc(1, sizeof *ch->lock))) {
      release__derr(d, -ENOMEM, " ");
      return;
    }
    release__d_time(d, l, "generated", "chart.lock.", &ch->lock->generated);
    release__d_str(d, l, "digest", "chart.lock.", &ch->lock->digest);
    release__d_deps(d, l, "dependencies", "chart.lock.", &ch->lock->dependencies, &ch->lock->ndependencies,
                    &ch->lock->has_dependencies);
  }
  release__d_files(d, c, "templates", p, &ch->templates, &ch->ntemplates, &ch->has_templates);
  release__d_json(d, c, "values", p, 1, &ch->values);
  release__d_bytes(d, c, "schema", p, &ch->schema, &ch->schema_len, &ch->has_schema);
  release__d_time(d, c, "schemamodtime", p, &ch->schema_modtime);
  release__d_files(d, c, "files", p, &ch->files, &ch->nfiles, &ch->has_files);
  release__d_time(d, c, "modtime", p, &ch->modtime);
}

static void release__d_hook(release__d_t *d, const cJSON *e, const char *p, void *elem) {
  release_hook_t *h = elem;
  release__d_str(d, e, "name", p, &h->name);
  release__d_str(d, e, "kind", p, &h->kind);
  release__d_str(d, e, "path", p, &h->path);
  release__d_str(d, e, "manifest", p, &h->manifest);
  release__d_strv(d, e, "events", p, &h->events, &h->nevents);
  const cJSON *lr = release__get(e, "last_run");
  if (lr && !cJSON_IsNull(lr)) {
    if (!cJSON_IsObject(lr)) {
      release__derr(d, -EINVAL, "release JSON: %slast_run: expected an object", p);
      return;
    }
    release__d_time(d, lr, "started_at", p, &h->started_at);
    release__d_time(d, lr, "completed_at", p, &h->completed_at);
    release__d_str(d, lr, "phase", p, &h->phase);
  }
  release__d_int(d, e, "weight", p, &h->weight);
  release__d_strv(d, e, "delete_policies", p, &h->delete_policies, &h->ndelete_policies);
  release__d_strv(d, e, "output_log_policies", p, &h->output_log_policies, &h->noutput_log_policies);
}

static void release__d_hooks(release__d_t *d, const cJSON *obj, release_t *r) {
  release_hook_t *v = release__d_objects(d, obj, "hooks", "", sizeof *v, true, &r->nhooks, NULL, release__d_hook);
  if (v) r->hooks = v;
}

int release_decode_json(const char *json, size_t len, release_t **out, char *err, size_t errlen) {
  *out = NULL;
  release__d_t d = {err, errlen, 0};
  cJSON *root = cJSON_ParseWithLength(json, len);
  if (!root) {
    const char *at = cJSON_GetErrorPtr();
    size_t off = at && at >= json && at <= json + len ? (size_t)(at - json) : 0;
    return release__derr(&d, -EINVAL, "release JSON: syntax error near byte %zu of %zu", off, len);
  }
  if (!cJSON_IsObject(root)) {
    cJSON_Delete(root);
    return release__derr(&d, -EINVAL, "release JSON: expected an object, found %s", release__tname(root));
  }
  release_t *r = calloc(1, sizeof *r);
  if (!r) {
    cJSON_Delete(root);
    return release__derr(&d, -ENOMEM, " ");
  }
  release__d_str(&d, root, "name", "", &r->name);
  const cJSON *info = release__get(root, "info");
  if (!d.rc && info && !cJSON_IsNull(info)) {
    if (!cJSON_IsObject(info)) {
      release__derr(&d, -EINVAL, "release JSON: info: expected an object");
    } else if (!(r->info = calloc(1, sizeof *r->info))) {
      release__derr(&d, -ENOMEM, " ");
    } else {
      release__d_time(&d, info, "first_deployed", "info.", &r->info->first_deployed);
      release__d_time(&d, info, "last_deployed", "info.", &r->info->last_deployed);
      release__d_time(&d, info, "deleted", "info.", &r->info->deleted);
      release__d_str(&d, info, "description", "info.", &r->info->description);
      release__d_str(&d, info, "status", "info.", &r->info->status);
      release__d_int(&d, info, "rollback_revision", "info.", &r->info->rollback_revision);
      release__d_str(&d, info, "notes", "info.", &r->info->notes);
      release__d_json(&d, info, "resources", "info.", 1, &r->info->resources);
    }
  }
  const cJSON *chart = release__get(root, "chart");
  if (!d.rc && chart && !cJSON_IsNull(chart)) {
    if (!cJSON_IsObject(chart)) release__derr(&d, -EINVAL, "release JSON: chart: expected an object");
    else if (!(r->chart = calloc(1, sizeof *r->chart))) release__derr(&d, -ENOMEM, " ");
    else release__d_chart(&d, chart, r->chart);
  }
  release__d_json(&d, root, "config", "", 1, &r->config);
  release__d_str(&d, root, "manifest", "", &r->manifest);
  release__d_hooks(&d, root, r);
  release__d_int(&d, root, "version", "", &r->version);
  release__d_str(&d, root, "namespace", "", &r->namespace);
  release__d_str(&d, root, "apply_method", "", &r->apply_method);
  cJSON_Delete(root);
  if (d.rc) {
    release_free(r);
    return d.rc;
  }
  *out = r;
  return 0;
}

/* ---------- storage Secret ---------- */

int release_secret_name(const release_t *rel, buf_t *out) {
  return buf_printf(out, "sh.helm.release.v1.%s.v%" PRId64, rel->name ? rel->name : "", rel->version) ? -ENOMEM : 0;
}

static const char *const release__system_labels[] = {"name", "owner", "status", "version", "createdAt", "modifiedAt"};

static int release__is_system_label(const char *k) {
  for (size_t i = 0; i < sizeof release__system_labels / sizeof *release__system_labels; i++)
    if (strcmp(k, release__system_labels[i]) == 0) return 1;
  return 0;
}

static int release__cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

int release_secret_json(const release_t *rel, const release_secret_opts_t *opts, cJSON **out) {
  *out = NULL;
  if (!rel->name || !*rel->name || !rel->info) return -EINVAL;
  buf_t json = BUF_INIT, name = BUF_INIT;
  unsigned char *gz = NULL;
  char *b1 = NULL, *b2 = NULL;
  size_t gzlen, b1len;
  cJSON *sec = NULL, *tmp = NULL;
  int rc;
  size_t tail;
  if ((rc = release__encode_json(rel, &json, &tail))) goto done;
  /* What follows info (chart, values, manifest, hooks: nearly all of it) is compressed on its own,
   * and kept in opts->tail_cache: the next write of the same record (its status changed) compresses
   * only the head. */
  if ((rc = gz_compress_split(json.data, tail, json.data + tail, json.len - tail, GZ_BEST_COMPRESSION,
                              opts ? opts->tail_cache : NULL, &gz, &gzlen)))
    goto done;
  if ((rc = b64_encode_alloc(gz, gzlen, &b1, &b1len)) || (rc = b64_encode_alloc(b1, b1len, &b2, NULL))) goto done;
  if ((rc = release_secret_name(rel, &name))) goto done;
  /* Labels: the release's own, then the system ones (which win), in sorted order. */
  rc = -ENOMEM;
  tmp = cJSON_CreateObject();
  if (!tmp) goto done;
  if (rel->labels)
    for (const cJSON *c = rel->labels->child; c; c = c->next) {
      if (!cJSON_IsString(c)) {
        rc = -EINVAL;
        goto done;
      }
      cJSON_DeleteItemFromObjectCaseSensitive(tmp, c->string);
      if (!cJSON_AddStringToObject(tmp, c->string, c->valuestring)) goto done;
    }
  char ver[24], created[24], modified[24];
  snprintf(ver, sizeof ver, "%" PRId64, rel->version);
  snprintf(created, sizeof created, "%" PRId64, opts ? opts->created_at : 0);
  snprintf(modified, sizeof modified, "%" PRId64, opts ? opts->modified_at : 0);
  const char *sys[][2] = {{"name", rel->name},
                          {"owner", "helm"},
                          {"status", rel->info->status ? rel->info->status : ""},
                          {"version", ver},
                          {"createdAt", opts && opts->created_at ? created : NULL},
                          {"modifiedAt", opts && opts->modified_at ? modified : NULL}};
  for (size_t i = 0; i < sizeof sys / sizeof *sys; i++) {
    if (!sys[i][1]) continue;
    cJSON_DeleteItemFromObjectCaseSensitive(tmp, sys[i][0]);
    if (!cJSON_AddStringToObject(tmp, sys[i][0], sys[i][1])) goto done;
  }
  sec = cJSON_CreateObject();
  if (!sec || !cJSON_AddStringToObject(sec, "apiVersion", "v1") || !cJSON_AddStringToObject(sec, "kind", "Secret"))
    goto done;
  cJSON *meta = cJSON_AddObjectToObject(sec, "metadata");
  if (!meta || !cJSON_AddStringToObject(meta, "name", name.data)) goto done;
  if (opts && opts->storage_namespace && !cJSON_AddStringToObject(meta, "namespace", opts->storage_namespace)) goto done;
  cJSON *labels = cJSON_AddObjectToObject(meta, "labels");
  if (!labels) goto done;
  {
    size_t n = (size_t)cJSON_GetArraySize(tmp), i = 0;
    const char **keys = malloc((n ? n : 1) * sizeof *keys);
    if (!keys) goto done;
    for (const cJSON *c = tmp->child; c; c = c->next) keys[i++] = c->string;
    qsort(keys, n, sizeof *keys, release__cmp_str);
    for (i = 0; i < n; i++)
      if (!cJSON_AddStringToObject(labels, keys[i], cJSON_GetObjectItemCaseSensitive(tmp, keys[i])->valuestring)) {
        free(keys);
        goto done;
      }
    free(keys);
  }
  if (!cJSON_AddStringToObject(sec, "type", "helm.sh/release.v1")) goto done;
  cJSON *data = cJSON_AddObjectToObject(sec, "data");
  if (!data || !cJSON_AddStringToObject(data, "release", b2)) goto done;
  *out = sec;
  sec = NULL;
  rc = 0;
done:
  cJSON_Delete(sec);
  cJSON_Delete(tmp);
  buf_free(&json);
  buf_free(&name);
  free(gz);
  free(b1);
  free(b2);
  return rc;
}


/* release_decode_storage, and with member the gzip member decoded on the way (NULL for plain JSON). */
static int release__decode_storage(const char *data, size_t len, size_t max_json, release_t **out,
                                   unsigned char **member, size_t *member_len, char *err, size_t errlen) {
  *out = NULL;
  if (member) *member = NULL;
  if (!max_json) max_json = RELEASE__DEFAULT_MAX_JSON;
  unsigned char *raw = NULL, *json = NULL;
  size_t rawlen, jsonlen;
  char e[160];
  int rc = b64_decode_alloc(data, len, &raw, &rawlen, e, sizeof e);
  if (rc) return base_errf(err, errlen, rc, "release data: %s", rc == -ENOMEM ? "out of memory" : e);
  /* The driver gzips; records without the magic are plain JSON (as its decodeRelease allows). */
  if (rawlen > 3 && gz_is_gzip(raw, rawlen)) {
    rc = gz_decompress(raw, rawlen, max_json, &json, &jsonlen, e, sizeof e);
    if (!rc && member) {
      *member = raw;
      *member_len = rawlen;
    } else {
      free(raw);
    }
    if (rc) return base_errf(err, errlen, rc, "release data: %s", rc == -ENOMEM ? "out of memory" : e);
  } else {
    json = raw;
    jsonlen = rawlen;
    if (jsonlen > max_json) {
      free(json);
      return base_errf(err, errlen, -EFBIG, "release data: %zu bytes of JSON exceed the limit of %zu", jsonlen, max_json);
    }
  }
  rc = release_decode_json((const char *)json, jsonlen, out, err, errlen);
  free(json);
  if (rc && member) {
    free(*member);
    *member = NULL;
  }
  return rc;
}

int release_decode_storage(const char *data, size_t len, size_t max_json, release_t **out, char *err, size_t errlen) {
  return release__decode_storage(data, len, max_json, out, NULL, NULL, err, errlen);
}

int release_secret_decode(const cJSON *secret, size_t max_json, release_t **out, char *err, size_t errlen) {
  return release_secret_decode_member(secret, max_json, out, NULL, NULL, err, errlen);
}

int release_secret_decode_member(const cJSON *secret, size_t max_json, release_t **out, unsigned char **member,
                                 size_t *member_len, char *err, size_t errlen) {
  *out = NULL;
  if (member) *member = NULL;
  const cJSON *data = cJSON_GetObjectItemCaseSensitive(secret, "data");
  const cJSON *rel = cJSON_GetObjectItemCaseSensitive(data, "release");
  if (!cJSON_IsString(rel)) return base_errf(err, errlen, -EINVAL, "release Secret: data.release is missing or not a string");
  if (!max_json) max_json = RELEASE__DEFAULT_MAX_JSON;
  /* The API form base64s the stored bytes, which are themselves base64 text; bound both. */
  size_t outer = strlen(rel->valuestring);
  if (outer / 4 * 3 > max_json * 2 + 64)
    return base_errf(err, errlen, -EFBIG, "release Secret: data.release of %zu bytes is over the limit for %zu bytes of JSON",
                        outer, max_json);
  unsigned char *inner;
  size_t innerlen;
  char e[160];
  int rc = b64_decode_alloc(rel->valuestring, outer, &inner, &innerlen, e, sizeof e);
  if (rc) return base_errf(err, errlen, rc, "release Secret: data.release: %s", rc == -ENOMEM ? "out of memory" : e);
  release_t *r;
  rc = release__decode_storage((const char *)inner, innerlen, max_json, &r, member, member_len, err, errlen);
  free(inner);
  if (rc) return rc;
  /* Labels other than the driver's own are the release's custom labels (Secrets.Get). */
  const cJSON *labels = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(secret, "metadata"), "labels");
  if (cJSON_IsObject(labels)) {
    if (!(r->labels = cJSON_CreateObject())) {
      release_free(r);
      if (member) free(*member), *member = NULL;
      return base_errf(err, errlen, -ENOMEM, "out of memory");
    }
    for (const cJSON *c = labels->child; c; c = c->next) {
      if (!cJSON_IsString(c) || release__is_system_label(c->string)) continue;
      if (!cJSON_AddStringToObject(r->labels, c->string, c->valuestring)) {
        release_free(r);
        if (member) free(*member), *member = NULL;
        return base_errf(err, errlen, -ENOMEM, "out of memory");
      }
    }
  }
  *out = r;
  return 0;
}
