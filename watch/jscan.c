#include "watch/jscan.h"
#include <stdio.h>
#include <string.h>
#include <uv.h>

enum { JS_VALUE, JS_VALUE_OR_CLOSE, JS_KEY, JS_KEY_OR_CLOSE, JS_COLON, JS_AFTER, JS_STR, JS_ESC, JS_LIT, JS_DONE };

void watch_jscan_init(watch_jscan_t *s) {
  memset(s, 0, sizeof *s);
  s->state = JS_VALUE;
}

void watch_jscan_free(watch_jscan_t *s) { buf_free(&s->str); }

/* A literal at the top ends with the input, which only the caller knows. */
int watch_jscan_done(const watch_jscan_t *s) {
  return !s->err && (s->state == JS_DONE || (s->state == JS_LIT && !s->depth));
}

int watch_jscan_at(const watch_jscan_t *s, size_t n, const char *const *path) {
  if (s->depth != n || n > WATCH_JSCAN_PATH) return 0;
  for (size_t i = 0; i < n; i++) {
    if (!path[i]) {
      if (s->kind[i] != '[') return 0;
    } else if (s->kind[i] != '{' || strcmp(s->key[i], path[i])) {
      return 0;
    }
  }
  return 1;
}

static int js__ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* A value ended just before at: say so when it was an element of a tracked array. */
static void js__value_done(watch_jscan_t *s, const char *at) {
  if (!s->depth) { s->state = JS_DONE; return; }
  s->state = JS_AFTER;
  if (s->depth <= WATCH_JSCAN_PATH && s->kind[s->depth - 1] == '[' && s->on_elem) s->on_elem(s, 1, at);
}

/* A value begins at at: say so when it is an element of a tracked array. */
static void js__value_begin(watch_jscan_t *s, const char *at) {
  if (s->depth && s->depth <= WATCH_JSCAN_PATH && s->kind[s->depth - 1] == '[' && s->on_elem) s->on_elem(s, 0, at);
}

static void js__open(watch_jscan_t *s, char c) {
  if (s->depth < WATCH_JSCAN_PATH) {
    s->kind[s->depth] = (unsigned char)c;
    s->key[s->depth][0] = 0;
  }
  s->depth++;
  if (s->depth > s->max_depth) s->max_depth = s->depth;
  s->state = c == '{' ? JS_KEY_OR_CLOSE : JS_VALUE_OR_CLOSE;
}

static int js__close(watch_jscan_t *s, char c, const char *at) {
  if (!s->depth) return -1;
  if (s->depth <= WATCH_JSCAN_PATH && s->kind[s->depth - 1] != (c == '}' ? '{' : '[')) return -1;
  s->depth--;
  js__value_done(s, at + 1);
  return 0;
}

static void js__str_begin(watch_jscan_t *s, int is_key) {
  s->str_is_key = is_key;
  s->str_over = 0;
  s->collecting = s->depth <= WATCH_JSCAN_PATH &&
                  (is_key || (s->on_string && (!s->want_depths || (s->want_depths >> s->depth & 1))));
  buf_reset(&s->str);
  s->state = JS_STR;
}

static void js__str_add(watch_jscan_t *s, const char *p, size_t n) {
  if (!s->collecting || s->str_over) return;
  size_t max = s->str_is_key ? WATCH_JSCAN_KEY + 1 : WATCH_JSCAN_STR;
  if (s->str.len + n > max || buf_append(&s->str, p, n)) s->str_over = 1;
}

static void js__str_end(watch_jscan_t *s, const char *at) {
  if (s->str_is_key) {
    if (s->depth <= WATCH_JSCAN_PATH) {
      char *k = s->key[s->depth - 1];
      if (s->str_over || s->str.len > WATCH_JSCAN_KEY) {
        k[0] = 0x01; /* never equal to a key callers look for */
        k[1] = 0;
      } else {
        memcpy(k, s->str.data ? s->str.data : "", s->str.len);
        k[s->str.len] = 0;
      }
      if (s->on_key) s->on_key(s);
    }
    s->state = JS_COLON;
    return;
  }
  if (s->collecting && !s->str_over && s->on_string) s->on_string(s, s->str.data ? s->str.data : "", s->str.len);
  js__value_done(s, at + 1);
}

int watch_jscan_feed(watch_jscan_t *s, const char *p, size_t n) {
  if (s->err) return UV_EPROTO;
  const char *end = p + n;
  while (p < end) {
    char c = *p;
    switch (s->state) {
    case JS_STR: {
      /* The common case: a run of plain characters. */
      const char *q = p;
      while (q < end && *q != '"' && *q != '\\') q++;
      js__str_add(s, p, (size_t)(q - p));
      s->pos += (size_t)(q - p);
      p = q;
      if (p == end) return 0;
      if (*p == '\\') s->state = JS_ESC;
      else js__str_end(s, p);
      break;
    }
    case JS_ESC: {
      /* Simple escapes are decoded (names never need more); \u stays as written. */
      const char *m = strchr("\"\\/bfnrt", c);
      static const char out[] = "\"\\/\b\f\n\r\t";
      if (c && m) js__str_add(s, &out[m - "\"\\/bfnrt"], 1);
      else { js__str_add(s, "\\", 1); js__str_add(s, &c, 1); }
      s->state = JS_STR;
      break;
    }
    case JS_LIT:
      if (js__ws(c) || c == ',' || c == ']' || c == '}') {
        js__value_done(s, p);
        continue; /* the delimiter is looked at again after the value */
      }
      if (c == '"' || c == '{' || c == '[' || c == ':') goto bad;
      break;
    case JS_VALUE:
    case JS_VALUE_OR_CLOSE:
      if (js__ws(c)) break;
      if (c == ']' && s->state == JS_VALUE_OR_CLOSE) {
        if (js__close(s, c, p)) goto bad;
        break;
      }
      if (c == ']' || c == '}' || c == ',' || c == ':') goto bad;
      js__value_begin(s, p);
      if (c == '{' || c == '[') js__open(s, c);
      else if (c == '"') js__str_begin(s, 0);
      else s->state = JS_LIT;
      break;
    case JS_KEY:
    case JS_KEY_OR_CLOSE:
      if (js__ws(c)) break;
      if (c == '}' && s->state == JS_KEY_OR_CLOSE) {
        if (js__close(s, c, p)) goto bad;
        break;
      }
      if (c != '"') goto bad;
      js__str_begin(s, 1);
      break;
    case JS_COLON:
      if (js__ws(c)) break;
      if (c != ':') goto bad;
      s->state = JS_VALUE;
      break;
    case JS_AFTER:
      if (js__ws(c)) break;
      if (c == ',') {
        /* Below the tracked levels the container's kind is not known: a key is scanned as a
         * string value, and the ':' after it is accepted here. */
        s->state = s->depth <= WATCH_JSCAN_PATH && s->kind[s->depth - 1] == '{' ? JS_KEY : JS_VALUE;
        break;
      }
      if (c == ':' && s->depth > WATCH_JSCAN_PATH) {
        s->state = JS_VALUE;
        break;
      }
      if (c == '}' || c == ']') {
        if (js__close(s, c, p)) goto bad;
        break;
      }
      goto bad;
    case JS_DONE:
      if (!js__ws(c)) goto bad;
      break;
    }
    p++;
    s->pos++;
  }
  return 0;
bad:
  s->err = 1;
  return UV_EPROTO;
}

int watch_objmeta_take(watch_objmeta_t *m, const watch_jscan_t *s, size_t plen, const char *const *prefix,
                       const char *v, size_t n) {
  if (plen == 1 && prefix[0] && !strcmp(prefix[0], "object") && s->depth == 1 && s->kind[0] == '{' &&
      !strcmp(s->key[0], "type")) {
    snprintf(m->type, sizeof m->type, "%.*s", (int)n, v);
    return 1;
  }
  if (s->depth != plen + 2 || plen + 2 > WATCH_JSCAN_PATH) return 0;
  const char *path[WATCH_JSCAN_PATH];
  for (size_t i = 0; i < plen; i++) path[i] = prefix[i];
  path[plen] = "metadata";
  const char *field = s->key[plen + 1];
  path[plen + 1] = field;
  if (!watch_jscan_at(s, plen + 2, path)) return 0;
  char *dst = !strcmp(field, "name") ? m->name : !strcmp(field, "namespace") ? m->ns
              : !strcmp(field, "resourceVersion")                           ? m->rv
                                                                             : NULL;
  size_t len = dst == m->name ? sizeof m->name : dst == m->ns ? sizeof m->ns : sizeof m->rv;
  if (!dst) return 0;
  snprintf(dst, len, "%.*s", (int)n, v);
  return 1;
}

typedef struct js__meta_s {
  watch_objmeta_t *m;
  size_t plen;
  const char *const *prefix;
} js__meta_t;

static void js__meta_string(watch_jscan_t *s, const char *v, size_t n) {
  js__meta_t *x = s->data;
  watch_objmeta_take(x->m, s, x->plen, x->prefix, v, n);
}

size_t watch_objmeta_scan(watch_objmeta_t *m, const char *p, size_t n, size_t plen, const char *const *prefix) {
  watch_jscan_t s;
  js__meta_t x = {m, plen, prefix};
  watch_jscan_init(&s);
  s.on_string = js__meta_string;
  s.want_depths = 1u << 1 | 1u << (plen + 2);
  s.data = &x;
  watch_jscan_feed(&s, p, n);
  watch_jscan_free(&s);
  return s.max_depth;
}

int watch_objmeta_key(const watch_objmeta_t *m, char *buf, size_t len) {
  if (!m->name[0]) return UV_EINVAL;
  if (m->ns[0]) snprintf(buf, len, "%s/%s", m->ns, m->name);
  else snprintf(buf, len, "%s", m->name);
  return 0;
}

int watch_json_has_nul(const char *p, size_t n) {
  for (const char *q = p, *end = p + n; (q = memchr(q, '\\', (size_t)(end - q))) != NULL;) {
    /* q starts a run of backslashes: an odd run escapes what follows. */
    const char *r = q;
    while (r < end && *r == '\\') r++;
    if (((size_t)(r - q) & 1) && end - r >= 5 && !memcmp(r, "u0000", 5)) return 1;
    q = r;
  }
  return 0;
}
