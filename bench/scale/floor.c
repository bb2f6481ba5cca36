/* bench/scale/floor: the writes of N Helm installs with no controller logic (issue 16 §2).
 *
 * For each release it sends exactly the writes rudder's install sends for the bench chart: the
 * release record Secret's create (labels status=pending-install), the server-side applies of the
 * chart's 4 objects, the record's update (status=deployed, at the create's resourceVersion) and a
 * merge patch of the HelmRelease's status; nothing is read, nothing decided. The bodies are made
 * once from real ones: the record's data and the status from a release rudder installed
 * (--record, --status), the objects from `rudder template` of the bench chart for release 0
 * (--manifests) with Helm's ownership metadata added as rudder adds it (manifest_object_json);
 * release i gets them with its name written over release 0's ("app-00000", the same width).
 *
 * One round per --concurrency value C, each on fresh namespaces of its own (floor-cC-1..K): the
 * namespaces and the N HelmRelease objects (--objects, as the harness creates them for rudder)
 * are made first, untimed; then the clock runs from the first write until the last answer, with at
 * most C requests in flight (a release's writes go in order, its 4 applies together, releases
 * already started first). With --upgrade-manifests (the chart rendered with release 0's new
 * values) each round then sends the writes of an upgrade of the same releases: the record v2's
 * create (pending-upgrade), the 4 applies of the changed objects, v2's update (deployed), v1's
 * (superseded) and the status patch (at lastAppliedRevision 2, so that it changes something).
 * Prints `name value unit` lines per round and the best rounds as floor_install_seconds and
 * floor_upgrade_seconds. No thresholds.
 *
 * --ready also times each phase until every release's Deployment is ready as a readiness wait
 * judges it (kstatus Current, helm/action/ready.h) at the generation its apply's answer gave:
 * watched, one watch per namespace opened before the phase, as a controller's shared watch.
 * Printed as <phase>_ready_seconds: the fastest a controller that waits for readiness could be
 * (the controller manager's Deployment controller then counts, as it does for rudder's waits).
 *
 * --requests all sends, besides those writes, every other request rudder's install and upgrade
 * send (not its watches), in rudder's order: before the install's writes the ownership GETs of
 * the 4 objects (answered 404) in flight with the finalizer's merge patch of the HelmRelease;
 * before the upgrade's the list of the release's records; and an Event with each status patch.
 * That is the fastest a controller doing all that could be (figures named floor_all_*, rounds in
 * namespaces floor-all-cC-K; their HelmReleases keep the finalizer: the run's control plane is
 * thrown away after it).
 *
 * --user-writes also sends, timed, the writes the user (the harness) sends in a controller's
 * windows: each release's HelmRelease create as the first step of its install (instead of making
 * them untimed before the round), and the merge patch of its spec.values (the new image tag
 * measure.py gives it) as the first step of its upgrade. They are sent as the harness sends them:
 * every release's in order, --user-concurrency at a time (default 8, measure.py's threads), apart
 * from the controller's limit; a release's own writes begin once its user write is answered.
 * Those writes load the same API server while a controller works, so that is the floor of the
 * whole phase a controller is timed over (figures floor_user_* or floor_all_user_*, namespaces
 * floor[-all]-user-cC-K).
 *
 * --watches holds rudder's watches open from before the first round to the end: cluster-wide, each
 * from the resourceVersion of a one-item list, as its caches watch after their first list: the
 * HelmReleases (whole objects), the release records (owner=helm, metadata only), and Deployments
 * and Ingresses labelled app.kubernetes.io/managed-by=Helm (the shared readiness watches); their
 * events are parsed (managedFields cut, as rudder's) and dropped. --upgrade-status FILE takes the
 * upgrade's status patch from a HelmRelease rudder upgraded (its history of 2, the conditions of
 * an upgrade) instead of the install's status at lastAppliedRevision 2. Figures of those rounds
 * are named with _watch and _status after the prefix (floor_user_watch_status_*, ...).
 *
 *   floor --kubeconfig FILE --objects FILE --manifests FILE --record FILE --status FILE
 *         [--upgrade-manifests FILE] [--releases N] [--namespaces K] [--concurrency C[,C...]]
 *         [--apiserver-pid P] [--etcd-pid P] [--requests writes|all] [--ready] [--user-writes]
 *         [--user-concurrency U] [--watches] [--upgrade-status FILE] */
#include "watch/client.h"
#include "base/buf.h"
#include "helm/action/ready.h"
#include "helm/render/manifest.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FLOOR_NAME0 "app-00000" /* release 0's name in every body; release i's is app-%05d */
#define FLOOR_MAX_DOCS 8

/* The steps, in order: setup (untimed), the install's writes, the upgrade's writes. */
/* FLOOR_CHECKS and FLOOR_UP_LIST, and the Event sent with each status patch, only with --requests all;
 * FLOOR_HR_CREATE timed and FLOOR_UP_USER_PATCH only with --user-writes. */
enum {
  FLOOR_NS_CREATE, FLOOR_HR_CREATE,
  FLOOR_CHECKS, FLOOR_REC_CREATE, FLOOR_APPLY, FLOOR_REC_UPDATE, FLOOR_STATUS,
  FLOOR_UP_USER_PATCH, /* with --user-writes: the user's change that starts an upgrade */
  FLOOR_UP_LIST, FLOOR_UP_REC_CREATE, FLOOR_UP_APPLY, FLOOR_UP_REC_UPDATE, FLOOR_UP_OLD_UPDATE, FLOOR_UP_STATUS,
};

typedef struct floor_doc_s {
  const char *resource; /* path segments: group ("" for core), version, resource */
  const char *group;
  const char *version;
  char *name;           /* metadata.name, with FLOOR_NAME0 in it */
  char **body;          /* per namespace: the JSON to apply */
  char **body_up;       /* per namespace: the JSON the upgrade applies (the new values) */
} floor_doc_t;

typedef struct floor_rel_s floor_rel_t;
typedef struct floor_s floor_t;

struct floor_rel_s {
  floor_t *f;
  int i;              /* release (or namespace) index */
  int step;           /* FLOOR_* */
  int failed;         /* a write of it failed */
  int sent, pending;  /* requests of this step sent, and not yet answered */
  floor_rel_t *next;  /* in the ready queue */
};

struct floor_s {
  uv_loop_t loop;
  kube_client_t *client;
  cJSON *objects;          /* the HelmRelease objects (an array) */
  floor_doc_t docs[FLOOR_MAX_DOCS];
  size_t ndocs;
  char *record_data;       /* the record Secret's data.release (base64 text) */
  char *status_patch;      /* {"status": ...} */
  char *status_patch_up;   /* the same at lastAppliedRevision 2 (a patch that changes nothing writes nothing) */
  char now[24];            /* the records' modifiedAt label on update (Helm 4's), Unix seconds */
  char (*rv)[2][32];       /* per release: records v1 and v2's resourceVersions, from their last write */
  char (*uid)[40];         /* per release: its HelmRelease's uid (the Events' involvedObject) */
  int all;                 /* --requests all: every request rudder sends, not only the writes */
  int ready;               /* --ready: each phase also timed until every Deployment is ready */
  int user;                /* --user-writes: the user's HelmRelease create and patch timed too */
  int user_limit;          /* --user-concurrency: the user's writes in flight (measure.py's threads) */
  int user_phase;          /* this phase begins with the user's write: sent apart, at user_limit */
  int user_started, user_inflight;
  char prefix[64];         /* the figures' prefix: floor[_all][_user][_watch][_status] */
  kube_watch_t *mirror[4]; /* --watches: the open watches (NULL while one is being reopened) */
  char *mirror_rv[4];
  int mirror_up;           /* watches started at least once */
  unsigned long mirror_events;
  struct {
    long long want;        /* the generation its Deployment's apply answered with (0: not yet) */
    long long seen;        /* the generation of the last state the watch showed, -1 if not Current */
    int done;
  } *dep;                  /* per release */
  kube_watch_t **watches;  /* per namespace, during a phase with --ready */
  int nready;              /* releases whose Deployment is ready in this phase */
  double ready_at;         /* when the last one became ready */
  double last_ready;       /* the last timed phase's seconds until all were ready (-1: not measured) */
  int round;               /* rounds run (the Events' names) */
  int n, k;
  char **ns;               /* this round's namespaces */
  /* the phase being run */
  floor_rel_t *rels;
  int count, last_step;
  int started, finished, failed, inflight, limit;
  floor_rel_t *head, *tail;
  unsigned long requests;
  char *first_error;
};

static void floor__die(const char *what, const char *detail) {
  fprintf(stderr, "floor: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  exit(1);
}

static char *floor__read_file(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  if (!fp) floor__die(path, strerror(errno));
  buf_t b = BUF_INIT;
  char chunk[65536];
  size_t n;
  while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0)
    if (buf_append(&b, chunk, n)) floor__die("out of memory", NULL);
  fclose(fp);
  if (len) *len = b.len;
  return buf_steal(&b);
}

static double floor__now(uv_loop_t *loop) {
  uv_update_time(loop);
  return (double)uv_hrtime() / 1e9;
}

/* CPU seconds (utime + stime) of pid from /proc; 0 when pid is 0 or unreadable. */
static double floor__proc_cpu(int pid) {
  if (pid <= 0) return 0;
  char path[64], text[4096];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE *fp = fopen(path, "r");
  if (!fp) return 0;
  size_t n = fread(text, 1, sizeof text - 1, fp);
  fclose(fp);
  text[n] = 0;
  const char *p = strrchr(text, ')');
  if (!p) return 0;
  unsigned long ut = 0, st = 0;
  /* after ") ": state is field 3; utime and stime are fields 14 and 15 */
  if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) != 2) return 0;
  return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* Writes release i's name over every FLOOR_NAME0 in s (release 0's bodies are the templates). */
static void floor__rename(char *s, int i) {
  char name[16];
  snprintf(name, sizeof name, "app-%05d", i % 100000);
  for (char *p = s; (p = strstr(p, FLOOR_NAME0)); p += sizeof FLOOR_NAME0 - 1) memcpy(p, name, sizeof FLOOR_NAME0 - 1);
}

/* The API path segments of the chart's kinds; the floor does no discovery. */
static int floor__map(floor_doc_t *d, const char *api_version, const char *kind) {
  static const struct { const char *av, *kind, *group, *version, *resource; } map[] = {
      {"apps/v1", "Deployment", "apps", "v1", "deployments"},
      {"v1", "Service", "", "v1", "services"},
      {"v1", "ServiceAccount", "", "v1", "serviceaccounts"},
      {"networking.k8s.io/v1", "Ingress", "networking.k8s.io", "v1", "ingresses"},
      {"v1", "ConfigMap", "", "v1", "configmaps"},
  };
  for (size_t i = 0; i < sizeof map / sizeof *map; i++)
    if (!strcmp(map[i].av, api_version) && !strcmp(map[i].kind, kind)) {
      d->group = map[i].group, d->version = map[i].version, d->resource = map[i].resource;
      return 0;
    }
  return -1;
}

/* Reads a file of rendered templates (`rudder template` output) into *set as Helm's install
 * splits and orders it; returns the text, which the caller frees after the set. */
static char *floor__manifests_read(const char *path, manifest_set_t *set) {
  size_t len;
  char *text = floor__read_file(path, &len);
  manifest_file_t file = {.name = "scale-app/templates/all.yaml", .text = text, .len = len};
  manifest_error_t err;
  *set = (manifest_set_t){0};
  if (manifest_build("scale-app", &file, 1, MANIFEST_INSTALL_ORDER, set, &err)) floor__die(path, err.message);
  return text;
}

/* Reads the rendered chart's documents, in Helm's install order: their kinds' paths and names. */
static void floor_manifests_load(floor_t *f, const char *path) {
  manifest_set_t set;
  char *text = floor__manifests_read(path, &set);
  for (size_t i = 0; i < set.ndocs; i++) {
    if (set.docs[i].is_empty) continue;
    if (f->ndocs == FLOOR_MAX_DOCS) floor__die(path, "more documents than the floor takes");
    floor_doc_t *d = &f->docs[f->ndocs];
    if (floor__map(d, set.docs[i].api_version, set.docs[i].kind)) floor__die("a kind the floor does not map", set.docs[i].kind);
    if (!(d->name = strdup(set.docs[i].name))) floor__die("out of memory", NULL);
    f->ndocs++;
  }
  /* The bodies depend on the namespace (metadata.namespace, meta.helm.sh/release-namespace):
   * floor_bodies_make makes them per round. */
  manifest_set_free(&set);
  free(text);
}

/* Makes each document's body (or, with up, the upgrade's) for each of the round's namespaces, as
 * rudder applies them. */
static void floor_bodies_make(floor_t *f, const char *path, int up) {
  manifest_set_t set;
  manifest_error_t err;
  char *text = floor__manifests_read(path, &set);
  size_t di = 0;
  for (size_t i = 0; i < set.ndocs; i++) {
    if (set.docs[i].is_empty) continue;
    if (di == f->ndocs) floor__die(path, "more documents than the install's");
    floor_doc_t *d = &f->docs[di++];
    if (strcmp(d->name, set.docs[i].name)) floor__die(path, "not the same documents as the install's");
    char ***slot = up ? &d->body_up : &d->body;
    if (*slot)
      for (int k = 0; k < f->k; k++) free((*slot)[k]);
    free(*slot);
    char **bodies = *slot = calloc((size_t)f->k, sizeof **slot);
    if (!bodies) floor__die("out of memory", NULL);
    for (int k = 0; k < f->k; k++) {
      cJSON *obj;
      if (manifest_object_json(&set.docs[i], FLOOR_NAME0, f->ns[k], NULL, &obj, &err)) floor__die(path, err.message);
      cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
      if (!cJSON_GetObjectItemCaseSensitive(meta, "namespace") && !cJSON_AddStringToObject(meta, "namespace", f->ns[k]))
        floor__die("out of memory", NULL);
      if (!(bodies[k] = cJSON_PrintUnformatted(obj))) floor__die("out of memory", NULL);
      cJSON_Delete(obj);
    }
  }
  manifest_set_free(&set);
  free(text);
}

/* ---- --watches: rudder's watches, held open ---- */

static const struct {
  const char *path, *selector, *accept;
} floor__mirrors[4] = {
    {"/apis/rudder.dev/v1alpha1/helmreleases", NULL, NULL},
    {"/api/v1/secrets", "owner=helm", "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1"},
    {"/apis/apps/v1/deployments", "app.kubernetes.io/managed-by=Helm", NULL},
    {"/apis/networking.k8s.io/v1/ingresses", "app.kubernetes.io/managed-by=Helm", NULL},
};

typedef struct floor_mirror_req_s {
  floor_t *f;
  int k;
} floor_mirror_req_t;

static void floor__mirror_list(floor_t *f, int k);

static void floor__mirror_event(kube_watch_t *w, const char *type, cJSON *obj, void *data) {
  floor_t *f = data;
  f->mirror_events++;
  const cJSON *rv = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "resourceVersion");
  for (int k = 0; k < 4; k++)
    if (f->mirror[k] == w && cJSON_IsString(rv)) {
      free(f->mirror_rv[k]);
      f->mirror_rv[k] = strdup(rv->valuestring);
    }
}

static void floor__mirror_watch(floor_t *f, int k);

static void floor__mirror_end(kube_watch_t *w, const kube_response_t *res, void *data) {
  floor_t *f = data;
  for (int k = 0; k < 4; k++)
    if (f->mirror[k] == w) {
      f->mirror[k] = NULL;
      if (res->err == UV_ECANCELED) return;
      if (res->status == 200 && f->mirror_rv[k]) floor__mirror_watch(f, k); /* the server's timeout */
      else floor__mirror_list(f, k);                                          /* expired or failed: list again */
    }
}

static void floor__mirror_watch(floor_t *f, int k) {
  buf_t p = BUF_INIT;
  int rc = buf_puts(&p, floor__mirrors[k].path);
  if (floor__mirrors[k].selector) rc |= kube_query_add(&p, "labelSelector", floor__mirrors[k].selector);
  rc |= kube_query_add(&p, "watch", "1");
  rc |= kube_query_add(&p, "allowWatchBookmarks", "true");
  rc |= kube_query_add(&p, "resourceVersion", f->mirror_rv[k]);
  if (rc || !(f->mirror[k] = kube_watch_start_accept(f->client, p.data, floor__mirrors[k].accept, floor__mirror_event,
                                                      floor__mirror_end, f)))
    floor__die("cannot start a watch", floor__mirrors[k].path);
  kube_watch_drop_managed_fields(f->mirror[k]);
  buf_free(&p);
}

static void floor__mirror_listed(const kube_response_t *res, void *data) {
  floor_mirror_req_t *q = data;
  floor_t *f = q->f;
  int k = q->k;
  free(q);
  cJSON *list = kube_response_ok(res) ? cJSON_ParseWithLength(res->body, res->body_len) : NULL;
  const cJSON *rv = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(list, "metadata"), "resourceVersion");
  if (!cJSON_IsString(rv)) floor__die("a list for a watch failed", floor__mirrors[k].path);
  free(f->mirror_rv[k]);
  f->mirror_rv[k] = strdup(rv->valuestring);
  cJSON_Delete(list);
  floor__mirror_watch(f, k);
  f->mirror_up++;
}

/* A one-item list for the resourceVersion to watch from, then the watch. */
static void floor__mirror_list(floor_t *f, int k) {
  buf_t p = BUF_INIT;
  floor_mirror_req_t *q = malloc(sizeof *q);
  int rc = !q || buf_puts(&p, floor__mirrors[k].path);
  if (floor__mirrors[k].selector) rc |= kube_query_add(&p, "labelSelector", floor__mirrors[k].selector);
  rc |= kube_query_add(&p, "limit", "1");
  if (rc) floor__die("out of memory", NULL);
  *q = (floor_mirror_req_t){.f = f, .k = k};
  if (!kube_get(f->client, p.data, floor__mirror_listed, q)) floor__die("cannot list", floor__mirrors[k].path);
  buf_free(&p);
}

/* ---- the phase runner: up to f->limit requests in flight ---- */

static void floor__pump(floor_t *f);

static int floor__step_requests(const floor_t *f, int step) {
  if (step == FLOOR_CHECKS) return (int)f->ndocs + 1;
  if (step == FLOOR_STATUS || step == FLOOR_UP_STATUS) return f->all ? 2 : 1;
  return step == FLOOR_APPLY || step == FLOOR_UP_APPLY ? (int)f->ndocs : 1;
}

/* The step after step (those of --requests all skipped without it). */
static int floor__next_step(const floor_t *f, int step) {
  step++;
  if (!f->all && (step == FLOOR_CHECKS || step == FLOOR_UP_LIST)) step++;
  return step;
}

/* Which record (0: v1, 1: v2) a step writes; -1 for none. */
static int floor__step_record(int step) {
  switch (step) {
  case FLOOR_REC_CREATE: case FLOOR_REC_UPDATE: case FLOOR_UP_OLD_UPDATE: return 0;
  case FLOOR_UP_REC_CREATE: case FLOOR_UP_REC_UPDATE: return 1;
  default: return -1;
  }
}

static void floor__push(floor_t *f, floor_rel_t *x) {
  x->next = NULL;
  if (f->tail) f->tail->next = x;
  else f->head = x;
  f->tail = x;
}

/* Release i's Deployment is ready once a state at least as new as its apply's was Current. */
static void floor__ready_check(floor_t *f, int i) {
  if (f->dep[i].done || !f->dep[i].want || f->dep[i].seen < f->dep[i].want) return;
  f->dep[i].done = 1;
  f->nready++;
  f->ready_at = floor__now(&f->loop);
}

static void floor__watch_end(kube_watch_t *w, const kube_response_t *res, void *data);

static void floor__watch_event(kube_watch_t *w, const char *type, cJSON *obj, void *data) {
  floor_t *f = data;
  if (strcmp(type, "ADDED") && strcmp(type, "MODIFIED")) return;
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
  const cJSON *nm = cJSON_GetObjectItemCaseSensitive(meta, "name");
  const cJSON *gen = cJSON_GetObjectItemCaseSensitive(meta, "generation");
  const char *p = cJSON_IsString(nm) ? strstr(nm->valuestring, "app-") : NULL;
  if (!p || !cJSON_IsNumber(gen)) return;
  int i = atoi(p + 4);
  if (i < 0 || i >= f->n) return;
  ready_result_t r;
  buf_t m = BUF_INIT;
  int current = !ready_compute(obj, READY_WAIT, (int64_t)time(NULL), &r, &m) && r.status == READY_CURRENT;
  buf_free(&m);
  f->dep[i].seen = current ? (long long)gen->valuedouble : -1;
  floor__ready_check(f, i);
}

/* Opens namespace k's watch of Deployments (again when the server ended it). */
static void floor__watch_open(floor_t *f, int k) {
  buf_t path = BUF_INIT;
  if (kube_path(&path, "apps", "v1", "deployments", f->ns[k], NULL, NULL) || kube_query_add(&path, "watch", "1"))
    floor__die("out of memory", NULL);
  if (!(f->watches[k] = kube_watch_start(f->client, path.data, floor__watch_event, floor__watch_end, f)))
    floor__die("cannot start a watch of Deployments", path.data);
  buf_free(&path);
}

static void floor__watch_end(kube_watch_t *w, const kube_response_t *res, void *data) {
  floor_t *f = data;
  for (int k = 0; k < f->k; k++)
    if (f->watches[k] == w) {
      f->watches[k] = NULL;
      if (res->err != UV_ECANCELED) floor__watch_open(f, k);
    }
}

/* The user's write of a timed phase (not the controller's): sent at its own limit, as the
 * harness sends it, and the release's writes follow once it is answered. */
static int floor__user_step(const floor_t *f, int step) {
  return f->user_phase && (step == FLOOR_HR_CREATE || step == FLOOR_UP_USER_PATCH);
}

static void floor__done(const kube_response_t *res, void *data) {
  floor_rel_t *x = data;
  floor_t *f = x->f;
  if (floor__user_step(f, x->step)) f->user_inflight--;
  else f->inflight--;
  x->pending--;
  /* An ownership check's GET of an object not there yet is answered 404, as rudder's are. */
  if (!kube_response_ok(res) && !(x->step == FLOOR_CHECKS && res->status == 404)) {
    if (!f->first_error) {
      buf_t b = BUF_INIT;
      buf_printf(&b, "step %d of %d: %s", x->step, x->i, res->errmsg ? res->errmsg : uv_strerror(res->err));
      f->first_error = buf_steal(&b);
    }
    x->failed = 1; /* the release's later steps are not sent */
  } else if (x->step == FLOOR_HR_CREATE && res->body) {
    const char *p = strstr(res->body, "\"uid\":\"");
    if (p) {
      p += sizeof "\"uid\":\"" - 1;
      size_t n = strcspn(p, "\"");
      if (n < sizeof f->uid[0]) memcpy(f->uid[x->i], p, n), f->uid[x->i][n] = 0;
    }
  } else if (f->ready && (x->step == FLOOR_APPLY || x->step == FLOOR_UP_APPLY) && res->body &&
             strstr(res->body, "\"kind\":\"Deployment\"")) {
    const char *p = strstr(res->body, "\"generation\":");
    if (p) {
      f->dep[x->i].want = atoll(p + sizeof "\"generation\":" - 1);
      floor__ready_check(f, x->i);
    }
  } else if (floor__step_record(x->step) >= 0 && res->body) {
    /* A record's next update goes at the resourceVersion of its last write, as a store's does. */
    const char *p = strstr(res->body, "\"resourceVersion\":\"");
    if (p) {
      p += sizeof "\"resourceVersion\":\"" - 1;
      size_t n = strcspn(p, "\"");
      char *rv = f->rv[x->i][floor__step_record(x->step)];
      if (n < sizeof f->rv[0][0]) memcpy(rv, p, n), rv[n] = 0;
    }
  }
  if (x->pending == 0 && x->sent == floor__step_requests(f, x->step)) {
    if (!x->failed && x->step < f->last_step) {
      x->step = floor__next_step(f, x->step);
      x->sent = 0;
      floor__push(f, x);
    } else {
      f->failed += x->failed;
      f->finished++;
    }
  }
  floor__pump(f);
}

/* Sends request number x->sent of x's step. */
static void floor__send(floor_t *f, floor_rel_t *x) {
  buf_t path = BUF_INIT, body = BUF_INIT;
  char name[16];
  snprintf(name, sizeof name, "app-%05d", x->i % 100000);
  const char *ns = f->ns[x->i % f->k];
  kube_req_t *r = NULL;
  int rc = 0;
  switch (x->step) {
  case FLOOR_NS_CREATE:
    rc = buf_printf(&body, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}", f->ns[x->i]);
    if (!rc) r = kube_create(f->client, "/api/v1/namespaces", body.data, floor__done, x);
    break;
  case FLOOR_HR_CREATE: {
    cJSON *o = cJSON_Duplicate(cJSON_GetArrayItem(f->objects, x->i), 1);
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(o, "metadata");
    cJSON_DeleteItemFromObjectCaseSensitive(meta, "namespace");
    char *s = meta && cJSON_AddStringToObject(meta, "namespace", ns) ? cJSON_PrintUnformatted(o) : NULL;
    cJSON_Delete(o);
    rc = s ? kube_path(&path, "rudder.dev", "v1alpha1", "helmreleases", ns, NULL, NULL) : -ENOMEM;
    if (!rc) r = kube_create(f->client, path.data, s, floor__done, x);
    free(s);
    break;
  }
  case FLOOR_REC_CREATE:
  case FLOOR_REC_UPDATE:
  case FLOOR_UP_REC_CREATE:
  case FLOOR_UP_REC_UPDATE:
  case FLOOR_UP_OLD_UPDATE: {
    static const char *status[] = {[FLOOR_REC_CREATE] = "pending-install", [FLOOR_REC_UPDATE] = "deployed",
                                   [FLOOR_UP_REC_CREATE] = "pending-upgrade", [FLOOR_UP_REC_UPDATE] = "deployed",
                                   [FLOOR_UP_OLD_UPDATE] = "superseded"};
    int update = x->step != FLOOR_REC_CREATE && x->step != FLOOR_UP_REC_CREATE, v = floor__step_record(x->step) + 1;
    const char *rv = f->rv[x->i][v - 1];
    rc = buf_printf(&body,
                    "{\"apiVersion\":\"v1\",\"kind\":\"Secret\",\"metadata\":{\"name\":\"sh.helm.release.v1.%s.v%d\","
                    "\"namespace\":\"%s\",%s%s%s\"labels\":{%s%s%s\"name\":\"%s\",\"owner\":\"helm\",\"status\":\"%s\","
                    "\"version\":\"%d\"}},\"type\":\"helm.sh/release.v1\",\"data\":{\"release\":\"%s\"}}",
                    name, v, ns, update ? "\"resourceVersion\":\"" : "", update ? rv : "", update ? "\"," : "",
                    update ? "\"modifiedAt\":\"" : "", update ? f->now : "", update ? "\"," : "", name, status[x->step], v,
                    f->record_data);
    buf_t rec = BUF_INIT;
    rc |= buf_printf(&rec, "sh.helm.release.v1.%s.v%d", name, v);
    rc |= kube_path(&path, NULL, "v1", "secrets", ns, update && !rc ? rec.data : NULL, NULL);
    buf_free(&rec);
    if (!rc) r = update ? kube_update(f->client, path.data, body.data, floor__done, x)
                        : kube_create(f->client, path.data, body.data, floor__done, x);
    break;
  }
  case FLOOR_APPLY:
  case FLOOR_UP_APPLY: {
    floor_doc_t *d = &f->docs[x->sent];
    rc = buf_puts(&body, (x->step == FLOOR_APPLY ? d->body : d->body_up)[x->i % f->k]);
    buf_t nm = BUF_INIT;
    rc |= buf_puts(&nm, d->name);
    if (!rc) floor__rename(body.data, x->i), floor__rename(nm.data, x->i);
    rc |= kube_path(&path, d->group, d->version, d->resource, ns, nm.data, NULL);
    buf_free(&nm);
    if (!rc) r = kube_apply(f->client, path.data, body.data, "rudder", true, floor__done, x);
    break;
  }
  case FLOOR_CHECKS:
    if (x->sent < (int)f->ndocs) { /* Helm's ownership check of each object new to the release */
      floor_doc_t *d = &f->docs[x->sent];
      buf_t nm = BUF_INIT;
      rc = buf_puts(&nm, d->name);
      if (!rc) floor__rename(nm.data, x->i);
      rc |= kube_path(&path, d->group, d->version, d->resource, ns, nm.data, NULL);
      buf_free(&nm);
      if (!rc) r = kube_get(f->client, path.data, floor__done, x);
    } else { /* the finalizer, sent with the GETs as rudder sends it on a first install */
      rc = kube_path(&path, "rudder.dev", "v1alpha1", "helmreleases", ns, name, NULL);
      if (!rc) r = kube_merge_patch(f->client, path.data, "{\"metadata\":{\"finalizers\":[\"rudder.dev/finalizer\"]}}",
                                    floor__done, x);
    }
    break;
  case FLOOR_UP_USER_PATCH: /* the user's values change, as measure.py sends it */
    rc = buf_printf(&body, "{\"spec\":{\"values\":{\"image\":{\"tag\":\"2.5.%d\"}}}}", x->i % 10);
    rc |= kube_path(&path, "rudder.dev", "v1alpha1", "helmreleases", ns, name, NULL);
    if (!rc) r = kube_merge_patch(f->client, path.data, body.data, floor__done, x);
    break;
  case FLOOR_UP_LIST: { /* the release's records, read before an upgrade */
    buf_t sel = BUF_INIT;
    rc = buf_printf(&sel, "owner=helm,name=%s", name);
    rc |= kube_path(&path, NULL, "v1", "secrets", ns, NULL, NULL);
    if (!rc) rc = kube_query_add(&path, "labelSelector", sel.data);
    buf_free(&sel);
    if (!rc) r = kube_get(f->client, path.data, floor__done, x);
    break;
  }
  case FLOOR_STATUS:
  case FLOOR_UP_STATUS:
    if (x->sent == 1) { /* the Event, in flight with the status patch */
      int up = x->step == FLOOR_UP_STATUS;
      rc = buf_printf(&body,
                      "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"%s.floor%d\",\"namespace\":\"%s\"},"
                      "\"involvedObject\":{\"apiVersion\":\"rudder.dev/v1alpha1\",\"kind\":\"HelmRelease\",\"namespace\":\"%s\","
                      "\"name\":\"%s\",\"uid\":\"%s\"},\"reason\":\"%s\",\"message\":\"Helm %s succeeded for release %s/%s "
                      "with chart scale-app@1.0.0\",\"type\":\"Normal\",\"source\":{\"component\":\"rudder\"},"
                      "\"firstTimestamp\":\"2026-01-01T00:00:00Z\",\"lastTimestamp\":\"2026-01-01T00:00:00Z\",\"count\":1,"
                      "\"reportingComponent\":\"rudder\",\"reportingInstance\":\"rudder\"}",
                      name, f->round * 2 + up, ns, ns, name, f->uid[x->i], up ? "UpgradeSucceeded" : "InstallSucceeded",
                      up ? "upgrade" : "install", ns, name);
      rc |= kube_path(&path, NULL, "v1", "events", ns, NULL, NULL);
      if (!rc) r = kube_create(f->client, path.data, body.data, floor__done, x);
      break;
    }
    rc = kube_path(&path, "rudder.dev", "v1alpha1", "helmreleases", ns, name, "status");
    if (!rc) r = kube_merge_patch(f->client, path.data, x->step == FLOOR_STATUS ? f->status_patch : f->status_patch_up,
                                  floor__done, x);
    break;
  }
  buf_free(&path);
  buf_free(&body);
  if (!r) floor__die("cannot send a request", rc ? "out of memory" : "the client refused it");
  x->sent++;
  x->pending++;
  if (floor__user_step(f, x->step)) f->user_inflight++;
  else f->inflight++;
  f->requests++;
}

static void floor__pump(floor_t *f) {
  /* The user's writes, in release order; each answered one queues its release for the rest. */
  while (f->user_phase && f->user_inflight < f->user_limit && f->user_started < f->count)
    floor__send(f, &f->rels[f->user_started++]);
  while (f->inflight < f->limit) {
    floor_rel_t *x = f->head;
    if (!x) {
      if (f->user_phase || f->started == f->count) return;
      x = &f->rels[f->started++];
      floor__push(f, x);
    }
    floor__send(f, x);
    if (x->sent == floor__step_requests(f, x->step)) {
      f->head = x->next;
      if (!f->head) f->tail = NULL;
    }
  }
}

/* Runs steps first..last for count releases (or namespaces) with up to limit requests in flight;
 * returns the seconds from the first request to the last answer. */
static double floor_phase_run(floor_t *f, int count, int first, int last, int limit) {
  free(f->rels);
  if (!(f->rels = calloc((size_t)count, sizeof *f->rels))) floor__die("out of memory", NULL);
  for (int i = 0; i < count; i++) f->rels[i] = (floor_rel_t){.f = f, .i = i, .step = first};
  f->count = count, f->last_step = last, f->limit = limit;
  f->started = f->finished = f->failed = f->inflight = 0;
  f->user_started = f->user_inflight = 0;
  f->user_phase = f->user && (first == FLOOR_HR_CREATE || first == FLOOR_UP_USER_PATCH) && first != last;
  f->head = f->tail = NULL;
  f->requests = 0;
  double t0 = floor__now(&f->loop);
  floor__pump(f);
  while (f->finished < count) uv_run(&f->loop, UV_RUN_ONCE);
  return floor__now(&f->loop) - t0;
}

/* The figures' prefix: floor, floor_all, floor_user, floor_all_user, ... with _watch, _status. */
static const char *floor__prefix(const floor_t *f) { return f->prefix; }

/* Runs a timed phase of the round (steps first..last for every release at limit in flight) and
 * prints its figures; returns its seconds, or 0 when a release failed. */
static double floor_phase_timed(floor_t *f, const char *what, int limit, int first, int last, int api_pid,
                                int etcd_pid) {
  if (f->ready) { /* the watches first: they see every state after the applies */
    for (int i = 0; i < f->n; i++) f->dep[i].want = 0, f->dep[i].seen = -1, f->dep[i].done = 0;
    f->nready = 0;
    for (int k = 0; k < f->k; k++) floor__watch_open(f, k);
  }
  /* for bench/scale/apiprof.py follow: the API server's profile of this phase starts now */
  fprintf(stderr, "floor: phase %s_c%d_%s begins\n", floor__prefix(f), limit, what);
  fflush(stderr);
  double api0 = floor__proc_cpu(api_pid), etcd0 = floor__proc_cpu(etcd_pid);
  double t0 = floor__now(&f->loop);
  struct timespec wall0;
  clock_gettime(CLOCK_REALTIME, &wall0);
  double s = floor_phase_run(f, f->n, first, last, limit);
  double ready = -1;
  if (f->ready) {
    double deadline = t0 + 600;
    while (f->nready < f->n - f->failed && floor__now(&f->loop) < deadline) uv_run(&f->loop, UV_RUN_NOWAIT), usleep(1000);
    if (f->nready >= f->n - f->failed) ready = (f->ready_at > t0 + s ? f->ready_at : t0 + s) - t0;
    for (int k = 0; k < f->k; k++)
      if (f->watches[k]) kube_watch_stop(f->watches[k]);
  }
  double api1 = floor__proc_cpu(api_pid), etcd1 = floor__proc_cpu(etcd_pid);
  const char *pre = floor__prefix(f);
  double w0 = (double)wall0.tv_sec + wall0.tv_nsec / 1e9; /* the window, for bench/scale/auditsplit.py */
  fprintf(stderr, "floor: window %s_c%d_%s %.3f %.3f\n", pre, limit, what, w0, w0 + (ready >= 0 ? ready : s));
  printf("%s_c%d_%s_seconds %.3f s\n", pre, limit, what, s);
  f->last_ready = f->failed ? -1 : ready;
  if (f->ready && ready >= 0) printf("%s_c%d_%s_ready_seconds %.3f s\n", pre, limit, what, ready);
  if (f->ready && ready < 0) fprintf(stderr, "floor: concurrency %d: %s: %d of %d Deployments not ready after 600 s\n", limit, what, f->n - f->nready, f->n);
  printf("%s_c%d_%s_requests %lu requests\n", pre, limit, what, f->requests);
  printf("%s_c%d_%s_requests_per_second %.1f 1/s\n", pre, limit, what, (double)f->requests / s);
  printf("%s_c%d_%s_failed_releases %d count\n", pre, limit, what, f->failed);
  if (api_pid) printf("%s_c%d_%s_apiserver_cpu_seconds %.2f s\n", pre, limit, what, api1 - api0);
  if (etcd_pid) printf("%s_c%d_%s_etcd_cpu_seconds %.2f s\n", pre, limit, what, etcd1 - etcd0);
  fflush(stdout);
  if (f->first_error) fprintf(stderr, "floor: concurrency %d: %s: first failure: %s\n", limit, what, f->first_error);
  free(f->first_error);
  f->first_error = NULL;
  return f->failed ? 0 : s;
}

/* ---- main ---- */

static void floor__closed(void *data) { *(int *)data = 1; }

int main(int argc, char **argv) {
  const char *kubeconfig = NULL, *objects = NULL, *manifests = NULL, *record = NULL, *status = NULL, *up = NULL;
  const char *concurrency = "10,25,50,100";
  int releases = 0, namespaces = 4, api_pid = 0, etcd_pid = 0, all = 0, f_ready = 0, user = 0, user_limit = 8;
  int watches = 0;
  const char *up_status = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v && strcmp(a, "--ready") && strcmp(a, "--user-writes") && strcmp(a, "--watches"))
      floor__die("a flag without its value", a);
    i++;
    if (!strcmp(a, "--kubeconfig")) kubeconfig = v;
    else if (!strcmp(a, "--objects")) objects = v;
    else if (!strcmp(a, "--manifests")) manifests = v;
    else if (!strcmp(a, "--upgrade-manifests")) up = v;
    else if (!strcmp(a, "--record")) record = v;
    else if (!strcmp(a, "--status")) status = v;
    else if (!strcmp(a, "--releases")) releases = atoi(v);
    else if (!strcmp(a, "--namespaces")) namespaces = atoi(v);
    else if (!strcmp(a, "--concurrency")) concurrency = v;
    else if (!strcmp(a, "--apiserver-pid")) api_pid = atoi(v);
    else if (!strcmp(a, "--etcd-pid")) etcd_pid = atoi(v);
    else if (!strcmp(a, "--user-concurrency")) {
      if ((user_limit = atoi(v)) < 1) floor__die("--user-concurrency wants a positive number", v);
    }
    else if (!strcmp(a, "--ready")) {
      f_ready = 1;
      i--; /* takes no value */
    } else if (!strcmp(a, "--user-writes")) {
      user = 1;
      i--;
    } else if (!strcmp(a, "--watches")) {
      watches = 1;
      i--;
    } else if (!strcmp(a, "--upgrade-status")) {
      up_status = v;
    } else if (!strcmp(a, "--requests")) {
      if (strcmp(v, "writes") && strcmp(v, "all")) floor__die("--requests wants writes or all", v);
      all = !strcmp(v, "all");
    } else floor__die("unknown flag (see the comment at the top of bench/scale/floor.c)", a);
  }
  if (!kubeconfig || !objects || !manifests || !record || !status)
    floor__die("needs --kubeconfig, --objects, --manifests, --record and --status", NULL);

  static floor_t fl;
  floor_t *f = &fl;
  f->all = all;
  f->ready = f_ready;
  f->user = user;
  f->user_limit = user_limit;
  snprintf(f->prefix, sizeof f->prefix, "floor%s%s%s%s", all ? "_all" : "", user ? "_user" : "", watches ? "_watch" : "",
           up_status ? "_status" : "");  char *text = floor__read_file(objects, NULL);
  f->objects = cJSON_Parse(text);
  free(text);
  if (!cJSON_IsArray(f->objects)) floor__die(objects, "not a JSON array");
  if (releases <= 0) releases = cJSON_GetArraySize(f->objects);
  if (releases > cJSON_GetArraySize(f->objects)) floor__die(objects, "fewer objects than --releases");
  f->n = releases;
  f->k = namespaces < 1 ? 1 : namespaces > releases ? releases : namespaces;

  /* The record's data and the status, from the Secret and the HelmRelease rudder made for release 0. */
  text = floor__read_file(record, NULL);
  cJSON *sec = cJSON_Parse(text);
  free(text);
  const cJSON *rel = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(sec, "data"), "release");
  if (!cJSON_IsString(rel) || !(f->record_data = strdup(rel->valuestring))) floor__die(record, "no data.release");
  cJSON_Delete(sec);
  text = floor__read_file(status, NULL);
  cJSON *hr = cJSON_Parse(text);
  free(text);
  cJSON *st = cJSON_DetachItemFromObjectCaseSensitive(hr, "status");
  if (!cJSON_IsObject(st)) floor__die(status, "no status");
  cJSON *patch = cJSON_CreateObject();
  if (!patch) floor__die("out of memory", NULL);
  cJSON_AddItemToObject(patch, "status", st);
  if (!(f->status_patch = cJSON_PrintUnformatted(patch))) floor__die("out of memory", NULL);
  const char *revs[] = {"lastAppliedRevision", "lastAttemptedRevision"};
  for (size_t i = 0; i < sizeof revs / sizeof *revs; i++)
    if (cJSON_GetObjectItemCaseSensitive(st, revs[i])) cJSON_ReplaceItemInObjectCaseSensitive(st, revs[i], cJSON_CreateNumber(2));
  if (!(f->status_patch_up = cJSON_PrintUnformatted(patch))) floor__die("out of memory", NULL);
  cJSON_Delete(patch);
  cJSON_Delete(hr);
  if (up_status) { /* the status rudder wrote at revision 2 */
    text = floor__read_file(up_status, NULL);
    hr = cJSON_Parse(text);
    free(text);
    st = cJSON_DetachItemFromObjectCaseSensitive(hr, "status");
    if (!cJSON_IsObject(st)) floor__die(up_status, "no status");
    patch = cJSON_CreateObject();
    if (!patch) floor__die("out of memory", NULL);
    cJSON_AddItemToObject(patch, "status", st);
    free(f->status_patch_up);
    if (!(f->status_patch_up = cJSON_PrintUnformatted(patch))) floor__die("out of memory", NULL);
    cJSON_Delete(patch);
    cJSON_Delete(hr);
  }
  floor_manifests_load(f, manifests);

  kube_config_t cfg;
  char *err = NULL;
  if (kube_config_load(kubeconfig, NULL, &cfg, &err)) floor__die(kubeconfig, err);
  uv_loop_init(&f->loop);
  if (kube_client_new(&f->loop, &cfg, &f->client, &err)) floor__die("kube_client_new", err);
  kube_config_free(&cfg);

  printf("floor_releases %d count\nfloor_objects_per_release %zu count\nfloor_record_data_bytes %zu B\n"
         "floor_status_patch_bytes %zu B\n", f->n, f->ndocs, strlen(f->record_data), strlen(f->status_patch));
  if (!(f->rv = calloc((size_t)f->n, sizeof *f->rv)) || !(f->uid = calloc((size_t)f->n, sizeof *f->uid)) ||
      !(f->dep = calloc((size_t)f->n, sizeof *f->dep)) || !(f->watches = calloc((size_t)f->k, sizeof *f->watches)))
    floor__die("out of memory", NULL);
  if (watches) { /* rudder's watches, open before the first round as its caches are */
    for (int k = 0; k < 4; k++) floor__mirror_list(f, k);
    while (f->mirror_up < 4) uv_run(&f->loop, UV_RUN_ONCE);
  }
  double best = 0, best_up = 0, best_ready = -1, best_up_ready = -1;
  int best_c = 0, best_up_c = 0;
  for (const char *c = concurrency; *c;) {
    int limit = atoi(c);
    if (limit < 1) floor__die("--concurrency wants positive numbers", concurrency);
    /* Enough connections for the requests in flight, and no client-side limit: the floor is the server's. */
    kube_client_limits_t l = {.max_conns = (size_t)limit, .max_idle = (size_t)limit, .qps = -1};
    kube_client_set_limits(f->client, &l);
    if (!(f->ns = calloc((size_t)f->k, sizeof *f->ns))) floor__die("out of memory", NULL);
    for (int k = 0; k < f->k; k++) {
      buf_t b = BUF_INIT;
      if (buf_printf(&b, "floor%s%s%s%s-c%d-%d", all ? "-all" : "", user ? "-user" : "", watches ? "-watch" : "",
                     up_status ? "-status" : "", limit, k + 1))
        floor__die("out of memory", NULL);
      f->ns[k] = buf_steal(&b);
    }
    floor_bodies_make(f, manifests, 0);
    if (up) floor_bodies_make(f, up, 1);
    fprintf(stderr, "floor: concurrency %d: making %d namespaces%s (untimed)\n", limit, f->k,
            user ? "" : " and the HelmReleases");
    floor_phase_run(f, f->k, FLOOR_NS_CREATE, FLOOR_NS_CREATE, 10);
    if (!user) floor_phase_run(f, f->n, FLOOR_HR_CREATE, FLOOR_HR_CREATE, 25);
    if (f->failed) floor__die("the untimed setup failed", f->first_error);
    memset(f->rv, 0, (size_t)f->n * sizeof *f->rv);
    snprintf(f->now, sizeof f->now, "%lld", (long long)time(NULL));
    f->round++;
    double s = floor_phase_timed(f, "install", limit, user ? FLOOR_HR_CREATE : all ? FLOOR_CHECKS : FLOOR_REC_CREATE,
                                 FLOOR_STATUS, api_pid, etcd_pid);
    if (s > 0 && (!best_c || s < best)) best = s, best_c = limit;
    if (f->last_ready >= 0 && (best_ready < 0 || f->last_ready < best_ready)) best_ready = f->last_ready;
    if (up) {
      s = floor_phase_timed(f, "upgrade", limit, user ? FLOOR_UP_USER_PATCH : all ? FLOOR_UP_LIST : FLOOR_UP_REC_CREATE,
                            FLOOR_UP_STATUS, api_pid, etcd_pid);
      if (s > 0 && (!best_up_c || s < best_up)) best_up = s, best_up_c = limit;
      if (f->last_ready >= 0 && (best_up_ready < 0 || f->last_ready < best_up_ready)) best_up_ready = f->last_ready;
    }
    for (int k = 0; k < f->k; k++) free(f->ns[k]);
    free(f->ns);
    f->ns = NULL;
    c += strcspn(c, ",");
    if (*c == ',') c++;
  }
  const char *pre = floor__prefix(f);
  if (best_c) {
    printf("%s_install_seconds %.3f s\n", pre, best);
    printf("%s_best_concurrency %d count\n", pre, best_c);
  }
  if (best_ready >= 0) printf("%s_install_ready_seconds %.3f s\n", pre, best_ready);
  if (best_up_ready >= 0) printf("%s_upgrade_ready_seconds %.3f s\n", pre, best_up_ready);
  if (best_up_c) {
    printf("%s_upgrade_seconds %.3f s\n", pre, best_up);
    printf("%s_upgrade_best_concurrency %d count\n", pre, best_up_c);
  }
  if (watches) {
    printf("%s_watch_events %lu count\n", pre, f->mirror_events);
    for (int k = 0; k < 4; k++) {
      if (f->mirror[k]) kube_watch_stop(f->mirror[k]);
      free(f->mirror_rv[k]);
    }
  }
  int closed = 0;
  kube_client_close(f->client, floor__closed, &closed);
  while (!closed) uv_run(&f->loop, UV_RUN_ONCE);
  return best_c ? 0 : 1;
}
