#include "base/metrics.h"
#include "base/log.h"
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const double metrics_buckets_latency[METRICS_BUCKETS_LATENCY_N] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6,
                                          0.7,   0.8,  0.9,   1.0,  1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5,
                                          6,     7,    8,     9,    10,   15,  20,   25,  30,  40,  50,  60};
const double metrics_buckets_workqueue[METRICS_BUCKETS_WORKQUEUE_N] = {1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, 1, 10, 100, 1000};

/* The registry: families in the order they joined, and the collectors. The lock guards the lists
 * (joining, making and removing series, writing); updates of a series take no lock. */
static pthread_mutex_t metrics__mu = PTHREAD_MUTEX_INITIALIZER;
static metrics_family_t *metrics__families;
static metrics_collector_t metrics__collectors = {NULL, NULL, &metrics__collectors, &metrics__collectors};

static double metrics__load(const uint64_t *p) {
  uint64_t bits = __atomic_load_n(p, __ATOMIC_RELAXED);
  double d;
  memcpy(&d, &bits, sizeof d);
  return d;
}

static void metrics__store(uint64_t *p, double v) {
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  __atomic_store_n(p, bits, __ATOMIC_RELAXED);
}

/* A double has no atomic add: compare-and-swap its bits until no other thread got in between. */
static void metrics__add_double(uint64_t *p, double v) {
  uint64_t old = __atomic_load_n(p, __ATOMIC_RELAXED), nb;
  do {
    double d;
    memcpy(&d, &old, sizeof d);
    d += v;
    memcpy(&nb, &d, sizeof nb);
  } while (!__atomic_compare_exchange_n(p, &old, nb, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
}

/* Checks f once, as it joins: a name, at most METRICS_MAX_LABELS labels, sane buckets. */
static int metrics__join(metrics_family_t *f) {
  if (f->registered) return f->registered > 0 ? 0 : -1;
  unsigned n = 0;
  while (n < METRICS_MAX_LABELS && f->labels[n]) n++;
  const char *bad = NULL;
  if (!f->name || !*f->name || !f->help) bad = "no name or help";
  else if (f->type == METRICS_HISTOGRAM && (!f->buckets || !f->nbuckets || f->nbuckets > METRICS_MAX_BUCKETS))
    bad = "a histogram needs 1 to 48 buckets";
  for (unsigned i = 1; !bad && f->type == METRICS_HISTOGRAM && i < f->nbuckets; i++)
    if (!(f->buckets[i] > f->buckets[i - 1])) bad = "buckets must increase";
  if (bad) {
    f->registered = -1;
    LOG_E("metric family refused", "name", f->name ? f->name : "(none)", "error", bad);
    return -1;
  }
  f->nlabels = n;
  f->registered = 1;
  f->next = metrics__families;
  metrics__families = f;
  return 0;
}

static uint64_t metrics__hash(const char *const *v, unsigned n) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a over the values, each with its terminating NUL */
  for (unsigned i = 0; i < n; i++) {
    const unsigned char *p = (const unsigned char *)v[i];
    do {
      h ^= *p;
      h *= 1099511628211ull;
    } while (*p++);
  }
  return h;
}

/* Links s into f's index, growing it to keep the chains short. 0, or -1 out of memory. */
static int metrics__index(metrics_family_t *f, metrics_series_t *s) {
  if (f->nseries + 1 > f->index_cap) {
    size_t cap = f->index_cap ? f->index_cap * 2 : 8;
    metrics_series_t **nb = calloc(cap, sizeof *nb);
    if (!nb) return -1;
    for (size_t i = 0; i < f->index_cap; i++)
      for (metrics_series_t *x = f->index[i], *nx; x; x = nx) {
        nx = x->hnext;
        x->hnext = nb[x->hash & (cap - 1)];
        nb[x->hash & (cap - 1)] = x;
      }
    free(f->index);
    f->index = nb;
    f->index_cap = cap;
  }
  s->hnext = f->index[s->hash & (f->index_cap - 1)];
  f->index[s->hash & (f->index_cap - 1)] = s;
  f->nseries++;
  return 0;
}

metrics_series_t *metrics_get(metrics_family_t *f, ...) {
  const char *v[METRICS_MAX_LABELS] = {0};
  pthread_mutex_lock(&metrics__mu);
  metrics_series_t *s = NULL;
  if (metrics__join(f)) goto out;
  va_list ap;
  va_start(ap, f);
  for (unsigned i = 0; i < f->nlabels; i++) v[i] = va_arg(ap, const char *);
  va_end(ap);
  for (unsigned i = 0; i < f->nlabels; i++)
    if (!v[i]) goto out;
  uint64_t h = metrics__hash(v, f->nlabels);
  for (s = f->index_cap ? f->index[h & (f->index_cap - 1)] : NULL; s; s = s->hnext) {
    unsigned i = 0;
    while (s->hash == h && i < f->nlabels && !strcmp(s->label[i], v[i])) i++;
    if (s->hash == h && i == f->nlabels) goto out;
  }
  /* One block: the series, its bucket counts, its label values. */
  size_t nb = f->type == METRICS_HISTOGRAM ? f->nbuckets : 0, text = 0;
  for (unsigned i = 0; i < f->nlabels; i++) text += strlen(v[i]) + 1;
  s = calloc(1, sizeof *s + nb * sizeof(uint64_t) + text);
  if (!s) goto out;
  s->f = f;
  if (nb) s->bucket = (uint64_t *)(s + 1);
  char *p = (char *)(s + 1) + nb * sizeof(uint64_t);
  for (unsigned i = 0; i < f->nlabels; i++) {
    size_t n = strlen(v[i]) + 1;
    memcpy(p, v[i], n);
    s->label[i] = p;
    p += n;
  }
  metrics__store(&s->value, 0);
  s->hash = h;
  if (metrics__index(f, s)) {
    free(s);
    s = NULL;
    goto out;
  }
  s->next = f->series;
  f->series = s;
out:
  pthread_mutex_unlock(&metrics__mu);
  return s;
}

void metrics_add(metrics_series_t *s, double v) {
  if (s) metrics__add_double(&s->value, v);
}

void metrics_set(metrics_series_t *s, double v) {
  if (s) metrics__store(&s->value, v);
}

double metrics_value(const metrics_series_t *s) { return s ? metrics__load(&s->value) : 0; }

void metrics_observe(metrics_series_t *s, double v) {
  if (!s || !s->bucket) return;
  const metrics_family_t *f = s->f;
  unsigned i = 0;
  while (i < f->nbuckets && v > f->buckets[i]) i++;
  if (i < f->nbuckets) __atomic_add_fetch(&s->bucket[i], 1, __ATOMIC_RELAXED);
  __atomic_add_fetch(&s->count, 1, __ATOMIC_RELAXED);
  metrics__add_double(&s->value, v);
}

void metrics_remove(metrics_series_t *s) {
  if (!s) return;
  pthread_mutex_lock(&metrics__mu);
  metrics_family_t *f = s->f;
  for (metrics_series_t **pp = &f->series; *pp; pp = &(*pp)->next)
    if (*pp == s) {
      *pp = s->next;
      break;
    }
  for (metrics_series_t **pp = &f->index[s->hash & (f->index_cap - 1)]; *pp; pp = &(*pp)->hnext)
    if (*pp == s) {
      *pp = s->hnext;
      f->nseries--;
      break;
    }
  pthread_mutex_unlock(&metrics__mu);
  free(s);
}

void metrics_collector_add(metrics_collector_t *c) {
  pthread_mutex_lock(&metrics__mu);
  if (!c->next) {
    c->prev = metrics__collectors.prev;
    c->next = &metrics__collectors;
    metrics__collectors.prev->next = c;
    metrics__collectors.prev = c;
  }
  pthread_mutex_unlock(&metrics__mu);
}

void metrics_collector_remove(metrics_collector_t *c) {
  pthread_mutex_lock(&metrics__mu);
  if (c->next) {
    c->prev->next = c->next;
    c->next->prev = c->prev;
    c->prev = c->next = NULL;
  }
  pthread_mutex_unlock(&metrics__mu);
}

int metrics_format_double(buf_t *out, double v) {
  if (isnan(v)) return buf_puts(out, "NaN");
  if (isinf(v)) return buf_puts(out, v > 0 ? "+Inf" : "-Inf");
  if (v == floor(v) && fabs(v) < 1e15) return buf_printf(out, "%.0f", v);
  char t[32];
  for (int prec = 1; prec <= 17; prec++) { /* the shortest digits that read back as v */
    snprintf(t, sizeof t, "%.*g", prec, v);
    if (strtod(t, NULL) == v) break;
  }
  return buf_puts(out, t);
}

/* A label value: backslash, double quote and newline escaped. */
static int metrics__label_value(buf_t *b, const char *v) {
  int e = 0;
  for (; *v; v++) {
    if (*v == '\\') e |= buf_puts(b, "\\\\");
    else if (*v == '"') e |= buf_puts(b, "\\\"");
    else if (*v == '\n') e |= buf_puts(b, "\\n");
    else e |= buf_putc(b, *v);
  }
  return e;
}

/* name{labels[,le="bound"]} value */
static int metrics__sample(buf_t *b, const metrics_series_t *s, const char *suffix, const char *le, double v) {
  const metrics_family_t *f = s->f;
  int e = buf_puts(b, f->name) | buf_puts(b, suffix);
  if (f->nlabels || le) {
    e |= buf_putc(b, '{');
    for (unsigned i = 0; i < f->nlabels; i++) {
      e |= buf_printf(b, "%s%s=\"", i ? "," : "", f->labels[i]) < 0;
      e |= metrics__label_value(b, s->label[i]) | buf_putc(b, '"');
    }
    if (le) e |= buf_printf(b, "%sle=\"%s\"", f->nlabels ? "," : "", le) < 0;
    e |= buf_putc(b, '}');
  }
  e |= buf_putc(b, ' ') | metrics_format_double(b, v) | buf_putc(b, '\n');
  return e;
}

static int metrics__family(buf_t *b, const metrics_family_t *f) {
  static const char *const types[] = {"counter", "gauge", "histogram"};
  int e = buf_printf(b, "# HELP %s ", f->name) < 0;
  for (const char *p = f->help; *p; p++) {
    if (*p == '\\') e |= buf_puts(b, "\\\\");
    else if (*p == '\n') e |= buf_puts(b, "\\n");
    else e |= buf_putc(b, *p);
  }
  e |= buf_printf(b, "\n# TYPE %s %s\n", f->name, types[f->type]) < 0;
  for (const metrics_series_t *s = f->series; s; s = s->next) {
    if (f->type != METRICS_HISTOGRAM) {
      e |= metrics__sample(b, s, "", NULL, metrics__load(&s->value));
      continue;
    }
    /* Read the count first: observations racing with the write land in it or after it, so the
     * buckets never sum to more than _count... except for those that land meanwhile, which is what
     * every client library accepts. */
    uint64_t count = __atomic_load_n(&s->count, __ATOMIC_RELAXED), cum = 0;
    buf_t le = BUF_INIT;
    for (unsigned i = 0; i < f->nbuckets; i++) {
      cum += __atomic_load_n(&s->bucket[i], __ATOMIC_RELAXED);
      if (cum > count) count = cum;
      buf_reset(&le);
      e |= metrics_format_double(&le, f->buckets[i]);
      e |= metrics__sample(b, s, "_bucket", le.data ? le.data : "", (double)cum);
    }
    buf_free(&le);
    e |= metrics__sample(b, s, "_bucket", "+Inf", (double)count);
    e |= metrics__sample(b, s, "_sum", NULL, metrics__load(&s->value));
    e |= metrics__sample(b, s, "_count", NULL, (double)count);
  }
  return e;
}

static int metrics__by_name(const void *a, const void *b) {
  return strcmp((*(metrics_family_t *const *)a)->name, (*(metrics_family_t *const *)b)->name);
}

int metrics_write(buf_t *out) {
  pthread_mutex_lock(&metrics__mu);
  /* Collectors run without the lock: they make and set series themselves. A collector is removed
   * only on the thread that writes (the loop), so the list cannot change under this walk. */
  metrics_collector_t *first = metrics__collectors.next;
  pthread_mutex_unlock(&metrics__mu);
  for (metrics_collector_t *c = first; c != &metrics__collectors; c = c->next) c->collect(c->data);
  pthread_mutex_lock(&metrics__mu);
  size_t n = 0;
  for (metrics_family_t *f = metrics__families; f; f = f->next) n++;
  metrics_family_t **v = n ? malloc(n * sizeof *v) : NULL;
  int rc = 0;
  if (n && !v) {
    rc = -12;
  } else {
    n = 0;
    for (metrics_family_t *f = metrics__families; f; f = f->next) v[n++] = f;
    qsort(v, n, sizeof *v, metrics__by_name);
    for (size_t i = 0; i < n; i++)
      if (v[i]->series && metrics__family(out, v[i])) rc = -12;
  }
  pthread_mutex_unlock(&metrics__mu);
  free(v);
  return rc;
}
