/* Captain's ChartRepo kind and its Chart objects (see chartrepo.h): a row of the repository kinds
 * (repokind.h) whose synced step publishes the index as Chart objects. */
#include "reconcile/sources/chartrepo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/log.h"
#include "base/sha256.h"
#include "reconcile/sources/repokind.h"

#define CR_GROUP "app.alauda.io"
#define CHART_VERSION "v1alpha1"
#define CHART_RESOURCE "charts"
#define CR_WRITES 4 /* Chart writes in flight per repository; the client's rate limit paces them too */

typedef struct pub_s pub_t;

struct chartrepo_s {
  repoctl_t *rc;
  kube_client_t *c;
  char *ns;
  bool publish;
  informer_t *charts; /* Chart objects of the namespace: name, labels and our digest annotation only */
  /* The index digest last published, per ChartRepo key: an unchanged index is not walked again. */
  struct cr_done_s {
    char *key, *digest;
  } *done;
  size_t ndone;
  void (*stop_cb)(void *);
  void *stop_data;
};

/* A set of strings (the chart objects a walk saw), open addressing. */
typedef struct strset_s {
  char **slot;
  size_t cap, n;
} strset_t;

static uint64_t cr__hash(const char *s) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static bool strset_has(const strset_t *t, const char *s) {
  if (!t->cap) return false;
  for (size_t i = cr__hash(s) & (t->cap - 1); t->slot[i]; i = (i + 1) & (t->cap - 1))
    if (!strcmp(t->slot[i], s)) return true;
  return false;
}

/* 0 (added or there already) or -1 out of memory. */
static int strset_add(strset_t *t, const char *s) {
  if (strset_has(t, s)) return 0;
  if (2 * (t->n + 1) > t->cap) {
    size_t nc = t->cap ? 2 * t->cap : 64;
    char **ns = calloc(nc, sizeof *ns);
    if (!ns) return -1;
    for (size_t i = 0; i < t->cap; i++) {
      if (!t->slot[i]) continue;
      size_t j = cr__hash(t->slot[i]) & (nc - 1);
      while (ns[j]) j = (j + 1) & (nc - 1);
      ns[j] = t->slot[i];
    }
    free(t->slot);
    t->slot = ns;
    t->cap = nc;
  }
  char *d = strdup(s);
  if (!d) return -1;
  size_t i = cr__hash(s) & (t->cap - 1);
  while (t->slot[i]) i = (i + 1) & (t->cap - 1);
  t->slot[i] = d;
  t->n++;
  return 0;
}

static void strset_free(strset_t *t) {
  for (size_t i = 0; i < t->cap; i++) free(t->slot[i]);
  free(t->slot);
  memset(t, 0, sizeof *t);
}

/* ---- the last published digests ---- */

static const char *cr__done_get(const chartrepo_t *cr, const char *key) {
  for (size_t i = 0; i < cr->ndone; i++)
    if (!strcmp(cr->done[i].key, key)) return cr->done[i].digest;
  return NULL;
}

static void cr__done_forget(chartrepo_t *cr, const char *key) {
  for (size_t i = 0; i < cr->ndone; i++)
    if (!strcmp(cr->done[i].key, key)) {
      free(cr->done[i].key);
      free(cr->done[i].digest);
      cr->done[i] = cr->done[--cr->ndone];
      return;
    }
}

static void cr__done_set(chartrepo_t *cr, const char *key, const char *digest) {
  cr__done_forget(cr, key);
  struct cr_done_s *n = realloc(cr->done, (cr->ndone + 1) * sizeof *n);
  if (!n) return; /* the next sync walks again: costs a download, not a wrong answer */
  cr->done = n;
  char *k = strdup(key), *d = strdup(digest);
  if (!k || !d) {
    free(k);
    free(d);
    return;
  }
  cr->done[cr->ndone++] = (struct cr_done_s){k, d};
}

/* ---- the ChartRepo row ---- */

static int cr__parse(repo_run_t *x, const cJSON *spec) {
  char msg[512];
  const char *type = repo_str(spec, "type");
  if (type && *type && strcmp(type, "Chart")) {
    if (!strcmp(type, "Git") || !strcmp(type, "SVN"))
      snprintf(msg, sizeof msg, "spec.type: %s repositories are not supported; only Chart (a Helm chart repository "
               "serving index.yaml) is", type);
    else
      snprintf(msg, sizeof msg, "spec.type: \"%s\" is not one of Chart, Git, SVN", type);
    repo_run_fail(x, "InvalidSpec", msg, REPO_FORGET);
    return -1;
  }
  const char *url = repo_str(spec, "url");
  if (url) x->url = strdup(url);
  if (repo_run_durations(x, spec)) return -1;
  if (!url || !*url) {
    repo_run_fail(x, "InvalidSpec", "spec.url is required", REPO_FORGET);
    return -1;
  }
  if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
    snprintf(msg, sizeof msg, "spec.url: \"%s\" must start with https:// or http://", url);
    repo_run_fail(x, "InvalidSpec", msg, REPO_FORGET);
    return -1;
  }
  x->insecure = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(spec, "insecureSkipTLSVerify"));
  const cJSON *sec = cJSON_GetObjectItemCaseSensitive(spec, "secret");
  if (sec && !cJSON_IsNull(sec)) {
    const char *name = repo_str(sec, "name"), *ns = repo_str(sec, "namespace");
    if (!name || !*name) {
      repo_run_fail(x, "InvalidSpec", "spec.secret.name is required when spec.secret is given", REPO_FORGET);
      return -1;
    }
    x->secret = strdup(name);
    if (ns && *ns) x->ref_ns = strdup(ns);
    x->secret_field = "spec.secret";
    x->secret_tls = true;
  }
  return 0;
}

/* Captain's phase and reason, and what the index holds. */
static void cr__status(repo_run_t *x, cJSON *st, const char *ready, const char *reason,
                       const source_index_info_t *info) {
  (void)x;
  bool ok = !strcmp(ready, "True");
  cJSON_AddStringToObject(st, "phase", ok ? "Synced" : "Failed");
  if (ok) cJSON_AddNullToObject(st, "reason"); /* merge patch: removes the last failure */
  else cJSON_AddStringToObject(st, "reason", reason);
  repo_status_index(st, info);
}

/* ---- publishing Charts ---- */

struct pub_s {
  chartrepo_t *cr;
  repo_run_t *x;
  source_walk_t *walk;
  int walked;          /* the walk ended */
  strset_t seen;       /* object names of the charts in the index */
  struct pub_item_s {  /* writes waiting for a slot: the object's name and body (NULL: delete) */
    struct pub_item_s *next;
    char *name, *body;
  } *head, *tail;
  struct pub_slot_s { /* a write in flight */
    pub_t *p;
    kube_req_t *req;
    char *name;
    int del;
  } slots[CR_WRITES];
  size_t nin;
  size_t written, deleted, unchanged, skipped;
  int err, cancelled, in_cancel;
  char errmsg[512];
  char digest[72];
  buf_t path;
};

static void pub__pump(pub_t *p);

static void pub__free(pub_t *p) {
  while (p->head) {
    struct pub_item_s *i = p->head;
    p->head = i->next;
    free(i->name);
    free(i->body);
    free(i);
  }
  strset_free(&p->seen);
  buf_free(&p->path);
  free(p);
}

/* Everything settled (walk over, writes answered): the run goes on with the outcome. */
static void pub__end(pub_t *p) {
  repo_run_t *x = p->x;
  x->ext = NULL;
  int err = p->cancelled ? UV_ECANCELED : p->err;
  char msg[640];
  if (!err) {
    cr__done_set(p->cr, x->key, p->digest);
    char w[24], d[24], u[24];
    snprintf(w, sizeof w, "%zu", p->written);
    snprintf(d, sizeof d, "%zu", p->deleted);
    snprintf(u, sizeof u, "%zu", p->unchanged);
    LOG_I("charts published", "repository", x->key, "written", w, "deleted", d, "unchanged", u);
    size_t n = strlen(x->msg);
    snprintf(x->msg + n, sizeof x->msg - n, "; Chart objects: %zu written, %zu deleted, %zu unchanged", p->written,
             p->deleted, p->unchanged);
    if (p->skipped) {
      n = strlen(x->msg);
      snprintf(x->msg + n, sizeof x->msg - n, ", %zu not published (not a valid object name)", p->skipped);
    }
  }
  snprintf(msg, sizeof msg, "cannot publish the Chart objects: %s", p->errmsg);
  pub__free(p);
  repo_run_synced(x, err, "PublishFailed", msg);
}

static void pub__error(pub_t *p, int err, const char *fmt, const char *a, const char *b) {
  if (p->err) return;
  p->err = err;
  snprintf(p->errmsg, sizeof p->errmsg, fmt, a, b);
}

/* The body of Chart <chart>.<repo>, and the digest of what it says, into *body and digest. */
static int pub__chart_body(pub_t *p, const index_chart_t *c, const char *name, char **body, char digest[65]) {
  repo_run_t *x = p->x;
  cJSON *spec = cJSON_CreateObject(), *vs = spec ? cJSON_AddArrayToObject(spec, "versions") : NULL;
  if (!vs) {
    cJSON_Delete(spec);
    return -1;
  }
  for (size_t i = 0; i < c->nversions; i++) {
    const index_version_t *v = &c->versions[i];
    cJSON *o = cJSON_CreateObject();
    if (!o) break;
    cJSON_AddItemToArray(vs, o);
    struct {
      const char *k, *v;
    } f[] = {{"name", v->name},       {"version", v->version},         {"appVersion", v->app_version},
             {"apiVersion", v->api_version}, {"description", v->description}, {"home", v->home},
             {"icon", v->icon},       {"digest", v->digest},           {"created", v->created},
             {"kubeVersion", v->kube_version}, {"type", v->type}};
    for (size_t k = 0; k < sizeof f / sizeof f[0]; k++)
      if (*f[k].v) cJSON_AddStringToObject(o, f[k].k, f[k].v);
    if (v->deprecated) cJSON_AddTrueToObject(o, "deprecated");
    struct {
      const char *k;
      char **a;
      size_t n;
    } l[] = {{"keywords", v->keywords, v->nkeywords}, {"sources", v->sources, v->nsources}, {"urls", v->urls, v->nurls}};
    for (size_t k = 0; k < sizeof l / sizeof l[0]; k++) {
      if (!l[k].n) continue;
      cJSON *a = cJSON_AddArrayToObject(o, l[k].k);
      for (size_t j = 0; a && j < l[k].n; j++) cJSON_AddItemToArray(a, cJSON_CreateString(l[k].a[j]));
    }
    if (v->nmaintainers) {
      cJSON *a = cJSON_AddArrayToObject(o, "maintainers");
      for (size_t j = 0; a && j < v->nmaintainers; j++) {
        cJSON *m = cJSON_CreateObject();
        if (!m) break;
        cJSON_AddItemToArray(a, m);
        if (*v->maintainers[j].name) cJSON_AddStringToObject(m, "name", v->maintainers[j].name);
        if (*v->maintainers[j].email) cJSON_AddStringToObject(m, "email", v->maintainers[j].email);
        if (*v->maintainers[j].url) cJSON_AddStringToObject(m, "url", v->maintainers[j].url);
      }
    }
    if (v->ndeps) {
      cJSON *a = cJSON_AddArrayToObject(o, "dependencies");
      for (size_t j = 0; a && j < v->ndeps; j++) {
        const index_dependency_t *d = &v->deps[j];
        cJSON *m = cJSON_CreateObject();
        if (!m) break;
        cJSON_AddItemToArray(a, m);
        cJSON_AddStringToObject(m, "name", d->name);
        if (*d->version) cJSON_AddStringToObject(m, "version", d->version);
        if (*d->repository) cJSON_AddStringToObject(m, "repository", d->repository);
        if (*d->alias) cJSON_AddStringToObject(m, "alias", d->alias);
        if (*d->condition) cJSON_AddStringToObject(m, "condition", d->condition);
      }
    }
  }
  char *sj = cJSON_PrintUnformatted(spec);
  if (!sj) {
    cJSON_Delete(spec);
    return -1;
  }
  /* The digest covers the owner too: a ChartRepo made anew (another uid) rewrites its Charts. */
  base_sha256_ctx_t h;
  uint8_t dg[32];
  base_sha256_init(&h);
  base_sha256_update(&h, x->uid, strlen(x->uid));
  base_sha256_update(&h, "\n", 1);
  base_sha256_update(&h, sj, strlen(sj));
  base_sha256_final(&h, dg);
  base_sha256_hex(dg, digest);
  free(sj);
  cJSON *root = cJSON_CreateObject(), *meta = root ? cJSON_AddObjectToObject(root, "metadata") : NULL;
  char *out = NULL;
  if (meta) {
    cJSON_AddStringToObject(root, "apiVersion", CR_GROUP "/" CHART_VERSION);
    cJSON_AddStringToObject(root, "kind", "Chart");
    cJSON_AddStringToObject(meta, "name", name);
    cJSON_AddStringToObject(meta, "namespace", p->cr->ns);
    cJSON *lb = cJSON_AddObjectToObject(meta, "labels"), *an = cJSON_AddObjectToObject(meta, "annotations");
    if (lb) cJSON_AddStringToObject(lb, "repo", x->name);
    if (an) cJSON_AddStringToObject(an, CHARTREPO_DIGEST_ANNOTATION, digest);
    cJSON *owners = cJSON_AddArrayToObject(meta, "ownerReferences"), *ow = cJSON_CreateObject();
    if (owners && ow) {
      cJSON_AddItemToArray(owners, ow);
      cJSON_AddStringToObject(ow, "apiVersion", CR_GROUP "/v1beta1");
      cJSON_AddStringToObject(ow, "kind", "ChartRepo");
      cJSON_AddStringToObject(ow, "name", x->name);
      cJSON_AddStringToObject(ow, "uid", x->uid);
    } else {
      cJSON_Delete(ow);
    }
    cJSON_AddItemToObject(root, "spec", spec);
    spec = NULL;
    out = cJSON_PrintUnformatted(root);
  }
  cJSON_Delete(spec);
  cJSON_Delete(root);
  *body = out;
  return out ? 0 : -1;
}

/* An object name (RFC 1123 subdomain) Kubernetes accepts. */
static bool cr__name_ok(const char *s) {
  size_t n = strlen(s);
  if (!n || n > 253) return false;
  for (size_t i = 0; i < n; i++) {
    char ch = s[i];
    bool alnum = (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9');
    if (!alnum && ch != '-' && ch != '.') return false;
    if (!alnum && (i == 0 || i == n - 1 || s[i - 1] == '.' || s[i + 1] == '.')) return false;
  }
  return true;
}

static int pub__queue(pub_t *p, const char *name, char *body) {
  struct pub_item_s *i = calloc(1, sizeof *i);
  if (!i || !(i->name = strdup(name))) {
    free(i);
    free(body);
    return -1;
  }
  i->body = body;
  if (p->tail) p->tail->next = i;
  else p->head = i;
  p->tail = i;
  return 0;
}

/* The walk's callback: one chart of the index. */
static int pub__chart(const index_chart_t *c, void *data) {
  pub_t *p = data;
  if (!c->nversions) return 0; /* Helm lists nothing for it either */
  buf_t nb = BUF_INIT;
  buf_printf(&nb, "%s.%s", c->name, p->x->name);
  if (!nb.data) return UV_ENOMEM;
  if (!cr__name_ok(nb.data)) {
    p->skipped++;
    buf_free(&nb);
    return 0;
  }
  char *body = NULL, digest[65];
  int rc = strset_add(&p->seen, nb.data) ? UV_ENOMEM : pub__chart_body(p, c, nb.data, &body, digest) ? UV_ENOMEM : 0;
  if (!rc) {
    buf_t key = BUF_INIT;
    buf_printf(&key, "%s/%s", p->cr->ns, nb.data);
    const cJSON *have = key.data ? informer_get(p->cr->charts, key.data) : NULL;
    const cJSON *an = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(have, "metadata"), "annotations");
    const char *hd = repo_str(an, CHARTREPO_DIGEST_ANNOTATION);
    buf_free(&key);
    if (hd && !strcmp(hd, digest)) {
      p->unchanged++;
      free(body);
    } else if (pub__queue(p, nb.data, body)) {
      rc = UV_ENOMEM;
    }
  }
  buf_free(&nb);
  if (rc) return rc;
  pub__pump(p);
  return 0;
}

/* The walk ended: Charts of this repository that the index no longer has are deleted. */
static void pub__walked(int err, const char *message, const char *digest, void *data) {
  pub_t *p = data;
  p->walk = NULL;
  p->walked = 1;
  if (err) {
    pub__error(p, err, "%s%s", message ? message : "the index walk failed", "");
  } else {
    snprintf(p->digest, sizeof p->digest, "%s", digest);
    size_t it = 0;
    const char *key;
    const cJSON *obj;
    while (informer_next(p->cr->charts, &it, &key, &obj)) {
      const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
      const char *repo = repo_str(cJSON_GetObjectItemCaseSensitive(meta, "labels"), "repo");
      const char *name = repo_str(meta, "name");
      if (!repo || !name || strcmp(repo, p->x->name) || strset_has(&p->seen, name)) continue;
      if (pub__queue(p, name, NULL)) {
        pub__error(p, UV_ENOMEM, "out of memory%s%s", "", "");
        break;
      }
    }
  }
  pub__pump(p);
}

static void pub__answered(const kube_response_t *res, void *data) {
  struct pub_slot_s *sl = data;
  pub_t *p = sl->p;
  sl->req = NULL;
  p->nin--;
  if (res->err == UV_ECANCELED || p->cancelled) {
    /* nothing: pub__pump ends the run once everything settled */
  } else if (sl->del && (kube_response_ok(res) || kube_response_is_not_found(res))) {
    p->deleted++;
  } else if (!sl->del && kube_response_ok(res)) {
    p->written++;
  } else {
    LOG_W("cannot write a Chart", "repository", p->x->key, "chart", sl->name, "error", res->errmsg ? res->errmsg : "");
    pub__error(p, res->err ? res->err : UV_EIO, "Chart %s: %s", sl->name, res->errmsg ? res->errmsg : "failed");
  }
  free(sl->name);
  sl->name = NULL;
  pub__pump(p);
}

/* Sends what waits while slots are free; ends the run when the walk is over and nothing is left. */
static void pub__pump(pub_t *p) {
  while (!p->cancelled && p->head && p->nin < CR_WRITES) {
    struct pub_item_s *i = p->head;
    p->head = i->next;
    if (!p->head) p->tail = NULL;
    struct pub_slot_s *sl = NULL;
    for (size_t k = 0; k < CR_WRITES && !sl; k++)
      if (!p->slots[k].req && !p->slots[k].name) sl = &p->slots[k];
    buf_reset(&p->path);
    kube_path(&p->path, CR_GROUP, CHART_VERSION, CHART_RESOURCE, p->cr->ns, i->name, NULL);
    sl->p = p;
    sl->del = i->body == NULL;
    sl->name = i->name;
    i->name = NULL;
    p->nin++;
    sl->req = sl->del ? kube_delete(p->cr->c, p->path.data, NULL, pub__answered, sl)
                      : kube_apply(p->cr->c, p->path.data, i->body, "rudder", true, pub__answered, sl);
    free(i->body);
    free(i);
    if (!sl->req) {
      p->nin--;
      pub__error(p, UV_ENOMEM, "Chart %s: cannot send the request%s", sl->name, "");
      free(sl->name);
      sl->name = NULL;
    }
  }
  if ((p->walked || p->cancelled) && !p->in_cancel && !p->walk && !p->nin && (!p->head || p->cancelled)) pub__end(p);
}

static void cr__synced(repo_run_t *x) {
  chartrepo_t *cr = x->rc->kind_data;
  if (!cr->publish) {
    repo_run_synced(x, 0, NULL, NULL);
    return;
  }
  if (!informer_has_synced(cr->charts)) { /* the Charts there are not known yet: soon again */
    repo_run_end(x, REPO_RETRY);
    return;
  }
  const char *done = cr__done_get(cr, x->key);
  if (done && !strcmp(done, x->info.digest)) {
    repo_run_synced(x, 0, NULL, NULL);
    return;
  }
  pub_t *p = calloc(1, sizeof *p);
  if (!p) {
    repo_run_synced(x, UV_ENOMEM, "PublishFailed", "out of memory");
    return;
  }
  p->cr = cr;
  p->x = x;
  x->ext = p;
  p->walk = source_repo_walk(x->rc->s, x->skey, pub__chart, pub__walked, p);
  if (!p->walk) {
    x->ext = NULL;
    pub__free(p);
    repo_run_synced(x, UV_ENOMEM, "PublishFailed", "cannot start reading the index");
  }
}

static void cr__cancel(repo_run_t *x) {
  pub_t *p = x->ext;
  if (!p || p->cancelled) return;
  p->cancelled = 1;
  if (p->walk) {
    source_walk_t *w = p->walk;
    p->walk = NULL;
    source_walk_cancel(w);
  }
  p->in_cancel = 1; /* pub__answered must not end the run inside this loop */
  for (size_t k = 0; k < CR_WRITES; k++)
    if (p->slots[k].req) kube_request_cancel(p->slots[k].req); /* pub__answered runs, now or soon */
  p->in_cancel = 0;
  pub__pump(p);
}

static void cr__deleted(const kube_response_t *res, void *data) {
  char *key = data;
  if (!kube_response_ok(res) && !kube_response_is_not_found(res) && res->err != UV_ECANCELED)
    LOG_W("cannot delete the Charts of a deleted ChartRepo", "repository", key, "error",
          res->errmsg ? res->errmsg : "");
  free(key);
}

/* A ChartRepo is gone: its Charts go (the owner reference would have the garbage collector do it
 * too, where one runs). */
static void cr__gone(repoctl_t *rc, const char *key) {
  chartrepo_t *cr = rc->kind_data;
  cr__done_forget(cr, key);
  if (!cr->publish) return;
  const char *name = strchr(key, '/');
  name = name ? name + 1 : key;
  buf_t path = BUF_INIT, sel = BUF_INIT;
  kube_path(&path, CR_GROUP, CHART_VERSION, CHART_RESOURCE, cr->ns, NULL, NULL);
  buf_printf(&sel, "repo=%s", name);
  kube_query_add(&path, "labelSelector", sel.data ? sel.data : "");
  char *k = strdup(key);
  if (k && path.data && !kube_delete(cr->c, path.data, NULL, cr__deleted, k)) free(k);
  else if (!path.data) free(k);
  buf_free(&path);
  buf_free(&sel);
}

static const char *const cr__keep[] = {"spec", "status.conditions", NULL};

static const repokind_t cr__kind = {
    .group = CR_GROUP,
    .version = "v1beta1",
    .resource = "chartrepos",
    .kind = "ChartRepo",
    .key_prefix = CHARTREPO_KEY_PREFIX,
    .keep = cr__keep,
    .default_interval_ms = 10 * 60 * 1000L,
    .pending = "{\"status\":{\"phase\":\"Pending\",\"reason\":\"waiting for the first fetch of the index\"}}",
    .parse = cr__parse,
    .status = cr__status,
    .synced = cr__synced,
    .cancel = cr__cancel,
    .gone = cr__gone,
};

/* The Chart cache keeps the name, the labels and our digest, nothing else. */
static void cr__trim_chart(cJSON *obj, void *data) {
  (void)data;
  cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
  cJSON *an = cJSON_GetObjectItemCaseSensitive(meta, "annotations");
  if (!an) return;
  for (cJSON *a = an->child, *n; a; a = n) {
    n = a->next;
    if (!a->string || strcmp(a->string, CHARTREPO_DIGEST_ANNOTATION)) cJSON_Delete(cJSON_DetachItemViaPointer(an, a));
  }
}

int chartrepo_start(uv_loop_t *loop, kube_client_t *c, source_t *s, const chartrepo_opts_t *o, chartrepo_t **out) {
  if (!o || !o->namespace || !*o->namespace) return UV_EINVAL;
  chartrepo_t *cr = calloc(1, sizeof *cr);
  if (!cr || !(cr->ns = strdup(o->namespace))) {
    free(cr);
    return UV_ENOMEM;
  }
  cr->c = c;
  cr->publish = o->publish_charts;
  int r = 0;
  if (cr->publish) {
    buf_t path = BUF_INIT;
    kube_path(&path, CR_GROUP, CHART_VERSION, CHART_RESOURCE, cr->ns, NULL, NULL);
    static const char *const keep[] = {"metadata.labels", "metadata.annotations", NULL};
    informer_opts_t io = {.path = path.data, .label_selector = "repo", .keep = keep, .transform = cr__trim_chart};
    informer_handlers_t h = {.data = cr};
    r = path.data ? informer_start(c, &io, &h, &cr->charts) : UV_ENOMEM;
    buf_free(&path);
  }
  repoctl_opts_t ro = {.namespace = cr->ns, .events = o->events, .concurrency = o->concurrency,
                       .label_selector = o->label_selector};
  if (!r) r = repokind_start(&cr__kind, cr, loop, c, s, &ro, &cr->rc);
  if (r) {
    if (cr->charts) informer_stop(cr->charts, NULL, NULL);
    free(cr->ns);
    free(cr);
    return r;
  }
  *out = cr;
  return 0;
}

static void cr__charts_stopped(void *data) {
  chartrepo_t *cr = data;
  void (*cb)(void *) = cr->stop_cb;
  void *d = cr->stop_data;
  for (size_t i = 0; i < cr->ndone; i++) {
    free(cr->done[i].key);
    free(cr->done[i].digest);
  }
  free(cr->done);
  free(cr->ns);
  free(cr);
  if (cb) cb(d);
}

static void cr__rc_stopped(void *data) {
  chartrepo_t *cr = data;
  cr->rc = NULL;
  if (cr->charts) informer_stop(cr->charts, cr__charts_stopped, cr);
  else cr__charts_stopped(cr);
}

void chartrepo_stop(chartrepo_t *cr, void (*cb)(void *data), void *data) {
  cr->stop_cb = cb;
  cr->stop_data = data;
  repokind_stop(cr->rc, cr__rc_stopped, cr);
}
