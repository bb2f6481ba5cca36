/* queue/: on a real libuv loop with the loop's clock: asynchronous consumers, the in-flight
 * limit, a rate-limited retry, a delayed key, shutdown/drain/close, and no spinning when idle.
 * Every loop ends with uv_loop_close() == 0. */
#include <stdlib.h>
#include <uv.h>

#include "queue/queue.h"
#include "t.h"

#define NKEYS 8

typedef struct fx_s {
  uv_loop_t loop;
  queue_t q;
  uv_check_t check;
  uint64_t iterations;
  uint64_t start_ms;
  const char *keys[NKEYS];
  int busy[NKEYS];
  int runs[NKEYS];
  unsigned concurrent, max_concurrent, processed, expected;
  uint64_t late_at;
  int overlap, drained, closed;
} fx_t;

typedef struct work_s {
  uv_timer_t timer;
  fx_t *f;
  int idx;
} work_t;

static fx_t fx;

static int key_index(fx_t *f, const char *key) {
  for (int i = 0; i < NKEYS; i++)
    if (f->keys[i] && strcmp(f->keys[i], key) == 0) return i;
  return -1;
}

static void on_check(uv_check_t *h) { ((fx_t *)h->data)->iterations++; }

static void on_closed(queue_t *q) { ((fx_t *)q->data)->closed++; }

static void on_drained(queue_t *q, void *data) {
  fx_t *f = data;
  f->drained++;
  CHECK_EQ_INT(f->concurrent, 0);
  queue_close(q, on_closed);
  uv_close((uv_handle_t *)&f->check, NULL);
}

static void work_free(uv_handle_t *h) { free(h->data); }

static void on_work_done(uv_timer_t *t) {
  work_t *w = t->data;
  fx_t *f = w->f;
  const char *key = f->keys[w->idx];
  f->busy[w->idx] = 0;
  f->concurrent--;
  CHECK_EQ_INT(queue_done(&f->q, key), 0);
  if (strcmp(key, "ns/flaky") == 0 && f->runs[w->idx] == 1) {
    CHECK_EQ_INT(queue_add_rate_limited(&f->q, key), 0); /* fails once, retried after 5 ms */
  } else {
    queue_forget(&f->q, key);
  }
  if (++f->processed == f->expected) CHECK_EQ_INT(queue_shutdown(&f->q, on_drained, f), 0);
  uv_close((uv_handle_t *)t, work_free);
}

static void on_process(queue_t *q, const char *key, void *data) {
  fx_t *f = data;
  int i = key_index(f, key);
  CHECK(i >= 0);
  if (i < 0) return;
  if (f->busy[i]) f->overlap++;
  f->busy[i] = 1;
  f->runs[i]++;
  if (++f->concurrent > f->max_concurrent) f->max_concurrent = f->concurrent;
  if (strcmp(key, "ns/late") == 0) f->late_at = uv_now(&f->loop);
  work_t *w = malloc(sizeof *w);
  CHECK(w != NULL);
  w->f = f;
  w->idx = i;
  uv_timer_init(&f->loop, &w->timer);
  w->timer.data = w;
  uv_timer_start(&w->timer, on_work_done, 1, 0); /* finish asynchronously */
}

static void test_real_loop(void) {
  fx_t *f = &fx;
  memset(f, 0, sizeof *f);
  const char *keys[NKEYS] = {"ns/a", "ns/b", "ns/c", "ns/d", "ns/e", "ns/flaky", "ns/late", NULL};
  memcpy(f->keys, keys, sizeof keys);
  f->expected = 8; /* a..e, flaky twice, late */
  CHECK_EQ_INT(uv_loop_init(&f->loop), 0);
  uv_check_init(&f->loop, &f->check);
  f->check.data = f;
  uv_check_start(&f->check, on_check);
  uv_unref((uv_handle_t *)&f->check);

  queue_options_t o;
  queue_options_init(&o);
  o.max_in_flight = 2;
  o.name = "test-loop";
  CHECK_EQ_INT(queue_init(&f->loop, &f->q, &o, on_process, f), 0);
  f->start_ms = uv_now(&f->loop);
  for (int i = 0; i < 6; i++) CHECK_EQ_INT(queue_add(&f->q, keys[i]), 0);
  CHECK_EQ_INT(queue_add(&f->q, "ns/a"), 0); /* dedup */
  CHECK_EQ_INT(queue_add_after(&f->q, "ns/late", 30), 0);
  CHECK_EQ_INT(f->processed + f->concurrent, 0); /* nothing runs inside queue_add */

  CHECK_EQ_INT(uv_run(&f->loop, UV_RUN_DEFAULT), 0);

  CHECK_EQ_INT(f->processed, 8);
  CHECK_EQ_INT(f->runs[0], 1);
  CHECK_EQ_INT(f->runs[5], 2);
  CHECK_EQ_INT(f->runs[6], 1);
  CHECK_EQ_INT(f->overlap, 0);
  CHECK_EQ_INT(f->max_concurrent, 2);
  CHECK(f->late_at >= f->start_ms + 30);
  CHECK_EQ_INT(f->drained, 1);
  CHECK_EQ_INT(f->closed, 1);
  /* About ten short timers and one 30 ms wait: a dispatcher that polled without blocking
   * while idle would turn that wait into thousands of iterations. */
  CHECK(f->iterations < 200);
  CHECK_EQ_INT(uv_loop_close(&f->loop), 0);
}

/* ---- shutdown with a key in flight and a far-away delayed key ---- */

typedef struct sd_s {
  uv_loop_t loop;
  queue_t q;
  uv_timer_t work, stop;
  int drained, closed, dispatched;
} sd_t;

static void sd_closed(queue_t *q) { ((sd_t *)q->data)->closed++; }

static void sd_drained(queue_t *q, void *data) {
  ((sd_t *)data)->drained++;
  queue_close(q, sd_closed);
}

static void sd_work_done(uv_timer_t *t) {
  sd_t *s = t->data;
  CHECK_EQ_INT(s->drained, 0); /* still in flight until done */
  CHECK_EQ_INT(queue_done(&s->q, "ns/x"), 0);
  uv_close((uv_handle_t *)t, NULL);
}

static void sd_stop(uv_timer_t *t) {
  sd_t *s = t->data;
  CHECK_EQ_INT(queue_shutdown(&s->q, sd_drained, s), 0);
  uv_close((uv_handle_t *)t, NULL);
}

static void sd_process(queue_t *q, const char *key, void *data) {
  sd_t *s = data;
  s->dispatched++;
  CHECK_EQ_STR(key, "ns/x");
  uv_timer_start(&s->work, sd_work_done, 20, 0);
}

static void test_shutdown_real_loop(void) {
  sd_t s;
  memset(&s, 0, sizeof s);
  CHECK_EQ_INT(uv_loop_init(&s.loop), 0);
  queue_options_t o;
  queue_options_init(&o);
  o.max_in_flight = 1;
  CHECK_EQ_INT(queue_init(&s.loop, &s.q, &o, sd_process, &s), 0);
  uv_timer_init(&s.loop, &s.work);
  uv_timer_init(&s.loop, &s.stop);
  s.work.data = s.stop.data = &s;
  uv_timer_start(&s.stop, sd_stop, 5, 0);
  queue_add(&s.q, "ns/x");
  queue_add(&s.q, "ns/y");                  /* queued behind x: never dispatched */
  queue_add_after(&s.q, "ns/far", 600000);  /* ten minutes: shutdown must not wait for it */
  uint64_t t0 = uv_now(&s.loop);
  CHECK_EQ_INT(uv_run(&s.loop, UV_RUN_DEFAULT), 0);
  CHECK_EQ_INT(s.dispatched, 1);
  CHECK_EQ_INT(s.drained, 1);
  CHECK_EQ_INT(s.closed, 1);
  CHECK(uv_now(&s.loop) - t0 < 60000);
  CHECK_EQ_INT(uv_loop_close(&s.loop), 0);
}

int main(void) {
  test_real_loop();
  test_shutdown_real_loop();
  return t_done();
}
