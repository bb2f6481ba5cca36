/* Front door: Captain's HelmRequest (app.alauda.io v1, and v1alpha1 served with the same schema), so
 * that app stores written against Captain keep working on the release engine.
 *
 * Mapping: spec.chart "<repo>/<chart>" is the chart of the ChartRepo <repo> in the chart-repository
 * namespace (or spec.source.http / spec.source.oci instead); the release is named spec.releaseName
 * (default the object's name) and installed into spec.namespace (default the object's), and its
 * records are stored there too, as Captain and the helm CLI do, so that `helm ls -n <namespace>`
 * lists it. An empty spec.version installs the newest and then keeps the version installed
 * (status.version) while the spec is unchanged (status.lastSpecHash). Rollback, which Captain
 * lacks: the annotation app.alauda.io/rollback-to: "<revision>" (while set, that revision is the
 * desired state; the spec, and so the pinned version, stays as it was). */
#include "reconcile/doors/doors.h"
#include "reconcile/doors/door_util.h"
#include "base/sha256.h"
#include "helm/release/release.h"
#include "reconcile/conditions.h"
#include <stdlib.h>
#include <string.h>

/* Captain's own (v1) finalizer: objects Captain created carry it, and rudder then removes it. */
#define HQ_FINALIZER "captain.cpaas.io"
#define HQ_ROLLBACK_ANNOTATION "app.alauda.io/rollback-to"
/* The name Captain's app stores use for the cluster the controller runs in. */
#define HQ_LOCAL_CLUSTER "global"

static int hq__oom(buf_t *err) {
  buf_puts(err, "out of memory");
  return -12;
}

/* A ConfigMap or Secret data key: letters, digits, '-', '_' and '.', at most 253. */
static int hq__key_ok(const char *k) {
  size_t n = strlen(k);
  return n > 0 && n <= 253 &&
         strspn(k, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.") == n;
}

/* spec[k] when a non-empty list (*list, with *out calloc'd for its items of size each), NULL when
 * absent, null or empty; -22 naming what the list holds when not a list. */
static int hq__list(const cJSON *spec, const char *k, const char *what, size_t each, void **out, const cJSON **list,
                    buf_t *err) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(spec, k);
  *list = NULL;
  if (!v || cJSON_IsNull(v)) return 0;
  if (!cJSON_IsArray(v)) {
    buf_printf(err, "spec.%s: must be a list of %s", k, what);
    return -22;
  }
  size_t n = (size_t)cJSON_GetArraySize(v);
  if (!n) return 0;
  if (!(*out = calloc(n, each))) return hq__oom(err);
  *list = v;
  return 0;
}

/* spec.valuesFrom: [{configMapKeyRef|secretKeyRef: {name, key, optional}}] in the object's namespace. */
static int hq__values_from(const cJSON *spec, release_req_t *r, buf_t *err) {
  const cJSON *vf;
  int rc = hq__list(spec, "valuesFrom", "{configMapKeyRef} or {secretKeyRef}", sizeof *r->values_from,
                    (void **)&r->values_from, &vf, err);
  if (rc || !vf) return rc;
  size_t i = 0;
  for (const cJSON *it = vf->child; it; it = it->next, i++) {
    char path[64];
    snprintf(path, sizeof path, "spec.valuesFrom[%zu]", i);
    const cJSON *cm = door_obj(it, "configMapKeyRef"), *sk = door_obj(it, "secretKeyRef");
    if (!cJSON_IsObject(it) || !cm == !sk) {
      buf_printf(err, "%s: set exactly one of configMapKeyRef and secretKeyRef", path);
      return -22;
    }
    req_values_from_t *v = &r->values_from[i];
    r->nvalues_from = i + 1;
    v->secret = sk != NULL;
    char ref[96];
    snprintf(ref, sizeof ref, "%s.%s", path, sk ? "secretKeyRef" : "configMapKeyRef");
    const char *name, *key;
    if ((rc = door_string(sk ? sk : cm, "name", ref, &name, err)) || (rc = door_string(sk ? sk : cm, "key", ref, &key, err)) ||
        (rc = door_bool(sk ? sk : cm, "optional", ref, &v->optional, err)))
      return rc;
    char field[112];
    snprintf(field, sizeof field, "%s.name", ref);
    if ((rc = door_check_name(name, field, 253, err))) return rc;
    if (key && *key && !hq__key_ok(key)) {
      buf_printf(err, "%s.key: a data key is letters, digits, '-', '_' and '.' (at most 253)", ref);
      return -22;
    }
    v->ns = door_dup(r->ns);
    v->name = door_dup(name);
    v->key = door_dup(key && *key ? key : "values.yaml");
    v->field = door_dup(path);
    if (!v->ns || !v->name || !v->key || !v->field) return hq__oom(err);
  }
  return 0;
}

/* spec.dependencies: names of HelmRequests of the same namespace, as "namespace/name". */
static int hq__dependencies(const cJSON *spec, release_req_t *r, buf_t *err) {
  const cJSON *deps;
  int rc = hq__list(spec, "dependencies", "HelmRequest names", sizeof *r->depends_on, (void **)&r->depends_on, &deps, err);
  if (rc || !deps) return rc;
  size_t i = 0;
  for (const cJSON *d = deps->child; d; d = d->next, i++) {
    char path[48];
    snprintf(path, sizeof path, "spec.dependencies[%zu]", i);
    rc = door_check_name(cJSON_IsString(d) ? d->valuestring : NULL, path, 253, err);
    if (rc) return rc;
    if (!strcmp(d->valuestring, r->name)) {
      buf_printf(err, "%s: a HelmRequest cannot depend on itself", path);
      return -22;
    }
    buf_t k = BUF_INIT;
    buf_printf(&k, "%s/%s", r->ns, d->valuestring);
    if (!(r->depends_on[i] = buf_steal(&k))) return hq__oom(err);
    r->ndepends_on = i + 1;
  }
  return 0;
}

/* A secretRef of a chart source: a Secret of the HelmRequest's namespace with username and password
 * (and ca.crt for a private CA), read by the engine when it fetches the chart. */
static int hq__source_secret(const cJSON *o, const char *path, release_req_t *r, buf_t *err) {
  const char *s;
  int rc = door_string(o, "secretRef", path, &s, err);
  if (rc || !s || !*s) return rc;
  char field[64];
  snprintf(field, sizeof field, "%s.secretRef", path);
  if ((rc = door_check_name(s, field, 253, err))) return rc;
  if (!(r->src.secret_name = strdup(s)) || !(r->src.secret_field = strdup(field))) return hq__oom(err);
  return 0;
}

/* True when an OCI reference names a tag or digest itself (then no version is asked for). */
static int hq__oci_pinned(const char *ref) {
  const char *last = strrchr(ref + 6, '/'); /* past "oci://" */
  return last && strpbrk(last, ":@") != NULL;
}

/* The chart's source: spec.source.http / spec.source.oci, else spec.chart "<repo>/<chart>". */
static int hq__chart(const cJSON *spec, const door_ctx_t *ctx, release_req_t *r, buf_t *err) {
  const cJSON *src = cJSON_GetObjectItemCaseSensitive(spec, "source");
  const char *version;
  int rc = door_string(spec, "version", "spec", &version, err);
  if (rc) return rc;
  if (src && !cJSON_IsNull(src)) {
    const cJSON *http = door_obj(src, "http"), *oci = door_obj(src, "oci");
    if (!cJSON_IsObject(src) || !http == !oci) {
      buf_puts(err, "spec.source: set exactly one of http and oci");
      return -22;
    }
    const char *u;
    if (http) {
      if ((rc = door_string(http, "url", "spec.source.http", &u, err))) return rc;
      if (!u || (strncmp(u, "http://", 7) && strncmp(u, "https://", 8))) {
        buf_puts(err, "spec.source.http.url: must be the http:// or https:// URL of a packaged chart");
        return -22;
      }
      if ((rc = hq__source_secret(http, "spec.source.http", r, err))) return rc;
      r->src.kind = REQ_SRC_URL;
      r->src.url = door_dup(u);
    } else {
      if ((rc = door_string(oci, "repo", "spec.source.oci", &u, err))) return rc;
      if (!u || !*u || !strcmp(u, "oci://")) {
        buf_puts(err, "spec.source.oci.repo: must be an OCI reference like oci://registry/path/chart[:tag]");
        return -22;
      }
      if ((rc = hq__source_secret(oci, "spec.source.oci", r, err))) return rc;
      buf_t ref = BUF_INIT;
      buf_printf(&ref, "%s%s", strncmp(u, "oci://", 6) ? "oci://" : "", u);
      r->src.kind = REQ_SRC_OCI;
      r->src.url = buf_steal(&ref);
    }
    /* Captain ignores chart and version with a source: the reference says it all. */
    r->src.name = door_dup("");
    r->src.version = door_dup("");
    if (!r->src.url || !r->src.name || !r->src.version) return hq__oom(err);
    return 0;
  }
  const char *chart;
  if ((rc = door_string(spec, "chart", "spec", &chart, err))) return rc;
  const char *slash = chart ? strchr(chart, '/') : NULL;
  if (!slash || slash == chart || !slash[1] || strchr(slash + 1, '/')) {
    buf_puts(err, "spec.chart: must be <repository>/<chart> (a ChartRepo name and a chart in it)");
    if (chart) {
      buf_puts(err, ", got ");
      release_go_string_append(err, chart, strlen(chart) > 300 ? 300 : strlen(chart));
    }
    return -22;
  }
  buf_t repo = BUF_INIT, key = BUF_INIT;
  buf_printf(&repo, "%.*s", (int)(slash - chart), chart);
  rc = door_check_name(repo.data, "spec.chart (its repository part)", 253, err);
  if (!rc) {
    buf_printf(&key, "chartrepo:%s/%s", ctx && ctx->chartrepo_namespace ? ctx->chartrepo_namespace : "captain-system",
               repo.data);
    r->src.kind = REQ_SRC_REPOSITORY;
    r->src.repo_key = buf_steal(&key);
    r->src.name = door_dup(slash + 1);
    r->src.version = door_dup(version ? version : "");
    if (!r->src.repo_key || !r->src.name || !r->src.version) rc = hq__oom(err);
  }
  buf_free(&repo);
  buf_free(&key);
  return rc;
}

/* metadata.annotations[app.alauda.io/rollback-to]: a revision number, or absent/empty. */
static int hq__rollback(const cJSON *obj, release_req_t *r, buf_t *err) {
  const cJSON *ann = door_obj(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "annotations");
  const char *v = door_str(ann, HQ_ROLLBACK_ANNOTATION);
  if (!v || !*v) return 0;
  char *end;
  long long n = strtoll(v, &end, 10);
  if (*end || n < 1 || strspn(v, "0123456789") != strlen(v)) {
    buf_puts(err, "metadata.annotations[" HQ_ROLLBACK_ANNOTATION "]: must be a revision number (1 or more), got ");
    release_go_string_append(err, v, strlen(v) > 100 ? 100 : strlen(v));
    return -22;
  }
  r->rollback_to = n;
  r->rollback_field = "metadata.annotations[" HQ_ROLLBACK_ANNOTATION "]";
  return 0;
}

/* One target cluster: Captain's name of the local cluster is the engine's "". */
static int hq__add_cluster(release_req_t *r, const char *name, const char *field, buf_t *err) {
  int rc = door_check_name(name, field, 63, err);
  if (rc) return rc;
  const char *n = !strcmp(name, HQ_LOCAL_CLUSTER) ? "" : name;
  for (size_t i = 0; i < r->nclusters; i++)
    if (!strcmp(r->clusters[i], n)) return 0;
  char **v = realloc(r->clusters, (r->nclusters + 1) * sizeof *v);
  if (!v || !(v[r->nclusters] = strdup(n))) {
    if (v) r->clusters = v;
    buf_puts(err, "out of memory");
    return -12;
  }
  r->clusters = v;
  r->nclusters++;
  return 0;
}

/* Where it is installed: clusterName (one cluster; empty or "global": this one), installToAllClusters
 * (this one and every cluster with a kubeconfig Secret, reconcile/clusters.h), or v1's
 * targetClusters.clusterNames.names. Selecting clusters by labels is refused. */
static int hq__clusters(const cJSON *spec, release_req_t *r, buf_t *err) {
  const char *cn;
  bool all = false;
  int rc;
  if ((rc = door_string(spec, "clusterName", "spec", &cn, err)) ||
      (rc = door_bool(spec, "installToAllClusters", "spec", &all, err)))
    return rc;
  r->all_clusters = all;
  if (all) return 0;
  const cJSON *tc = door_obj(spec, "targetClusters");
  const cJSON *labels = door_obj(door_obj(tc, "clusterLabels"), "labelSelector");
  if (labels && labels->child) {
    buf_puts(err, "spec.targetClusters.clusterLabels: selecting clusters by labels is not supported by this rudder version");
    return -95;
  }
  const cJSON *names = cJSON_GetObjectItemCaseSensitive(door_obj(tc, "clusterNames"), "names");
  int i = 0;
  const cJSON *n;
  const cJSON *list = cJSON_IsArray(names) ? names : NULL;
  cJSON_ArrayForEach(n, list) {
    char field[64];
    snprintf(field, sizeof field, "spec.targetClusters.clusterNames.names[%d]", i++);
    if ((rc = hq__add_cluster(r, cJSON_IsString(n) ? n->valuestring : NULL, field, err))) return rc;
  }
  if (cn && *cn && (rc = hq__add_cluster(r, cn, "spec.clusterName", err))) return rc;
  if (r->nclusters == 1 && !*r->clusters[0]) { /* only this cluster: a release like any other */
    free(r->clusters[0]);
    free(r->clusters);
    r->clusters = NULL;
    r->nclusters = 0;
  }
  return 0;
}

static int hq__parse(const cJSON *obj, const door_ctx_t *ctx, release_req_t *r, buf_t *err, char hash[65]) {
  const cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
  const cJSON *status = cJSON_GetObjectItemCaseSensitive(obj, "status");
  int rc = door_parse_meta(obj, HQ_FINALIZER, r, err);
  if (rc) return rc;
  const cJSON *lar = cJSON_GetObjectItemCaseSensitive(status, "lastAppliedRevision");
  r->applied_revision = cJSON_IsNumber(lar) ? (long long)lar->valuedouble : 0;
  door_bookkeeping_read(status, r);
  r->max_history = REQ_DEFAULT_MAX_HISTORY;
  r->interval_ms = REQ_DEFAULT_INTERVAL_MS;
  r->timeout_ms = r->uninstall_timeout_ms = REQ_DEFAULT_TIMEOUT_MS;
  r->install.crds = ACT_CRDS_CREATE;
  r->upgrade.crds = ACT_CRDS_CREATE_REPLACE;
  const char *rn = NULL, *tn = NULL;
  if (cJSON_IsObject(spec)) door_spec_digest(spec, NULL, hash);
  if (cJSON_IsObject(spec) && ((rc = door_string(spec, "releaseName", "spec", &rn, err)) ||
                               (rc = door_string(spec, "namespace", "spec", &tn, err))))
    return rc;
  /* Identity first, even for a spec that is refused below, so that its release is known. */
  r->release_name = door_dup(rn && *rn ? rn : r->name);
  r->target_ns = door_dup(tn && *tn ? tn : r->ns);
  r->storage_ns = door_dup(r->target_ns);
  if (!r->release_name || !r->target_ns || !r->storage_ns) return hq__oom(err);
  if (!cJSON_IsObject(spec)) {
    buf_puts(err, "spec is missing");
    return -22;
  }
  if ((rc = door_check_name(r->release_name, rn && *rn ? "spec.releaseName" : "metadata.name (the default spec.releaseName)",
                            53, err)) ||
      (rc = door_check_name(r->target_ns, "spec.namespace", 63, err)))
    return rc;
  if ((rc = hq__rollback(obj, r, err)) || (rc = hq__chart(spec, ctx, r, err))) return rc;
  const cJSON *values = cJSON_GetObjectItemCaseSensitive(spec, "values");
  if (values && !cJSON_IsObject(values) && !cJSON_IsNull(values)) {
    buf_puts(err, "spec.values: must be an object");
    return -22;
  }
  if (!(r->values = cJSON_IsObject(values) ? cJSON_Duplicate(values, 1) : cJSON_CreateObject())) return hq__oom(err);
  if ((rc = hq__values_from(spec, r, err)) || (rc = hq__dependencies(spec, r, err))) return rc;
  const cJSON *rem = cJSON_GetObjectItemCaseSensitive(spec, "remediation");
  if (rem && !cJSON_IsNull(rem)) {
    const cJSON *n = cJSON_GetObjectItemCaseSensitive(rem, "retries");
    if (!cJSON_IsObject(rem)) {
      buf_puts(err, "spec.remediation: must be an object");
      return -22;
    }
    if (n && (!cJSON_IsNumber(n) || n->valuedouble < 0 || n->valuedouble != (double)(long long)n->valuedouble)) {
      buf_puts(err, "spec.remediation.retries: must be a whole number, 0 or more");
      return -22;
    }
    if (n) r->upgrade.retries = n->valuedouble > 1e6 ? 1000000 : (int)n->valuedouble;
    if (r->upgrade.retries) r->upgrade.strategy = REQ_REMEDIATE_ROLLBACK;
  }
  if ((rc = hq__clusters(spec, r, err))) return rc;
  /* The newest was asked for: the version installed for this very spec stays until the spec changes
   * (a newer chart in the repository does not upgrade it, as with Captain). */
  const char *pinned = door_str(status, "version"), *last = door_str(status, "lastSpecHash");
  int may_pin = r->src.kind == REQ_SRC_REPOSITORY || (r->src.kind == REQ_SRC_OCI && !hq__oci_pinned(r->src.url));
  if (may_pin && !*r->src.version && pinned && *pinned && last && !strcmp(last, hash)) {
    free(r->src.version);
    if (!(r->src.version = door_dup(pinned))) return hq__oom(err);
  }
  /* The rollback annotation is not in the spec (and does not bump the generation): it joins the
   * digest so that setting or removing it is a change. */
  memcpy(r->digest, hash, 65);
  if (r->rollback_to) {
    buf_t in = BUF_INIT;
    buf_printf(&in, "%s\nrollback-to=%lld", hash, r->rollback_to);
    if (!in.data) return hq__oom(err);
    uint8_t d[32];
    base_sha256(in.data, in.len, d);
    buf_free(&in);
    base_sha256_hex(d, r->digest);
  }
  return 0;
}

/* door_data is "<spec hash>" or "<spec hash> <Validated reason>" when the spec was refused ("-" for
 * no hash), read back by the status. */
static int hq_parse(const cJSON *obj, const door_ctx_t *ctx, release_req_t *r, buf_t *err) {
  char hash[65] = "";
  int rc = hq__parse(obj, ctx, r, err, hash);
  if (rc == -12) return rc;
  buf_t d = BUF_INIT;
  buf_printf(&d, "%s%s", *hash ? hash : "-", rc == -22 ? " InvalidSpec" : rc == -95 ? " NotSupported" : "");
  if (!(r->door_data = buf_steal(&d))) return hq__oom(err);
  return rc;
}

/* ---- status ---- */

static const char *hq__phase(const release_outcome_t *o) {
  if (o->req->deleting) return "Uninstalling";
  if (o->progressing || !o->ready || !strcmp(o->ready, "Unknown")) return "Pending";
  if (!strcmp(o->ready, "True")) return "Synced";
  /* Waiting for dependencies is not a failure. */
  return o->reason && !strcmp(o->reason, "DependencyNotReady") ? "Pending" : "Failed";
}

static char *hq_status_patch(const release_outcome_t *o) {
  const release_req_t *r = o->req;
  cJSON *st = cJSON_CreateObject();
  if (!st) return NULL;
  const char *phase = hq__phase(o);
  cJSON_AddStringToObject(st, "phase", phase);
  cJSON *conds = door_conditions(o);
  if (o->progressing) {
    cJSON_AddItemToObject(st, "conditions", conds);
    return door_status_body(st); /* only the phase and Reconciling change */
  }
  cJSON_AddNumberToObject(st, "observedGeneration", (double)r->generation);
  const char *data = r->door_data, *sp = data ? strchr(data, ' ') : NULL;
  char hash[65] = "";
  if (data && data[0] != '-' && (sp ? (size_t)(sp - data) : strlen(data)) == 64) memcpy(hash, data, 64);
  /* Refused by the door, or an object that could not be read at all (no door data). */
  const char *invalid = sp ? sp + 1 : (!data && o->reason && !strcmp(o->reason, "InvalidSpec")) ? "InvalidSpec" : NULL;
  char now[32];
  cond_now_rfc3339(now);
  conds = cond_set(conds, r->conditions, "Validated", invalid ? "False" : "True", invalid ? invalid : "Validated",
                   invalid ? o->message : "the spec can be acted on", r->generation, now);
  const record_t *cur = door_current_record(o);
  if (cur) {
    buf_t m = BUF_INIT;
    buf_printf(&m, "Helm release %s/%s exists (revision %lld)", r->storage_ns, r->release_name, cur->version);
    conds = cond_set(conds, r->conditions, "Initialized", "True", "ReleaseCreated", m.data ? m.data : "", r->generation, now);
    buf_free(&m);
  } else if (!cond_find(r->conditions, "Initialized")) {
    /* Without records at hand (refused before they were read) an earlier True stays. */
    conds = cond_set(conds, r->conditions, "Initialized", "False", "NotInstalled", "the release is not installed yet",
                     r->generation, now);
  }
  cJSON_AddItemToObject(st, "conditions", conds);
  cJSON_AddStringToObject(st, "reason", !strcmp(phase, "Failed") && o->message ? o->message : "");
  const release_t *rel = cur ? cur->rel : NULL;
  if (rel) {
    const release_metadata_t *m = rel->chart ? rel->chart->metadata : NULL;
    cJSON_AddStringToObject(st, "version", m && m->version ? m->version : "");
    cJSON_AddStringToObject(st, "notes", rel->info && rel->info->notes ? rel->info->notes : "");
  }
  if (!strcmp(phase, "Synced")) {
    /* Synced from the spec itself keeps its version; a rollback's state is not the spec's, so that
     * leaving it resolves the spec again. */
    if (r->rollback_to) cJSON_AddNullToObject(st, "lastSpecHash");
    else if (*hash) cJSON_AddStringToObject(st, "lastSpecHash", hash);
  }
  if (o->synced) { /* a release in several clusters: where it is synced now */
    cJSON *sc = cJSON_AddArrayToObject(st, "syncedClusters");
    for (const char *p = o->synced; *p;) {
      const char *nl = strchr(p, '\n');
      if (!nl) break;
      char *v = strndup(p, (size_t)(nl - p));
      cJSON_AddItemToArray(sc, cJSON_CreateString(v && *v ? v : HQ_LOCAL_CLUSTER));
      free(v);
      p = nl + 1;
    }
  } else if (!strcmp(phase, "Synced")) {
    cJSON *sc = cJSON_AddArrayToObject(st, "syncedClusters");
    cJSON_AddItemToArray(sc, cJSON_CreateString(HQ_LOCAL_CLUSTER));
  } else if (!strcmp(phase, "Uninstalling")) {
    cJSON_AddArrayToObject(st, "syncedClusters");
  }
  if (o->applied_revision > 0) cJSON_AddNumberToObject(st, "lastAppliedRevision", (double)o->applied_revision);
  if (o->attempted_revision > 0) cJSON_AddNumberToObject(st, "lastAttemptedRevision", (double)o->attempted_revision);
  door_bookkeeping_write(st, o);
  return door_status_body(st);
}

static const char *const hq__keep[] = {"spec", "status.conditions", "status.lastAppliedRevision", DOOR_KEEP_BOOKKEEPING,
                                       "status.version", "status.lastSpecHash", "metadata.labels", "metadata.annotations",
                                       NULL};

/* Captain's v1alpha1 objects carry its older finalizer. */
static const char *const hq__legacy_finalizers[] = {"captain.alauda.io", NULL};

const door_t door_helmrequest = {
    .kind = "HelmRequest",
    .group = "app.alauda.io",
    .version = "v1",
    .resource = "helmrequests",
    .finalizer = HQ_FINALIZER,
    .legacy_finalizers = hq__legacy_finalizers,
    .cache_keep = hq__keep,
    .parse = hq_parse,
    .status_patch = hq_status_patch,
};
