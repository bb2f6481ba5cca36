/* Sprig's list and dict functions (list.go, dict.go) with mergo v1.0.1's
 * merge semantics (mutating the destination, as Helm charts rely on). */
#include <math.h>
#include <string.h>

#include "helm/template/sprig_internal.h"

static tpl_value_t new_list(tpl_call_t *c, size_t cap) {
  return tpl_value_list_new(tpl_call_arena(c), TPL_ELEM_ANY, cap);
}

/* reflect.TypeOf(v).Kind() check shared by the list functions: 0 when v is a list. */
static int need_list(tpl_call_t *c, const tpl_value_t *v, const char *fmt) {
  if (v->kind == TPL_NIL || v->kind == TPL_INVALID) return tpl_call_errorf(c, SPRIG_NIL_DEREF);
  if (v->kind == TPL_LIST) return 0;
  char msg[128];
  snprintf(msg, sizeof msg, fmt, sprig__kind_name(v));
  return tpl_call_errorf(c, "%s", msg);
}

static size_t llen(const tpl_value_t *v) { return v->u.list ? v->u.list->len : 0; }
static tpl_value_t litem(const tpl_value_t *v, size_t i) {
  tpl_value_t it = tpl_list_at(v->u.list, i);
  return sprig__elem(v, &it);
}

SPRIG_FN(f_list) {
  tpl_value_t l = new_list(c, n);
  if (l.kind == TPL_INVALID) return TPL_ENOMEM;
  for (size_t i = 0; i < n; i++)
    if (tpl_list_push(tpl_call_arena(c), l.u.list, sprig__arg(&args[i]))) return TPL_ENOMEM;
  *out = l;
  return 0;
}

static int copy_list(tpl_call_t *c, const tpl_value_t *v, size_t extra, tpl_value_t *out) {
  size_t len = llen(v);
  *out = new_list(c, len + extra);
  if (out->kind == TPL_INVALID) return TPL_ENOMEM;
  for (size_t i = 0; i < len; i++)
    if (tpl_list_push(tpl_call_arena(c), out->u.list, litem(v, i))) return TPL_ENOMEM;
  return 0;
}

SPRIG_FN(f_push) {
  tpl_value_t l = sprig__arg(&args[0]);
  int rc = need_list(c, &l, "Cannot push on type %s");
  if (rc) return rc;
  rc = copy_list(c, &l, 1, out);
  if (rc) return rc;
  return tpl_list_push(tpl_call_arena(c), out->u.list, sprig__arg(&args[1]));
}

SPRIG_FN(f_prepend) {
  tpl_value_t l = sprig__arg(&args[0]);
  int rc = need_list(c, &l, "Cannot prepend on type %s");
  if (rc) return rc;
  *out = new_list(c, llen(&l) + 1);
  if (out->kind == TPL_INVALID) return TPL_ENOMEM;
  if (tpl_list_push(tpl_call_arena(c), out->u.list, sprig__arg(&args[1]))) return TPL_ENOMEM;
  for (size_t i = 0; i < llen(&l); i++)
    if (tpl_list_push(tpl_call_arena(c), out->u.list, litem(&l, i))) return TPL_ENOMEM;
  return 0;
}

SPRIG_FN(f_first) {
  tpl_value_t l = sprig__arg(&args[0]);
  int rc = need_list(c, &l, "Cannot find first on type %s");
  if (rc) return rc;
  *out = llen(&l) ? litem(&l, 0) : tpl_value_nil();
  return 0;
}

SPRIG_FN(f_last) {
  tpl_value_t l = sprig__arg(&args[0]);
  int rc = need_list(c, &l, "Cannot find last on type %s");
  if (rc) return rc;
  *out = llen(&l) ? litem(&l, llen(&l) - 1) : tpl_value_nil();
  return 0;
}

static int sub_list(tpl_call_t *c, const tpl_value_t *l, size_t from, size_t to, tpl_value_t *out) {
  *out = new_list(c, to - from);
  if (out->kind == TPL_INVALID) return TPL_ENOMEM;
  for (size_t i = from; i < to; i++)
    if (tpl_list_push(tpl_call_arena(c), out->u.list, litem(l, i))) return TPL_ENOMEM;
  return 0;
}

SPRIG_FN(f_rest) {
  tpl_value_t l = sprig__arg(&args[0]);
  int rc = need_list(c, &l, "Cannot find rest on type %s");
  if (rc) return rc;
  if (!llen(&l)) {
    *out = tpl_value_list_new(tpl_call_arena(c), TPL_ELEM_ANY, 0);
    out->u.list = NULL;
    return 0;
  }
  return sub_list(c, &l, 1, llen(&l), out);
}

SPRIG_FN(f_initial) {
  tpl_value_t l = sprig__arg(&args[0]);
  int rc = need_list(c, &l, "Cannot find initial on type %s");
  if (rc) return rc;
  if (!llen(&l)) {
    *out = tpl_value_list_new(tpl_call_arena(c), TPL_ELEM_ANY, 0);
    out->u.list = NULL;
    return 0;
  }
  return sub_list(c, &l, 0, llen(&l) - 1, out);
}

SPRIG_FN(f_reverse) {
  tpl_value_t l = sprig__arg(&args[0]);
  int rc = need_list(c, &l, "Cannot find reverse on type %s");
  if (rc) return rc;
  *out = new_list(c, llen(&l));
  if (out->kind == TPL_INVALID) return TPL_ENOMEM;
  for (size_t i = llen(&l); i-- > 0;)
    if (tpl_list_push(tpl_call_arena(c), out->u.list, litem(&l, i))) return TPL_ENOMEM;
  return 0;
}

SPRIG_FN(f_compact) {
  tpl_value_t l = sprig__arg(&args[0]);
  int rc = need_list(c, &l, "Cannot compact on type %s");
  if (rc) return rc;
  *out = new_list(c, 0);
  if (out->kind == TPL_INVALID) return TPL_ENOMEM;
  for (size_t i = 0; i < llen(&l); i++) {
    tpl_value_t e = litem(&l, i);
    if (!sprig__empty(&e) && tpl_list_push(tpl_call_arena(c), out->u.list, e)) return TPL_ENOMEM;
  }
  return 0;
}

static bool in_list(const tpl_value_t *hay, size_t n, const tpl_value_t *needle) {
  for (size_t i = 0; i < n; i++) {
    tpl_value_t h = sprig__arg(&hay[i]);
    if (sprig__deep_equal(needle, &h)) return true;
  }
  return false;
}

SPRIG_FN(f_uniq) {
  tpl_value_t l = sprig__arg(&args[0]);
  int rc = need_list(c, &l, "Cannot find uniq on type %s");
  if (rc) return rc;
  *out = new_list(c, 0);
  if (out->kind == TPL_INVALID) return TPL_ENOMEM;
  for (size_t i = 0; i < llen(&l); i++) {
    tpl_value_t e = litem(&l, i);
    if (!in_list(out->u.list->items, out->u.list->len, &e) && tpl_list_push(tpl_call_arena(c), out->u.list, e))
      return TPL_ENOMEM;
  }
  return 0;
}

SPRIG_FN(f_without) {
  tpl_value_t l = sprig__arg(&args[0]);
  int rc = need_list(c, &l, "Cannot find without on type %s");
  if (rc) return rc;
  *out = new_list(c, 0);
  if (out->kind == TPL_INVALID) return TPL_ENOMEM;
  for (size_t i = 0; i < llen(&l); i++) {
    tpl_value_t e = litem(&l, i);
    if (!in_list(args + 1, n - 1, &e) && tpl_list_push(tpl_call_arena(c), out->u.list, e)) return TPL_ENOMEM;
  }
  return 0;
}

SPRIG_FN(f_has) {
  tpl_value_t needle = sprig__arg(&args[0]), hay = sprig__arg(&args[1]);
  if (hay.kind == TPL_NIL) {
    *out = tpl_value_bool(false);
    return 0;
  }
  int rc = need_list(c, &hay, "Cannot find has on type %s");
  if (rc) return rc;
  bool found = false;
  for (size_t i = 0; i < llen(&hay) && !found; i++) {
    tpl_value_t e = litem(&hay, i);
    found = sprig__deep_equal(&needle, &e);
  }
  *out = tpl_value_bool(found);
  return 0;
}

SPRIG_FN(f_slice) {
  tpl_value_t l = sprig__arg(&args[0]);
  int rc = need_list(c, &l, "list should be type of slice or array but %s");
  if (rc) return rc;
  size_t len = llen(&l);
  if (!len) {
    *out = tpl_value_nil();
    return 0;
  }
  int64_t start = 0, end = (int64_t)len;
  if (n > 1) {
    tpl_value_t a = sprig__arg(&args[1]);
    if (sprig__to_int64(&a, &start)) start = 0;
  }
  if (n > 2) {
    tpl_value_t a = sprig__arg(&args[2]);
    if (sprig__to_int64(&a, &end)) end = 0;
  }
  /* reflect.Value.Slice may reach past len up to Go's capacity (zero values there). */
  size_t cap = l.u.list->cap > len ? l.u.list->cap : len;
  if (start < 0 || end < start || end > (int64_t)cap)
    return tpl_call_errorf(c, "reflect.Value.Slice: slice index out of bounds");
  /* The result shares the backing array, as a Go slice expression does. */
  tpl_list_t *nl = tpl_list_slice(tpl_call_arena(c), l.u.list, (size_t)start, (size_t)(end - start), cap - (size_t)start);
  if (!nl) return TPL_ENOMEM;
  *out = l;
  out->u.list = nl;
  return 0;
}

SPRIG_FN(f_concat) {
  tpl_value_t res = new_list(c, 0);
  if (res.kind == TPL_INVALID) return TPL_ENOMEM;
  bool any = false;
  for (size_t k = 0; k < n; k++) {
    tpl_value_t l = sprig__arg(&args[k]);
    if (l.kind == TPL_NIL) return tpl_call_errorf(c, SPRIG_NIL_DEREF);
    if (l.kind != TPL_LIST) return tpl_call_errorf(c, "Cannot concat type %s as list", sprig__kind_name(&l));
    for (size_t i = 0; i < llen(&l); i++) {
      any = true;
      if (tpl_list_push(tpl_call_arena(c), res.u.list, litem(&l, i))) return TPL_ENOMEM;
    }
  }
  if (!any) res.u.list = NULL;
  *out = res;
  return 0;
}

SPRIG_FN(f_chunk) {
  int64_t size = args[0].u.i;
  tpl_value_t l = sprig__arg(&args[1]);
  int rc = need_list(c, &l, "Cannot chunk type %s");
  if (rc) return rc;
  int64_t len = (int64_t)llen(&l);
  double csf = floor((double)(len - 1) / (double)size) + 1;
  int64_t cs = sprig__f2i(csf);
  if (cs < 0) return tpl_call_errorf(c, "runtime error: makeslice: len out of range");
  tpl_arena_t *a = tpl_call_arena(c);
  *out = tpl_value_list_new(a, TPL_ELEM_ANY, (size_t)cs);
  if (out->kind == TPL_INVALID) return TPL_ENOMEM;
  out->elem = TPL_ELEM_ANY;
  for (int64_t i = 0; i < cs; i++) {
    int64_t clen = size;
    if (i == cs - 1) {
      clen = sprig__f2i(floor(fmod((double)len, (double)size)));
      if (clen == 0) clen = size;
    }
    if (clen < 0) return tpl_call_errorf(c, "runtime error: makeslice: len out of range");
    tpl_value_t sub = new_list(c, (size_t)clen);
    if (sub.kind == TPL_INVALID) return TPL_ENOMEM;
    for (int64_t j = 0; j < clen; j++) {
      int64_t ix = i * size + j;
      if (ix >= len)
        return tpl_call_errorf(c, "reflect: slice index out of range");
      if (tpl_list_push(a, sub.u.list, litem(&l, (size_t)ix))) return TPL_ENOMEM;
    }
    if (tpl_list_push(a, out->u.list, sub)) return TPL_ENOMEM;
  }
  /* [][]interface{}: printed like a list of lists. */
  return 0;
}

SPRIG_FN(f_until) {
  int64_t count = args[0].u.i, step = count < 0 ? -1 : 1;
  tpl_arena_t *a = tpl_call_arena(c);
  *out = tpl_value_list_new(a, TPL_ELEM_INT, 0);
  if (out->kind == TPL_INVALID) return TPL_ENOMEM;
  if (count > 10000000 || count < -10000000) return tpl_call_errorf(c, "until: count %lld is too large", (long long)count);
  if (count < 0)
    for (int64_t i = 0; i > count; i += step) {
      if (tpl_list_push(a, out->u.list, tpl_value_int(i))) return TPL_ENOMEM;
    }
  else
    for (int64_t i = 0; i < count; i += step)
      if (tpl_list_push(a, out->u.list, tpl_value_int(i))) return TPL_ENOMEM;
  return 0;
}

static int until_step(tpl_call_t *c, int64_t start, int64_t stop, int64_t step, tpl_value_t *out) {
  tpl_arena_t *a = tpl_call_arena(c);
  *out = tpl_value_list_new(a, TPL_ELEM_INT, 0);
  if (out->kind == TPL_INVALID) return TPL_ENOMEM;
  size_t cnt = 0;
  if (stop < start) {
    if (step >= 0) return 0;
    for (int64_t i = start; i > stop; i += step) {
      if (++cnt > 10000000) return tpl_call_errorf(c, "untilStep: too many elements");
      if (tpl_list_push(a, out->u.list, tpl_value_int(i))) return TPL_ENOMEM;
      if (i < INT64_MIN - step) break;
    }
    return 0;
  }
  if (step <= 0) return 0;
  for (int64_t i = start; i < stop; i += step) {
    if (++cnt > 10000000) return tpl_call_errorf(c, "untilStep: too many elements");
    if (tpl_list_push(a, out->u.list, tpl_value_int(i))) return TPL_ENOMEM;
    if (i > INT64_MAX - step) break;
  }
  return 0;
}

SPRIG_FN(f_untilstep) { return until_step(c, args[0].u.i, args[1].u.i, args[2].u.i, out); }

SPRIG_FN(f_seq) {
  int64_t start, end, step, inc = 1;
  switch (n) {
  case 0: *out = tpl_value_str(""); return 0;
  case 1:
    start = 1, end = args[0].u.i;
    if (end < start) inc = -1;
    step = inc;
    break;
  case 2:
    start = args[0].u.i, end = args[1].u.i, step = 1;
    if (end < start) step = -1;
    inc = step;
    break;
  case 3:
    start = args[0].u.i, end = args[2].u.i, step = args[1].u.i;
    if (end < start) {
      inc = -1;
      if (step > 0) {
        *out = tpl_value_str("");
        return 0;
      }
    }
    break;
  default: *out = tpl_value_str(""); return 0;
  }
  tpl_value_t l;
  int rc = until_step(c, start, end + inc, step, &l);
  if (rc) return rc;
  buf_t b = BUF_INIT;
  for (size_t i = 0; i < l.u.list->len; i++) {
    if (i) buf_putc(&b, ' ');
    buf_printf(&b, "%lld", (long long)l.u.list->items[i].u.i);
  }
  return sprig__ret_buf(c, &b, out);
}

/* ---- dicts ---- */

static tpl_value_t new_map(tpl_call_t *c) { return tpl_value_map_new(tpl_call_arena(c), TPL_ELEM_ANY); }

SPRIG_FN(f_dict) {
  tpl_value_t m = new_map(c);
  if (m.kind == TPL_INVALID) return TPL_ENOMEM;
  buf_t k = BUF_INIT;
  for (size_t i = 0; i < n; i += 2) {
    buf_reset(&k);
    tpl_value_t kv = sprig__arg(&args[i]);
    sprig__strval(&k, &kv);
    tpl_value_t v = i + 1 < n ? sprig__arg(&args[i + 1]) : tpl_value_str("");
    if (tpl_map_set(tpl_call_arena(c), m.u.map, k.data ? k.data : "", k.len, v)) {
      buf_free(&k);
      return TPL_ENOMEM;
    }
  }
  buf_free(&k);
  *out = m;
  return 0;
}

SPRIG_FN(f_get) {
  const tpl_value_t *v = tpl_map_get(args[0].u.map, args[1].u.s.p, args[1].u.s.n);
  *out = v ? sprig__arg(v) : tpl_value_str("");
  return 0;
}

SPRIG_FN(f_set) {
  if (!args[0].u.map) return tpl_call_errorf(c, "assignment to entry in nil map");
  if (tpl_map_set(tpl_call_arena(c), args[0].u.map, args[1].u.s.p, args[1].u.s.n, sprig__arg(&args[2])))
    return TPL_ENOMEM;
  *out = args[0];
  return 0;
}

SPRIG_FN(f_unset) {
  if (args[0].u.map) tpl_map_delete(tpl_call_arena(c), args[0].u.map, args[1].u.s.p, args[1].u.s.n);
  *out = args[0];
  return 0;
}

SPRIG_FN(f_haskey) {
  *out = tpl_value_bool(tpl_map_get(args[0].u.map, args[1].u.s.p, args[1].u.s.n) != NULL);
  return 0;
}

SPRIG_FN(f_pluck) {
  *out = new_list(c, 0);
  if (out->kind == TPL_INVALID) return TPL_ENOMEM;
  for (size_t i = 1; i < n; i++) {
    const tpl_value_t *v = tpl_map_get(args[i].u.map, args[0].u.s.p, args[0].u.s.n);
    if (v && tpl_list_push(tpl_call_arena(c), out->u.list, sprig__arg(v))) return TPL_ENOMEM;
  }
  return 0;
}

SPRIG_FN(f_keys) {
  tpl_arena_t *a = tpl_call_arena(c);
  *out = tpl_value_list_new(a, TPL_ELEM_STRING, 0);
  if (out->kind == TPL_INVALID) return TPL_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    const tpl_map_t *m = args[i].u.map;
    for (size_t j = 0; m && j < m->len; j++)
      if (tpl_list_push(a, out->u.list, tpl_value_strn(m->ents[j].key, m->ents[j].klen))) return TPL_ENOMEM;
  }
  return 0;
}

SPRIG_FN(f_values) {
  *out = new_list(c, 0);
  if (out->kind == TPL_INVALID) return TPL_ENOMEM;
  const tpl_map_t *m = args[0].u.map;
  for (size_t j = 0; m && j < m->len; j++)
    if (tpl_list_push(tpl_call_arena(c), out->u.list, sprig__arg(&m->ents[j].val))) return TPL_ENOMEM;
  return 0;
}

SPRIG_FN(f_pick) {
  *out = new_map(c);
  if (out->kind == TPL_INVALID) return TPL_ENOMEM;
  for (size_t i = 1; i < n; i++) {
    const tpl_value_t *v = tpl_map_get(args[0].u.map, args[i].u.s.p, args[i].u.s.n);
    if (v && tpl_map_set(tpl_call_arena(c), out->u.map, args[i].u.s.p, args[i].u.s.n, sprig__arg(v))) return TPL_ENOMEM;
  }
  return 0;
}

SPRIG_FN(f_omit) {
  *out = new_map(c);
  if (out->kind == TPL_INVALID) return TPL_ENOMEM;
  const tpl_map_t *m = args[0].u.map;
  for (size_t j = 0; m && j < m->len; j++) {
    bool skip = false;
    for (size_t i = 1; i < n && !skip; i++)
      skip = args[i].u.s.n == m->ents[j].klen && memcmp(args[i].u.s.p, m->ents[j].key, m->ents[j].klen) == 0;
    if (!skip && tpl_map_set(tpl_call_arena(c), out->u.map, m->ents[j].key, m->ents[j].klen, sprig__arg(&m->ents[j].val)))
      return TPL_ENOMEM;
  }
  return 0;
}

/* isEmptyValue(v, true) of mergo for a map element (an interface{}); absent counts as invalid. */
static bool m_empty(const tpl_value_t *v) { return sprig__empty(v); }

/* mergo's deepMerge for two map[string]interface{} (dst is a live map, mutated). */
static int merge_maps(tpl_arena_t *a, tpl_map_t *dst, const tpl_map_t *src, bool overwrite, int depth) {
  if (depth > 10000) return TPL_ELIMIT;
  if (!src) return 0;
  bool src_empty = src->len == 0;
  for (size_t i = 0; i < src->len; i++) {
    const char *k = src->ents[i].key;
    size_t kl = src->ents[i].klen;
    tpl_value_t se = sprig__arg(&src->ents[i].val);
    tpl_value_t *dp = tpl_map_get(dst, k, kl);
    bool dvalid = dp != NULL;
    tpl_value_t de = dvalid ? sprig__arg(dp) : tpl_value_nil();
    if (se.kind == TPL_NIL) {
      if (overwrite && tpl_map_set(a, dst, k, kl, se)) return TPL_ENOMEM;
      continue;
    }
    if (se.kind == TPL_MAP) {
      if (dvalid && de.kind == TPL_MAP && de.u.map && se.u.map) {
        int rc = merge_maps(a, de.u.map, se.u.map, overwrite, depth + 1);
        if (rc) return rc;
      }
    } else if (se.kind == TPL_LIST) {
      tpl_value_t ds;
      if (!dvalid || de.kind == TPL_NIL) ds = tpl_value_list_new(a, (tpl_elem_t)se.elem, 0);
      else ds = de;
      if (!src_empty && (overwrite || dst->len == 0)) ds = se;
      if (tpl_map_set(a, dst, k, kl, ds)) return TPL_ENOMEM;
    }
    if (dvalid && !m_empty(&de)) {
      if (se.kind == TPL_LIST) continue;
      if (se.kind == TPL_MAP && de.kind == TPL_MAP) continue;
    }
    if (overwrite || !dvalid || m_empty(&de)) {
      if (tpl_map_set(a, dst, k, kl, se)) return TPL_ENOMEM;
    }
  }
  return 0;
}

static int do_merge(tpl_call_t *c, tpl_value_t *args, size_t n, bool overwrite, tpl_value_t *out) {
  tpl_arena_t *a = tpl_call_arena(c);
  tpl_value_t dst = args[0];
  for (size_t i = 1; i < n; i++) {
    if (!args[i].u.map) continue;
    if (!dst.u.map) {
      dst = tpl_value_map_new(a, TPL_ELEM_ANY);
      if (dst.kind == TPL_INVALID) return TPL_ENOMEM;
    }
    int rc = merge_maps(a, dst.u.map, args[i].u.map, overwrite, 0);
    if (rc == TPL_ELIMIT) return tpl_call_errorf(c, "merge: maps nested too deeply");
    if (rc) return rc;
  }
  *out = dst;
  return 0;
}

SPRIG_FN(f_merge) { return do_merge(c, args, n, false, out); }
SPRIG_FN(f_mergeoverwrite) { return do_merge(c, args, n, true, out); }

SPRIG_FN(f_deepcopy) {
  tpl_value_t v = sprig__arg(&args[0]);
  if (v.kind == TPL_NIL) return tpl_call_errorf(c, "reflect: call of reflect.Value.Type on zero Value");
  int rc = sprig__deep_copy(tpl_call_arena(c), &v, out);
  if (rc == TPL_ELIMIT) return tpl_call_errorf(c, "deepCopy error: value nested too deeply");
  return rc;
}

/* Go's "interface conversion" panic text. */
static int conv_panic(tpl_call_t *c, const tpl_value_t *v, const char *want) {
  buf_t t = BUF_INIT;
  if (v->kind == TPL_NIL || v->kind == TPL_INVALID) buf_puts(&t, "nil");
  else tpl_value_type_name(v, &t);
  int rc = tpl_call_errorf(c, "interface conversion: interface {} is %s, not %s", t.data, want);
  buf_free(&t);
  return rc;
}

SPRIG_FN(f_dig) {
  if (n < 3) return tpl_call_errorf(c, "dig needs at least three arguments");
  tpl_value_t d = sprig__arg(&args[n - 1]);
  if (!(d.kind == TPL_MAP && d.elem == TPL_ELEM_ANY && !tpl_value_named(&d)))
    return conv_panic(c, &d, "map[string]interface {}");
  tpl_value_t def = sprig__arg(&args[n - 2]);
  for (size_t i = 0; i < n - 2; i++) {
    tpl_value_t k = sprig__arg(&args[i]);
    if (k.kind != TPL_STRING) return conv_panic(c, &k, "string");
  }
  for (size_t i = 0; i < n - 2; i++) {
    const tpl_value_t *step = tpl_map_get(d.u.map, args[i].u.s.p, args[i].u.s.n);
    if (!step) {
      *out = def;
      return 0;
    }
    tpl_value_t s = sprig__arg(step);
    if (i == n - 3) {
      *out = s;
      return 0;
    }
    if (!(s.kind == TPL_MAP && s.elem == TPL_ELEM_ANY && !tpl_value_named(&s)))
      return conv_panic(c, &s, "map[string]interface {}");
    d = s;
  }
  *out = def;
  return 0;
}

const tpl_func_t sprig__lists_fns[] = {
    {"list", "a*", f_list, NULL, "func(...interface {}) []interface {}"},
    {"tuple", "a*", f_list, NULL, "func(...interface {}) []interface {}"},
    {"append", "aa", f_push, NULL, "func(interface {}, interface {}) []interface {}"},
    {"push", "aa", f_push, NULL, "func(interface {}, interface {}) []interface {}"},
    {"mustAppend", "aa", f_push, NULL, "func(interface {}, interface {}) ([]interface {}, error)"},
    {"mustPush", "aa", f_push, NULL, "func(interface {}, interface {}) ([]interface {}, error)"},
    {"prepend", "aa", f_prepend, NULL, "func(interface {}, interface {}) []interface {}"},
    {"mustPrepend", "aa", f_prepend, NULL, "func(interface {}, interface {}) ([]interface {}, error)"},
    {"first", "a", f_first, NULL, "func(interface {}) interface {}"},
    {"mustFirst", "a", f_first, NULL, "func(interface {}) (interface {}, error)"},
    {"last", "a", f_last, NULL, "func(interface {}) interface {}"},
    {"mustLast", "a", f_last, NULL, "func(interface {}) (interface {}, error)"},
    {"rest", "a", f_rest, NULL, "func(interface {}) []interface {}"},
    {"mustRest", "a", f_rest, NULL, "func(interface {}) ([]interface {}, error)"},
    {"initial", "a", f_initial, NULL, "func(interface {}) []interface {}"},
    {"mustInitial", "a", f_initial, NULL, "func(interface {}) ([]interface {}, error)"},
    {"reverse", "a", f_reverse, NULL, "func(interface {}) []interface {}"},
    {"mustReverse", "a", f_reverse, NULL, "func(interface {}) ([]interface {}, error)"},
    {"compact", "a", f_compact, NULL, "func(interface {}) []interface {}"},
    {"mustCompact", "a", f_compact, NULL, "func(interface {}) ([]interface {}, error)"},
    {"uniq", "a", f_uniq, NULL, "func(interface {}) []interface {}"},
    {"mustUniq", "a", f_uniq, NULL, "func(interface {}) ([]interface {}, error)"},
    {"without", "aa*", f_without, NULL, "func(interface {}, ...interface {}) []interface {}"},
    {"mustWithout", "aa*", f_without, NULL, "func(interface {}, ...interface {}) ([]interface {}, error)"},
    {"has", "aa", f_has, NULL, "func(interface {}, interface {}) bool"},
    {"mustHas", "aa", f_has, NULL, "func(interface {}, interface {}) (bool, error)"},
    {"slice", "aa*", f_slice, NULL, "func(interface {}, ...interface {}) interface {}"},
    {"mustSlice", "aa*", f_slice, NULL, "func(interface {}, ...interface {}) (interface {}, error)"},
    {"concat", "a*", f_concat, NULL, "func(...interface {}) interface {}"},
    {"chunk", "ia", f_chunk, NULL, "func(int, interface {}) [][]interface {}"},
    {"mustChunk", "ia", f_chunk, NULL, "func(int, interface {}) ([][]interface {}, error)"},
    {"until", "i", f_until, NULL, "func(int) []int"},
    {"untilStep", "iii", f_untilstep, NULL, "func(int, int, int) []int"},
    {"seq", "i*", f_seq, NULL, "func(...int) string"},
    {"dict", "a*", f_dict, NULL, "func(...interface {}) map[string]interface {}"},
    {"get", "ms", f_get, NULL, "func(map[string]interface {}, string) interface {}"},
    {"set", "msa", f_set, NULL, "func(map[string]interface {}, string, interface {}) map[string]interface {}"},
    {"unset", "ms", f_unset, NULL, "func(map[string]interface {}, string) map[string]interface {}"},
    {"hasKey", "ms", f_haskey, NULL, "func(map[string]interface {}, string) bool"},
    {"pluck", "sm*", f_pluck, NULL, "func(string, ...map[string]interface {}) []interface {}"},
    {"keys", "m*", f_keys, NULL, "func(...map[string]interface {}) []string"},
    {"values", "m", f_values, NULL, "func(map[string]interface {}) []interface {}"},
    {"pick", "ms*", f_pick, NULL, "func(map[string]interface {}, ...string) map[string]interface {}"},
    {"omit", "ms*", f_omit, NULL, "func(map[string]interface {}, ...string) map[string]interface {}"},
    {"merge", "mm*", f_merge, NULL, "func(map[string]interface {}, ...map[string]interface {}) interface {}"},
    {"mustMerge", "mm*", f_merge, NULL, "func(map[string]interface {}, ...map[string]interface {}) (interface {}, error)"},
    {"mergeOverwrite", "mm*", f_mergeoverwrite, NULL, "func(map[string]interface {}, ...map[string]interface {}) interface {}"},
    {"mustMergeOverwrite", "mm*", f_mergeoverwrite, NULL, "func(map[string]interface {}, ...map[string]interface {}) (interface {}, error)"},
    {"deepCopy", "a", f_deepcopy, NULL, "func(interface {}) interface {}"},
    {"mustDeepCopy", "a", f_deepcopy, NULL, "func(interface {}) (interface {}, error)"},
    {"dig", "a*", f_dig, NULL, "func(...interface {}) (interface {}, error)"},
};
const size_t sprig__lists_nfns = sizeof sprig__lists_fns / sizeof sprig__lists_fns[0];
