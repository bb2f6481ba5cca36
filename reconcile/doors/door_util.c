/* What every front door does the same way (door_util.h). */
#include "reconcile/doors/door_util.h"
#include "base/sha256.h"
#include "helm/release/release.h"
#include "reconcile/conditions.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

char *door_dup(const char *s) { return s ? strdup(s) : NULL; }

const char *door_str(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

const cJSON *door_obj(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsObject(v) ? v : NULL;
}

int door_bool(const cJSON *o, const char *k, const char *path, bool *out, buf_t *err) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  if (!v || cJSON_IsNull(v)) return 0;
  if (!cJSON_IsBool(v)) {
    buf_printf(err, "%s.%s: must be true or false", path, k);
    return -22;
  }
  *out = cJSON_IsTrue(v);
  return 0;
}

int door_string(const cJSON *o, const char *k, const char *path, const char **out, buf_t *err) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  *out = NULL;
  if (!v || cJSON_IsNull(v)) return 0;
  if (!cJSON_IsString(v)) {
    buf_printf(err, "%s.%s: must be a string", path, k);
    return -22;
  }
  *out = v->valuestring;
  return 0;
}

int door_parse_meta(const cJSON *obj, const char *finalizer, release_req_t *r, buf_t *err) {
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
  const cJSON *status = cJSON_GetObjectItemCaseSensitive(obj, "status");
  r->ns = door_dup(door_str(meta, "namespace"));
  r->name = door_dup(door_str(meta, "name"));
  r->uid = door_dup(door_str(meta, "uid"));
  r->resource_version = door_dup(door_str(meta, "resourceVersion"));
  if (!r->ns || !r->name) {
    buf_puts(err, "object has no metadata.namespace or metadata.name");
    return -22;
  }
  const cJSON *gen = cJSON_GetObjectItemCaseSensitive(meta, "generation");
  r->generation = cJSON_IsNumber(gen) ? (long long)gen->valuedouble : 0;
  r->deleting = door_str(meta, "deletionTimestamp") != NULL;
  const cJSON *fins = cJSON_GetObjectItemCaseSensitive(meta, "finalizers");
  if (cJSON_IsArray(fins)) {
    if (!(r->finalizers = cJSON_Duplicate(fins, 1))) goto oom;
    const cJSON *f;
    cJSON_ArrayForEach(f, fins) if (cJSON_IsString(f) && !strcmp(f->valuestring, finalizer)) r->has_finalizer = 1;
  }
  const cJSON *conds = cJSON_GetObjectItemCaseSensitive(status, "conditions");
  if (cJSON_IsArray(conds) && !(r->conditions = cJSON_Duplicate(conds, 1))) goto oom;
  const char *asked = door_str(cJSON_GetObjectItemCaseSensitive(meta, "annotations"), REQ_RECONCILE_ANNOTATION);
  const char *handled = door_str(status, "lastHandledReconcileAt");
  if ((asked && !(r->reconcile_requested = door_dup(asked))) || (handled && !(r->reconcile_handled = door_dup(handled))))
    goto oom;
  return 0;
oom:
  buf_puts(err, "out of memory");
  return -12;
}

bool door_file_name_ok(const char *n) {
  if (!*n || !strcmp(n, ".") || !strcmp(n, "..") || strlen(n) > 253) return 0;
  for (const unsigned char *p = (const unsigned char *)n; *p; p++)
    if (*p < 0x20 || *p == 0x7f || *p == '/' || *p == '\\') return 0;
  return 1;
}

static int door__cmp_files(const void *a, const void *b) {
  return strcmp(((const chart_file_t *)a)->name, ((const chart_file_t *)b)->name);
}

static int door__check_files(const cJSON *o, const char *field, const char *what, size_t *n, buf_t *err) {
  for (const cJSON *t = o ? o->child : NULL; t; t = t->next, (*n)++) {
    if (!cJSON_IsString(t)) {
      buf_printf(err, "%s.%s[%s]: must be a string", field, what, t->string);
      return -22;
    }
    if (!door_file_name_ok(t->string)) {
      buf_printf(err, "%s.%s: a file name must be a plain printable name without '/' (got ", field, what);
      release_go_string_append(err, t->string, strlen(t->string));
      buf_puts(err, ")");
      return -22;
    }
  }
  return 0;
}

/* The chart as Helm loads the equivalent directory: Chart.yaml, values.yaml and templates/ read in
 * name order (JSON is YAML, so the parts taken from the object are written as JSON). */
int door_inline_chart(release_req_t *r, const char *field, const char *name, const char *version, const char *app_version,
                      const cJSON *values, const cJSON *templates, const cJSON *crds, buf_t *err) {
  size_t n = 0;
  int rc;
  if ((rc = door__check_files(templates, field, "templates", &n, err)) ||
      (rc = door__check_files(crds, field, "crds", &n, err)))
    return rc;
  chart_file_t *files = calloc(n + 2, sizeof *files);
  cJSON *meta = cJSON_CreateObject();
  size_t k = 0;
  rc = -12;
  if (!files || !meta) goto done;
  cJSON_AddStringToObject(meta, "apiVersion", "v2");
  cJSON_AddStringToObject(meta, "name", name);
  cJSON_AddStringToObject(meta, "version", version);
  if (app_version && *app_version) cJSON_AddStringToObject(meta, "appVersion", app_version);
  files[k].name = strdup("Chart.yaml");
  files[k].data = cJSON_PrintUnformatted(meta);
  if (!files[k].name || !files[k].data) goto done;
  files[k].len = strlen(files[k].data);
  k++;
  if (cJSON_IsObject(values)) {
    /* Go's encoding: exact for every double (cJSON_Print rounds some to 15 digits). */
    buf_t vals = BUF_INIT;
    files[k].name = strdup("values.yaml");
    if (!files[k].name || release_go_json_append(&vals, values)) {
      buf_free(&vals);
      goto done;
    }
    if (!(files[k].data = buf_steal(&vals))) goto done;
    files[k].len = strlen(files[k].data);
    k++;
  }
  size_t first = k;
  for (const cJSON *t = templates ? templates->child : NULL, *c = crds ? crds->child : NULL; t || c;) {
    const cJSON *f = t ? t : c;
    const char *dir = t ? "templates" : "crds";
    if (t) t = t->next;
    else c = c->next;
    size_t len = strlen(f->valuestring);
    buf_t nm = BUF_INIT;
    buf_printf(&nm, "%s/%s", dir, f->string);
    files[k].name = buf_steal(&nm);
    files[k].data = malloc(len + 1);
    if (!files[k].name || !files[k].data) goto done;
    memcpy(files[k].data, f->valuestring, len + 1);
    files[k].len = len;
    k++;
  }
  qsort(files + first, k - first, sizeof *files, door__cmp_files);
  chart_error_t cerr = {{0}};
  rc = chart_load_files(files, k, NULL, &r->chart, &cerr);
  if (rc) buf_printf(err, "%s: %s", field, cerr.message);
done:
  if (rc == -12 && !err->len) buf_puts(err, "out of memory");
  for (size_t i = 0; files && i < n + 2; i++) {
    free(files[i].name);
    free(files[i].data);
  }
  free(files);
  cJSON_Delete(meta);
  return rc;
}

const cJSON *door_subtree(const cJSON *x, cJSON **owned) {
  *owned = NULL;
  if (!cJSON_IsRaw(x)) return x;
  /* The informer printed it from a parsed tree: only memory can fail here. */
  return *owned = cJSON_Parse(x->valuestring);
}

void door_spec_digest(const cJSON *spec, const char *const *skip, char out[65]) {
  cJSON *copy = cJSON_Duplicate(spec, 1);
  out[0] = 0;
  if (!copy) return;
  for (size_t i = 0; skip && skip[i]; i++) cJSON_DeleteItemFromObjectCaseSensitive(copy, skip[i]);
  char *text = cJSON_PrintUnformatted(copy);
  cJSON_Delete(copy);
  if (!text) return;
  uint8_t d[32];
  base_sha256(text, strlen(text), d);
  free(text);
  base_sha256_hex(d, out);
}

int door_check_name(const char *v, const char *field, size_t max, buf_t *err) {
  size_t n = v ? strlen(v) : 0;
  int ok = n > 0 && n <= max && strspn(v, "abcdefghijklmnopqrstuvwxyz0123456789-.") == n &&
           isalnum((unsigned char)v[0]) && isalnum((unsigned char)v[n - 1]);
  if (ok) return 0;
  buf_printf(err, "%s: ", field);
  if (v) { /* quoted as Go's %q, so that control characters show */
    release_go_string_append(err, v, n > 300 ? 300 : n);
    buf_puts(err, " ");
  }
  buf_printf(err, "must be a name of at most %zu lowercase letters, digits, '-' and '.', starting and ending "
                  "with a letter or digit", max);
  return -22;
}

/* Lowercase DNS labels (letters, digits, '-' inside) joined by '.' when dots is set. */
static bool door__labels_ok(const char *v, bool dots) {
  size_t run = 0;
  char prev = '.';
  for (const char *p = v; *p; prev = *p++) {
    char c = *p;
    if (c == '.' && dots) {
      if (!run || prev == '-') return false;
      run = 0;
    } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) {
      run++;
    } else if (c == '-' && run) {
      run++;
    } else {
      return false;
    }
  }
  return run && prev != '-';
}

int door_check_release_name(const char *v, const char *field, buf_t *err) {
  if (v && strlen(v) <= 53 && door__labels_ok(v, true)) return 0;
  buf_printf(err, "%s: ", field);
  if (v) {
    release_go_string_append(err, v, strlen(v) > 300 ? 300 : strlen(v));
    buf_puts(err, " ");
  }
  buf_puts(err, "is not a valid release name: at most 53 characters, lowercase letters, digits, '-' and '.', each "
                "part between dots starting and ending with a letter or digit");
  return -22;
}

int door_check_namespace(const char *v, const char *field, buf_t *err) {
  if (v && strlen(v) <= 63 && door__labels_ok(v, false)) return 0;
  buf_printf(err, "%s: ", field);
  if (v) {
    release_go_string_append(err, v, strlen(v) > 300 ? 300 : strlen(v));
    buf_puts(err, " ");
  }
  buf_puts(err, "is not a namespace name: at most 63 lowercase letters, digits and '-', starting and ending with a "
                "letter or digit");
  return -22;
}

int door_add_values_from(release_req_t *r, bool secret, const char *name, const char *key, const char *target_path,
                         bool optional, const char *field, buf_t *err) {
  req_values_from_t *v = realloc(r->values_from, (r->nvalues_from + 1) * sizeof *v);
  if (!v) goto oom;
  r->values_from = v;
  v += r->nvalues_from;
  memset(v, 0, sizeof *v);
  r->nvalues_from++;
  v->secret = secret;
  v->optional = optional;
  v->ns = door_dup(r->ns);
  v->name = door_dup(name);
  v->key = door_dup(key && *key ? key : "values.yaml");
  v->field = door_dup(field);
  if (target_path && *target_path && !(v->target_path = strdup(target_path))) goto oom;
  if (!v->ns || !v->name || !v->key || !v->field) goto oom;
  return 0;
oom:
  buf_puts(err, "out of memory");
  return -12;
}

int door_add_depends_on(release_req_t *r, const char *ns, const char *name, buf_t *err) {
  char **v = realloc(r->depends_on, (r->ndepends_on + 1) * sizeof *v);
  buf_t k = BUF_INIT;
  if (v) {
    r->depends_on = v;
    buf_printf(&k, "%s/%s", ns, name);
  }
  if (!v || !k.data) {
    buf_puts(err, "out of memory");
    return -12;
  }
  r->depends_on[r->ndepends_on++] = buf_steal(&k);
  return 0;
}

cJSON *door_conditions(const release_outcome_t *o) {
  const release_req_t *r = o->req;
  char now[32];
  cond_now_rfc3339(now);
  cJSON *conds = r->conditions ? cJSON_Duplicate(r->conditions, 1) : NULL;
  if (o->progressing) /* kstatus reads Reconciling=True as in progress; the outcome removes it */
    return cond_set(conds, r->conditions, "Reconciling", "True", "Progressing", o->progressing, r->generation, now);
  conds = cond_set(conds, r->conditions, "Ready", o->ready, o->reason, o->message, r->generation, now);
  if (o->released) conds = cond_set(conds, r->conditions, "Released", o->released, o->reason, o->message, r->generation, now);
  if (o->remediated)
    conds = cond_set(conds, r->conditions, "Remediated", o->remediated, o->reason, o->message, r->generation, now);
  if (o->tested)
    conds = cond_set(conds, r->conditions, "TestSuccess", o->tested, !strcmp(o->tested, "True") ? "TestSucceeded" : "TestFailed",
                     o->message, r->generation, now);
  if (o->drifted && *o->drifted)
    conds = cond_set(conds, r->conditions, "Drifted", o->drifted, "DriftDetected", o->drift_message, r->generation, now);
  else if (o->drifted)
    conds = cond_remove(conds, "Drifted");
  if (o->stalled)
    conds = cond_set(conds, r->conditions, "Stalled", o->stalled, o->stalled_reason ? o->stalled_reason : o->reason,
                     o->message, r->generation, now);
  else conds = cond_remove(conds, "Stalled");
  return cond_remove(conds, "Reconciling");
}

char *door_status_body(cJSON *st) {
  cJSON *patch = cJSON_CreateObject();
  if (!patch || !st) {
    cJSON_Delete(patch);
    cJSON_Delete(st);
    return NULL;
  }
  cJSON_AddItemToObject(patch, "status", st);
  char *body = cJSON_PrintUnformatted(patch);
  cJSON_Delete(patch);
  return body;
}

const record_t *door_current_record(const release_outcome_t *o) {
  for (size_t i = 0; i < o->nhistory; i++)
    if (o->history[i].status && !strcmp(o->history[i].status, "deployed")) return &o->history[i];
  return o->nhistory ? &o->history[0] : NULL;
}

static int door__count(const cJSON *status, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(status, k);
  return cJSON_IsNumber(v) && v->valuedouble > 0 ? (v->valuedouble > 1e6 ? 1000000 : (int)v->valuedouble) : 0;
}

void door_bookkeeping_read(const cJSON *status, release_req_t *r) {
  const char *ad = door_str(status, "lastAppliedDigest");
  if (ad && strlen(ad) == 64) memcpy(r->applied_digest, ad, 65);
  const char *fd = door_str(status, "lastAttemptedDigest");
  if (fd && strlen(fd) == 64) memcpy(r->failed_digest, fd, 65);
  r->install_failures = door__count(status, "installFailures");
  r->upgrade_failures = door__count(status, "upgradeFailures");
}

void door_bookkeeping_write(cJSON *st, const release_outcome_t *o) {
  if (o->applied_digest && *o->applied_digest) cJSON_AddStringToObject(st, "lastAppliedDigest", o->applied_digest);
  if (o->attempted_digest && *o->attempted_digest) cJSON_AddStringToObject(st, "lastAttemptedDigest", o->attempted_digest);
  cJSON_AddNumberToObject(st, "installFailures", o->install_failures);
  cJSON_AddNumberToObject(st, "upgradeFailures", o->upgrade_failures);
  /* Whatever the outcome, it answers the reconcile asked for when this one started. */
  if (o->req->reconcile_requested) cJSON_AddStringToObject(st, "lastHandledReconcileAt", o->req->reconcile_requested);
}

void door_outside_write(cJSON *st, const release_outcome_t *o) {
  if (o->outside) cJSON_AddItemToObject(st, "outsideObjects", cJSON_Duplicate(o->outside, 1));
}

int door_outside_read(const cJSON *status, release_req_t *r, buf_t *err) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(status, "outsideObjects");
  if (!cJSON_IsArray(v) || !v->child) return 0;
  if (!(r->outside = cJSON_Duplicate(v, 1))) {
    buf_puts(err, "out of memory");
    return -12;
  }
  return 0;
}
