/* Chart URLs from an index resolved against the repository URL, as Helm's
 * repo.ResolveReferenceURL does with Go's net/url (Parse, ResolveReference, String). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "base/err.h"
#include "helm/source/index.h"

typedef struct {
  const char *p;
  size_t n;
} span_t;

/* The parts of a URL as written (not unescaped). */
typedef struct {
  span_t scheme, user, host, path, query, frag;
  bool has_auth, has_user, force_query, has_frag;
} url_t;

static bool is_unreserved(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '.' || c == '~';
}

/* Go's shouldEscape(c, encodePath). */
static bool path_escape(unsigned char c) {
  if (is_unreserved(c)) return false;
  return !strchr("$&+,/:;=@", c) || c == 0;
}

static int hexval(unsigned char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

/* Go's url.Error text for s: parse "s": why (quoted simply; control bytes as \xNN). */
static int parse_error(const char *what, span_t s, const char *why, char *err, size_t errlen) {
  char q[600];
  size_t k = 0;
  for (size_t i = 0; i < s.n && k + 5 < sizeof q; i++) {
    unsigned char c = (unsigned char)s.p[i];
    if (c < 0x20 || c == 0x7F || c == '"' || c == '\\') {
      static const char hx[] = "0123456789abcdef";
      if (c == '"' || c == '\\') q[k++] = '\\', q[k++] = (char)c;
      else q[k++] = '\\', q[k++] = 'x', q[k++] = hx[c >> 4], q[k++] = hx[c & 15];
    } else q[k++] = (char)c;
  }
  q[k] = 0;
  return base_errf(err, errlen, INDEX_EINVAL, "failed to parse %.*s as URL: parse \"%s\": %s", (int)(s.n > 256 ? 256 : s.n),
                   what, q, why);
}

/* Checks the %XX escapes of s (Go's unescape); NULL or the first bad escape's text in bad. */
static bool escapes_ok(span_t s, char bad[4]) {
  for (size_t i = 0; i < s.n; i++) {
    if (s.p[i] != '%') continue;
    if (i + 2 >= s.n || hexval((unsigned char)s.p[i + 1]) < 0 || hexval((unsigned char)s.p[i + 2]) < 0) {
      size_t l = s.n - i < 3 ? s.n - i : 3; /* Go quotes at most three bytes */
      memcpy(bad, s.p + i, l);
      bad[l] = 0;
      return false;
    }
    i += 2;
  }
  return true;
}

/* url.Parse (the parts rudder needs): 0, or INDEX_EINVAL with Go's reason. */
static int url_parse(const char *s, url_t *u, const char **why, char bad[4]) {
  memset(u, 0, sizeof *u);
  size_t n = strlen(s);
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)s[i] < 0x20 || s[i] == 0x7F) return *why = "net/url: invalid control character in URL", -1;
  const char *h = memchr(s, '#', n);
  if (h) {
    u->has_frag = true;
    u->frag = (span_t){h + 1, n - (size_t)(h + 1 - s)};
    n = (size_t)(h - s);
    if (!escapes_ok(u->frag, bad)) return *why = "invalid URL escape", -1;
  }
  /* getScheme */
  size_t i = 0;
  for (; i < n; i++) {
    char c = s[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) continue;
    if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.') {
      if (i == 0) break;
      continue;
    }
    if (c == ':') {
      if (i == 0) return *why = "missing protocol scheme", -1;
      u->scheme = (span_t){s, i};
      i++;
      break;
    }
    break;
  }
  const char *rest = u->scheme.n ? s + i : s;
  size_t rn = u->scheme.n ? n - i : n;
  const char *q = memchr(rest, '?', rn);
  if (q) {
    u->force_query = (size_t)(q - rest) == rn - 1;
    u->query = (span_t){q + 1, rn - (size_t)(q + 1 - rest)};
    rn = (size_t)(q - rest);
  }
  if (rn >= 2 && rest[0] == '/' && rest[1] == '/') {
    u->has_auth = true;
    const char *a = rest + 2;
    const char *slash = memchr(a, '/', rn - 2);
    size_t an = slash ? (size_t)(slash - a) : rn - 2;
    const char *at = NULL;
    for (size_t k = 0; k < an; k++)
      if (a[k] == '@') at = a + k;
    if (at) {
      u->has_user = true;
      u->user = (span_t){a, (size_t)(at - a)};
      u->host = (span_t){at + 1, an - (size_t)(at + 1 - a)};
    } else u->host = (span_t){a, an};
    u->path = (span_t){a + an, rn - 2 - an};
  } else {
    u->path = (span_t){rest, rn};
    if (!u->scheme.n) {
      /* a colon in the first segment of a relative path would read as a scheme */
      const char *sl = memchr(rest, '/', rn);
      size_t seg = sl ? (size_t)(sl - rest) : rn;
      if (memchr(rest, ':', seg)) return *why = "first path segment in URL cannot contain colon", -1;
    }
  }
  if (!escapes_ok(u->path, bad)) return *why = "invalid URL escape", -1;
  return 0;
}

/* Go's validEncoded(s, encodePath). */
static bool valid_encoded(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (strchr("!$&'()*+,;=:@[]%", c) && c) continue;
    if (path_escape(c)) return false;
  }
  return true;
}

/* EscapedPath of a path written as p: p itself when validly encoded, else escape(unescape(p)). */
static int escaped_path(const char *p, size_t n, buf_t *out) {
  if (valid_encoded(p, n)) return buf_append(out, p, n);
  static const char hx[] = "0123456789ABCDEF";
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)p[i];
    if (c == '%' && i + 2 < n) { /* the escapes were checked by url_parse */
      c = (unsigned char)(hexval((unsigned char)p[i + 1]) * 16 + hexval((unsigned char)p[i + 2]));
      i += 2;
    }
    int rc = path_escape(c) ? (buf_putc(out, '%') || buf_putc(out, hx[c >> 4]) || buf_putc(out, hx[c & 15]))
                            : buf_putc(out, (char)c);
    if (rc) return -12;
  }
  return 0;
}

/* Go's resolvePath(base, ref) on escaped paths. */
static int resolve_path(const char *base, size_t bn, const char *ref, size_t rn, buf_t *out) {
  buf_t full = BUF_INIT;
  int rc;
  if (!rn) rc = buf_append(&full, base, bn);
  else if (ref[0] != '/') {
    size_t i = bn;
    while (i > 0 && base[i - 1] != '/') i--;
    rc = buf_append(&full, base, i) || buf_append(&full, ref, rn);
  } else rc = buf_append(&full, ref, rn);
  if (rc) return buf_free(&full), -12;
  if (!full.len) return buf_free(&full), 0;
  buf_t dst = BUF_INIT;
  if (buf_putc(&dst, '/')) return buf_free(&full), -12;
  bool first = true, found = true;
  const char *rem = full.data, *end = full.data + full.len;
  const char *elem = NULL;
  size_t en = 0;
  while (found) {
    const char *sl = memchr(rem, '/', (size_t)(end - rem));
    elem = rem;
    en = sl ? (size_t)(sl - rem) : (size_t)(end - rem);
    found = sl != NULL;
    rem = sl ? sl + 1 : end;
    if (en == 1 && elem[0] == '.') {
      first = false;
      continue;
    }
    if (en == 2 && elem[0] == '.' && elem[1] == '.') {
      size_t k = dst.len;
      while (k > 1 && dst.data[k - 1] != '/') k--;
      /* LastIndexByte(dst[1:], '/') */
      if (k > 1) dst.len = k - 1;
      else dst.len = 1;
      dst.data[dst.len] = 0;
      first = dst.len == 1;
      continue;
    }
    if (!first && buf_putc(&dst, '/')) goto oom;
    if (buf_append(&dst, elem, en)) goto oom;
    first = false;
  }
  if ((en == 1 && elem[0] == '.') || (en == 2 && elem[0] == '.' && elem[1] == '.'))
    if (buf_putc(&dst, '/')) goto oom;
  rc = dst.len > 1 && dst.data[1] == '/' ? buf_append(out, dst.data + 1, dst.len - 1) : buf_append(out, dst.data, dst.len);
  buf_free(&full);
  buf_free(&dst);
  return rc;
oom:
  buf_free(&full);
  buf_free(&dst);
  return -12;
}

int index_url_resolve(const char *repo_url, const char *chart_url, buf_t *out, char *err, size_t errlen) {
  url_t r, b;
  const char *why = NULL;
  char bad[4] = "";
  char whyb[64];
  if (url_parse(chart_url, &r, &why, bad)) {
    if (*bad) snprintf(whyb, sizeof whyb, "%s \"%s\"", why, bad), why = whyb;
    return parse_error(chart_url, (span_t){chart_url, strlen(chart_url)}, why, err, errlen);
  }
  if (r.scheme.n) return buf_puts(out, chart_url) ? base_errf(err, errlen, INDEX_ENOMEM, "out of memory") : 0;
  if (url_parse(repo_url, &b, &why, bad)) {
    if (*bad) snprintf(whyb, sizeof whyb, "%s \"%s\"", why, bad), why = whyb;
    return parse_error(repo_url, (span_t){repo_url, strlen(repo_url)}, why, err, errlen);
  }
  buf_t bp = BUF_INIT, rp = BUF_INIT, path = BUF_INIT;
  int rc = 0;
  /* the repository's path with one '/' at its end */
  size_t bn = b.path.n && b.path.p[b.path.n - 1] == '/' ? b.path.n - 1 : b.path.n;
  rc = escaped_path(b.path.p, bn, &bp) || buf_putc(&bp, '/') || escaped_path(r.path.p, r.path.n, &rp);
  if (rc) goto oom;
  bool net = r.has_auth || r.has_user;
  if (net) rc = resolve_path(rp.data ? rp.data : "", rp.len, "", 0, &path);
  else rc = resolve_path(bp.data, bp.len, rp.data ? rp.data : "", rp.len, &path);
  if (rc) goto oom;
  const url_t *au = net ? &r : &b; /* where host and user come from */
  /* scheme (lowercased, as url.Parse does) */
  for (size_t i = 0; i < b.scheme.n; i++) {
    char c = b.scheme.p[i];
    if (buf_putc(out, c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c)) goto oom;
  }
  if (b.scheme.n && buf_putc(out, ':')) goto oom;
  if (b.scheme.n || au->host.n || au->has_user) {
    if ((au->host.n || path.len || au->has_user) && buf_puts(out, "//")) goto oom;
    if (au->has_user && (buf_append(out, au->user.p, au->user.n) || buf_putc(out, '@'))) goto oom;
    if (buf_append(out, au->host.p, au->host.n)) goto oom;
  }
  if (path.len && path.data[0] != '/' && au->host.n && buf_putc(out, '/')) goto oom;
  if (buf_append(out, path.data ? path.data : "", path.len)) goto oom;
  /* Helm keeps the repository's query; the fragment is the chart URL's (or the repository's
   * when the chart URL is empty) */
  if ((r.force_query || b.query.n) && (buf_putc(out, '?') || buf_append(out, b.query.p, b.query.n))) goto oom;
  const url_t *fu = (!r.path.n && !r.query.n && !r.force_query && !r.frag.n && !net) ? &b : &r;
  if (fu->frag.n && (buf_putc(out, '#') || buf_append(out, fu->frag.p, fu->frag.n))) goto oom;
  buf_free(&bp), buf_free(&rp), buf_free(&path);
  return 0;
oom:
  buf_free(&bp), buf_free(&rp), buf_free(&path);
  return base_errf(err, errlen, INDEX_ENOMEM, "out of memory");
}
