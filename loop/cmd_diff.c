/* rudder diff: what an upgrade of a HelmRelease would change. The chart (fetched through helm/source
 * as the engine fetches it: the same index, download, digest checks and OCI pulls; a HelmRepository
 * declared by its kind's own code) is rendered with the release's values (valuesFrom merged by the
 * engine's rules, reconcile/inputs.h) by the engine's pipeline (helm/render: render_release, the same options the
 * engine gives it), each object is made as the engine applies it (Helm's ownership metadata and
 * rudder's release labels) and dry-run applied with the engine's field manager, and the API
 * server's answer (what the object would become) is compared with the live object as a unified
 * diff of their YAML (managedFields left out). Objects of the deployed revision that the new one
 * drops are shown as deleted. */
#include "loop/cmds.h"
#include "loop/cmd.h"
#include "helm/action/record.h"
#include "helm/render/manifest.h"
#include "helm/render/render.h"
#include "reconcile/doors/doors.h"
#include "helm/source/source.h"
#include "helm/values/values.h"
#include "reconcile/drift.h"
#include "reconcile/inputs.h"
#include "reconcile/request.h"
#include "reconcile/sources/helmrepository.h"
#include "watch/discovery.h"
#include "watch/fetch.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char cmd_diff__usage[] =
  "Usage: rudder diff NAME [-n NS] [--kubeconfig FILE] [--context NAME]\n"
  "  What an upgrade of the HelmRelease to its spec would change in the cluster: each object the chart\n"
  "  renders (as the controller renders and applies it) against the live one, as a unified diff;\n"
  "  objects the upgrade would delete too. Nothing is changed (server-side dry runs). Exit 0: no\n"
  "  difference, 1: differences, 2: an error. The chart and values are read as the controller reads\n"
  "  them (spec.chart from any source: inline, a HelmRepository over HTTP(S) or OCI, a URL, a\n"
  "  ConfigMap or Secret; spec.valuesFrom), with your credentials; hooks, crds/ and `lookup` (empty,\n"
  "  as helm template) are left out.\n";

#define DIFF_FIELD_MANAGER "rudder" /* the engine's (engine_opts_t.field_manager's default) */
#define DIFF_MAX_CELLS (16u << 20)  /* lines(a) x lines(b) the line matcher may use */

/* ---- unified diff of two texts, by lines ---- */

typedef struct diff_lines_s {
  const char **p;
  size_t *len;
  size_t n;
} diff_lines_t;

static int diff__split(const char *s, diff_lines_t *l) {
  size_t n = 0;
  for (const char *p = s; *p; p++)
    if (*p == '\n') n++;
  if (*s && s[strlen(s) - 1] != '\n') n++;
  l->n = 0;
  l->p = calloc(n + 1, sizeof *l->p);
  l->len = calloc(n + 1, sizeof *l->len);
  if (!l->p || !l->len) return -1;
  for (const char *p = s; *p;) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p) : strlen(p);
    l->p[l->n] = p;
    l->len[l->n++] = len;
    p += len + (e ? 1 : 0);
  }
  return 0;
}

static int diff__eq(const diff_lines_t *a, size_t i, const diff_lines_t *b, size_t j) {
  return a->len[i] == b->len[j] && !memcmp(a->p[i], b->p[j], a->len[i]);
}

/* Appends to out `diff -u`'s hunks (3 lines of context) turning a into b, under the two headers;
 * nothing when they are equal. Lines are matched by a longest common subsequence; past
 * DIFF_MAX_CELLS the whole text is shown replaced. 0 or -1 (out of memory). */
static int diff_unified(const char *a, const char *b, const char *from, const char *to, buf_t *out) {
  if (!strcmp(a, b)) return 0;
  diff_lines_t la = {0}, lb = {0};
  int rc = -1;
  unsigned *lcs = NULL;
  char *ops = NULL; /* ' ', '-', '+' per step of the edit script */
  size_t *ia = NULL, *ib = NULL, nops = 0;
  if (diff__split(a, &la) || diff__split(b, &lb)) goto done;
  size_t n = la.n, m = lb.n;
  int whole = (n + 1) * (m + 1) > DIFF_MAX_CELLS;
  if (!whole && !(lcs = calloc((n + 1) * (m + 1), sizeof *lcs))) goto done;
  for (size_t i = n; !whole && i-- > 0;)
    for (size_t j = m; j-- > 0;)
      lcs[i * (m + 1) + j] = diff__eq(&la, i, &lb, j) ? lcs[(i + 1) * (m + 1) + j + 1] + 1
                             : lcs[(i + 1) * (m + 1) + j] >= lcs[i * (m + 1) + j + 1] ? lcs[(i + 1) * (m + 1) + j]
                                                                                      : lcs[i * (m + 1) + j + 1];
  ops = malloc(n + m + 1);
  ia = malloc((n + m + 1) * sizeof *ia);
  ib = malloc((n + m + 1) * sizeof *ib);
  if (!ops || !ia || !ib) goto done;
  for (size_t i = 0, j = 0; i < n || j < m;) {
    char op;
    if (i < n && j < m && !whole && diff__eq(&la, i, &lb, j)) op = ' ';
    else if (i < n && (j == m || whole || lcs[(i + 1) * (m + 1) + j] >= lcs[i * (m + 1) + j + 1])) op = '-';
    else op = '+';
    ops[nops] = op;
    ia[nops] = i;
    ib[nops] = j;
    nops++;
    if (op != '+') i++;
    if (op != '-') j++;
  }
  buf_printf(out, "--- %s\n+++ %s\n", from, to);
  for (size_t k = 0; k < nops;) {
    if (ops[k] == ' ') {
      k++;
      continue;
    }
    /* A hunk: from 3 lines before this change to 3 after the last change closer than 7 lines. */
    size_t start = k >= 3 ? k - 3 : 0, end = k;
    for (size_t q = k; q < nops; q++)
      if (ops[q] != ' ') end = q;
      else if (q - end > 6) break;
    end = end + 4 < nops ? end + 4 : nops;
    while (start < k && ops[start] != ' ') start++;
    size_t ca = 0, cb = 0;
    for (size_t q = start; q < end; q++) {
      if (ops[q] != '+') ca++;
      if (ops[q] != '-') cb++;
    }
    size_t sa = ia[start] + (ca ? 1 : 0), sb = ib[start] + (cb ? 1 : 0);
    buf_printf(out, "@@ -%zu", sa);
    if (ca != 1) buf_printf(out, ",%zu", ca);
    buf_printf(out, " +%zu", sb);
    if (cb != 1) buf_printf(out, ",%zu", cb);
    buf_puts(out, " @@\n");
    for (size_t q = start; q < end; q++) {
      buf_putc(out, ops[q]);
      if (ops[q] == '+') buf_append(out, lb.p[ib[q]], lb.len[ib[q]]);
      else buf_append(out, la.p[ia[q]], la.len[ia[q]]);
      buf_putc(out, '\n');
    }
    k = end;
  }
  rc = 0;
done:
  free(la.p), free(la.len), free(lb.p), free(lb.len), free(lcs), free(ops), free(ia), free(ib);
  return rc;
}

/* ---- the command ---- */

typedef struct diff_s {
  cmd_t c;
  discovery_t *disc;
  fetch_t *fetch;        /* chart sources: made only for charts that are not inline */
  chart_cache_t *charts;
  source_t *source;
  release_req_t req;
  record_t *recs;
  size_t nrecs;
  buf_t out;
  int differs, errors;
} diff_t;

typedef struct diff_map_s {
  int done, err;
  char *msg;
  discovery_mapping_t m;
  char *group, *version, *resource;
} diff_map_t;

static void diff__mapped(int err, const char *errmsg, const discovery_mapping_t *m, void *data) {
  diff_map_t *w = data;
  w->done = 1;
  w->err = err;
  if (err) {
    w->msg = strdup(errmsg ? errmsg : uv_strerror(err));
    return;
  }
  w->m = *m;
  w->group = strdup(m->group);
  w->version = strdup(m->version);
  w->resource = strdup(m->resource);
  if (!w->group || !w->version || !w->resource) w->err = UV_ENOMEM;
}

static void diff__map_free(diff_map_t *w) { free(w->msg), free(w->group), free(w->version), free(w->resource); }

/* The object's YAML without what only the server keeps track of (managedFields). */
static char *diff__yaml(cJSON *obj) {
  if (!obj) return strdup("");
  cJSON_DeleteItemFromObjectCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "managedFields");
  buf_t y = BUF_INIT;
  cmd_yaml(&y, obj);
  return y.data ? buf_steal(&y) : strdup("");
}

/* Compares one object: live (GET) against what the apply would make of it (dry run); want NULL:
 * the upgrade deletes it. */
static void diff__object(diff_t *d, const char *api_version, const char *kind, const char *ns_doc, const char *name,
                         cJSON *want) {
  cmd_t *c = &d->c;
  diff_map_t w = {0};
  if (discovery_resolve(d->disc, api_version, kind, diff__mapped, &w)) w.done = 1, w.err = UV_ENOMEM;
  while (!w.done && uv_run(&c->loop, UV_RUN_ONCE)) {
  }
  if (w.err) {
    fprintf(stderr, "rudder diff: %s %s: %s\n", kind, name, w.msg ? w.msg : uv_strerror(w.err));
    d->errors++;
    diff__map_free(&w);
    return;
  }
  const char *ns = w.m.namespaced ? (ns_doc && *ns_doc ? ns_doc : d->req.target_ns) : NULL;
  if (want && ns) {
    cJSON *meta = cJSON_GetObjectItemCaseSensitive(want, "metadata");
    if (meta && !cJSON_GetObjectItemCaseSensitive(meta, "namespace")) cJSON_AddStringToObject(meta, "namespace", ns);
  }
  buf_t path = BUF_INIT, title = BUF_INIT;
  kube_path(&path, w.group, w.version, w.resource, ns, name, NULL);
  buf_printf(&title, "%s %s%s%s", kind, ns ? ns : "", ns ? "/" : "", name);
  cmd_resp_t live, after = {0};
  cmd_do(c, &(kube_req_opts_t){.path = path.data}, &live);
  cJSON *lo = NULL, *ao = NULL;
  if (live.err || (live.status != 200 && live.status != 404)) {
    cmd_fail(c, &live, title.data);
    d->errors++;
    goto out;
  }
  if (live.status == 200) lo = cJSON_ParseWithLength(live.body, live.len);
  if (want) {
    char *body = cJSON_PrintUnformatted(want);
    buf_t ap = BUF_INIT;
    buf_puts(&ap, path.data);
    kube_query_add(&ap, "fieldManager", DIFF_FIELD_MANAGER);
    kube_query_add(&ap, "force", "true");
    kube_query_add(&ap, "dryRun", "All");
    if (body && ap.data)
      cmd_do(c, &(kube_req_opts_t){.method = "PATCH", .path = ap.data, .content_type = "application/apply-patch+yaml",
                                   .body = body, .body_len = strlen(body), .retry = KUBE_RETRY_NEVER},
             &after);
    else
      after.err = UV_ENOMEM;
    free(body);
    buf_free(&ap);
    if (after.err || after.status >= 300) {
      cmd_fail(c, &after, title.data);
      d->errors++;
      goto out;
    }
    ao = cJSON_ParseWithLength(after.body, after.len);
  } else if (!lo) {
    goto out; /* to be deleted, and already gone */
  }
  char *ya = diff__yaml(lo), *yb = diff__yaml(ao);
  buf_t from = BUF_INIT, to = BUF_INIT;
  buf_printf(&from, "%s (live)", title.data);
  buf_printf(&to, "%s (%s)", title.data, !ao ? "deleted by the upgrade" : lo ? "after the upgrade" : "created by the upgrade");
  size_t before = d->out.len;
  if (!ya || !yb || !from.data || !to.data || diff_unified(ya, yb, from.data, to.data, &d->out)) d->errors++;
  if (d->out.len > before) d->differs = 1;
  free(ya), free(yb);
  buf_free(&from), buf_free(&to);
out:
  cJSON_Delete(lo), cJSON_Delete(ao);
  cmd_resp_free(&live), cmd_resp_free(&after);
  buf_free(&path), buf_free(&title);
  diff__map_free(&w);
}

/* ---- the chart and the values, read as the engine reads them ---- */

typedef struct diff_wait_s {
  int done, err;
  char *msg;
  chart_cache_entry_t *entry;
} diff_wait_t;

static void diff__wait(diff_t *d, diff_wait_t *w) {
  while (!w->done && uv_run(&d->c.loop, UV_RUN_ONCE)) {
  }
  if (!w->done) w->done = 1, w->err = UV_EAGAIN;
}

static void diff__declared(int err, const char *reason, const char *msg, void *data) {
  diff_wait_t *w = data;
  (void)reason;
  w->done = 1;
  w->err = err;
  if (err && !(w->msg = strdup(msg ? msg : uv_strerror(err)))) w->err = UV_ENOMEM;
}

static void diff__chart_got(int err, const char *message, const source_chart_t *ch, void *data) {
  diff_wait_t *w = data;
  w->done = 1;
  w->err = err;
  if (err && !(w->msg = strdup(message ? message : uv_strerror(err)))) w->err = UV_ENOMEM;
  if (!err) w->entry = ch->entry;
}

/* GETs a v1 object (configmaps, secrets) or a HelmRepository into *obj (NULL unless 200). */
static void diff__get(diff_t *d, const char *group, const char *version, const char *resource, const char *ns,
                      const char *name, cmd_resp_t *r, cJSON **obj) {
  buf_t path = BUF_INIT;
  kube_path(&path, group, version, resource, ns, name, NULL);
  *obj = NULL;
  if (!path.data) {
    memset(r, 0, sizeof *r);
    r->err = UV_ENOMEM;
    return;
  }
  cmd_do(&d->c, &(kube_req_opts_t){.path = path.data}, r);
  buf_free(&path);
  if (!r->err && r->status == 200) *obj = cJSON_ParseWithLength(r->body, r->len);
}

/* spec.valuesFrom, each object read and merged in order by the engine's rules, then spec.values over
 * them: req.values becomes what the engine renders with. 0, or 2 after printing why. */
static int diff__values(diff_t *d) {
  if (!d->req.nvalues_from) return 0;
  cJSON *acc = cJSON_CreateObject();
  buf_t err = BUF_INIT;
  int rc = acc ? 0 : -1;
  for (size_t i = 0; !rc && i < d->req.nvalues_from; i++) {
    const req_values_from_t *v = &d->req.values_from[i];
    cmd_resp_t r;
    cJSON *obj;
    diff__get(d, "", "v1", v->secret ? "secrets" : "configmaps", v->ns, v->name, &r, &obj);
    rc = inputs_values_from_merge(v, r.err ? 0 : r.status, r.errmsg ? r.errmsg : r.err ? uv_strerror(r.err) : NULL, obj,
                                  acc, &err);
    cJSON_Delete(obj);
    cmd_resp_free(&r);
  }
  if (!rc && values_merge_maps(acc, d->req.values)) rc = -1;
  if (rc) {
    fprintf(stderr, "rudder diff: HelmRelease %s/%s: %s\n", d->c.ns, d->c.arg, err.data ? err.data : "out of memory");
    cJSON_Delete(acc);
    buf_free(&err);
    return 2;
  }
  cJSON_Delete(d->req.values);
  d->req.values = acc;
  return 0;
}

/* The HelmRepository "namespace/name" declared to the source as its kind's controller declares it.
 * 0, or 2 after printing why. */
static int diff__repository(diff_t *d, const char *key) {
  const char *slash = strchr(key, '/');
  char ns[256];
  snprintf(ns, sizeof ns, "%.*s", slash ? (int)(slash - key) : 0, key);
  cmd_resp_t r;
  cJSON *obj;
  diff__get(d, "rudder.dev", "v1alpha1", "helmrepositories", ns, slash ? slash + 1 : key, &r, &obj);
  buf_t what = BUF_INIT;
  buf_printf(&what, "spec.chart.repository: HelmRepository %s", key);
  int rc = 0;
  if (!obj) {
    cmd_fail(&d->c, &r, what.data ? what.data : "spec.chart.repository");
    rc = 2;
  } else {
    diff_wait_t w = {0};
    if (repoctl_declare(d->c.client, d->source, obj, diff__declared, &w)) w.done = 1, w.err = UV_ENOMEM;
    diff__wait(d, &w);
    if (w.err) {
      fprintf(stderr, "rudder diff: HelmRelease %s/%s: %s: %s\n", d->c.ns, d->c.arg, what.data ? what.data : "",
              w.msg ? w.msg : uv_strerror(w.err));
      rc = 2;
    }
    free(w.msg);
  }
  cJSON_Delete(obj);
  cmd_resp_free(&r);
  buf_free(&what);
  return rc;
}

/* A chart that is not inline, fetched from its source as the engine fetches it (rc__fetch_chart)
 * into req.chart. 0, or 2 after printing why. */
static int diff__chart(diff_t *d) {
  req_chart_src_t *src = &d->req.src;
  if (src->kind == REQ_SRC_INLINE) return 0;
  cmd_t *c = &d->c;
  chart_cache_options_t cco = {0};
  source_opts_t so = {0};
  if (fetch_new(&c->loop, NULL, &d->fetch) || chart_cache_new(&cco, &d->charts) ||
      ((so.cache = d->charts), source_new(&c->loop, d->fetch, &so, &d->source))) {
    fprintf(stderr, "rudder diff: out of memory\n");
    return 2;
  }
  diff_wait_t w = {0};
  buf_t err = BUF_INIT;
  source_op_t *op = NULL;
  int rc = 0;
  if (src->kind == REQ_SRC_REPOSITORY) {
    char msg[256] = "";
    if (!strncmp(src->repo_key, "url:", 4)) { /* a repository named by its URL alone */
      if (source_repo_set(d->source, src->repo_key, src->url, NULL, msg, sizeof msg))
        buf_printf(&err, "spec.chart.url: %s", msg[0] ? msg : "out of memory");
    } else if ((rc = diff__repository(d, src->repo_key))) {
      return rc;
    }
    if (!err.len) op = source_chart_from_repo(d->source, src->repo_key, src->name, src->version, diff__chart_got, &w);
  } else if (src->kind == REQ_SRC_CONFIGMAP || src->kind == REQ_SRC_SECRET) {
    cmd_resp_t r;
    cJSON *obj;
    const char *field = src->kind == REQ_SRC_CONFIGMAP ? "configMapRef" : "secretRef";
    diff__get(d, "", "v1", src->kind == REQ_SRC_CONFIGMAP ? "configmaps" : "secrets", d->req.ns, src->obj_name, &r, &obj);
    unsigned char *tgz = NULL;
    size_t n = 0;
    buf_t what = BUF_INIT;
    if (!obj)
      buf_printf(&err, "spec.chart.%s: cannot read %s %s/%s: %s", field, src->kind == REQ_SRC_CONFIGMAP ? "ConfigMap" : "Secret",
                 d->req.ns, src->obj_name, r.errmsg ? r.errmsg : r.err ? uv_strerror(r.err) : "failed");
    else if (!inputs_chart_bytes(src, d->req.ns, obj, &tgz, &n, &what, &err))
      op = source_chart_from_bytes(d->source, tgz, n, what.data, diff__chart_got, &w);
    free(tgz);
    buf_free(&what);
    cJSON_Delete(obj);
    cmd_resp_free(&r);
  } else {
    inputs_conn_t conn = {0};
    int have = 0;
    if (src->secret_name) {
      cmd_resp_t r;
      cJSON *obj;
      diff__get(d, "", "v1", "secrets", d->req.ns, src->secret_name, &r, &obj);
      if (!obj)
        buf_printf(&err, "%s: cannot read Secret %s/%s: %s", src->secret_field ? src->secret_field : "secretRef",
                   d->req.ns, src->secret_name, r.errmsg ? r.errmsg : r.err ? uv_strerror(r.err) : "failed");
      else have = !inputs_conn_from_secret(src, d->req.ns, obj, &conn, &err);
      cJSON_Delete(obj);
      cmd_resp_free(&r);
    }
    if (!err.len) {
      const source_conn_t *cc = have ? &conn.conn : NULL;
      op = src->kind == REQ_SRC_OCI ? source_chart_from_oci(d->source, src->url, src->version, cc, false, diff__chart_got, &w)
                                    : source_chart_from_url(d->source, src->url, cc, diff__chart_got, &w);
    }
    if (have) inputs_conn_free(&conn);
  }
  int failed = err.len || !op;
  if (op) {
    diff__wait(d, &w);
    if (w.err) buf_puts(&err, w.msg ? w.msg : uv_strerror(w.err)), failed = 1;
  }
  if (!failed && !(d->req.chart = chart_clone(w.entry->chart))) failed = 1;
  if (w.entry) source_chart_release(d->source, w.entry);
  if (failed) {
    fprintf(stderr, "rudder diff: HelmRelease %s/%s: %s\n", c->ns, c->arg, err.data ? err.data : "out of memory");
    rc = 2;
  }
  free(w.msg);
  buf_free(&err);
  return rc;
}

static void diff__version(int err, const char *errmsg, const discovery_version_t *v, void *data) {
  char **out = data;
  (void)errmsg;
  *out = !err && v && v->git_version ? strdup(v->git_version) : strdup("");
}

static void diff__closed(void *data) { *(int *)data = 1; }

/* Renders and compares; 0 (no difference), 1 (differences) or 2 (an error, said). */
static int diff__run(diff_t *d) {
  cmd_t *c = &d->c;
  cJSON *obj = NULL;
  if (cmd_get_release(c, &obj)) return 2;
  buf_t err = BUF_INIT;
  door_ctx_t ctx = {.chartrepo_namespace = "captain-system", .allow_cross_namespace_refs = true};
  int prc = door_helmrelease.parse(obj, &ctx, &d->req, &err);
  cJSON_Delete(obj);
  if (prc) {
    fprintf(stderr, "rudder diff: HelmRelease %s/%s: %s\n", c->ns, c->arg, err.data ? err.data : "out of memory");
    buf_free(&err);
    return 2;
  }
  /* As the engine: values first, then the chart. */
  int irc = diff__values(d);
  if (irc || (irc = diff__chart(d))) return irc;
  if (cmd_list_records(c, d->req.storage_ns, d->req.release_name, &d->recs, &d->nrecs)) return 2;
  const record_t *deployed = NULL;
  int released = 0;
  for (size_t i = d->nrecs; i-- > 0;) {
    if (!strcmp(d->recs[i].status, "deployed") || !strcmp(d->recs[i].status, "superseded")) released = 1;
    if (!deployed && !strcmp(d->recs[i].status, "deployed")) deployed = &d->recs[i];
  }
  char *kv = NULL;
  if (discovery_server_version(d->disc, diff__version, &kv)) return 2;
  while (!kv && uv_run(&c->loop, UV_RUN_ONCE)) {
  }
  /* As the engine renders an upgrade (rc__render_work): the next revision, the server's version. */
  render_opts_t ro = {.release_name = d->req.release_name, .namespace = d->req.target_ns,
                      .revision = (int)(d->nrecs ? d->recs[d->nrecs - 1].version + 1 : 1), .is_upgrade = released,
                      .kube_version = kv && *kv ? kv : NULL};
  manifest_set_t set = {0};
  render_output_t crds = {0};
  cJSON *vals = cJSON_Duplicate(d->req.values, 1);
  int rrc = vals ? render_release(d->req.chart, vals, &ro, &set, &crds, &err) : RENDER_ENOMEM;
  free(kv);
  render_output_free(&crds);
  if (rrc) {
    fprintf(stderr, "rudder diff: rendering HelmRelease %s/%s: %s\n", c->ns, c->arg, err.data ? err.data : "out of memory");
    buf_free(&err);
    manifest_set_free(&set);
    return 2;
  }
  cJSON *labels = cJSON_CreateObject();
  cJSON_AddStringToObject(labels, DRIFT_LABEL_NAME, d->req.release_name);
  cJSON_AddStringToObject(labels, DRIFT_LABEL_NAMESPACE, d->req.storage_ns);
  for (size_t i = 0; i < set.ndocs; i++) {
    const manifest_doc_t *doc = &set.docs[i];
    if (doc->is_empty) continue;
    cJSON *want = NULL;
    manifest_error_t merr = {0};
    if (manifest_object_json(doc, d->req.release_name, d->req.target_ns, labels, &want, &merr)) {
      fprintf(stderr, "rudder diff: %s\n", merr.message[0] ? merr.message : "out of memory");
      d->errors++;
      continue;
    }
    diff__object(d, doc->api_version, doc->kind, doc->namespace, doc->name, want);
    cJSON_Delete(want);
  }
  cJSON_Delete(labels);
  /* What the deployed revision has and the new one does not: the upgrade deletes it. */
  manifest_set_t old = {0};
  manifest_error_t merr = {0};
  if (deployed && deployed->rel && deployed->rel->manifest &&
      !manifest_parse_release(deployed->rel->manifest, strlen(deployed->rel->manifest), MANIFEST_INSTALL_ORDER, &old, &merr)) {
    for (size_t i = 0; i < old.ndocs; i++) {
      const manifest_doc_t *o = &old.docs[i];
      int kept = o->is_empty;
      for (size_t k = 0; !kept && k < set.ndocs; k++)
        kept = !strcmp(o->kind, set.docs[k].kind) && !strcmp(o->name, set.docs[k].name) &&
               !strcmp(o->api_version, set.docs[k].api_version) && !strcmp(o->namespace, set.docs[k].namespace);
      const cJSON *pol = cJSON_GetObjectItemCaseSensitive(o->annotations, "helm.sh/resource-policy");
      if (!kept && !(cJSON_IsString(pol) && !strcmp(pol->valuestring, "keep")))
        diff__object(d, o->api_version, o->kind, o->namespace, o->name, NULL);
    }
  }
  manifest_set_free(&old);
  manifest_set_free(&set);
  buf_free(&err);
  if (d->out.len) fwrite(d->out.data, 1, d->out.len, stdout);
  return d->errors ? 2 : d->differs;
}

int cmd_diff_main(int argc, char **argv) {
  diff_t d = {.c = {.name = "rudder diff"}};
  bool help;
  int rc = cmd_parse(&d.c, argc, argv, CMD_NAME_REQUIRED, cmd_diff__usage, NULL, NULL, &help);
  if (rc) return help ? 0 : rc;
  if (cmd_open(&d.c)) return 2;
  if (discovery_new(d.c.client, &d.disc)) {
    fprintf(stderr, "rudder diff: out of memory\n");
    cmd_close(&d.c);
    return 2;
  }
  rc = diff__run(&d);
  int closed = 0;
  discovery_close(d.disc, diff__closed, &closed);
  while (!closed && uv_run(&d.c.loop, UV_RUN_ONCE)) {
  }
  req_free(&d.req); /* the chart before the cache that loaded it */
  if (d.source) source_free(d.source);
  if (d.fetch) {
    closed = 0;
    fetch_close(d.fetch, diff__closed, &closed);
    while (!closed && uv_run(&d.c.loop, UV_RUN_ONCE)) {
    }
  }
  if (d.charts) chart_cache_free(d.charts);
  for (size_t i = 0; i < d.nrecs; i++) record_free(&d.recs[i]);
  free(d.recs);
  buf_free(&d.out);
  cmd_close(&d.c);
  return rc;
}
