#define _GNU_SOURCE /* asprintf */
#include "helm/render/manifest.h"
#include "base/buf.h"
#include "base/log.h"
#include "base/yaml.h"
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* releaseutil.InstallOrder (Helm v4.3.1 kind_sorter.go); the uninstall order is its reverse. */
static const char *const manifest__install_order[] = {
    "PriorityClass", "Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodSecurityPolicy",
    "PodDisruptionBudget", "ServiceAccount", "Secret", "SecretList", "ConfigMap", "StorageClass",
    "PersistentVolume", "PersistentVolumeClaim", "CustomResourceDefinition", "ClusterRole", "ClusterRoleList",
    "ClusterRoleBinding", "ClusterRoleBindingList", "Role", "RoleList", "RoleBinding", "RoleBindingList",
    "Service", "DaemonSet", "Pod", "ReplicationController", "ReplicaSet", "Deployment",
    "HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob", "IngressClass", "Ingress", "APIService",
    "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration",
};
#define MANIFEST__NKINDS (sizeof manifest__install_order / sizeof manifest__install_order[0])

/* Hook events Helm knows (manifest_sorter.go); "test-success" is an alias of "test". */
static const char *const manifest__events[] = {
    "pre-install", "post-install", "pre-delete", "post-delete", "pre-upgrade",
    "post-upgrade", "pre-rollback", "post-rollback", "test",
};

int manifest_kind_rank(const char *kind, manifest_order_t order) {
  for (size_t i = 0; i < MANIFEST__NKINDS; i++)
    if (strcmp(kind, manifest__install_order[i]) == 0)
      return order == MANIFEST_UNINSTALL_ORDER ? (int)(MANIFEST__NKINDS - 1 - i) : (int)i;
  return -1;
}

/* lessByKind: known kinds by rank, unknown kinds after them ordered by name. */
/* Whether an element of kind a and rank ra goes before one of kind b and rank rb. */
static int manifest__less_ranked(const char *a, int ra, const char *b, int rb) {
  if (ra < 0 && rb < 0) return strcmp(a, b) < 0;
  if (ra < 0) return 0;
  if (rb < 0) return 1;
  return ra < rb;
}

static int manifest__less(const char *a, const char *b, manifest_order_t order) {
  return manifest__less_ranked(a, manifest_kind_rank(a, order), b, manifest_kind_rank(b, order));
}

/* Stable merge sort over an array of elements of `size` bytes, by the kind at kind_of(); each
 * kind's rank is looked up once, and carried with its element. */
static int manifest__stable_sort(void *base, size_t n, size_t size, const char *(*kind_of)(const void *),
                                 manifest_order_t order) {
  if (n < 2) return 0;
  char *tmp = malloc(n * size);
  int *rk = malloc(2 * n * sizeof *rk);
  if (!tmp || !rk) {
    free(tmp);
    free(rk);
    return -ENOMEM;
  }
  int *rt = rk + n;
  char *a = base;
  for (size_t i = 0; i < n; i++) rk[i] = manifest_kind_rank(kind_of(a + i * size), order);
  for (size_t width = 1; width < n; width *= 2) {
    for (size_t lo = 0; lo < n; lo += 2 * width) {
      size_t mid = lo + width < n ? lo + width : n, hi = lo + 2 * width < n ? lo + 2 * width : n;
      size_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) {
        /* take from the right only when strictly less: keeps equal elements in order */
        if (manifest__less_ranked(kind_of(a + j * size), rk[j], kind_of(a + i * size), rk[i])) {
          rt[k] = rk[j];
          memcpy(tmp + k++ * size, a + j++ * size, size);
        } else {
          rt[k] = rk[i];
          memcpy(tmp + k++ * size, a + i++ * size, size);
        }
      }
      while (i < mid) rt[k] = rk[i], memcpy(tmp + k++ * size, a + i++ * size, size);
      while (j < hi) rt[k] = rk[j], memcpy(tmp + k++ * size, a + j++ * size, size);
    }
    memcpy(a, tmp, n * size);
    memcpy(rk, rt, n * sizeof *rk);
  }
  free(tmp);
  free(rk);
  return 0;
}

static const char *manifest__doc_kind(const void *p) { return ((const manifest_doc_t *)p)->kind; }
static const char *manifest__hook_kind(const void *p) { return ((const manifest_hook_t *)p)->doc.kind; }

void manifest_sort_docs(manifest_doc_t *docs, size_t n, manifest_order_t order) {
  if (manifest__stable_sort(docs, n, sizeof *docs, manifest__doc_kind, order) == 0) return;
  /* Out of memory for the merge buffer: fall back to an in-place stable insertion sort. */
  for (size_t i = 1; i < n; i++) {
    manifest_doc_t d = docs[i];
    size_t j = i;
    while (j > 0 && manifest__less(d.kind, docs[j - 1].kind, order)) {
      docs[j] = docs[j - 1];
      j--;
    }
    docs[j] = d;
  }
}

static void manifest__doc_free(manifest_doc_t *d) {
  free(d->source);
  free(d->content);
  free(d->api_version);
  free(d->kind);
  free(d->name);
  free(d->generate_name);
  free(d->namespace);
  cJSON_Delete(d->annotations);
  memset(d, 0, sizeof *d);
}

static void manifest__strv_free(char **v, size_t n) {
  for (size_t i = 0; i < n; i++) free(v[i]);
  free(v);
}

static void manifest__hook_free(manifest_hook_t *h) {
  manifest__doc_free(&h->doc);
  manifest__strv_free(h->events, h->nevents);
  manifest__strv_free(h->delete_policies, h->ndelete_policies);
  manifest__strv_free(h->output_log_policies, h->noutput_log_policies);
  memset(h, 0, sizeof *h);
}

void manifest_set_free(manifest_set_t *set) {
  for (size_t i = 0; i < set->ndocs; i++) manifest__doc_free(&set->docs[i]);
  for (size_t i = 0; i < set->nhooks; i++) manifest__hook_free(&set->hooks[i]);
  free(set->docs);
  free(set->hooks);
  free(set->manifest);
  free(set->notes);
  free(set->skipped_hooks);
  memset(set, 0, sizeof *set);
}

static int manifest__fail(manifest_error_t *err, int code, const char *source, int line, int column,
                          const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static int manifest__fail(manifest_error_t *err, int code, const char *source, int line, int column,
                          const char *fmt, ...) {
  if (!err) return code;
  memset(err, 0, sizeof *err);
  snprintf(err->source, sizeof err->source, "%s", source ? source : "");
  err->line = line;
  err->column = column;
  char problem[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(problem, sizeof problem, fmt, ap);
  va_end(ap);
  if (line > 0 && column > 0)
    snprintf(err->message, sizeof err->message, "%s: line %d, column %d: %s", err->source, line, column, problem);
  else if (line > 0)
    snprintf(err->message, sizeof err->message, "%s: line %d: %s", err->source, line, problem);
  else
    snprintf(err->message, sizeof err->message, "%s: %s", err->source, problem);
  return code;
}

/* The text sigs.k8s.io/yaml puts in a string-typed Go field: strings as they are, numbers and bools
 * formatted, null as "". Returns NULL (with *bad set) for objects and arrays. */
static const char *manifest__as_string(const cJSON *v, int *bad) {
  *bad = 0;
  if (!v || cJSON_IsNull(v)) return "";
  if (cJSON_IsString(v)) return v->valuestring;
  if (cJSON_IsTrue(v)) return "true";
  if (cJSON_IsFalse(v)) return "false";
  if ((cJSON_IsNumber(v) || cJSON_IsRaw(v)) && v->valuestring) return v->valuestring;
  *bad = 1;
  return NULL;
}

static const char *manifest__type_name(const cJSON *v) {
  return cJSON_IsObject(v) ? "object" : cJSON_IsArray(v) ? "array" : cJSON_IsString(v) ? "string"
       : cJSON_IsNumber(v) || cJSON_IsRaw(v) ? "number" : cJSON_IsBool(v) ? "bool" : "null";
}

typedef struct manifest__ctx_s {
  manifest_error_t *err;
  const char *source;
  int line, column; /* where the current document starts in its file */
} manifest__ctx_t;

/* Reads a string-typed head field into *dst (strdup'd). */
static int manifest__field(manifest__ctx_t *c, const cJSON *obj, const char *key, const char *path, char **dst) {
  int bad;
  const char *s = manifest__as_string(cJSON_GetObjectItemCaseSensitive(obj, key), &bad);
  if (bad)
    return manifest__fail(c->err, -EINVAL, c->source, c->line, 0, "%s must be a string, not an %s", path,
                          manifest__type_name(cJSON_GetObjectItemCaseSensitive(obj, key)));
  *dst = strdup(s);
  return *dst ? 0 : -ENOMEM;
}

/* Parses one document: YAML to JSON, then the head Helm reads (SimpleHead) plus name and namespace. */
static int manifest__parse_doc(manifest__ctx_t *c, const char *text, size_t len, manifest_doc_t *d) {
  cJSON *obj = NULL;
  yaml_error_t ye;
  int rc = yaml_to_json(text, len, NULL, &obj, &ye);
  if (rc == -ENOMEM) return rc;
  if (rc) {
    /* Marks are relative to the document; the first line of a document may start mid-line. */
    int line = ye.line ? c->line + ye.line - 1 : c->line;
    int col = ye.line == 1 ? c->column + ye.column - 1 : ye.column;
    if (!ye.context[0])
      return manifest__fail(c->err, -EINVAL, c->source, line, col, "YAML parse error: %s", ye.problem);
    int cline = c->line + ye.context_line - 1;
    int ccol = ye.context_line == 1 ? c->column + ye.context_column - 1 : ye.context_column;
    return manifest__fail(c->err, -EINVAL, c->source, line, col, "YAML parse error: %s (%s that started at line %d, column %d)",
                          ye.problem, ye.context, cline, ccol);
  }
  if (cJSON_IsNull(obj)) {
    cJSON_Delete(obj);
    d->is_empty = 1;
    if (!(d->api_version = strdup("")) || !(d->kind = strdup("")) || !(d->name = strdup("")) ||
        !(d->generate_name = strdup("")) || !(d->namespace = strdup("")))
      return -ENOMEM;
    return 0;
  }
  if (!cJSON_IsObject(obj)) {
    rc = manifest__fail(c->err, -EINVAL, c->source, c->line, 0, "document is a YAML %s, not a Kubernetes object",
                        cJSON_IsArray(obj) ? "sequence" : "scalar");
    cJSON_Delete(obj);
    return rc;
  }
  const cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
  if (meta && !cJSON_IsNull(meta) && !cJSON_IsObject(meta)) {
    rc = manifest__fail(c->err, -EINVAL, c->source, c->line, 0, "metadata must be an object, not an %s",
                        manifest__type_name(meta));
    goto out;
  }
  if ((rc = manifest__field(c, obj, "apiVersion", "apiVersion", &d->api_version)) ||
      (rc = manifest__field(c, obj, "kind", "kind", &d->kind)) ||
      (rc = manifest__field(c, meta, "name", "metadata.name", &d->name)) ||
      (rc = manifest__field(c, meta, "generateName", "metadata.generateName", &d->generate_name)) ||
      (rc = manifest__field(c, meta, "namespace", "metadata.namespace", &d->namespace)))
    goto out;
  const cJSON *ann = cJSON_GetObjectItemCaseSensitive(meta, "annotations");
  if (ann && !cJSON_IsNull(ann)) {
    if (!cJSON_IsObject(ann)) {
      rc = manifest__fail(c->err, -EINVAL, c->source, c->line, 0, "metadata.annotations must be an object, not an %s",
                          manifest__type_name(ann));
      goto out;
    }
    d->annotations = cJSON_CreateObject();
    if (!d->annotations) { rc = -ENOMEM; goto out; }
    for (const cJSON *a = ann->child; a; a = a->next) {
      int bad;
      const char *s = manifest__as_string(a, &bad);
      if (bad) {
        rc = manifest__fail(c->err, -EINVAL, c->source, c->line, 0,
                            "metadata.annotations.%s must be a string, not an %s", a->string, manifest__type_name(a));
        goto out;
      }
      if (!cJSON_AddStringToObject(d->annotations, a->string, s)) { rc = -ENOMEM; goto out; }
    }
  }
  /* What the API server and Helm's kube client need before anything is applied. */
  if (!*d->api_version)
    rc = manifest__fail(c->err, -EINVAL, c->source, c->line, 0, "object has no apiVersion");
  else if (!*d->kind)
    rc = manifest__fail(c->err, -EINVAL, c->source, c->line, 0, "object (apiVersion %s) has no kind", d->api_version);
  else if (!*d->name && !*d->generate_name)
    rc = manifest__fail(c->err, -EINVAL, c->source, c->line, 0, "%s object has no metadata.name", d->kind);
out:
  cJSON_Delete(obj);
  return rc;
}

/* Splits s on commas, lower-cases and trims each part (Helm's handling of hook annotation lists). */
static int manifest__split_list(const char *s, char ***out, size_t *n) {
  *out = NULL;
  *n = 0;
  size_t parts = 1;
  for (const char *p = s; *p; p++) parts += *p == ',';
  char **v = calloc(parts, sizeof *v);
  if (!v) return -ENOMEM;
  const char *b = s;
  for (size_t i = 0; i < parts; i++) {
    const char *e = strchr(b, ',');
    if (!e) e = b + strlen(b);
    const char *ts = b, *te = e;
    /* strings.TrimSpace: Unicode space at both ends */
    while (ts < te) {
      size_t sz;
      if (!yaml_utf8_is_space(ts, (size_t)(te - ts), &sz)) break;
      ts += sz;
    }
    while (te > ts) {
      const char *q = te - 1;
      while (q > ts && ((unsigned char)*q & 0xC0) == 0x80) q--;
      size_t sz;
      if (!yaml_utf8_is_space(q, (size_t)(te - q), &sz) || q + sz != te) break;
      te = q;
    }
    v[i] = strndup(ts, (size_t)(te - ts));
    if (!v[i]) {
      manifest__strv_free(v, i);
      return -ENOMEM;
    }
    for (char *p = v[i]; *p; p++) *p = (char)tolower((unsigned char)*p); /* ASCII; Go lowers Unicode too */
    b = *e ? e + 1 : e;
  }
  *out = v;
  *n = parts;
  return 0;
}

/* strconv.Atoi: optional sign and decimal digits only, within int range. */
static int manifest__atoi(const char *s, int *out) {
  const char *p = s;
  int neg = 0;
  if (*p == '+' || *p == '-') neg = *p++ == '-';
  if (!*p) return -1;
  long long v = 0;
  for (; *p; p++) {
    if (*p < '0' || *p > '9') return -1;
    v = v * 10 + (*p - '0');
    if (v > (long long)INT_MAX + 1) return -1;
  }
  if (neg) v = -v;
  if (v > INT_MAX || v < INT_MIN) return -1;
  *out = (int)v;
  return 0;
}

/* Turns a parsed doc with a helm.sh/hook annotation into a hook. Returns 1 when the doc became *h,
 * 0 when it has no hook annotation, 2 when Helm skips it (unknown hook event), <0 on error. */
static int manifest__make_hook(manifest_doc_t *d, manifest_hook_t *h) {
  const cJSON *hk = cJSON_GetObjectItemCaseSensitive(d->annotations, "helm.sh/hook");
  if (!hk) return 0;
  memset(h, 0, sizeof *h);
  char **ev;
  size_t nev;
  if (manifest__split_list(hk->valuestring, &ev, &nev)) return -ENOMEM;
  for (size_t i = 0; i < nev; i++) {
    if (strcmp(ev[i], "test-success") == 0) {
      char *t = strdup("test");
      if (!t) {
        manifest__strv_free(ev, nev);
        return -ENOMEM;
      }
      free(ev[i]);
      ev[i] = t;
    }
    int known = 0;
    for (size_t k = 0; k < sizeof manifest__events / sizeof *manifest__events; k++) known |= strcmp(ev[i], manifest__events[k]) == 0;
    if (!known) {
      LOG_I("skipping unknown hooks", "hookTypes", hk->valuestring, "source", d->source);
      manifest__strv_free(ev, nev);
      return 2;
    }
  }
  h->events = ev;
  h->nevents = nev;
  const cJSON *w = cJSON_GetObjectItemCaseSensitive(d->annotations, "helm.sh/hook-weight");
  if (w && manifest__atoi(w->valuestring, &h->weight)) h->weight = 0;
  const cJSON *dp = cJSON_GetObjectItemCaseSensitive(d->annotations, "helm.sh/hook-delete-policy");
  const cJSON *op = cJSON_GetObjectItemCaseSensitive(d->annotations, "helm.sh/hook-output-log-policy");
  if ((dp && manifest__split_list(dp->valuestring, &h->delete_policies, &h->ndelete_policies)) ||
      (op && manifest__split_list(op->valuestring, &h->output_log_policies, &h->noutput_log_policies))) {
    manifest__hook_free(h);
    return -ENOMEM;
  }
  h->doc = *d;
  memset(d, 0, sizeof *d);
  return 1;
}

typedef struct manifest__acc_s {
  manifest_doc_t *docs;
  size_t ndocs, capdocs;
  manifest_hook_t *hooks;
  size_t nhooks, caphooks;
  buf_t skipped; /* manifest_set_t.skipped_hooks */
} manifest__acc_t;

static int manifest__grow(void **p, size_t *cap, size_t n, size_t size) {
  if (n < *cap) return 0;
  size_t nc = *cap ? *cap * 2 : 16;
  void *np = realloc(*p, nc * size);
  if (!np) return -ENOMEM;
  *p = np;
  *cap = nc;
  return 0;
}

/* Splits one file's text and adds its documents and hooks to acc (manifestFile.sort). */
static int manifest__add_file(manifest__acc_t *acc, const char *source, const char *text, size_t len,
                              manifest_error_t *err) {
  yaml_span_t *spans;
  size_t nspans;
  if (yaml_split_manifests(text, len, &spans, &nspans)) return -ENOMEM;
  int rc = 0;
  int line = 1, col = 1;
  size_t pos = 0;
  for (size_t i = 0; i < nspans && !rc; i++) {
    /* Track the line and column where this document starts. */
    for (; pos < spans[i].offset; pos++) {
      if (text[pos] == '\n') { line++; col = 1; }
      else col++;
    }
    manifest_doc_t d;
    memset(&d, 0, sizeof d);
    manifest__ctx_t c = {err, source, line, col};
    d.line = line;
    d.source = strdup(source);
    d.content = malloc(spans[i].len + 1);
    if (!d.source || !d.content) {
      rc = -ENOMEM;
    } else {
      memcpy(d.content, text + spans[i].offset, spans[i].len);
      d.content[spans[i].len] = 0;
      d.content_len = spans[i].len;
      rc = manifest__parse_doc(&c, d.content, d.content_len, &d);
    }
    if (rc == -ENOMEM) manifest__fail(err, rc, source, line, 0, "out of memory");
    if (rc) {
      manifest__doc_free(&d);
      break;
    }
    if (d.annotations && d.annotations->child) {
      manifest_hook_t h;
      rc = manifest__make_hook(&d, &h);
      if (rc == 1) {
        if (manifest__grow((void **)&acc->hooks, &acc->caphooks, acc->nhooks, sizeof h)) {
          manifest__hook_free(&h);
          rc = manifest__fail(err, -ENOMEM, source, line, 0, "out of memory");
          break;
        }
        acc->hooks[acc->nhooks++] = h;
        rc = 0;
        continue;
      }
      if (rc == 2) { /* unknown hook: Helm drops the document */
        const cJSON *hk = cJSON_GetObjectItemCaseSensitive(d.annotations, "helm.sh/hook");
        rc = cJSON_IsString(hk) && buf_printf(&acc->skipped, "%s\n", hk->valuestring) ? -ENOMEM : 0;
        manifest__doc_free(&d);
        if (rc) {
          rc = manifest__fail(err, rc, source, line, 0, "out of memory");
          break;
        }
        continue;
      }
      if (rc < 0) {
        manifest__doc_free(&d);
        rc = manifest__fail(err, rc, source, line, 0, "out of memory");
        break;
      }
    }
    if (manifest__grow((void **)&acc->docs, &acc->capdocs, acc->ndocs, sizeof d)) {
      manifest__doc_free(&d);
      rc = manifest__fail(err, -ENOMEM, source, line, 0, "out of memory");
      break;
    }
    acc->docs[acc->ndocs++] = d;
  }
  free(spans);
  return rc;
}

static int manifest__base_is_partial(const char *path) {
  const char *slash = strrchr(path, '/');
  return (slash ? slash[1] : path[0]) == '_';
}

static int manifest__is_blank(const char *s, size_t n) {
  size_t i = 0;
  while (i < n) {
    size_t sz;
    if (!yaml_utf8_is_space(s + i, n - i, &sz)) return 0;
    i += sz;
  }
  return 1;
}

typedef struct manifest__named_s {
  char *path;
  const char *text;
  size_t len;
} manifest__named_t;

static int manifest__cmp_named(const void *a, const void *b) {
  return strcmp(((const manifest__named_t *)a)->path, ((const manifest__named_t *)b)->path);
}

/* Sorts, splits and orders named files, as SortManifests does, and builds the release manifest. */
static int manifest__finish(manifest__named_t *files, size_t n, manifest_order_t order, manifest_set_t *out,
                            manifest_error_t *err) {
  qsort(files, n, sizeof *files, manifest__cmp_named);
  manifest__acc_t acc = {0};
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    if (manifest__base_is_partial(files[i].path) || manifest__is_blank(files[i].text, files[i].len)) continue;
    rc = manifest__add_file(&acc, files[i].path, files[i].text, files[i].len, err);
  }
  if (!rc && (manifest__stable_sort(acc.hooks, acc.nhooks, sizeof *acc.hooks, manifest__hook_kind, order) ||
              manifest__stable_sort(acc.docs, acc.ndocs, sizeof *acc.docs, manifest__doc_kind, order)))
    rc = manifest__fail(err, -ENOMEM, "", 0, 0, "out of memory");
  buf_t m = BUF_INIT;
  for (size_t i = 0; i < acc.ndocs && !rc; i++) {
    if (buf_printf(&m, "---\n# Source: %s\n", acc.docs[i].source) ||
        buf_append(&m, acc.docs[i].content, acc.docs[i].content_len) || buf_putc(&m, '\n'))
      rc = manifest__fail(err, -ENOMEM, "", 0, 0, "out of memory");
  }
  if (!rc && !m.data && buf_reserve(&m, 0)) rc = manifest__fail(err, -ENOMEM, "", 0, 0, "out of memory");
  out->docs = acc.docs;
  out->ndocs = acc.ndocs;
  out->hooks = acc.hooks;
  out->nhooks = acc.nhooks;
  out->manifest_len = m.len;
  out->manifest = m.data;
  out->skipped_hooks = buf_steal(&acc.skipped);
  if (rc) manifest_set_free(out);
  return rc;
}

int manifest_build(const char *chart, const manifest_file_t *files, size_t nfiles, manifest_order_t order,
                   manifest_set_t *out, manifest_error_t *err) {
  memset(out, 0, sizeof *out);
  if (err) memset(err, 0, sizeof *err);
  manifest__named_t *named = calloc(nfiles ? nfiles : 1, sizeof *named);
  char *notes_path = NULL;
  buf_t notes = BUF_INIT;
  size_t n = 0;
  int rc = 0;
  if (!named || asprintf(&notes_path, "%s/templates/NOTES.txt", chart) < 0) {
    notes_path = NULL;
    rc = manifest__fail(err, -ENOMEM, "", 0, 0, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < nfiles; i++) {
    char *path;
    if (asprintf(&path, "%s/%s", chart, files[i].name) < 0) {
      rc = manifest__fail(err, -ENOMEM, "", 0, 0, "out of memory");
      goto done;
    }
    size_t pl = strlen(path);
    /* NOTES.txt is not a manifest: renderResources pulls every *NOTES.txt out, keeping the chart's own. */
    if (pl >= 9 && strcmp(path + pl - 9, "NOTES.txt") == 0) {
      if (strcmp(path, notes_path) == 0 &&
          ((notes.len && buf_putc(&notes, '\n')) || buf_append(&notes, files[i].text, files[i].len))) {
        free(path);
        rc = manifest__fail(err, -ENOMEM, "", 0, 0, "out of memory");
        goto done;
      }
      free(path);
      continue;
    }
    named[n].path = path;
    named[n].text = files[i].text;
    named[n].len = files[i].len;
    n++;
  }
  if ((rc = manifest__finish(named, n, order, out, err))) goto done;
  if (!notes.data && buf_reserve(&notes, 0)) {
    manifest_set_free(out);
    rc = manifest__fail(err, -ENOMEM, "", 0, 0, "out of memory");
    goto done;
  }
  out->notes = buf_steal(&notes);
done:
  for (size_t i = 0; i < n; i++) free(named[i].path);
  free(named);
  free(notes_path);
  buf_free(&notes);
  return rc;
}

int manifest_parse_release(const char *manifest, size_t len, manifest_order_t order, manifest_set_t *out,
                           manifest_error_t *err) {
  memset(out, 0, sizeof *out);
  if (err) memset(err, 0, sizeof *err);
  yaml_span_t *spans;
  size_t nspans;
  if (yaml_split_manifests(manifest, len, &spans, &nspans))
    return manifest__fail(err, -ENOMEM, "", 0, 0, "out of memory");
  manifest__named_t *named = calloc(nspans ? nspans : 1, sizeof *named);
  int rc = 0;
  if (!named) {
    rc = manifest__fail(err, -ENOMEM, "", 0, 0, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < nspans; i++) {
    if (asprintf(&named[i].path, "manifest-%zu", i) < 0) {
      named[i].path = NULL;
      rc = manifest__fail(err, -ENOMEM, "", 0, 0, "out of memory");
      goto done;
    }
    named[i].text = manifest + spans[i].offset;
    named[i].len = spans[i].len;
  }
  rc = manifest__finish(named, nspans, order, out, err);
  if (!rc && !(out->notes = strdup(""))) {
    manifest_set_free(out);
    rc = manifest__fail(err, -ENOMEM, "", 0, 0, "out of memory");
  }
done:
  for (size_t i = 0; named && i < nspans; i++) free(named[i].path);
  free(named);
  free(spans);
  return rc;
}

/* Sets obj.metadata[field][k] = v for each pair, creating what is missing; values must be strings. */
static int manifest__merge_strings(cJSON *meta, const char *field, const char *const *kv, size_t npairs,
                                   const cJSON *extra, const manifest_doc_t *doc, manifest_error_t *err) {
  cJSON *m = cJSON_GetObjectItemCaseSensitive(meta, field);
  if (m && cJSON_IsNull(m)) {
    cJSON_DeleteItemFromObjectCaseSensitive(meta, field);
    m = NULL;
  }
  if (!m) {
    m = cJSON_AddObjectToObject(meta, field);
    if (!m) return -ENOMEM;
  }
  if (!cJSON_IsObject(m))
    return manifest__fail(err, -EINVAL, doc->source, doc->line, 0, "metadata.%s must be an object", field);
  for (const cJSON *it = m->child; it; it = it->next)
    if (!cJSON_IsString(it))
      return manifest__fail(err, -EINVAL, doc->source, doc->line, 0, "metadata.%s.%s must be a string, not an %s",
                            field, it->string, manifest__type_name(it));
  for (size_t i = 0; i < npairs + (extra ? (size_t)cJSON_GetArraySize(extra) : 0); i++) {
    const char *k, *v;
    if (i < npairs) {
      k = kv[2 * i];
      v = kv[2 * i + 1];
    } else {
      const cJSON *e = cJSON_GetArrayItem(extra, (int)(i - npairs));
      if (!cJSON_IsString(e)) return manifest__fail(err, -EINVAL, doc->source, doc->line, 0, "extra label %s is not a string", e->string);
      k = e->string;
      v = e->valuestring;
    }
    cJSON *s = cJSON_CreateString(v);
    if (!s) return -ENOMEM;
    if (cJSON_GetObjectItemCaseSensitive(m, k)) cJSON_ReplaceItemInObjectCaseSensitive(m, k, s);
    else if (!cJSON_AddItemToObject(m, k, s)) {
      cJSON_Delete(s);
      return -ENOMEM;
    }
  }
  return 0;
}

int manifest_object_json(const manifest_doc_t *doc, const char *release_name, const char *release_namespace,
                         const cJSON *extra_labels, cJSON **out, manifest_error_t *err) {
  *out = NULL;
  if (err) memset(err, 0, sizeof *err);
  if (doc->is_empty) return manifest__fail(err, -EINVAL, doc->source, doc->line, 0, "document is empty");
  yaml_opts_t opts = {.flags = YAML_OPT_BIGINT_RAW};
  yaml_error_t ye;
  cJSON *obj;
  int rc = yaml_to_json(doc->content, doc->content_len, &opts, &obj, &ye);
  if (rc == -ENOMEM) return rc;
  if (rc) return manifest__fail(err, -EINVAL, doc->source, doc->line + (ye.line ? ye.line - 1 : 0), ye.column,
                                "YAML parse error: %s", ye.problem);
  if (!cJSON_IsObject(obj)) {
    cJSON_Delete(obj);
    return manifest__fail(err, -EINVAL, doc->source, doc->line, 0, "document is not an object");
  }
  cJSON *meta = cJSON_GetObjectItemCaseSensitive(obj, "metadata");
  if (!meta || cJSON_IsNull(meta)) {
    if (meta) cJSON_DeleteItemFromObjectCaseSensitive(obj, "metadata");
    meta = cJSON_AddObjectToObject(obj, "metadata");
    if (!meta) {
      cJSON_Delete(obj);
      return -ENOMEM;
    }
  }
  const char *labels[] = {"app.kubernetes.io/managed-by", "Helm"};
  const char *annotations[] = {"meta.helm.sh/release-name", release_name, "meta.helm.sh/release-namespace",
                               release_namespace};
  if (!cJSON_IsObject(meta))
    rc = manifest__fail(err, -EINVAL, doc->source, doc->line, 0, "metadata must be an object");
  else if (!(rc = manifest__merge_strings(meta, "labels", labels, 1, extra_labels, doc, err)))
    rc = manifest__merge_strings(meta, "annotations", annotations, 2, NULL, doc, err);
  if (rc) {
    cJSON_Delete(obj);
    return rc;
  }
  *out = obj;
  return 0;
}
