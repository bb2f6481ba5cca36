/* `helm template` after chart loading: install checks, dependencies, values, render, NOTES,
 * SortManifests and CRDs (pkg/cmd/install.go runInstall, action.Install.RunWithContext,
 * action.renderResources, releaseutil.SortManifests). No I/O. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/worker.h"
#include "base/yaml.h"
#include "helm/render/manifest.h"
#include "helm/render/render.h"
#include "helm/template/semver.h"
#include "helm/values/values.h"

#define DEBUG_HINT "\n\nUse --debug flag to render out invalid YAML"

void render_output_free(render_output_t *o) {
  render_doc_t *lists[] = {o->crds, o->manifests, o->hooks};
  size_t ns[] = {o->ncrds, o->nmanifests, o->nhooks};
  for (int l = 0; l < 3; l++) {
    for (size_t i = 0; i < ns[l]; i++) {
      free(lists[l][i].path);
      free(lists[l][i].content);
    }
    free(lists[l]);
  }
  free(o->notes);
  memset(o, 0, sizeof *o);
}

static int rt__push(render_doc_t **v, size_t *n, const char *path, const char *content, size_t clen, bool is_test) {
  render_doc_t *nv = realloc(*v, (*n + 1) * sizeof *nv);
  if (!nv) return -1;
  *v = nv;
  nv[*n].path = strdup(path);
  nv[*n].content = strndup(content, clen);
  nv[*n].is_test = is_test;
  if (!nv[*n].path || !nv[*n].content) {
    free(nv[*n].path);
    free(nv[*n].content);
    return -1;
  }
  (*n)++;
  return 0;
}

/* rt__push that takes content (malloc'd, NUL-terminated) instead of copying it; frees it on failure. */
static int rt__push_take(render_doc_t **v, size_t *n, const char *path, char *content, bool is_test) {
  render_doc_t *nv = realloc(*v, (*n + 1) * sizeof *nv);
  char *p = nv ? strdup(path) : NULL;
  if (nv) *v = nv;
  if (!p) {
    free(content);
    return -1;
  }
  nv[*n].path = p;
  nv[*n].content = content;
  nv[*n].is_test = is_test;
  (*n)++;
  return 0;
}

static int rt__has_manifest_ext(const char *name) {
  const char *dot = strrchr(name, '.');
  const char *slash = strrchr(name, '/');
  if (!dot || (slash && dot < slash)) return 0;
  return !strcasecmp(dot, ".yaml") || !strcasecmp(dot, ".yml") || !strcasecmp(dot, ".json");
}

int render_crds(const chart_t *c, render_output_t *o) {
  char *full = chart_full_path(c);
  if (!full) return -1;
  for (size_t i = 0; i < c->nfiles; i++) {
    const chart_file_t *f = &c->files[i];
    if (strncmp(f->name, "crds/", 5) || !rt__has_manifest_ext(f->name)) continue;
    char *p = NULL;
    if (asprintf(&p, "%s/%s", full, f->name) < 0) {
      free(full);
      return -1;
    }
    int r = rt__push(&o->crds, &o->ncrds, p, f->data, f->len, false);
    free(p);
    if (r) {
      free(full);
      return -1;
    }
  }
  free(full);
  for (size_t i = 0; i < c->ndeps; i++)
    if (render_crds(c->deps[i], o)) return -1;
  return 0;
}

static int rt__is_blank(const char *s, size_t n) {
  for (size_t i = 0; i < n;) {
    size_t sz;
    if (!yaml_utf8_is_space(s + i, n - i, &sz)) return 0;
    i += sz;
  }
  return 1;
}

typedef struct rt__item_s {
  const char *path;
  char *content; /* NULL until rt__items_copy copies it from where off says */
  size_t len, off;
  char *kind;
  bool is_test;
} rt__item_t;

/* A string-typed SimpleHead field: strings, numbers and bools as text; 0 ok, -1 wrong type. */
static int rt__head_str(const cJSON *v, const char **out) {
  static char tf[2][6] = {"false", "true"};
  *out = "";
  if (!v || cJSON_IsNull(v)) return 0;
  if (cJSON_IsString(v)) *out = v->valuestring;
  else if (cJSON_IsNumber(v) || cJSON_IsRaw(v)) *out = v->valuestring ? v->valuestring : "";
  else if (cJSON_IsBool(v)) *out = tf[cJSON_IsTrue(v)];
  else return -1;
  return 0;
}

/* A SimpleHead struct field as Helm fills it: every key equal to the field's name up to case maps
 * to it (encoding/json), and the last one in the JSON text wins; that text comes from a Go map with
 * its keys sorted, so the greatest key wins ("kind" over "Kind" over "KIND"), wherever it stands. */
static const cJSON *rt__head_field(const cJSON *obj, const char *name) {
  const cJSON *found = NULL;
  for (const cJSON *m = obj ? obj->child : NULL; m; m = m->next)
    if (m->string && !strcasecmp(m->string, name) && (!found || strcmp(m->string, found->string) > 0)) found = m;
  return found;
}

static const char *rt__kind_name(const cJSON *v) {
  return cJSON_IsObject(v) ? "object" : cJSON_IsArray(v) ? "array" : cJSON_IsString(v) ? "string"
       : cJSON_IsBool(v) ? "bool" : "number";
}

/* One file's documents into hooks or manifests (manifestFile.sort): each item says where its document
 * is in text (rt__items_copy gives it its copy). 0, 1 (YAML error in err), -1 OOM. */
static int rt__sort_file(const char *path, const char *text, size_t len, rt__item_t **gen, size_t *ngen,
                         rt__item_t **hooks, size_t *nhooks, buf_t *err) {
  yaml_span_t *spans = NULL;
  size_t ns = 0;
  if (yaml_split_manifests(text, len, &spans, &ns)) return -1;
  int rc = 0;
  for (size_t i = 0; i < ns && !rc; i++) {
    const char *d = text + spans[i].offset;
    size_t dl = spans[i].len;
    yaml_opts_t yo = {.flags = YAML_OPT_DUP_LAST | YAML_OPT_SIMPLE_HEAD};
    yaml_error_t ye;
    cJSON *j = NULL;
    int r = yaml_to_json(d, dl, &yo, &j, &ye);
    if (r == -ENOMEM) {
      rc = -1;
      break;
    }
    if (r) {
      buf_reset(err);
      char m[400];
      values_yaml_error(&ye, m, sizeof m);
      buf_printf(err, "YAML parse error on %s: error converting YAML to JSON: %s", path, m);
      rc = 1;
      break;
    }
    const char *kind = "", *bad_field = NULL;
    const cJSON *bad = NULL;
    const cJSON *ann = NULL;
    if (j && !cJSON_IsNull(j)) {
      if (!cJSON_IsObject(j)) {
        buf_reset(err);
        buf_printf(err,
                   "YAML parse error on %s: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal %s into "
                   "Go value of type util.SimpleHead",
                   path, rt__kind_name(j));
        cJSON_Delete(j);
        rc = 1;
        break;
      }
      const char *tmp;
      const cJSON *av = rt__head_field(j, "apiVersion");
      const cJSON *kv = rt__head_field(j, "kind");
      const cJSON *md = rt__head_field(j, "metadata");
      if (rt__head_str(av, &tmp)) bad = av, bad_field = "SimpleHead.apiVersion";
      else if (rt__head_str(kv, &kind)) bad = kv, bad_field = "SimpleHead.kind";
      else if (md && !cJSON_IsNull(md) && !cJSON_IsObject(md)) bad = md, bad_field = "SimpleHead.metadata";
      else if (md && cJSON_IsObject(md)) {
        const cJSON *nm = rt__head_field(md, "name");
        ann = rt__head_field(md, "annotations");
        if (rt__head_str(nm, &tmp)) bad = nm, bad_field = "SimpleHead.metadata.name";
        else if (ann && !cJSON_IsNull(ann) && !cJSON_IsObject(ann)) bad = ann, bad_field = "SimpleHead.metadata.annotations";
        else if (cJSON_IsObject(ann)) {
          for (const cJSON *a = ann->child; a && !bad; a = a->next)
            if (rt__head_str(a, &tmp)) bad = a, bad_field = "SimpleHead.metadata.annotations";
        }
      }
      if (bad) {
        buf_reset(err);
        buf_printf(err,
                   "YAML parse error on %s: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal %s into "
                   "Go struct field %s of type %s",
                   path, rt__kind_name(bad), bad_field, strstr(bad_field, "annotations") && bad != ann ? "string"
                   : strstr(bad_field, "annotations") ? "map[string]string" : strstr(bad_field, "metadata") && !strstr(bad_field, "name") ? "struct { Name string \"json:\\\"name\\\"\"; Annotations map[string]string \"json:\\\"annotations\\\"\" }" : "string");
        cJSON_Delete(j);
        rc = 1;
        break;
      }
    }
    const cJSON *hook = cJSON_IsObject(ann) && ann->child ? cJSON_GetObjectItemCaseSensitive(ann, "helm.sh/hook") : NULL;
    rt__item_t it = {path, NULL, dl, (size_t)(d - text), strdup(kind), false};
    if (!it.kind) {
      free(it.content);
      free(it.kind);
      cJSON_Delete(j);
      rc = -1;
      break;
    }
    if (!hook) {
      rt__item_t *nv = realloc(*gen, (*ngen + 1) * sizeof *nv);
      if (!nv) rc = -1;
      else {
        *gen = nv;
        nv[(*ngen)++] = it;
        it.content = it.kind = NULL;
      }
    } else {
      const char *ht;
      rt__head_str(hook, &ht);
      int unknown = 0, test = 0;
      const char *p = ht;
      for (;;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        while (l && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++, l--;
        while (l && (p[l - 1] == ' ' || p[l - 1] == '\t' || p[l - 1] == '\n' || p[l - 1] == '\r')) l--;
        static const char *const events[] = {"pre-install", "post-install", "pre-delete", "post-delete", "pre-upgrade",
                                             "post-upgrade", "pre-rollback", "post-rollback", "test", "test-success"};
        int ok = 0;
        for (size_t k = 0; k < sizeof events / sizeof *events; k++)
          if (strlen(events[k]) == l && !strncasecmp(events[k], p, l)) {
            ok = 1;
            if (k >= 8) test = 1;
          }
        if (!ok) {
          unknown = 1;
          break;
        }
        if (!e) break;
        p = e + 1;
      }
      if (!unknown) {
        it.is_test = test;
        rt__item_t *nv = realloc(*hooks, (*nhooks + 1) * sizeof *nv);
        if (!nv) rc = -1;
        else {
          *hooks = nv;
          nv[(*nhooks)++] = it;
          it.content = it.kind = NULL;
        }
      }
    }
    free(it.content);
    free(it.kind);
    cJSON_Delete(j);
  }
  free(spans);
  return rc;
}

/* ---- sorting the rendered files ----
 * Each rendered file is handed over as soon as it is made (render_opts_t.on_file takes its text)
 * and split and sorted (rt__sort_file): on the helper thread when there is one (opts->helper_thread),
 * while the next templates render, else right away. The results are kept per file and read after
 * rendering in file name order: the first error is the first file's. The documents' texts are
 * copied out then, file by file, each file's text freed once copied (the copies take the place of
 * the texts, and each block is freed by the thread that made it). */
typedef struct rt__job_s {
  char *name;
  char *text; /* taken from the renderer; freed by this thread once its documents are copied */
  size_t len;
  long ticket; /* the helper's job, or 0 */
  rt__item_t *gen, *hooks;
  size_t ngen, nhooks;
  int rc; /* rt__sort_file's */
  buf_t err;
} rt__job_t;

typedef struct rt__sorter_s {
  worker_t *w;     /* NULL: each file is sorted when given */
  rt__job_t **all; /* every job, in the order given */
  size_t n, cap;
} rt__sorter_t;

static void rt__items_free(rt__item_t *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(v[i].content);
    free(v[i].kind);
  }
  free(v);
}

static void rt__sort_job(void *p) {
  rt__job_t *j = p;
  const char *base = strrchr(j->name, '/');
  base = base ? base + 1 : j->name;
  if (base[0] != '_' && !rt__is_blank(j->text, j->len))
    j->rc = rt__sort_file(j->name, j->text, j->len, &j->gen, &j->ngen, &j->hooks, &j->nhooks, &j->err);
}

static bool rt__is_notes(const char *name) {
  size_t l = strlen(name);
  return l >= 9 && !strcmp(name + l - 9, "NOTES.txt");
}

/* render_opts_t.on_file: takes every file but NOTES.txt (read by rt__template). */
static int rt__sorter_give(void *ctx, const char *name, char **text, size_t len) {
  rt__sorter_t *so = ctx;
  if (rt__is_notes(name)) return 0;
  rt__job_t *j = calloc(1, sizeof *j);
  if (!j || !(j->name = strdup(name))) {
    free(j);
    return -1;
  }
  if (so->n == so->cap) {
    size_t nc = so->cap ? so->cap * 2 : 64;
    rt__job_t **na = realloc(so->all, nc * sizeof *na);
    if (!na) {
      free(j->name);
      free(j);
      return -1;
    }
    so->all = na;
    so->cap = nc;
  }
  so->all[so->n++] = j;
  j->text = *text;
  j->len = len;
  *text = NULL;
  j->ticket = so->w ? worker_post(so->w, rt__sort_job, j) : 0;
  if (j->ticket <= 0) {
    j->ticket = 0;
    rt__sort_job(j);
  }
  return 0;
}

/* Gives a sorted file's items their texts, copied out of the file's text. 0 or -1. */
static int rt__items_copy(rt__item_t *v, size_t n, const char *text) {
  for (size_t i = 0; i < n; i++)
    if (!(v[i].content = strndup(text + v[i].off, v[i].len))) return -1;
  return 0;
}

/* Frees the jobs; the helper must have finished them (worker_wait). */
static void rt__sorter_free(rt__sorter_t *so) {
  for (size_t i = 0; i < so->n; i++) {
    rt__job_t *j = so->all[i];
    free(j->name);
    free(j->text);
    rt__items_free(j->gen, j->ngen);
    rt__items_free(j->hooks, j->nhooks);
    buf_free(&j->err);
    free(j);
  }
  free(so->all);
  so->all = NULL;
  so->n = so->cap = 0;
}

static int rt__cmp_jobs(const void *a, const void *b) {
  return strcmp((*(rt__job_t *const *)a)->name, (*(rt__job_t *const *)b)->name);
}

/* Appends src's items to *dst (moving them). */
static int rt__items_move(rt__item_t **dst, size_t *nd, rt__item_t **src, size_t *ns) {
  if (!*ns) return 0;
  rt__item_t *nv = realloc(*dst, (*nd + *ns) * sizeof *nv);
  if (!nv) return -1;
  memcpy(nv + *nd, *src, *ns * sizeof *nv);
  *dst = nv;
  *nd += *ns;
  free(*src);
  *src = NULL;
  *ns = 0;
  return 0;
}

/* Stable sort by kind in install order, through manifest_sort_docs (line carries the index). */
static int rt__sort_items(rt__item_t *v, size_t n) {
  if (n < 2) return 0;
  manifest_doc_t *docs = calloc(n, sizeof *docs);
  rt__item_t *tmp = malloc(n * sizeof *tmp);
  if (!docs || !tmp) {
    free(docs);
    free(tmp);
    return -1;
  }
  for (size_t i = 0; i < n; i++) {
    docs[i].kind = v[i].kind;
    docs[i].line = (int)i;
  }
  manifest_sort_docs(docs, n, MANIFEST_INSTALL_ORDER);
  for (size_t i = 0; i < n; i++) tmp[i] = v[docs[i].line];
  memcpy(v, tmp, n * sizeof *v);
  free(docs);
  free(tmp);
  return 0;
}

/* *owned (when set) is user_values, consumed (and cleared) by the coalescing. */
static void rt__drop_values(chart_t *c) {
  cJSON_Delete(c->values);
  c->values = NULL;
  for (size_t i = 0; i < c->ndeps; i++) rt__drop_values(c->deps[i]);
}

int render_prepare(chart_t *c, const cJSON *user_values, cJSON **owned, const render_opts_t *opts, cJSON **out_vals,
                   buf_t *err) {
  const render_opts_t def = {0};
  cJSON *none = NULL;
  if (!opts) opts = &def;
  if (!owned) owned = &none;
  *out_vals = NULL;
  if (c->meta.type && *c->meta.type && strcmp(c->meta.type, "application")) {
    buf_reset(err);
    buf_printf(err, "%s charts are not installable", c->meta.type);
    return RENDER_EINVAL;
  }
  if (c->meta.deprecated && opts->warn) opts->warn(opts->warn_ctx, "WARN", "this chart is deprecated");
  if (c->meta.ndeps) {
    buf_t miss = BUF_INIT;
    for (size_t r = 0; r < c->meta.ndeps; r++) {
      const char *n = c->meta.deps[r].name ? c->meta.deps[r].name : "";
      int found = 0;
      for (size_t i = 0; i < c->ndeps && !found; i++)
        if (c->deps[i]->meta.name && !strcmp(c->deps[i]->meta.name, n)) found = 1;
      if (!found) buf_printf(&miss, "%s%s", miss.len ? ", " : "", n);
    }
    if (miss.len) {
      buf_reset(err);
      buf_printf(err,
                 "an error occurred while checking for chart dependencies. You may need to run 'helm dependency build' "
                 "to fetch missing dependencies: found in Chart.yaml, but missing in charts/ directory: %s",
                 miss.data);
      buf_free(&miss);
      return RENDER_EINVAL;
    }
    buf_free(&miss);
  }
  chart_error_t cerr;
  int rc = chart_process_dependencies(c, user_values, &cerr);
  if (rc) {
    buf_reset(err);
    buf_puts(err, rc == CHART_ENOMEM ? "out of memory" : cerr.message);
    return rc == CHART_ENOMEM ? RENDER_ENOMEM : RENDER_EINVAL;
  }
  char msg[1024];
  cJSON *vals = NULL, *u;
  if (*owned) {
    u = *owned;
    *owned = NULL;
  } else {
    u = cJSON_IsObject(user_values) ? cJSON_Duplicate(user_values, 1) : cJSON_CreateObject();
    if (!u) {
      buf_reset(err);
      buf_puts(err, "out of memory");
      return RENDER_ENOMEM;
    }
  }
  {
    values_warn_t w = {opts->warn, opts->warn_ctx};
    rc = values_coalesce_take_warn(c, u, &vals, opts->warn ? &w : NULL, msg, sizeof msg);
  }
  if (rc) {
    buf_reset(err);
    buf_puts(err, msg);
    return rc == VALUES_ENOMEM ? RENDER_ENOMEM : RENDER_EINVAL;
  }
  {
    buf_t sm = BUF_INIT;
    if ((rc = values_validate_schema_with(c, vals, opts->schema_loader, &sm))) {
      buf_reset(err);
      if (rc == VALUES_ENOMEM) buf_puts(err, "out of memory");
      else buf_printf(err, "values don't meet the specifications of the schema(s) in the following chart(s):\n%s",
                      sm.data ? sm.data : "");
      buf_free(&sm);
      cJSON_Delete(vals);
      return rc == VALUES_ENOMEM ? RENDER_ENOMEM : RENDER_EINVAL;
    }
    buf_free(&sm);
  }
  /* kubeVersion (renderResources) */
  if (c->meta.kube_version && *c->meta.kube_version) {
    const char *kv = opts->kube_version ? opts->kube_version : RENDER_DEFAULT_KUBE_VERSION;
    char git[96], norm[96];
    snprintf(git, sizeof git, "%s%s", kv[0] == 'v' ? "" : "v", kv);
    /* the normalized form: v + major.minor[.patch] without pre-release or build */
    size_t k = 0;
    const char *p = kv[0] == 'v' ? kv + 1 : kv;
    norm[k++] = 'v';
    while (*p && *p != '-' && *p != '+' && k + 1 < sizeof norm) norm[k++] = *p++;
    norm[k] = 0;
    if (semver_check(c->meta.kube_version, strlen(c->meta.kube_version), norm, strlen(norm)) != 1) {
      buf_reset(err);
      buf_printf(err, "chart requires kubeVersion: %s which is incompatible with Kubernetes %s" DEBUG_HINT,
                 c->meta.kube_version, git);
      cJSON_Delete(vals);
      return RENDER_EINVAL;
    }
  }
  *out_vals = vals;
  return 0;
}

static int rt__template(chart_t *c, const cJSON *user_values, cJSON **owned, bool take, const render_opts_t *opts,
                        render_output_t *out, buf_t *err) {
  memset(out, 0, sizeof *out);
  const render_opts_t def = {0};
  if (!opts) opts = &def;
  cJSON *vals = NULL;
  int rc = render_prepare(c, user_values, owned, opts, &vals, err);
  if (rc) return rc;
  /* The charts' own values are in vals now: render_template_take drops them (the biggest part of
   * a loaded chart, not needed again for this render). */
  if (take) rt__drop_values(c);
  render_file_t *files = NULL;
  size_t nfiles = 0;
  worker_t *helper = opts->helper_thread ? worker_start() : NULL; /* NULL: all on this thread */
  rt__sorter_t so = {.w = helper};
  render_opts_t ro = *opts;
  ro.worker = helper;
  ro.on_file = rt__sorter_give;
  ro.on_file_ctx = &so;
  rc = render_chart_take(c, vals, &ro, &files, &nfiles, err);
  worker_stop(helper); /* every file is sorted now */
  if (rc) {
    rt__sorter_free(&so);
    if (rc == RENDER_EINVAL) buf_puts(err, DEBUG_HINT);
    return rc;
  }
  /* NOTES.txt out; the root chart's kept. */
  buf_t notes = BUF_INIT;
  char *notes_path = NULL;
  if (asprintf(&notes_path, "%s/templates/NOTES.txt", c->meta.name) < 0) notes_path = NULL;
  size_t w = 0;
  rc = notes_path ? 0 : RENDER_ENOMEM;
  for (size_t i = 0; i < nfiles && !rc; i++) {
    if (rt__is_notes(files[i].name)) {
      if (!strcmp(files[i].name, notes_path)) {
        if (notes.len) buf_putc(&notes, '\n');
        buf_append(&notes, files[i].text, files[i].len);
      }
      free(files[i].name);
      free(files[i].text);
      continue;
    }
    files[w++] = files[i];
  }
  nfiles = w;
  free(notes_path);
  if (rc) {
    buf_free(&notes);
    render_files_free(files, nfiles);
    rt__sorter_free(&so);
    return rc;
  }
  rt__item_t *gen = NULL, *hooks = NULL;
  size_t ngen = 0, nhooks = 0;
  /* the files the sorter took (every one but NOTES.txt), in name order */
  if (so.n) qsort(so.all, so.n, sizeof *so.all, rt__cmp_jobs);
  for (size_t i = 0; i < so.n && !rc; i++) {
    rt__job_t *j = so.all[i];
    if (j->rc < 0) rc = RENDER_ENOMEM;
    else if (j->rc > 0) {
      buf_reset(err);
      buf_append(err, j->err.data ? j->err.data : "", j->err.len);
      buf_puts(err, DEBUG_HINT);
      rc = RENDER_EINVAL;
    } else if (rt__items_copy(j->gen, j->ngen, j->text) || rt__items_copy(j->hooks, j->nhooks, j->text) ||
               rt__items_move(&gen, &ngen, &j->gen, &j->ngen) || rt__items_move(&hooks, &nhooks, &j->hooks, &j->nhooks)) {
      rc = RENDER_ENOMEM;
    }
    free(j->text);
    j->text = NULL;
  }
  if (!rc && (rt__sort_items(gen, ngen) || rt__sort_items(hooks, nhooks))) rc = RENDER_ENOMEM;
  if (!rc && render_crds(c, out)) rc = RENDER_ENOMEM;
  for (size_t i = 0; i < ngen && !rc; i++) {
    if (rt__push_take(&out->manifests, &out->nmanifests, gen[i].path, gen[i].content, false)) rc = RENDER_ENOMEM;
    gen[i].content = NULL; /* moved */
  }
  for (size_t i = 0; i < nhooks && !rc; i++) {
    if (rt__push_take(&out->hooks, &out->nhooks, hooks[i].path, hooks[i].content, hooks[i].is_test)) rc = RENDER_ENOMEM;
    hooks[i].content = NULL;
  }
  for (size_t i = 0; i < ngen; i++) {
    free(gen[i].content);
    free(gen[i].kind);
  }
  for (size_t i = 0; i < nhooks; i++) {
    free(hooks[i].content);
    free(hooks[i].kind);
  }
  free(gen);
  free(hooks);
  render_files_free(files, nfiles);
  rt__sorter_free(&so); /* after the pushes: items point to the jobs' names */
  if (!rc) {
    if (!notes.data && buf_reserve(&notes, 0)) rc = RENDER_ENOMEM;
    else out->notes = buf_steal(&notes);
  }
  buf_free(&notes);
  if (rc) {
    if (rc == RENDER_ENOMEM) {
      buf_reset(err);
      buf_puts(err, "out of memory");
    }
    render_output_free(out);
  }
  return rc;
}

int render_template(chart_t *c, const cJSON *user_values, const render_opts_t *opts, render_output_t *out,
                    buf_t *err) {
  cJSON *none = NULL;
  return rt__template(c, user_values, &none, false, opts, out, err);
}

int render_template_take(chart_t *c, cJSON *user_values, const render_opts_t *opts, render_output_t *out, buf_t *err) {
  cJSON *own = user_values;
  int rc = rt__template(c, user_values, &own, true, opts, out, err);
  cJSON_Delete(own); /* not reached by the coalescing (an early error) */
  return rc;
}
