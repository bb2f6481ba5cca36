/* Other clusters, from kubeconfig Secrets (clusters.h). */
#include "reconcile/clusters.h"
#include "base/log.h"
#include "watch/discovery.h"
#include "watch/informer.h"
#include "watch/kubeconfig.h"
#include <stdlib.h>
#include <string.h>

struct cluster_s {
  cluster_t *next;      /* in cs->live */
  clusters_t *cs;
  int refs;             /* the registry's (while live) plus one per holder */
  bool live;
  char *name, *rv;      /* the Secret's resourceVersion it was made from */
  act_env_t env;
  char *version;
};

typedef struct listener_s {
  struct listener_s *next;
  void (*cb)(void *);
  void *data;
} listener_t;

struct clusters_s {
  uv_loop_t *loop;
  kube_client_t *c;
  informer_t *inf;
  char *ns, *field_manager;
  cluster_t *live;
  listener_t *listeners;
  int closing;          /* clients being closed */
  bool stopping, synced;
  bool allow_exec;      /* clusters_allow_exec */
  void (*stop_cb)(void *);
  void *stop_data;
};

static void clusters__maybe_done(clusters_t *cs) {
  if (!cs->stopping || cs->inf || cs->closing) return;
  for (listener_t *l = cs->listeners, *nx; l; l = nx) {
    nx = l->next;
    free(l);
  }
  void (*cb)(void *) = cs->stop_cb;
  void *data = cs->stop_data;
  free(cs->ns);
  free(cs->field_manager);
  free(cs);
  if (cb) cb(data);
}

static void cluster__client_closed(void *data) {
  cluster_t *cl = data;
  clusters_t *cs = cl->cs;
  free(cl->name);
  free(cl->rv);
  free(cl->version);
  free(cl);
  cs->closing--;
  clusters__maybe_done(cs);
}

static void cluster__disc_closed(void *data) {
  cluster_t *cl = data;
  kube_client_close(cl->env.c, cluster__client_closed, cl);
}

cluster_t *cluster_ref(cluster_t *cl) {
  if (cl) cl->refs++;
  return cl;
}

void cluster_unref(cluster_t *cl) {
  if (!cl || --cl->refs) return;
  cl->cs->closing++;
  if (cl->env.d) discovery_close(cl->env.d, cluster__disc_closed, cl);
  else cluster__disc_closed(cl);
}

/* Takes a cluster out of the registry: no new holder gets it; it closes with its last holder. */
static void cluster__retire(cluster_t *cl) {
  clusters_t *cs = cl->cs;
  for (cluster_t **p = &cs->live; *p; p = &(*p)->next)
    if (*p == cl) {
      *p = cl->next;
      break;
    }
  cl->live = false;
  cluster_unref(cl);
}

static const char *clusters__label(const cJSON *secret) {
  const cJSON *l = cJSON_GetObjectItemCaseSensitive(
      cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(secret, "metadata"), "labels"), CLUSTERS_LABEL);
  return cJSON_IsString(l) && *l->valuestring ? l->valuestring : NULL;
}

static void clusters__notify(clusters_t *cs) {
  if (cs->stopping || !cs->synced) return;
  for (listener_t *l = cs->listeners; l; l = l->next) l->cb(l->data);
}

/* A Secret changed or went: the cluster made from it (if any) is retired. */
static void clusters__drop(clusters_t *cs, const cJSON *secret) {
  const char *name = clusters__label(secret);
  for (cluster_t *cl = cs->live; name && cl; cl = cl->next)
    if (!strcmp(cl->name, name)) {
      cluster__retire(cl);
      break;
    }
}

static void clusters__on_add(informer_t *inf, const char *key, const cJSON *obj, void *data) { clusters__notify(data); }
static void clusters__on_update(informer_t *inf, const char *key, const cJSON *old, const cJSON *obj, void *data) {
  clusters_t *cs = data;
  clusters__drop(cs, old);
  clusters__notify(cs);
}
static void clusters__on_delete(informer_t *inf, const char *key, const cJSON *obj, void *data) {
  clusters_t *cs = data;
  clusters__drop(cs, obj);
  clusters__notify(cs);
}
static void clusters__on_synced(informer_t *inf, void *data) {
  clusters_t *cs = data;
  cs->synced = true;
  clusters__notify(cs);
}

void clusters_allow_exec(clusters_t *cs, bool allow) { cs->allow_exec = allow; }

int clusters_start(uv_loop_t *loop, kube_client_t *c, const char *ns, const char *field_manager, clusters_t **out) {
  clusters_t *cs = calloc(1, sizeof *cs);
  if (!cs || !(cs->ns = strdup(ns)) || !(cs->field_manager = strdup(field_manager ? field_manager : "rudder"))) {
    if (cs) free(cs->ns);
    free(cs);
    return UV_ENOMEM;
  }
  cs->loop = loop;
  cs->c = c;
  buf_t path = BUF_INIT;
  kube_path(&path, "", "v1", "secrets", ns, NULL, NULL);
  static const char *const keep[] = {"metadata.labels", "data." CLUSTERS_KEY, NULL};
  informer_opts_t io = {.path = path.data, .label_selector = CLUSTERS_LABEL, .keep = keep};
  informer_handlers_t h = {.on_add = clusters__on_add, .on_update = clusters__on_update,
                           .on_delete = clusters__on_delete, .on_synced = clusters__on_synced, .data = cs};
  int rc = path.data ? informer_start(c, &io, &h, &cs->inf) : UV_ENOMEM;
  buf_free(&path);
  if (rc) {
    free(cs->ns);
    free(cs->field_manager);
    free(cs);
    return rc;
  }
  *out = cs;
  return 0;
}

bool clusters_synced(const clusters_t *cs) { return cs->synced; }

int clusters_listen(clusters_t *cs, void (*cb)(void *data), void *data) {
  listener_t *l = calloc(1, sizeof *l);
  if (!l) return UV_ENOMEM;
  l->cb = cb;
  l->data = data;
  l->next = cs->listeners;
  cs->listeners = l;
  return 0;
}

void clusters_unlisten(clusters_t *cs, void (*cb)(void *data), void *data) {
  for (listener_t **p = &cs->listeners; *p; p = &(*p)->next)
    if ((*p)->cb == cb && (*p)->data == data) {
      listener_t *l = *p;
      *p = l->next;
      free(l);
      return;
    }
}

void clusters_names(const clusters_t *cs, buf_t *out) {
  size_t it = 0;
  const char *key;
  const cJSON *obj;
  while (cs->inf && informer_next(cs->inf, &it, &key, &obj)) {
    const char *name = clusters__label(obj);
    if (name) buf_printf(out, "%s\n", name);
  }
}

cluster_t *clusters_get(clusters_t *cs, const char *name, buf_t *err) {
  if (cs->stopping) return NULL;
  size_t it = 0;
  const char *key, *rv = NULL;
  const cJSON *obj, *secret = NULL;
  while (informer_next(cs->inf, &it, &key, &obj)) {
    const char *n = clusters__label(obj);
    if (n && !strcmp(n, name)) {
      secret = obj;
      break;
    }
  }
  if (!secret) {
    buf_printf(err, "cluster %s: no Secret labelled %s=%s in namespace %s", name, CLUSTERS_LABEL, name, cs->ns);
    return NULL;
  }
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive(secret, "metadata");
  const cJSON *rvj = cJSON_GetObjectItemCaseSensitive(meta, "resourceVersion");
  rv = cJSON_IsString(rvj) ? rvj->valuestring : "";
  const cJSON *sname = cJSON_GetObjectItemCaseSensitive(meta, "name");
  buf_t what = BUF_INIT, text = BUF_INIT;
  buf_printf(&what, "Secret %s/%s key %s", cs->ns, cJSON_IsString(sname) ? sname->valuestring : "?", CLUSTERS_KEY);
  cluster_t *cl = NULL;
  char berr[128] = "";
  int got = kube_data_value(secret, CLUSTERS_KEY, true, &text, berr, sizeof berr);
  if (!got) buf_printf(err, "cluster %s: %s is missing", name, what.data ? what.data : "");
  else if (got < 0) buf_printf(err, "cluster %s: %s: not base64 (%s)", name, what.data ? what.data : "", berr);
  else cl = clusters_get_text(cs, name, rv, text.data, text.len, what.data ? what.data : "Secret", err);
  if (text.data) memset(text.data, 0, text.len);
  buf_free(&text);
  buf_free(&what);
  return cl;
}

cluster_t *clusters_get_text(clusters_t *cs, const char *name, const char *version, const char *text, size_t len,
                             const char *what, buf_t *err) {
  if (cs->stopping) return NULL;
  for (cluster_t *cl = cs->live; cl; cl = cl->next)
    if (!strcmp(cl->name, name)) {
      if (!strcmp(cl->rv, version)) {
        cl->refs++;
        return cl;
      }
      cluster__retire(cl); /* made from an older kubeconfig */
      break;
    }
  kube_config_t cfg;
  char *msg = NULL;
  int rc = kube_config_parse_exec(text, len, what, cs->allow_exec, &cfg, &msg);
  if (rc) {
    buf_printf(err, "cluster %s: %s", name, msg ? msg : uv_strerror(rc));
    free(msg);
    return NULL;
  }
  cluster_t *cl = calloc(1, sizeof *cl);
  if (!cl || !(cl->name = strdup(name)) || !(cl->rv = strdup(version))) goto oom;
  cl->cs = cs;
  rc = kube_client_new(cs->loop, &cfg, &cl->env.c, &msg);
  kube_config_free(&cfg);
  if (rc) {
    buf_printf(err, "cluster %s: %s", name, msg ? msg : uv_strerror(rc));
    free(msg);
    free(cl->name);
    free(cl->rv);
    free(cl);
    return NULL;
  }
  cl->env.loop = cs->loop;
  cl->env.field_manager = cs->field_manager;
  cl->refs = 1; /* the registry's */
  cl->live = true;
  cl->next = cs->live;
  cs->live = cl;
  if (discovery_new(cl->env.c, &cl->env.d)) {
    cluster__retire(cl);
    buf_printf(err, "cluster %s: out of memory", name);
    return NULL;
  }
  LOG_I("cluster client made", "cluster", name);
  cl->refs++;
  return cl;
oom:
  kube_config_free(&cfg);
  if (cl) {
    free(cl->name);
    free(cl->rv);
    free(cl);
  }
  buf_printf(err, "cluster %s: out of memory", name);
  return NULL;
}

const act_env_t *cluster_env(const cluster_t *cl) { return &cl->env; }
const char *cluster_name(const cluster_t *cl) { return cl->name; }
const char *cluster_version(const cluster_t *cl) { return cl->version; }
void cluster_set_version(cluster_t *cl, const char *v) {
  free(cl->version);
  cl->version = v ? strdup(v) : NULL;
}

static void clusters__inf_stopped(void *data) {
  clusters_t *cs = data;
  cs->inf = NULL;
  clusters__maybe_done(cs);
}

void clusters_stop(clusters_t *cs, void (*cb)(void *data), void *data) {
  cs->stopping = true;
  cs->stop_cb = cb;
  cs->stop_data = data;
  while (cs->live) cluster__retire(cs->live);
  informer_stop(cs->inf, clusters__inf_stopped, cs);
}
