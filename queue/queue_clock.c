#include "queue/queue_clock.h"

#include "queue/queue.h"

static uint64_t queue__fake_now(void *ctx) { return ((queue_fake_clock_t *)ctx)->now_ms; }

static void queue__fake_start(void *ctx, queue_t *q, uint64_t deadline_ms) {
  queue_fake_clock_t *fc = ctx;
  fc->deadline_ms = deadline_ms;
  fc->armed = 1;
  fc->starts++;
}

static void queue__fake_stop(void *ctx, queue_t *q) {
  queue_fake_clock_t *fc = ctx;
  fc->armed = 0;
  fc->stops++;
}

void queue_fake_clock_init(queue_fake_clock_t *fc, uint64_t start_ms) {
  fc->clock.now_ms = queue__fake_now;
  fc->clock.timer_start = queue__fake_start;
  fc->clock.timer_stop = queue__fake_stop;
  fc->clock.ctx = fc;
  fc->now_ms = start_ms;
  fc->deadline_ms = 0;
  fc->armed = 0;
  fc->starts = fc->stops = 0;
}

void queue_fake_clock_advance(queue_fake_clock_t *fc, queue_t *q, uint64_t ms) {
  fc->now_ms += ms;
  if (fc->armed && fc->deadline_ms <= fc->now_ms) {
    fc->armed = 0; /* one-shot, like a uv_timer with no repeat */
    queue_clock_fire(q);
  }
}
