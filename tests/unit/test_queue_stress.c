/* queue/: 100k keys through every path, checking that the work per operation stays constant
 * (hash probes per lookup, list operations per key, heap levels per heap operation) by
 * counting operations, never by timing; and that memory is exactly what the header says. */
#include <stdlib.h>
#include <uv.h>

#include "queue/queue.h"
#include "t.h"

#define N 100000
#define INFLIGHT 1000

typedef struct fx_s {
  uv_loop_t loop;
  queue_fake_clock_t fc;
  queue_t q;
  int pending[INFLIGHT]; /* keys handed out, finished after each step */
  unsigned npending;
  int *order; /* dispatch order */
  unsigned norder;
  unsigned char *runs;
  int bad;
} fx_t;

static fx_t fx;

static void key_of(char *out, size_t n, int i) { snprintf(out, n, "ns-%02d/release-%d", i % 97, i); }

static void on_process(queue_t *q, const char *key, void *data) {
  fx_t *f = data;
  const char *dash = strrchr(key, '-');
  int i = dash ? atoi(dash + 1) : -1;
  if (i < 0 || i >= N || f->npending >= INFLIGHT) {
    f->bad++;
    return;
  }
  f->runs[i]++;
  f->pending[f->npending++] = i;
  f->order[f->norder++] = i;
}

/* One dispatch step, then the consumer finishes everything it was given. */
static unsigned step(fx_t *f) {
  unsigned n = queue_run_pending(&f->q);
  char k[64];
  for (unsigned j = 0; j < f->npending; j++) {
    key_of(k, sizeof k, f->pending[j]);
    if (queue_done(&f->q, k) != 0) f->bad++;
  }
  f->npending = 0;
  return n;
}

static void drain(fx_t *f) {
  while (step(f) > 0) {
  }
}

static size_t key_bytes_all(void) {
  size_t total = 0;
  char k[64];
  for (int i = 0; i < N; i++) {
    key_of(k, sizeof k, i);
    total += queue_key_overhead() + strlen(k) + 1;
  }
  return total;
}

static uint64_t lcg(uint64_t *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return *s >> 33;
}

int main(void) {
  fx_t *f = &fx;
  f->order = calloc(N, sizeof *f->order);
  f->runs = calloc(N, 1);
  uint64_t *deadline = calloc(N, sizeof *deadline);
  CHECK(f->order && f->runs && deadline);
  CHECK_EQ_INT(uv_loop_init(&f->loop), 0);
  queue_fake_clock_init(&f->fc, 0);
  queue_options_t o;
  queue_options_init(&o);
  o.max_in_flight = INFLIGHT;
  o.clock = &f->fc.clock;
  CHECK_EQ_INT(queue_init(&f->loop, &f->q, &o, on_process, f), 0);
  char k[64];
  queue_metrics_t m;
  queue_ops_t ops;

  /* 1. Immediate adds: dedup, FIFO, in-flight limit, exactly 4 list operations per key. */
  for (int i = 0; i < N; i++) {
    key_of(k, sizeof k, i);
    queue_add(&f->q, k);
  }
  for (int i = 0; i < N; i++) {
    key_of(k, sizeof k, i);
    queue_add(&f->q, k);
  }
  queue_metrics_get(&f->q, &m);
  CHECK_EQ_INT(m.adds, N);
  CHECK_EQ_INT(m.dedups, N);
  CHECK_EQ_INT(m.depth, N);
  CHECK_EQ_INT(m.keys, N);
  /* Memory is exactly items + table (131072 buckets for 100k keys) + no heap. */
  CHECK_EQ_INT(m.memory_bytes, key_bytes_all() + 131072 * sizeof(void *));
  CHECK_EQ_INT(step(f), INFLIGHT);
  queue_metrics_get(&f->q, &m);
  CHECK_EQ_INT(m.in_flight, 0);
  drain(f);
  CHECK_EQ_INT(f->norder, N);
  int fifo = 1, once = 1;
  for (int i = 0; i < N; i++) {
    if (f->order[i] != i) fifo = 0;
    if (f->runs[i] != 1) once = 0;
  }
  CHECK(fifo);
  CHECK(once);
  queue_ops_get(&f->q, &ops);
  CHECK_EQ_INT(ops.list_ops, 4 * (uint64_t)N); /* ready push, ready pop, running push, running remove */
  CHECK_EQ_INT(ops.heap_ops, 0);
  queue_metrics_get(&f->q, &m);
  CHECK_EQ_INT(m.keys, 0);
  CHECK_EQ_INT(m.memory_bytes, 16 * sizeof(void *)); /* the table shrank back */
  CHECK_EQ_INT(m.queue_latency_count, N);
  CHECK_EQ_INT(m.work_duration_count, N);

  /* 2. Delayed adds: random deadlines, then earlier (wins) and later (ignored) re-adds. */
  memset(f->runs, 0, N);
  f->norder = 0;
  uint64_t seed = 42;
  queue_ops_t before;
  queue_ops_get(&f->q, &before);
  for (int i = 0; i < N; i++) {
    key_of(k, sizeof k, i);
    deadline[i] = 1 + lcg(&seed) % 100000;
    queue_add_after(&f->q, k, deadline[i]);
  }
  for (int i = 0; i < N; i += 2) { /* half move earlier */
    key_of(k, sizeof k, i);
    uint64_t d = 1 + lcg(&seed) % 100000;
    queue_add_after(&f->q, k, d);
    if (d < deadline[i]) deadline[i] = d;
  }
  for (int i = 1; i < N; i += 4) { /* some ask for later: no effect */
    key_of(k, sizeof k, i);
    queue_add_after(&f->q, k, deadline[i] + 1000);
  }
  queue_metrics_get(&f->q, &m);
  CHECK_EQ_INT(m.waiting, N);
  CHECK_EQ_INT(m.memory_bytes, key_bytes_all() + 131072 * sizeof(void *) + 131072 * sizeof(void *));
  uint64_t prev_deadline = 0;
  int sorted = 1, in_time = 1;
  unsigned seen = 0;
  while (f->norder < N && f->fc.now_ms < 200000) {
    queue_fake_clock_advance(&f->fc, &f->q, 997);
    drain(f);
    for (; seen < f->norder; seen++) {
      uint64_t d = deadline[f->order[seen]];
      if (d < prev_deadline) sorted = 0;
      if (d > f->fc.now_ms) in_time = 0;
      prev_deadline = d;
    }
  }
  CHECK_EQ_INT(f->norder, N);
  CHECK(sorted);
  CHECK(in_time);
  once = 1;
  for (int i = 0; i < N; i++)
    if (f->runs[i] != 1) once = 0;
  CHECK(once);
  queue_ops_get(&f->q, &ops);
  uint64_t hops = ops.heap_ops - before.heap_ops, hswaps = ops.heap_swaps - before.heap_swaps;
  CHECK(hops <= 3 * (uint64_t)N); /* push, maybe decrease, pop */
  CHECK(hswaps <= hops * 17);     /* at most log2(131072) levels each */
  CHECK(f->fc.starts <= hops);    /* the timer is re-armed only when the earliest deadline changes */
  CHECK(f->fc.starts < 2000);     /* ...which with 997 ms steps is about once a step */
  CHECK_EQ_INT(ops.list_ops - before.list_ops, 4 * (uint64_t)N);

  /* 3. Rate-limited: 100 go at once (5 ms backoff), then the bucket lets 10 a second through. */
  memset(f->runs, 0, N);
  f->norder = 0;
  f->fc.now_ms += 100000; /* bucket full */
  uint64_t t0 = f->fc.now_ms;
  for (int i = 0; i < N; i++) {
    key_of(k, sizeof k, i);
    queue_add_rate_limited(&f->q, k);
  }
  CHECK_EQ_INT(queue_num_requeues(&f->q, "ns-00/release-0"), 1);
  queue_fake_clock_advance(&f->fc, &f->q, 5);
  drain(f);
  CHECK_EQ_INT(f->norder, 100);
  int rate_ok = 1;
  for (uint64_t minute = 1; f->norder < N; minute++) {
    queue_fake_clock_advance(&f->fc, &f->q, f->fc.now_ms - t0 < 60000 ? 60000 - 5 : 60000);
    drain(f);
    uint64_t want = 100 + 600 * minute;
    if (f->norder != (want > N ? N : want)) rate_ok = 0;
    if (minute > 200) break;
  }
  CHECK(rate_ok);
  CHECK_EQ_INT(f->norder, N);
  CHECK_EQ_INT(f->fc.now_ms - t0, 167 * 60000); /* (N - 100) / 10 per second = 9990 s */
  queue_metrics_get(&f->q, &m);
  CHECK_EQ_INT(m.keys, N); /* failures are remembered until forget */
  CHECK_EQ_INT(m.retries, N);
  for (int i = 0; i < N; i++) {
    key_of(k, sizeof k, i);
    queue_forget(&f->q, k);
  }
  queue_metrics_get(&f->q, &m);
  CHECK_EQ_INT(m.keys, 0);
  CHECK(m.memory_bytes <= 16 * sizeof(void *) + 64 * sizeof(void *)); /* heap shrank to its floor */

  /* Whole run: O(1) hash work per lookup and amortized O(1) resizing. */
  queue_ops_get(&f->q, &ops);
  uint64_t inserts = 3 * (uint64_t)N;
  printf("map: %llu lookups, %.3f probes/lookup, %llu rehashed for %llu inserts; "
         "heap: %llu ops, %.2f levels/op; list: %llu ops\n",
         (unsigned long long)ops.map_lookups, (double)ops.map_probes / (double)ops.map_lookups,
         (unsigned long long)ops.map_rehashed, (unsigned long long)inserts, (unsigned long long)ops.heap_ops,
         (double)ops.heap_swaps / (double)ops.heap_ops, (unsigned long long)ops.list_ops);
  CHECK(ops.map_probes <= 2 * ops.map_lookups);
  CHECK(ops.map_rehashed <= 4 * inserts);
  CHECK_EQ_INT(f->bad, 0);

  queue_close(&f->q, NULL);
  uv_run(&f->loop, UV_RUN_DEFAULT);
  CHECK_EQ_INT(uv_loop_close(&f->loop), 0);
  free(f->order);
  free(f->runs);
  free(deadline);
  return t_done();
}
