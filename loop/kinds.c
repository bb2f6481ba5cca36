/* The kinds the controller serves, started and stopped as their CRDs come and go (kinds.h). */
#include "loop/kinds.h"
#include "base/log.h"
#include "reconcile/doors/doors.h"
#include "reconcile/sources/chartrepo.h"
#include "reconcile/sources/helmrepository.h"
#include "watch/informer.h"
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int kinds__engine_start(const kinds_env_t *env, const kind_row_t *row, void **out) {
  engine_t *e = NULL;
  int rc = engine_start(env->loop, env->client, env->disc, row->door, env->eopts, &e);
  *out = e;
  return rc;
}

static void kinds__engine_stop(void *h, void (*cb)(void *data), void *data) { engine_stop(h, cb, data); }

static int kinds__repos_start(const kinds_env_t *env, const kind_row_t *row, void **out) {
  (void)row;
  repoctl_opts_t ro = {.namespace = env->eopts->namespace, .events = env->eopts->events,
                       .label_selector = env->eopts->label_selector};
  repoctl_t *r = NULL;
  int rc = repoctl_start(env->loop, env->client, env->source, &ro, &r);
  *out = r;
  return rc;
}

static void kinds__repos_stop(void *h, void (*cb)(void *data), void *data) { repoctl_stop(h, cb, data); }

/* ChartRepos are read (and Charts written) in the chart-repository namespace only. */
static int kinds__chartrepos_start(const kinds_env_t *env, const kind_row_t *row, void **out) {
  (void)row;
  chartrepo_opts_t co = {.namespace = env->eopts->door_ctx.chartrepo_namespace, .events = env->eopts->events,
                         .publish_charts = env->publish_charts, .label_selector = env->eopts->label_selector};
  chartrepo_t *r = NULL;
  int rc = chartrepo_start(env->loop, env->client, env->source, &co, &r);
  *out = r;
  return rc;
}

static void kinds__chartrepos_stop(void *h, void (*cb)(void *data), void *data) { chartrepo_stop(h, cb, data); }

/* The kinds that are not front doors: one row each (the front doors come from reconcile/doors'
 * table, each served by a release engine). They need the chart sources. */
static const kind_row_t kinds__sources[] = {
    {"HelmRepository", "rudder.dev", "v1alpha1", "helmrepositories", NULL, kinds__repos_start, kinds__repos_stop},
    {"ChartRepo", "app.alauda.io", "v1beta1", "chartrepos", NULL, kinds__chartrepos_start, kinds__chartrepos_stop},
};

typedef enum { KE_IDLE, KE_RUNNING, KE_STOPPING } ke_state_t;

typedef struct kinds__entry_s {
  kind_row_t row;
  kinds_t *k;
  char *crd;          /* the CRD's name, <resource>.<group> */
  bool selected;      /* by --kinds (all without it) */
  ke_state_t state;
  void *h;            /* the running reconciler */
  const char *said;   /* why it is not served, as last logged (so it is logged once) */
} kinds__entry_t;

struct kinds_s {
  kinds__entry_t *e;
  size_t n;
  kinds_env_t env;
  informer_t *crds;
  void (*on_fatal)(void *data);
  void *data;
  bool started, stopping;
  size_t pending; /* stops still to finish once kinds_stop was called */
  void (*stop_cb)(void *data);
  void *stop_data;
};

static void kinds__free(kinds_t *k) {
  for (size_t i = 0; i < k->n; i++) free(k->e[i].crd);
  free(k->e);
  free(k);
}

static int kinds__match(const kind_row_t *r, const char *name, size_t len) {
  size_t kl = strlen(r->kind), rl = strlen(r->resource), gl = strlen(r->group);
  if ((len == kl && !strncasecmp(name, r->kind, len)) || (len == rl && !strncasecmp(name, r->resource, len))) return 1;
  /* Kind.group or resource.group */
  if (len == kl + 1 + gl && !strncasecmp(name, r->kind, kl) && name[kl] == '.' && !strncasecmp(name + kl + 1, r->group, gl))
    return 1;
  return len == rl + 1 + gl && !strncasecmp(name, r->resource, rl) && name[rl] == '.' &&
         !strncasecmp(name + rl + 1, r->group, gl);
}

static void kinds__known(const kinds_t *k, buf_t *err) {
  for (size_t i = 0; i < k->n; i++) buf_printf(err, "%s%s (%s)", i ? ", " : "", k->e[i].row.kind, k->e[i].row.group);
}

int kinds_new(const char *list, kinds_t **out, buf_t *err) {
  size_t ndoors = 0;
  while (doors[ndoors]) ndoors++;
  size_t nsrc = sizeof kinds__sources / sizeof *kinds__sources;
  kinds_t *k = calloc(1, sizeof *k);
  if (!k || !(k->e = calloc(ndoors + nsrc, sizeof *k->e))) {
    free(k);
    buf_puts(err, "out of memory");
    return -12;
  }
  for (size_t i = 0; i < ndoors + nsrc; i++, k->n++) {
    kinds__entry_t *e = &k->e[i];
    if (i < ndoors) {
      const door_t *d = doors[i];
      e->row = (kind_row_t){d->kind, d->group, d->version, d->resource, d, kinds__engine_start, kinds__engine_stop};
    } else {
      e->row = kinds__sources[i - ndoors];
    }
    e->k = k;
    e->selected = list == NULL;
    buf_t n = BUF_INIT;
    buf_printf(&n, "%s.%s", e->row.resource, e->row.group);
    if (!(e->crd = buf_steal(&n))) {
      kinds__free(k);
      buf_puts(err, "out of memory");
      return -12;
    }
  }
  if (list && !*list) {
    buf_puts(err, "--kinds: give at least one kind; the known kinds are ");
    kinds__known(k, err);
    kinds__free(k);
    return -22;
  }
  for (const char *p = list; p;) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    const char *next = end ? end + 1 : NULL;
    while (len && (*p == ' ' || *p == '\t')) p++, len--;
    while (len && (p[len - 1] == ' ' || p[len - 1] == '\t')) len--;
    int found = 0;
    for (size_t i = 0; len && i < k->n; i++)
      if (kinds__match(&k->e[i].row, p, len)) {
        k->e[i].selected = true;
        found = 1;
      }
    if (!found) {
      if (len) buf_printf(err, "--kinds: unknown kind \"%.*s\"; the known kinds are ", (int)len, p);
      else buf_printf(err, "--kinds: an empty kind name in \"%s\"; the known kinds are ", list);
      kinds__known(k, err);
      kinds__free(k);
      return -22;
    }
    p = next;
  }
  *out = k;
  return 0;
}

int kinds_describe(buf_t *out) {
  kinds_t *k;
  int rc = kinds_new(NULL, &k, out);
  if (rc) return rc;
  kinds__known(k, out);
  kinds__free(k);
  return 0;
}

/* ---- the CRD watch ---- */

static kinds__entry_t *kinds__find(kinds_t *k, const char *crd) {
  for (size_t i = 0; crd && i < k->n; i++)
    if (!strcmp(k->e[i].crd, crd)) return &k->e[i];
  return NULL;
}

/* The cache keeps of our CRDs only what readiness needs, and of the others nothing but identity. */
static void kinds__trim(cJSON *obj, void *data) {
  kinds_t *k = data;
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
  const cJSON *name = cJSON_GetObjectItemCaseSensitive(meta, "name");
  if (!kinds__find(k, cJSON_IsString(name) ? name->valuestring : NULL)) {
    cJSON_DeleteItemFromObjectCaseSensitive(obj, "spec");
    cJSON_DeleteItemFromObjectCaseSensitive(obj, "status");
    return;
  }
  cJSON *versions = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "spec"), "versions");
  cJSON *v;
  cJSON_ArrayForEach(v, versions) {
    for (cJSON *f = v->child, *nx; f; f = nx) {
      nx = f->next;
      if (!f->string || (strcmp(f->string, "name") && strcmp(f->string, "served"))) cJSON_Delete(cJSON_DetachItemViaPointer(v, f));
    }
  }
  cJSON *conds = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "status"), "conditions");
  for (cJSON *c = conds ? conds->child : NULL, *nx; c; c = nx) {
    nx = c->next;
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(c, "type");
    if (!cJSON_IsString(t) || strcmp(t->valuestring, "Established")) {
      cJSON_Delete(cJSON_DetachItemViaPointer(conds, c));
      continue;
    }
    for (cJSON *f = c->child, *fn; f; f = fn) {
      fn = f->next;
      if (!f->string || (strcmp(f->string, "type") && strcmp(f->string, "status"))) cJSON_Delete(cJSON_DetachItemViaPointer(c, f));
    }
  }
}

/* NULL when crd lets row's kind be served, else why not. */
static const char *kinds__not_ready(const cJSON *crd, const kind_row_t *row) {
  if (!crd) return "its CRD is not installed";
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive(crd, "metadata");
  if (cJSON_GetObjectItemCaseSensitive(meta, "deletionTimestamp")) return "its CRD is being deleted";
  const cJSON *spec = cJSON_GetObjectItemCaseSensitive(crd, "spec");
  const cJSON *v;
  int served = 0;
  cJSON_ArrayForEach(v, cJSON_GetObjectItemCaseSensitive(spec, "versions")) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(v, "name");
    if (cJSON_IsString(n) && !strcmp(n->valuestring, row->version) && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(v, "served")))
      served = 1;
  }
  if (!served) return "its CRD does not serve the version rudder reads";
  const cJSON *c;
  cJSON_ArrayForEach(c, cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(crd, "status"), "conditions")) {
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(c, "status");
    if (cJSON_IsString(st) && !strcmp(st->valuestring, "True")) return NULL; /* only Established is kept */
  }
  return "its CRD is not established yet";
}

static void kinds__not_served(kinds__entry_t *e, const char *why) {
  if (e->said == why) return;
  e->said = why;
  LOG_I("kind not served", "kind", e->row.kind, "crd", e->crd, "version", e->row.version, "reason", why);
}

/* Starts e's reconciler when its CRD is ready and nothing of it runs. */
static void kinds__consider(kinds__entry_t *e) {
  kinds_t *k = e->k;
  if (k->stopping || !e->selected || e->state != KE_IDLE || !k->crds) return;
  const char *why = kinds__not_ready(informer_get(k->crds, e->crd), &e->row);
  if (!why && !e->row.door && !k->env.source) why = "the chart sources could not be set up";
  if (why) {
    kinds__not_served(e, why);
    return;
  }
  int rc = e->row.start(&k->env, &e->row, &e->h);
  if (rc) {
    LOG_E("cannot start the kind's reconciler", "kind", e->row.kind, "error", uv_strerror(rc));
    e->h = NULL;
    if (k->on_fatal) k->on_fatal(k->data);
    return;
  }
  e->state = KE_RUNNING;
  e->said = NULL;
  LOG_I("serving kind", "kind", e->row.kind, "group", e->row.group, "version", e->row.version);
}

static void kinds__stop_done(kinds_t *k) {
  if (--k->pending) return;
  void (*cb)(void *) = k->stop_cb;
  void *data = k->stop_data;
  kinds__free(k);
  if (cb) cb(data);
}

static void kinds__entry_stopped(void *data) {
  kinds__entry_t *e = data;
  kinds_t *k = e->k;
  e->h = NULL;
  e->state = KE_IDLE;
  if (k->stopping) {
    kinds__stop_done(k);
    return;
  }
  kinds__consider(e); /* its CRD may be back already */
}

static void kinds__crd_event(kinds_t *k, const char *key) {
  kinds__entry_t *e = kinds__find(k, key);
  if (e && informer_has_synced(k->crds)) kinds__consider(e);
}

static void kinds__on_add(informer_t *inf, const char *key, const cJSON *obj, void *data) {
  (void)inf, (void)obj;
  kinds__crd_event(data, key);
}

static void kinds__on_update(informer_t *inf, const char *key, const cJSON *old, const cJSON *obj, void *data) {
  (void)inf, (void)old, (void)obj;
  kinds__crd_event(data, key);
}

/* The CRD is gone, and with it (the API server deletes them first) every object of the kind: its
 * reconciler has nothing left to do and stops until the CRD is installed again. */
static void kinds__on_delete(informer_t *inf, const char *key, const cJSON *obj, void *data) {
  (void)inf, (void)obj;
  kinds_t *k = data;
  kinds__entry_t *e = kinds__find(k, key);
  if (!e || k->stopping) return;
  if (e->state != KE_RUNNING) {
    if (e->selected) kinds__not_served(e, "its CRD is not installed");
    return;
  }
  LOG_I("kind's CRD deleted: its reconciler stops until the CRD is installed again", "kind", e->row.kind, "crd", e->crd);
  e->state = KE_STOPPING;
  e->said = "its CRD is not installed";
  e->row.stop(e->h, kinds__entry_stopped, e);
}

static void kinds__on_synced(informer_t *inf, void *data) {
  (void)inf;
  kinds_t *k = data;
  for (size_t i = 0; i < k->n && !k->stopping; i++) kinds__consider(&k->e[i]);
}

int kinds_start(kinds_t *k, const kinds_env_t *env, void (*on_fatal)(void *data), void *data) {
  k->env = *env;
  k->on_fatal = on_fatal;
  k->data = data;
  k->started = true;
  for (size_t i = 0; i < k->n; i++)
    if (!k->e[i].selected) LOG_I("kind not served (not in --kinds)", "kind", k->e[i].row.kind, "group", k->e[i].row.group);
  static const char *const keep[] = {"spec.group", "spec.versions", "status.conditions", NULL};
  informer_opts_t io = {.path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", .keep = keep,
                        .transform = kinds__trim, .transform_data = k};
  informer_handlers_t h = {.on_add = kinds__on_add, .on_update = kinds__on_update, .on_delete = kinds__on_delete,
                           .on_synced = kinds__on_synced, .data = k};
  return informer_start(env->client, &io, &h, &k->crds);
}

size_t kinds_engines(const kinds_t *k, engine_t **out, size_t max) {
  size_t n = 0;
  for (size_t i = 0; k && i < k->n && n < max; i++)
    if (k->e[i].row.door && k->e[i].state == KE_RUNNING) out[n++] = k->e[i].h;
  return n;
}

static void kinds__crds_stopped(void *data) {
  kinds_t *k = data;
  k->crds = NULL;
  kinds__stop_done(k);
}

void kinds_stop(kinds_t *k, void (*cb)(void *data), void *data) {
  k->stopping = true;
  k->stop_cb = cb;
  k->stop_data = data;
  k->pending = 1; /* held until every stop below has been asked for */
  for (size_t i = 0; i < k->n; i++) {
    kinds__entry_t *e = &k->e[i];
    if (e->state == KE_STOPPING) k->pending++; /* its callback comes */
    else if (e->state == KE_RUNNING) {
      k->pending++;
      e->state = KE_STOPPING;
      e->row.stop(e->h, kinds__entry_stopped, e);
    }
  }
  if (k->crds) {
    k->pending++;
    informer_stop(k->crds, kinds__crds_stopped, k);
  }
  kinds__stop_done(k);
}
