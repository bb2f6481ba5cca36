/* Stream parser for a Helm repository index (see index.h). */
#include "helm/source/index.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "base/err.h"

/* ---- field tables ---------------------------------------------------------------------- */

/* Keys Helm's types know (json tags of repo.IndexFile, repo.ChartVersion with chart.Metadata,
 * chart.Dependency, chart.Maintainer): strict YAML decoding refuses any other. */
enum { T_APIVERSION, T_GENERATED, T_ENTRIES, T_SERVERINFO, T_PUBLICKEYS, T_ANNOTATIONS, T_N };
static const char *const top_keys[T_N] = {"apiVersion", "generated", "entries", "serverInfo", "publicKeys",
                                          "annotations"};
enum {
  V_NAME, V_HOME, V_SOURCES, V_VERSION, V_DESCRIPTION, V_KEYWORDS, V_MAINTAINERS, V_ICON, V_APIVERSION,
  V_CONDITION, V_TAGS, V_APPVERSION, V_DEPRECATED, V_ANNOTATIONS, V_KUBEVERSION, V_DEPENDENCIES, V_TYPE, V_URLS,
  V_CREATED, V_REMOVED, V_DIGEST, V_CHECKSUM, V_ENGINE, V_TILLER, V_URL, V_N
};
static const char *const version_keys[V_N] = {
    "name",      "home",        "sources",    "version",      "description", "keywords", "maintainers",
    "icon",      "apiVersion",  "condition",  "tags",         "appVersion",  "deprecated", "annotations",
    "kubeVersion", "dependencies", "type",    "urls",         "created",     "removed",  "digest",
    "checksum",  "engine",      "tillerVersion", "url"};
enum { D_NAME, D_VERSION, D_REPOSITORY, D_CONDITION, D_TAGS, D_ENABLED, D_IMPORT, D_ALIAS, D_N };
static const char *const dep_keys[D_N] = {"name", "version", "repository", "condition", "tags", "enabled",
                                          "import-values", "alias"};
enum { M_NAME, M_EMAIL, M_URL, M_N };
static const char *const maint_keys[M_N] = {"name", "email", "url"};

static int key_id(const char *const *tab, int n, const char *s, size_t len) {
  for (int i = 0; i < n; i++)
    if (strlen(tab[i]) == len && !memcmp(tab[i], s, len)) return i;
  return -1;
}

/* ---- parser state ---------------------------------------------------------------------- */

typedef enum {
  K_DOC, K_TOP, K_ENTRIES, K_VERSIONS, K_VERSION, K_URLS, K_KEYWORDS, K_SOURCES, K_DEPS, K_DEP, K_MAINTS, K_MAINT
} kind_t;

typedef struct frame_s {
  uint8_t kind;
  bool want_key; /* mappings: the next event is a key */
  int key;       /* mappings: the current key's id (-1 unknown, ignored) */
  uint32_t seen; /* mappings: keys already set (duplicates are an error) */
} frame_t;

typedef struct slot_s {
  index_chart_t chart;
  uint64_t hash;
} slot_t;

struct index_parser_s {
  index_limits_t lim;
  yaml_parser_t yp;
  bool yp_ready, started, finished, done, json, json_known;
  int err;          /* the first error, 0 until then */
  char msg[512];    /* its message */
  buf_t in;         /* input not yet given to libyaml: in.data[in_off..in.len) */
  size_t in_off, peak;
  uint64_t consumed, frontier; /* bytes given to libyaml; how far the current event may read */
  bool starved;     /* libyaml asked for bytes past the frontier */
  frame_t *stack;
  size_t depth, cap;
  size_t skip;      /* > 0: inside a value being skipped, at this nesting */
  slot_t *slots;    /* the asked-for charts, open addressing */
  size_t nslots;
  index_chart_t *cur_chart; /* the kept chart whose versions are being read, or NULL */
  index_version_t *cur;     /* the kept version being read, or NULL */
  bool cur_invalid;         /* it failed Helm's validation */
  size_t cur_order;
  char *api_version;
  uint32_t top_seen;
  index_counts_t counts;
  size_t held;              /* versions held now (max_kept bounds them) */
  index_walk_cb walk;       /* a walking parser: every chart goes to walk, then is dropped */
  void *walk_data;
  index_chart_t walk_chart; /* the chart being read by a walking parser */
};

void index_limits_defaults(index_limits_t *lim) {
  if (!lim->max_bytes) lim->max_bytes = (size_t)256 << 20;
  if (!lim->max_string) lim->max_string = (size_t)64 << 10;
  if (!lim->max_depth) lim->max_depth = 64;
  if (!lim->max_versions) lim->max_versions = 1000000;
  if (!lim->max_kept) lim->max_kept = 100000;
  if (!lim->max_list) lim->max_list = 1000;
  if (!lim->window) lim->window = 2 * lim->max_string + ((size_t)64 << 10);
}

static uint64_t hash_str(const char *s, size_t n) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h | 1; /* 0 marks an empty slot */
}

static slot_t *slot_find(const index_parser_t *p, const char *s, size_t n) {
  if (!p->nslots) return NULL;
  uint64_t h = hash_str(s, n);
  for (size_t i = h & (p->nslots - 1);; i = (i + 1) & (p->nslots - 1)) {
    slot_t *sl = &p->slots[i];
    if (!sl->hash) return NULL;
    if (sl->hash == h && strlen(sl->chart.name) == n && !memcmp(sl->chart.name, s, n)) return sl;
  }
}

static int fail(index_parser_t *p, int code, size_t line, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(index_parser_t *p, int code, size_t line, const char *fmt, ...) {
  if (p->err) return p->err;
  int k = line ? snprintf(p->msg, sizeof p->msg, "index.yaml line %zu: ", line) : snprintf(p->msg, sizeof p->msg, "index.yaml: ");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->msg + k, sizeof p->msg - (size_t)k, fmt, ap);
  va_end(ap);
  p->err = code;
  return code;
}

static int nomem(index_parser_t *p) { return fail(p, INDEX_ENOMEM, 0, "out of memory"); }

static int read_handler(void *data, unsigned char *buffer, size_t size, size_t *size_read) {
  index_parser_t *p = data;
  size_t avail = p->in.len - p->in_off;
  *size_read = 0;
  if (!avail && p->finished) return 1; /* the end */
  /* Never past the frontier, even when more has arrived: where a long token fails then does
   * not depend on how the input was chunked. */
  size_t room = (size_t)(p->frontier - p->consumed);
  size_t k = avail < size ? avail : size;
  if (k > room) k = room;
  if (!k) {
    p->starved = true; /* cannot wait here: refuse (see the window in index.h) */
    return 0;
  }
  memcpy(buffer, p->in.data + p->in_off, k);
  p->in_off += k;
  p->consumed += k;
  *size_read = k;
  return 1;
}

int index_parser_new(const char *const *names, size_t n, const index_limits_t *lim, index_parser_t **out) {
  *out = NULL;
  if (n && !names) return INDEX_EINVAL;
  index_parser_t *p = calloc(1, sizeof *p);
  if (!p) return INDEX_ENOMEM;
  if (lim) p->lim = *lim;
  index_limits_defaults(&p->lim);
  size_t ns = 4;
  while (ns < 2 * n) ns *= 2;
  p->slots = calloc(ns, sizeof *p->slots);
  p->nslots = ns;
  p->api_version = strdup("");
  if (!p->slots || !p->api_version) goto oom;
  for (size_t i = 0; i < n; i++) {
    if (!names[i]) {
      index_parser_free(p);
      return INDEX_EINVAL;
    }
    size_t len = strlen(names[i]);
    if (slot_find(p, names[i], len)) continue;
    uint64_t h = hash_str(names[i], len);
    size_t j = h & (ns - 1);
    while (p->slots[j].hash) j = (j + 1) & (ns - 1);
    if (!(p->slots[j].chart.name = strdup(names[i]))) goto oom;
    p->slots[j].hash = h;
  }
  if (!yaml_parser_initialize(&p->yp)) goto oom;
  p->yp_ready = true;
  yaml_parser_set_input(&p->yp, read_handler, p);
  *out = p;
  return 0;
oom:
  index_parser_free(p);
  return INDEX_ENOMEM;
}

int index_parser_new_walk(const index_limits_t *lim, index_walk_cb cb, void *data, index_parser_t **out) {
  *out = NULL;
  if (!cb) return INDEX_EINVAL;
  int rc = index_parser_new(NULL, 0, lim, out);
  if (rc) return rc;
  (*out)->walk = cb;
  (*out)->walk_data = data;
  return 0;
}

static void strs_free(char **a, size_t n) {
  for (size_t i = 0; i < n; i++) free(a[i]);
  free(a);
}

static void version_free(index_version_t *v) {
  free(v->name), free(v->version), free(v->app_version), free(v->digest), free(v->created);
  free(v->kube_version), free(v->api_version), free(v->type), free(v->description);
  free(v->home), free(v->icon);
  strs_free(v->urls, v->nurls);
  strs_free(v->keywords, v->nkeywords);
  strs_free(v->sources, v->nsources);
  for (size_t i = 0; i < v->nmaintainers; i++) {
    index_maintainer_t *m = &v->maintainers[i];
    free(m->name), free(m->email), free(m->url);
  }
  free(v->maintainers);
  for (size_t i = 0; i < v->ndeps; i++) {
    index_dependency_t *d = &v->deps[i];
    free(d->name), free(d->version), free(d->repository), free(d->alias), free(d->condition);
  }
  free(v->deps);
}

static void chart_clear(index_chart_t *c) {
  for (size_t k = 0; k < c->nversions; k++) version_free(&c->versions[k]);
  c->nversions = 0;
  c->skipped = 0;
}

void index_parser_free(index_parser_t *p) {
  if (!p) return;
  if (p->yp_ready) yaml_parser_delete(&p->yp);
  chart_clear(&p->walk_chart);
  free(p->walk_chart.versions);
  free(p->walk_chart.name);
  for (size_t i = 0; i < p->nslots; i++) {
    index_chart_t *c = &p->slots[i].chart;
    for (size_t k = 0; k < c->nversions; k++) version_free(&c->versions[k]);
    free(c->versions);
    free(c->name);
  }
  free(p->slots);
  free(p->stack);
  free(p->api_version);
  buf_free(&p->in);
  free(p);
}

/* ---- event handling ------------------------------------------------------------------- */

static bool is_null(const yaml_event_t *e) {
  if (e->type != YAML_SCALAR_EVENT || e->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return false;
  const char *s = (const char *)e->data.scalar.value;
  size_t n = e->data.scalar.length;
  return n == 0 || (n == 1 && s[0] == '~') || (n == 4 && (!memcmp(s, "null", 4) || !memcmp(s, "Null", 4) || !memcmp(s, "NULL", 4)));
}

/* YAML 1.1 true (as go-yaml v2 resolves a plain scalar). */
static bool is_true(const yaml_event_t *e) {
  static const char *const t[] = {"y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"};
  if (e->data.scalar.style != YAML_PLAIN_SCALAR_STYLE) return false;
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
    if (strlen(t[i]) == e->data.scalar.length && !memcmp(t[i], e->data.scalar.value, e->data.scalar.length))
      return true;
  return false;
}

static size_t line_of(const yaml_event_t *e) { return e->start_mark.line + 1; }

static int push(index_parser_t *p, kind_t kind, size_t line) {
  if (p->depth + p->skip >= p->lim.max_depth)
    return fail(p, INDEX_E2BIG, line, "nesting deeper than %zu levels", p->lim.max_depth);
  if (p->depth == p->cap) {
    size_t nc = p->cap ? p->cap * 2 : 16;
    frame_t *ns = realloc(p->stack, nc * sizeof *ns);
    if (!ns) return nomem(p);
    p->stack = ns;
    p->cap = nc;
  }
  p->stack[p->depth++] = (frame_t){(uint8_t)kind, true, -1, 0};
  return 0;
}

/* Starts skipping the value that begins with e (a scalar is skipped at once). */
static int skip_value(index_parser_t *p, const yaml_event_t *e) {
  if (e->type == YAML_MAPPING_START_EVENT || e->type == YAML_SEQUENCE_START_EVENT) {
    if (p->depth + 1 > p->lim.max_depth)
      return fail(p, INDEX_E2BIG, line_of(e), "nesting deeper than %zu levels", p->lim.max_depth);
    p->skip = 1;
  }
  return 0;
}

static char *dup_scalar(index_parser_t *p, const yaml_event_t *e) {
  char *s = is_null(e) ? strdup("") : strndup((const char *)e->data.scalar.value, e->data.scalar.length);
  if (!s) nomem(p);
  return s;
}

/* Stores a scalar field into *dst (replacing nothing: duplicates were refused before). */
static int set_str(index_parser_t *p, char **dst, const yaml_event_t *e, const char *field) {
  if (e->type != YAML_SCALAR_EVENT) return fail(p, INDEX_EINVAL, line_of(e), "%s must be a string", field);
  if (!dst) return 0;
  char *s = dup_scalar(p, e);
  if (!s) return p->err;
  free(*dst);
  *dst = s;
  return 0;
}

static const char *kind_path(kind_t k) {
  switch (k) {
  case K_VERSION: return "a chart version";
  case K_DEP: return "a dependency";
  case K_MAINT: return "a maintainer";
  case K_TOP: return "the index";
  default: return "a mapping";
  }
}

/* A key scalar in a mapping frame. */
static int on_key(index_parser_t *p, frame_t *f, const yaml_event_t *e) {
  if (e->type != YAML_SCALAR_EVENT) return fail(p, INDEX_EINVAL, line_of(e), "a mapping key must be a string");
  const char *s = (const char *)e->data.scalar.value;
  size_t n = e->data.scalar.length;
  f->want_key = false;
  int id = -1, nk = 0;
  switch ((kind_t)f->kind) {
  case K_TOP: id = key_id(top_keys, nk = T_N, s, n); break;
  case K_VERSION: id = key_id(version_keys, nk = V_N, s, n); break;
  case K_DEP: id = key_id(dep_keys, nk = D_N, s, n); break;
  case K_MAINT: id = key_id(maint_keys, nk = M_N, s, n); break;
  case K_ENTRIES: {
    p->counts.charts++;
    p->cur_chart = NULL;
    if (p->walk) {
      index_chart_t *c = &p->walk_chart;
      chart_clear(c);
      free(c->name);
      if (!(c->name = strndup(s, n))) return nomem(p);
      c->present = true;
      p->cur_chart = c;
      return 0;
    }
    slot_t *sl = slot_find(p, s, n);
    if (sl) {
      if (sl->chart.present && !p->json)
        return fail(p, INDEX_EINVAL, line_of(e), "key \"%.*s\" already set in map", (int)n, s);
      sl->chart.present = true;
      p->cur_chart = &sl->chart;
    }
    return 0;
  }
  default: return 0;
  }
  if (id < 0) {
    if (!p->json)
      return fail(p, INDEX_EINVAL, line_of(e), "unknown field \"%.*s\" in %s", (int)(n > 64 ? 64 : n), s,
                  kind_path((kind_t)f->kind));
    f->key = -1;
    return 0;
  }
  if (f->seen & (1u << id))
    return fail(p, INDEX_EINVAL, line_of(e), "key \"%.*s\" already set in map", (int)n, s);
  f->seen |= 1u << id;
  f->key = id;
  return 0;
}

static int start_version(index_parser_t *p, const yaml_event_t *e) {
  if (++p->counts.versions > p->lim.max_versions)
    return fail(p, INDEX_E2BIG, line_of(e), "more than %zu chart versions", p->lim.max_versions);
  p->cur = NULL;
  p->cur_invalid = false;
  if (!p->cur_chart) return 0;
  index_chart_t *c = p->cur_chart;
  if (p->held >= p->lim.max_kept)
    return p->walk ? fail(p, INDEX_E2BIG, line_of(e), "chart %s has more than %zu versions", c->name, p->lim.max_kept)
                   : fail(p, INDEX_E2BIG, line_of(e), "more than %zu versions of the asked-for charts", p->lim.max_kept);
  if (c->nversions == c->cap) {
    size_t nc = c->cap ? c->cap * 2 : 8;
    index_version_t *nv = realloc(c->versions, nc * sizeof *nv);
    if (!nv) return nomem(p);
    c->versions = nv;
    c->cap = nc;
  }
  p->cur = &c->versions[c->nversions++];
  memset(p->cur, 0, sizeof *p->cur);
  p->cur->order = p->cur_order++;
  p->counts.kept++;
  p->held++;
  return 0;
}

/* Go's unicode.IsSpace for ASCII becomes ' ', other ASCII control characters go (chart.sanitizeString). */
static void sanitize(char *s) {
  char *w = s;
  for (char *r = s; *r; r++) {
    unsigned char c = (unsigned char)*r;
    if (c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r') *w++ = ' ';
    else if (c == 0xC2 && ((unsigned char)r[1] == 0x85 || (unsigned char)r[1] == 0xA0)) *w++ = ' ', r++;
    else if (c < 0x20 || c == 0x7F) continue;
    else *w++ = (char)c;
  }
  *w = 0;
}

static bool alias_ok(const char *a) {
  for (; *a; a++)
    if (!((*a >= 'a' && *a <= 'z') || (*a >= 'A' && *a <= 'Z') || (*a >= '0' && *a <= '9') || *a == '_' || *a == '-'))
      return false;
  return true;
}

/* The string fields are all set (to "" when absent), then Helm's Metadata.Validate decides. */
static int end_version(index_parser_t *p) {
  index_version_t *v = p->cur;
  p->cur = NULL;
  if (!v) return 0;
  char **fs[] = {&v->name, &v->version, &v->app_version, &v->digest, &v->created, &v->kube_version, &v->api_version,
                 &v->type, &v->description, &v->home, &v->icon};
  for (size_t i = 0; i < sizeof fs / sizeof fs[0]; i++)
    if (!*fs[i] && !(*fs[i] = strdup(""))) return nomem(p);
  if (!*v->api_version) {
    free(v->api_version);
    if (!(v->api_version = strdup("v1"))) return nomem(p);
  }
  sanitize(v->name);
  sanitize(v->app_version);
  sanitize(v->kube_version);
  sanitize(v->description);
  sanitize(v->home);
  sanitize(v->icon);
  for (size_t i = 0; i < v->nkeywords; i++) sanitize(v->keywords[i]);
  for (size_t i = 0; i < v->nsources; i++) sanitize(v->sources[i]);
  for (size_t i = 0; i < v->nmaintainers; i++) {
    index_maintainer_t *m = &v->maintainers[i];
    char **ms[] = {&m->name, &m->email, &m->url};
    for (size_t k = 0; k < 3; k++)
      if (!*ms[k] && !(*ms[k] = strdup(""))) return nomem(p);
    sanitize(m->name), sanitize(m->email), sanitize(m->url);
  }
  buf_t err = BUF_INIT;
  bool ok = !p->cur_invalid && *v->name && strcmp(v->name, ".") && strcmp(v->name, "..") && !strchr(v->name, '/') &&
            *v->version && semver_parse(v->version, strlen(v->version), &v->sv, &err) == 0 &&
            (!*v->type || !strcmp(v->type, "application") || !strcmp(v->type, "library"));
  buf_free(&err);
  for (size_t i = 0; ok && i < v->ndeps; i++) {
    index_dependency_t *d = &v->deps[i];
    char **ds[] = {&d->name, &d->version, &d->repository, &d->alias, &d->condition};
    for (size_t k = 0; k < 5; k++)
      if (!*ds[k] && !(*ds[k] = strdup(""))) return nomem(p);
    sanitize(d->name), sanitize(d->version), sanitize(d->repository), sanitize(d->condition);
    if (*d->alias && !alias_ok(d->alias)) ok = false;
  }
  if (!ok) {
    index_chart_t *c = p->cur_chart;
    version_free(v);
    c->nversions--;
    c->skipped++;
    p->counts.kept--;
    p->held--;
    p->counts.skipped++;
  }
  return 0;
}

static int add_list_item(index_parser_t *p, void **arr, size_t *n, size_t size, size_t line) {
  if (*n >= p->lim.max_list) return fail(p, INDEX_E2BIG, line, "more than %zu items in a list", p->lim.max_list);
  if ((*n & (*n - 1)) == 0) { /* capacity doubles at every power of two */
    void *na = realloc(*arr, (*n ? *n * 2 : 1) * size);
    if (!na) return nomem(p);
    *arr = na;
  }
  memset((char *)*arr + *n * size, 0, size);
  (*n)++;
  return 0;
}

static int cmp_versions(const void *a, const void *b);

/* A chart's entry ended: a walking parser hands it over and drops it. */
static int walk_emit(index_parser_t *p) {
  index_chart_t *c = p->cur_chart;
  p->cur_chart = NULL;
  if (!p->walk || !c) return 0;
  if (c->nversions > 1) qsort(c->versions, c->nversions, sizeof *c->versions, cmp_versions);
  int rc = p->walk(c, p->walk_data);
  p->held -= c->nversions;
  chart_clear(c);
  if (rc) return fail(p, rc, 0, "stopped at chart %s (code %d)", c->name, rc);
  return 0;
}

/* A value (or a sequence item) arriving in frame f. */
static int on_value(index_parser_t *p, frame_t *f, const yaml_event_t *e) {
  bool map = e->type == YAML_MAPPING_START_EVENT, seq = e->type == YAML_SEQUENCE_START_EVENT;
  bool scalar = e->type == YAML_SCALAR_EVENT;
  size_t line = line_of(e);
  if (f->kind == K_TOP || f->kind == K_ENTRIES || f->kind == K_VERSION || f->kind == K_DEP || f->kind == K_MAINT)
    f->want_key = true; /* the value completes the pair (a collection completes it when it ends) */
  switch ((kind_t)f->kind) {
  case K_DOC:
    if (map) return push(p, K_TOP, line);
    if (is_null(e)) return 0;
    return fail(p, INDEX_EINVAL, line, "the index must be a mapping");
  case K_TOP:
    if (f->key == T_APIVERSION) return set_str(p, &p->api_version, e, "apiVersion");
    if (f->key == T_ENTRIES) {
      if (map) return push(p, K_ENTRIES, line);
      if (is_null(e)) return 0;
      return fail(p, INDEX_EINVAL, line, "entries must be a mapping of chart names to lists of versions");
    }
    return skip_value(p, e);
  case K_ENTRIES:
    p->cur_order = 0;
    if (seq) return push(p, K_VERSIONS, line);
    if (is_null(e)) return walk_emit(p);
    return fail(p, INDEX_EINVAL, line, "a chart's entry must be a list of versions");
  case K_VERSIONS:
    if (map) {
      int rc = start_version(p, e);
      return rc ? rc : push(p, K_VERSION, line);
    }
    if (is_null(e)) {
      p->counts.versions++;
      if (p->cur_chart) p->cur_chart->skipped++, p->counts.skipped++;
      return 0;
    }
    return fail(p, INDEX_EINVAL, line, "a chart version must be a mapping");
  case K_VERSION: {
    /* Every version is type-checked as Go's decoder would (a wrong type fails the whole
     * index); only the kept ones (p->cur) store anything. */
    index_version_t *v = p->cur;
    char **dst = NULL;
    const char *field = version_keys[f->key >= 0 ? f->key : 0];
    switch (f->key) {
    case V_NAME: dst = v ? &v->name : NULL; break;
    case V_VERSION: dst = v ? &v->version : NULL; break;
    case V_APPVERSION: dst = v ? &v->app_version : NULL; break;
    case V_DIGEST: dst = v ? &v->digest : NULL; break;
    case V_CREATED: dst = v ? &v->created : NULL; break;
    case V_KUBEVERSION: dst = v ? &v->kube_version : NULL; break;
    case V_APIVERSION: dst = v ? &v->api_version : NULL; break;
    case V_TYPE: dst = v ? &v->type : NULL; break;
    case V_DESCRIPTION: dst = v ? &v->description : NULL; break;
    case V_HOME: dst = v ? &v->home : NULL; break;
    case V_ICON: dst = v ? &v->icon : NULL; break;
    case V_DEPRECATED:
      if (!scalar) return fail(p, INDEX_EINVAL, line, "deprecated must be a boolean");
      if (v) v->deprecated = is_true(e);
      return 0;
    case V_URLS:
    case V_DEPENDENCIES:
    case V_MAINTAINERS:
      if (seq) return push(p, f->key == V_URLS ? K_URLS : f->key == V_DEPENDENCIES ? K_DEPS : K_MAINTS, line);
      if (is_null(e)) return 0;
      return fail(p, INDEX_EINVAL, line, "%s must be a list", field);
    case V_SOURCES:
    case V_KEYWORDS:
      if (seq) return push(p, f->key == V_SOURCES ? K_SOURCES : K_KEYWORDS, line);
      if (is_null(e)) return 0;
      return fail(p, INDEX_EINVAL, line, "%s must be a list", field);
    case V_ANNOTATIONS:
      if (!map && !is_null(e)) return fail(p, INDEX_EINVAL, line, "annotations must be a mapping");
      return skip_value(p, e);
    case -1: return skip_value(p, e); /* JSON: unknown fields are ignored */
    default: break; /* other strings: home, icon, condition, tags, removed, checksum, engine, ... */
    }
    if (!scalar) return fail(p, INDEX_EINVAL, line, "%s must be a string", field);
    return dst ? set_str(p, dst, e, field) : 0;
  }
  case K_URLS:
  case K_KEYWORDS:
  case K_SOURCES: {
    index_version_t *v = p->cur;
    static const char *const what[] = {"a URL", "a keyword", "a source"};
    int w = f->kind == K_URLS ? 0 : f->kind == K_KEYWORDS ? 1 : 2;
    if (!scalar) return fail(p, INDEX_EINVAL, line, "%s must be a string", what[w]);
    if (!v) return 0;
    char ***arr = w == 0 ? &v->urls : w == 1 ? &v->keywords : &v->sources;
    size_t *n = w == 0 ? &v->nurls : w == 1 ? &v->nkeywords : &v->nsources;
    int rc = add_list_item(p, (void **)arr, n, sizeof **arr, line);
    if (rc) return rc;
    return ((*arr)[*n - 1] = dup_scalar(p, e)) ? 0 : p->err;
  }
  case K_DEPS: {
    index_version_t *v = p->cur;
    if (is_null(e)) {
      p->cur_invalid = true; /* "dependencies must not contain empty or null nodes" */
      return 0;
    }
    if (!map) return fail(p, INDEX_EINVAL, line, "a dependency must be a mapping");
    if (v) {
      int rc = add_list_item(p, (void **)&v->deps, &v->ndeps, sizeof *v->deps, line);
      if (rc) return rc;
    }
    return push(p, K_DEP, line);
  }
  case K_DEP: {
    index_dependency_t *d = p->cur ? &p->cur->deps[p->cur->ndeps - 1] : NULL;
    char **dst = NULL;
    switch (f->key) {
    case D_NAME: dst = d ? &d->name : NULL; break;
    case D_VERSION: dst = d ? &d->version : NULL; break;
    case D_REPOSITORY: dst = d ? &d->repository : NULL; break;
    case D_ALIAS: dst = d ? &d->alias : NULL; break;
    case D_CONDITION: dst = d ? &d->condition : NULL; break;
    case D_ENABLED: break;
    default: return skip_value(p, e); /* tags, import-values, unknown JSON fields */
    }
    if (!scalar) return fail(p, INDEX_EINVAL, line, "dependency %s must be a string", dep_keys[f->key]);
    return dst ? set_str(p, dst, e, dep_keys[f->key]) : 0;
  }
  case K_MAINTS:
    if (is_null(e)) {
      p->cur_invalid = true; /* "maintainers must not contain empty or null nodes" */
      return 0;
    }
    if (!map) return fail(p, INDEX_EINVAL, line, "a maintainer must be a mapping");
    if (p->cur) {
      index_version_t *v = p->cur;
      int rc = add_list_item(p, (void **)&v->maintainers, &v->nmaintainers, sizeof *v->maintainers, line);
      if (rc) return rc;
    }
    return push(p, K_MAINT, line);
  case K_MAINT: {
    if (!scalar) return fail(p, INDEX_EINVAL, line, "maintainer fields must be strings");
    index_maintainer_t *m = p->cur ? &p->cur->maintainers[p->cur->nmaintainers - 1] : NULL;
    if (!m || f->key < 0) return 0;
    return set_str(p, f->key == M_NAME ? &m->name : f->key == M_EMAIL ? &m->email : &m->url, e, maint_keys[f->key]);
  }
  }
  return 0;
}

/* The collection of the top frame ended. */
static int pop(index_parser_t *p) {
  frame_t *f = &p->stack[--p->depth];
  if (f->kind == K_VERSION) return end_version(p);
  if (f->kind == K_VERSIONS) return walk_emit(p);
  return 0;
}

static int on_event(index_parser_t *p, const yaml_event_t *e) {
  size_t line = line_of(e);
  switch (e->type) {
  case YAML_NO_EVENT:
  case YAML_STREAM_START_EVENT:
  case YAML_STREAM_END_EVENT: return 0;
  case YAML_DOCUMENT_START_EVENT:
    if (!p->started) {
      p->started = true;
      return push(p, K_DOC, line);
    }
    return 0;
  case YAML_DOCUMENT_END_EVENT:
    p->done = true; /* like yaml.Unmarshal, only the first document counts */
    return 0;
  case YAML_ALIAS_EVENT: return fail(p, INDEX_EINVAL, line, "aliases are not allowed in an index");
  default: break;
  }
  if (e->type == YAML_SCALAR_EVENT && e->data.scalar.length > p->lim.max_string)
    return fail(p, INDEX_E2BIG, line, "a string of %zu bytes (the limit is %zu)", e->data.scalar.length,
                p->lim.max_string);
  if (p->skip) {
    if (e->type == YAML_MAPPING_START_EVENT || e->type == YAML_SEQUENCE_START_EVENT) {
      if (p->depth + ++p->skip > p->lim.max_depth)
        return fail(p, INDEX_E2BIG, line, "nesting deeper than %zu levels", p->lim.max_depth);
    } else if (e->type == YAML_MAPPING_END_EVENT || e->type == YAML_SEQUENCE_END_EVENT) {
      p->skip--;
    }
    return 0;
  }
  if (e->type == YAML_MAPPING_END_EVENT || e->type == YAML_SEQUENCE_END_EVENT) return pop(p);
  frame_t *f = &p->stack[p->depth - 1];
  bool is_map = f->kind == K_TOP || f->kind == K_ENTRIES || f->kind == K_VERSION || f->kind == K_DEP || f->kind == K_MAINT;
  if (is_map && f->want_key) return on_key(p, f, e);
  return on_value(p, f, e);
}

static int run(index_parser_t *p) {
  while (!p->err && !p->done && (p->finished || p->in.len - p->in_off >= p->lim.window)) {
    yaml_event_t e;
    p->frontier = p->consumed + p->lim.window;
    if (!yaml_parser_parse(&p->yp, &e)) {
      size_t line = p->yp.problem_mark.line + 1;
      if (p->starved) line = p->yp.mark.line + 1;
      if (p->starved)
        return fail(p, INDEX_E2BIG, line, "more than %zu bytes without a complete YAML token (a string over the limit, "
                    "or a very long run of blanks or comments)", p->lim.window);
      if (p->yp.error == YAML_MEMORY_ERROR) return nomem(p);
      return fail(p, INDEX_EINVAL, line, "%s%s%s", p->yp.problem ? p->yp.problem : "YAML syntax error",
                  p->yp.context ? " " : "", p->yp.context ? p->yp.context : "");
    }
    int rc = on_event(p, &e);
    bool end = e.type == YAML_STREAM_END_EVENT;
    yaml_event_delete(&e);
    if (rc) return rc;
    if (end) p->done = true;
  }
  return p->err;
}

int index_parser_feed(index_parser_t *p, const void *bytes, size_t len, char *err, size_t errlen) {
  if (!p->err && p->finished) fail(p, INDEX_EINVAL, 0, "input fed after index_parser_finish");
  if (!p->err && len > p->lim.max_bytes - p->counts.bytes)
    fail(p, INDEX_E2BIG, 0, "more than %zu bytes", p->lim.max_bytes);
  const unsigned char *b = bytes;
  while (!p->err && len && !p->done) {
    if (!p->json_known) {
      /* JSON (json.Valid in Helm) is decoded without the strict field checks: an object first */
      size_t i = 0;
      while (i < len && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n')) i++;
      if (i < len) p->json = b[i] == '{', p->json_known = true;
    }
    /* compact what libyaml has read, then take at most two windows' worth */
    if (p->in_off && (p->in_off >= p->in.len / 2)) {
      buf_consume(&p->in, p->in_off);
      p->in_off = 0;
    }
    size_t room = 2 * p->lim.window > p->in.len ? 2 * p->lim.window - p->in.len : 0;
    size_t take = len < room ? len : room;
    if (!take) take = len < p->lim.window ? len : p->lim.window;
    if (buf_append(&p->in, b, take)) {
      nomem(p);
      break;
    }
    if (p->in.len - p->in_off > p->peak) p->peak = p->in.len - p->in_off;
    p->counts.bytes += take;
    b += take;
    len -= take;
    run(p);
  }
  if (p->err) base_errf(err, errlen, p->err, "%s", p->msg);
  return p->err;
}

static int cmp_versions(const void *a, const void *b) {
  const index_version_t *x = a, *y = b;
  int d = semver_compare(&y->sv, &x->sv); /* newest first */
  if (d) return d;
  return x->order < y->order ? -1 : x->order > y->order;
}

int index_parser_finish(index_parser_t *p, char *err, size_t errlen) {
  if (!p->err && !p->finished) {
    p->finished = true;
    if (!p->counts.bytes) fail(p, INDEX_EINVAL, 0, "empty index.yaml file");
    else run(p);
    if (!p->err && !*p->api_version) fail(p, INDEX_EINVAL, 0, "no API version specified");
    if (!p->err) {
      for (size_t i = 0; i < p->nslots; i++) {
        index_chart_t *c = &p->slots[i].chart;
        if (c->nversions > 1) qsort(c->versions, c->nversions, sizeof *c->versions, cmp_versions);
        /* the semver_t points into version, which did not move; nothing to redo */
      }
    }
  }
  if (p->err) base_errf(err, errlen, p->err, "%s", p->msg);
  return p->err;
}

const index_chart_t *index_parser_chart(const index_parser_t *p, const char *name) {
  const slot_t *s = slot_find(p, name, strlen(name));
  return s ? &s->chart : NULL;
}

index_counts_t index_parser_counts(const index_parser_t *p) { return p->counts; }
const char *index_parser_api_version(const index_parser_t *p) { return p->api_version; }
size_t index_parser_peak_buffered(const index_parser_t *p) { return p->peak; }

/* ---- version selection ------------------------------------------------------------------ */

int index_chart_select(const index_chart_t *chart, const char *constraint, const index_version_t **out, char *err,
                       size_t errlen) {
  *out = NULL;
  if (!constraint) constraint = "";
  if (!chart || !chart->present) return base_errf(err, errlen, INDEX_ENOENT, "no chart name found");
  if (!chart->nversions) return base_errf(err, errlen, INDEX_ENOENT, "no chart version found");
  const char *cs = *constraint ? constraint : "*";
  semver_constraint_t *c = NULL;
  buf_t e = BUF_INIT;
  int rc = semver_constraint_new(cs, strlen(cs), &c, &e);
  if (rc) {
    rc = rc == -12 ? base_errf(err, errlen, INDEX_ENOMEM, "out of memory")
                   : base_errf(err, errlen, INDEX_EINVAL, "%s", e.data ? e.data : "bad constraint");
    buf_free(&e);
    return rc;
  }
  buf_free(&e);
  if (*constraint)
    for (size_t i = 0; i < chart->nversions && !*out; i++)
      if (!strcmp(chart->versions[i].version, constraint)) *out = &chart->versions[i];
  for (size_t i = 0; i < chart->nversions && !*out; i++)
    if (semver_constraint_check(c, &chart->versions[i].sv)) *out = &chart->versions[i];
  semver_constraint_free(c);
  if (*out) return 0;
  return base_errf(err, errlen, INDEX_ENOENT, "no chart version found for %s-%s", chart->name, constraint);
}
