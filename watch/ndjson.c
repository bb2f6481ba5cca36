#include "watch/ndjson.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

static const char *const nd__prefix[] = {"object"};

void watch_ndjson_init(watch_ndjson_t *nd, size_t max_line, watch_ndjson_cb cb, void *data) {
  memset(nd, 0, sizeof *nd);
  nd->max_line = max_line ? max_line : (16u << 20);
  nd->cb = cb;
  nd->data = data;
}

static void nd__skip_free(watch_ndjson_t *nd) {
  if (nd->skip) watch_jscan_free(nd->skip);
  free(nd->skip);
  free(nd->skip_meta);
  nd->skip = NULL;
  nd->skip_meta = NULL;
  nd->skip_len = 0;
}

void watch_ndjson_free(watch_ndjson_t *nd) {
  buf_free(&nd->line);
  buf_free(&nd->cut);
  nd__skip_free(nd);
}

/* ---- object.metadata.managedFields left out before the parse ----
 * A short scan over the event's first bytes (the API server writes kind, apiVersion, then
 * metadata, managedFields last in it), which never allocates. Whatever it does not follow (not an
 * object where one is expected, a key written with escapes, a managedFields that is not an array,
 * text that ends early) it gives up on: the event is then parsed whole, and cJSON judges it as
 * before. The array it cuts is skipped unread (brackets and strings followed, nothing else
 * checked): a malformed managedFields goes unnoticed by readers that never look at it. */

static size_t nd__ws(const char *p, size_t n, size_t i) {
  while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r')) i++;
  return i;
}

/* p[i] is '"': the index after the closing quote, or n. */
static size_t nd__str_end(const char *p, size_t n, size_t i) {
  for (i++; i < n; i++) {
    if (p[i] == '\\') i++;
    else if (p[i] == '"') return i + 1;
  }
  return n;
}

/* The index after the value starting at p[i], or n. */
static size_t nd__value_end(const char *p, size_t n, size_t i) {
  if (i >= n) return n;
  if (p[i] == '"') return nd__str_end(p, n, i);
  if (p[i] != '{' && p[i] != '[') {
    while (i < n && p[i] != ',' && p[i] != '}' && p[i] != ']' && p[i] != ' ' && p[i] != '\t' && p[i] != '\n' &&
           p[i] != '\r')
      i++;
    return i;
  }
  size_t depth = 0;
  for (; i < n; i++) {
    if (p[i] == '"') { i = nd__str_end(p, n, i) - 1; continue; }
    if (p[i] == '{' || p[i] == '[') depth++;
    else if ((p[i] == '}' || p[i] == ']') && !--depth) return i + 1;
  }
  return n;
}

typedef struct nd__member_s {
  size_t comma;  /* the comma before the member, or SIZE_MAX for the first one */
  size_t key;    /* where its key begins */
  size_t value;  /* where its value begins */
} nd__member_t;

/* In the object opening at p[i], the first member whose key is exactly want (written without
 * escapes); 1 with *m, 0 when there is none or the text is not followed. */
static int nd__member(const char *p, size_t n, size_t i, const char *want, nd__member_t *m) {
  size_t wl = strlen(want), comma = SIZE_MAX;
  if (i >= n || p[i] != '{') return 0;
  i = nd__ws(p, n, i + 1);
  while (i < n && p[i] == '"') {
    size_t k = i, ke = nd__str_end(p, n, i);
    if (ke >= n) return 0;
    size_t v = nd__ws(p, n, ke);
    if (v >= n || p[v] != ':') return 0;
    v = nd__ws(p, n, v + 1);
    if (ke - k == wl + 2 && !memcmp(p + k + 1, want, wl)) {
      *m = (nd__member_t){.comma = comma, .key = k, .value = v};
      return 1;
    }
    i = nd__ws(p, n, nd__value_end(p, n, v));
    if (i >= n || p[i] != ',') return 0;
    comma = i;
    i = nd__ws(p, n, i + 1);
  }
  return 0;
}

/* The bytes [*from, *to) to cut so that the event reads without object.metadata.managedFields:
 * the member and the comma before it (after it, for the first member). 0 when it is not there. */
static int nd__managed_span(const char *p, size_t n, size_t *from, size_t *to) {
  nd__member_t o, md, mf;
  if (!nd__member(p, n, nd__ws(p, n, 0), "object", &o) || !nd__member(p, n, o.value, "metadata", &md) ||
      !nd__member(p, n, md.value, "managedFields", &mf))
    return 0;
  if (mf.value >= n || p[mf.value] != '[') return 0; /* an array, as the API has it; else parsed whole */
  size_t end = nd__value_end(p, n, mf.value);
  if (end >= n) return 0;
  if (mf.comma != SIZE_MAX) {
    *from = mf.comma;
    *to = end;
    return 1;
  }
  size_t after = nd__ws(p, n, end);
  if (after >= n || (p[after] != ',' && p[after] != '}')) return 0;
  *from = mf.key;
  *to = p[after] == ',' ? after + 1 : end;
  return 1;
}

void watch_ndjson_drop_managed_fields(watch_ndjson_t *nd, int on) { nd->drop_managed = on ? 1 : 0; }

cJSON *watch_ndjson_take(watch_ndjson_t *nd) {
  if (!nd->cur) return NULL;
  return cJSON_DetachItemFromObjectCaseSensitive(nd->cur, "object");
}

/* Reports a skipped event (tolerant mode): nd->err holds why. */
static int nd__report(watch_ndjson_t *nd, const watch_objmeta_t *m) {
  nd->events++;
  return nd->bad(nd, m, nd->err, nd->data);
}

static int nd__line(watch_ndjson_t *nd, const char *p, size_t n) {
  while (n && (p[n - 1] == '\r' || p[n - 1] == ' ' || p[n - 1] == '\t')) n--;
  while (n && (*p == ' ' || *p == '\t')) { p++; n--; }
  if (!n) return 0; /* blank lines are keep-alive noise */
  size_t from, to;
  const char *text = p;
  size_t tn = n;
  if (nd->drop_managed && nd__managed_span(p, n, &from, &to)) {
    buf_reset(&nd->cut);
    if (!buf_append(&nd->cut, p, from) && !buf_append(&nd->cut, p + to, n - to)) {
      text = nd->cut.data;
      tn = nd->cut.len;
    }
  }
  cJSON *ev = cJSON_ParseWithLength(text, tn);
  if (nd->cut.cap > (256u << 10)) buf_free(&nd->cut); /* not kept at the size of an outsized event */
  if (!ev) {
    if (!nd->bad) {
      snprintf(nd->err, sizeof nd->err, "watch event %zu is not valid JSON (%zu bytes, starting \"%.40s\")",
               nd->events + 1, n, p);
      return UV_EPROTO;
    }
    watch_objmeta_t m = {0};
    size_t depth = watch_objmeta_scan(&m, p, n, 1, nd__prefix);
    if (depth > CJSON_NESTING_LIMIT)
      snprintf(nd->err, sizeof nd->err, "watch event %zu: the object is nested %zu levels deep, more than the limit of %d",
               nd->events + 1, depth - 1, WATCH_MAX_NESTING);
    else
      snprintf(nd->err, sizeof nd->err, "watch event %zu is not valid JSON (%zu bytes)", nd->events + 1, n);
    return nd__report(nd, &m);
  }
  if (nd->bad && watch_json_has_nul(p, n)) {
    snprintf(nd->err, sizeof nd->err,
             "watch event %zu: a string holds a NUL character (\\u0000), which would cut it short: refused",
             nd->events + 1);
    cJSON_Delete(ev);
    watch_objmeta_t m = {0};
    watch_objmeta_scan(&m, p, n, 1, nd__prefix);
    return nd__report(nd, &m);
  }
  const cJSON *type = cJSON_GetObjectItemCaseSensitive(ev, "type");
  cJSON *obj = cJSON_GetObjectItemCaseSensitive(ev, "object");
  if (!cJSON_IsString(type) || !cJSON_IsObject(obj)) {
    snprintf(nd->err, sizeof nd->err, "watch event %zu lacks a string \"type\" or an object \"object\"", nd->events + 1);
    cJSON_Delete(ev);
    if (!nd->bad) return UV_EPROTO;
    watch_objmeta_t m = {0};
    watch_objmeta_scan(&m, p, n, 1, nd__prefix);
    return nd__report(nd, &m);
  }
  nd->events++;
  nd->cur = ev;
  int r = nd->cb(nd, type->valuestring, obj, nd->data);
  nd->cur = NULL;
  cJSON_Delete(ev);
  return r;
}

static void nd__skip_string(watch_jscan_t *s, const char *v, size_t n) {
  watch_ndjson_t *nd = s->data;
  watch_objmeta_take(nd->skip_meta, s, 1, nd__prefix, v, n);
}

/* An event is longer than the bound: without a bad callback that ends the stream; with one, the
 * rest of the line is scanned (not kept) for the object's name, then reported. */
static int nd__too_long(watch_ndjson_t *nd) {
  snprintf(nd->err, sizeof nd->err, "watch event %zu is longer than the limit of %zu bytes", nd->events + 1,
           nd->max_line);
  if (!nd->bad) return UV_E2BIG;
  nd->skip = malloc(sizeof *nd->skip);
  nd->skip_meta = calloc(1, sizeof *nd->skip_meta);
  if (!nd->skip || !nd->skip_meta) { nd__skip_free(nd); return UV_ENOMEM; }
  watch_jscan_init(nd->skip);
  nd->skip->on_string = nd__skip_string;
  nd->skip->want_depths = 1u << 1 | 1u << 3; /* type, object.metadata.* */
  nd->skip->data = nd;
  watch_jscan_feed(nd->skip, nd->line.data, nd->line.len);
  nd->skip_len = nd->line.len;
  buf_reset(&nd->line);
  return 0;
}

int watch_ndjson_feed(watch_ndjson_t *nd, const char *p, size_t n) {
  while (n) {
    const char *nl = memchr(p, '\n', n);
    size_t k = nl ? (size_t)(nl - p) : n;
    int r;
    if (nd->skip) {
      watch_jscan_feed(nd->skip, p, k);
      nd->skip_len += k;
      if (!nl) return 0;
      snprintf(nd->err, sizeof nd->err, "watch event %zu is %zu bytes, longer than the limit of %zu bytes",
               nd->events + 1, nd->skip_len, nd->max_line);
      r = nd__report(nd, nd->skip_meta);
      nd__skip_free(nd);
      if (r) return r;
    } else if (!nl) {
      /* Only the new bytes are scanned next time: no rescans of the carried-over part. */
      if (nd->line.len + n > nd->max_line) {
        if ((r = nd__too_long(nd))) return r;
        continue;
      }
      return buf_append(&nd->line, p, n) ? UV_ENOMEM : 0;
    } else if (nd->line.len) {
      if (nd->line.len + k > nd->max_line) {
        if ((r = nd__too_long(nd))) return r;
        continue;
      }
      if (buf_append(&nd->line, p, k)) return UV_ENOMEM;
      r = nd__line(nd, nd->line.data, nd->line.len);
      buf_reset(&nd->line);
      if (r) return r;
    } else {
      if (k > nd->max_line) {
        if ((r = nd__too_long(nd))) return r;
        continue;
      }
      r = nd__line(nd, p, k); /* whole line in this piece: parse in place */
      if (r) return r;
    }
    p += k + 1;
    n -= k + 1;
  }
  return 0;
}
