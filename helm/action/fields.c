/* Managed fields for drift detection (see fields.h). */
#include "helm/action/fields.h"
#include "base/buf.h"
#include <stdlib.h>
#include <string.h>

static const char *fields__str(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsString(v) ? v->valuestring : NULL;
}

static const cJSON *fields__entries(const cJSON *obj) {
  return cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(obj, "metadata"), "managedFields");
}

static int fields__is_ours(const cJSON *e, const char *manager) {
  const char *m = fields__str(e, "manager"), *op = fields__str(e, "operation"), *sub = fields__str(e, "subresource");
  return m && op && !strcmp(m, manager) && !strcmp(op, "Apply") && (!sub || !*sub);
}

/* manager's Apply entry on the object itself, or NULL. */
static const cJSON *fields__entry(const cJSON *obj, const char *manager) {
  const cJSON *list = fields__entries(obj);
  if (!cJSON_IsArray(list) || !manager) return NULL;
  for (const cJSON *e = list->child; e; e = e->next)
    if (fields__is_ours(e, manager)) return e;
  return NULL;
}

const cJSON *fields_applied(const cJSON *obj, const char *manager) {
  const cJSON *e = fields__entry(obj, manager);
  return e ? cJSON_GetObjectItemCaseSensitive(e, "fieldsV1") : NULL;
}

/* FNV-1a over the printed tree, walked without printing it to a buffer (no allocation). */
static uint64_t fields__hash(uint64_t h, const cJSON *n) {
  for (; n; n = n->next) {
    for (const char *s = n->string ? n->string : ""; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    h = (h ^ (unsigned char)(cJSON_IsObject(n) ? '{' : '=')) * 1099511628211ULL;
    if (cJSON_IsObject(n) || cJSON_IsArray(n)) h = fields__hash(h, n->child);
    else if (cJSON_IsString(n))
      for (const char *s = n->valuestring; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
    h = (h ^ (unsigned char)'}') * 1099511628211ULL;
  }
  return h;
}

const char *fields_applied_time(const cJSON *obj, const char *manager) {
  const cJSON *e = fields__entry(obj, manager);
  return e ? fields__str(e, "time") : NULL;
}

uint64_t fields_digest(const cJSON *obj, const char *manager) {
  const cJSON *f = fields_applied(obj, manager);
  if (!f) return 0;
  uint64_t h = fields__hash(1469598103934665603ULL, f->child);
  return h ? h : 1;
}

int fields_written_by_other(const cJSON *obj, const char *manager) {
  const cJSON *list = fields__entries(obj);
  if (!cJSON_IsArray(list)) return 0;
  const char *ours = NULL, *newest = NULL;
  for (const cJSON *e = list->child; e; e = e->next) {
    const char *t = fields__str(e, "time"), *sub = fields__str(e, "subresource");
    if (sub && !strcmp(sub, "status")) continue;
    if (fields__is_ours(e, manager)) ours = t;
    else if (!t) return 1; /* the server keeps no time for some writes (the scale subresource): not known to be older */
    else if (!newest || strcmp(t, newest) > 0) newest = t;
  }
  /* RFC 3339 times of one server compare as text; a write in the same second as ours counts as ours. */
  return newest && (!ours || strcmp(newest, ours) > 0);
}

/* ---- the fields an apply took back ---- */

typedef struct fields__walk_s {
  fields_cb cb;
  void *data;
  buf_t path, ptr;
  int count, oom;
} fields__walk_t;

static void fields__ptr_seg(buf_t *b, const char *s) {
  buf_putc(b, '/');
  for (; *s; s++) {
    if (*s == '~') buf_puts(b, "~0");
    else if (*s == '/') buf_puts(b, "~1");
    else buf_putc(b, *s);
  }
}

static int fields__json_equal(const cJSON *a, const cJSON *b) { return a && b && cJSON_Compare(a, b, 1); }

/* The item of array arr a "k:{...}" or "v:..." member names (its index), or -1. */
static int fields__find_item(const cJSON *arr, const char *member, buf_t *text) {
  int k = member[0] == 'k';
  cJSON *want = cJSON_Parse(member + 2);
  if (!want) return -1;
  if (k && cJSON_IsObject(want)) {
    buf_putc(text, '[');
    for (const cJSON *f = want->child; f; f = f->next) {
      char *v = cJSON_IsString(f) ? NULL : cJSON_PrintUnformatted(f);
      buf_printf(text, "%s%s=%s", f == want->child ? "" : ",", f->string, cJSON_IsString(f) ? f->valuestring : v ? v : "");
      free(v);
    }
    buf_putc(text, ']');
  } else {
    char *v = cJSON_IsString(want) ? NULL : cJSON_PrintUnformatted(want);
    buf_printf(text, "[=%s]", cJSON_IsString(want) ? want->valuestring : v ? v : "");
    free(v);
  }
  int idx = -1, i = 0;
  if (cJSON_IsArray(arr))
    for (const cJSON *it = arr->child; it && idx < 0; it = it->next, i++) {
      if (!k) {
        if (fields__json_equal(it, want)) idx = i;
        continue;
      }
      int all = cJSON_IsObject(it) && cJSON_IsObject(want);
      for (const cJSON *f = all ? want->child : NULL; f && all; f = f->next)
        all = fields__json_equal(cJSON_GetObjectItemCaseSensitive(it, f->string), f);
      if (all) idx = i;
    }
  cJSON_Delete(want);
  return idx;
}

/* One member of a fieldsV1 set: appends its name to the path and pointer; returns the part of the
 * object it names (NULL when obj does not hold it; the pointer is then unknown). */
static const cJSON *fields__step(fields__walk_t *w, const char *m, const cJSON *obj, int *have_ptr) {
  if (!strncmp(m, "f:", 2)) {
    buf_printf(&w->path, ".%s", m + 2);
    fields__ptr_seg(&w->ptr, m + 2);
    const cJSON *next = cJSON_IsObject(obj) ? cJSON_GetObjectItemCaseSensitive(obj, m + 2) : NULL;
    if (!next) *have_ptr = 0;
    return next;
  }
  if (!strncmp(m, "i:", 2)) {
    buf_printf(&w->path, "[%s]", m + 2);
    buf_printf(&w->ptr, "/%s", m + 2);
    const cJSON *next = cJSON_IsArray(obj) ? cJSON_GetArrayItem(obj, atoi(m + 2)) : NULL;
    if (!next) *have_ptr = 0;
    return next;
  }
  if (!strncmp(m, "k:", 2) || !strncmp(m, "v:", 2)) {
    int idx = fields__find_item(obj, m, &w->path);
    if (idx < 0) {
      *have_ptr = 0;
      return NULL;
    }
    buf_printf(&w->ptr, "/%d", idx);
    return cJSON_GetArrayItem(obj, idx);
  }
  buf_printf(&w->path, ".%s", m);
  *have_ptr = 0;
  return NULL;
}

static void fields__added(fields__walk_t *w, const cJSON *before, const cJSON *after, const cJSON *obj, int have_ptr) {
  for (const cJSON *m = after ? after->child : NULL; m && !w->oom; m = m->next) {
    if (!m->string || !strcmp(m->string, ".")) continue;
    size_t pl = w->path.len, ql = w->ptr.len;
    int hp = have_ptr;
    const cJSON *sub = fields__step(w, m->string, obj, &hp);
    const cJSON *b = before ? cJSON_GetObjectItemCaseSensitive(before, m->string) : NULL;
    int inner = 0; /* members below this one besides "." (the node itself) */
    for (const cJSON *c = cJSON_IsObject(m) ? m->child : NULL; c && !inner; c = c->next) inner = c->string && strcmp(c->string, ".");
    if (!w->path.data || !w->ptr.data) w->oom = 1;
    else if (inner) {
      fields__added(w, b, m, sub, hp); /* named down to the leaves: ".data.color", not ".data" */
    } else if (!b) {
      w->count++;
      w->cb(w->path.data, hp ? w->ptr.data : NULL, w->data);
    }
    w->path.len = pl;
    w->ptr.len = ql;
    if (w->path.data) w->path.data[pl] = 0;
    if (w->ptr.data) w->ptr.data[ql] = 0;
  }
}

int fields_added(const cJSON *before, const cJSON *after, const cJSON *obj, fields_cb cb, void *data) {
  fields__walk_t w = {.cb = cb, .data = data, .path = BUF_INIT, .ptr = BUF_INIT};
  buf_puts(&w.path, "");
  buf_puts(&w.ptr, "");
  fields__added(&w, before, after, obj, 1);
  buf_free(&w.path);
  buf_free(&w.ptr);
  return w.oom ? -12 : w.count;
}

int fields_pointer_under(const char *pointer, const char *prefix) {
  size_t n = strlen(prefix);
  while (n && prefix[n - 1] == '/') n--;
  return !strncmp(pointer, prefix, n) && (pointer[n] == 0 || pointer[n] == '/');
}

/* The next segment of a JSON pointer, unescaped, into seg; returns the rest or NULL when malformed. */
static const char *fields__segment(const char *p, buf_t *seg) {
  buf_reset(seg);
  buf_puts(seg, "");
  for (p++; *p && *p != '/'; p++) {
    if (*p == '~') {
      if (p[1] == '0') buf_putc(seg, '~');
      else if (p[1] == '1') buf_putc(seg, '/');
      else return NULL;
      p++;
    } else {
      buf_putc(seg, *p);
    }
  }
  return p;
}

/* Finds what JSON pointer names in obj: the value (NULL when absent), its parent and its index in an
 * array parent (-1 in an object); seg holds its last segment. -22 when malformed, else 0. */
static int fields__resolve(cJSON *obj, const char *pointer, cJSON **parent, int *idx, cJSON **out, buf_t *seg) {
  *out = *parent = NULL;
  *idx = -1;
  if (!pointer || pointer[0] != '/') return -22;
  cJSON *cur = obj;
  const char *p = pointer;
  while (cur) {
    const char *rest = fields__segment(p, seg);
    if (!rest || !seg->data) return -22;
    cJSON *next = NULL;
    int i = -1;
    if (cJSON_IsObject(cur)) next = cJSON_GetObjectItemCaseSensitive(cur, seg->data);
    else if (cJSON_IsArray(cur)) {
      char *end;
      long v = strtol(seg->data, &end, 10);
      if (*seg->data && !*end && v >= 0 && v < cJSON_GetArraySize(cur)) next = cJSON_GetArrayItem(cur, i = (int)v);
    }
    if (!next) return 0;
    if (!*rest) {
      *parent = cur;
      *idx = i;
      *out = next;
      return 0;
    }
    cur = next;
    p = rest;
  }
  return 0;
}

const cJSON *fields_pointer_get(const cJSON *obj, const char *pointer) {
  buf_t seg = BUF_INIT;
  cJSON *parent, *out;
  int idx;
  int rc = fields__resolve((cJSON *)obj, pointer, &parent, &idx, &out, &seg);
  buf_free(&seg);
  return rc ? NULL : out;
}

int fields_pointer_remove(cJSON *obj, const char *pointer) {
  buf_t seg = BUF_INIT;
  cJSON *parent, *out;
  int idx;
  int rc = fields__resolve(obj, pointer, &parent, &idx, &out, &seg);
  if (!rc && !out) rc = -2;
  if (!rc) {
    if (idx >= 0) cJSON_DeleteItemFromArray(parent, idx);
    else cJSON_Delete(cJSON_DetachItemViaPointer(parent, out));
  }
  buf_free(&seg);
  return rc;
}
