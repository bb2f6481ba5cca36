/* The rate-limited work queue: client-go workqueue semantics on one libuv loop.
 *
 * Keys are strings ("namespace/name"), copied in. A key is queued at most once (dedup), is
 * never processed twice at the same time, and a key added again while it is being processed
 * is marked dirty and handed out once more after queue_done. Ready keys go out in FIFO order,
 * through the process callback, from the loop (a uv_idle that runs only while there is
 * something to hand out), never from inside queue_add, and while fewer than max_in_flight
 * keys are being processed. The consumer finishes asynchronously with queue_done.
 *
 * Delays: queue_add_after holds a key in a min-heap behind a single timer; an earlier
 * add_after for a waiting key moves it earlier, a later one is ignored (as client-go).
 * queue_add_rate_limited waits max(per-key exponential backoff, overall token bucket), like
 * client-go's DefaultControllerRateLimiter; queue_forget clears a key's failures.
 *
 * Memory: one allocation per tracked key, queue_key_overhead() + strlen(key) + 1 bytes, plus
 * 1 to 4 hash-bucket pointers (load kept in [1/4, 1]) and one heap pointer while it waits.
 * A key is tracked while it is queued, processing, waiting, or has failures not yet forgotten.
 * All operations are O(1) expected except the heap's O(log n) for delayed keys. The workqueue
 * metrics (base/metrics.h) cost an atomic add per add, retry, dispatch and done.
 *
 * Lifetime (libuv style): the caller owns the queue_t memory, must not move it after
 * queue_init, and may free it only in the close callback. Functions return 0 or a negative
 * UV_E* code. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "base/metrics.h"
#include "queue/queue_clock.h"
#include "queue/queue_heap.h"
#include "queue/queue_item.h"
#include "queue/queue_map.h"
#include "queue/queue_ratelimit.h"

/* Longest key accepted, in bytes. */
#define QUEUE_KEY_MAX 4096

/* Hands a key to the consumer; the key string stays valid until queue_done(q, key) for it. */
typedef void (*queue_process_cb)(queue_t *q, const char *key, void *data);
/* Called once after queue_shutdown, when no key is processing any more. */
typedef void (*queue_drained_cb)(queue_t *q, void *data);
/* Called when the queue has released everything; the queue_t memory may be freed here. */
typedef void (*queue_close_cb)(queue_t *q);

typedef struct queue_options_s {
  const char *name;       /* for logs and metric labels; copied, up to 31 bytes (default "queue") */
  unsigned max_in_flight; /* keys processed at once, >= 1 (default 4) */
  unsigned max_parked;    /* keys parked at once (queue_park), besides those; 0: none (default) */
  queue_backoff_t backoff; /* per-key backoff (default 5 ms doubling to 1000 s) */
  double qps;             /* overall bucket refill rate; <= 0 disables the bucket (default 10) */
  unsigned burst;         /* overall bucket size (default 100) */
  const queue_clock_t *clock; /* NULL: the loop's clock; otherwise copied (e.g. a fake for tests) */
} queue_options_t;

/* Counters, as client-go's workqueue metrics; read with queue_metrics_get. */
typedef struct queue_metrics_s {
  uint64_t depth;        /* keys ready and waiting for a processing slot */
  uint64_t waiting;      /* keys held back by add_after or backoff */
  uint64_t in_flight;    /* keys being processed (parked ones included) */
  uint64_t parked;       /* of those, parked: not holding a slot (queue_park) */
  uint64_t keys;         /* keys tracked (including ones only remembering failures) */
  uint64_t memory_bytes; /* bytes allocated (as requested) for keys, hash table and timer heap */
  uint64_t adds;         /* adds that queued a key (dedup'ed adds are not counted) */
  uint64_t dedups;       /* adds dropped because the key was already queued */
  uint64_t retries;      /* queue_add_rate_limited calls */
  uint64_t queue_latency_sum_ms, queue_latency_count; /* from add to dispatch */
  uint64_t work_duration_sum_ms, work_duration_count; /* from dispatch to queue_done */
  uint64_t longest_running_ms; /* age of the oldest key being processed */
  uint64_t unfinished_work_ms; /* summed age of all keys being processed */
} queue_metrics_t;

/* Work counters that show the cost per operation stays constant (for tests and benchmarks). */
typedef struct queue_ops_s {
  uint64_t map_lookups;  /* hash map finds, inserts and removes */
  uint64_t map_probes;   /* chain entries examined by them */
  uint64_t map_rehashed; /* entries moved by table resizes */
  uint64_t heap_ops;     /* heap pushes, pops and decrease-keys */
  uint64_t heap_swaps;   /* levels moved by them */
  uint64_t list_ops;     /* ready/running list pushes and removals */
} queue_ops_t;

struct queue_s {
  void *data; /* public: user data, passed to the process callback */
  /* private */
  uv_loop_t *loop;
  uv_idle_t dispatch; /* active only while something can be handed out */
  uv_timer_t timer;   /* default clock's timer for the earliest waiting key */
  queue_clock_t clock;
  queue_process_cb process_cb;
  queue_drained_cb drained_cb;
  void *drained_data;
  queue_close_cb close_cb;
  unsigned max_in_flight;
  unsigned max_parked;
  unsigned flags;
  unsigned pending_closes;
  queue_backoff_t backoff;
  queue_bucket_t bucket;
  queue__map_t map;
  queue__heap_t heap;
  queue__link_t ready;   /* FIFO of DIRTY && !PROCESSING items */
  queue__link_t running; /* PROCESSING items, oldest first */
  uint64_t seq;
  uint64_t armed_deadline_ms;
  uint64_t running_started_sum_ms;
  uint64_t item_bytes;
  queue_metrics_t m; /* counters; gauges are filled in by queue_metrics_get */
  uint64_t list_ops;
  char name[32];
  /* client-go's workqueue metrics, labelled name and controller (both the queue's name): counters
   * and histograms kept as things happen, gauges set by the collector when scraped. */
  struct {
    metrics_series_t *depth, *adds, *retries, *latency, *work, *unfinished, *longest;
    metrics_collector_t collector;
  } prom;
};

/* Fills in the defaults (max_in_flight 4, max_parked 0, backoff 5 ms..1000 s, 10 qps, burst 100, loop clock). */
void queue_options_init(queue_options_t *opts);
/* Initializes q on loop with opts (NULL: defaults); process_cb receives ready keys and data. */
int queue_init(uv_loop_t *loop, queue_t *q, const queue_options_t *opts, queue_process_cb process_cb, void *data);
/* Queues key now, unless it is already queued; UV_ESHUTDOWN after shutdown, UV_EINVAL for a bad key. */
int queue_add(queue_t *q, const char *key);
/* Queues key after delay_ms (0: now); if it already waits, only an earlier deadline moves it. */
int queue_add_after(queue_t *q, const char *key, uint64_t delay_ms);
/* Queues key after max(its exponential backoff, the token bucket's delay) and counts a failure. */
int queue_add_rate_limited(queue_t *q, const char *key);
/* Clears key's failure count so its next rate-limited add starts from the base delay again. */
void queue_forget(queue_t *q, const char *key);
/* How many rate-limited adds key has had since it was last forgotten. */
unsigned queue_num_requeues(queue_t *q, const char *key);
/* Parking: a key being processed that only waits (on a watch, a timer) gives its slot to the next
 * ready key and stays processing: it is not handed out again, and an add marks it dirty as usual.
 * queue_park: 0, UV_ENOENT (not processing), UV_EALREADY (parked), UV_EBUSY (max_parked keys are
 * parked: it keeps its slot). queue_unpark takes a slot back at once, even when none is free (the
 * next key is handed out once the keys holding slots are below max_in_flight again); UV_ENOENT if
 * not parked. queue_done of a parked key needs no unpark. */
int queue_park(queue_t *q, const char *key);
int queue_unpark(queue_t *q, const char *key);
/* Marks key as processed; if it was added meanwhile it is queued again. UV_ENOENT if not processing. */
int queue_done(queue_t *q, const char *key);
/* Stops handing out keys and new adds; calls drained_cb (may be NULL) from the loop once none is processing. */
int queue_shutdown(queue_t *q, queue_drained_cb drained_cb, void *data);
/* Closes the handles and frees every key; close_cb (may be NULL) runs from the loop when done.
 * Safe inside the queue's callbacks. Keys still in flight are dropped: finish or cancel their
 * work first (shutdown + drained), since queue_done may not be called after close_cb. */
void queue_close(queue_t *q, queue_close_cb close_cb);
/* Copies the counters and current gauges into out. */
void queue_metrics_get(queue_t *q, queue_metrics_t *out);
/* The name given in the options (for log lines and metric labels). */
const char *queue_name(const queue_t *q);
/* Copies the work counters into out. */
void queue_ops_get(const queue_t *q, queue_ops_t *out);
/* Bytes one tracked key costs besides its text (strlen + 1) and its hash/heap slots. */
size_t queue_key_overhead(void);
/* Tells the queue its clock's timer expired: moves due waiting keys to the ready list. */
void queue_clock_fire(queue_t *q);
/* Does one dispatch step now, without the loop: moves due keys, hands out ready keys; returns how many. */
unsigned queue_run_pending(queue_t *q);
