/* The two rate limiters client-go's DefaultControllerRateLimiter combines, usable on their own:
 * per-key exponential backoff and an overall token bucket. The queue takes the max of both. */
#pragma once
#include <stdint.h>

/* Per-key exponential backoff: failure n (0-based) waits base_ms * 2^n, capped at max_ms. */
typedef struct queue_backoff_s {
  uint64_t base_ms; /* default 5 */
  uint64_t max_ms;  /* default 1000 s */
} queue_backoff_t;

/* Returns the delay for a key that has failed `failures` times before (0 gives base_ms). */
uint64_t queue_backoff_delay(const queue_backoff_t *b, uint32_t failures);

/* Token bucket as golang.org/x/time/rate's Reserve().Delay(): `burst` tokens, refilled at
 * `qps` per second; a reservation always succeeds and says how long to wait. Kept as a
 * theoretical arrival time in integer nanoseconds (GCRA), so the figures are exact. */
typedef struct queue_bucket_s {
  uint64_t interval_ns;  /* time per token; 0 disables the bucket */
  uint64_t tolerance_ns; /* burst * interval_ns */
  uint64_t tat_ns;       /* when the bucket will be full again, if nothing else is taken */
} queue_bucket_t;

/* Sets up a bucket of qps tokens per second holding up to burst (0 counts as 1); qps <= 0 disables it. */
void queue_bucket_init(queue_bucket_t *b, double qps, unsigned burst);
/* Takes one token at now_ms and returns how many ms the caller must wait before using it. */
uint64_t queue_bucket_reserve(queue_bucket_t *b, uint64_t now_ms);
