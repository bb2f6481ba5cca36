#include "queue/queue_ratelimit.h"

#include <math.h>

uint64_t queue_backoff_delay(const queue_backoff_t *b, uint32_t failures) {
  if (b->base_ms == 0) return 0;
  /* base << failures overflows once failures reaches the number of free high bits. */
  if (failures >= 64 || b->base_ms > (UINT64_MAX >> failures)) return b->max_ms;
  uint64_t d = b->base_ms << failures;
  return d > b->max_ms ? b->max_ms : d;
}

static uint64_t queue__sat_mul(uint64_t a, uint64_t b) {
  return (b && a > UINT64_MAX / b) ? UINT64_MAX : a * b;
}

static uint64_t queue__sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

void queue_bucket_init(queue_bucket_t *b, double qps, unsigned burst) {
  b->tat_ns = 0;
  if (!(qps > 0)) {
    b->interval_ns = b->tolerance_ns = 0;
    return;
  }
  double ns = 1e9 / qps;
  b->interval_ns = ns < 1 ? 1 : ns >= 1.8e19 ? UINT64_MAX / 2 : (uint64_t)llround(ns);
  b->tolerance_ns = queue__sat_mul(b->interval_ns, burst ? burst : 1);
}

uint64_t queue_bucket_reserve(queue_bucket_t *b, uint64_t now_ms) {
  if (!b->interval_ns) return 0;
  uint64_t now = queue__sat_mul(now_ms, 1000000);
  /* An idle bucket refills to `burst`: arrivals are never counted before now. */
  uint64_t tat = queue__sat_add(b->tat_ns > now ? b->tat_ns : now, b->interval_ns);
  b->tat_ns = tat;
  if (tat <= b->tolerance_ns || tat - b->tolerance_ns <= now) return 0;
  uint64_t wait_ns = tat - b->tolerance_ns - now;
  return wait_ns / 1000000 + (wait_ns % 1000000 != 0); /* round up: never faster than qps */
}
