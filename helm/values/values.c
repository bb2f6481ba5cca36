#include "base/err.h"
#include "helm/values/values.h"
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/yaml.h"
#include "helm/values/schema.h"
#include "helm/template/tpl.h"


/* Replaces (or adds) key in obj with item, taking ownership of item. */
static void values__set(cJSON *obj, const char *key, cJSON *item) {
  if (cJSON_GetObjectItemCaseSensitive(obj, key))
    cJSON_ReplaceItemInObjectCaseSensitive(obj, key, item);
  else
    cJSON_AddItemToObject(obj, key, item);
}

/* ---- values.yaml ---------------------------------------------------------------- */

int values_merge_maps(cJSON *a, const cJSON *b) {
  if (!cJSON_IsObject(b)) return 0;
  for (const cJSON *kv = b->child; kv; kv = kv->next) {
    cJSON *av = cJSON_GetObjectItemCaseSensitive(a, kv->string);
    if (cJSON_IsObject(kv) && cJSON_IsObject(av)) {
      if (values_merge_maps(av, kv)) return VALUES_ENOMEM;
      continue;
    }
    cJSON *c = cJSON_Duplicate(kv, 1);
    if (!c) return VALUES_ENOMEM;
    values__set(a, kv->string, c);
  }
  return 0;
}

int values_merge_maps_take(cJSON *a, cJSON *b) {
  int rc = 0;
  if (cJSON_IsObject(b))
    while (b->child && !rc) {
      cJSON *kv = cJSON_DetachItemViaPointer(b, b->child);
      cJSON *av = cJSON_GetObjectItemCaseSensitive(a, kv->string);
      if (cJSON_IsObject(kv) && cJSON_IsObject(av)) {
        rc = values_merge_maps_take(av, kv);
        continue;
      }
      if (av) cJSON_ReplaceItemViaPointer(a, av, kv);
      else cJSON_AddItemToArray(a, kv); /* keeps kv->string as the key */
    }
  cJSON_Delete(b);
  return rc;
}

/* Parses one document into a map as sigs.k8s.io/yaml.Unmarshal(doc, &map[string]any{}) does. */
static int values__parse_doc(const char *doc, size_t n, cJSON **out, char *err, size_t errlen) {
  yaml_opts_t o = {.flags = YAML_OPT_DUP_LAST | YAML_OPT_NO_NUMBER_TEXT};
  yaml_error_t ye;
  cJSON *j = NULL;
  int rc = yaml_to_json(doc, n, &o, &j, &ye);
  if (rc == -ENOMEM) return VALUES_ENOMEM;
  if (rc) {
    char m[400];
    values_yaml_error(&ye, m, sizeof m);
    return base_errf(err, errlen, VALUES_EINVAL, "error converting YAML to JSON: %s", m);
  }
  if (!cJSON_IsObject(j) && !cJSON_IsNull(j)) {
    rc = base_errf(err, errlen, VALUES_EINVAL,
                      "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal %s into Go value of type map[string]interface {}",
                      yaml_json_kind(j));
    cJSON_Delete(j);
    return rc;
  }
  *out = j;
  return 0;
}

int values_parse_yaml(const char *text, size_t len, cJSON **out, char *err, size_t errlen) {
  *out = cJSON_CreateObject();
  if (!*out) return VALUES_ENOMEM;
  /* k8s.io/apimachinery's YAMLReader: documents end at lines starting with "---". */
  size_t pos = 0, start = 0;
  int rc = 0;
  char msg[600];
  while (!rc) {
    size_t end = len; /* end of the current document */
    int last = 1;
    while (pos < len) {
      const char *nl = memchr(text + pos, '\n', len - pos);
      size_t eol = nl ? (size_t)(nl - text) : len;
      size_t next = eol < len ? eol + 1 : len;
      if (eol - pos >= 3 && !memcmp(text + pos, "---", 3)) {
        const char *t = text + pos + 3, *e = text + eol;
        while (t < e && (*t == ' ' || *t == '\t' || *t == '\r' || *t == '\v' || *t == '\f')) t++;
        while (e > t && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\r')) e--;
        if (t < e && *t != '#') {
          rc = base_errf(err, errlen, VALUES_EINVAL,
                            "error reading yaml document: invalid Yaml document separator: %.*s", (int)(e - t), t);
          break;
        }
        end = pos;
        pos = next;
        last = 0;
        break;
      }
      pos = next;
    }
    if (rc) break;
    if (end > start) {
      cJSON *doc = NULL;
      rc = values__parse_doc(text + start, end - start, &doc, msg, sizeof msg);
      if (rc == VALUES_EINVAL) base_errf(err, errlen, rc, "cannot unmarshal yaml document: %s", msg);
      if (!rc && cJSON_IsObject(doc) && !(*out)->child) {
        cJSON_Delete(*out); /* the first document: taken as it is rather than copied */
        *out = doc;
        doc = NULL;
      } else if (!rc && cJSON_IsObject(doc) && values_merge_maps(*out, doc)) rc = VALUES_ENOMEM;
      cJSON_Delete(doc);
    }
    start = pos;
    if (last) break;
  }
  if (rc) {
    cJSON_Delete(*out);
    *out = NULL;
    if (rc == VALUES_ENOMEM) base_errf(err, errlen, rc, "out of memory");
  }
  return rc;
}

/* ---- coalescing ------------------------------------------------------------------- */

cJSON *values_table(const cJSON *v, const char *path) {
  const cJSON *cur = v;
  const char *p = path;
  char key[512];
  while (*p) {
    const char *dot = strchr(p, '.');
    size_t n = dot ? (size_t)(dot - p) : strlen(p);
    if (n >= sizeof key) return NULL;
    memcpy(key, p, n);
    key[n] = 0;
    if (!cJSON_IsObject(cur)) return NULL;
    cur = cJSON_GetObjectItemCaseSensitive(cur, key);
    if (!cur) return NULL;
    p += n;
    if (*p == '.') p++;
  }
  return cJSON_IsObject(cur) ? (cJSON *)cur : NULL;
}

static void values__clean_nil(cJSON *m) {
  cJSON *kv = m->child;
  while (kv) {
    cJSON *next = kv->next;
    if (cJSON_IsNull(kv))
      cJSON_Delete(cJSON_DetachItemViaPointer(m, kv));
    else if (cJSON_IsObject(kv))
      values__clean_nil(kv);
    kv = next;
  }
}

/* An index of an object's members by key, for objects with many (cJSON looks keys up in a list). */
typedef struct {
  cJSON **slot;
  size_t cap; /* a power of two; 0: no index, look up in the list */
} values__index_t;

static uint64_t values__hash(const char *k) {
  uint64_t h = 1469598103934665603ull;
  for (; *k; k++) h = (h ^ (unsigned char)*k) * 1099511628211ull;
  return h;
}

/* Indexes obj when it has more than a few members (first of equal keys wins, as
 * cJSON_GetObjectItemCaseSensitive). Out of memory: no index (lookups go through the list). */
static void values__index(values__index_t *ix, const cJSON *obj) {
  ix->slot = NULL;
  ix->cap = 0;
  size_t n = 0;
  for (const cJSON *c = obj->child; c; c = c->next) n++;
  if (n <= 8) return;
  size_t cap = 16;
  while (cap < 2 * n) cap *= 2;
  if (!(ix->slot = calloc(cap, sizeof *ix->slot))) return;
  ix->cap = cap;
  for (cJSON *c = obj->child; c; c = c->next) {
    if (!c->string) continue;
    size_t i = values__hash(c->string) & (cap - 1);
    while (ix->slot[i] && strcmp(ix->slot[i]->string, c->string)) i = (i + 1) & (cap - 1);
    if (!ix->slot[i]) ix->slot[i] = c;
  }
}

static cJSON *values__find(const values__index_t *ix, cJSON *obj, const char *key) {
  if (!ix->cap) return cJSON_GetObjectItemCaseSensitive(obj, key);
  for (size_t i = values__hash(key) & (ix->cap - 1); ix->slot[i]; i = (i + 1) & (ix->cap - 1))
    if (!strcmp(ix->slot[i]->string, key)) return ix->slot[i];
  return NULL;
}

static void values__fmt(buf_t *b, const cJSON *c, int depth, bool t);

/* Where a coalesce reports its warnings, and the dotted name of the table it is in. */
typedef struct values__ctx_s {
  const values_warn_t *w;
  buf_t key;
} values__ctx_t;

static void values__warn(values__ctx_t *x, const char *fmt, const char *key, const cJSON *val) {
  if (!x || !x->w || !x->w->fn) return;
  buf_t m = BUF_INIT, v = BUF_INIT;
  if (val) values__fmt(&v, val, 0, false);
  buf_printf(&m, fmt, key, v.data ? v.data : "");
  if (m.data) x->w->fn(x->w->ud, "INFO", m.data);
  buf_free(&m);
  buf_free(&v);
}

/* Appends ".name" (or "name" at the top) to x->key; returns the length to cut back to. */
static size_t values__key_push(values__ctx_t *x, const char *name) {
  if (!x) return 0;
  size_t at = x->key.len;
  if (at) buf_putc(&x->key, '.');
  buf_puts(&x->key, name);
  return at;
}

static void values__key_pop(values__ctx_t *x, size_t at) {
  if (!x) return;
  x->key.len = at;
  if (x->key.data) x->key.data[at] = 0;
}

static int values__coalesce_tables_x(cJSON *dst, cJSON *src, bool merge, values__ctx_t *x);

static int values__coalesce_tables(cJSON *dst, cJSON *src, bool merge) {
  return values__coalesce_tables_x(dst, src, merge, NULL);
}

static int values__coalesce_tables_x(cJSON *dst, cJSON *src, bool merge, values__ctx_t *x) {
  if (!src || !dst) return 0;
  size_t n = (size_t)cJSON_GetArraySize(src);
  /* which of src's members were non-null before dst's nulls are copied in: by position (a null
   * copied over a member replaces it in place; new ones go to the end) */
  bool *nonnil = calloc(n + 1, sizeof *nonnil);
  if (!nonnil) return VALUES_ENOMEM;
  size_t k = 0;
  int rc = 0;
  for (cJSON *kv = src->child; kv; kv = kv->next) nonnil[k++] = !cJSON_IsNull(kv);
  for (cJSON *kv = dst->child; kv && !rc; kv = kv->next) {
    if (!cJSON_IsNull(kv)) continue;
    cJSON *nul = cJSON_CreateNull();
    if (!nul) rc = VALUES_ENOMEM;
    else values__set(src, kv->string, nul);
  }
  /* dst's members are looked up by src's keys, which are distinct: a member deleted or added below
   * is not looked up again, so the index made now stays right */
  values__index_t ix;
  values__index(&ix, dst);
  size_t pos = 0;
  for (cJSON *kv = src->child; kv && !rc; kv = kv->next, pos++) {
    cJSON *dv = values__find(&ix, dst, kv->string);
    /* a null in dst deletes the key only when src had a value there (the user
     * removing a default); over a null or missing default it stays null */
    int orig_nonnil = pos < k && nonnil[pos];
    if (dv && !merge && cJSON_IsNull(dv) && orig_nonnil) {
      cJSON_Delete(cJSON_DetachItemViaPointer(dst, dv));
    } else if (!dv) {
      cJSON *c = cJSON_Duplicate(kv, 1);
      if (!c) rc = VALUES_ENOMEM;
      else cJSON_AddItemToObject(dst, kv->string, c);
    } else if (cJSON_IsObject(kv)) {
      size_t at = values__key_push(x, kv->string);
      if (cJSON_IsObject(dv)) rc = values__coalesce_tables_x(dv, kv, merge, x);
      else values__warn(x, "warning: cannot overwrite table with non table for %s (%s)", x ? x->key.data : "", kv);
      values__key_pop(x, at);
    } else if (cJSON_IsObject(dv) && !cJSON_IsNull(kv)) {
      size_t at = values__key_push(x, kv->string);
      values__warn(x, "warning: destination for %s is a table. Ignoring non-table value (%s)", x ? x->key.data : "", kv);
      values__key_pop(x, at);
    }
  }
  free(ix.slot);
  free(nonnil);
  return rc;
}

int values_coalesce_tables(cJSON *dst, cJSON *src, bool merge) { return values__coalesce_tables(dst, src, merge); }

static int values__child_is_dep(const chart_t *c, const char *key) {
  for (size_t i = 0; i < c->ndeps; i++)
    if (c->deps[i]->meta.name && !strcmp(c->deps[i]->meta.name, key)) return 1;
  return 0;
}

static int values__coalesce_values(const chart_t *c, cJSON *v, bool merge, values__ctx_t *x) {
  cJSON *vc = cJSON_Duplicate(c->values, 1);
  if (!vc) return VALUES_ENOMEM;
  int rc = 0;
  while (vc->child && !rc) {
    cJSON *val = cJSON_DetachItemViaPointer(vc, vc->child);
    cJSON *value = cJSON_GetObjectItemCaseSensitive(v, val->string);
    if (value) {
      if (cJSON_IsNull(value) && !merge) {
        cJSON_Delete(cJSON_DetachItemViaPointer(v, value));
      } else if (cJSON_IsObject(value)) {
        size_t at = values__key_push(x, val->string);
        if (cJSON_IsObject(val)) {
          bool m2 = merge || values__child_is_dep(c, val->string);
          if (!m2) values__clean_nil(val);
          rc = values__coalesce_tables_x(value, val, m2, x);
        } else if (!cJSON_IsNull(val)) {
          values__warn(x, "warning: skipped value for %s: Not a table.", x ? x->key.data : "", NULL);
        }
        values__key_pop(x, at);
      }
      cJSON_Delete(val);
    } else {
      if (!merge) {
        if (cJSON_IsNull(val)) {
          cJSON_Delete(val);
          continue;
        }
        if (cJSON_IsObject(val)) values__clean_nil(val);
      }
      cJSON_AddItemToObject(v, val->string, val); /* cJSON copies the key; val keeps its own string */
    }
  }
  cJSON_Delete(vc);
  return rc;
}

static int values__coalesce_globals(cJSON *dest, const cJSON *src, values__ctx_t *x) {
  cJSON *dg = cJSON_GetObjectItemCaseSensitive(dest, "global");
  const cJSON *sg = cJSON_GetObjectItemCaseSensitive(src, "global");
  if (dg && !cJSON_IsObject(dg)) {
    values__warn(x, "warning: skipping globals because destination %s is not a table.", "global", NULL);
    return 0;
  }
  if (sg && !cJSON_IsObject(sg)) {
    values__warn(x, "warning: skipping globals because source %s is not a table.", "global", NULL);
    return 0;
  }
  if (!dg) {
    if (!(dg = cJSON_CreateObject())) return VALUES_ENOMEM;
    cJSON_AddItemToObject(dest, "global", dg);
  }
  if (!sg) return 0;
  for (const cJSON *kv = sg->child; kv; kv = kv->next) {
    cJSON *dv = cJSON_GetObjectItemCaseSensitive(dg, kv->string);
    if (cJSON_IsObject(kv)) {
      cJSON *vv = cJSON_Duplicate(kv, 1);
      if (!vv) return VALUES_ENOMEM;
      if (!dv) {
        cJSON_AddItemToObject(dg, kv->string, vv);
      } else if (!cJSON_IsObject(dv)) {
        cJSON_Delete(vv);
        buf_t q = BUF_INIT;
        tpl_fmt_quote(&q, kv->string, strlen(kv->string));
        values__warn(x, "Conflict: cannot merge map onto non-map for %s. Skipping.", q.data ? q.data : "", NULL);
        buf_free(&q);
      } else {
        size_t at = values__key_push(x, kv->string);
        int rc = values__coalesce_tables_x(vv, dv, true, x);
        values__key_pop(x, at);
        if (rc) {
          cJSON_Delete(vv);
          return VALUES_ENOMEM;
        }
        values__set(dg, kv->string, vv);
      }
    } else if (dv && cJSON_IsObject(dv)) {
      values__warn(x, "key %s is table. Skipping", kv->string, NULL);
    } else {
      cJSON *c = cJSON_Duplicate(kv, 1);
      if (!c) return VALUES_ENOMEM;
      values__set(dg, kv->string, c);
    }
  }
  return 0;
}

/* Go's %v (t false) or %t (t true) of a decoded value: for %t bools as themselves, other scalars
 * as %!t(type=value); maps as map[k:v ...] with sorted keys (formatted with the verb too), lists as
 * [a b], nil as <nil> (%!t(<nil>) at the top for %t). */
static void values__fmt(buf_t *b, const cJSON *c, int depth, bool t) {
  if (depth > 100) {
    buf_puts(b, "...");
  } else if (cJSON_IsBool(c)) {
    buf_puts(b, cJSON_IsTrue(c) ? "true" : "false");
  } else if (cJSON_IsString(c)) {
    buf_printf(b, t ? "%%!t(string=%s)" : "%s", c->valuestring);
  } else if (cJSON_IsRaw(c)) {
    buf_printf(b, t ? "%%!t(int64=%s)" : "%s", c->valuestring);
  } else if (cJSON_IsNumber(c)) {
    if (t) buf_puts(b, "%!t(float64=");
    tpl_fmt_float(b, c->valuedouble, 'g', -1);
    if (t) buf_putc(b, ')');
  } else if (cJSON_IsArray(c)) {
    buf_putc(b, '[');
    for (const cJSON *e = c->child; e; e = e->next) {
      if (e != c->child) buf_putc(b, ' ');
      values__fmt(b, e, depth + 1, t);
    }
    buf_putc(b, ']');
  } else if (cJSON_IsObject(c)) {
    buf_puts(b, "map[");
    const char *last = NULL;
    /* members in key order without sorting the object: the next larger key each time */
    for (;;) {
      const cJSON *next = NULL;
      for (const cJSON *e = c->child; e; e = e->next)
        if ((!last || strcmp(e->string, last) > 0) && (!next || strcmp(e->string, next->string) < 0)) next = e;
      if (!next) break;
      if (last) buf_putc(b, ' ');
      buf_printf(b, t ? "%%!t(string=%s):" : "%s:", next->string);
      values__fmt(b, next, depth + 1, t);
      last = next->string;
    }
    buf_putc(b, ']');
  } else {
    buf_puts(b, depth || !t ? "<nil>" : "%!t(<nil>)"); /* a nil element prints as <nil> */
  }
}

static void values__type_mismatch(char *err, size_t errlen, const char *name, const cJSON *c) {
  buf_t b = BUF_INIT;
  values__fmt(&b, c, 0, true);
  base_errf(err, errlen, VALUES_EINVAL, "type mismatch on %s: %s", name, b.data ? b.data : "");
  buf_free(&b);
}

/* Helm's coalesce(chart, dest, prefix): x->key holds the prefix (the names of the charts above). */
static int values__coalesce(const chart_t *c, cJSON *dest, bool merge, values__ctx_t *x, char *err, size_t errlen) {
  size_t at = values__key_push(x, c->meta.name ? c->meta.name : "");
  int rc = values__coalesce_values(c, dest, merge, x);
  for (size_t i = 0; i < c->ndeps && !rc; i++) {
    const chart_t *sub = c->deps[i];
    const char *name = sub->meta.name ? sub->meta.name : "";
    cJSON *cur = cJSON_GetObjectItemCaseSensitive(dest, name);
    if (!cur) {
      if (!(cur = cJSON_CreateObject())) rc = VALUES_ENOMEM;
      else cJSON_AddItemToObject(dest, name, cur);
    } else if (!cJSON_IsObject(cur)) {
      values__type_mismatch(err, errlen, name, cur);
      rc = VALUES_EINVAL;
    }
    if (!rc) rc = values__coalesce_globals(cur, dest, x);
    if (!rc) rc = values__coalesce(sub, cur, merge, x, err, errlen);
  }
  values__key_pop(x, at);
  return rc;
}

static int values__keycmp(const void *a, const void *b) {
  return strcmp((*(cJSON *const *)a)->string, (*(cJSON *const *)b)->string);
}

/* Orders every object's members by key (byte order, as Go's sort.Strings): the order the template
 * engine visits map keys in, so it finds them sorted instead of sorting at every toJson, range or
 * print. Nothing reads the members' order otherwise (Go maps have none). */
static int values__sort_keys(cJSON *v) {
  if (!cJSON_IsObject(v) && !cJSON_IsArray(v)) return 0;
  size_t n = 0;
  int sorted = 1;
  for (cJSON *c = v->child; c; c = c->next) {
    if (values__sort_keys(c)) return VALUES_ENOMEM;
    if (cJSON_IsObject(v) && c->next && strcmp(c->string, c->next->string) > 0) sorted = 0;
    n++;
  }
  if (sorted || n < 2) return 0;
  if (n <= 16) {
    /* few members (most objects): an insertion sort of the list itself, without an array */
    cJSON *head = v->child, *done = head, *c = head->next;
    done->next = NULL;
    while (c) {
      cJSON *next = c->next;
      if (strcmp(c->string, head->string) < 0) {
        c->next = head;
        head = c;
      } else {
        cJSON *p = head;
        while (p->next && strcmp(p->next->string, c->string) <= 0) p = p->next;
        c->next = p->next;
        p->next = c;
      }
      c = next;
    }
    cJSON *prev = NULL, *last = head;
    for (cJSON *m = head; m; m = m->next) {
      m->prev = prev;
      prev = last = m;
    }
    head->prev = last; /* cJSON: the first member's prev is the last */
    v->child = head;
    return 0;
  }
  cJSON **a = malloc(n * sizeof *a);
  if (!a) return VALUES_ENOMEM;
  n = 0;
  for (cJSON *c = v->child; c; c = c->next) a[n++] = c;
  qsort(a, n, sizeof *a, values__keycmp);
  for (size_t i = 0; i < n; i++) {
    a[i]->prev = i ? a[i - 1] : a[n - 1]; /* cJSON: the first member's prev is the last */
    a[i]->next = i + 1 < n ? a[i + 1] : NULL;
  }
  v->child = a[0];
  free(a);
  return 0;
}

static int values__run_take(const chart_t *c, cJSON *v, bool merge, const values_warn_t *w, cJSON **out, char *err,
                            size_t errlen) {
  *out = NULL;
  if (!v) return base_errf(err, errlen, VALUES_ENOMEM, "out of memory");
  values__ctx_t x = {w, BUF_INIT};
  int rc = values__coalesce(c, v, merge, w ? &x : NULL, err, errlen);
  buf_free(&x.key);
  if (!rc) rc = values__sort_keys(v);
  if (rc) {
    if (rc == VALUES_ENOMEM) base_errf(err, errlen, rc, "out of memory");
    cJSON_Delete(v);
    *out = NULL;
    return rc;
  }
  *out = v;
  return 0;
}

static int values__run(const chart_t *c, const cJSON *user, bool merge, cJSON **out, char *err, size_t errlen) {
  return values__run_take(c, cJSON_IsObject(user) ? cJSON_Duplicate(user, 1) : cJSON_CreateObject(), merge, NULL, out,
                          err, errlen);
}

int values_coalesce_check(const chart_t *c, const cJSON *user, char *err, size_t errlen) {
  const cJSON *v = cJSON_IsObject(user) ? user : NULL;
  for (size_t i = 0; i < c->ndeps; i++) {
    const char *name = c->deps[i]->meta.name ? c->deps[i]->meta.name : "";
    /* what coalesce_values leaves under the key: the user's value (a null one deleted when the
     * chart has a default for the key, kept otherwise), else the chart's non-null default */
    const cJSON *x = v ? cJSON_GetObjectItemCaseSensitive(v, name) : NULL;
    const cJSON *d = c->values ? cJSON_GetObjectItemCaseSensitive(c->values, name) : NULL;
    const cJSON *cur = x;
    if (x && cJSON_IsNull(x) && d) cur = NULL;
    else if (!x && d && !cJSON_IsNull(d)) cur = d;
    if (cur && !cJSON_IsObject(cur)) {
      values__type_mismatch(err, errlen, name, cur);
      return VALUES_EINVAL;
    }
  }
  return 0;
}

int values_coalesce(const chart_t *c, const cJSON *user, cJSON **out, char *err, size_t errlen) {
  return values__run(c, user, false, out, err, errlen);
}

int values_coalesce_take_warn(const chart_t *c, cJSON *user, cJSON **out, const values_warn_t *w, char *err,
                              size_t errlen) {
  if (!cJSON_IsObject(user)) {
    cJSON_Delete(user);
    user = cJSON_CreateObject();
  }
  return values__run_take(c, user, false, w, out, err, errlen);
}

int values_coalesce_take(const chart_t *c, cJSON *user, cJSON **out, char *err, size_t errlen) {
  return values_coalesce_take_warn(c, user, out, NULL, err, errlen);
}

int values_merge(const chart_t *c, const cJSON *user, cJSON **out, char *err, size_t errlen) {
  return values__run(c, user, true, out, err, errlen);
}

static int values__hexval(char c) {
  return c >= '0' && c <= '9' ? c - '0' : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : -1;
}

/* A schema's documents: file:// URLs name the chart's own files (the schema itself being
 * file:///values.schema.json, as Helm names it), never the host's; http(s) go to the caller's
 * loader. */
typedef struct {
  const chart_t *c;
  const schema_loader_t *net;
} values__loader_t;

static int values__schema_load(void *ctx, const char *url, buf_t *doc, buf_t *err) {
  const values__loader_t *l = ctx;
  if (strncmp(url, "file:", 5)) {
    if (l->net && l->net->load) return l->net->load(l->net->ctx, url, doc, err);
    buf_puts(err, "no URLLoader registered for ");
    tpl_fmt_quote(err, url, strlen(url));
    return SCHEMA_EINVAL;
  }
  /* the URL's path, percent-decoded (net/url's Path, as the library's file loader opens it) */
  const char *p = url + 5;
  if (p[0] == '/' && p[1] == '/') p += 2 + strcspn(p + 2, "/");
  buf_t path = BUF_INIT;
  for (; *p && *p != '?'; p++) {
    int hi, lo;
    if (p[0] == '%' && (hi = values__hexval(p[1])) >= 0 && (lo = values__hexval(p[2])) >= 0) {
      buf_putc(&path, (char)(hi << 4 | lo));
      p += 2;
    } else buf_putc(&path, *p);
  }
  if (buf_putc(&path, 0)) return buf_free(&path), SCHEMA_ENOMEM;
  path.len--;
  const char *name = path.data[0] == '/' ? path.data + 1 : path.data;
  for (size_t i = 0; i < l->c->nfiles; i++)
    if (!strcmp(l->c->files[i].name, name)) {
      int e = buf_append(doc, l->c->files[i].data, l->c->files[i].len);
      buf_free(&path);
      return e ? SCHEMA_ENOMEM : 0;
    }
  buf_printf(err, "open %s: no such file or directory", path.data);
  buf_free(&path);
  return SCHEMA_EINVAL;
}

/* The caller's warnings, through the chart-files loader. */
static void values__schema_warn(void *ctx, const char *msg, const char *key, const char *value) {
  values__loader_t *l = ctx;
  l->net->warn(l->net->ctx, msg, key, value);
}

/* ValidateAgainstSchema: the chart's schema against its values, then each subchart's against
 * values[subchart name] (absent or null: skipped; not a map: reported). */
int values_validate_schema_with(const chart_t *c, const cJSON *values, const schema_loader_t *net, buf_t *err) {
  const char *name = c->meta.name ? c->meta.name : "";
  if (c->schema) {
    buf_t e = BUF_INIT;
    values__loader_t vl = {c, net};
    schema_loader_t ld = {values__schema_load, &vl, net && net->warn ? values__schema_warn : NULL};
    int rc = schema_validate_with(c->schema, c->schema_len, values, &ld, &e);
    if (rc == SCHEMA_ENOMEM) {
      buf_free(&e);
      return VALUES_ENOMEM;
    }
    if (rc) {
      buf_printf(err, "%s:\n", name);
      buf_append(err, e.data ? e.data : "", e.len);
    }
    buf_free(&e);
  }
  for (size_t i = 0; i < c->ndeps; i++) {
    const chart_t *sub = c->deps[i];
    const char *sn = sub->meta.name ? sub->meta.name : "";
    const cJSON *raw = cJSON_IsObject(values) ? cJSON_GetObjectItemCaseSensitive(values, sn) : NULL;
    if (!raw || cJSON_IsNull(raw)) continue;
    if (!cJSON_IsObject(raw)) {
      const char *t = cJSON_IsString(raw) ? "string"
                      : cJSON_IsBool(raw) ? "bool"
                      : cJSON_IsRaw(raw)  ? "int64"
                      : cJSON_IsNumber(raw) ? "float64"
                      : "[]interface {}";
      buf_printf(err, "%s:\ninvalid type for values: expected object (map), got %s\n", sn, t);
      continue;
    }
    int rc = values_validate_schema_with(sub, raw, net, err);
    if (rc) return rc;
  }
  return err->len ? VALUES_EINVAL : 0;
}

int values_validate_schema_buf(const chart_t *c, const cJSON *values, buf_t *err) {
  return values_validate_schema_with(c, values, NULL, err);
}

int values_validate_schema(const chart_t *c, const cJSON *values, char *err, size_t errlen) {
  buf_t b = BUF_INIT;
  int rc = values_validate_schema_buf(c, values, &b);
  if (rc && errlen) snprintf(err, errlen, "%s", rc == VALUES_ENOMEM ? "out of memory" : b.data ? b.data : "");
  buf_free(&b);
  return rc;
}

void values_yaml_error(const struct yaml_error_s *ye, char *out, size_t outlen) {
  static const char *const parser_problems[] = {"did not find expected key", "did not find expected node content",
                                                "did not find expected '-' indicator", "did not find expected ',' or ']'",
                                                "did not find expected ',' or '}'", "did not find expected <document start>",
                                                "found undefined tag handle", "found duplicate %YAML directive",
                                                "found incompatible YAML document", "found duplicate %TAG directive"};
  int parser = 0;
  for (size_t i = 0; i < sizeof parser_problems / sizeof *parser_problems; i++)
    if (!strcmp(ye->problem, parser_problems[i])) parser = 1;
  int pl0 = ye->line - 1, cl0 = ye->context[0] ? ye->context_line - 1 : 0, line = 0;
  if (pl0 > 0) line = pl0 + (parser ? 0 : 1);
  else if (cl0 > 0) line = cl0;
  if (line) snprintf(out, outlen, "yaml: line %d: %s", line, ye->problem);
  else snprintf(out, outlen, "yaml: %s", ye->problem);
}
