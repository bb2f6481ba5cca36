/* Front door: rudder.dev/v1alpha1 HelmRelease (field names as Flux's HelmRelease v2 where the meaning
 * is the same). */
#include "reconcile/doors/doors.h"
#include "reconcile/doors/door_util.h"
#include "base/sha256.h"
#include "helm/release/release.h"
#include "reconcile/conditions.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define HR_FINALIZER "rudder.dev/finalizer"

static int hr__crds(const cJSON *o, const char *path, act_crds_t *out, buf_t *err) {
  const char *v = door_str(o, "crds");
  if (!v) return 0;
  if (!strcmp(v, "Create")) *out = ACT_CRDS_CREATE;
  else if (!strcmp(v, "CreateReplace")) *out = ACT_CRDS_CREATE_REPLACE;
  else if (!strcmp(v, "Skip")) *out = ACT_CRDS_SKIP;
  else {
    buf_printf(err, "%s.crds: \"%s\" is not Create, CreateReplace or Skip", path, v);
    return -22;
  }
  return 0;
}

static int hr__action(const cJSON *spec, const char *key, req_action_opts_t *a, buf_t *err) {
  const cJSON *o = door_obj(spec, key);
  char path[32];
  snprintf(path, sizeof path, "spec.%s", key);
  if (!o) return 0;
  int rc;
  if ((rc = hr__crds(o, path, &a->crds, err)) || (rc = door_bool(o, "disableHooks", path, &a->disable_hooks, err)) ||
      (rc = door_bool(o, "disableWait", path, &a->disable_wait, err)) ||
      (rc = door_bool(o, "takeOwnership", path, &a->take_ownership, err)))
    return rc;
  const cJSON *rem = door_obj(o, "remediation");
  if (rem) {
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(rem, "retries");
    if (r && !cJSON_IsNumber(r)) {
      buf_printf(err, "%s.remediation.retries: must be a number", path);
      return -22;
    }
    if (r) a->retries = r->valuedouble < 0 ? -1 : r->valuedouble > 1e6 ? 1000000 : (int)r->valuedouble;
    const char *st = door_str(rem, "strategy");
    if (st && !strcmp(st, "rollback")) a->strategy = REQ_REMEDIATE_ROLLBACK;
    else if (st && !strcmp(st, "uninstall")) a->strategy = REQ_REMEDIATE_UNINSTALL;
    else if (st) {
      buf_printf(err, "%s.remediation.strategy: \"%s\" is not rollback or uninstall", path, st);
      return -22;
    }
    char rp[64];
    snprintf(rp, sizeof rp, "%s.remediation", path);
    if ((rc = door_bool(rem, "remediateLastFailure", rp, &a->remediate_last, err))) return rc;
  }
  return 0;
}

/* A template file name as Helm's loader would take it: a plain name, printable, no path. */
/* The inline chart as Helm loads the equivalent directory. */
static int hr__load_inline_tree(const cJSON *inl, release_req_t *r, buf_t *err) {
  const char *cn = door_str(inl, "chartName"), *cv = door_str(inl, "chartVersion"), *av = door_str(inl, "appVersion");
  const cJSON *tpls = cJSON_GetObjectItemCaseSensitive(inl, "templates");
  if (!cJSON_IsObject(tpls) || !tpls->child) {
    buf_puts(err, "spec.chart.inline.templates: must map at least one file name to its text");
    return -22;
  }
  const cJSON *crds = cJSON_GetObjectItemCaseSensitive(inl, "crds");
  if (crds && !cJSON_IsNull(crds) && !cJSON_IsObject(crds)) {
    buf_puts(err, "spec.chart.inline.crds: must map file names to CRD manifests");
    return -22;
  }
  const cJSON *cvals = cJSON_GetObjectItemCaseSensitive(inl, "values");
  return door_inline_chart(r, "spec.chart.inline", cn && *cn ? cn : r->release_name, cv && *cv ? cv : "0.1.0", av,
                           cvals, tpls, cJSON_IsObject(crds) ? crds : NULL, err);
}

/* The cache keeps spec.chart.inline as text (hr__text): parsed here, for this reconcile only. */
static int hr__load_inline(const cJSON *inl, release_req_t *r, buf_t *err) {
  cJSON *owned;
  const cJSON *tree = door_subtree(inl, &owned);
  if (!tree) {
    buf_puts(err, "out of memory");
    return -12;
  }
  int rc = hr__load_inline_tree(tree, r, err);
  cJSON_Delete(owned);
  return rc;
}

static int hr__chart_source(const cJSON *chart, const cJSON *repo, const cJSON *url, const door_ctx_t *ctx, release_req_t *r,
                            buf_t *err) {
  const char *name = door_str(chart, "name"), *version = door_str(chart, "version");
  const cJSON *nv = cJSON_GetObjectItemCaseSensitive(chart, "name");
  const cJSON *vv = cJSON_GetObjectItemCaseSensitive(chart, "version");
  if ((nv && !cJSON_IsString(nv)) || (vv && !cJSON_IsString(vv))) {
    buf_puts(err, "spec.chart.name and spec.chart.version must be strings");
    return -22;
  }
  if (!repo) {
    if (!cJSON_IsString(url) || !*url->valuestring) {
      const cJSON *cm = cJSON_GetObjectItemCaseSensitive(chart, "configMapRef");
      const cJSON *sr = cJSON_GetObjectItemCaseSensitive(chart, "secretRef");
      if (cm || sr) { /* a packaged chart held in an object of the release's namespace */
        const char *field = cm ? "spec.chart.configMapRef" : "spec.chart.secretRef";
        const char *on = door_str(cm ? cm : sr, "name"), *ok = door_str(cm ? cm : sr, "key");
        if (!on || !*on) {
          buf_printf(err, "%s.name: must name a %s in the release's namespace", field, cm ? "ConfigMap" : "Secret");
          return -22;
        }
        r->src.kind = cm ? REQ_SRC_CONFIGMAP : REQ_SRC_SECRET;
        r->src.obj_name = door_dup(on);
        r->src.obj_key = door_dup(ok && *ok ? ok : "chart.tgz");
        r->src.name = door_dup("");
        r->src.version = door_dup("");
        if (!r->src.obj_name || !r->src.obj_key || !r->src.name || !r->src.version) {
          buf_puts(err, "out of memory");
          return -12;
        }
        return 0;
      }
      buf_puts(err, "spec.chart.url: must be a non-empty string");
      return -22;
    }
    const char *u = url->valuestring;
    if (!strncmp(u, "oci://", 6)) {
      r->src.kind = REQ_SRC_OCI;
      r->src.url = door_dup(u);
    } else if (strncmp(u, "http://", 7) && strncmp(u, "https://", 8)) {
      buf_printf(err, "spec.chart.url: \"%s\" must start with https://, http:// or oci://", u);
      return -22;
    } else if (name && *name) { /* a repository URL and a chart in it */
      r->src.kind = REQ_SRC_REPOSITORY;
      buf_t k = BUF_INIT;
      buf_printf(&k, "url:%s", u);
      r->src.repo_key = buf_steal(&k);
      r->src.url = door_dup(u);
    } else {
      r->src.kind = REQ_SRC_URL;
      r->src.url = door_dup(u);
    }
  } else {
    const char *rn = door_str(repo, "name"), *rns = door_str(repo, "namespace");
    if (!rn || !*rn) {
      buf_puts(err, "spec.chart.repository.name: must name a HelmRepository");
      return -22;
    }
    if (!name || !*name) {
      buf_puts(err, "spec.chart.name: the chart's name in the repository is required with spec.chart.repository");
      return -22;
    }
    if (rns && *rns && strcmp(rns, r->ns) && !(ctx && ctx->allow_cross_namespace_refs)) {
      buf_printf(err, "spec.chart.repository.namespace: %s is another namespace, and this controller refuses "
                      "references across namespaces (--allow-cross-namespace-refs)", rns);
      return -22;
    }
    r->src.kind = REQ_SRC_REPOSITORY;
    buf_t k = BUF_INIT;
    buf_printf(&k, "%s/%s", rns && *rns ? rns : r->ns, rn);
    r->src.repo_key = buf_steal(&k);
  }
  r->src.name = door_dup(name ? name : "");
  r->src.version = door_dup(version ? version : "");
  if (!r->src.name || !r->src.version || (r->src.kind == REQ_SRC_REPOSITORY && !r->src.repo_key) ||
      ((r->src.kind == REQ_SRC_URL || r->src.kind == REQ_SRC_OCI) && !r->src.url)) {
    buf_puts(err, "out of memory");
    return -12;
  }
  return 0;
}

/* spec.valuesFrom: [{kind: ConfigMap|Secret, name, valuesKey, targetPath, optional}], as Flux's. */
static int hr__values_from(const cJSON *spec, release_req_t *r, buf_t *err) {
  const cJSON *vf = cJSON_GetObjectItemCaseSensitive(spec, "valuesFrom");
  if (!vf || cJSON_IsNull(vf)) return 0;
  if (!cJSON_IsArray(vf)) {
    buf_puts(err, "spec.valuesFrom: must be a list of {kind, name, valuesKey, targetPath, optional}");
    return -22;
  }
  int i = 0, rc;
  for (const cJSON *e = vf->child; e; e = e->next, i++) {
    char field[48];
    snprintf(field, sizeof field, "spec.valuesFrom[%d]", i);
    if (!cJSON_IsObject(e)) {
      buf_printf(err, "%s: must be an object {kind, name, valuesKey, targetPath, optional}", field);
      return -22;
    }
    const char *kind = door_str(e, "kind"), *name = door_str(e, "name");
    const char *key = door_str(e, "valuesKey"), *tp = door_str(e, "targetPath");
    bool optional = false;
    if (!kind || (strcmp(kind, "ConfigMap") && strcmp(kind, "Secret"))) {
      buf_printf(err, "%s.kind: must be ConfigMap or Secret", field);
      return -22;
    }
    char nf[64];
    snprintf(nf, sizeof nf, "%s.name", field);
    if ((rc = door_check_name(name, nf, 253, err)) || (rc = door_bool(e, "optional", field, &optional, err))) return rc;
    const cJSON *kv = cJSON_GetObjectItemCaseSensitive(e, "valuesKey"), *tv = cJSON_GetObjectItemCaseSensitive(e, "targetPath");
    if ((kv && !cJSON_IsString(kv)) || (tv && !cJSON_IsString(tv))) {
      buf_printf(err, "%s: valuesKey and targetPath must be strings", field);
      return -22;
    }
    if (key && (!*key || strlen(key) > 253 ||
                strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._") != strlen(key))) {
      buf_printf(err, "%s.valuesKey: \"%s\" is not a valid data key (letters, digits, '-', '_' and '.')", field, key);
      return -22;
    }
    if ((rc = door_add_values_from(r, !strcmp(kind, "Secret"), name, key, tp, optional, field, err))) return rc;
  }
  return 0;
}

/* spec.dependsOn: [{name, namespace}]: HelmReleases that must be Ready (at their generation) first. */
static int hr__depends_on(const cJSON *spec, const door_ctx_t *ctx, release_req_t *r, buf_t *err) {
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(spec, "dependsOn");
  if (!d || cJSON_IsNull(d)) return 0;
  if (!cJSON_IsArray(d)) {
    buf_puts(err, "spec.dependsOn: must be a list of {name, namespace}");
    return -22;
  }
  int i = 0, rc;
  for (const cJSON *e = d->child; e; e = e->next, i++) {
    char field[48];
    snprintf(field, sizeof field, "spec.dependsOn[%d].name", i);
    const char *name = door_str(e, "name"), *ns = door_str(e, "namespace");
    if ((rc = door_check_name(name, field, 253, err))) return rc;
    if (!ns || !*ns) ns = r->ns;
    if (strcmp(ns, r->ns) && !(ctx && ctx->allow_cross_namespace_refs)) {
      buf_printf(err, "spec.dependsOn[%d].namespace: %s is another namespace, and this controller refuses references "
                      "across namespaces (--allow-cross-namespace-refs)", i, ns);
      return -22;
    }
    if (!strcmp(ns, r->ns) && !strcmp(name, r->name)) {
      buf_printf(err, "spec.dependsOn[%d]: a HelmRelease cannot depend on itself", i);
      return -22;
    }
    if ((rc = door_add_depends_on(r, ns, name, err))) return rc;
  }
  return 0;
}

/* spec.kubeConfig.secretRef {name, key}: the release goes to the cluster that kubeconfig names
 * (the engine's target "secret:NAME:KEY"), records stored there. */
/* spec.driftDetection: {mode: enabled|warn|disabled, ignore: [{paths: [JSON pointer], target: {group,
 * version, kind, name, namespace}}]}, checked entry by entry (the CRD's schema may be older). */
static int hr__drift(const cJSON *spec, release_req_t *r, buf_t *err) {
  const cJSON *dd = cJSON_GetObjectItemCaseSensitive(spec, "driftDetection");
  if (!dd || cJSON_IsNull(dd)) return 0;
  if (!cJSON_IsObject(dd)) {
    buf_puts(err, "spec.driftDetection: must be an object");
    return -22;
  }
  const cJSON *mode = cJSON_GetObjectItemCaseSensitive(dd, "mode");
  if (mode && !cJSON_IsNull(mode)) {
    const char *m = cJSON_IsString(mode) ? mode->valuestring : "";
    if (!strcmp(m, "enabled")) r->drift_mode = REQ_DRIFT_ENABLED;
    else if (!strcmp(m, "warn")) r->drift_mode = REQ_DRIFT_WARN;
    else if (strcmp(m, "disabled")) {
      buf_puts(err, "spec.driftDetection.mode: must be one of enabled, warn, disabled");
      return -22;
    }
  }
  const cJSON *ign = cJSON_GetObjectItemCaseSensitive(dd, "ignore");
  if (!ign || cJSON_IsNull(ign)) return 0;
  if (!cJSON_IsArray(ign)) {
    buf_puts(err, "spec.driftDetection.ignore: must be a list");
    return -22;
  }
  int i = 0;
  for (const cJSON *e = ign->child; e; e = e->next, i++) {
    const cJSON *paths = cJSON_GetObjectItemCaseSensitive(e, "paths");
    if (!cJSON_IsObject(e) || !cJSON_IsArray(paths) || !paths->child) {
      buf_printf(err, "spec.driftDetection.ignore[%d].paths: must be a non-empty list of JSON pointers", i);
      return -22;
    }
    int j = 0;
    for (const cJSON *q = paths->child; q; q = q->next, j++)
      if (!cJSON_IsString(q) || q->valuestring[0] != '/') {
        buf_printf(err, "spec.driftDetection.ignore[%d].paths[%d]: must be a JSON pointer (starting with '/')", i, j);
        return -22;
      }
    const cJSON *t = cJSON_GetObjectItemCaseSensitive(e, "target");
    if (t && !cJSON_IsNull(t)) {
      if (!cJSON_IsObject(t)) {
        buf_printf(err, "spec.driftDetection.ignore[%d].target: must be an object", i);
        return -22;
      }
      for (const cJSON *f = t->child; f; f = f->next) {
        static const char *const ok[] = {"group", "version", "kind", "name", "namespace", NULL};
        int known = 0;
        for (int k = 0; ok[k]; k++) known |= !strcmp(f->string, ok[k]);
        if (!known || !cJSON_IsString(f)) {
          buf_printf(err, "spec.driftDetection.ignore[%d].target.%s: %s", i, f->string,
                     known ? "must be a string" : "unknown field (group, version, kind, name, namespace)");
          return -22;
        }
      }
    }
  }
  if (!(r->drift_ignore = cJSON_Duplicate(ign, 1))) {
    buf_puts(err, "out of memory");
    return -12;
  }
  return 0;
}

static char *hr__default_name(const char *target_ns, const char *name) {
  buf_t b = BUF_INIT;
  buf_printf(&b, "%s-%s", target_ns, name ? name : "");
  if (!b.data || b.len <= 53) return buf_steal(&b);
  uint8_t sum[32];
  base_sha256(b.data, b.len, sum);
  char *out = malloc(54);
  if (out) {
    memcpy(out, b.data, 40);
    out[40] = '-';
    for (int i = 0; i < 6; i++) snprintf(out + 41 + 2 * i, 3, "%02x", sum[i]);
  }
  buf_free(&b);
  return out;
}

static int hr__kube_config(const cJSON *spec, release_req_t *r, buf_t *err) {
  const cJSON *kc = cJSON_GetObjectItemCaseSensitive(spec, "kubeConfig");
  if (!kc || cJSON_IsNull(kc)) return 0;
  const cJSON *ref = door_obj(kc, "secretRef");
  const char *name = door_str(ref, "name"), *key = door_str(ref, "key");
  int rc = door_check_name(name, "spec.kubeConfig.secretRef.name", 253, err);
  if (rc) return rc;
  if (key && (!*key || strlen(key) > 253 ||
              strspn(key, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._") != strlen(key))) {
    buf_printf(err, "spec.kubeConfig.secretRef.key: \"%s\" is not a valid data key (letters, digits, '-', '_' and '.')", key);
    return -22;
  }
  buf_t c = BUF_INIT;
  buf_printf(&c, REQ_SECRET_CLUSTER "%s:%s", name, key ? key : "value");
  if (!c.data || !(r->clusters = calloc(1, sizeof *r->clusters))) {
    buf_free(&c);
    buf_puts(err, "out of memory");
    return -12;
  }
  r->clusters[0] = buf_steal(&c);
  r->nclusters = 1;
  return 0;
}

static int hr_parse(const cJSON *obj, const door_ctx_t *ctx, release_req_t *r, buf_t *err) {
  const cJSON *spec = cJSON_GetObjectItemCaseSensitive(obj, "spec");
  const cJSON *status = cJSON_GetObjectItemCaseSensitive(obj, "status");
  int rc = door_parse_meta(obj, HR_FINALIZER, r, err);
  if (rc) return rc;
  const cJSON *lar = cJSON_GetObjectItemCaseSensitive(status, "lastAppliedRevision");
  r->applied_revision = cJSON_IsNumber(lar) ? (long long)lar->valuedouble : 0;
  door_bookkeeping_read(status, r);
  if ((rc = door_outside_read(status, r, err))) return rc;
  const char *prn = door_str(status, "releaseName"), *psn = door_str(status, "storageNamespace");

  const char *rn = door_str(spec, "releaseName");
  const char *tn = door_str(spec, "targetNamespace");
  /* As Flux: "<targetNamespace>-<name>" when a target namespace is given, else the name; a composed
   * name longer than Helm's 53 characters keeps its first 40 and 12 hex digits of its SHA-256. */
  if (rn && *rn) r->release_name = door_dup(rn);
  else if (tn && *tn) r->release_name = hr__default_name(tn, r->name);
  else r->release_name = door_dup(r->name);
  r->target_ns = door_dup(tn && *tn ? tn : r->ns);
  const char *sn = door_str(spec, "storageNamespace");
  /* As Flux: the records live beside the HelmRelease unless told otherwise, so that a change of
   * targetNamespace upgrades the same release instead of orphaning it. */
  r->storage_ns = door_dup(sn && *sn ? sn : r->ns);
  r->max_history = REQ_DEFAULT_MAX_HISTORY;
  r->interval_ms = REQ_DEFAULT_INTERVAL_MS;
  r->timeout_ms = REQ_DEFAULT_TIMEOUT_MS;
  r->upgrade.crds = ACT_CRDS_CREATE_REPLACE;
  r->install.crds = ACT_CRDS_CREATE;
  if (!r->release_name || !r->target_ns || !r->storage_ns) {
    buf_puts(err, "out of memory");
    return -12;
  }
  if (prn && *prn && psn && *psn && (strcmp(prn, r->release_name) || strcmp(psn, r->storage_ns)) &&
      (!(r->prev_release_name = door_dup(prn)) || !(r->prev_storage_ns = door_dup(psn)))) {
    buf_puts(err, "out of memory");
    return -12;
  }
  if (!cJSON_IsObject(spec)) {
    buf_puts(err, "spec is missing");
    return -22;
  }
  static const char *const skip[] = {"interval", "suspend", "timeout", "driftDetection", NULL};
  door_spec_digest(spec, skip, r->digest); /* all but how often and whether it is looked at */
  if (strlen(r->release_name) > 53) {
    buf_printf(err, "spec.releaseName: release name \"%s\" is longer than 53 characters", r->release_name);
    return -22;
  }
  if ((rc = door_check_release_name(r->release_name, "spec.releaseName", err)) ||
      (tn && *tn && (rc = door_check_namespace(tn, "spec.targetNamespace", err))) ||
      (sn && *sn && (rc = door_check_namespace(sn, "spec.storageNamespace", err))))
    return rc;
  const cJSON *mh = cJSON_GetObjectItemCaseSensitive(spec, "maxHistory");
  if (cJSON_IsNumber(mh)) {
    if (mh->valuedouble < 0) {
      buf_puts(err, "spec.maxHistory: must not be negative");
      return -22;
    }
    r->max_history = mh->valuedouble > 1e6 ? 1000000 : (int)mh->valuedouble;
  }
  static const struct { const char *k; long *dst; long min; } durs[] = {
      {"interval", NULL, REQ_MIN_INTERVAL_MS}, {"timeout", NULL, 1000}};
  for (size_t i = 0; i < sizeof durs / sizeof *durs; i++) {
    long *dst = i == 0 ? &r->interval_ms : &r->timeout_ms;
    const char *v = door_str(spec, durs[i].k);
    if (!v) continue;
    long ms = req_duration_ms(v);
    if (ms <= 0) {
      buf_printf(err, "spec.%s: \"%s\" is not a positive duration like 5m or 1h", durs[i].k, v);
      return -22;
    }
    if (ms < durs[i].min) {
      buf_printf(err, "spec.%s: %s is shorter than the minimum of %lds", durs[i].k, v, durs[i].min / 1000);
      return -22;
    }
    *dst = ms;
  }
  if ((rc = door_bool(spec, "suspend", "spec", &r->suspend, err))) return rc;
  bool create_ns = false;
  if ((rc = door_bool(spec, "createNamespace", "spec", &create_ns, err))) return rc;
  /* Everything the release applies, reads back and deletes is done as this service account of the
   * object's namespace (impersonated), as Flux does. */
  const cJSON *sav = cJSON_GetObjectItemCaseSensitive(spec, "serviceAccountName");
  if (sav && !cJSON_IsNull(sav)) {
    const char *sa = cJSON_IsString(sav) ? sav->valuestring : NULL;
    size_t n = sa ? strlen(sa) : 0;
    int ok = n > 0 && n <= 253 && strspn(sa, "abcdefghijklmnopqrstuvwxyz0123456789-.") == n && isalnum((unsigned char)sa[0]) &&
             isalnum((unsigned char)sa[n - 1]);
    if (!ok) {
      buf_puts(err, "spec.serviceAccountName: must be a service account name (lowercase letters, digits, '-' and '.')");
      return -22;
    }
    if (!(r->service_account = door_dup(sa))) {
      buf_puts(err, "out of memory");
      return -12;
    }
  }
  if ((rc = hr__values_from(spec, r, err)) || (rc = hr__depends_on(spec, ctx, r, err)) ||
      (rc = hr__kube_config(spec, r, err)) || (rc = hr__drift(spec, r, err)))
    return rc;
  r->create_namespace = create_ns;
  if ((rc = hr__action(spec, "install", &r->install, err)) || (rc = hr__action(spec, "upgrade", &r->upgrade, err)))
    return rc;
  const cJSON *up = door_obj(spec, "upgrade");
  if ((rc = door_bool(up, "force", "spec.upgrade", &r->force, err)) ||
      (rc = door_bool(up, "cleanupOnFail", "spec.upgrade", &r->cleanup_on_fail, err)))
    return rc;
  if (r->install.strategy == REQ_REMEDIATE_ROLLBACK) {
    buf_puts(err, "spec.install.remediation.strategy: a failed install can only be remediated by uninstall");
    return -22;
  }
  if (r->install.retries && !r->install.strategy) r->install.strategy = REQ_REMEDIATE_UNINSTALL;
  if (r->upgrade.retries && !r->upgrade.strategy) r->upgrade.strategy = REQ_REMEDIATE_ROLLBACK;
  const cJSON *rb = door_obj(spec, "rollback");
  const cJSON *tr = cJSON_GetObjectItemCaseSensitive(rb, "toRevision");
  if (tr) {
    if (!cJSON_IsNumber(tr) || tr->valuedouble < 1) {
      buf_puts(err, "spec.rollback.toRevision: must be a revision number (1 or more)");
      return -22;
    }
    r->rollback_to = (long long)tr->valuedouble;
  }
  const cJSON *un = door_obj(spec, "uninstall");
  if ((rc = door_bool(un, "keepHistory", "spec.uninstall", &r->keep_history, err)) ||
      (rc = door_bool(un, "disableHooks", "spec.uninstall", &r->uninstall_disable_hooks, err)) ||
      (rc = door_bool(un, "disableWait", "spec.uninstall", &r->uninstall_disable_wait, err)))
    return rc;
  r->uninstall_timeout_ms = r->timeout_ms;
  const char *ut = door_str(un, "timeout");
  if (ut) {
    long ms = req_duration_ms(ut);
    if (ms < 1000) {
      buf_printf(err, "spec.uninstall.timeout: \"%s\" is not a duration of at least 1s like 5m", ut);
      return -22;
    }
    r->uninstall_timeout_ms = ms;
  }
  const char *dp = door_str(un, "deletionPropagation");
  if (dp) {
    static const char *const pol[][2] = {{"background", "Background"}, {"foreground", "Foreground"}, {"orphan", "Orphan"}};
    for (size_t i = 0; i < 3 && !r->deletion_propagation; i++)
      if (!strcmp(dp, pol[i][0])) r->deletion_propagation = strdup(pol[i][1]);
    if (!r->deletion_propagation) {
      buf_printf(err, "spec.uninstall.deletionPropagation: \"%s\" is not background, foreground or orphan", dp);
      return -22;
    }
  }
  const cJSON *test = door_obj(spec, "test");
  if ((rc = door_bool(test, "enable", "spec.test", &r->test_enable, err)) ||
      (rc = door_bool(test, "ignoreFailures", "spec.test", &r->test_ignore_failures, err)))
    return rc;

  const cJSON *values = cJSON_GetObjectItemCaseSensitive(spec, "values");
  if (values && !cJSON_IsObject(values) && !cJSON_IsNull(values)) {
    buf_puts(err, "spec.values: must be an object");
    return -22;
  }
  r->values = cJSON_IsObject(values) ? cJSON_Duplicate(values, 1) : cJSON_CreateObject();
  if (!r->values) {
    buf_puts(err, "out of memory");
    return -12;
  }
  const cJSON *chart = cJSON_GetObjectItemCaseSensitive(spec, "chart");
  if (!cJSON_IsObject(chart)) {
    buf_puts(err, "spec.chart is missing");
    return -22;
  }
  const cJSON *inl = cJSON_GetObjectItemCaseSensitive(chart, "inline");
  const cJSON *repo = cJSON_GetObjectItemCaseSensitive(chart, "repository");
  const cJSON *url = cJSON_GetObjectItemCaseSensitive(chart, "url");
  static const char *const sources[] = {"inline", "repository", "url", "configMapRef", "secretRef"};
  int nsrc = 0;
  for (size_t i = 0; i < sizeof sources / sizeof *sources; i++)
    if (cJSON_GetObjectItemCaseSensitive(chart, sources[i])) nsrc++;
  if (nsrc != 1) {
    buf_puts(err, nsrc ? "spec.chart: set exactly one of inline, repository, url, configMapRef or secretRef"
                       : "spec.chart: no chart source set (inline, repository, url, configMapRef or secretRef)");
    return -22;
  }
  if (!inl) return hr__chart_source(chart, repo, url, ctx, r, err);
  return hr__load_inline(inl, r, err);
}

/* ---- status ---- */

static void hr__time(cJSON *o, const char *k, const release_time_t *t) {
  if (!t->set) return;
  char buf[32];
  time_t sec = (time_t)t->sec;
  struct tm tm;
  gmtime_r(&sec, &tm);
  strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  cJSON_AddStringToObject(o, k, buf);
}

static cJSON *hr__history_entry(const record_t *r, const release_outcome_t *o) {
  const release_t *rel = r->rel;
  cJSON *h = cJSON_CreateObject();
  if (!h) return NULL;
  cJSON_AddStringToObject(h, "name", rel->name ? rel->name : "");
  cJSON_AddStringToObject(h, "namespace", rel->namespace ? rel->namespace : "");
  cJSON_AddNumberToObject(h, "version", (double)r->version);
  cJSON_AddStringToObject(h, "status", r->status);
  if (rel->chart && rel->chart->metadata) {
    const release_metadata_t *m = rel->chart->metadata;
    cJSON_AddStringToObject(h, "chartName", m->name ? m->name : "");
    cJSON_AddStringToObject(h, "chartVersion", m->version ? m->version : "");
    if (m->app_version && *m->app_version) cJSON_AddStringToObject(h, "appVersion", m->app_version);
  }
  if (o->applied_digest && *o->applied_digest && r->version == o->applied_revision)
    cJSON_AddStringToObject(h, "digest", o->applied_digest);
  if (rel->info) {
    hr__time(h, "firstDeployed", &rel->info->first_deployed);
    hr__time(h, "lastDeployed", &rel->info->last_deployed);
  }
  return h;
}

static char *hr_status_patch(const release_outcome_t *o) {
  const release_req_t *r = o->req;
  cJSON *st = cJSON_CreateObject();
  if (!st) return NULL;
  if (!o->progressing) cJSON_AddNumberToObject(st, "observedGeneration", (double)r->generation);
  cJSON_AddItemToObject(st, "conditions", door_conditions(o));
  if (o->progressing) return door_status_body(st); /* only Reconciling changes */
  if (o->applied_revision > 0) cJSON_AddNumberToObject(st, "lastAppliedRevision", (double)o->applied_revision);
  if (o->attempted_revision > 0) cJSON_AddNumberToObject(st, "lastAttemptedRevision", (double)o->attempted_revision);
  door_bookkeeping_write(st, o);
  door_outside_write(st, o);
  cJSON_AddStringToObject(st, "storageNamespace", r->storage_ns ? r->storage_ns : "");
  /* The Helm release this object manages: a later change of its name (releaseName, targetNamespace)
   * uninstalls this one first (release_req_t.prev_release_name). */
  if (o->nhistory) cJSON_AddStringToObject(st, "releaseName", r->release_name ? r->release_name : "");
  if (o->nhistory) {
    cJSON *h = cJSON_AddArrayToObject(st, "history");
    for (size_t i = 0; i < o->nhistory; i++) cJSON_AddItemToArray(h, hr__history_entry(&o->history[i], o));
  }
  return door_status_body(st);
}

static const char *const hr__keep[] = {"spec", "status.conditions", "status.lastAppliedRevision", DOOR_KEEP_BOOKKEEPING, DOOR_KEEP_OUTSIDE,
                                       "status.releaseName", "status.storageNamespace",
                                       "metadata.labels", "metadata.annotations", NULL};

/* The inline chart (templates and the chart's values) is most of an object, and releases of one
 * chart carry the same: the cache holds its text once (bench/scale/README.md, the cache's bytes). */
static const char *const hr__text[] = {"spec.chart.inline", NULL};

const door_t door_helmrelease = {
    .kind = "HelmRelease",
    .group = "rudder.dev",
    .version = "v1alpha1",
    .resource = "helmreleases",
    .finalizer = HR_FINALIZER,
    .cache_keep = hr__keep,
    .cache_text = hr__text,
    .parse = hr_parse,
    .status_patch = hr_status_patch,
};
