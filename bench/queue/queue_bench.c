/* The work queue with 1,000,000 keys: ns per add, per get+done, per add/get/done cycle (also
 * at a steady depth of 1,000,000 keys), and memory per queued key (the queue's own accounting,
 * queue_metrics_t.memory_bytes, and the heap in use as glibc sees it).
 *
 * Keys are "namespace-NNN/release-NNNNNNN" (~30 bytes), as reconcile would queue them. Keys go
 * out through queue_run_pending (the dispatch step the loop's idle handle runs), in batches of
 * max_in_flight, and are finished with queue_done. Prints `name value unit` lines.
 *
 * Usage: queue_bench [keys]   (default 1000000) */
#include "queue/queue.h"
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCH 1024

static const char *got[BATCH];
static unsigned n_got;

static void process(queue_t *q, const char *key, void *data) { got[n_got++] = key; }

static size_t heap_bytes(void) {
  struct mallinfo2 mi = mallinfo2();
  return mi.uordblks + mi.hblkhd;
}

static double now_ns(void) { return (double)uv_hrtime(); }

/* Hands out and finishes up to BATCH keys; if readd, each is added again after its done. */
static unsigned get_done(queue_t *q, int readd, char *tmp) {
  n_got = 0;
  queue_run_pending(q);
  unsigned n = n_got;
  for (unsigned i = 0; i < n; i++) {
    if (readd) strcpy(tmp, got[i]); /* the key string dies with queue_done */
    if (queue_done(q, got[i])) abort();
    if (readd && queue_add(q, tmp)) abort();
  }
  return n;
}

static void closed(queue_t *q) {}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
  uv_loop_t loop;
  uv_loop_init(&loop);
  queue_t q;
  queue_options_t o;
  queue_options_init(&o);
  o.max_in_flight = BATCH;
  o.qps = 0;
  if (queue_init(&loop, &q, &o, process, NULL)) return 1;
  char (*keys)[48] = malloc(n * sizeof *keys);
  for (size_t i = 0; i < n; i++) snprintf(keys[i], sizeof keys[i], "namespace-%03zu/release-%07zu", i % 1000, i);
  size_t key_text = 0;
  for (size_t i = 0; i < n; i++) key_text += strlen(keys[i]) + 1;

  malloc_trim(0);
  size_t heap0 = heap_bytes();
  double t0 = now_ns();
  for (size_t i = 0; i < n; i++)
    if (queue_add(&q, keys[i])) return 1;
  double t_add = now_ns() - t0;
  size_t heap1 = heap_bytes();
  queue_metrics_t m;
  queue_metrics_get(&q, &m);
  if (m.depth != n) { fprintf(stderr, "depth %llu\n", (unsigned long long)m.depth); return 1; }

  /* Dedup: adding every key again costs a lookup and changes nothing. */
  t0 = now_ns();
  for (size_t i = 0; i < n; i++) queue_add(&q, keys[i]);
  double t_dedup = now_ns() - t0;

  /* Steady state at depth n: take the oldest, finish it, add it again. */
  char tmp[64];
  size_t cycles = 0;
  t0 = now_ns();
  while (cycles < n) cycles += get_done(&q, 1, tmp);
  double t_cycle = now_ns() - t0;

  /* Drain: get+done of every key. */
  size_t drained = 0;
  t0 = now_ns();
  while (drained < n) {
    unsigned k = get_done(&q, 0, tmp);
    if (!k) break;
    drained += k;
  }
  double t_drain = now_ns() - t0;
  queue_metrics_t m2;
  queue_metrics_get(&q, &m2);

  printf("queue_keys %zu keys\n", n);
  printf("queue_add %.1f ns/op\n", t_add / n);
  printf("queue_add_dedup %.1f ns/op\n", t_dedup / n);
  printf("queue_get_done %.1f ns/op\n", t_drain / drained);
  printf("queue_add_get_done_cycle %.1f ns/op\n", (t_add + t_drain) / n);
  printf("queue_cycle_at_depth_%zu %.1f ns/op\n", n, t_cycle / cycles);
  printf("queue_memory_per_key %.1f bytes\n", (double)m.memory_bytes / n);
  printf("queue_memory_per_key_excl_text %.1f bytes\n", (double)(m.memory_bytes - key_text) / n);
  printf("queue_heap_per_key %.1f bytes\n", (double)(heap1 - heap0) / n);
  printf("queue_key_text_avg %.1f bytes\n", (double)key_text / n);
  printf("queue_memory_after_drain %llu bytes\n", (unsigned long long)m2.memory_bytes);
  free(keys);
  queue_close(&q, closed);
  uv_run(&loop, UV_RUN_DEFAULT);
  return uv_loop_close(&loop) ? 1 : 0;
}
