/* queue/: core workqueue semantics, driven by a fake clock and queue_run_pending (no sleeping). */
#include <uv.h>

#include "base/buf.h"
#include "queue/queue.h"
#include "t.h"

typedef struct fx_s {
  uv_loop_t loop;
  queue_fake_clock_t fc;
  queue_t q;
  buf_t log;       /* keys handed out, comma-separated */
  int auto_done;   /* finish each key inside the process callback */
  int readd_self;  /* with auto_done: add the key again after finishing it */
  int close_in_cb; /* close the queue from inside the process callback */
  int drained;
  int closed;
  char out[4096];
} fx_t;

static void on_process(queue_t *q, const char *key, void *data) {
  fx_t *f = data;
  buf_printf(&f->log, "%s%s", f->log.len ? "," : "", key);
  if (f->close_in_cb) {
    queue_close(q, NULL);
    return;
  }
  if (f->auto_done) {
    char copy[256];
    snprintf(copy, sizeof copy, "%s", key); /* key dies with done */
    CHECK_EQ_INT(queue_done(q, key), 0);
    if (f->readd_self) CHECK_EQ_INT(queue_add(q, copy), 0);
  }
}

static void on_drained(queue_t *q, void *data) { ((fx_t *)data)->drained++; }

static void on_close(queue_t *q) { ((fx_t *)q->data)->closed++; }

static void fx_open_parked(fx_t *f, unsigned max_in_flight, unsigned max_parked) {
  memset(f, 0, sizeof *f);
  CHECK_EQ_INT(uv_loop_init(&f->loop), 0);
  queue_fake_clock_init(&f->fc, 1000);
  queue_options_t o;
  queue_options_init(&o);
  CHECK_EQ_INT(o.max_parked, 0); /* parking is off unless asked for */
  o.max_in_flight = max_in_flight;
  o.max_parked = max_parked;
  o.clock = &f->fc.clock;
  CHECK_EQ_INT(queue_init(&f->loop, &f->q, &o, on_process, f), 0);
}

static void fx_open(fx_t *f, unsigned max_in_flight) { fx_open_parked(f, max_in_flight, 0); }

/* Returns what was handed out since the last call and forgets it. */
static const char *fx_take(fx_t *f) {
  snprintf(f->out, sizeof f->out, "%s", f->log.len ? f->log.data : "");
  buf_reset(&f->log);
  return f->out;
}

static void fx_close(fx_t *f) {
  queue_close(&f->q, on_close);
  CHECK_EQ_INT(f->closed, 0); /* close callbacks come from the loop */
  uv_run(&f->loop, UV_RUN_DEFAULT);
  CHECK_EQ_INT(f->closed, 1);
  CHECK_EQ_INT(uv_loop_close(&f->loop), 0);
  buf_free(&f->log);
}

static queue_metrics_t fx_metrics(fx_t *f) {
  queue_metrics_t m;
  queue_metrics_get(&f->q, &m);
  return m;
}

static void test_dedup_and_fifo(void) {
  fx_t f;
  fx_open(&f, 10);
  CHECK_EQ_INT(queue_add(&f.q, "ns/c"), 0);
  CHECK_EQ_INT(queue_add(&f.q, "ns/a"), 0);
  CHECK_EQ_INT(queue_add(&f.q, "ns/c"), 0);
  CHECK_EQ_INT(queue_add(&f.q, "ns/b"), 0);
  CHECK_EQ_INT(queue_add(&f.q, "ns/a"), 0);
  CHECK_EQ_STR(fx_take(&f), ""); /* never dispatched inside queue_add */
  queue_metrics_t m = fx_metrics(&f);
  CHECK_EQ_INT(m.depth, 3);
  CHECK_EQ_INT(m.adds, 3);
  CHECK_EQ_INT(m.dedups, 2);
  CHECK_EQ_INT(m.keys, 3);
  CHECK_EQ_INT(queue_run_pending(&f.q), 3);
  CHECK_EQ_STR(fx_take(&f), "ns/c,ns/a,ns/b");
  CHECK_EQ_INT(queue_run_pending(&f.q), 0);
  CHECK_EQ_INT(queue_done(&f.q, "ns/a"), 0);
  CHECK_EQ_INT(queue_done(&f.q, "ns/b"), 0);
  CHECK_EQ_INT(queue_done(&f.q, "ns/c"), 0);
  CHECK_EQ_INT(queue_run_pending(&f.q), 0);
  CHECK_EQ_STR(fx_take(&f), "");
  m = fx_metrics(&f);
  CHECK_EQ_INT(m.keys, 0); /* nothing remembered once done without failures */
  CHECK_EQ_INT(m.in_flight, 0);
  fx_close(&f);
}

static void test_not_concurrent_and_readd(void) {
  fx_t f;
  fx_open(&f, 10);
  queue_add(&f.q, "a");
  CHECK_EQ_INT(queue_run_pending(&f.q), 1);
  CHECK_EQ_STR(fx_take(&f), "a");
  /* Re-added (several times) while processing: not handed out a second time concurrently. */
  CHECK_EQ_INT(queue_add(&f.q, "a"), 0);
  CHECK_EQ_INT(queue_add(&f.q, "a"), 0);
  queue_add(&f.q, "b");
  CHECK_EQ_INT(queue_run_pending(&f.q), 1);
  CHECK_EQ_STR(fx_take(&f), "b");
  queue_metrics_t m = fx_metrics(&f);
  CHECK_EQ_INT(m.depth, 0); /* a is dirty but not on the ready list */
  CHECK_EQ_INT(m.in_flight, 2);
  CHECK_EQ_INT(m.adds, 3);
  CHECK_EQ_INT(m.dedups, 1);
  CHECK_EQ_INT(queue_run_pending(&f.q), 0);
  /* Done: a is processed exactly once more. */
  CHECK_EQ_INT(queue_done(&f.q, "a"), 0);
  CHECK_EQ_INT(fx_metrics(&f).depth, 1);
  CHECK_EQ_STR(fx_take(&f), ""); /* not from inside done either */
  CHECK_EQ_INT(queue_run_pending(&f.q), 1);
  CHECK_EQ_STR(fx_take(&f), "a");
  CHECK_EQ_INT(queue_done(&f.q, "a"), 0);
  CHECK_EQ_INT(queue_run_pending(&f.q), 0);
  CHECK_EQ_STR(fx_take(&f), "");
  CHECK_EQ_INT(queue_done(&f.q, "a"), UV_ENOENT); /* already done */
  CHECK_EQ_INT(queue_done(&f.q, "b"), 0);
  CHECK_EQ_INT(fx_metrics(&f).keys, 0);
  fx_close(&f);
}

static void test_inflight_limit(void) {
  fx_t f;
  fx_open(&f, 2);
  const char *keys[] = {"a", "b", "c", "d", "e"};
  for (int i = 0; i < 5; i++) queue_add(&f.q, keys[i]);
  CHECK_EQ_INT(queue_run_pending(&f.q), 2);
  CHECK_EQ_STR(fx_take(&f), "a,b");
  CHECK_EQ_INT(queue_run_pending(&f.q), 0);
  CHECK_EQ_INT(fx_metrics(&f).in_flight, 2);
  CHECK_EQ_INT(fx_metrics(&f).depth, 3);
  queue_done(&f.q, "b");
  CHECK_EQ_INT(queue_run_pending(&f.q), 1);
  CHECK_EQ_STR(fx_take(&f), "c");
  queue_done(&f.q, "a");
  queue_done(&f.q, "c");
  CHECK_EQ_INT(queue_run_pending(&f.q), 2);
  CHECK_EQ_STR(fx_take(&f), "d,e");
  queue_done(&f.q, "d");
  queue_done(&f.q, "e");
  fx_close(&f);
}

/* A parked key gives its slot away and stays processing; unpark takes a slot back even over the limit. */
static void test_park(void) {
  fx_t f;
  fx_open_parked(&f, 2, 2);
  const char *keys[] = {"a", "b", "c", "d", "e", "f"};
  for (int i = 0; i < 6; i++) queue_add(&f.q, keys[i]);
  CHECK_EQ_INT(queue_run_pending(&f.q), 2);
  CHECK_EQ_STR(fx_take(&f), "a,b");
  CHECK_EQ_INT(queue_park(&f.q, "c"), UV_ENOENT); /* not processing */
  CHECK_EQ_INT(queue_park(&f.q, "a"), 0);
  CHECK_EQ_INT(queue_park(&f.q, "a"), UV_EALREADY);
  CHECK_EQ_INT(fx_metrics(&f).parked, 1);
  CHECK_EQ_INT(queue_run_pending(&f.q), 1);
  CHECK_EQ_STR(fx_take(&f), "c");
  CHECK_EQ_INT(fx_metrics(&f).in_flight, 3);
  /* Parked, it is still processing: an add marks it dirty, it is not handed out twice. */
  CHECK_EQ_INT(queue_add(&f.q, "a"), 0);
  CHECK_EQ_INT(queue_park(&f.q, "b"), 0);
  CHECK_EQ_INT(queue_park(&f.q, "c"), UV_EBUSY); /* max_parked reached: c keeps its slot */
  CHECK_EQ_INT(queue_run_pending(&f.q), 1);
  CHECK_EQ_STR(fx_take(&f), "d");
  CHECK_EQ_INT(fx_metrics(&f).in_flight, 4);
  CHECK_EQ_INT(fx_metrics(&f).parked, 2);
  /* Unparked over the limit: 3 hold slots of 2, nothing is handed out until two finish. */
  CHECK_EQ_INT(queue_unpark(&f.q, "b"), 0);
  CHECK_EQ_INT(queue_unpark(&f.q, "b"), UV_ENOENT);
  CHECK_EQ_INT(queue_run_pending(&f.q), 0);
  CHECK_EQ_INT(queue_done(&f.q, "c"), 0);
  CHECK_EQ_INT(queue_run_pending(&f.q), 0);
  CHECK_EQ_INT(queue_done(&f.q, "d"), 0);
  CHECK_EQ_INT(queue_run_pending(&f.q), 1);
  CHECK_EQ_STR(fx_take(&f), "e");
  /* Done while parked: no unpark needed; its re-add is handed out in its turn. */
  CHECK_EQ_INT(queue_done(&f.q, "a"), 0);
  CHECK_EQ_INT(fx_metrics(&f).parked, 0);
  CHECK_EQ_INT(queue_run_pending(&f.q), 0); /* b and e hold the 2 slots */
  CHECK_EQ_INT(queue_done(&f.q, "b"), 0);
  CHECK_EQ_INT(queue_run_pending(&f.q), 1);
  CHECK_EQ_STR(fx_take(&f), "f");
  CHECK_EQ_INT(queue_done(&f.q, "e"), 0);
  CHECK_EQ_INT(queue_run_pending(&f.q), 1);
  CHECK_EQ_STR(fx_take(&f), "a");
  CHECK_EQ_INT(queue_done(&f.q, "a"), 0);
  CHECK_EQ_INT(queue_done(&f.q, "f"), 0);
  CHECK_EQ_INT(fx_metrics(&f).in_flight, 0);
  CHECK_EQ_INT(fx_metrics(&f).keys, 0);
  fx_close(&f);
}

static void test_add_after(void) {
  fx_t f;
  fx_open(&f, 100);
  f.auto_done = 1;
  /* Ordered by deadline; equal deadlines keep insertion order. */
  CHECK_EQ_INT(queue_add_after(&f.q, "x", 300), 0);
  CHECK_EQ_INT(queue_add_after(&f.q, "y", 100), 0);
  CHECK_EQ_INT(queue_add_after(&f.q, "z", 200), 0);
  CHECK_EQ_INT(queue_add_after(&f.q, "w", 200), 0);
  CHECK(f.fc.armed);
  CHECK_EQ_INT(f.fc.deadline_ms, 1100); /* one timer, at the earliest deadline */
  CHECK_EQ_INT(fx_metrics(&f).waiting, 4);
  CHECK_EQ_INT(fx_metrics(&f).depth, 0);
  queue_fake_clock_advance(&f.fc, &f.q, 99);
  CHECK_EQ_INT(queue_run_pending(&f.q), 0);
  queue_fake_clock_advance(&f.fc, &f.q, 1); /* t=1100: the timer fires */
  CHECK_EQ_INT(f.fc.deadline_ms, 1200);
  CHECK_EQ_INT(fx_metrics(&f).depth, 1);
  CHECK_EQ_INT(queue_run_pending(&f.q), 1);
  CHECK_EQ_STR(fx_take(&f), "y");
  queue_fake_clock_advance(&f.fc, &f.q, 100);
  queue_run_pending(&f.q);
  CHECK_EQ_STR(fx_take(&f), "z,w");
  queue_fake_clock_advance(&f.fc, &f.q, 100);
  queue_run_pending(&f.q);
  CHECK_EQ_STR(fx_take(&f), "x");
  CHECK(!f.fc.armed);

  /* Earlier wins: the deadline moves up; a later one is ignored. t=1300 now. */
  CHECK_EQ_INT(queue_add_after(&f.q, "k", 500), 0);
  CHECK_EQ_INT(f.fc.deadline_ms, 1800);
  CHECK_EQ_INT(queue_add_after(&f.q, "k", 100), 0);
  CHECK_EQ_INT(f.fc.deadline_ms, 1400);
  CHECK_EQ_INT(queue_add_after(&f.q, "k", 1000), 0);
  CHECK_EQ_INT(f.fc.deadline_ms, 1400);
  CHECK_EQ_INT(fx_metrics(&f).waiting, 1);
  queue_fake_clock_advance(&f.fc, &f.q, 100);
  queue_run_pending(&f.q);
  CHECK_EQ_STR(fx_take(&f), "k");
  queue_fake_clock_advance(&f.fc, &f.q, 2000);
  queue_run_pending(&f.q);
  CHECK_EQ_STR(fx_take(&f), ""); /* the ignored later deadlines left nothing behind */
  CHECK_EQ_INT(fx_metrics(&f).keys, 0);

  /* Delay 0 is a plain add; a waiting key that is also queued now is processed once. */
  queue_add_after(&f.q, "m", 50);
  queue_add_after(&f.q, "m", 0);
  CHECK_EQ_INT(fx_metrics(&f).depth, 1);
  CHECK_EQ_INT(fx_metrics(&f).waiting, 1);
  f.auto_done = 0;
  queue_run_pending(&f.q);
  CHECK_EQ_STR(fx_take(&f), "m");
  /* While m is processing its timer fires: as client-go, that marks it dirty for one more pass. */
  queue_fake_clock_advance(&f.fc, &f.q, 50);
  CHECK_EQ_INT(queue_run_pending(&f.q), 0);
  queue_done(&f.q, "m");
  queue_run_pending(&f.q);
  CHECK_EQ_STR(fx_take(&f), "m");
  queue_done(&f.q, "m");
  /* A timer deadline reached by run_pending alone (fake timer not advanced) also promotes. */
  queue_add_after(&f.q, "n", 10);
  f.fc.now_ms += 10;
  CHECK_EQ_INT(queue_run_pending(&f.q), 1);
  CHECK_EQ_STR(fx_take(&f), "n");
  queue_done(&f.q, "n");
  fx_close(&f);
}

static void test_shutdown_drains(void) {
  fx_t f;
  fx_open(&f, 3);
  const char *keys[] = {"a", "b", "c", "d"};
  for (int i = 0; i < 4; i++) queue_add(&f.q, keys[i]);
  queue_add_after(&f.q, "later", 100);
  CHECK_EQ_INT(queue_run_pending(&f.q), 3);
  CHECK_EQ_STR(fx_take(&f), "a,b,c");
  queue_add(&f.q, "a"); /* dirty while processing */
  CHECK(f.fc.armed);
  CHECK_EQ_INT(queue_shutdown(&f.q, on_drained, &f), 0);
  CHECK(!f.fc.armed); /* waiting keys are no longer promoted */
  CHECK_EQ_INT(queue_shutdown(&f.q, on_drained, &f), UV_EALREADY);
  CHECK_EQ_INT(queue_add(&f.q, "e"), UV_ESHUTDOWN);
  CHECK_EQ_INT(queue_add_after(&f.q, "e", 5), UV_ESHUTDOWN);
  CHECK_EQ_INT(queue_add_rate_limited(&f.q, "e"), UV_ESHUTDOWN);
  CHECK_EQ_INT(queue_run_pending(&f.q), 0);
  CHECK_EQ_INT(f.drained, 0);
  queue_done(&f.q, "a");
  queue_done(&f.q, "b");
  CHECK_EQ_INT(queue_run_pending(&f.q), 0); /* neither d nor the dirty a are handed out */
  CHECK_EQ_INT(f.drained, 0);
  queue_done(&f.q, "c");
  CHECK_EQ_INT(f.drained, 0); /* not from inside done */
  queue_fake_clock_advance(&f.fc, &f.q, 1000);
  CHECK_EQ_INT(queue_run_pending(&f.q), 0);
  CHECK_EQ_INT(f.drained, 1);
  CHECK_EQ_INT(queue_run_pending(&f.q), 0);
  CHECK_EQ_INT(f.drained, 1); /* once */
  CHECK_EQ_STR(fx_take(&f), "");
  queue_metrics_t m = fx_metrics(&f);
  CHECK_EQ_INT(m.in_flight, 0);
  CHECK_EQ_INT(m.depth, 2);   /* d and a stay queued; close frees them */
  CHECK_EQ_INT(m.waiting, 1); /* "later" too */
  fx_close(&f);

  /* Nothing in flight: drained still comes from the dispatch step, not from shutdown. */
  fx_open(&f, 1);
  CHECK_EQ_INT(queue_shutdown(&f.q, on_drained, &f), 0);
  CHECK_EQ_INT(f.drained, 0);
  queue_run_pending(&f.q);
  CHECK_EQ_INT(f.drained, 1);
  fx_close(&f);
}

static void test_metrics(void) {
  fx_t f;
  fx_open(&f, 2);
  size_t ov = queue_key_overhead();
  queue_add(&f.q, "a");                     /* t=1000 */
  queue_fake_clock_advance(&f.fc, &f.q, 10);
  queue_add(&f.q, "bb");                    /* t=1010 */
  queue_add(&f.q, "ccc");                   /* t=1010 */
  queue_metrics_t m = fx_metrics(&f);
  CHECK_EQ_INT(m.keys, 3);
  CHECK_EQ_INT(m.memory_bytes, 3 * ov + 2 + 3 + 4 + 16 * sizeof(void *)); /* items + 16 buckets */
  queue_fake_clock_advance(&f.fc, &f.q, 20); /* t=1030 */
  CHECK_EQ_INT(queue_run_pending(&f.q), 2);  /* a waited 30, bb 20 */
  m = fx_metrics(&f);
  CHECK_EQ_INT(m.queue_latency_sum_ms, 50);
  CHECK_EQ_INT(m.queue_latency_count, 2);
  CHECK_EQ_INT(m.in_flight, 2);
  CHECK_EQ_INT(m.depth, 1);
  CHECK_EQ_INT(m.longest_running_ms, 0);
  queue_fake_clock_advance(&f.fc, &f.q, 15); /* t=1045 */
  m = fx_metrics(&f);
  CHECK_EQ_INT(m.longest_running_ms, 15);
  CHECK_EQ_INT(m.unfinished_work_ms, 30);
  queue_done(&f.q, "a");                      /* worked 15 */
  queue_run_pending(&f.q);                    /* ccc waited 35 */
  queue_fake_clock_advance(&f.fc, &f.q, 5);   /* t=1050 */
  m = fx_metrics(&f);
  CHECK_EQ_INT(m.work_duration_sum_ms, 15);
  CHECK_EQ_INT(m.work_duration_count, 1);
  CHECK_EQ_INT(m.queue_latency_sum_ms, 85);
  CHECK_EQ_INT(m.queue_latency_count, 3);
  CHECK_EQ_INT(m.longest_running_ms, 20);     /* bb, started at 1030 */
  CHECK_EQ_INT(m.unfinished_work_ms, 25);     /* bb 20 + ccc 5 */
  queue_done(&f.q, "bb");                     /* worked 20 */
  queue_done(&f.q, "ccc");                    /* worked 5 */
  m = fx_metrics(&f);
  CHECK_EQ_INT(m.work_duration_sum_ms, 40);
  CHECK_EQ_INT(m.work_duration_count, 3);
  CHECK_EQ_INT(m.longest_running_ms, 0);
  CHECK_EQ_INT(m.unfinished_work_ms, 0);
  CHECK_EQ_INT(m.adds, 3);
  CHECK_EQ_INT(m.retries, 0);
  /* Retries count rate-limited adds; the key stays tracked for its failure count. */
  queue_add_rate_limited(&f.q, "a");
  queue_add_rate_limited(&f.q, "a");
  m = fx_metrics(&f);
  CHECK_EQ_INT(m.retries, 2);
  CHECK_EQ_INT(m.waiting, 1);
  CHECK_EQ_INT(m.keys, 1);
  CHECK_EQ_INT(m.memory_bytes, ov + 2 + 16 * sizeof(void *) + 16 * sizeof(void *)); /* + heap */
  queue_fake_clock_advance(&f.fc, &f.q, 5);
  queue_run_pending(&f.q);
  queue_done(&f.q, "a");
  CHECK_EQ_INT(fx_metrics(&f).keys, 1); /* failures remembered */
  queue_forget(&f.q, "a");
  CHECK_EQ_INT(fx_metrics(&f).keys, 0);
  CHECK_EQ_INT(fx_metrics(&f).adds, 4);
  fx_close(&f);
}

static void test_reentrancy(void) {
  fx_t f;
  /* A consumer that finishes and re-adds synchronously gets one pass per dispatch step. */
  fx_open(&f, 4);
  f.auto_done = f.readd_self = 1;
  queue_add(&f.q, "loop");
  CHECK_EQ_INT(queue_run_pending(&f.q), 1);
  CHECK_EQ_INT(queue_run_pending(&f.q), 1);
  CHECK_EQ_STR(fx_take(&f), "loop,loop");
  f.readd_self = 0;
  CHECK_EQ_INT(queue_run_pending(&f.q), 1);
  CHECK_EQ_INT(queue_run_pending(&f.q), 0);
  fx_close(&f);

  /* Closing from inside the process callback stops the step; everything is freed later. */
  fx_open(&f, 4);
  f.close_in_cb = 1;
  queue_add(&f.q, "a");
  queue_add(&f.q, "b");
  queue_add_after(&f.q, "c", 10);
  CHECK_EQ_INT(queue_run_pending(&f.q), 1);
  CHECK_EQ_STR(fx_take(&f), "a");
  CHECK_EQ_INT(queue_add(&f.q, "d"), UV_ESHUTDOWN);
  CHECK_EQ_INT(queue_done(&f.q, "a"), UV_ECANCELED);
  CHECK_EQ_INT(queue_run_pending(&f.q), 0);
  CHECK(!f.fc.armed);
  uv_run(&f.loop, UV_RUN_DEFAULT);
  CHECK_EQ_INT(uv_loop_close(&f.loop), 0);
  buf_free(&f.log);
}

static void close_in_drained(queue_t *q, void *data) {
  ((fx_t *)data)->drained++;
  queue_close(q, on_close);
}

static void test_close_in_drained(void) {
  fx_t f;
  fx_open(&f, 1);
  queue_add(&f.q, "a");
  queue_run_pending(&f.q);
  queue_shutdown(&f.q, close_in_drained, &f);
  queue_done(&f.q, "a");
  queue_run_pending(&f.q);
  CHECK_EQ_INT(f.drained, 1);
  uv_run(&f.loop, UV_RUN_DEFAULT);
  CHECK_EQ_INT(f.closed, 1);
  CHECK_EQ_INT(uv_loop_close(&f.loop), 0);
  buf_free(&f.log);
}

static void test_errors(void) {
  fx_t f;
  fx_open(&f, 1);
  char big[QUEUE_KEY_MAX + 2];
  memset(big, 'k', sizeof big - 1);
  big[sizeof big - 1] = 0;
  CHECK_EQ_INT(queue_add(&f.q, NULL), UV_EINVAL);
  CHECK_EQ_INT(queue_add(&f.q, ""), UV_EINVAL);
  CHECK_EQ_INT(queue_add(&f.q, big), UV_EINVAL);
  big[QUEUE_KEY_MAX] = 0; /* exactly the limit is fine */
  CHECK_EQ_INT(queue_add(&f.q, big), 0);
  CHECK_EQ_INT(queue_done(&f.q, big), UV_ENOENT); /* queued, not processing */
  CHECK_EQ_INT(queue_done(&f.q, "nope"), UV_ENOENT);
  CHECK_EQ_INT(queue_num_requeues(&f.q, "nope"), 0);
  queue_forget(&f.q, "nope");
  queue_forget(&f.q, NULL);
  CHECK_EQ_INT(fx_metrics(&f).keys, 1);
  fx_close(&f);

  uv_loop_t loop;
  queue_t q;
  queue_options_t o;
  uv_loop_init(&loop);
  queue_options_init(&o);
  o.max_in_flight = 0;
  CHECK_EQ_INT(queue_init(&loop, &q, &o, on_process, NULL), UV_EINVAL);
  CHECK_EQ_INT(queue_init(&loop, &q, NULL, NULL, NULL), UV_EINVAL);
  CHECK_EQ_INT(uv_loop_close(&loop), 0);
}

static void test_defaults(void) {
  queue_options_t o;
  queue_options_init(&o);
  CHECK_EQ_INT(o.max_in_flight, 4);
  CHECK_EQ_INT(o.backoff.base_ms, 5);
  CHECK_EQ_INT(o.backoff.max_ms, 1000000);
  CHECK(o.qps == 10);
  CHECK_EQ_INT(o.burst, 100);
  CHECK(o.clock == NULL);
}

int main(void) {
  test_defaults();
  test_dedup_and_fifo();
  test_not_concurrent_and_readd();
  test_inflight_limit();
  test_park();
  test_add_after();
  test_shutdown_drains();
  test_metrics();
  test_reentrancy();
  test_close_in_drained();
  test_errors();
  return t_done();
}
