/* Drift detection's watches (see drift.h). */
#include "reconcile/drift.h"
#include "base/buf.h"
#include "base/log.h"
#include "helm/action/fields.h"
#include "watch/informer.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The cached text "r": 16 hex digits of the digest of the fields rudder's apply owns, 8 of the time of
 * that apply (an apply by rudder changes it; someone else taking fields does not), a flag, then
 * "storage-namespace/release". */
#define DRIFT_FIELDS_LEN 16
#define DRIFT_DIGEST_LEN 24
/* suspect: changed by someone else, not compared yet; drifted: compared and left drifted (warn mode),
 * compared again whenever someone else writes it (it may have been put back by hand). */
enum { DRIFT_FLAG_NONE = '-', DRIFT_FLAG_SUSPECT = 's', DRIFT_FLAG_OPTOUT = 'o', DRIFT_FLAG_DRIFTED = 'd' };

typedef struct drift_kind_s {
  struct drift_kind_s *next;
  drift_t *d;
  char *group, *resource; /* version: whichever was asked first (the server serves them all) */
  informer_t *inf;
} drift_kind_t;

struct drift_s {
  kube_client_t *c;
  char *ns;              /* watched only there, or NULL: everywhere */
  char *field_manager;
  drift_changed_cb changed;
  drift_synced_cb synced;
  void *data;
  drift_kind_t *kinds;
  int stopping;
  size_t stops_pending;
  void (*stop_cb)(void *);
  void *stop_data;
};

static const char *drift__str(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Reduces an owned object to what drift needs (the informer's transform). */
static void drift__transform(cJSON *obj, void *data) {
  drift_kind_t *k = data;
  const char *fm = k->d->field_manager;
  cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
  const cJSON *labels = cJSON_GetObjectItemCaseSensitive(meta, "labels");
  const char *rn = drift__str(labels, DRIFT_LABEL_NAME), *rns = drift__str(labels, DRIFT_LABEL_NAMESPACE);
  const char *opt = drift__str(cJSON_GetObjectItemCaseSensitive(meta, "annotations"), ACT_DRIFT_ANNOTATION);
  char flag = opt && !strcmp(opt, "disabled") ? DRIFT_FLAG_OPTOUT
              : fields_written_by_other(obj, fm) ? DRIFT_FLAG_SUSPECT : DRIFT_FLAG_NONE;
  buf_t r = BUF_INIT;
  uint32_t th = 2166136261u;
  for (const char *s = fields_applied_time(obj, fm); s && *s; s++) th = (th ^ (unsigned char)*s) * 16777619u;
  buf_printf(&r, "%016" PRIx64 "%08" PRIx32 "%c%s/%s", fields_digest(obj, fm), th, flag, rns ? rns : "", rn ? rn : "");
  /* Everything else goes (the uid too: a deleted and recreated object is seen by its delete event):
   * the cache holds name, namespace, resourceVersion and this one text, under 1 KiB per object. */
  for (cJSON *it = obj->child, *nx; it; it = nx) {
    nx = it->next;
    if (it != meta) cJSON_Delete(cJSON_DetachItemViaPointer(obj, it));
  }
  for (cJSON *it = meta ? meta->child : NULL, *nx; it; it = nx) {
    nx = it->next;
    if (strcmp(it->string, "name") && strcmp(it->string, "namespace") && strcmp(it->string, "resourceVersion"))
      cJSON_Delete(cJSON_DetachItemViaPointer(meta, it));
  }
  if (r.data) cJSON_AddStringToObject(obj, "r", r.data);
  buf_free(&r);
}

/* The cached text of obj, or NULL. */
static char *drift__text(const cJSON *obj) {
  cJSON *r = cJSON_GetObjectItemCaseSensitive(obj, "r");
  return cJSON_IsString(r) && strlen(r->valuestring) > DRIFT_DIGEST_LEN ? r->valuestring : NULL;
}

static void drift__notify(drift_kind_t *k, const char *text) {
  const char *release = text + DRIFT_DIGEST_LEN + 1;
  if (strchr(release, '/') && release[0] != '/' && release[strlen(release) - 1] != '/') k->d->changed(release, k->d->data);
}

static void drift__on_add(informer_t *inf, const char *key, const cJSON *obj, void *data) {
  (void)inf;
  (void)key;
  char *t = drift__text(obj);
  /* Written by someone else since rudder last applied it (seen at start, or a new object made by
   * someone else with the labels): compared once. */
  if (t && t[DRIFT_DIGEST_LEN] == DRIFT_FLAG_SUSPECT) drift__notify(data, t);
}

static void drift__on_update(informer_t *inf, const char *key, const cJSON *old, const cJSON *obj, void *data) {
  (void)inf;
  (void)key;
  char *t = drift__text(obj), *o = drift__text(old);
  if (!t) return;
  char now = t[DRIFT_DIGEST_LEN], before = o ? o[DRIFT_DIGEST_LEN] : DRIFT_FLAG_NONE;
  if (now == DRIFT_FLAG_OPTOUT) return;
  if (!o || memcmp(t, o, DRIFT_FIELDS_LEN)) { /* the fields rudder's apply owns changed */
    /* Without a new apply by rudder, someone else took some: compared at once. (An apply in the same
     * second as the one before looks the same: compared too, and found in sync.) */
    if (!o || !memcmp(t + DRIFT_FIELDS_LEN, o + DRIFT_FIELDS_LEN, DRIFT_DIGEST_LEN - DRIFT_FIELDS_LEN)) {
      t[DRIFT_DIGEST_LEN] = DRIFT_FLAG_SUSPECT;
      drift__notify(data, t);
    } else {
      t[DRIFT_DIGEST_LEN] = DRIFT_FLAG_NONE; /* rudder's own apply took back all it wants */
    }
    return;
  }
  /* The same fields: someone wrote fields rudder does not own (not drift), or touched one known to
   * have drifted (compared again). A suspicion not yet compared stays. */
  t[DRIFT_DIGEST_LEN] = before == DRIFT_FLAG_SUSPECT || before == DRIFT_FLAG_DRIFTED ? before : DRIFT_FLAG_NONE;
  if (before == DRIFT_FLAG_DRIFTED && now == DRIFT_FLAG_SUSPECT) drift__notify(data, t);
}

static void drift__on_delete(informer_t *inf, const char *key, const cJSON *obj, void *data) {
  (void)inf;
  (void)key;
  char *t = drift__text(obj);
  if (t && t[DRIFT_DIGEST_LEN] != DRIFT_FLAG_OPTOUT) drift__notify(data, t);
}

static void drift__on_synced(informer_t *inf, void *data) {
  (void)inf;
  drift_kind_t *k = data;
  k->d->synced(k->d->data);
}

int drift_new(kube_client_t *c, const char *ns, const char *field_manager, drift_changed_cb changed,
              drift_synced_cb synced, void *data, drift_t **out) {
  drift_t *d = calloc(1, sizeof *d);
  if (!d || !(d->field_manager = strdup(field_manager ? field_manager : "rudder")) || (ns && !(d->ns = strdup(ns)))) {
    if (d) free(d->field_manager);
    free(d);
    return UV_ENOMEM;
  }
  d->c = c;
  d->changed = changed;
  d->synced = synced;
  d->data = data;
  *out = d;
  return 0;
}

static drift_kind_t *drift__kind(const drift_t *d, const char *group, const char *resource) {
  for (drift_kind_t *k = d->kinds; k; k = k->next)
    if (!strcmp(k->group, group) && !strcmp(k->resource, resource)) return k;
  return NULL;
}

int drift_watch(drift_t *d, const char *group, const char *version, const char *resource, bool namespaced) {
  if (d->stopping || (d->ns && !namespaced)) return 0; /* a tenant's watches: its namespace only */
  if (drift__kind(d, group, resource)) return 0;
  drift_kind_t *k = calloc(1, sizeof *k);
  buf_t path = BUF_INIT;
  if (!k || !(k->group = strdup(group)) || !(k->resource = strdup(resource)) ||
      kube_path(&path, group, version, resource, d->ns, NULL, NULL)) {
    if (k) {
      free(k->group);
      free(k->resource);
    }
    free(k);
    buf_free(&path);
    return UV_ENOMEM;
  }
  k->d = d;
  static const char *const keep[] = {"metadata.labels", "metadata.annotations", "metadata.managedFields", NULL};
  informer_opts_t o = {.path = path.data, .label_selector = DRIFT_LABEL_NAME, .keep = keep,
                       .transform = drift__transform, .transform_data = k, .metadata_only = true};
  informer_handlers_t h = {.on_add = drift__on_add, .on_update = drift__on_update, .on_delete = drift__on_delete,
                           .on_synced = drift__on_synced, .data = k};
  int rc = informer_start(d->c, &o, &h, &k->inf);
  buf_free(&path);
  if (rc) {
    free(k->group);
    free(k->resource);
    free(k);
    return rc;
  }
  LOG_I("watching owned objects for drift", "group", group, "resource", resource);
  k->next = d->kinds;
  d->kinds = k;
  return 0;
}

/* The cached text of o in its kind's cache, or NULL (not cached). */
static char *drift__cached(const drift_kind_t *k, const act_drift_obj_t *o) {
  buf_t key = BUF_INIT;
  if (*o->ns) buf_printf(&key, "%s/%s", o->ns, o->name);
  else buf_puts(&key, o->name);
  const cJSON *obj = k && key.data ? informer_get(k->inf, key.data) : NULL;
  buf_free(&key);
  return obj ? drift__text(obj) : NULL;
}

int drift_check(drift_t *d, const act_drift_obj_t *o, bool all) {
  if (d->ns && strcmp(o->ns, d->ns)) return ACT_DRIFT_SKIP; /* outside the tenant's namespace: not watched */
  drift_kind_t *k = drift__kind(d, o->group, o->resource);
  if (!k || !informer_has_synced(k->inf)) return ACT_DRIFT_UNSYNCED;
  char *t = drift__cached(k, o);
  if (!t) return ACT_DRIFT_CHECK; /* deleted, or its labels taken off */
  if (t[DRIFT_DIGEST_LEN] == DRIFT_FLAG_OPTOUT) return ACT_DRIFT_SKIP;
  if (t[DRIFT_DIGEST_LEN] == DRIFT_FLAG_DRIFTED) return ACT_DRIFT_CHECK;
  if (t[DRIFT_DIGEST_LEN] == DRIFT_FLAG_SUSPECT) {
    t[DRIFT_DIGEST_LEN] = DRIFT_FLAG_NONE; /* compared now; the next change by someone else flags it again */
    return ACT_DRIFT_CHECK;
  }
  return all ? ACT_DRIFT_CHECK : ACT_DRIFT_SKIP;
}

void drift_mark(drift_t *d, const act_drift_obj_t *o, bool drifted) {
  char *t = drift__cached(drift__kind(d, o->group, o->resource), o);
  if (t && t[DRIFT_DIGEST_LEN] != DRIFT_FLAG_OPTOUT)
    t[DRIFT_DIGEST_LEN] = drifted ? DRIFT_FLAG_DRIFTED : t[DRIFT_DIGEST_LEN] == DRIFT_FLAG_DRIFTED ? DRIFT_FLAG_NONE
                                                                                                : t[DRIFT_DIGEST_LEN];
}

size_t drift_objects(const drift_t *d) {
  size_t n = 0;
  for (drift_kind_t *k = d->kinds; k; k = k->next) n += informer_count(k->inf);
  return n;
}

size_t drift_bytes(const drift_t *d) {
  size_t n = 0;
  for (drift_kind_t *k = d->kinds; k; k = k->next) n += informer_memory(k->inf).bytes + sizeof *k;
  return n;
}

static void drift__finish_stop(drift_t *d) {
  void (*cb)(void *) = d->stop_cb;
  void *data = d->stop_data;
  free(d->field_manager);
  free(d->ns);
  free(d);
  if (cb) cb(data);
}

static void drift__kind_stopped(void *data) {
  drift_kind_t *k = data;
  drift_t *d = k->d;
  free(k->group);
  free(k->resource);
  free(k);
  if (--d->stops_pending == 0) drift__finish_stop(d);
}

void drift_stop(drift_t *d, void (*cb)(void *data), void *data) {
  d->stopping = 1;
  d->stop_cb = cb;
  d->stop_data = data;
  drift_kind_t *k = d->kinds;
  d->kinds = NULL;
  size_t n = 0;
  for (drift_kind_t *x = k; x; x = x->next) n++;
  if (!n) {
    drift__finish_stop(d);
    return;
  }
  d->stops_pending = n;
  while (k) {
    drift_kind_t *nx = k->next;
    informer_stop(k->inf, drift__kind_stopped, k);
    k = nx;
  }
}
