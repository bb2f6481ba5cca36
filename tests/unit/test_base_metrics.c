/* base/metrics.h: series made once per label set, counters and gauges, histogram buckets written
 * cumulatively with +Inf, _sum and _count, label escaping, collectors, removal, and updates from
 * several threads at once adding up exactly. (The format itself is checked by promtool in
 * e2e.metrics, on the controller's real /metrics.) */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "base/metrics.h"
#include "t.h"

static metrics_family_t f_total = {.name = "t_things_total", .help = "Things.\nSecond line \\ here",
                                   .type = METRICS_COUNTER, .labels = {"kind", "result"}};
static metrics_family_t f_gauge = {.name = "t_level", .help = "A level.", .type = METRICS_GAUGE};
static const double bounds[] = {0.1, 1, 10};
static metrics_family_t f_hist = {.name = "t_wait_seconds", .help = "Waits.", .type = METRICS_HISTOGRAM,
                                  .labels = {"q"}, .buckets = bounds, .nbuckets = 3};
static metrics_family_t f_bad = {.name = "t_bad_seconds", .help = "Bad.", .type = METRICS_HISTOGRAM,
                                 .buckets = (const double[]){1, 1}, .nbuckets = 2};

static int collected;
static void collect(void *data) {
  collected++;
  metrics_set(metrics_get(&f_gauge), *(double *)data);
}

static void *hammer(void *arg) {
  metrics_series_t *s = arg;
  for (int i = 0; i < 100000; i++) metrics_observe(s, 0.5);
  return NULL;
}

static int has(const buf_t *b, const char *line) { return b->data && strstr(b->data, line) != NULL; }

int main(void) {
  metrics_series_t *a = metrics_get(&f_total, "web", "success");
  CHECK(a != NULL);
  CHECK(metrics_get(&f_total, "web", "success") == a); /* one series per label set */
  metrics_inc(a);
  metrics_add(a, 2);
  metrics_inc(metrics_get(&f_total, "a\"b\\c\nd", "error"));
  metrics_inc(NULL); /* a series that could not be made: nothing happens */
  CHECK(metrics_get(&f_bad) == NULL); /* refused: buckets must increase */

  metrics_series_t *h = metrics_get(&f_hist, "x");
  metrics_observe(h, 0.05);
  metrics_observe(h, 0.1); /* on a bound: counted in it (le) */
  metrics_observe(h, 5);
  metrics_observe(h, 50);

  double level = 7.25;
  metrics_collector_t c = {.collect = collect, .data = &level};
  metrics_collector_add(&c);
  buf_t b = BUF_INIT;
  CHECK_EQ_INT(metrics_write(&b), 0);
  CHECK_EQ_INT(collected, 1);
  CHECK(has(&b, "# HELP t_things_total Things.\\nSecond line \\\\ here\n# TYPE t_things_total counter\n"));
  CHECK(has(&b, "t_things_total{kind=\"web\",result=\"success\"} 3\n"));
  CHECK(has(&b, "t_things_total{kind=\"a\\\"b\\\\c\\nd\",result=\"error\"} 1\n"));
  CHECK(has(&b, "# TYPE t_level gauge\nt_level 7.25\n"));
  CHECK(has(&b, "t_wait_seconds_bucket{q=\"x\",le=\"0.1\"} 2\n"));
  CHECK(has(&b, "t_wait_seconds_bucket{q=\"x\",le=\"1\"} 2\n"));
  CHECK(has(&b, "t_wait_seconds_bucket{q=\"x\",le=\"10\"} 3\n"));
  CHECK(has(&b, "t_wait_seconds_bucket{q=\"x\",le=\"+Inf\"} 4\n"));
  CHECK(has(&b, "t_wait_seconds_sum{q=\"x\"} 55.15\n"));
  CHECK(has(&b, "t_wait_seconds_count{q=\"x\"} 4\n"));
  CHECK(!has(&b, "t_bad_seconds"));
  /* families in name order */
  CHECK(strstr(b.data, "t_level") < strstr(b.data, "t_things_total") &&
        strstr(b.data, "t_things_total") < strstr(b.data, "t_wait_seconds"));

  metrics_collector_remove(&c);
  metrics_remove(metrics_get(&f_total, "a\"b\\c\nd", "error"));
  buf_reset(&b);
  CHECK_EQ_INT(metrics_write(&b), 0);
  CHECK_EQ_INT(collected, 1); /* removed: not run again */
  CHECK(!has(&b, "result=\"error\""));

  /* Four threads observing at once: no observation lost. */
  metrics_series_t *hs = metrics_get(&f_hist, "threads");
  pthread_t th[4];
  for (int i = 0; i < 4; i++) pthread_create(&th[i], NULL, hammer, hs);
  for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
  buf_reset(&b);
  metrics_write(&b);
  CHECK(has(&b, "t_wait_seconds_bucket{q=\"threads\",le=\"1\"} 400000\n"));
  CHECK(has(&b, "t_wait_seconds_sum{q=\"threads\"} 200000\n"));

  buf_t d = BUF_INIT;
  metrics_format_double(&d, 1e-8);
  metrics_format_double(&d, 0.005);
  metrics_format_double(&d, 1.0 / 0.0);
  metrics_format_double(&d, 1e300);
  CHECK_EQ_STR(d.data, "1e-080.005+Inf1e+300");
  buf_free(&d);
  buf_free(&b);
  /* Many series of one family (a gauge per release): each label set found again, removed ones made
   * anew, label sets that differ only in where one value ends and the next begins kept apart. */
  static metrics_family_t f_many = {.name = "t_revision", .help = "Revisions.", .type = METRICS_GAUGE,
                                    .labels = {"namespace", "name"}};
  enum { MANY = 3000 };
  static metrics_series_t *made[MANY];
  char ns[32], nm[32];
  int same = 1;
  for (int i = 0; i < MANY; i++) {
    snprintf(ns, sizeof ns, "ns-%d", i % 7);
    snprintf(nm, sizeof nm, "app-%05d", i);
    made[i] = metrics_get(&f_many, ns, nm);
    metrics_set(made[i], i);
  }
  for (int i = 0; i < MANY; i++) {
    snprintf(ns, sizeof ns, "ns-%d", i % 7);
    snprintf(nm, sizeof nm, "app-%05d", i);
    if (!made[i] || metrics_get(&f_many, ns, nm) != made[i] || metrics_value(made[i]) != i) same = 0;
  }
  CHECK(same);
  CHECK(metrics_get(&f_many, "ab", "c") != metrics_get(&f_many, "a", "bc"));
  for (int i = 0; i < MANY; i += 2) metrics_remove(made[i]);
  int fresh = 1;
  for (int i = 0; i < MANY; i++) {
    snprintf(ns, sizeof ns, "ns-%d", i % 7);
    snprintf(nm, sizeof nm, "app-%05d", i);
    metrics_series_t *s = metrics_get(&f_many, ns, nm);
    if (i % 2 ? s != made[i] : metrics_value(s) != 0) fresh = 0; /* a removed one comes back at 0 */
  }
  CHECK(fresh);
  buf_t m = BUF_INIT;
  CHECK_EQ_INT(metrics_write(&m), 0);
  size_t lines = 0;
  for (const char *p = m.data; p && (p = strstr(p, "\nt_revision{")); p++) lines++;
  CHECK_EQ_INT((int)lines, MANY + 2);
  buf_free(&m);
  return t_done();
}
