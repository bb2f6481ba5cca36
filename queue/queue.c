#include "queue/queue.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
  QUEUE__F_SHUTDOWN = 1u, /* no new adds, no new dispatches */
  QUEUE__F_DRAINED = 2u,  /* drained callback delivered */
  QUEUE__F_CLOSING = 4u,  /* queue_close called */
  QUEUE__F_ARMED = 8u,    /* clock timer requested for armed_deadline_ms */
};

/* ---- metrics: client-go's workqueue names, as controller-runtime registers them ---- */

static metrics_family_t queue__f_depth = {.name = "workqueue_depth", .help = "Current depth of workqueue",
                                          .type = METRICS_GAUGE, .labels = {"name", "controller"}};
static metrics_family_t queue__f_adds = {.name = "workqueue_adds_total", .help = "Total number of adds handled by workqueue",
                                         .type = METRICS_COUNTER, .labels = {"name", "controller"}};
static metrics_family_t queue__f_retries = {.name = "workqueue_retries_total",
                                            .help = "Total number of retries handled by workqueue",
                                            .type = METRICS_COUNTER, .labels = {"name", "controller"}};
static metrics_family_t queue__f_latency = {
    .name = "workqueue_queue_duration_seconds", .help = "How long in seconds an item stays in workqueue before being requested",
    .type = METRICS_HISTOGRAM, .labels = {"name", "controller"}, .buckets = metrics_buckets_workqueue,
    .nbuckets = METRICS_BUCKETS_WORKQUEUE_N};
static metrics_family_t queue__f_work = {
    .name = "workqueue_work_duration_seconds", .help = "How long in seconds processing an item from workqueue takes.",
    .type = METRICS_HISTOGRAM, .labels = {"name", "controller"}, .buckets = metrics_buckets_workqueue,
    .nbuckets = METRICS_BUCKETS_WORKQUEUE_N};
static metrics_family_t queue__f_unfinished = {
    .name = "workqueue_unfinished_work_seconds",
    .help = "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. "
            "Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at "
            "which this increases.",
    .type = METRICS_GAUGE, .labels = {"name", "controller"}};
static metrics_family_t queue__f_longest = {
    .name = "workqueue_longest_running_processor_seconds",
    .help = "How many seconds has the longest running processor for workqueue been running.", .type = METRICS_GAUGE,
    .labels = {"name", "controller"}};

static void queue__collect(void *data) {
  queue_t *q = data;
  queue_metrics_t m;
  queue_metrics_get(q, &m);
  metrics_set(q->prom.depth, (double)m.depth);
  metrics_set(q->prom.unfinished, (double)m.unfinished_work_ms / 1000);
  metrics_set(q->prom.longest, (double)m.longest_running_ms / 1000);
}

static void queue__prom_init(queue_t *q) {
  q->prom.depth = metrics_get(&queue__f_depth, q->name, q->name);
  q->prom.adds = metrics_get(&queue__f_adds, q->name, q->name);
  q->prom.retries = metrics_get(&queue__f_retries, q->name, q->name);
  q->prom.latency = metrics_get(&queue__f_latency, q->name, q->name);
  q->prom.work = metrics_get(&queue__f_work, q->name, q->name);
  q->prom.unfinished = metrics_get(&queue__f_unfinished, q->name, q->name);
  q->prom.longest = metrics_get(&queue__f_longest, q->name, q->name);
  q->prom.collector = (metrics_collector_t){.collect = queue__collect, .data = q};
  metrics_collector_add(&q->prom.collector);
}

/* A closed queue holds nothing: its gauges say so (the series stay, as its counters do). */
static void queue__prom_close(queue_t *q) {
  metrics_collector_remove(&q->prom.collector);
  metrics_set(q->prom.depth, 0);
  metrics_set(q->prom.unfinished, 0);
  metrics_set(q->prom.longest, 0);
}

static size_t queue__item_bytes(size_t keylen) { return offsetof(queue__item_t, key) + keylen + 1; }

size_t queue_key_overhead(void) { return offsetof(queue__item_t, key); }

/* ---- default clock: the loop's cached time and one uv_timer ---- */

static uint64_t queue__loop_now(void *ctx) { return uv_now(((queue_t *)ctx)->loop); }

static void queue__on_timer(uv_timer_t *t) { queue_clock_fire(t->data); }

static void queue__loop_timer_start(void *ctx, queue_t *q, uint64_t deadline_ms) {
  uint64_t now = uv_now(q->loop);
  uv_timer_start(&q->timer, queue__on_timer, deadline_ms > now ? deadline_ms - now : 0, 0);
}

static void queue__loop_timer_stop(void *ctx, queue_t *q) { uv_timer_stop(&q->timer); }

static uint64_t queue__now(queue_t *q) { return q->clock.now_ms(q->clock.ctx); }

/* ---- dispatch scheduling ---- */

/* True when fewer than max_in_flight keys hold a processing slot (parked ones hold none). */
static bool queue__slot_free(const queue_t *q) { return q->m.in_flight - q->m.parked < q->max_in_flight; }

/* True when a dispatch step has something to do: hand out a key, or report drained. */
static bool queue__dispatchable(const queue_t *q) {
  if (q->flags & QUEUE__F_CLOSING) return false;
  if (q->flags & QUEUE__F_SHUTDOWN) return q->m.in_flight == 0 && !(q->flags & QUEUE__F_DRAINED);
  return !queue__link_empty(&q->ready) && queue__slot_free(q);
}

static void queue__on_idle(uv_idle_t *h);

/* Makes sure the loop runs a dispatch step soon; never dispatches here (no re-entrancy).
 * An active idle handle also makes the loop poll without blocking, which is what we want
 * while keys are left over after a step; it stops itself when there is nothing to do. */
static void queue__kick(queue_t *q) {
  if (queue__dispatchable(q)) uv_idle_start(&q->dispatch, queue__on_idle);
}

/* ---- items ---- */

static int queue__key_len(const char *key, size_t *len) {
  if (!key) return UV_EINVAL;
  size_t n = strnlen(key, QUEUE_KEY_MAX + 1);
  if (n == 0 || n > QUEUE_KEY_MAX) return UV_EINVAL;
  *len = n;
  return 0;
}

static queue__item_t *queue__find(queue_t *q, const char *key) {
  size_t len;
  if (queue__key_len(key, &len)) return NULL;
  return queue__map_find(&q->map, key, len, queue__map_hash(&q->map, key, len));
}

/* Finds key's item or creates an idle one; *err set on failure. */
static queue__item_t *queue__get(queue_t *q, const char *key, int *err) {
  size_t len;
  if ((*err = queue__key_len(key, &len))) return NULL;
  uint32_t hash = queue__map_hash(&q->map, key, len);
  queue__item_t *it = queue__map_find(&q->map, key, len, hash);
  if (it) return it;
  size_t bytes = queue__item_bytes(len);
  it = malloc(bytes);
  if (!it) {
    *err = UV_ENOMEM;
    return NULL;
  }
  memset(it, 0, offsetof(queue__item_t, key));
  memcpy(it->key, key, len + 1);
  it->keylen = (uint16_t)len;
  it->hash = hash;
  it->heap_idx = UINT32_MAX;
  if ((*err = queue__map_insert(&q->map, it))) {
    free(it);
    return NULL;
  }
  q->item_bytes += bytes;
  return it;
}

/* Frees an item nothing refers to any more: not queued, processing or waiting, no failures. */
static void queue__release(queue_t *q, queue__item_t *it) {
  if (it->flags || it->failures) return;
  queue__map_remove(&q->map, it);
  q->item_bytes -= queue__item_bytes(it->keylen);
  free(it);
}

/* client-go Add: mark dirty; put on the ready list unless it is being processed. */
static void queue__enqueue(queue_t *q, queue__item_t *it, uint64_t now) {
  if (it->flags & QUEUE__DIRTY) {
    q->m.dedups++;
    return;
  }
  it->flags |= QUEUE__DIRTY;
  it->added_ms = now;
  q->m.adds++;
  metrics_inc(q->prom.adds);
  if (it->flags & QUEUE__PROCESSING) return;
  queue__link_push(&q->ready, &it->link);
  q->list_ops++;
  q->m.depth++;
  queue__kick(q);
}

/* ---- timer heap ---- */

/* Points the clock's timer at the earliest waiting key, touching it only when that changes. */
static void queue__rearm(queue_t *q) {
  queue__item_t *top = queue__heap_top(&q->heap);
  if (!top || (q->flags & (QUEUE__F_SHUTDOWN | QUEUE__F_CLOSING))) {
    if (q->flags & QUEUE__F_ARMED) {
      q->flags &= ~QUEUE__F_ARMED;
      q->clock.timer_stop(q->clock.ctx, q);
    }
    return;
  }
  if ((q->flags & QUEUE__F_ARMED) && q->armed_deadline_ms == top->ready_at_ms) return;
  q->flags |= QUEUE__F_ARMED;
  q->armed_deadline_ms = top->ready_at_ms;
  q->clock.timer_start(q->clock.ctx, q, top->ready_at_ms);
}

/* Moves every waiting key whose deadline has come to the ready list. */
static void queue__promote(queue_t *q, uint64_t now) {
  if (q->flags & (QUEUE__F_SHUTDOWN | QUEUE__F_CLOSING)) return;
  queue__item_t *top;
  while ((top = queue__heap_top(&q->heap)) && top->ready_at_ms <= now) {
    queue__heap_pop(&q->heap);
    top->flags &= ~QUEUE__WAITING;
    queue__enqueue(q, top, now);
  }
}

void queue_clock_fire(queue_t *q) {
  if (q->flags & QUEUE__F_CLOSING) return;
  q->flags &= ~QUEUE__F_ARMED; /* the timer is one-shot */
  queue__promote(q, queue__now(q));
  queue__rearm(q);
}

static int queue__wait(queue_t *q, queue__item_t *it, uint64_t delay_ms) {
  uint64_t now = queue__now(q);
  if (delay_ms == 0) {
    queue__enqueue(q, it, now);
    return 0;
  }
  uint64_t deadline = now > UINT64_MAX - delay_ms ? UINT64_MAX : now + delay_ms;
  if (it->flags & QUEUE__WAITING) {
    if (deadline >= it->ready_at_ms) return 0; /* a later or equal deadline changes nothing */
    it->ready_at_ms = deadline;
    queue__heap_decreased(&q->heap, it);
  } else {
    it->ready_at_ms = deadline;
    it->seq = q->seq++;
    int err = queue__heap_push(&q->heap, it);
    if (err) {
      queue__release(q, it);
      return err;
    }
    it->flags |= QUEUE__WAITING;
  }
  queue__rearm(q);
  return 0;
}

/* ---- dispatch ---- */

/* One dispatch step: hands out at most the keys ready on entry (so a consumer that finishes
 * and re-adds synchronously cannot starve the loop), then reports drained if due. */
static unsigned queue__dispatch(queue_t *q) {
  uint64_t now = queue__now(q);
  unsigned n = 0;
  uint64_t budget = q->m.depth;
  while (budget-- > 0 && !(q->flags & (QUEUE__F_SHUTDOWN | QUEUE__F_CLOSING)) &&
         queue__slot_free(q) && !queue__link_empty(&q->ready)) {
    queue__link_t *l = q->ready.next;
    queue__link_remove(l);
    queue__item_t *it = queue__container_of(l, queue__item_t, link);
    q->m.depth--;
    it->flags = (uint8_t)((it->flags & ~QUEUE__DIRTY) | QUEUE__PROCESSING);
    q->m.queue_latency_sum_ms += now > it->added_ms ? now - it->added_ms : 0;
    metrics_observe(q->prom.latency, (double)(now > it->added_ms ? now - it->added_ms : 0) / 1000);
    q->m.queue_latency_count++;
    it->started_ms = now;
    q->running_started_sum_ms += now;
    queue__link_push(&q->running, &it->link);
    q->list_ops += 2;
    q->m.in_flight++;
    n++;
    /* The callback may call done (freeing it), add, shutdown or close: touch nothing of it after. */
    q->process_cb(q, it->key, q->data);
  }
  if ((q->flags & (QUEUE__F_SHUTDOWN | QUEUE__F_CLOSING | QUEUE__F_DRAINED)) == QUEUE__F_SHUTDOWN &&
      q->m.in_flight == 0) {
    q->flags |= QUEUE__F_DRAINED;
    if (q->drained_cb) q->drained_cb(q, q->drained_data); /* may close q; memory stays until close_cb */
  }
  return n;
}

static void queue__on_idle(uv_idle_t *h) {
  queue_t *q = h->data;
  queue__dispatch(q);
  if (!queue__dispatchable(q)) uv_idle_stop(&q->dispatch); /* no spinning while idle */
}

unsigned queue_run_pending(queue_t *q) {
  if (q->flags & QUEUE__F_CLOSING) return 0;
  queue__promote(q, queue__now(q));
  queue__rearm(q);
  unsigned n = queue__dispatch(q);
  if (!(q->flags & QUEUE__F_CLOSING) && !queue__dispatchable(q)) uv_idle_stop(&q->dispatch);
  return n;
}

/* ---- public API ---- */

void queue_options_init(queue_options_t *o) {
  memset(o, 0, sizeof *o);
  o->name = "queue";
  o->max_in_flight = 4;
  o->backoff.base_ms = 5;
  o->backoff.max_ms = 1000 * 1000;
  o->qps = 10;
  o->burst = 100;
  o->clock = NULL;
}

int queue_init(uv_loop_t *loop, queue_t *q, const queue_options_t *opts, queue_process_cb process_cb, void *data) {
  queue_options_t defaults;
  if (!opts) {
    queue_options_init(&defaults);
    opts = &defaults;
  }
  if (!loop || !q || !process_cb || opts->max_in_flight == 0) return UV_EINVAL;
  memset(q, 0, sizeof *q);
  q->data = data;
  q->loop = loop;
  q->process_cb = process_cb;
  q->max_in_flight = opts->max_in_flight;
  q->max_parked = opts->max_parked;
  q->backoff = opts->backoff;
  queue_bucket_init(&q->bucket, opts->qps, opts->burst);
  if (opts->clock) {
    q->clock = *opts->clock;
  } else {
    q->clock.now_ms = queue__loop_now;
    q->clock.timer_start = queue__loop_timer_start;
    q->clock.timer_stop = queue__loop_timer_stop;
    q->clock.ctx = q;
  }
  snprintf(q->name, sizeof q->name, "%s", opts->name ? opts->name : "queue");
  queue__map_init(&q->map);
  queue__heap_init(&q->heap);
  queue__link_init(&q->ready);
  queue__link_init(&q->running);
  int err = uv_idle_init(loop, &q->dispatch);
  if (err) return err;
  (void)uv_timer_init(loop, &q->timer); /* libuv's uv_timer_init only ever returns 0 */
  q->dispatch.data = q;
  q->timer.data = q;
  queue__prom_init(q);
  return 0;
}

int queue_add(queue_t *q, const char *key) { return queue_add_after(q, key, 0); }

int queue_add_after(queue_t *q, const char *key, uint64_t delay_ms) {
  if (q->flags & (QUEUE__F_SHUTDOWN | QUEUE__F_CLOSING)) return UV_ESHUTDOWN;
  int err;
  queue__item_t *it = queue__get(q, key, &err);
  if (!it) return err;
  return queue__wait(q, it, delay_ms);
}

int queue_add_rate_limited(queue_t *q, const char *key) {
  if (q->flags & (QUEUE__F_SHUTDOWN | QUEUE__F_CLOSING)) return UV_ESHUTDOWN;
  int err;
  queue__item_t *it = queue__get(q, key, &err);
  if (!it) return err;
  /* Both limiters are consulted every time (as client-go's MaxOfRateLimiter): the key's
   * failure count grows and a bucket token is taken even when the other one is longer. */
  uint64_t backoff = queue_backoff_delay(&q->backoff, it->failures);
  uint64_t bucket = queue_bucket_reserve(&q->bucket, queue__now(q));
  if (it->failures < UINT32_MAX) it->failures++;
  q->m.retries++;
  metrics_inc(q->prom.retries);
  return queue__wait(q, it, backoff > bucket ? backoff : bucket);
}

void queue_forget(queue_t *q, const char *key) {
  queue__item_t *it = queue__find(q, key);
  if (!it) return;
  it->failures = 0;
  queue__release(q, it);
}

unsigned queue_num_requeues(queue_t *q, const char *key) {
  queue__item_t *it = queue__find(q, key);
  return it ? it->failures : 0;
}

int queue_park(queue_t *q, const char *key) {
  if (q->flags & QUEUE__F_CLOSING) return UV_ECANCELED;
  queue__item_t *it = queue__find(q, key);
  if (!it || !(it->flags & QUEUE__PROCESSING)) return UV_ENOENT;
  if (it->flags & QUEUE__PARKED) return UV_EALREADY;
  if (q->m.parked >= q->max_parked) return UV_EBUSY;
  it->flags |= QUEUE__PARKED;
  q->m.parked++;
  queue__kick(q); /* its slot is free */
  return 0;
}

int queue_unpark(queue_t *q, const char *key) {
  if (q->flags & QUEUE__F_CLOSING) return UV_ECANCELED;
  queue__item_t *it = queue__find(q, key);
  if (!it || !(it->flags & QUEUE__PARKED)) return UV_ENOENT;
  it->flags &= ~QUEUE__PARKED;
  q->m.parked--;
  return 0;
}

int queue_done(queue_t *q, const char *key) {
  if (q->flags & QUEUE__F_CLOSING) return UV_ECANCELED;
  queue__item_t *it = queue__find(q, key);
  if (!it || !(it->flags & QUEUE__PROCESSING)) return UV_ENOENT;
  uint64_t now = queue__now(q);
  queue__link_remove(&it->link);
  q->list_ops++;
  if (it->flags & QUEUE__PARKED) q->m.parked--;
  it->flags &= ~(QUEUE__PROCESSING | QUEUE__PARKED);
  q->m.in_flight--;
  q->running_started_sum_ms -= it->started_ms;
  q->m.work_duration_sum_ms += now > it->started_ms ? now - it->started_ms : 0;
  metrics_observe(q->prom.work, (double)(now > it->started_ms ? now - it->started_ms : 0) / 1000);
  q->m.work_duration_count++;
  if (it->flags & QUEUE__DIRTY) {
    /* Re-added while processing: its turn comes now (after shutdown it just stays queued). */
    queue__link_push(&q->ready, &it->link);
    q->list_ops++;
    q->m.depth++;
  }
  queue__kick(q); /* a slot is free, or the last in-flight key finished a drain */
  queue__release(q, it);
  return 0;
}

int queue_shutdown(queue_t *q, queue_drained_cb drained_cb, void *data) {
  if (q->flags & QUEUE__F_CLOSING) return UV_EINVAL;
  if (q->flags & QUEUE__F_SHUTDOWN) return UV_EALREADY;
  q->flags |= QUEUE__F_SHUTDOWN;
  q->drained_cb = drained_cb;
  q->drained_data = data;
  queue__rearm(q); /* stops the timer: waiting keys stay put */
  queue__kick(q);  /* drained is reported from the loop, never from inside this call */
  return 0;
}

static void queue__free_item(queue__item_t *it, void *ctx) { free(it); }

static void queue__on_handle_close(uv_handle_t *h) {
  queue_t *q = h->data;
  if (--q->pending_closes) return;
  /* Delay-free: keys go only now, after every callback that could still hold one returned. */
  queue__map_clear(&q->map, queue__free_item, NULL);
  queue__map_free(&q->map);
  queue__heap_free(&q->heap);
  q->item_bytes = 0;
  queue__link_init(&q->ready);
  queue__link_init(&q->running);
  queue_close_cb cb = q->close_cb;
  if (cb) cb(q); /* may free q: nothing after this */
}

void queue_close(queue_t *q, queue_close_cb close_cb) {
  if (q->flags & QUEUE__F_CLOSING) return;
  q->close_cb = close_cb;
  queue__prom_close(q);
  if (q->flags & QUEUE__F_ARMED) {
    q->flags &= ~QUEUE__F_ARMED;
    q->clock.timer_stop(q->clock.ctx, q);
  }
  q->flags |= QUEUE__F_CLOSING;
  q->pending_closes = 2;
  uv_close((uv_handle_t *)&q->dispatch, queue__on_handle_close);
  uv_close((uv_handle_t *)&q->timer, queue__on_handle_close);
}

void queue_metrics_get(queue_t *q, queue_metrics_t *out) {
  *out = q->m;
  out->waiting = q->heap.len;
  out->keys = q->map.count;
  out->memory_bytes = q->item_bytes + q->map.nbuckets * sizeof(*q->map.buckets) + (uint64_t)q->heap.cap * sizeof(*q->heap.v);
  out->longest_running_ms = out->unfinished_work_ms = 0;
  if (q->m.in_flight && !(q->flags & QUEUE__F_CLOSING)) {
    uint64_t now = queue__now(q);
    const queue__item_t *oldest = queue__container_of(q->running.next, queue__item_t, link);
    out->longest_running_ms = now > oldest->started_ms ? now - oldest->started_ms : 0;
    uint64_t total = now * q->m.in_flight; /* sum(now - start) without walking the list */
    out->unfinished_work_ms = total > q->running_started_sum_ms ? total - q->running_started_sum_ms : 0;
  }
}

const char *queue_name(const queue_t *q) { return q->name; }

void queue_ops_get(const queue_t *q, queue_ops_t *out) {
  out->map_lookups = q->map.lookups;
  out->map_probes = q->map.probes;
  out->map_rehashed = q->map.rehashed;
  out->heap_ops = q->heap.ops;
  out->heap_swaps = q->heap.swaps;
  out->list_ops = q->list_ops;
}
