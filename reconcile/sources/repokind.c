/* The machinery chart-repository kinds share (see repokind.h). One run per key: read the object,
 * get the Secrets and ConfigMap it names, declare the repository to helm/source, fetch the index,
 * let the kind do its own work, write the status, and come back after the interval. */
#include "reconcile/sources/repokind.h"
#include "reconcile/refs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/b64.h"
#include "base/container.h"
#include "base/buf.h"
#include "base/log.h"
#include "helm/source/oci.h"
#include "reconcile/conditions.h"
#include "reconcile/request.h"

#define REPO_DEFAULT_TIMEOUT_MS (60 * 1000L)

typedef repo_run_t rr_t;

enum { RR_SECRET, RR_CERT, RR_CA, RR_DONE };

static void rr__next(rr_t *x);
static void rr__finish(rr_t *x);

/* Ends a repokind_declare run with its outcome. */
static void rr__once_end(rr_t *x, int err, const char *reason, const char *msg) {
  x->rc->once_said = true;
  x->rc->once(err, reason, msg, x->rc->once_data);
  rr__finish(x);
}

const char *repo_str(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}
#define rr__str repo_str

static char *rr__dup(const char *s) { return s ? strdup(s) : NULL; }

static void rr__free(rr_t *x) {
  free(x->key);
  free(x->skey);
  free(x->ref_ns);
  free(x->info_digest);
  free(x->ns);
  free(x->name);
  free(x->uid);
  free(x->rv);
  cJSON_Delete(x->prev_conds);
  free(x->url);
  free(x->secret);
  free(x->cert_secret);
  free(x->ca_cm);
  if (x->pass) memset(x->pass, 0, strlen(x->pass));
  if (x->bearer) memset(x->bearer, 0, strlen(x->bearer));
  free(x->user);
  free(x->pass);
  free(x->bearer);
  if (x->tkey.data) memset(x->tkey.data, 0, x->tkey.len);
  buf_free(&x->ca);
  buf_free(&x->cert);
  buf_free(&x->tkey);
  buf_free(&x->path);
  free(x);
}

static void rr__finish(rr_t *x) {
  repoctl_t *rc = x->rc;
  if (rc->once) { /* repokind_declare: its callback, then the bare controller goes with the run */
    if (!rc->once_said) { /* ended without a status: suspended (not declared, as the controller leaves it), or out of memory */
      bool susp = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(rc->once_obj, "spec"), "suspend"));
      rc->once(susp ? UV_ECANCELED : UV_ENOMEM, susp ? "Suspended" : "InternalError",
               susp ? "the repository is suspended (spec.suspend)" : "out of memory", rc->once_data);
    }
    rr__free(x);
    free(rc);
    return;
  }
  if (x->prev) x->prev->next = x->next;
  else rc->running = x->next;
  if (x->next) x->next->prev = x->prev;
  if (x->cancelled) x->outcome = 2;
  if (!rc->stopping) {
    if (x->outcome == REPO_RETRY) queue_add_rate_limited(&rc->q, x->key);
    else {
      queue_forget(&rc->q, x->key);
      if (x->outcome == REPO_OK) queue_add_after(&rc->q, x->key, (uint64_t)x->interval_ms);
    }
  }
  queue_done(&rc->q, x->key);
  rr__free(x);
}

void repo_run_event(rr_t *x, const char *type, const char *reason, const char *msg) {
  const repokind_t *k = x->rc->k;
  if (!x->rc->events) return;
  char av[128];
  snprintf(av, sizeof av, "%s/%s", k->group, k->version);
  events_ref_t ref = {.api_version = av, .kind = k->kind, .namespace = x->ns,
                      .name = x->name, .uid = x->uid, .resource_version = x->rv};
  events_emit_ref(x->rc->events, &ref, type, reason, msg);
}
#define rr__event repo_run_event

static void rr__status_done(const kube_response_t *res, void *data) {
  rr_t *x = data;
  x->inflight = NULL;
  if (x->cancelled || res->err == UV_ECANCELED) {
    rr__finish(x);
    return;
  }
  if (!kube_response_ok(res) && !kube_response_is_not_found(res)) {
    LOG_W("cannot write the status", "kind", x->rc->k->kind, "repository", x->key, "error",
          res->errmsg ? res->errmsg : "");
    x->outcome = REPO_RETRY;
  }
  rr__finish(x);
}

void repo_status_index(cJSON *st, const source_index_info_t *info) {
  if (!info || !info->digest || !*info->digest) return;
  cJSON_AddStringToObject(st, "indexDigest", info->digest);
  char t[32];
  time_t sec = (time_t)info->fetched_at;
  struct tm tm;
  gmtime_r(&sec, &tm);
  strftime(t, sizeof t, "%Y-%m-%dT%H:%M:%SZ", &tm);
  cJSON_AddStringToObject(st, "lastFetchTime", t);
  cJSON_AddNumberToObject(st, "charts", (double)info->charts);
  cJSON_AddNumberToObject(st, "versions", (double)info->versions);
}

/* Writes status: Ready with reason/message and the kind's own fields (info may be NULL). */
static void rr__status(rr_t *x, const char *ready, const char *reason, const char *msg,
                       const source_index_info_t *info) {
  const repokind_t *k = x->rc->k;
  if (x->rc->once) { /* what the status would say goes to the caller instead */
    rr__once_end(x, strcmp(ready, "True") ? UV_EINVAL : 0, reason, msg);
    return;
  }
  char now[32];
  cond_now_rfc3339(now);
  char cut[4096];
  const char *m = cond_message(msg ? msg : "", cut, sizeof cut);
  cJSON *conds = cond_set(NULL, x->prev_conds, "Ready", ready, reason, m, x->generation, now);
  if (x->insecure)
    conds = cond_set(conds, x->prev_conds, "Insecure", "True", "InsecureSkipTLSVerify",
                     "TLS certificates of this repository are not verified (spec.insecureSkipTLSVerify)",
                     x->generation, now);
  cJSON *root = cJSON_CreateObject(), *st = root ? cJSON_AddObjectToObject(root, "status") : NULL;
  char *body = NULL;
  if (st) {
    cJSON_AddNumberToObject(st, "observedGeneration", (double)x->generation);
    cJSON_AddItemToObject(st, "conditions", conds ? conds : cJSON_CreateArray());
    conds = NULL;
    k->status(x, st, ready, m, info);
    body = cJSON_PrintUnformatted(root);
  }
  cJSON_Delete(conds);
  cJSON_Delete(root);
  buf_reset(&x->path);
  kube_path(&x->path, k->group, k->version, k->resource, x->ns, x->name, "status");
  x->inflight = body ? kube_merge_patch(x->rc->c, x->path.data, body, rr__status_done, x) : NULL;
  free(body);
  if (!x->inflight) {
    x->outcome = REPO_RETRY;
    rr__finish(x);
  }
}

void repo_run_fail(rr_t *x, const char *reason, const char *msg, int outcome) {
  if (!x->rc->once) LOG_W("repository not ready", "kind", x->rc->k->kind, "repository", x->key, "reason", reason, "error", msg);
  rr__event(x, "Warning", reason, msg);
  x->outcome = outcome;
  rr__status(x, "False", reason, msg, NULL);
}
#define rr__fail repo_run_fail

void repo_run_synced(rr_t *x, int err, const char *reason, const char *msg) {
  x->in_synced = 0;
  if (x->cancelled || err == UV_ECANCELED) {
    rr__finish(x);
    return;
  }
  if (err) {
    rr__fail(x, reason, msg, REPO_RETRY);
    return;
  }
  x->outcome = REPO_OK;
  rr__status(x, "True", "Succeeded", x->msg, x->oci ? NULL : &x->info);
}

static void rr__refreshed(const source_index_info_t *info, void *data) {
  rr_t *x = data;
  x->op = NULL;
  if (x->cancelled || info->err == UV_ECANCELED) {
    rr__finish(x);
    return;
  }
  if (info->err) {
    rr__fail(x, "FetchFailed", info->message ? info->message : "cannot fetch the index", REPO_RETRY);
    return;
  }
  x->info = *info;
  x->info.message = NULL;
  free(x->info_digest);
  x->info_digest = rr__dup(info->digest);
  x->info.digest = x->info_digest ? x->info_digest : "";
  if (x->oci) {
    snprintf(x->msg, sizeof x->msg, "OCI registry: charts are pulled as %s/NAME when a release asks for one", x->url);
  } else {
    snprintf(x->msg, sizeof x->msg, "index with %zu charts and %zu versions (%s)%s", info->charts, info->versions,
             info->digest, info->status == 304 ? ", unchanged" : "");
    if (info->changed) {
      LOG_I("repository index fetched", "repository", x->key, "digest", info->digest);
      rr__event(x, "Normal", "IndexFetched", x->msg);
    }
  }
  if (x->rc->k->synced && !x->oci) {
    x->in_synced = 1;
    x->rc->k->synced(x);
    return;
  }
  repo_run_synced(x, 0, NULL, NULL);
}

static void rr__declare(rr_t *x) {
  source_conn_t conn = {
      .tls = {.ca_pem = x->ca.data, .ca_len = x->ca.len, .cert_pem = x->cert.data, .cert_len = x->cert.len,
              .key_pem = x->tkey.data, .key_len = x->tkey.len, .insecure_skip_verify = x->insecure},
      .auth = {.username = x->user, .password = x->pass, .bearer = x->bearer},
      .pass_credentials = x->pass_credentials,
      .timeout_ms = (uint64_t)x->timeout_ms,
      .plain_http = x->plain_http};
  if ((conn.tls.cert_pem != NULL) != (conn.tls.key_pem != NULL)) {
    rr__fail(x, "InvalidSpec", "spec.certSecretRef: tls.crt and tls.key must be given together", REPO_FORGET);
    return;
  }
  char msg[256] = "";
  int r = source_repo_set(x->rc->s, x->skey, x->url, &conn, msg, sizeof msg);
  if (r) {
    rr__fail(x, r == UV_EINVAL ? "InvalidSpec" : "InternalError", r == UV_EINVAL ? msg : "out of memory",
             r == UV_EINVAL ? REPO_FORGET : REPO_RETRY);
    return;
  }
  if (x->rc->once) {
    rr__once_end(x, 0, NULL, NULL);
    return;
  }
  if (x->insecure) rr__event(x, "Warning", "InsecureSkipTLSVerify", "TLS verification is off for this repository");
  x->op = source_repo_refresh(x->rc->s, x->skey, rr__refreshed, x);
  if (!x->op) {
    x->outcome = REPO_RETRY;
    rr__finish(x);
  }
}

static void rr__got(const kube_response_t *res, void *data) {
  rr_t *x = data;
  x->inflight = NULL;
  if (x->cancelled || res->err == UV_ECANCELED) {
    rr__finish(x);
    return;
  }
  const char *what = x->step == RR_SECRET ? (x->secret_field ? x->secret_field : "spec.secretRef")
                     : x->step == RR_CERT ? "spec.certSecretRef" : "spec.caConfigMapRef";
  const char *name = x->step == RR_SECRET ? x->secret : x->step == RR_CERT ? x->cert_secret : x->ca_cm;
  const char *rns = x->ref_ns ? x->ref_ns : x->ns;
  char msg[512];
  if (!kube_response_ok(res)) {
    snprintf(msg, sizeof msg, "%s: cannot read %s %s/%s: %s", what, x->step == RR_CA ? "ConfigMap" : "Secret",
             rns, name, res->errmsg ? res->errmsg : "failed");
    rr__fail(x, "AuthenticationFailed", msg, REPO_RETRY);
    return;
  }
  cJSON *obj = cJSON_ParseWithLength(res->body, res->body_len);
  int bad = !obj;
  if (obj && x->step == RR_SECRET) {
    buf_t u = BUF_INIT, p = BUF_INIT, t = BUF_INIT;
    int hu = kube_data_value(obj, "username", 1, &u, NULL, 0), hp = kube_data_value(obj, "password", 1, &p, NULL, 0);
    int ht = kube_data_value(obj, "bearerToken", 1, &t, NULL, 0);
    if (!ht) ht = kube_data_value(obj, "token", 1, &t, NULL, 0);
    buf_t dc = BUF_INIT;
    int hd = x->oci && !hu && !ht ? kube_data_value(obj, ".dockerconfigjson", 1, &dc, NULL, 0) : 0;
    if (hd > 0) { /* a kubernetes.io/dockerconfigjson Secret: the entry of this registry */
      char host[256], derr[256] = "";
      const char *h = x->url + 6;
      size_t hn = strcspn(h, "/");
      snprintf(host, sizeof host, "%.*s", (int)(hn < sizeof host ? hn : sizeof host - 1), h);
      char *du = NULL, *dp = NULL;
      if (oci_dockerconfig_creds(dc.data ? dc.data : "", dc.len, host, &du, &dp, derr, sizeof derr) == 0) {
        x->user = du;
        x->pass = dp;
        hu = hp = 2;
      } else {
        free(du);
        if (dp) memset(dp, 0, strlen(dp));
        free(dp);
        hd = -1;
      }
    }
    if (dc.data) memset(dc.data, 0, dc.len);
    buf_free(&dc);
    int ha = 0, hc = 0, hk = 0;
    if (x->secret_tls) { /* one Secret for everything (Captain's spec.secret): credentials optional */
      ha = kube_data_value(obj, "ca.crt", 1, &x->ca, NULL, 0);
      hc = kube_data_value(obj, "tls.crt", 1, &x->cert, NULL, 0);
      hk = kube_data_value(obj, "tls.key", 1, &x->tkey, NULL, 0);
    }
    bad = hu < 0 || hp < 0 || ht < 0 || hd < 0 || ha < 0 || hc < 0 || hk < 0 || (hu > 0) != (hp > 0) ||
          (hc > 0) != (hk > 0) || (!hu && !ht && !(x->secret_tls && (ha > 0 || hc > 0)));
    if (!bad && hu != 2) {
      if (hu > 0) {
        x->user = buf_steal(&u);
        x->pass = buf_steal(&p);
      }
      if (ht > 0) x->bearer = buf_steal(&t);
    }
    if (p.data) memset(p.data, 0, p.len);
    if (t.data) memset(t.data, 0, t.len);
    buf_free(&u);
    buf_free(&p);
    buf_free(&t);
    if (bad && x->secret_tls)
      snprintf(msg, sizeof msg, "%s: Secret %s/%s must hold username and password, ca.crt, or tls.crt with tls.key",
               what, rns, name);
    else if (bad)
      snprintf(msg, sizeof msg, "%s: Secret %s/%s must hold username and password, or bearerToken%s", what, rns,
               name, x->oci ? ", or a .dockerconfigjson with an entry for this registry" : "");
  } else if (obj && x->step == RR_CERT) {
    int a = kube_data_value(obj, "ca.crt", 1, &x->ca, NULL, 0), c = kube_data_value(obj, "tls.crt", 1, &x->cert, NULL, 0);
    int k = kube_data_value(obj, "tls.key", 1, &x->tkey, NULL, 0);
    bad = a < 0 || c < 0 || k < 0 || (c > 0) != (k > 0) || (a <= 0 && c <= 0);
    if (bad) snprintf(msg, sizeof msg, "%s: Secret %s/%s must hold ca.crt, or tls.crt with tls.key", what, rns, name);
  } else if (obj) {
    if (!x->ca.len) {
      int a = kube_data_value(obj, "ca.crt", 0, &x->ca, NULL, 0);
      bad = a <= 0;
      if (bad) snprintf(msg, sizeof msg, "%s: ConfigMap %s/%s has no ca.crt", what, rns, name);
    }
  } else {
    snprintf(msg, sizeof msg, "%s: %s/%s is not valid JSON", what, rns, name);
  }
  cJSON_Delete(obj);
  if (bad) {
    rr__fail(x, "InvalidSpec", msg, REPO_FORGET);
    return;
  }
  x->step++;
  rr__next(x);
}

static void rr__next(rr_t *x) {
  for (; x->step < RR_DONE; x->step++) {
    const char *name = x->step == RR_SECRET ? x->secret : x->step == RR_CERT ? x->cert_secret : x->ca_cm;
    if (!name) continue;
    buf_reset(&x->path);
    kube_path(&x->path, "", "v1", x->step == RR_CA ? "configmaps" : "secrets", x->ref_ns ? x->ref_ns : x->ns, name,
              NULL);
    x->inflight = kube_get(x->rc->c, x->path.data, rr__got, x);
    if (!x->inflight) {
      x->outcome = REPO_RETRY;
      rr__finish(x);
    }
    return;
  }
  rr__declare(x);
}

/* A Secret or ConfigMap some repositories read (credentials, CAs) changed: they are fetched again
 * at once rather than at their next interval. */
static void repoctl__ref_changed(const char *key, void *data) {
  repoctl_t *rc = data;
  if (!rc->stopping) queue_add(&rc->q, key);
}

static void repoctl__stopped_one(struct repoctl_s *rc);
static void repoctl__refs_stopped(void *data) { repoctl__stopped_one(data); }

/* Repository key reads exactly the given objects now (cm[i] ? ConfigMap : Secret, in ns), watched
 * by name (reconcile/refs.h). */
static void repoctl__track(struct repoctl_s *rc, const char *key, const char *ns, const char *const names[3],
                           const int cm[3]) {
  refs_obj_t objs[3];
  size_t n = 0;
  for (int i = 0; i < 3; i++)
    if (names[i]) objs[n++] = (refs_obj_t){.secret = !cm[i], .ns = ns, .name = names[i]};
  if (rc->refs && refs_set(rc->refs, key, objs, n))
    LOG_W("cannot watch the Secrets and ConfigMaps a repository reads", "repository", key);
}

int repo_run_durations(rr_t *x, const cJSON *spec) {
  const char *iv = rr__str(spec, "interval"), *to = rr__str(spec, "timeout");
  char msg[512];
  if (iv) {
    long ms = req_duration_ms(iv);
    if (ms < REQ_MIN_INTERVAL_MS) {
      snprintf(msg, sizeof msg, "spec.interval: \"%s\" is not a duration of at least 10s", iv);
      rr__fail(x, "InvalidSpec", msg, REPO_FORGET);
      return -1;
    }
    x->interval_ms = ms;
  }
  if (to) {
    long ms = req_duration_ms(to);
    if (ms <= 0) {
      snprintf(msg, sizeof msg, "spec.timeout: \"%s\" is not a positive duration", to);
      rr__fail(x, "InvalidSpec", msg, REPO_FORGET);
      return -1;
    }
    x->timeout_ms = ms;
  }
  return 0;
}

void repo_run_end(rr_t *x, int outcome) {
  x->outcome = outcome;
  rr__finish(x);
}

static void rr__pending_done(const kube_response_t *res, void *data) {
  rr_t *x = data;
  x->inflight = NULL;
  if (x->cancelled || res->err == UV_ECANCELED) {
    rr__finish(x);
    return;
  }
  if (!kube_response_ok(res)) /* only a courtesy: the fetch goes on and its status follows */
    LOG_D("cannot write the first status", "repository", x->key, "error", res->errmsg ? res->errmsg : "");
  rr__next(x);
}

static void rr__begin(rr_t *x) {
  repoctl_t *rc = x->rc;
  const cJSON *obj = rc->once ? rc->once_obj : informer_get(rc->inf, x->key);
  buf_t sk = BUF_INIT;
  buf_printf(&sk, "%s%s", rc->k->key_prefix, x->key);
  x->skey = buf_steal(&sk);
  if (!x->skey) {
    repo_run_end(x, REPO_RETRY);
    return;
  }
  if (!obj) {
    static const char *const none[3] = {NULL, NULL, NULL};
    static const int kinds[3] = {0, 0, 1};
    repoctl__track(rc, x->key, "", none, kinds);
    source_repo_remove(rc->s, x->skey);
    if (rc->k->gone) rc->k->gone(rc, x->key);
    repo_run_end(x, REPO_FORGET);
    return;
  }
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
  const cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
  const cJSON *status = cJSON_GetObjectItemCaseSensitive(obj, "status");
  x->ns = rr__dup(rr__str(meta, "namespace"));
  x->name = rr__dup(rr__str(meta, "name"));
  x->uid = rr__dup(rr__str(meta, "uid"));
  x->rv = rr__dup(rr__str(meta, "resourceVersion"));
  const cJSON *gen = cJSON_GetObjectItemCaseSensitive(meta, "generation");
  x->generation = cJSON_IsNumber(gen) ? (long long)gen->valuedouble : 0;
  const cJSON *pc = cJSON_GetObjectItemCaseSensitive(status, "conditions");
  if (cJSON_IsArray(pc)) x->prev_conds = cJSON_Duplicate(pc, 1);
  x->interval_ms = rc->k->default_interval_ms;
  x->timeout_ms = REPO_DEFAULT_TIMEOUT_MS;
  if (!x->ns || !x->name) {
    repo_run_end(x, REPO_FORGET);
    return;
  }
  if (rc->k->parse(x, spec)) return;
  const char *names[3] = {x->secret, x->cert_secret, x->ca_cm};
  static const int kinds[3] = {0, 0, 1};
  repoctl__track(rc, x->key, x->ref_ns ? x->ref_ns : x->ns, names, kinds);
  x->step = RR_SECRET;
  if (rc->k->pending && !x->prev_conds && !rc->once) { /* never reconciled: say so before the first fetch */
    buf_reset(&x->path);
    kube_path(&x->path, rc->k->group, rc->k->version, rc->k->resource, x->ns, x->name, "status");
    x->inflight = kube_merge_patch(rc->c, x->path.data, rc->k->pending, rr__pending_done, x);
    if (x->inflight) return;
  }
  rr__next(x);
}

int repokind_declare(const repokind_t *k, kube_client_t *c, source_t *s, const cJSON *obj, repokind_declared_cb cb,
                     void *data) {
  const char *ns = rr__str(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "namespace");
  const char *name = rr__str(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "name");
  repoctl_t *rc = calloc(1, sizeof *rc);
  rr_t *x = rc ? calloc(1, sizeof *x) : NULL;
  buf_t key = BUF_INIT;
  if (!x || buf_printf(&key, "%s/%s", ns ? ns : "", name ? name : "")) {
    free(rc);
    free(x);
    return UV_ENOMEM;
  }
  *rc = (repoctl_t){.k = k, .c = c, .s = s, .once = cb, .once_data = data, .once_obj = obj};
  x->rc = rc;
  x->key = buf_steal(&key);
  rr__begin(x);
  return 0;
}

static void repoctl__process(queue_t *q, const char *key, void *data) {
  repoctl_t *rc = data;
  if (rc->stopping) {
    queue_done(q, key);
    return;
  }
  rr_t *x = calloc(1, sizeof *x);
  if (x) x->key = strdup(key);
  if (!x || !x->key) {
    free(x);
    queue_add_rate_limited(q, key);
    queue_done(q, key);
    return;
  }
  x->rc = rc;
  x->next = rc->running;
  if (rc->running) rc->running->prev = x;
  rc->running = x;
  rr__begin(x);
}

static void rr__cancel(rr_t *x) {
  if (x->cancelled) return;
  x->cancelled = 1;
  if (x->inflight) {
    kube_req_t *r = x->inflight;
    x->inflight = NULL;
    kube_request_cancel(r);
  } else if (x->op) {
    source_op_t *op = x->op;
    x->op = NULL;
    source_cancel(op);
  } else if (x->in_synced && x->rc->k->cancel) {
    x->rc->k->cancel(x);
  }
}

static rr_t *repoctl__running(repoctl_t *rc, const char *key) {
  for (rr_t *x = rc->running; x; x = x->next)
    if (!strcmp(x->key, key)) return x;
  return NULL;
}

static void repoctl__on_add(informer_t *inf, const char *key, const cJSON *obj, void *data) {
  repoctl_t *rc = data;
  if (!rc->stopping) queue_add(&rc->q, key);
}

static void repoctl__on_update(informer_t *inf, const char *key, const cJSON *old, const cJSON *obj, void *data) {
  repoctl_t *rc = data;
  const cJSON *mo = cJSON_GetObjectItemCaseSensitive(old, "metadata"), *mn = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
  const cJSON *go = cJSON_GetObjectItemCaseSensitive(mo, "generation"), *gn = cJSON_GetObjectItemCaseSensitive(mn, "generation");
  if (cJSON_IsNumber(go) && cJSON_IsNumber(gn) && go->valuedouble == gn->valuedouble) return; /* status only */
  rr_t *x = repoctl__running(rc, key);
  if (x) rr__cancel(x);
  if (!rc->stopping) queue_add(&rc->q, key);
}

static void repoctl__on_delete(informer_t *inf, const char *key, const cJSON *obj, void *data) {
  repoctl_t *rc = data;
  rr_t *x = repoctl__running(rc, key);
  if (x) rr__cancel(x);
  if (!rc->stopping) queue_add(&rc->q, key);
}

void repokind_requeue(repoctl_t *rc, const char *key) {
  if (!rc->stopping) queue_add(&rc->q, key);
}

int repokind_start(const repokind_t *k, void *kind_data, uv_loop_t *loop, kube_client_t *c, source_t *s,
                   const repoctl_opts_t *o, repoctl_t **out) {
  repoctl_t *rc = calloc(1, sizeof *rc);
  if (!rc) return UV_ENOMEM;
  rc->k = k;
  rc->kind_data = kind_data;
  rc->loop = loop;
  rc->c = c;
  rc->s = s;
  rc->events = o ? o->events : NULL;
  rc->ns = o && o->namespace && *o->namespace ? strdup(o->namespace) : NULL;
  queue_options_t qo;
  queue_options_init(&qo);
  qo.name = k->resource;
  /* A failed fetch is tried again after 1 s, 2 s, ... up to 5 min: repositories are outside servers. */
  qo.backoff.base_ms = 1000;
  qo.backoff.max_ms = 5 * 60 * 1000;
  if (o && o->concurrency) qo.max_in_flight = o->concurrency;
  int r = queue_init(loop, &rc->q, &qo, repoctl__process, rc);
  if (r) {
    free(rc->ns);
    free(rc);
    return r;
  }
  buf_t path = BUF_INIT;
  kube_path(&path, k->group, k->version, k->resource, rc->ns, NULL, NULL);
  informer_opts_t io = {.path = path.data, .keep = k->keep,
                        .label_selector = o && o->label_selector && *o->label_selector ? o->label_selector : NULL};
  informer_handlers_t h = {.on_add = repoctl__on_add, .on_update = repoctl__on_update,
                           .on_delete = repoctl__on_delete, .data = rc};
  r = informer_start(c, &io, &h, &rc->inf);
  buf_free(&path);
  if (!r && (r = refs_new(c, repoctl__ref_changed, rc, &rc->refs))) informer_stop(rc->inf, NULL, NULL);
  if (r) {
    queue_close(&rc->q, NULL);
    free(rc->ns);
    free(rc);
    return r;
  }
  *out = rc;
  return 0;
}

static void repoctl__closed(queue_t *q) {
  repoctl_t *rc = container_of(q, repoctl_t, q);
  void (*cb)(void *) = rc->stop_cb;
  void *data = rc->stop_data;
  free(rc->ns);
  free(rc);
  if (cb) cb(data);
}

static void repoctl__drained(queue_t *q, void *data) {
  (void)data;
  queue_close(q, repoctl__closed);
}

static void repoctl__stopped_one(repoctl_t *rc) {
  if (--rc->pending_stops == 0) queue_shutdown(&rc->q, repoctl__drained, rc);
}

static void repoctl__inf_stopped(void *data) {
  repoctl_t *rc = data;
  rc->inf = NULL;
  repoctl__stopped_one(rc);
}

void repokind_stop(repoctl_t *rc, void (*cb)(void *data), void *data) {
  rc->stopping = 1;
  rc->stop_cb = cb;
  rc->stop_data = data;
  for (rr_t *x = rc->running, *nx; x; x = nx) {
    nx = x->next;
    rr__cancel(x);
  }
  rc->pending_stops = 1 + (rc->refs != NULL);
  if (rc->refs) refs_stop(rc->refs, repoctl__refs_stopped, rc);
  rc->refs = NULL;
  informer_stop(rc->inf, repoctl__inf_stopped, rc);
}
