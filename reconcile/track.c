#include "reconcile/track.h"
#include "base/log.h"
#include "base/metrics.h"
#include "reconcile/doors/doors.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <uv.h>

static metrics_family_t track__total = {
    .name = "controller_runtime_reconcile_total", .help = "Total number of reconciliations per controller",
    .type = METRICS_COUNTER, .labels = {"controller", "result"}};
static metrics_family_t track__errors = {
    .name = "controller_runtime_reconcile_errors_total", .help = "Total number of reconciliation errors per controller",
    .type = METRICS_COUNTER, .labels = {"controller"}};
static metrics_family_t track__terminal = {
    .name = "controller_runtime_terminal_reconcile_errors_total",
    .help = "Total number of terminal reconciliation errors per controller", .type = METRICS_COUNTER,
    .labels = {"controller"}};
static metrics_family_t track__time = {
    .name = "controller_runtime_reconcile_time_seconds", .help = "Length of time per reconciliation per controller",
    .type = METRICS_HISTOGRAM, .labels = {"controller"}, .buckets = metrics_buckets_latency,
    .nbuckets = METRICS_BUCKETS_LATENCY_N};
static metrics_family_t track__active = {
    .name = "controller_runtime_active_workers", .help = "Number of currently used workers per controller",
    .type = METRICS_GAUGE, .labels = {"controller"}};
static metrics_family_t track__releases = {
    .name = "rudder_releases", .help = "Releases per controller by the status of their Ready condition",
    .type = METRICS_GAUGE, .labels = {"controller", "ready"}};
static metrics_family_t track__revision = {
    .name = "rudder_release_revision", .help = "The Helm revision last applied to each release",
    .type = METRICS_GAUGE, .labels = {"controller", "namespace", "name"}};

static const char *const track__results[] = {"success", "error", "error", "requeue", "requeue_after"};
static const char *const track__ready[] = {"True", "False", "Unknown"};

/* ---- controller names ---- */

#define TRACK__MAX_DOORS 16
static struct {
  const door_t *door;
  char name[96];
} track__names[TRACK__MAX_DOORS];

const char *track_controller_name(const door_t *door) {
  size_t i = 0;
  for (; i < TRACK__MAX_DOORS && track__names[i].door; i++)
    if (track__names[i].door == door) return track__names[i].name;
  static char spare[96]; /* more doors than the table holds: named without the uniqueness check */
  char *out = i < TRACK__MAX_DOORS ? track__names[i].name : spare;
  int shared = 0;
  for (size_t d = 0; doors[d]; d++)
    if (doors[d] != door && !strcasecmp(doors[d]->kind, door->kind)) shared = 1;
  snprintf(out, 96, "%s%s%s", door->kind, shared ? "." : "", shared ? door->group : "");
  for (char *p = out; *p && (!shared || p < out + strlen(door->kind)); p++)
    if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
  if (i < TRACK__MAX_DOORS) track__names[i].door = door;
  /* As controller-runtime does when a controller starts: every result at 0, so that rates of a
   * result not seen yet are 0 rather than absent. */
  for (size_t r = 0; r < sizeof track__results / sizeof *track__results; r++) metrics_get(&track__total, out, track__results[r]);
  metrics_get(&track__errors, out);
  metrics_get(&track__terminal, out);
  metrics_get(&track__active, out);
  return out;
}

/* ---- reconciles in flight ---- */

typedef struct track__run_s {
  struct track__run_s *next;
  const door_t *door;
  uint64_t start_ns;
  char id[37];
  char key[];
} track__run_t;

static track__run_t *track__runs;
static uint64_t track__rng[2];

static uint64_t track__rand(void) {
  if (!track__rng[0] && !track__rng[1]) {
    if (getrandom(track__rng, sizeof track__rng, 0) != sizeof track__rng) { /* ids need not be secret */
      track__rng[0] = uv_hrtime() | 1;
      track__rng[1] = (uint64_t)(uintptr_t)&track__runs;
    }
  }
  /* xorshift128+ */
  uint64_t s1 = track__rng[0];
  const uint64_t s0 = track__rng[1];
  track__rng[0] = s0;
  s1 ^= s1 << 23;
  track__rng[1] = s1 ^ s0 ^ (s1 >> 17) ^ (s0 >> 26);
  return track__rng[1] + s0;
}

/* A version 4 UUID: 8-4-4-4-12 hex digits. */
static void track__uuid(char out[37]) {
  uint64_t a = track__rand(), b = track__rand();
  a = (a & ~0xf000ull) | 0x4000ull;                          /* version 4 */
  b = (b & ~(3ull << 62)) | (2ull << 62);                    /* variant 10 */
  snprintf(out, 37, "%08x-%04x-%04x-%04x-%012llx", (unsigned)(a >> 32), (unsigned)(a >> 16) & 0xffff,
           (unsigned)a & 0xffff, (unsigned)(b >> 48), (unsigned long long)(b & 0xffffffffffffull));
}

static track__run_t **track__find_run(const door_t *door, const char *key) {
  track__run_t **pp = &track__runs;
  while (*pp && ((*pp)->door != door || strcmp((*pp)->key, key))) pp = &(*pp)->next;
  return pp;
}

void track_reconcile_start(const door_t *door, const char *key) {
  const char *ctl = track_controller_name(door);
  metrics_inc(metrics_get(&track__active, ctl));
  size_t n = strlen(key) + 1;
  track__run_t *r = malloc(sizeof *r + n);
  if (!r) return; /* then this reconcile is neither timed nor tagged */
  r->door = door;
  r->start_ns = uv_hrtime();
  memcpy(r->key, key, n);
  track__uuid(r->id);
  r->next = track__runs;
  track__runs = r;
  log_tag_add("release", key, "reconcile_id", r->id);
}

void track_reconcile_finish(const door_t *door, const char *key, track_result_t result) {
  const char *ctl = track_controller_name(door);
  metrics_add(metrics_get(&track__active, ctl), -1);
  if ((unsigned)result > TRACK_REQUEUE_AFTER) result = TRACK_ERROR;
  metrics_inc(metrics_get(&track__total, ctl, track__results[result]));
  if (result == TRACK_ERROR || result == TRACK_TERMINAL) metrics_inc(metrics_get(&track__errors, ctl));
  if (result == TRACK_TERMINAL) metrics_inc(metrics_get(&track__terminal, ctl));
  track__run_t **pp = track__find_run(door, key), *r = *pp;
  if (!r) return;
  *pp = r->next;
  metrics_observe(metrics_get(&track__time, ctl), (double)(uv_hrtime() - r->start_ns) / 1e9);
  log_tag_remove("release", key);
  free(r);
}

const char *track_reconcile_id(const door_t *door, const char *key) {
  track__run_t *r = *track__find_run(door, key);
  return r ? r->id : NULL;
}

/* ---- releases ---- */

typedef struct track__rel_s {
  struct track__rel_s *next;
  const door_t *door;
  int ready; /* index into track__ready */
  metrics_series_t *revision;
  char key[];
} track__rel_t;

static struct {
  track__rel_t **b;
  size_t nb, n;
} track__rels;

static size_t track__hash(const door_t *door, const char *key) {
  size_t h = (size_t)(uintptr_t)door * 0x9e3779b97f4a7c15ull;
  for (const unsigned char *p = (const unsigned char *)key; *p; p++) h = (h ^ *p) * 0x100000001b3ull;
  return h;
}

static track__rel_t **track__find_rel(const door_t *door, const char *key) {
  if (!track__rels.nb) return NULL;
  track__rel_t **pp = &track__rels.b[track__hash(door, key) & (track__rels.nb - 1)];
  while (*pp && ((*pp)->door != door || strcmp((*pp)->key, key))) pp = &(*pp)->next;
  return pp;
}

/* Doubles the table when it is full (load at most 1); keeps the old one when out of memory. */
static void track__grow(void) {
  if (track__rels.n < track__rels.nb) return;
  size_t nb = track__rels.nb ? track__rels.nb * 2 : 64;
  track__rel_t **b = calloc(nb, sizeof *b);
  if (!b) return;
  for (size_t i = 0; i < track__rels.nb; i++)
    for (track__rel_t *e = track__rels.b[i], *nx; e; e = nx) {
      nx = e->next;
      size_t j = track__hash(e->door, e->key) & (nb - 1);
      e->next = b[j];
      b[j] = e;
    }
  free(track__rels.b);
  track__rels.b = b;
  track__rels.nb = nb;
}

static int track__ready_index(const char *ready) {
  for (int i = 0; i < 3; i++)
    if (!strcmp(ready, track__ready[i])) return i;
  return 2;
}

void track_release(const door_t *door, const char *key, const char *ready, long long revision) {
  const char *ctl = track_controller_name(door);
  track__grow();
  track__rel_t **pp = track__find_rel(door, key), *e = pp ? *pp : NULL;
  if (!e) {
    if (!pp) return;
    size_t n = strlen(key) + 1;
    if (!(e = calloc(1, sizeof *e + n))) return;
    e->door = door;
    e->ready = -1;
    memcpy(e->key, key, n);
    *pp = e;
    track__rels.n++;
  }
  int idx = ready ? track__ready_index(ready) : e->ready < 0 ? 2 : e->ready;
  if (idx != e->ready) {
    if (e->ready >= 0) metrics_add(metrics_get(&track__releases, ctl, track__ready[e->ready]), -1);
    metrics_inc(metrics_get(&track__releases, ctl, track__ready[idx]));
    e->ready = idx;
  }
  if (revision > 0) {
    if (!e->revision) {
      char ns[256];
      const char *slash = strchr(key, '/');
      snprintf(ns, sizeof ns, "%.*s", slash ? (int)(slash - key) : 0, key);
      e->revision = metrics_get(&track__revision, ctl, ns, slash ? slash + 1 : key);
    }
    metrics_set(e->revision, (double)revision);
  }
}

void track_release_forget(const door_t *door, const char *key) {
  track__rel_t **pp = track__find_rel(door, key), *e = pp ? *pp : NULL;
  if (!e) return;
  *pp = e->next;
  track__rels.n--;
  if (e->ready >= 0) metrics_add(metrics_get(&track__releases, track_controller_name(door), track__ready[e->ready]), -1);
  metrics_remove(e->revision);
  free(e);
}
