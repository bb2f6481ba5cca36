/* queue/: per-key exponential backoff, the overall token bucket, and how the queue combines
 * them (client-go's DefaultControllerRateLimiter), on a fake clock. */
#include <uv.h>

#include "queue/queue.h"
#include "t.h"

typedef struct fx_s {
  uv_loop_t loop;
  queue_fake_clock_t fc;
  queue_t q;
  unsigned processed;
  int auto_done;
} fx_t;

static void on_process(queue_t *q, const char *key, void *data) {
  fx_t *f = data;
  f->processed++;
  if (f->auto_done) queue_done(q, key);
}

static void fx_open(fx_t *f, double qps, unsigned burst) {
  memset(f, 0, sizeof *f);
  CHECK_EQ_INT(uv_loop_init(&f->loop), 0);
  queue_fake_clock_init(&f->fc, 0);
  queue_options_t o;
  queue_options_init(&o);
  o.max_in_flight = 1000;
  o.qps = qps;
  o.burst = burst;
  o.clock = &f->fc.clock;
  CHECK_EQ_INT(queue_init(&f->loop, &f->q, &o, on_process, f), 0);
}

static void fx_close(fx_t *f) {
  queue_close(&f->q, NULL);
  uv_run(&f->loop, UV_RUN_DEFAULT);
  CHECK_EQ_INT(uv_loop_close(&f->loop), 0);
}

static void test_backoff_direct(void) {
  queue_backoff_t b = {5, 1000 * 1000};
  uint64_t want = 5;
  for (uint32_t n = 0; n < 40; n++) {
    CHECK_EQ_INT(queue_backoff_delay(&b, n), want);
    want = want * 2 > 1000000 ? 1000000 : want * 2;
  }
  CHECK_EQ_INT(queue_backoff_delay(&b, 17), 655360);
  CHECK_EQ_INT(queue_backoff_delay(&b, 18), 1000000); /* 1310720 capped at 1000 s */
  CHECK_EQ_INT(queue_backoff_delay(&b, 61), 1000000); /* 5 << 61 overflows */
  CHECK_EQ_INT(queue_backoff_delay(&b, 64), 1000000);
  CHECK_EQ_INT(queue_backoff_delay(&b, UINT32_MAX), 1000000);
  queue_backoff_t huge = {UINT64_MAX / 2, UINT64_MAX};
  CHECK(queue_backoff_delay(&huge, 1) == UINT64_MAX - 1);
  CHECK(queue_backoff_delay(&huge, 2) == UINT64_MAX);
  queue_backoff_t zero = {0, 100};
  CHECK_EQ_INT(queue_backoff_delay(&zero, 7), 0);
}

static void test_bucket_direct(void) {
  queue_bucket_t b;
  queue_bucket_init(&b, 10, 100);
  /* The burst goes out at once, then one token per 100 ms. */
  for (int i = 0; i < 100; i++) CHECK_EQ_INT(queue_bucket_reserve(&b, 0), 0);
  CHECK_EQ_INT(queue_bucket_reserve(&b, 0), 100);
  CHECK_EQ_INT(queue_bucket_reserve(&b, 0), 200);
  CHECK_EQ_INT(queue_bucket_reserve(&b, 0), 300);
  /* At t=1000, 10 tokens have come back, 3 were pre-spent: 7 free, then waits resume. */
  for (int i = 0; i < 7; i++) CHECK_EQ_INT(queue_bucket_reserve(&b, 1000), 0);
  CHECK_EQ_INT(queue_bucket_reserve(&b, 1000), 100);
  /* A long idle refills to the burst and no further. */
  for (int i = 0; i < 100; i++) CHECK_EQ_INT(queue_bucket_reserve(&b, 60000), 0);
  CHECK_EQ_INT(queue_bucket_reserve(&b, 60000), 100);
  /* Partial refill rounds the wait up to whole ms: never faster than the rate. */
  queue_bucket_init(&b, 3, 1);
  CHECK_EQ_INT(queue_bucket_reserve(&b, 0), 0);
  CHECK_EQ_INT(queue_bucket_reserve(&b, 0), 334); /* 333.33 ms */
  CHECK_EQ_INT(queue_bucket_reserve(&b, 0), 667);
  /* Fractional rates and burst 0 (treated as 1). */
  queue_bucket_init(&b, 0.5, 0);
  CHECK_EQ_INT(queue_bucket_reserve(&b, 0), 0);
  CHECK_EQ_INT(queue_bucket_reserve(&b, 0), 2000);
  CHECK_EQ_INT(queue_bucket_reserve(&b, 500), 3500);
  /* Disabled. */
  queue_bucket_init(&b, 0, 100);
  for (int i = 0; i < 1000; i++) CHECK_EQ_INT(queue_bucket_reserve(&b, 0), 0);
}

/* Delay the queue chose for key's rate-limited add, read off the fake timer (key must be the
 * only waiting one). */
static uint64_t rl_delay(fx_t *f, const char *key) {
  CHECK_EQ_INT(queue_add_rate_limited(&f->q, key), 0);
  CHECK(f->fc.armed);
  return f->fc.deadline_ms - f->fc.now_ms;
}

/* Lets the waiting key become ready and processes it. */
static void rl_fire(fx_t *f) {
  queue_fake_clock_advance(&f->fc, &f->q, f->fc.deadline_ms - f->fc.now_ms);
  CHECK_EQ_INT(queue_run_pending(&f->q), 1);
}

static void test_backoff_via_queue(void) {
  fx_t f;
  fx_open(&f, 0, 0); /* bucket off: only the per-key backoff */
  f.auto_done = 1;
  uint64_t want = 5;
  for (unsigned n = 0; n < 25; n++) {
    CHECK_EQ_INT(rl_delay(&f, "ns/r"), want);
    CHECK_EQ_INT(queue_num_requeues(&f.q, "ns/r"), n + 1);
    rl_fire(&f);
    want = want * 2 > 1000000 ? 1000000 : want * 2;
  }
  /* Failures are per key: another key starts at the base. */
  CHECK_EQ_INT(rl_delay(&f, "ns/other"), 5);
  rl_fire(&f);
  /* Forget resets the sequence. */
  queue_forget(&f.q, "ns/r");
  CHECK_EQ_INT(queue_num_requeues(&f.q, "ns/r"), 0);
  CHECK_EQ_INT(rl_delay(&f, "ns/r"), 5);
  CHECK_EQ_INT(queue_num_requeues(&f.q, "ns/r"), 1);
  rl_fire(&f);
  CHECK_EQ_INT(rl_delay(&f, "ns/r"), 10);
  rl_fire(&f);
  queue_forget(&f.q, "ns/r");
  queue_forget(&f.q, "ns/other");
  queue_metrics_t m;
  queue_metrics_get(&f.q, &m);
  CHECK_EQ_INT(m.keys, 0);
  CHECK_EQ_INT(m.retries, 25 + 1 + 2);
  fx_close(&f);

  /* A rate-limited add of a key that is already waiting longer moves it earlier (not later). */
  fx_open(&f, 0, 0);
  CHECK_EQ_INT(queue_add_after(&f.q, "k", 60000), 0);
  CHECK_EQ_INT(rl_delay(&f, "k"), 5);
  CHECK_EQ_INT(queue_add_after(&f.q, "k", 60000), 0);
  CHECK_EQ_INT(f.fc.deadline_ms, 5);
  fx_close(&f);
}

static void test_bucket_via_queue(void) {
  fx_t f;
  fx_open(&f, 10, 100); /* the defaults */
  f.auto_done = 1;
  char key[32];
  for (int i = 0; i < 200; i++) {
    snprintf(key, sizeof key, "ns/k%03d", i);
    CHECK_EQ_INT(queue_add_rate_limited(&f.q, key), 0);
  }
  /* The first 100 only wait their 5 ms backoff; the rest are spaced 100 ms apart. */
  queue_fake_clock_advance(&f.fc, &f.q, 4);
  queue_run_pending(&f.q);
  CHECK_EQ_INT(f.processed, 0);
  queue_fake_clock_advance(&f.fc, &f.q, 1);
  queue_run_pending(&f.q);
  CHECK_EQ_INT(f.processed, 100);
  CHECK_EQ_INT(f.fc.deadline_ms, 100);
  queue_fake_clock_advance(&f.fc, &f.q, 94); /* t=99 */
  queue_run_pending(&f.q);
  CHECK_EQ_INT(f.processed, 100);
  queue_fake_clock_advance(&f.fc, &f.q, 1); /* t=100 */
  queue_run_pending(&f.q);
  CHECK_EQ_INT(f.processed, 101);
  for (unsigned s = 1; s <= 9; s++) { /* then 10 per second */
    queue_fake_clock_advance(&f.fc, &f.q, 1000);
    queue_run_pending(&f.q);
    CHECK_EQ_INT(f.processed, 101 + s * 10);
  }
  queue_fake_clock_advance(&f.fc, &f.q, 900); /* t=10000: the last one, 99 * 100 ms after the burst */
  queue_run_pending(&f.q);
  CHECK_EQ_INT(f.processed, 200);
  CHECK(!f.fc.armed);
  /* Combined as max: a key with many failures waits its backoff even when tokens are free. */
  queue_fake_clock_advance(&f.fc, &f.q, 100000); /* bucket full again */
  for (int i = 0; i < 10; i++) {
    CHECK_EQ_INT(rl_delay(&f, "ns/hot"), 5u << i);
    rl_fire(&f);
  }
  /* ...and a fresh key waits for the bucket once it is empty (those 5 s refilled it). */
  for (int i = 0; i < 100; i++) {
    snprintf(key, sizeof key, "ns/drain%02d", i);
    queue_add_rate_limited(&f.q, key);
  }
  CHECK_EQ_INT(f.fc.deadline_ms - f.fc.now_ms, 5);
  queue_fake_clock_advance(&f.fc, &f.q, 5);
  queue_run_pending(&f.q);
  CHECK_EQ_INT(rl_delay(&f, "ns/fresh"), 95); /* one token per 100 ms, 5 ms of it gone */
  CHECK_EQ_INT(queue_num_requeues(&f.q, "ns/fresh"), 1);
  fx_close(&f);
}

int main(void) {
  test_backoff_direct();
  test_bucket_direct();
  test_backoff_via_queue();
  test_bucket_via_queue();
  return t_done();
}
