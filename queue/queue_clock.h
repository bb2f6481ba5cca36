/* Where the queue gets its time from. The default is the libuv loop (uv_now and one
 * uv_timer); tests hand in a fake so that delays, backoff and metrics are deterministic. */
#pragma once
#include <stdint.h>

typedef struct queue_s queue_t;

/* A clock: now_ms reads the time; timer_start asks to have queue_clock_fire(q) called once
 * at or after deadline_ms (replacing any earlier request); timer_stop cancels the request. */
typedef struct queue_clock_s {
  uint64_t (*now_ms)(void *ctx);
  void (*timer_start)(void *ctx, queue_t *q, uint64_t deadline_ms);
  void (*timer_stop)(void *ctx, queue_t *q);
  void *ctx;
} queue_clock_t;

/* A manual clock for tests: time moves only when the test says so. */
typedef struct queue_fake_clock_s {
  queue_clock_t clock;  /* give &fc->clock to queue_options_t.clock */
  uint64_t now_ms;
  uint64_t deadline_ms; /* what the queue asked for, valid while armed */
  int armed;
  uint64_t starts, stops; /* how often the queue armed / cancelled its timer */
} queue_fake_clock_t;

/* Sets up a fake clock reading start_ms, with no timer armed. */
void queue_fake_clock_init(queue_fake_clock_t *fc, uint64_t start_ms);
/* Moves time forward by ms and, if the queue's timer is armed and due, fires it (queue_clock_fire). */
void queue_fake_clock_advance(queue_fake_clock_t *fc, queue_t *q, uint64_t ms);
