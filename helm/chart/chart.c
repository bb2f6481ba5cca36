#define _GNU_SOURCE
/* Chart loading (pkg/chart/v2/loader) and dependency processing (pkg/chart/v2/util/dependencies.go). */
#include "helm/chart/chart.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/gz.h"
#include "base/yaml.h"
#include "helm/chart/chart_lock.h"
#include "helm/chart/tar.h"
#include "helm/template/semver.h"
#include "helm/values/values.h"

static int chart__fail(chart_error_t *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int chart__fail(chart_error_t *err, int code, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
  }
  return code;
}

/* Prefixes the current message: "<prefix><old message>". */
static void chart__wrap(chart_error_t *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void chart__wrap(chart_error_t *err, const char *fmt, ...) {
  if (!err) return;
  char pre[512], old[sizeof err->message];
  va_list ap;
  va_start(ap, fmt);
  int pl = vsnprintf(pre, sizeof pre, fmt, ap);
  va_end(ap);
  if (pl < 0) return;
  if ((size_t)pl >= sizeof pre) pl = (int)sizeof pre - 1;
  memcpy(old, err->message, sizeof old);
  size_t room = sizeof err->message - 1;
  size_t a = (size_t)pl < room ? (size_t)pl : room;
  memcpy(err->message, pre, a);
  size_t ol = strnlen(old, sizeof old - 1);
  size_t b = ol < room - a ? ol : room - a;
  memcpy(err->message + a, old, b);
  err->message[a + b] = 0;
}

/* ---- freeing and copying ------------------------------------------------------------ */

static void chart__strv_free(char **v, size_t n) {
  for (size_t i = 0; i < n; i++) free(v[i]);
  free(v);
}

static void chart__dep_free(chart_dep_t *d) {
  free(d->name);
  free(d->version);
  free(d->repository);
  free(d->condition);
  free(d->alias);
  chart__strv_free(d->tags, d->ntags);
  cJSON_Delete(d->import_values);
}

static void chart__meta_free(chart_meta_t *m) {
  char **strs[] = {&m->name, &m->home, &m->version, &m->description, &m->icon, &m->api_version, &m->condition,
                   &m->tags, &m->app_version, &m->kube_version, &m->type};
  for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) free(*strs[i]);
  chart__strv_free(m->sources, m->nsources);
  chart__strv_free(m->keywords, m->nkeywords);
  for (size_t i = 0; i < m->nmaintainers; i++) {
    free(m->maintainers[i].name);
    free(m->maintainers[i].email);
    free(m->maintainers[i].url);
  }
  free(m->maintainers);
  cJSON_Delete(m->annotations);
  for (size_t i = 0; i < m->ndeps; i++) chart__dep_free(&m->deps[i]);
  free(m->deps);
  memset(m, 0, sizeof *m);
}

static void chart__files_free(chart_file_t *f, size_t n) {
  for (size_t i = 0; i < n; i++) {
    free(f[i].name);
    free(f[i].data);
  }
  free(f);
}

void chart_free(chart_t *c) {
  if (!c) return;
  chart__meta_free(&c->meta);
  chart__files_free(c->templates, c->ntemplates);
  chart__files_free(c->files, c->nfiles);
  cJSON_Delete(c->values);
  free(c->schema);
  for (size_t i = 0; i < c->ndeps; i++) chart_free(c->deps[i]);
  free(c->deps);
  free(c);
}

static char *chart__dup(const char *s) { return s ? strdup(s) : NULL; }

static int chart__strv_dup(char **src, size_t n, char ***dst) {
  *dst = NULL;
  if (!n) return 0;
  if (!(*dst = calloc(n, sizeof **dst))) return -1;
  for (size_t i = 0; i < n; i++)
    if (!((*dst)[i] = strdup(src[i]))) return -1;
  return 0;
}

static int chart__dep_copy(const chart_dep_t *s, chart_dep_t *d) {
  memset(d, 0, sizeof *d);
  d->name = chart__dup(s->name);
  d->version = chart__dup(s->version);
  d->repository = chart__dup(s->repository);
  d->condition = chart__dup(s->condition);
  d->alias = chart__dup(s->alias);
  d->ntags = s->ntags;
  d->enabled = s->enabled;
  if (s->import_values && !(d->import_values = cJSON_Duplicate(s->import_values, 1))) return -1;
  if (chart__strv_dup(s->tags, s->ntags, &d->tags)) return -1;
  if ((s->name && !d->name) || (s->version && !d->version) || (s->repository && !d->repository) ||
      (s->condition && !d->condition) || (s->alias && !d->alias))
    return -1;
  return 0;
}

static int chart__meta_copy(const chart_meta_t *s, chart_meta_t *d) {
  memset(d, 0, sizeof *d);
  const char *const *ss[] = {(const char *const *)&s->name, (const char *const *)&s->home,
                             (const char *const *)&s->version, (const char *const *)&s->description,
                             (const char *const *)&s->icon, (const char *const *)&s->api_version,
                             (const char *const *)&s->condition, (const char *const *)&s->tags,
                             (const char *const *)&s->app_version, (const char *const *)&s->kube_version,
                             (const char *const *)&s->type};
  char **ds[] = {&d->name, &d->home, &d->version, &d->description, &d->icon, &d->api_version, &d->condition,
                 &d->tags, &d->app_version, &d->kube_version, &d->type};
  for (size_t i = 0; i < sizeof ds / sizeof *ds; i++)
    if (*ss[i] && !(*ds[i] = strdup(*ss[i]))) return -1;
  d->nsources = s->nsources;
  d->nkeywords = s->nkeywords;
  if (chart__strv_dup(s->sources, s->nsources, &d->sources) || chart__strv_dup(s->keywords, s->nkeywords, &d->keywords))
    return -1;
  d->deprecated = s->deprecated;
  if (s->annotations && !(d->annotations = cJSON_Duplicate(s->annotations, 1))) return -1;
  if (s->nmaintainers) {
    if (!(d->maintainers = calloc(s->nmaintainers, sizeof *d->maintainers))) return -1;
    d->nmaintainers = s->nmaintainers;
    for (size_t i = 0; i < s->nmaintainers; i++) {
      d->maintainers[i].name = chart__dup(s->maintainers[i].name);
      d->maintainers[i].email = chart__dup(s->maintainers[i].email);
      d->maintainers[i].url = chart__dup(s->maintainers[i].url);
    }
  }
  if (s->ndeps) {
    if (!(d->deps = calloc(s->ndeps, sizeof *d->deps))) return -1;
    d->ndeps = s->ndeps;
    for (size_t i = 0; i < s->ndeps; i++)
      if (chart__dep_copy(&s->deps[i], &d->deps[i])) return -1;
  }
  return 0;
}

static int chart__files_copy(const chart_file_t *s, size_t n, chart_file_t **d) {
  *d = NULL;
  if (!n) return 0;
  if (!(*d = calloc(n, sizeof **d))) return -1;
  for (size_t i = 0; i < n; i++) {
    (*d)[i].name = strdup(s[i].name);
    (*d)[i].data = malloc(s[i].len + 1);
    if (!(*d)[i].name || !(*d)[i].data) return -1;
    memcpy((*d)[i].data, s[i].data, s[i].len + 1);
    (*d)[i].len = s[i].len;
  }
  return 0;
}

static chart_t *chart__clone(const chart_t *s);
chart_t *chart_clone(const chart_t *s) { return chart__clone(s); }

static chart_t *chart__clone(const chart_t *s) {
  chart_t *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  c->ntemplates = s->ntemplates;
  c->nfiles = s->nfiles;
  c->has_values_file = s->has_values_file;
  if (chart__meta_copy(&s->meta, &c->meta) || chart__files_copy(s->templates, s->ntemplates, &c->templates) ||
      chart__files_copy(s->files, s->nfiles, &c->files) || !(c->values = cJSON_Duplicate(s->values, 1)))
    goto fail;
  if (s->schema) {
    if (!(c->schema = malloc(s->schema_len + 1))) goto fail;
    memcpy(c->schema, s->schema, s->schema_len + 1);
    c->schema_len = s->schema_len;
  }
  if (s->ndeps) {
    if (!(c->deps = calloc(s->ndeps, sizeof *c->deps))) goto fail;
    for (size_t i = 0; i < s->ndeps; i++) {
      if (!(c->deps[i] = chart__clone(s->deps[i]))) goto fail;
      c->deps[i]->parent = c;
      c->ndeps++;
    }
  }
  return c;
fail:
  if (!c->templates) c->ntemplates = 0;
  if (!c->files) c->nfiles = 0;
  chart_free(c);
  return NULL;
}

/* ---- Chart.yaml ---------------------------------------------------------------------- */

/* Helm's sanitizeString: Unicode spaces become ' ', non-printable characters are dropped. */
static void chart__sanitize(char *s) {
  if (!s) return;
  unsigned char *r = (unsigned char *)s, *w = (unsigned char *)s;
  while (*r) {
    unsigned char c = *r;
    if (c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r') {
      *w++ = ' ';
      r++;
    } else if (c < 0x20 || c == 0x7f) {
      r++;
    } else if (c == 0xc2 && r[1] == 0x85) { /* NEL */
      *w++ = ' ';
      r += 2;
    } else if (c == 0xc2 && r[1] == 0xa0) { /* NBSP */
      *w++ = ' ';
      r += 2;
    } else if (c == 0xc2 && r[1] >= 0x80 && r[1] <= 0x9f) { /* C1 controls */
      r += 2;
    } else {
      *w++ = *r++;
    }
  }
  *w = 0;
}

/* encoding/json matches field names case-insensitively, preferring an exact match. */
static const cJSON *chart__get(const cJSON *obj, const char *key) {
  const cJSON *exact = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (exact) return exact;
  for (const cJSON *kv = obj ? obj->child : NULL; kv; kv = kv->next)
    if (kv->string && !strcasecmp(kv->string, key)) return kv;
  return NULL;
}

typedef struct chart__dec_s {
  chart_error_t *err;
  const char *what; /* "Chart.yaml" */
  const char *type; /* Go struct for messages: "Metadata" */
} chart__dec_t;

static int chart__type_err(chart__dec_t *d, const cJSON *v, const char *field, const char *gotype) {
  return chart__fail(d->err, CHART_EINVAL,
                     "cannot load %s: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal %s into Go "
                     "struct field %s.%s of type %s",
                     d->what, yaml_json_kind(v), d->type, field, gotype);
}

/* A string-typed field as sigs.k8s.io/yaml fills it (numbers and bools become their text). 1 when set. */
static int chart__str_of(const cJSON *v, char **out) {
  const char *s = NULL;
  char tmp[8];
  if (cJSON_IsString(v)) s = v->valuestring;
  else if (cJSON_IsNumber(v) || cJSON_IsRaw(v)) s = v->valuestring ? v->valuestring : "";
  else if (cJSON_IsBool(v)) s = strcpy(tmp, cJSON_IsTrue(v) ? "true" : "false");
  else return -1;
  *out = strdup(s);
  return *out ? 0 : -2;
}

static int chart__dec_str(chart__dec_t *d, const cJSON *obj, const char *key, char **dst) {
  const cJSON *v = chart__get(obj, key);
  if (!v) return 0;
  free(*dst);
  *dst = NULL;
  if (cJSON_IsNull(v)) return 0;
  int r = chart__str_of(v, dst);
  if (r == -2) return chart__fail(d->err, CHART_ENOMEM, "out of memory");
  if (r) return chart__type_err(d, v, key, "string");
  return 0;
}

static int chart__dec_strv(chart__dec_t *d, const cJSON *obj, const char *key, char ***dst, size_t *n) {
  const cJSON *v = chart__get(obj, key);
  if (!v) return 0;
  chart__strv_free(*dst, *n);
  *dst = NULL;
  *n = 0;
  if (cJSON_IsNull(v)) return 0;
  if (!cJSON_IsArray(v)) return chart__type_err(d, v, key, "[]string");
  size_t cnt = (size_t)cJSON_GetArraySize(v);
  if (!cnt) return 0;
  if (!(*dst = calloc(cnt, sizeof **dst))) return chart__fail(d->err, CHART_ENOMEM, "out of memory");
  for (const cJSON *it = v->child; it; it = it->next) {
    char *s = NULL;
    if (!cJSON_IsNull(it)) {
      int r = chart__str_of(it, &s);
      if (r == -2) return chart__fail(d->err, CHART_ENOMEM, "out of memory");
      if (r) return chart__type_err(d, it, key, "string");
    } else if (!(s = strdup(""))) {
      return chart__fail(d->err, CHART_ENOMEM, "out of memory");
    }
    (*dst)[(*n)++] = s;
  }
  return 0;
}

static int chart__dec_dep(chart__dec_t *d, const cJSON *o, chart_dep_t *dep) {
  chart__dec_t dd = {d->err, d->what, "Dependency"};
  int rc;
  if ((rc = chart__dec_str(&dd, o, "name", &dep->name)) || (rc = chart__dec_str(&dd, o, "version", &dep->version)) ||
      (rc = chart__dec_str(&dd, o, "repository", &dep->repository)) ||
      (rc = chart__dec_str(&dd, o, "condition", &dep->condition)) || (rc = chart__dec_str(&dd, o, "alias", &dep->alias)) ||
      (rc = chart__dec_strv(&dd, o, "tags", &dep->tags, &dep->ntags)))
    return rc;
  const cJSON *en = chart__get(o, "enabled");
  if (en && !cJSON_IsNull(en)) {
    if (!cJSON_IsBool(en)) return chart__type_err(&dd, en, "enabled", "bool");
    dep->enabled = cJSON_IsTrue(en);
  }
  const cJSON *iv = chart__get(o, "import-values");
  if (iv && !cJSON_IsNull(iv)) {
    if (!cJSON_IsArray(iv)) return chart__type_err(&dd, iv, "import-values", "[]interface {}");
    if (!(dep->import_values = cJSON_Duplicate(iv, 1))) return chart__fail(d->err, CHART_ENOMEM, "out of memory");
  }
  return 0;
}

/* Applies the fields present in obj to m (json.Unmarshal into an existing Metadata). */
static int chart__dec_meta(const cJSON *obj, const char *what, chart_meta_t *m, chart_error_t *err) {
  chart__dec_t d = {err, what, "Metadata"};
  int rc;
  if (cJSON_IsNull(obj)) return 0;
  if (!cJSON_IsObject(obj))
    return chart__fail(err, CHART_EINVAL,
                       "cannot load %s: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal %s into Go "
                       "value of type chart.Metadata",
                       what, yaml_json_kind(obj));
  struct {
    const char *key;
    char **dst;
  } strs[] = {{"name", &m->name},         {"home", &m->home},
              {"version", &m->version},   {"description", &m->description},
              {"icon", &m->icon},         {"apiVersion", &m->api_version},
              {"condition", &m->condition}, {"tags", &m->tags},
              {"appVersion", &m->app_version}, {"kubeVersion", &m->kube_version},
              {"type", &m->type}};
  for (size_t i = 0; i < sizeof strs / sizeof *strs; i++)
    if ((rc = chart__dec_str(&d, obj, strs[i].key, strs[i].dst))) return rc;
  if ((rc = chart__dec_strv(&d, obj, "sources", &m->sources, &m->nsources)) ||
      (rc = chart__dec_strv(&d, obj, "keywords", &m->keywords, &m->nkeywords)))
    return rc;
  const cJSON *dep = chart__get(obj, "deprecated");
  if (dep && !cJSON_IsNull(dep)) {
    if (!cJSON_IsBool(dep)) return chart__type_err(&d, dep, "deprecated", "bool");
    m->deprecated = cJSON_IsTrue(dep);
  }
  const cJSON *ann = chart__get(obj, "annotations");
  if (ann) {
    if (cJSON_IsNull(ann)) {
      cJSON_Delete(m->annotations);
      m->annotations = NULL;
    } else if (!cJSON_IsObject(ann)) {
      return chart__type_err(&d, ann, "annotations", "map[string]string");
    } else {
      if (!m->annotations && !(m->annotations = cJSON_CreateObject())) return chart__fail(err, CHART_ENOMEM, "out of memory");
      for (const cJSON *kv = ann->child; kv; kv = kv->next) {
        char *s = NULL;
        if (!cJSON_IsNull(kv)) {
          int r = chart__str_of(kv, &s);
          if (r == -2) return chart__fail(err, CHART_ENOMEM, "out of memory");
          if (r) return chart__type_err(&d, kv, "annotations", "string");
        }
        cJSON *sv = cJSON_CreateString(s ? s : "");
        free(s);
        if (!sv) return chart__fail(err, CHART_ENOMEM, "out of memory");
        if (cJSON_GetObjectItemCaseSensitive(m->annotations, kv->string))
          cJSON_ReplaceItemInObjectCaseSensitive(m->annotations, kv->string, sv);
        else
          cJSON_AddItemToObject(m->annotations, kv->string, sv);
      }
    }
  }
  const cJSON *mt = chart__get(obj, "maintainers");
  if (mt) {
    for (size_t i = 0; i < m->nmaintainers; i++) {
      free(m->maintainers[i].name);
      free(m->maintainers[i].email);
      free(m->maintainers[i].url);
    }
    free(m->maintainers);
    m->maintainers = NULL;
    m->nmaintainers = 0;
    if (!cJSON_IsNull(mt)) {
      if (!cJSON_IsArray(mt)) return chart__type_err(&d, mt, "maintainers", "[]*chart.Maintainer");
      size_t n = (size_t)cJSON_GetArraySize(mt);
      if (n && !(m->maintainers = calloc(n, sizeof *m->maintainers))) return chart__fail(err, CHART_ENOMEM, "out of memory");
      for (const cJSON *it = mt->child; it; it = it->next) {
        chart_maintainer_t *x = &m->maintainers[m->nmaintainers++];
        if (cJSON_IsNull(it)) return chart__fail(err, CHART_EINVAL, "validation: maintainers must not contain empty or null nodes");
        if (!cJSON_IsObject(it)) return chart__type_err(&d, it, "maintainers", "chart.Maintainer");
        chart__dec_t dm = {err, what, "Maintainer"};
        if ((rc = chart__dec_str(&dm, it, "name", &x->name)) || (rc = chart__dec_str(&dm, it, "email", &x->email)) ||
            (rc = chart__dec_str(&dm, it, "url", &x->url)))
          return rc;
      }
    }
  }
  const cJSON *deps = chart__get(obj, "dependencies");
  if (deps) {
    for (size_t i = 0; i < m->ndeps; i++) chart__dep_free(&m->deps[i]);
    free(m->deps);
    m->deps = NULL;
    m->ndeps = 0;
    if (!cJSON_IsNull(deps)) {
      if (!cJSON_IsArray(deps)) return chart__type_err(&d, deps, "dependencies", "[]*chart.Dependency");
      size_t n = (size_t)cJSON_GetArraySize(deps);
      if (n && !(m->deps = calloc(n, sizeof *m->deps))) return chart__fail(err, CHART_ENOMEM, "out of memory");
      for (const cJSON *it = deps->child; it; it = it->next) {
        chart_dep_t *x = &m->deps[m->ndeps++];
        if (cJSON_IsNull(it))
          return chart__fail(err, CHART_EINVAL, "validation: dependencies must not contain empty or null nodes");
        if (!cJSON_IsObject(it)) return chart__type_err(&d, it, "dependencies", "chart.Dependency");
        if ((rc = chart__dec_dep(&d, it, x))) return rc;
      }
    }
  }
  return 0;
}

static int chart__parse_yaml_meta(const char *data, size_t len, const char *what, chart_meta_t *m, chart_error_t *err) {
  yaml_opts_t o = {.flags = YAML_OPT_DUP_LAST};
  yaml_error_t ye;
  cJSON *j = NULL;
  int rc = yaml_to_json(data, len, &o, &j, &ye);
  if (rc == -ENOMEM) return chart__fail(err, CHART_ENOMEM, "out of memory");
  if (rc) {
    char ym[400];
    values_yaml_error(&ye, ym, sizeof ym);
    return chart__fail(err, CHART_EINVAL, "cannot load %s: error converting YAML to JSON: %s", what, ym);
  }
  rc = chart__dec_meta(j, what, m, err);
  cJSON_Delete(j);
  return rc;
}

static int chart__alias_ok(const char *a) {
  for (const char *p = a; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '_' || *p == '-'))
      return 0;
  return 1;
}

/* Metadata.Validate. */
static int chart__validate(chart_meta_t *m, chart_error_t *err) {
  char **strs[] = {&m->name, &m->description, &m->home, &m->icon, &m->condition, &m->tags, &m->app_version, &m->kube_version};
  for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) chart__sanitize(*strs[i]);
  for (size_t i = 0; i < m->nsources; i++) chart__sanitize(m->sources[i]);
  for (size_t i = 0; i < m->nkeywords; i++) chart__sanitize(m->keywords[i]);
  if (!m->api_version || !*m->api_version) return chart__fail(err, CHART_EINVAL, "validation: chart.metadata.apiVersion is required");
  if (!m->name || !*m->name) return chart__fail(err, CHART_EINVAL, "validation: chart.metadata.name is required");
  if (!strcmp(m->name, ".") || !strcmp(m->name, ".."))
    return chart__fail(err, CHART_EINVAL, "validation: chart.metadata.name \"%s\" is not allowed", m->name);
  if (strchr(m->name, '/')) return chart__fail(err, CHART_EINVAL, "validation: chart.metadata.name \"%s\" is invalid", m->name);
  if (!m->version || !*m->version) return chart__fail(err, CHART_EINVAL, "validation: chart.metadata.version is required");
  if (!semver_valid(m->version, strlen(m->version)))
    return chart__fail(err, CHART_EINVAL, "validation: chart.metadata.version \"%s\" is invalid", m->version);
  if (m->type && *m->type && strcmp(m->type, "application") && strcmp(m->type, "library"))
    return chart__fail(err, CHART_EINVAL, "validation: chart.metadata.type must be application or library");
  for (size_t i = 0; i < m->nmaintainers; i++) {
    chart__sanitize(m->maintainers[i].name);
    chart__sanitize(m->maintainers[i].email);
    chart__sanitize(m->maintainers[i].url);
  }
  for (size_t i = 0; i < m->ndeps; i++) {
    chart_dep_t *d = &m->deps[i];
    chart__sanitize(d->name);
    chart__sanitize(d->version);
    chart__sanitize(d->repository);
    chart__sanitize(d->condition);
    for (size_t t = 0; t < d->ntags; t++) chart__sanitize(d->tags[t]);
    if (d->alias && *d->alias && !chart__alias_ok(d->alias))
      return chart__fail(err, CHART_EINVAL, "validation: dependency \"%s\" has disallowed characters in the alias",
                         d->name ? d->name : "");
    const char *key = d->alias && *d->alias ? d->alias : d->name ? d->name : "";
    for (size_t j = 0; j < i; j++) {
      const chart_dep_t *e = &m->deps[j];
      const char *k2 = e->alias && *e->alias ? e->alias : e->name ? e->name : "";
      if (!strcmp(key, k2))
        return chart__fail(err, CHART_EINVAL, "validation: more than one dependency with name or alias \"%s\"", key);
    }
  }
  return 0;
}

/* ---- LoadFiles ------------------------------------------------------------------------- */

typedef struct chart__flist_s {
  chart_file_t *v;
  size_t n, cap;
} chart__flist_t;

static int chart__flist_add(chart__flist_t *l, const char *name, const char *data, size_t len) {
  if (l->n == l->cap) {
    size_t nc = l->cap ? l->cap * 2 : 16;
    chart_file_t *nv = realloc(l->v, nc * sizeof *nv);
    if (!nv) return -1;
    l->v = nv;
    l->cap = nc;
  }
  chart_file_t *f = &l->v[l->n];
  f->name = strdup(name);
  f->data = malloc(len + 1);
  if (!f->name || !f->data) {
    free(f->name);
    free(f->data);
    return -1;
  }
  if (len) memcpy(f->data, data, len);
  f->data[len] = 0;
  f->len = len;
  l->n++;
  return 0;
}

static int chart__add_dep(chart_t *c, chart_t *sub) {
  chart_t **nd = realloc(c->deps, (c->ndeps + 1) * sizeof *nd);
  if (!nd) return -1;
  c->deps = nd;
  c->deps[c->ndeps++] = sub;
  sub->parent = c;
  return 0;
}

static int chart__load_archive(const void *data, size_t len, const chart_limits_t *lim, int depth, chart_t **out,
                               chart_error_t *err);

static int chart__load_files(const chart_file_t *files, size_t nfiles, const chart_limits_t *lim, int depth,
                             chart_t **out, chart_error_t *err) {
  *out = NULL;
  if (depth > 32) return chart__fail(err, CHART_E2BIG, "subcharts nested more than 32 levels deep");
  chart_t *c = calloc(1, sizeof *c);
  if (!c) return chart__fail(err, CHART_ENOMEM, "out of memory");
  chart__flist_t tpls = {0}, fls = {0};
  int rc = 0, have_meta = 0;
  /* Subchart groups by first path component under charts/, in order of appearance. */
  struct {
    char *name;
    chart__flist_t files;
  } *groups = NULL;
  size_t ngroups = 0;
  int v3 = 0;
  for (size_t i = 0; i < nfiles && !rc; i++) {
    if (!strcmp(files[i].name, "Chart.yaml")) {
      have_meta = 1;
      rc = chart__parse_yaml_meta(files[i].data, files[i].len, "Chart.yaml", &c->meta, err);
      /* Helm 4 picks the loader by the top chart's apiVersion: v1, v2 or none load as charts v2;
       * v3 loads as a chart v3, which install/template then refuse; anything else is refused. */
      const char *av = c->meta.api_version ? c->meta.api_version : "";
      if (!rc && depth == 0 && strcmp(av, "") && strcmp(av, "v1") && strcmp(av, "v2")) {
        if (strcmp(av, "v3")) rc = chart__fail(err, CHART_EINVAL, "unsupported chart version");
        else v3 = 1;
      }
      if (!rc && (!c->meta.api_version || !*c->meta.api_version)) {
        free(c->meta.api_version);
        if (!(c->meta.api_version = strdup("v1"))) rc = chart__fail(err, CHART_ENOMEM, "out of memory");
      }
    }
  }
  for (size_t i = 0; i < nfiles && !rc; i++) {
    const chart_file_t *f = &files[i];
    const char *n = f->name;
    if (!strcmp(n, "Chart.yaml")) continue;
    if (!strcmp(n, "Chart.lock") || !strcmp(n, "requirements.lock")) {
      char lm[sizeof err->message];
      int lr = chart_lock_check(f->data, f->len, n, lm, sizeof lm);
      if (lr) {
        rc = lr == -12 ? chart__fail(err, CHART_ENOMEM, "out of memory") : chart__fail(err, CHART_EINVAL, "%s", lm);
        continue;
      }
      if (!strcmp(n, "requirements.lock")) {
        if (!have_meta) {
          have_meta = 1;
          if (!(c->meta.api_version = strdup("")) ) rc = chart__fail(err, CHART_ENOMEM, "out of memory");
        }
        if (c->meta.api_version && !strcmp(c->meta.api_version, "v1") && chart__flist_add(&fls, n, f->data, f->len))
          rc = chart__fail(err, CHART_ENOMEM, "out of memory");
      }
      continue;
    }
    if (!strcmp(n, "values.yaml")) {
      char msg[900];
      cJSON *v = NULL;
      int r = values_parse_yaml(f->data, f->len, &v, msg, sizeof msg);
      if (r == VALUES_ENOMEM) rc = chart__fail(err, CHART_ENOMEM, "out of memory");
      else if (r) rc = chart__fail(err, CHART_EINVAL, "cannot load values.yaml: %s", msg);
      else {
        cJSON_Delete(c->values);
        c->values = v;
        c->has_values_file = 1;
      }
      continue;
    }
    if (!strcmp(n, "values.schema.json")) {
      free(c->schema);
      if (!(c->schema = malloc(f->len + 1))) {
        rc = chart__fail(err, CHART_ENOMEM, "out of memory");
        continue;
      }
      memcpy(c->schema, f->data, f->len);
      c->schema[f->len] = 0;
      c->schema_len = f->len;
      continue;
    }
    if (!strcmp(n, "requirements.yaml")) {
      have_meta = 1;
      int v1 = c->meta.api_version && !strcmp(c->meta.api_version, "v1");
      rc = chart__parse_yaml_meta(f->data, f->len, "requirements.yaml", &c->meta, err);
      if (!rc && v1 && chart__flist_add(&fls, n, f->data, f->len)) rc = chart__fail(err, CHART_ENOMEM, "out of memory");
      continue;
    }
    if (!strncmp(n, "templates/", 10)) {
      if (chart__flist_add(&tpls, n, f->data, f->len)) rc = chart__fail(err, CHART_ENOMEM, "out of memory");
      continue;
    }
    if (!strncmp(n, "charts/", 7)) {
      size_t nl = strlen(n);
      if (nl >= 5 && !strcmp(n + nl - 5, ".prov")) {
        if (chart__flist_add(&fls, n, f->data, f->len)) rc = chart__fail(err, CHART_ENOMEM, "out of memory");
        continue;
      }
      const char *fname = n + 7;
      size_t cl = strcspn(fname, "/");
      size_t g;
      for (g = 0; g < ngroups; g++)
        if (strlen(groups[g].name) == cl && !strncmp(groups[g].name, fname, cl)) break;
      if (g == ngroups) {
        void *ng = realloc(groups, (ngroups + 1) * sizeof *groups);
        if (!ng) {
          rc = chart__fail(err, CHART_ENOMEM, "out of memory");
          continue;
        }
        groups = ng;
        memset(&groups[ngroups], 0, sizeof *groups);
        if (!(groups[ngroups].name = strndup(fname, cl))) {
          rc = chart__fail(err, CHART_ENOMEM, "out of memory");
          continue;
        }
        ngroups++;
      }
      if (chart__flist_add(&groups[g].files, fname, f->data, f->len)) rc = chart__fail(err, CHART_ENOMEM, "out of memory");
      continue;
    }
    if (chart__flist_add(&fls, n, f->data, f->len)) rc = chart__fail(err, CHART_ENOMEM, "out of memory");
  }
  c->templates = tpls.v;
  c->ntemplates = tpls.n;
  c->files = fls.v;
  c->nfiles = fls.n;
  if (!rc && !c->values && !(c->values = cJSON_CreateObject())) rc = chart__fail(err, CHART_ENOMEM, "out of memory");
  if (!rc && !have_meta) rc = chart__fail(err, CHART_EINVAL, "Chart.yaml file is missing");
  if (!rc) rc = chart__validate(&c->meta, err);
  for (size_t g = 0; g < ngroups && !rc; g++) {
    const char *gn = groups[g].name;
    if (gn[0] == '_' || gn[0] == '.') continue;
    chart_t *sc = NULL;
    size_t gl = strlen(gn);
    if (gl >= 4 && !strcmp(gn + gl - 4, ".tgz")) {
      const chart_file_t *f0 = &groups[g].files.v[0];
      if (strcmp(f0->name, gn)) {
        rc = chart__fail(err, CHART_EINVAL, "error unpacking subchart tar in %s: expected %s, got %s", c->meta.name, gn, f0->name);
        break;
      }
      rc = chart__load_archive(f0->data, f0->len, lim, depth + 1, &sc, err);
    } else {
      chart__flist_t sub = {0};
      for (size_t i = 0; i < groups[g].files.n && !rc; i++) {
        const char *slash = strchr(groups[g].files.v[i].name, '/');
        if (!slash) continue;
        if (chart__flist_add(&sub, slash + 1, groups[g].files.v[i].data, groups[g].files.v[i].len))
          rc = chart__fail(err, CHART_ENOMEM, "out of memory");
      }
      if (!rc) rc = chart__load_files(sub.v, sub.n, lim, depth + 1, &sc, err);
      chart__files_free(sub.v, sub.n);
    }
    if (rc) {
      if (rc != CHART_ENOMEM) chart__wrap(err, "error unpacking subchart %s in %s: ", gn, c->meta.name);
      break;
    }
    if (chart__add_dep(c, sc)) {
      chart_free(sc);
      rc = chart__fail(err, CHART_ENOMEM, "out of memory");
    }
  }
  for (size_t g = 0; g < ngroups; g++) {
    free(groups[g].name);
    chart__files_free(groups[g].files.v, groups[g].files.n);
  }
  free(groups);
  /* A chart v3 loads (the checks above stand in for Helm's v3 loader), then install and template
   * refuse it: Helm 4.3 renders charts v2 only. */
  if (!rc && v3) rc = chart__fail(err, CHART_EINVAL, "invalid chart apiVersion");
  if (rc) {
    chart_free(c);
    return rc;
  }
  *out = c;
  return 0;
}

int chart_load_files(const chart_file_t *files, size_t nfiles, const chart_limits_t *lim, chart_t **out,
                     chart_error_t *err) {
  return chart__load_files(files, nfiles, lim, 0, out, err);
}

/* ---- archives ------------------------------------------------------------------------ */

/* path.Clean for slash-separated paths. */
static void chart__clean(char *p) {
  int rooted = p[0] == '/';
  char *out = p, *r = p;
  size_t dotdot = rooted ? 1 : 0;
  size_t w = rooted ? 1 : 0;
  if (rooted) r++;
  while (*r) {
    if (*r == '/') {
      r++;
    } else if (r[0] == '.' && (r[1] == '/' || !r[1])) {
      r++;
    } else if (r[0] == '.' && r[1] == '.' && (r[2] == '/' || !r[2])) {
      r += 2;
      if (w > dotdot) {
        w--;
        while (w > dotdot && out[w] != '/') w--;
      } else if (!rooted) {
        if (w > 0) out[w++] = '/';
        out[w++] = '.';
        out[w++] = '.';
        dotdot = w;
      }
    } else {
      if ((rooted && w != 1) || (!rooted && w != 0)) out[w++] = '/';
      while (*r && *r != '/') out[w++] = *r++;
    }
  }
  if (w == 0) out[w++] = '.';
  out[w] = 0;
}

static int chart__load_archive(const void *data, size_t len, const chart_limits_t *lim, int depth, chart_t **out,
                               chart_error_t *err) {
  *out = NULL;
  size_t max_bytes = lim && lim->max_bytes ? lim->max_bytes : (size_t)100 << 20;
  size_t max_files = lim && lim->max_files ? lim->max_files : 20000;
  unsigned char *tar = NULL;
  size_t tlen = 0;
  char msg[512];
  /* Headers and padding add at most ~1.5 KiB per entry to the contents. */
  size_t cap = max_bytes + max_files * 1536 + 4096;
  int r = gz_decompress(data, len, cap, &tar, &tlen, msg, sizeof msg);
  if (r == -ENOMEM) return chart__fail(err, CHART_ENOMEM, "out of memory");
  if (r == -EFBIG) return chart__fail(err, CHART_E2BIG, "decompressed chart is larger than the maximum size %zu", max_bytes);
  if (r) return chart__fail(err, CHART_EINVAL, "gzip: invalid header (%s)", msg);
  tar_limits_t tl = {max_files, max_bytes};
  tar_entry_t *es = NULL;
  size_t ne = 0;
  r = tar_list(tar, tlen, &tl, &es, &ne, msg, sizeof msg);
  if (r) {
    free(tar);
    return chart__fail(err, r == TAR_ENOMEM ? CHART_ENOMEM : r == TAR_E2BIG ? CHART_E2BIG : CHART_EINVAL, "%s", msg);
  }
  chart__flist_t files = {0};
  int rc = 0;
  for (size_t i = 0; i < ne && !rc; i++) {
    if (es[i].type == '5') continue;
    const char *name = es[i].name;
    char delim = strchr(name, '\\') ? '\\' : '/';
    const char *first = strchr(name, delim);
    size_t plen = first ? (size_t)(first - name) : strlen(name);
    char *n = strdup(first ? first + 1 : "");
    if (!n) {
      rc = chart__fail(err, CHART_ENOMEM, "out of memory");
      break;
    }
    for (char *p = n; *p; p++)
      if (*p == delim) *p = '/';
    if (n[0] == '/') rc = chart__fail(err, CHART_EINVAL, "chart illegally contains absolute paths");
    if (!rc) {
      chart__clean(n);
      if (!strcmp(n, "."))
        rc = chart__fail(err, CHART_EINVAL, "chart illegally contains content outside the base directory: \"%s\"", name);
      else if (!strncmp(n, "..", 2))
        rc = chart__fail(err, CHART_EINVAL, "chart illegally references parent directory");
      else if (((n[0] >= 'a' && n[0] <= 'z') || (n[0] >= 'A' && n[0] <= 'Z')) && n[1] == ':' && n[2] == '/')
        rc = chart__fail(err, CHART_EINVAL, "chart contains illegally named files");
      else if (plen == 10 && !strncmp(name, "Chart.yaml", 10))
        rc = chart__fail(err, CHART_EINVAL, "chart yaml not in base directory");
    }
    if (!rc) {
      const char *d = (const char *)es[i].data;
      size_t dl = es[i].len;
      if (dl >= 3 && !memcmp(d, "\xEF\xBB\xBF", 3)) {
        d += 3;
        dl -= 3;
      }
      if (chart__flist_add(&files, n, d, dl)) rc = chart__fail(err, CHART_ENOMEM, "out of memory");
    }
    free(n);
  }
  tar_entries_free(es, ne);
  free(tar);
  if (!rc && files.n == 0) rc = chart__fail(err, CHART_EINVAL, "no files in chart archive");
  if (!rc) rc = chart__load_files(files.v, files.n, lim, depth, out, err);
  chart__files_free(files.v, files.n);
  return rc;
}

int chart_load_archive(const void *data, size_t len, const chart_limits_t *lim, chart_t **out, chart_error_t *err) {
  return chart__load_archive(data, len, lim, 0, out, err);
}

/* ---- accessors ---------------------------------------------------------------------- */

char *chart_full_path(const chart_t *c) {
  if (!c->parent) return strdup(c->meta.name ? c->meta.name : "");
  char *pp = chart_full_path(c->parent);
  if (!pp) return NULL;
  char *s = NULL;
  if (asprintf(&s, "%s/charts/%s", pp, c->meta.name ? c->meta.name : "") < 0) s = NULL;
  free(pp);
  return s;
}

int chart_is_library(const chart_t *c) { return c->meta.type && !strcasecmp(c->meta.type, "library"); }

/* ---- dependencies ----------------------------------------------------------------------- */

/* IsCompatibleRange(constraint, version): false when either does not parse. */
static int chart__compatible(const char *constraint, const char *version) {
  if (!constraint || !version) return 0;
  return semver_check(constraint, strlen(constraint), version, strlen(version)) == 1;
}

static chart_t *chart__alias_dep(chart_t *c, const chart_dep_t *req) {
  for (size_t i = 0; i < c->ndeps; i++) {
    chart_t *d = c->deps[i];
    if (!d->meta.name || !req->name || strcmp(d->meta.name, req->name)) continue;
    if (!chart__compatible(req->version, d->meta.version)) continue;
    chart_t *out = chart__clone(d);
    if (!out) return NULL;
    if (req->alias && *req->alias) {
      char *nm = strdup(req->alias);
      if (!nm) {
        chart_free(out);
        return NULL;
      }
      free(out->meta.name);
      out->meta.name = nm;
    }
    return out;
  }
  return NULL;
}

/* common.Values.PathValue: the value at a dotted path whose last element is not a table. */
static const cJSON *chart__path_value(const cJSON *v, const char *path, size_t n) {
  const cJSON *cur = v;
  size_t i = 0;
  while (i < n) {
    size_t j = i;
    while (j < n && path[j] != '.') j++;
    if (!cJSON_IsObject(cur)) return NULL;
    const cJSON *next = NULL;
    for (const cJSON *kv = cur->child; kv; kv = kv->next)
      if (strlen(kv->string) == j - i && !strncmp(kv->string, path + i, j - i)) next = kv;
    if (!next) return NULL;
    cur = next;
    i = j + 1;
  }
  return cur;
}

static int chart__enabled(chart_t *c, const cJSON *v, const char *path, chart_error_t *err) {
  if (!c->meta.deps && !c->meta.ndeps) return 0;
  chart_t **keep = calloc(c->ndeps + c->meta.ndeps + 1, sizeof *keep);
  if (!keep) return chart__fail(err, CHART_ENOMEM, "out of memory");
  size_t nk = 0;
  for (size_t i = 0; i < c->ndeps; i++) {
    chart_t *e = c->deps[i];
    int matched = 0;
    for (size_t r = 0; r < c->meta.ndeps && !matched; r++) {
      const chart_dep_t *req = &c->meta.deps[r];
      if (e->meta.name && req->name && !strcmp(e->meta.name, req->name) &&
          chart__compatible(req->version, e->meta.version))
        matched = 1;
    }
    if (!matched) keep[nk++] = e;
  }
  for (size_t r = 0; r < c->meta.ndeps; r++) {
    chart_dep_t *req = &c->meta.deps[r];
    chart_t *a = chart__alias_dep(c, req);
    if (a) keep[nk++] = a;
    if (req->alias && *req->alias) {
      char *nm = strdup(req->alias);
      if (!nm) {
        free(keep);
        return chart__fail(err, CHART_ENOMEM, "out of memory");
      }
      free(req->name);
      req->name = nm;
    }
  }
  /* Charts that were replaced by copies are freed; the kept originals move over. */
  for (size_t i = 0; i < c->ndeps; i++) {
    int kept = 0;
    for (size_t k = 0; k < nk; k++)
      if (keep[k] == c->deps[i]) kept = 1;
    if (!kept) chart_free(c->deps[i]);
  }
  free(c->deps);
  c->deps = keep;
  c->ndeps = nk;
  for (size_t k = 0; k < nk; k++) keep[k]->parent = c;
  for (size_t r = 0; r < c->meta.ndeps; r++) c->meta.deps[r].enabled = 1;

  cJSON *cvals = NULL;
  char msg[512];
  /* The coalesced values serve the tags and conditions here and the dependencies' own turn. With
   * neither tags nor conditions, and dependencies that have no dependencies (their turn does
   * nothing), only the errors of coalescing matter: checked without building it (a copy of all the
   * parent's values per chart otherwise). */
  bool need = false;
  for (size_t r = 0; r < c->meta.ndeps && !need; r++)
    need = c->meta.deps[r].ntags > 0 || c->meta.deps[r].condition;
  for (size_t k = 0; k < c->ndeps && !need; k++)
    need = c->deps[k]->ndeps > 0 || c->deps[k]->meta.ndeps > 0 || c->deps[k]->meta.deps;
  int rc = need ? values_coalesce(c, v, &cvals, msg, sizeof msg) : values_coalesce_check(c, v, msg, sizeof msg);
  if (rc) return chart__fail(err, rc == VALUES_ENOMEM ? CHART_ENOMEM : CHART_EINVAL, "%s", msg);
  /* tags */
  const cJSON *tags = cJSON_GetObjectItemCaseSensitive(cvals, "tags");
  if (cJSON_IsObject(tags)) {
    for (size_t r = 0; r < c->meta.ndeps; r++) {
      chart_dep_t *req = &c->meta.deps[r];
      int has_true = 0, has_false = 0;
      for (size_t t = 0; t < req->ntags; t++) {
        const cJSON *b = cJSON_GetObjectItemCaseSensitive(tags, req->tags[t]);
        if (cJSON_IsBool(b)) {
          if (cJSON_IsTrue(b)) has_true = 1;
          else has_false = 1;
        }
      }
      if (!has_true && has_false) req->enabled = 0;
      else req->enabled = 1;
    }
  }
  /* conditions: the first path that holds a bool decides */
  for (size_t r = 0; r < c->meta.ndeps; r++) {
    chart_dep_t *req = &c->meta.deps[r];
    if (!req->condition) continue;
    const char *s = req->condition;
    while (*s == ' ' || *s == '\t' || *s == '\n') s++;
    size_t total = strlen(s);
    while (total && (s[total - 1] == ' ' || s[total - 1] == '\t' || s[total - 1] == '\n')) total--;
    size_t i = 0;
    while (i <= total) {
      size_t j = i;
      while (j < total && s[j] != ',') j++;
      if (j > i) {
        char full[1024];
        snprintf(full, sizeof full, "%s%.*s", path, (int)(j - i), s + i);
        const cJSON *vv = chart__path_value(cvals, full, strlen(full));
        if (vv && cJSON_IsBool(vv)) {
          req->enabled = cJSON_IsTrue(vv);
          break;
        }
      }
      i = j + 1;
    }
  }
  /* remove disabled */
  size_t w = 0;
  for (size_t i = 0; i < c->ndeps; i++) {
    chart_t *d = c->deps[i];
    int disabled = 0;
    for (size_t r = 0; r < c->meta.ndeps; r++)
      if (!c->meta.deps[r].enabled && c->meta.deps[r].name && d->meta.name && !strcmp(c->meta.deps[r].name, d->meta.name))
        disabled = 1;
    if (disabled) chart_free(d);
    else c->deps[w++] = d;
  }
  c->ndeps = w;
  size_t wm = 0;
  /* decide for every entry before any is freed or moved: entries are compared by name */
  unsigned char *off = c->meta.ndeps ? calloc(c->meta.ndeps, 1) : NULL;
  if (c->meta.ndeps && !off) rc = chart__fail(err, CHART_ENOMEM, "out of memory");
  for (size_t r = 0; off && r < c->meta.ndeps; r++)
    for (size_t q = 0; q < c->meta.ndeps; q++)
      if (!c->meta.deps[q].enabled && c->meta.deps[q].name && c->meta.deps[r].name &&
          !strcmp(c->meta.deps[q].name, c->meta.deps[r].name))
        off[r] = 1;
  for (size_t r = 0; r < c->meta.ndeps; r++) {
    if (off && off[r]) chart__dep_free(&c->meta.deps[r]);
    else c->meta.deps[wm++] = c->meta.deps[r];
  }
  free(off);
  c->meta.ndeps = wm;
  if (!wm) {
    free(c->meta.deps);
    c->meta.deps = NULL;
  }
  for (size_t i = 0; i < c->ndeps && !rc; i++) {
    char sub[1024];
    snprintf(sub, sizeof sub, "%s%s.", path, c->deps[i]->meta.name);
    rc = chart__enabled(c->deps[i], cvals, sub, err);
  }
  cJSON_Delete(cvals);
  return rc;
}

/* Builds {a: {b: data}} for the parent path "a.b" ("." is data itself); takes data. */
static cJSON *chart__path_to_map(const char *path, cJSON *data) {
  if (!strcmp(path, ".")) return data;
  cJSON *cur = data;
  const char *end = path + strlen(path);
  while (end >= path) {
    const char *dot = end - 1;
    while (dot >= path && *dot != '.') dot--;
    char key[512];
    snprintf(key, sizeof key, "%.*s", (int)(end - dot - 1), dot + 1);
    cJSON *m = cJSON_CreateObject();
    if (!m) {
      cJSON_Delete(cur);
      return NULL;
    }
    cJSON_AddItemToObject(m, key, cur);
    cur = m;
    end = dot;
  }
  return cur;
}

static int chart__import_values(chart_t *c, chart_error_t *err) {
  if (!c->meta.deps) return 0;
  cJSON *cvals = NULL;
  char msg[512];
  int rc = values_merge(c, NULL, &cvals, msg, sizeof msg);
  if (rc) return chart__fail(err, rc == VALUES_ENOMEM ? CHART_ENOMEM : CHART_EINVAL, "%s", msg);
  cJSON *b = cJSON_CreateObject();
  if (!b) {
    cJSON_Delete(cvals);
    return chart__fail(err, CHART_ENOMEM, "out of memory");
  }
  for (size_t r = 0; r < c->meta.ndeps && !rc; r++) {
    chart_dep_t *req = &c->meta.deps[r];
    if (!req->import_values) continue;
    cJSON *outiv = cJSON_CreateArray();
    if (!outiv) {
      rc = CHART_ENOMEM;
      break;
    }
    for (const cJSON *iv = req->import_values->child; iv && !rc; iv = iv->next) {
      char child[512], parent[512];
      int is_map = cJSON_IsObject(iv);
      if (is_map) {
        const cJSON *ch = cJSON_GetObjectItemCaseSensitive(iv, "child"), *pa = cJSON_GetObjectItemCaseSensitive(iv, "parent");
        snprintf(child, sizeof child, "%s", cJSON_IsString(ch) ? ch->valuestring : "%!v(<nil>)");
        snprintf(parent, sizeof parent, "%s", cJSON_IsString(pa) ? pa->valuestring : "%!v(<nil>)");
      } else if (cJSON_IsString(iv)) {
        snprintf(child, sizeof child, "exports.%s", iv->valuestring);
        snprintf(parent, sizeof parent, ".");
      } else {
        continue;
      }
      cJSON *o = cJSON_CreateObject();
      if (!o || !cJSON_AddStringToObject(o, "child", child) || !cJSON_AddStringToObject(o, "parent", parent)) {
        cJSON_Delete(o);
        rc = CHART_ENOMEM;
        break;
      }
      cJSON_AddItemToArray(outiv, o);
      char full[1100];
      snprintf(full, sizeof full, "%s.%s", req->name ? req->name : "", child);
      cJSON *vv = values_table(cvals, full);
      if (!vv) continue; /* "ImportValues missing table" warning */
      cJSON *copy = cJSON_Duplicate(vv, 1);
      if (!copy) {
        rc = CHART_ENOMEM;
        break;
      }
      cJSON *m = is_map ? chart__path_to_map(parent, copy) : copy;
      if (!m) {
        rc = CHART_ENOMEM;
        break;
      }
      rc = values_coalesce_tables(b, m, true) ? CHART_ENOMEM : 0;
      cJSON_Delete(m);
    }
    cJSON_Delete(req->import_values);
    req->import_values = outiv;
  }
  if (!rc && values_coalesce_tables(cvals, b, true)) rc = CHART_ENOMEM;
  cJSON_Delete(b);
  if (rc) {
    cJSON_Delete(cvals);
    return chart__fail(err, CHART_ENOMEM, "out of memory");
  }
  cJSON_Delete(c->values);
  c->values = cvals;
  return 0;
}

static int chart__dep_import(chart_t *c, chart_error_t *err) {
  for (size_t i = 0; i < c->ndeps; i++) {
    int rc = chart__dep_import(c->deps[i], err);
    if (rc) return rc;
  }
  return chart__import_values(c, err);
}

int chart_process_dependencies(chart_t *c, const cJSON *user_values, chart_error_t *err) {
  int rc = chart__enabled(c, user_values, "", err);
  if (rc) {
    chart__wrap(err, "chart dependencies processing failed: ");
    return rc;
  }
  return chart__dep_import(c, err);
}
