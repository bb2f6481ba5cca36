#define _GNU_SOURCE
#include "helm/render/render.h"
#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/b64.h"
#include "base/strset.h"
#include "base/worker.h"
#include "base/yaml.h"
#include "helm/render/manifest.h"
#include "helm/template/helm_funcs.h"
#include "helm/template/sprig.h"
#include "helm/template/tpl.h"
#include "helm/template/unicode.h" /* tpl_go_append_cap */
#include "helm/values/values.h"

/* What the pinned helm (v4.3.1, built with go1.26.8 against client-go v0.37) reports. */
static const char *const render__default_apis[] = {
    "v1", "admissionregistration.k8s.io/v1", "admissionregistration.k8s.io/v1alpha1",
    "admissionregistration.k8s.io/v1beta1", "internal.apiserver.k8s.io/v1alpha1", "apps/v1", "apps/v1beta1",
    "apps/v1beta2", "authentication.k8s.io/v1", "authentication.k8s.io/v1alpha1", "authentication.k8s.io/v1beta1",
    "authorization.k8s.io/v1", "authorization.k8s.io/v1beta1", "autoscaling/v1", "autoscaling/v2", "batch/v1",
    "batch/v1beta1", "certificates.k8s.io/v1", "certificates.k8s.io/v1beta1", "certificates.k8s.io/v1alpha1",
    "coordination.k8s.io/v1alpha2", "coordination.k8s.io/v1beta1", "coordination.k8s.io/v1", "discovery.k8s.io/v1",
    "discovery.k8s.io/v1beta1", "events.k8s.io/v1", "events.k8s.io/v1beta1", "extensions/v1beta1",
    "flowcontrol.apiserver.k8s.io/v1", "flowcontrol.apiserver.k8s.io/v1beta1", "flowcontrol.apiserver.k8s.io/v1beta2",
    "flowcontrol.apiserver.k8s.io/v1beta3", "lifecycle.k8s.io/v1alpha1", "networking.k8s.io/v1",
    "networking.k8s.io/v1beta1", "node.k8s.io/v1", "node.k8s.io/v1alpha1", "node.k8s.io/v1beta1", "policy/v1",
    "policy/v1beta1", "rbac.authorization.k8s.io/v1", "rbac.authorization.k8s.io/v1beta1",
    "rbac.authorization.k8s.io/v1alpha1", "resource.k8s.io/v1", "resource.k8s.io/v1beta2", "resource.k8s.io/v1beta1",
    "resource.k8s.io/v1alpha3", "scheduling.k8s.io/v1alpha3", "scheduling.k8s.io/v1beta1", "scheduling.k8s.io/v1",
    "storage.k8s.io/v1beta1", "storage.k8s.io/v1", "storage.k8s.io/v1alpha1", "storagemigration.k8s.io/v1",
    "storagemigration.k8s.io/v1beta1", "apiextensions.k8s.io/v1beta1", "apiextensions.k8s.io/v1"};
#define RENDER_HELM_VERSION "v4.3.1"
#define RENDER_HELM_COMMIT "0000000000000000000000000000000000000000"
#define RENDER_HELM_TREE "clean"
#define RENDER_HELM_GO "go1.26.8"
#define RENDER_HELM_KUBE_CLIENT "v1.37"

/* ---- per-render state ---------------------------------------------------------------------- */

typedef struct render__src_s {
  const char *name;
  const char *text;
  size_t len;
} render__src_t;

typedef struct render__tplcache_s {
  char *text;
  size_t len; /* the text may hold NUL bytes */
  tpl_set_t *set;
} render__tplcache_t;

/* Execution udata: tpl_helm_state_t first, so include/required/fail see theirs. */
typedef struct render__state_s {
  tpl_helm_state_t helm;
  const tpl_funcs_t *funcs;
  const render__src_t *srcs; /* every template in parse order (for tpl) */
  size_t nsrcs;
  render__tplcache_t cache[32];
  size_t ncache;
  tpl_missingkey_t mk;
  /* Templates whose files define nothing are not kept parsed (their trees are most of a big
   * chart's memory): each runs in an overlay of the set (ov) that parses it, and another one that
   * it includes by name is parsed into that overlay when asked for (render__resolve). */
  const bool *lazy; /* per srcs entry */
  tpl_set_t *ov;
  const tpl_set_t *set; /* the chart's set */
  tpl_set_t **retired;  /* tpl overlays that did not fit the cache and stored values (kept to the end) */
  size_t nretired;
  render_limits_t lim;  /* resolved */
  tpl_budget_t budget;  /* the render's output and time budget (memory is the arena's limit) */
} render__state_t;

static bool render__resolve(void *udata, const char *name, size_t len) {
  render__state_t *st = udata;
  if (!st->ov || !st->lazy) return false;
  for (size_t i = 0; i < st->nsrcs; i++)
    if (st->lazy[i] && strlen(st->srcs[i].name) == len && !memcmp(st->srcs[i].name, name, len))
      return tpl_set_parse(st->ov, st->srcs[i].name, st->srcs[i].text, st->srcs[i].len, NULL) == 0;
  return false;
}

/* ---- values -------------------------------------------------------------------------------- */

static tpl_value_t render__from_json(tpl_arena_t *a, const cJSON *j) {
  tpl_value_t v = tpl_value_nil();
  if (!j || cJSON_IsNull(j)) return v;
  if (cJSON_IsTrue(j)) return tpl_value_bool(true);
  if (cJSON_IsFalse(j)) return tpl_value_bool(false);
  if (cJSON_IsRaw(j)) return tpl_value_int64(strtoll(j->valuestring, NULL, 10));
  if (cJSON_IsNumber(j)) return tpl_value_float(j->valuedouble);
  if (cJSON_IsString(j)) return tpl_value_str_copy(a, j->valuestring, strlen(j->valuestring));
  if (cJSON_IsArray(j)) {
    v = tpl_value_list_new(a, TPL_ELEM_ANY, 0);
    if (v.kind != TPL_LIST) return v;
    for (const cJSON *it = j->child; it; it = it->next) {
      tpl_value_t e = render__from_json(a, it);
      if (e.kind == TPL_INVALID) return e;
      e.iface = 1;
      if (tpl_list_push(a, v.u.list, e)) return tpl_value_invalid();
    }
    return v;
  }
  if (cJSON_IsObject(j)) {
    v = tpl_value_map_new(a, TPL_ELEM_ANY);
    if (v.kind != TPL_MAP) return v;
    for (const cJSON *it = j->child; it; it = it->next) {
      tpl_value_t e = render__from_json(a, it);
      if (e.kind == TPL_INVALID) return e;
      e.iface = 1;
      if (tpl_map_set(a, v.u.map, it->string, strlen(it->string), e)) return tpl_value_invalid();
    }
    return v;
  }
  return tpl_value_nil();
}

/* Map keys of the values, each text kept once in the arena (base/strset.h); the table itself is
 * freed after the conversion. */
typedef strset_t render__keys_t;

static const char *render__intern(tpl_arena_t *a, render__keys_t *ks, const char *k, size_t n) {
  strset_entry_t *e = strset_get(ks, k, n);
  if (!e) return NULL;
  if (!e->p) {
    char *copy = tpl_arena_strndup(a, k, n);
    if (!copy) return NULL;
    strset_fill(ks, e, copy, n);
  }
  return e->p;
}

/* render__from_json for a tree the caller owns, which it consumes: each member is deleted once
 * converted, so the cJSON and the template copies of big values are not both whole at once; a list
 * gets its final capacity (what appending one by one gives, as encoding/json does) and a map its
 * exact size in one allocation instead of every intermediate one; keys are interned. */
static tpl_value_t render__from_json_take(tpl_arena_t *a, cJSON *j, render__keys_t *ks) {
  bool list = cJSON_IsArray(j);
  if (!list && !cJSON_IsObject(j)) return render__from_json(a, j);
  size_t n = 0, cap = 0;
  for (const cJSON *it = j->child; it; it = it->next)
    if (++n > cap) cap = list ? tpl_go_append_cap(cap, n, sizeof(tpl_value_t), false) : n;
  tpl_value_t v = list ? tpl_value_list_new(a, TPL_ELEM_ANY, cap) : tpl_value_map_new(a, TPL_ELEM_ANY);
  if (v.kind == TPL_INVALID || (!list && tpl_map_reserve(a, v.u.map, n))) return tpl_value_invalid();
  while (j->child) {
    cJSON *it = cJSON_DetachItemViaPointer(j, j->child);
    tpl_value_t e = render__from_json_take(a, it, ks);
    int bad = e.kind == TPL_INVALID;
    e.iface = 1;
    if (!bad && list) {
      bad = tpl_list_push(a, v.u.list, e);
    } else if (!bad) {
      size_t kl = strlen(it->string);
      const char *k = kl <= 64 ? render__intern(a, ks, it->string, kl) : tpl_arena_strndup(a, it->string, kl);
      bad = !k || tpl_map_set_key(a, v.u.map, k, kl, e);
    }
    cJSON_Delete(it);
    if (bad) return tpl_value_invalid();
  }
  return v;
}

static int render__set(tpl_arena_t *a, tpl_value_t m, const char *k, tpl_value_t v) {
  v.iface = m.elem == TPL_ELEM_ANY;
  return tpl_map_set(a, m.u.map, k, strlen(k), v);
}

static tpl_value_t render__str(tpl_arena_t *a, const char *s) {
  return tpl_value_str_copy(a, s ? s : "", s ? strlen(s) : 0);
}

static tpl_value_t render__strlist(tpl_arena_t *a, char **v, size_t n) {
  tpl_value_t l = tpl_value_list_new(a, TPL_ELEM_ANY, n);
  if (l.kind != TPL_LIST) return l;
  for (size_t i = 0; i < n; i++) {
    tpl_value_t s = render__str(a, v[i]);
    s.iface = 1;
    if (tpl_list_push(a, l.u.list, s)) return tpl_value_invalid();
  }
  return l;
}

/* .Chart: structToMap(Metadata) plus IsRoot. */
static tpl_value_t render__chart_map(tpl_arena_t *a, const chart_t *c) {
  const chart_meta_t *m = &c->meta;
  tpl_value_t v = tpl_value_map_new(a, TPL_ELEM_ANY);
  if (v.kind != TPL_MAP) return v;
  struct {
    const char *k, *s;
  } strs[] = {{"Name", m->name},           {"Home", m->home},         {"Version", m->version},
              {"Description", m->description}, {"Icon", m->icon},      {"APIVersion", m->api_version},
              {"Condition", m->condition}, {"Tags", m->tags},         {"AppVersion", m->app_version},
              {"KubeVersion", m->kube_version}, {"Type", m->type}};
  int bad = 0;
  for (size_t i = 0; i < sizeof strs / sizeof *strs; i++) bad |= render__set(a, v, strs[i].k, render__str(a, strs[i].s));
  bad |= render__set(a, v, "Sources", render__strlist(a, m->sources, m->nsources));
  bad |= render__set(a, v, "Keywords", render__strlist(a, m->keywords, m->nkeywords));
  bad |= render__set(a, v, "Deprecated", tpl_value_bool(m->deprecated));
  bad |= render__set(a, v, "IsRoot", tpl_value_bool(c->parent == NULL));
  tpl_value_t ann = tpl_value_map_new(a, TPL_ELEM_STRING);
  if (ann.kind != TPL_MAP) return tpl_value_invalid();
  if (m->annotations) {
    for (const cJSON *kv = m->annotations->child; kv; kv = kv->next)
      bad |= tpl_map_set(a, ann.u.map, kv->string, strlen(kv->string),
                         render__str(a, cJSON_IsString(kv) ? kv->valuestring : ""));
  } else {
    ann.u.map = NULL; /* a nil map[string]string */
  }
  bad |= render__set(a, v, "Annotations", ann);
  tpl_value_t mt = tpl_value_list_new(a, TPL_ELEM_ANY, m->nmaintainers);
  if (mt.kind != TPL_LIST) return tpl_value_invalid();
  for (size_t i = 0; i < m->nmaintainers; i++) {
    tpl_value_t e = tpl_value_map_new(a, TPL_ELEM_ANY);
    if (e.kind != TPL_MAP) return tpl_value_invalid();
    bad |= render__set(a, e, "Name", render__str(a, m->maintainers[i].name));
    bad |= render__set(a, e, "Email", render__str(a, m->maintainers[i].email));
    bad |= render__set(a, e, "URL", render__str(a, m->maintainers[i].url));
    e.iface = 1;
    bad |= tpl_list_push(a, mt.u.list, e);
  }
  bad |= render__set(a, v, "Maintainers", mt);
  tpl_value_t deps = tpl_value_list_new(a, TPL_ELEM_ANY, m->ndeps);
  if (deps.kind != TPL_LIST) return tpl_value_invalid();
  for (size_t i = 0; i < m->ndeps; i++) {
    const chart_dep_t *d = &m->deps[i];
    tpl_value_t e = tpl_value_map_new(a, TPL_ELEM_ANY);
    if (e.kind != TPL_MAP) return tpl_value_invalid();
    bad |= render__set(a, e, "Name", render__str(a, d->name));
    bad |= render__set(a, e, "Version", render__str(a, d->version));
    bad |= render__set(a, e, "Repository", render__str(a, d->repository));
    bad |= render__set(a, e, "Condition", render__str(a, d->condition));
    bad |= render__set(a, e, "Tags", render__strlist(a, d->tags, d->ntags));
    bad |= render__set(a, e, "Enabled", tpl_value_bool(d->enabled));
    bad |= render__set(a, e, "ImportValues", render__from_json(a, d->import_values));
    if (!d->import_values) {
      tpl_value_t nl = tpl_value_list_new(a, TPL_ELEM_ANY, 0);
      bad |= render__set(a, e, "ImportValues", nl);
    }
    bad |= render__set(a, e, "Alias", render__str(a, d->alias));
    e.iface = 1;
    bad |= tpl_list_push(a, deps.u.list, e);
  }
  bad |= render__set(a, v, "Dependencies", deps);
  return bad ? tpl_value_invalid() : v;
}

/* ---- .Files ---------------------------------------------------------------------------------- */

/* Helm's engine.files: a map[string][]byte (so templates can range over it, index it and print it
 * as Go does) with the methods Get, GetBytes, Glob, Lines, AsConfig and AsSecrets. */
static const tpl_type_t render__files_type;

static tpl_value_t render__files_new(tpl_arena_t *a) {
  tpl_value_t m = tpl_value_map_new(a, TPL_ELEM_BYTES);
  if (m.kind == TPL_MAP) m.u.map->type = &render__files_type;
  return m;
}

static tpl_value_t render__files_value(tpl_arena_t *a, const chart_t *c) {
  tpl_value_t m = render__files_new(a);
  if (m.kind != TPL_MAP) return m;
  for (size_t i = 0; i < c->nfiles; i++) {
    const chart_file_t *f = &c->files[i];
    /* compact and borrowed: the chart outlives the render, and a []byte is never written in place */
    tpl_value_t b = tpl_value_bytes_ref(a, f->data, f->len);
    if (b.kind != TPL_LIST || tpl_map_set(a, m.u.map, f->name, strlen(f->name), b)) return tpl_value_invalid();
  }
  return m;
}

/* A []byte entry as a string (Go's string(b)): its bytes; NULL when out of memory. */
static const char *render__bytes_text(tpl_arena_t *a, const tpl_value_t *v, size_t *n) {
  return tpl_value_bytes_text(a, v, n);
}

static int render__files_get(tpl_call_t *call, tpl_value_t *args, size_t nargs, tpl_value_t *res) {
  const tpl_map_t *fs = tpl_call_self(call);
  const tpl_value_t *v = tpl_map_get(fs, args[0].u.s.p, args[0].u.s.n);
  if (!v) {
    *res = tpl_value_str("");
    return 0;
  }
  size_t n;
  const char *p = render__bytes_text(tpl_call_arena(call), v, &n);
  if (!p) return TPL_ENOMEM;
  *res = tpl_value_strn(p, n);
  return 0;
}

static int render__files_getbytes(tpl_call_t *call, tpl_value_t *args, size_t nargs, tpl_value_t *res) {
  const tpl_map_t *fs = tpl_call_self(call);
  const tpl_value_t *v = tpl_map_get(fs, args[0].u.s.p, args[0].u.s.n);
  if (v) {
    *res = *v;
    res->iface = 0;
    return 0;
  }
  *res = tpl_value_bytes(tpl_call_arena(call), "", 0); /* []byte{}: empty, not nil */
  return res->kind == TPL_LIST ? 0 : TPL_ENOMEM;
}

/* gobwas/glob with '/' as separator: * (not across /), ** (across), ?, [...], [!...], {a,b}. */
static int render__glob(const char *p, const char *pe, const char *s, const char *se, int depth) {
  if (depth > 64) return 0;
  while (p < pe) {
    if (*p == '*') {
      int dbl = p + 1 < pe && p[1] == '*';
      const char *rest = p + (dbl ? 2 : 1);
      for (const char *t = s;; t++) {
        if (render__glob(rest, pe, t, se, depth + 1)) return 1;
        if (t == se || (!dbl && *t == '/')) return 0;
      }
    }
    if (*p == '{') {
      const char *close = p + 1;
      int lvl = 1;
      while (close < pe && lvl) {
        if (*close == '{') lvl++;
        else if (*close == '}') lvl--;
        if (lvl) close++;
      }
      if (close >= pe) return 0;
      const char *alt = p + 1;
      while (alt <= close) {
        const char *e = alt;
        int l2 = 0;
        while (e < close && !(l2 == 0 && *e == ',')) {
          if (*e == '{') l2++;
          else if (*e == '}') l2--;
          e++;
        }
        size_t al = (size_t)(e - alt), rl = (size_t)(pe - close - 1);
        char *tmp = malloc(al + rl + 1);
        if (!tmp) return 0;
        memcpy(tmp, alt, al);
        memcpy(tmp + al, close + 1, rl);
        int ok = render__glob(tmp, tmp + al + rl, s, se, depth + 1);
        free(tmp);
        if (ok) return 1;
        alt = e + 1;
      }
      return 0;
    }
    if (s == se) return 0;
    if (*p == '?') {
      if (*s == '/') return 0;
      p++, s++;
      continue;
    }
    if (*p == '[') {
      const char *q = p + 1;
      int neg = q < pe && *q == '!';
      if (neg) q++;
      int hit = 0;
      while (q < pe && *q != ']') {
        char lo = *q, hi = lo;
        if (q + 2 < pe && q[1] == '-' && q[2] != ']') {
          hi = q[2];
          q += 3;
        } else {
          q++;
        }
        if (*s >= lo && *s <= hi) hit = 1;
      }
      if (q >= pe || hit == neg) return 0;
      p = q + 1, s++;
      continue;
    }
    if (*p == '\\' && p + 1 < pe) p++;
    if (*p != *s) return 0;
    p++, s++;
  }
  return s == se;
}

static int render__files_glob(tpl_call_t *call, tpl_value_t *args, size_t nargs, tpl_value_t *res) {
  const tpl_map_t *fs = tpl_call_self(call);
  tpl_arena_t *a = tpl_call_arena(call);
  *res = render__files_new(a);
  if (res->kind != TPL_MAP) return TPL_ENOMEM;
  const char *p = args[0].u.s.p;
  size_t pn = args[0].u.s.n;
  for (size_t i = 0; fs && i < fs->len; i++) {
    const tpl_map_entry_t *e = &fs->ents[i];
    if (render__glob(p, p + pn, e->key, e->key + e->klen, 0) &&
        tpl_map_set(a, res->u.map, e->key, e->klen, e->val))
      return TPL_ENOMEM;
  }
  return 0;
}

static int render__files_lines(tpl_call_t *call, tpl_value_t *args, size_t nargs, tpl_value_t *res) {
  const tpl_map_t *fs = tpl_call_self(call);
  tpl_arena_t *a = tpl_call_arena(call);
  *res = tpl_value_list_new(a, TPL_ELEM_STRING, 0);
  if (res->kind != TPL_LIST) return TPL_ENOMEM;
  const tpl_value_t *v = tpl_map_get(fs, args[0].u.s.p, args[0].u.s.n);
  size_t n;
  const char *data = v ? render__bytes_text(a, v, &n) : NULL;
  if (v && !data) return TPL_ENOMEM;
  if (!data || !n) return 0;
  if (data[n - 1] == '\n') n--;
  size_t i = 0;
  for (;;) {
    size_t j = i;
    while (j < n && data[j] != '\n') j++;
    if (tpl_list_push(a, res->u.list, tpl_value_strn(data + i, j - i))) return TPL_ENOMEM;
    if (j >= n) break;
    i = j + 1;
  }
  return 0;
}

static int render__files_as(tpl_call_t *call, int secrets, tpl_value_t *res) {
  const tpl_map_t *fs = tpl_call_self(call);
  tpl_arena_t *a = tpl_call_arena(call);
  tpl_value_t m = tpl_value_map_new(a, TPL_ELEM_STRING);
  if (m.kind != TPL_MAP) return TPL_ENOMEM;
  for (size_t i = 0; fs && i < fs->len; i++) {
    const char *nm = fs->ents[i].key, *base = memrchr(nm, '/', fs->ents[i].klen);
    base = base ? base + 1 : nm;
    size_t n;
    const char *data = render__bytes_text(a, &fs->ents[i].val, &n);
    if (!data) return TPL_ENOMEM;
    tpl_value_t v;
    if (secrets) {
      char *enc = tpl_arena_alloc(a, b64_encoded_len(n) + 1);
      if (!enc) return TPL_ENOMEM;
      size_t el = b64_encode(data, n, enc);
      v = tpl_value_strn(enc, el);
    } else {
      v = tpl_value_strn(data, n);
    }
    if (tpl_map_set(a, m.u.map, base, fs->ents[i].klen - (size_t)(base - nm), v)) return TPL_ENOMEM;
  }
  buf_t out = BUF_INIT, err = BUF_INIT;
  int rc = sprig_yaml_encode(&out, &m, &err);
  buf_free(&err);
  if (rc == TPL_ENOMEM) {
    buf_free(&out);
    return TPL_ENOMEM;
  }
  size_t n = rc ? 0 : out.len;
  if (n && out.data[n - 1] == '\n') n--;
  *res = tpl_value_str_copy(a, out.data ? out.data : "", n);
  buf_free(&out);
  return res->kind == TPL_STRING ? 0 : TPL_ENOMEM;
}

static int render__files_asconfig(tpl_call_t *call, tpl_value_t *args, size_t nargs, tpl_value_t *res) {
  return render__files_as(call, 0, res);
}
static int render__files_assecrets(tpl_call_t *call, tpl_value_t *args, size_t nargs, tpl_value_t *res) {
  return render__files_as(call, 1, res);
}

static const tpl_func_t render__files_methods[] = {
    {"Get", "s", render__files_get, NULL, "func(string) string"},
    {"GetBytes", "s", render__files_getbytes, NULL, "func(string) []uint8"},
    {"Glob", "s", render__files_glob, NULL, "func(string) engine.files"},
    {"Lines", "s", render__files_lines, NULL, "func(string) []string"},
    {"AsConfig", "", render__files_asconfig, NULL, "func() string"},
    {"AsSecrets", "", render__files_assecrets, NULL, "func() string"},
};

static const tpl_func_t *render__files_method(void *self, const char *name) {
  for (size_t i = 0; i < sizeof render__files_methods / sizeof *render__files_methods; i++)
    if (!strcmp(render__files_methods[i].name, name)) return &render__files_methods[i];
  return NULL;
}

static const tpl_type_t render__files_type = {"engine.files", NULL, render__files_method, NULL};

/* ---- .Capabilities ----------------------------------------------------------------------------- */

/* *common.Capabilities { KubeVersion common.KubeVersion; APIVersions common.VersionSet;
 * HelmVersion version.BuildInfo }. None has String() on its value, so fmt prints them as structs:
 * each type answers the reserved field names "*fields" (the field values in order) and "*names"
 * (see object_struct in the template core); "*String" is the text of (*KubeVersion).String() that
 * a template action prints for the addressable field. */
typedef struct render__caps_s {
  char version[64], normalized[64], major[16], minor[16];
  const char **apis;
  size_t napis;
  tpl_value_t kv, apis_v, hv;              /* the field values */
  tpl_value_t kv_fields, hv_fields, caps_fields;         /* "*fields" of each struct */
} render__caps_t;

static const tpl_type_t render__caps_type, render__kv_type, render__apis_type, render__hv_type;

static tpl_value_t render__obj(tpl_arena_t *a, const tpl_type_t *t, void *self) {
  tpl_object_t *o = tpl_arena_alloc(a, sizeof *o);
  tpl_value_t v = {0};
  if (!o) return v;
  o->type = t;
  o->self = self;
  v.kind = TPL_OBJECT;
  v.u.obj = o;
  return v;
}

/* Field names of the three structs as list values ("*names"): initialised at compile time and
 * never written, so field callbacks need no arena and share nothing mutable. */
#define RENDER__NAME(str) {.kind = TPL_STRING, .u = {.s = {str, sizeof str - 1}}}
static tpl_value_t render__kv_names_v[] = {RENDER__NAME("Version"), RENDER__NAME("normalizedVersion"),
                                           RENDER__NAME("Major"), RENDER__NAME("Minor")};
static tpl_value_t render__hv_names_v[] = {RENDER__NAME("Version"), RENDER__NAME("GitCommit"),
                                           RENDER__NAME("GitTreeState"), RENDER__NAME("GoVersion"),
                                           RENDER__NAME("KubeClientVersion")};
static tpl_value_t render__caps_names_v[] = {RENDER__NAME("KubeVersion"), RENDER__NAME("APIVersions"),
                                             RENDER__NAME("HelmVersion")};
#undef RENDER__NAME
static tpl_list_t render__struct_names[3] = {
    {.len = 4, .cap = 4, .items = render__kv_names_v, .elem = TPL_ELEM_STRING},
    {.len = 5, .cap = 5, .items = render__hv_names_v, .elem = TPL_ELEM_STRING},
    {.len = 3, .cap = 3, .items = render__caps_names_v, .elem = TPL_ELEM_STRING}};

/* "*fields" and "*names" of struct `which` (0 KubeVersion, 1 BuildInfo, 2 Capabilities). */
static int render__struct_field(const char *name, const tpl_value_t *fields, int which, tpl_value_t *out) {
  if (!strcmp(name, "*fields")) {
    *out = *fields;
    return 1;
  }
  if (strcmp(name, "*names")) return 0;
  *out = tpl_value_invalid();
  out->kind = TPL_LIST;
  out->elem = TPL_ELEM_STRING;
  out->u.list = &render__struct_names[which];
  return 1;
}

static int render__caps_field(void *self, const char *name, tpl_value_t *out) {
  render__caps_t *c = self;
  if (!strcmp(name, "KubeVersion")) *out = c->kv;
  else if (!strcmp(name, "APIVersions")) *out = c->apis_v;
  else if (!strcmp(name, "HelmVersion")) *out = c->hv;
  else return render__struct_field(name, &c->caps_fields, 2, out);
  return 1;
}

static int render__kv_field(void *self, const char *name, tpl_value_t *out) {
  render__caps_t *c = self;
  if (!strcmp(name, "Version")) *out = tpl_value_str(c->version);
  else if (!strcmp(name, "Major")) *out = tpl_value_str(c->major);
  else if (!strcmp(name, "Minor")) *out = tpl_value_str(c->minor);
  else if (!strcmp(name, "*String")) *out = tpl_value_str(c->normalized);
  else return render__struct_field(name, &c->kv_fields, 0, out);
  return 1;
}

static int render__kv_string(tpl_call_t *call, tpl_value_t *args, size_t nargs, tpl_value_t *res) {
  render__caps_t *c = tpl_call_self(call);
  *res = tpl_value_str(c->normalized);
  return 0;
}

static int render__kv_git(tpl_call_t *call, tpl_value_t *args, size_t nargs, tpl_value_t *res) {
  render__caps_t *c = tpl_call_self(call);
  *res = tpl_value_str(c->version);
  return 0;
}

/* The pointer's methods: the field is addressable through *Capabilities, so templates may call them. */
static const tpl_func_t render__kv_methods[] = {{"String", "", render__kv_string, NULL, "func() string"},
                                                {"GitVersion", "", render__kv_git, NULL, "func() string"}};

static const tpl_func_t *render__kv_method(void *self, const char *name) {
  for (size_t i = 0; i < 2; i++)
    if (!strcmp(render__kv_methods[i].name, name)) return &render__kv_methods[i];
  return NULL;
}

static int render__apis_has(tpl_call_t *call, tpl_value_t *args, size_t nargs, tpl_value_t *res) {
  const tpl_list_t *l = tpl_call_self(call);
  bool has = false;
  for (size_t i = 0; l && i < l->len && !has; i++)
    has = l->items[i].u.s.n == args[0].u.s.n && !memcmp(l->items[i].u.s.p, args[0].u.s.p, args[0].u.s.n);
  *res = tpl_value_bool(has);
  return 0;
}

static const tpl_func_t render__apis_methods[] = {{"Has", "s", render__apis_has, NULL, "func(string) bool"}};

static const tpl_func_t *render__apis_method(void *self, const char *name) {
  return strcmp(name, "Has") ? NULL : &render__apis_methods[0];
}

static int render__hv_field(void *self, const char *name, tpl_value_t *out) {
  render__caps_t *c = self;
  if (!strcmp(name, "Version")) *out = tpl_value_str(RENDER_HELM_VERSION);
  else if (!strcmp(name, "GitCommit")) *out = tpl_value_str(RENDER_HELM_COMMIT);
  else if (!strcmp(name, "GitTreeState")) *out = tpl_value_str(RENDER_HELM_TREE);
  else if (!strcmp(name, "GoVersion")) *out = tpl_value_str(RENDER_HELM_GO);
  else if (!strcmp(name, "KubeClientVersion")) *out = tpl_value_str(RENDER_HELM_KUBE_CLIENT);
  else return render__struct_field(name, &c->hv_fields, 1, out);
  return 1;
}

static const tpl_type_t render__caps_type = {"*common.Capabilities", render__caps_field, NULL, NULL};
static const tpl_type_t render__kv_type = {"common.KubeVersion", render__kv_field, render__kv_method, NULL};
static const tpl_type_t render__apis_type = {"common.VersionSet", NULL, render__apis_method, NULL};
static const tpl_type_t render__hv_type = {"version.BuildInfo", render__hv_field, NULL, NULL};

/* The field values of the three structs, built once per render. */
static int render__caps_fields(tpl_arena_t *a, render__caps_t *c) {
  const char *kv[] = {c->version, c->normalized, c->major, c->minor};
  const char *hv[] = {RENDER_HELM_VERSION, RENDER_HELM_COMMIT, RENDER_HELM_TREE, RENDER_HELM_GO, RENDER_HELM_KUBE_CLIENT};
  c->kv_fields = tpl_value_list_new(a, TPL_ELEM_ANY, 4);
  c->hv_fields = tpl_value_list_new(a, TPL_ELEM_ANY, 5);
  c->caps_fields = tpl_value_list_new(a, TPL_ELEM_ANY, 3);
  if (c->kv_fields.kind != TPL_LIST || c->hv_fields.kind != TPL_LIST || c->caps_fields.kind != TPL_LIST)
    return RENDER_ENOMEM;
  int bad = 0;
  for (size_t i = 0; i < 4; i++) bad |= tpl_list_push(a, c->kv_fields.u.list, tpl_value_str(kv[i]));
  for (size_t i = 0; i < 5; i++) bad |= tpl_list_push(a, c->hv_fields.u.list, tpl_value_str(hv[i]));
  bad |= tpl_list_push(a, c->caps_fields.u.list, c->kv) | tpl_list_push(a, c->caps_fields.u.list, c->apis_v) |
         tpl_list_push(a, c->caps_fields.u.list, c->hv);
  return bad ? RENDER_ENOMEM : 0;
}

/* k8s.io/apimachinery ParseGeneric + common.ParseKubeVersion. 0 or -1. */
static int render__parse_kube_version(const char *in, render__caps_t *c) {
  const char *p = in;
  if (*p == 'v') p++;
  unsigned long comps[3] = {0};
  int nc = 0;
  const char *s = p;
  while (nc < 3) {
    if (*s < '0' || *s > '9') return -1;
    if (*s == '0' && s[1] >= '0' && s[1] <= '9') return -1;
    char *e;
    comps[nc++] = strtoul(s, &e, 10);
    s = e;
    if (*s != '.') break;
    s++;
  }
  if (nc < 2) return -1;
  if (*s && *s != '-' && *s != '+') return -1;
  snprintf(c->version, sizeof c->version, "%s%s", in[0] == 'v' ? "" : "v", in);
  if (nc == 2) snprintf(c->normalized, sizeof c->normalized, "v%lu.%lu", comps[0], comps[1]);
  else snprintf(c->normalized, sizeof c->normalized, "v%lu.%lu.%lu", comps[0], comps[1], comps[2]);
  snprintf(c->major, sizeof c->major, "%lu", comps[0]);
  snprintf(c->minor, sizeof c->minor, "%lu", comps[1]);
  return 0;
}

/* ---- tpl ---------------------------------------------------------------------------------------- */

static int render__tpl(tpl_call_t *call, tpl_value_t *args, size_t nargs, tpl_value_t *res) {
  render__state_t *st = tpl_call_exec_udata(call);
  tpl_arena_t *a = tpl_call_arena(call);
  const char *text = args[0].u.s.p;
  size_t tl = args[0].u.s.n;
  tpl_set_t *set = NULL, *uncached = NULL;
  for (size_t i = 0; i < st->ncache; i++)
    if (st->cache[i].len == tl && !memcmp(st->cache[i].text, text, tl)) set = st->cache[i].set;
  buf_t err = BUF_INIT, q = BUF_INIT;
  if (!set) {
    /* Helm's parent.Clone + New("gotpl").Parse(text): an overlay of the chart's set (files kept
     * unparsed are parsed into it when asked for, render__resolve). */
    set = tpl_set_overlay(st->set);
    if (!set) return TPL_ENOMEM;
    int rc = tpl_set_parse(set, "gotpl", text, tl, &err);
    if (rc) {
      tpl_fmt_quote(&q, text, tl);
      tpl_call_errorf(call, "cannot parse template %s: %s", q.data ? q.data : "", err.data ? err.data : "");
      buf_free(&q);
      buf_free(&err);
      tpl_set_free(set);
      return rc == TPL_ENOMEM ? TPL_ENOMEM : TPL_EEXEC;
    }
    if (st->ncache < sizeof st->cache / sizeof *st->cache && (st->cache[st->ncache].text = malloc(tl + 1))) {
      memcpy(st->cache[st->ncache].text, text, tl);
      st->cache[st->ncache].text[tl] = 0;
      st->cache[st->ncache].len = tl;
      st->cache[st->ncache++].set = set;
    }
    else
      uncached = set; /* no room to cache: freed after it runs, unless values may hold its strings */
  }
  buf_t out = BUF_INIT;
  buf_reset(&err);
  tpl_exec_opts_t o = {.missingkey = st->mk, .udata = st, .resolve = render__resolve, .budget = &st->budget,
                       .nested = true, .max_depth = st->lim.max_depth};
  tpl_set_t *outer = st->ov;
  st->ov = set;
  uint64_t writes = tpl_arena_writes(a);
  int rc = tpl_set_execute(set, "gotpl", args[1], a, &o, &out, &err);
  st->ov = outer;
  if (uncached && tpl_arena_writes(a) == writes) {
    tpl_set_free(uncached); /* nothing was stored anywhere: its strings cannot be in use */
  } else if (uncached) {
    tpl_set_t **nr = realloc(st->retired, (st->nretired + 1) * sizeof *nr);
    if (!nr) {
      tpl_set_free(uncached);
      buf_free(&out);
      buf_free(&err);
      return TPL_ENOMEM;
    }
    st->retired = nr;
    st->retired[st->nretired++] = uncached;
  }
  if (rc) {
    if (rc == TPL_ENOMEM) {
      buf_free(&out);
      buf_free(&err);
      return rc;
    }
    if (rc == TPL_ELIMIT && st->budget.hit) { /* the render's budget: its message stands as is */
      buf_reset(&q);
      tpl_call_errorf(call, "%s", err.data ? err.data : "");
      buf_free(&out);
      buf_free(&err);
      return TPL_ELIMIT;
    }
    tpl_fmt_quote(&q, text, tl);
    tpl_call_errorf(call, "error during tpl function execution for %s: %s", q.data ? q.data : "", err.data ? err.data : "");
    buf_free(&q);
    buf_free(&out);
    buf_free(&err);
    return TPL_EEXEC;
  }
  buf_free(&err);
  /* strings.ReplaceAll(out, "<no value>", "") */
  buf_t clean = BUF_INIT;
  const char *s = out.data ? out.data : "";
  size_t n = out.len;
  for (size_t i = 0; i < n;) {
    if (n - i >= 10 && !memcmp(s + i, "<no value>", 10)) {
      i += 10;
      continue;
    }
    buf_putc(&clean, s[i++]);
  }
  *res = tpl_value_str_copy(a, clean.data ? clean.data : "", clean.len);
  buf_free(&clean);
  buf_free(&out);
  return res->kind == TPL_STRING ? 0 : TPL_ENOMEM;
}

static const tpl_func_t render__tpl_func[] = {{"tpl", "sa", render__tpl, NULL, "func(string, interface {}) (string, error)"}};

/* ---- templates ------------------------------------------------------------------------------------ */

typedef struct render__tmpl_s {
  char *name;      /* full path */
  char *base_path; /* chart path + "/templates" */
  const chart_file_t *file;
  tpl_value_t dot; /* the chart's `next` map */
} render__tmpl_t;

typedef struct render__build_s {
  tpl_arena_t *a;
  render__tmpl_t *t;
  size_t n, cap;
  tpl_value_t release, caps;
} render__build_t;

static int render__collect(render__build_t *b, const chart_t *c, tpl_value_t parent_values, tpl_value_t *next_out) {
  tpl_arena_t *a = b->a;
  tpl_value_t next = tpl_value_map_new(a, TPL_ELEM_ANY);
  tpl_value_t subs = tpl_value_map_new(a, TPL_ELEM_ANY);
  if (next.kind != TPL_MAP || subs.kind != TPL_MAP) return RENDER_ENOMEM;
  tpl_value_t files = render__files_value(a, c);
  if (files.kind != TPL_MAP) return RENDER_ENOMEM;
  tpl_value_t chart = render__chart_map(a, c);
  if (chart.kind != TPL_MAP) return RENDER_ENOMEM;
  tpl_value_t values;
  if (!c->parent) {
    values = parent_values;
  } else {
    tpl_value_t *vv = parent_values.kind == TPL_MAP && parent_values.u.map
                          ? tpl_map_get(parent_values.u.map, c->meta.name, strlen(c->meta.name))
                          : NULL;
    if (vv && vv->kind == TPL_MAP && vv->u.map) values = *vv;
    else values = tpl_value_map_new(a, TPL_ELEM_ANY);
  }
  values.iface = 0;
  values.view = TPL_VIEW_VALUES; /* common.Values (a subchart's view of the parent's nested map too) */
  if (render__set(a, next, "Chart", chart) || render__set(a, next, "Files", files) ||
      render__set(a, next, "Release", b->release) || render__set(a, next, "Capabilities", b->caps) ||
      render__set(a, next, "Values", values) || render__set(a, next, "Subcharts", subs))
    return RENDER_ENOMEM;
  for (size_t i = 0; i < c->ndeps; i++) {
    tpl_value_t sub;
    int rc = render__collect(b, c->deps[i], values, &sub);
    if (rc) return rc;
    if (render__set(a, subs, c->deps[i]->meta.name, sub)) return RENDER_ENOMEM;
  }
  char *path = chart_full_path(c);
  if (!path) return RENDER_ENOMEM;
  int lib = chart_is_library(c);
  int rc = 0;
  for (size_t i = 0; i < c->ntemplates && !rc; i++) {
    const chart_file_t *f = &c->templates[i];
    const char *base = strrchr(f->name, '/');
    base = base ? base + 1 : f->name;
    if (lib && base[0] != '_') continue;
    if (b->n == b->cap) {
      size_t nc = b->cap ? b->cap * 2 : 32;
      render__tmpl_t *nt = realloc(b->t, nc * sizeof *nt);
      if (!nt) {
        rc = RENDER_ENOMEM;
        break;
      }
      b->t = nt;
      b->cap = nc;
    }
    render__tmpl_t *t = &b->t[b->n];
    memset(t, 0, sizeof *t);
    if (asprintf(&t->name, "%s/%s", path, f->name) < 0) {
      t->name = NULL;
      rc = RENDER_ENOMEM;
      break;
    }
    if (asprintf(&t->base_path, "%s/templates", path) < 0) {
      free(t->name);
      rc = RENDER_ENOMEM;
      break;
    }
    /* A later chart's file with the same full path replaces the earlier (a Go map). */
    size_t k;
    for (k = 0; k < b->n; k++)
      if (!strcmp(b->t[k].name, t->name)) break;
    if (k < b->n) {
      free(b->t[k].name);
      free(b->t[k].base_path);
      b->t[k].name = t->name;
      b->t[k].base_path = t->base_path;
      b->t[k].file = f;
      b->t[k].dot = next;
      continue;
    }
    t->file = f;
    t->dot = next;
    b->n++;
  }
  free(path);
  *next_out = next;
  return rc;
}

static size_t render__slashes(const char *s) {
  size_t n = 0;
  for (; *s; s++) n += *s == '/';
  return n;
}

/* sort.Sort(sort.Reverse(byPathLen)): deeper paths first, then reverse lexical order. */
static int render__cmp_tmpl(const void *pa, const void *pb) {
  const render__tmpl_t *a = pa, *b = pb;
  size_t ca = render__slashes(a->name), cb = render__slashes(b->name);
  if (ca != cb) return ca > cb ? -1 : 1;
  return -strcmp(a->name, b->name);
}

/* engine.cleanupParseError */
static void render__parse_error(const char *filename, const char *msg, buf_t *err) {
  buf_reset(err);
  const char *first = strstr(msg, ": ");
  if (!first) {
    buf_printf(err, "parse error in (%s): %s", filename, msg);
    return;
  }
  const char *loc = first + 2;
  const char *loc_end = strstr(loc, ": ");
  size_t ll = loc_end ? (size_t)(loc_end - loc) : strlen(loc);
  const char *last = msg;
  for (const char *p = strstr(msg, ": "); p; p = strstr(p + 2, ": ")) last = p + 2;
  buf_printf(err, "parse error at (%.*s): %s", (int)ll, loc, last);
}

typedef struct render__trace_s {
  char *location, *message, *func;
} render__trace_t;

static char *render__cut_template(const char *s, size_t n) {
  const char *cut = memmem(s, n, " template:", 10);
  size_t l = cut ? (size_t)(cut - s) : n;
  return strndup(s, l);
}

/* parseTemplateExecErrorString over one level's text; *next gets the wrapped error's text (after
 * "error calling NAME: "), or NULL. 0 ok, -1 not parseable. */
static int render__parse_trace(const char *s, render__trace_t *t, const char **next) {
  memset(t, 0, sizeof *t);
  *next = NULL;
  if (strncmp(s, "template: ", 10)) return -1;
  const char *rem = s + 10;
  if (!strncmp(rem, "no template ", 12)) {
    t->message = strdup(s);
    return 0;
  }
  const char *ex = strstr(rem, ": executing ");
  if (ex && ex[12] == '"') {
    const char *fn = ex + 13;
    const char *endq = strchr(fn, '"');
    if (endq && !strncmp(endq + 1, " at <", 5)) {
      const char *at = endq + 6;
      const char *gt = strstr(at, ">: ");
      if (gt) {
        const char *msg = gt + 3;
        t->location = strndup(rem, (size_t)(ex - rem));
        if (asprintf(&t->func, "executing \"%.*s\" at <%.*s>:", (int)(endq - fn), fn, (int)(gt - at), at) < 0) t->func = NULL;
        t->message = render__cut_template(msg, strlen(msg));
        if (!strncmp(msg, "error calling ", 14)) {
          const char *colon = strstr(msg + 14, ": ");
          if (colon) *next = colon + 2;
        }
        return 0;
      }
    }
  }
  /* parseTemplateSimpleErrorString */
  const char *sep = NULL;
  for (const char *p = strstr(rem, ": "); p; p = strstr(p + 1, ": ")) sep = p;
  if (!sep) return -1;
  t->location = strndup(rem, (size_t)(sep - rem));
  t->message = render__cut_template(sep + 2, strlen(sep + 2));
  return 0;
}

static void render__trace_free(render__trace_t *t) {
  free(t->location);
  free(t->message);
  free(t->func);
}

static int render__trace_eq(const render__trace_t *a, const render__trace_t *b) {
#define SEQ(x, y) ((!(x) && !(y)) || ((x) && (y) && !strcmp((x), (y))))
  return SEQ(a->location, b->location) && SEQ(a->message, b->message) && SEQ(a->func, b->func);
#undef SEQ
}

/* engine.reformatExecErrorMsg */
static void render__exec_error(const char *filename, const char *msg, buf_t *err) {
  buf_t out = BUF_INIT;
  const char *t1 = strstr(msg, ": ");
  const char *t2 = t1 ? strstr(t1 + 2, ": ") : NULL;
  if (!t1 || !t2) {
    buf_printf(&out, "execution error in (%s): %s", filename, msg);
    goto done;
  }
  const char *tok2 = t2 + 2;
  const char *hs = strstr(tok2, "HELM_ERR_START");
  if (hs) {
    const char *he = NULL;
    for (const char *p = strstr(hs + 14, "HELM_ERR_END"); p; p = strstr(p + 1, "HELM_ERR_END")) he = p;
    if (he) {
      buf_printf(&out, "execution error at (%.*s): %.*s", (int)(t2 - t1 - 2), t1 + 2, (int)(he - hs - 14), hs + 14);
      goto done;
    }
  }
  render__trace_t tr[64];
  size_t nt = 0;
  const char *cur = msg;
  int raw = 0;
  while (cur && nt < 64) {
    render__trace_t t;
    const char *next;
    if (render__parse_trace(cur, &t, &next)) {
      raw = 1;
      break;
    }
    if (nt && render__trace_eq(&tr[nt - 1], &t)) render__trace_free(&t);
    else tr[nt++] = t;
    cur = next;
  }
  if (raw) {
    buf_puts(&out, msg);
  } else {
    buf_t s = BUF_INIT;
    for (size_t i = 0; i < nt; i++) {
      if (tr[i].location && *tr[i].location) buf_printf(&s, "%s\n  ", tr[i].location);
      if (tr[i].func && *tr[i].func) buf_printf(&s, "%s\n    ", tr[i].func);
      if (tr[i].message && *tr[i].message) buf_printf(&s, "%s\n", tr[i].message);
    }
    const char *p = s.data ? s.data : "";
    size_t n = s.len;
    while (n && (*p == ' ' || *p == '\n' || *p == '\t')) p++, n--;
    while (n && (p[n - 1] == ' ' || p[n - 1] == '\n' || p[n - 1] == '\t')) n--;
    buf_append(&out, p, n);
    buf_free(&s);
  }
  for (size_t i = 0; i < nt; i++) render__trace_free(&tr[i]);
done:
  buf_reset(err);
  buf_append(err, out.data ? out.data : "", out.len);
  buf_free(&out);
}

void render_files_free(render_file_t *files, size_t n) {
  if (!files) return;
  for (size_t i = 0; i < n; i++) {
    free(files[i].name);
    free(files[i].text);
  }
  free(files);
}

static int render__caps_value(tpl_arena_t *a, const render_opts_t *o, render__caps_t **capsp, tpl_value_t *out,
                              buf_t *err) {
  render__caps_t *caps = tpl_arena_alloc(a, sizeof *caps);
  if (!caps) return RENDER_ENOMEM;
  const char *kv = o && o->kube_version ? o->kube_version : RENDER_DEFAULT_KUBE_VERSION;
  if (render__parse_kube_version(kv, caps)) {
    buf_reset(err);
    buf_printf(err, "invalid kube version '%s': could not parse \"%s\" as version", kv, kv);
    return RENDER_EINVAL;
  }
  size_t nd = sizeof render__default_apis / sizeof *render__default_apis, ne = o ? o->napi_versions : 0;
  caps->apis = tpl_arena_alloc(a, (nd + ne + 1) * sizeof *caps->apis);
  if (!caps->apis) return RENDER_ENOMEM;
  for (size_t i = 0; i < nd; i++) caps->apis[caps->napis++] = render__default_apis[i];
  for (size_t i = 0; i < ne; i++) caps->apis[caps->napis++] = o->api_versions[i];
  caps->kv = render__obj(a, &render__kv_type, caps);
  caps->hv = render__obj(a, &render__hv_type, caps);
  caps->apis_v = tpl_value_list_new(a, TPL_ELEM_STRING, caps->napis);
  if (caps->kv.kind != TPL_OBJECT || caps->hv.kind != TPL_OBJECT || caps->apis_v.kind != TPL_LIST)
    return RENDER_ENOMEM;
  caps->apis_v.u.list->type = &render__apis_type;
  for (size_t i = 0; i < caps->napis; i++)
    if (tpl_list_push(a, caps->apis_v.u.list, tpl_value_str(caps->apis[i]))) return RENDER_ENOMEM;
  if (render__caps_fields(a, caps)) return RENDER_ENOMEM;
  *out = render__obj(a, &render__caps_type, caps);
  if (out->kind != TPL_OBJECT) return RENDER_ENOMEM;
  if (capsp) *capsp = caps;
  return 0;
}

/* ---- template files parsed on the helper thread (opts->worker) ----
 * A template file whose text holds neither `define` nor `block` defines nothing: it is parsed on
 * the helper, a few files ahead of the one running (RENDER_PARSE_AHEAD), and runs in the set its
 * parse made (attached to the chart's set as an overlay), so that only a few such trees are alive
 * at a time and none is parsed twice. Helm parses every file before running any: so a parse error
 * decides the outcome wherever it is, and before an error is returned the files before it (an
 * earlier parse error wins) or all of them (over an execution error) are parsed too. */
#define RENDER_PARSE_AHEAD 4

typedef struct render__probe_s {
  const char *name, *text; /* NULL name: not parsed on the helper */
  size_t len;
  long ticket;    /* 0: not posted yet; -1: parsed here */
  bool keep;      /* keep the set for the run (else only the outcome) */
  tpl_set_t *set; /* the kept parse (r == 0) until it runs */
  int r;          /* tpl_set_parse's */
  buf_t err;
  const tpl_funcs_t *funcs;
} render__probe_t;

typedef struct render__probes_s {
  worker_t *w;
  render__probe_t *v; /* per template, in parse order */
  size_t n;
  size_t next;  /* every file before it has been posted */
  size_t ahead; /* posted to be kept and not taken yet */
} render__probes_t;

static void render__probe_run(void *p) {
  render__probe_t *pr = p;
  tpl_set_t *set = tpl_set_new(pr->funcs);
  pr->r = set ? tpl_set_parse(set, pr->name, pr->text, pr->len, &pr->err) : TPL_ENOMEM;
  if (pr->r || !pr->keep) tpl_set_free(set);
  else pr->set = set;
}

static void render__set_free_job(void *set) { tpl_set_free(set); }

static bool render__may_define(const char *text, size_t len) {
  return memmem(text, len, "define", 6) || memmem(text, len, "block", 5);
}

static void render__probe_post(render__probes_t *P, size_t i, bool keep) {
  render__probe_t *pr = &P->v[i];
  if (!pr->name || pr->ticket) return;
  pr->keep = keep;
  pr->ticket = worker_post(P->w, render__probe_run, pr);
  if (pr->ticket < 0) render__probe_run(pr);
}

/* Keeps RENDER_PARSE_AHEAD files posted ahead of the one about to run. */
static void render__probe_ahead(render__probes_t *P) {
  for (; P->next < P->n && P->ahead < RENDER_PARSE_AHEAD; P->next++)
    if (P->v[P->next].name && !P->v[P->next].ticket) {
      render__probe_post(P, P->next, true);
      P->ahead++;
    }
}

static void render__probe_wait(render__probes_t *P, size_t i) {
  if (P->v[i].ticket > 0) worker_wait_for(P->w, P->v[i].ticket);
}

/* The first parse error among the files before index `before`, in parse order (the ones not
 * posted yet are parsed now): 0 none, else the render error code with err set. */
static int render__probe_error(render__probes_t *P, size_t before, buf_t *err) {
  if (!P->v) return 0;
  for (size_t i = 0; i < before; i++) render__probe_post(P, i, false);
  for (size_t i = 0; i < before; i++) {
    render__probe_t *pr = &P->v[i];
    if (!pr->name) continue;
    render__probe_wait(P, i);
    if (!pr->r) continue;
    if (pr->r == TPL_ENOMEM) return RENDER_ENOMEM;
    render__parse_error(pr->name, pr->err.data ? pr->err.data : "", err);
    return RENDER_EINVAL;
  }
  return 0;
}

/* Frees what the probes hold, once the helper has finished them. */
static void render__probes_free(render__probes_t *P) {
  if (!P->v) return;
  if (P->w) worker_wait(P->w);
  for (size_t i = 0; i < P->n; i++) {
    tpl_set_free(P->v[i].set);
    buf_free(&P->v[i].err);
  }
  free(P->v);
  P->v = NULL;
}

static int render__chart(const chart_t *c, const cJSON *values, cJSON *owned, const render_opts_t *opts,
                         render_file_t **files, size_t *nfiles, buf_t *err);

render_limits_t render_limits_resolve(const render_limits_t *l) {
  render_limits_t r = l ? *l : (render_limits_t){0};
  if (!r.max_memory) r.max_memory = RENDER_DEFAULT_MAX_MEMORY;
  if (!r.max_output) r.max_output = RENDER_DEFAULT_MAX_OUTPUT;
  if (!r.max_time_ms) r.max_time_ms = RENDER_DEFAULT_MAX_TIME_MS;
  if (r.max_depth <= 0) r.max_depth = RENDER_DEFAULT_MAX_DEPTH;
  return r;
}

void render_size_text(buf_t *out, size_t n) {
  if (n && n % ((size_t)1 << 30) == 0) buf_printf(out, "%zu GiB", n >> 30);
  else if (n && n % ((size_t)1 << 20) == 0) buf_printf(out, "%zu MiB", n >> 20);
  else if (n && n % 1024 == 0) buf_printf(out, "%zu KiB", n >> 10);
  else buf_printf(out, "%zu bytes", n);
}

/* "render budget exceeded: output larger than 64 MiB (limit --max-render-output) at FILE:LINE" */
static void render__budget_error(const render__state_t *st, int kind, const char *where, buf_t *err) {
  buf_reset(err);
  buf_puts(err, "render budget exceeded: ");
  if (kind == TPL_BUDGET_TIME) {
    if (st->lim.max_time_ms % 1000 == 0) buf_printf(err, "time longer than %llu s", (unsigned long long)(st->lim.max_time_ms / 1000));
    else buf_printf(err, "time longer than %llu ms", (unsigned long long)st->lim.max_time_ms);
    buf_puts(err, " (limit --max-render-time)");
  } else if (kind == TPL_BUDGET_OUTPUT) {
    buf_puts(err, "output larger than ");
    render_size_text(err, st->lim.max_output);
    buf_puts(err, " (limit --max-render-output)");
  } else {
    buf_puts(err, "memory larger than ");
    render_size_text(err, st->lim.max_memory);
    buf_puts(err, " (limit --max-render-memory)");
  }
  if (where && *where) buf_printf(err, " at %s", where);
  else buf_puts(err, " while building the templates' values");
}

int render_chart(const chart_t *c, const cJSON *values, const render_opts_t *opts, render_file_t **files,
                 size_t *nfiles, buf_t *err) {
  return render__chart(c, values, NULL, opts, files, nfiles, err);
}

int render_chart_take(const chart_t *c, cJSON *values, const render_opts_t *opts, render_file_t **files,
                      size_t *nfiles, buf_t *err) {
  return render__chart(c, values, values, opts, files, nfiles, err);
}

/* owned (when not NULL) is values, deleted as soon as the template values are built from it:
 * for big values that halves the peak memory. */
static int render__chart(const chart_t *c, const cJSON *values, cJSON *owned, const render_opts_t *opts,
                         render_file_t **files, size_t *nfiles, buf_t *err) {
  *files = NULL;
  *nfiles = 0;
  render_opts_t def = {0};
  const render_opts_t *o = opts ? opts : &def;
  render_limits_t lim = render_limits_resolve(&o->limits);
  uint64_t start_ns = tpl_now_ns();
  tpl_arena_t *a = tpl_arena_new(lim.max_memory);
  tpl_funcs_t *funcs = tpl_funcs_new();
  render__state_t *st = calloc(1, sizeof *st);
  if (st) {
    st->helm.lookup = o->lookup;
    st->helm.lookup_ctx = o->lookup_ctx;
  }
  tpl_set_t *set = NULL;
  render__build_t b = {0};
  render__src_t *srcs = NULL;
  bool *lazy = NULL;
  render__probes_t probes = {.w = o->worker}; /* files parsed on the helper */
  tpl_set_t **kept = NULL; /* overlays that must outlive their template */
  size_t nkept = 0;
  render_file_t *outv = NULL;
  size_t nout = 0;
  int rc = 0;
  if (!a || !funcs || !st || sprig_funcs_add(funcs) || tpl_helm_funcs_add(funcs) || tpl_funcs_add(funcs, render__tpl_func, 1)) {
    rc = RENDER_ENOMEM;
    goto done;
  }
  st->lim = lim;
  st->budget.max_output = lim.max_output;
  st->budget.deadline_ns = start_ns + lim.max_time_ms * 1000000u;
  b.a = a;
  b.release = tpl_value_map_new(a, TPL_ELEM_ANY);
  if (b.release.kind != TPL_MAP) {
    rc = RENDER_ENOMEM;
    goto done;
  }
  if (render__set(a, b.release, "Name", render__str(a, o->release_name ? o->release_name : "release-name")) ||
      render__set(a, b.release, "Namespace", render__str(a, o->namespace ? o->namespace : "default")) ||
      render__set(a, b.release, "IsUpgrade", tpl_value_bool(o->is_upgrade)) ||
      render__set(a, b.release, "IsInstall", tpl_value_bool(!o->is_upgrade)) ||
      render__set(a, b.release, "Revision", tpl_value_int(o->revision ? o->revision : 1)) ||
      render__set(a, b.release, "Service", tpl_value_str("Helm"))) {
    rc = RENDER_ENOMEM;
    goto done;
  }
  if ((rc = render__caps_value(a, o, NULL, &b.caps, err))) goto done;
  render__keys_t keys = STRSET_INIT;
  tpl_value_t vals = owned ? render__from_json_take(a, owned, &keys) : render__from_json(a, values);
  strset_free(&keys);
  bool took = owned != NULL;
  cJSON_Delete(owned);
  owned = NULL;
#ifdef __GLIBC__
  /* The values' cJSON tree was freed node by node while the template copy grew in arena chunks:
   * give the free pages in between back (big values would otherwise keep them in the RSS). */
  if (took && tpl_arena_used(a) > ((size_t)4 << 20)) malloc_trim(0);
#else
  (void)took;
#endif
  if (vals.kind != TPL_MAP) vals = tpl_value_map_new(a, TPL_ELEM_ANY);
  if (vals.kind != TPL_MAP) {
    rc = RENDER_ENOMEM;
    goto done;
  }
  vals.iface = 0;
  tpl_value_t top;
  if ((rc = render__collect(&b, c, vals, &top))) goto done;
  if (b.n) qsort(b.t, b.n, sizeof *b.t, render__cmp_tmpl);
  srcs = calloc(b.n + 1, sizeof *srcs);
  set = tpl_set_new(funcs);
  if (!srcs || !set) {
    rc = RENDER_ENOMEM;
    goto done;
  }
  st->funcs = funcs;
  st->srcs = srcs;
  st->nsrcs = b.n;
  st->mk = o->strict ? TPL_MISSINGKEY_ERROR : TPL_MISSINGKEY_ZERO;
  buf_t perr = BUF_INIT;
  lazy = calloc(b.n + 1, sizeof *lazy);
  if (o->worker) probes.v = calloc(b.n + 1, sizeof *probes.v);
  probes.n = b.n;
  if (!lazy || (o->worker && !probes.v)) {
    rc = RENDER_ENOMEM;
    goto done;
  }
  for (size_t i = 0; i < b.n; i++) {
    srcs[i].name = b.t[i].name;
    srcs[i].text = b.t[i].file->data;
    srcs[i].len = b.t[i].file->len;
    buf_reset(&perr);
    int r = 0;
    const char *base = strrchr(b.t[i].name, '/');
    base = base ? base + 1 : b.t[i].name;
    if (base[0] != '_' && probes.v && !render__may_define(b.t[i].file->data, b.t[i].file->len)) {
      render__probe_t *pr = &probes.v[i]; /* parsed on the helper when its turn comes */
      pr->funcs = funcs;
      pr->name = b.t[i].name;
      pr->text = b.t[i].file->data;
      pr->len = b.t[i].file->len;
      lazy[i] = true;
      continue;
    }
    if (base[0] != '_') {
      /* Parsed on its own first (the parser consults nothing else of the set): a file that defines
       * no other template is parsed again only when it runs. */
      tpl_set_t *probe = tpl_set_overlay(set);
      if (!probe) {
        rc = RENDER_ENOMEM;
        buf_free(&perr);
        goto done;
      }
      r = tpl_set_parse(probe, b.t[i].name, b.t[i].file->data, b.t[i].file->len, &perr);
      lazy[i] = r == 0 && tpl_set_count(probe) == 1;
      tpl_set_free(probe);
    }
    if (!r && !lazy[i]) r = tpl_set_parse(set, b.t[i].name, b.t[i].file->data, b.t[i].file->len, &perr);
    if (r) {
      if (r == TPL_ENOMEM) rc = RENDER_ENOMEM;
      else if (!(rc = render__probe_error(&probes, i, err))) { /* one before it comes first */
        render__parse_error(b.t[i].name, perr.data ? perr.data : "", err);
        rc = RENDER_EINVAL;
      }
      buf_free(&perr);
      goto done;
    }
  }
  buf_free(&perr);
  /* A lazy file whose name a define also uses: Go keeps whichever came last (unless empty), so
   * all are parsed into the set in order then, as without laziness. */
  for (size_t i = 0; i < b.n; i++)
    if (lazy[i] && tpl_set_has(set, b.t[i].name)) {
      if ((rc = render__probe_error(&probes, b.n, err))) goto done; /* all must parse */
      render__probes_free(&probes); /* all parsed into the set now */
      tpl_set_free(set);
      if (!(set = tpl_set_new(funcs))) {
        rc = RENDER_ENOMEM;
        goto done;
      }
      for (size_t k = 0; k < b.n; k++) {
        lazy[k] = false;
        if (tpl_set_parse(set, b.t[k].name, b.t[k].file->data, b.t[k].file->len, NULL)) {
          rc = RENDER_ENOMEM; /* it parsed before */
          goto done;
        }
      }
      break;
    }
  st->lazy = lazy;
  st->set = set;
  outv = calloc(b.n + 1, sizeof *outv);
  if (!outv) {
    rc = RENDER_ENOMEM;
    goto done;
  }
  for (size_t i = 0; i < b.n; i++) {
    const char *base = strrchr(b.t[i].name, '/');
    base = base ? base + 1 : b.t[i].name;
    if (base[0] == '_') continue;
    tpl_value_t tm = tpl_value_map_new(a, TPL_ELEM_ANY);
    if (tm.kind != TPL_MAP || render__set(a, tm, "Name", render__str(a, b.t[i].name)) ||
        render__set(a, tm, "BasePath", render__str(a, b.t[i].base_path)) || render__set(a, b.t[i].dot, "Template", tm)) {
      rc = RENDER_ENOMEM;
      goto done;
    }
    if (tpl_budget_check(&st->budget)) { /* out of time before this template */
      if (!st->budget.where[0]) snprintf(st->budget.where, sizeof st->budget.where, "%s", b.t[i].name);
      rc = RENDER_ELIMIT;
      goto done;
    }
    buf_t out = BUF_INIT, eb = BUF_INIT;
    tpl_exec_opts_t eo = {.missingkey = st->mk, .udata = st, .resolve = render__resolve, .helper = o->worker,
                          .budget = &st->budget, .max_output = lim.max_output, .max_depth = lim.max_depth};
    /* What the template makes is given back once its text is out, unless it wrote into a map or
     * list that outlives it (`set` on .Values, ...): then the arena keeps it all. Between templates
     * include's nesting counts are all zero, so the names they point to are dropped as well. */
    st->helm.ninc = 0;
    bool from_helper = false; /* its set was made there: freed there too (no waits on its malloc arena) */
    if (lazy[i] && probes.v && probes.v[i].name) {
      /* its parse from the helper, which goes on with the next files */
      render__probe_ahead(&probes);
      render__probe_wait(&probes, i);
      if (probes.v[i].r) {
        buf_free(&out);
        buf_free(&eb);
        rc = render__probe_error(&probes, i + 1, err);
        goto done;
      }
      st->ov = probes.v[i].set;
      probes.v[i].set = NULL;
      probes.ahead--;
      tpl_set_attach(st->ov, set);
      from_helper = true;
    } else if (!(st->ov = tpl_set_overlay(set)) ||
               (lazy[i] && tpl_set_parse(st->ov, b.t[i].name, b.t[i].file->data, b.t[i].file->len, NULL))) {
      tpl_set_free(st->ov);
      st->ov = NULL;
      buf_free(&out);
      buf_free(&eb);
      rc = RENDER_ENOMEM; /* it parsed before */
      goto done;
    }
    tpl_arena_mark_t mark = tpl_arena_mark(a);
    int r = tpl_set_execute(st->ov, b.t[i].name, b.t[i].dot, a, &eo, &out, &eb);
    if (tpl_arena_release(a, &mark)) {
      if (!from_helper || worker_post(o->worker, render__set_free_job, st->ov) < 0) tpl_set_free(st->ov);
    } else {
      /* The template wrote into values that outlive it: they may hold strings of its parse tree,
       * so the overlay stays until the end. */
      tpl_set_t **nk = realloc(kept, (nkept + 1) * sizeof *kept);
      if (!nk) {
        tpl_set_free(st->ov);
        st->ov = NULL;
        buf_free(&out);
        buf_free(&eb);
        rc = RENDER_ENOMEM;
        goto done;
      }
      kept = nk;
      kept[nkept++] = st->ov;
    }
    st->ov = NULL;
    if (r) {
      if ((r == TPL_ENOMEM || r == TPL_ELIMIT) && !st->budget.where[0])
        snprintf(st->budget.where, sizeof st->budget.where, "%s", b.t[i].name);
      if (r == TPL_ENOMEM) rc = RENDER_ENOMEM;
      else if (!(rc = render__probe_error(&probes, b.n, err)) && (st->budget.hit || tpl_arena_over_limit(a)))
        rc = RENDER_ELIMIT; /* reported below */
      else if (!rc) { /* parse errors come first */
        render__exec_error(b.t[i].name, eb.data ? eb.data : "", err);
        rc = RENDER_EINVAL;
      }
      buf_free(&out);
      buf_free(&eb);
      goto done;
    }
    buf_free(&eb);
    /* strings.ReplaceAll(text, "<no value>", ""), in place (the text only shrinks), then the
     * buffer cut to its length. */
    if (buf_reserve(&out, 0)) {
      buf_free(&out);
      rc = RENDER_ENOMEM;
      goto done;
    }
    size_t w = 0;
    for (size_t k = 0; k < out.len;) {
      const char *nv = memmem(out.data + k, out.len - k, "<no value>", 10);
      size_t run = nv ? (size_t)(nv - out.data) - k : out.len - k;
      if (w != k) memmove(out.data + w, out.data + k, run);
      w += run;
      k += run + (nv ? 10 : 0);
    }
    out.data[w] = 0;
    out.len = w;
    char *text = realloc(out.data, w + 1);
    if (text) out.data = text, out.cap = w + 1;
    outv[nout].name = strdup(b.t[i].name);
    outv[nout].len = out.len;
    outv[nout].text = buf_steal(&out);
    if (!outv[nout].name) {
      free(outv[nout].text);
      rc = RENDER_ENOMEM;
      goto done;
    }
    nout++;
    if (o->on_file) {
      if (o->on_file(o->on_file_ctx, outv[nout - 1].name, &outv[nout - 1].text, outv[nout - 1].len)) {
        rc = RENDER_ENOMEM;
        goto done;
      }
      if (!outv[nout - 1].text) outv[nout - 1].len = 0;
    }
  }
done:
  render__probes_free(&probes); /* first: no parse may still read what is freed below */
  if ((rc == RENDER_ENOMEM || rc == RENDER_ELIMIT) && st && a && (st->budget.hit || tpl_arena_over_limit(a))) {
    rc = RENDER_ELIMIT;
    render__budget_error(st, st->budget.hit ? st->budget.hit : TPL_BUDGET_MEMORY, st->budget.where, err);
  } else if (rc == RENDER_ENOMEM || rc == RENDER_ELIMIT) {
    rc = RENDER_ENOMEM;
    buf_reset(err);
    buf_puts(err, "out of memory");
  }
  if (rc) {
    render_files_free(outv, nout);
  } else {
    *files = outv;
    *nfiles = nout;
  }
  if (st) {
    for (size_t i = 0; i < st->ncache; i++) {
      free(st->cache[i].text);
      tpl_set_free(st->cache[i].set);
    }
    for (size_t i = 0; i < st->nretired; i++) tpl_set_free(st->retired[i]);
    free(st->retired);
    free(st);
  }
  for (size_t i = 0; i < b.n; i++) {
    free(b.t[i].name);
    free(b.t[i].base_path);
  }
  free(b.t);
  free(srcs);
  free(lazy);
  for (size_t i = 0; i < nkept; i++) tpl_set_free(kept[i]);
  free(kept);
  tpl_set_free(set);
  tpl_funcs_free(funcs);
  tpl_arena_free(a);
  cJSON_Delete(owned); /* when failing before the values were converted */
  return rc;
}
