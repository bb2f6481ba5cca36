/* URI reference resolution (RFC 3986 section 5.2, as net/url's ResolveReference applies it to
 * the schema library's $id and $ref): the absolute URL a reference names from a base. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "helm/values/schema_int.h"

typedef struct {
  const char *p;
  size_t n;
  bool set;
} part_t;

typedef struct {
  part_t scheme, auth, path, query, frag;
} uri_t;

static void uri__split(const char *s, uri_t *u) {
  memset(u, 0, sizeof *u);
  size_t n = strlen(s), i = 0;
  size_t k = strcspn(s, ":/?#");
  /* a scheme: a letter, then letters, digits, + - . */
  if (k < n && s[k] == ':' && k > 0 && ((s[0] | 0x20) >= 'a' && (s[0] | 0x20) <= 'z')) {
    bool ok = true;
    for (size_t j = 1; j < k && ok; j++)
      ok = strchr("+-.", s[j]) || (s[j] >= '0' && s[j] <= '9') || ((s[j] | 0x20) >= 'a' && (s[j] | 0x20) <= 'z');
    if (ok) u->scheme = (part_t){s, k, true}, i = k + 1;
  }
  if (s[i] == '/' && s[i + 1] == '/') {
    size_t a = strcspn(s + i + 2, "/?#");
    u->auth = (part_t){s + i + 2, a, true};
    i += 2 + a;
  }
  size_t pl = strcspn(s + i, "?#");
  u->path = (part_t){s + i, pl, true};
  i += pl;
  if (s[i] == '?') {
    size_t q = strcspn(s + i + 1, "#");
    u->query = (part_t){s + i + 1, q, true};
    i += 1 + q;
  }
  if (s[i] == '#') u->frag = (part_t){s + i + 1, n - i - 1, true};
}

/* remove_dot_segments of in[0..n), appended to out. */
static int uri__remove_dots(const char *in, size_t n, buf_t *out) {
  size_t start = out->len;
  size_t i = 0;
  while (i < n) {
    const char *p = in + i;
    size_t left = n - i;
    if (left >= 3 && !memcmp(p, "../", 3)) i += 3;
    else if (left >= 2 && !memcmp(p, "./", 2)) i += 2;
    else if ((left >= 3 && !memcmp(p, "/./", 3)) || (left == 2 && !memcmp(p, "/.", 2))) {
      i += 2;
      if (left == 2) {
        if (buf_putc(out, '/')) return -1;
      }
    } else if ((left >= 4 && !memcmp(p, "/../", 4)) || (left == 3 && !memcmp(p, "/..", 3))) {
      i += 3;
      /* drop the last segment written */
      while (out->len > start && out->data[out->len - 1] != '/') out->len--;
      if (out->len > start) out->len--;
      if (left == 3 && buf_putc(out, '/')) return -1;
    } else if ((left == 1 && p[0] == '.') || (left == 2 && !memcmp(p, "..", 2))) {
      i = n;
    } else {
      size_t seg = 1 + strcspn(p + 1, "/");
      if (p[0] != '/') seg = strcspn(p, "/");
      if (seg > left) seg = left;
      if (buf_append(out, p, seg)) return -1;
      i += seg;
    }
  }
  if (out->data) out->data[out->len] = 0;
  return 0;
}

static int uri__put(buf_t *b, const char *pre, const part_t *x) {
  if (!x->set) return 0;
  return buf_puts(b, pre) || buf_append(b, x->p, x->n);
}

char *schema_uri_resolve(const char *base, const char *ref) {
  uri_t b, r, t;
  uri__split(base, &b);
  uri__split(ref, &r);
  buf_t path = BUF_INIT, out = BUF_INIT;
  int e = 0;
  t = r;
  if (!r.scheme.set) {
    t.scheme = b.scheme;
    if (!r.auth.set) {
      t.auth = b.auth;
      if (!r.path.n) {
        t.path = b.path;
        if (!r.query.set) t.query = b.query;
      } else if (r.path.p[0] != '/') {
        /* merge: the base's path up to its last '/', then the reference's */
        if (b.auth.set && !b.path.n) e |= buf_putc(&path, '/');
        else {
          size_t k = b.path.n;
          while (k && b.path.p[k - 1] != '/') k--;
          e |= buf_append(&path, b.path.p, k);
        }
        e |= buf_append(&path, r.path.p, r.path.n);
      }
    }
  }
  e |= uri__put(&out, "", &t.scheme);
  if (t.scheme.set) e |= buf_putc(&out, ':');
  e |= uri__put(&out, "//", &t.auth);
  if (path.len) e |= uri__remove_dots(path.data, path.len, &out);
  else if (t.path.p == r.path.p && r.path.n) e |= uri__remove_dots(t.path.p, t.path.n, &out);
  else e |= buf_append(&out, t.path.p ? t.path.p : "", t.path.n);
  e |= uri__put(&out, "?", &t.query);
  e |= uri__put(&out, "#", &t.frag);
  e |= buf_putc(&out, 0);
  buf_free(&path);
  if (e) {
    buf_free(&out);
    return NULL;
  }
  return out.data;
}
