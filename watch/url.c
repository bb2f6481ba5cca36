#include "watch/url.h"
#include "base/buf.h"
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <uv.h>

typedef struct {
  const char *p;
  size_t n;
  bool set;
} url__span_t;

/* The five components of RFC 3986 (appendix B), as spans of s. */
typedef struct {
  url__span_t scheme, auth, path, query, frag;
} url__parts_t;

static void url__split(const char *s, size_t len, url__parts_t *o) {
  memset(o, 0, sizeof *o);
  const char *end = s + len, *p = s;
  /* scheme: ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":" */
  if (p < end && ((*p | 32) >= 'a' && (*p | 32) <= 'z')) {
    const char *q = p + 1;
    while (q < end && (((*q | 32) >= 'a' && (*q | 32) <= 'z') || (*q >= '0' && *q <= '9') || *q == '+' || *q == '-' ||
                       *q == '.'))
      q++;
    if (q < end && *q == ':') {
      o->scheme = (url__span_t){p, (size_t)(q - p), true};
      p = q + 1;
    }
  }
  if (end - p >= 2 && p[0] == '/' && p[1] == '/') {
    p += 2;
    const char *q = p;
    while (q < end && *q != '/' && *q != '?' && *q != '#') q++;
    o->auth = (url__span_t){p, (size_t)(q - p), true};
    p = q;
  }
  const char *q = p;
  while (q < end && *q != '?' && *q != '#') q++;
  o->path = (url__span_t){p, (size_t)(q - p), true};
  p = q;
  if (p < end && *p == '?') {
    q = ++p;
    while (q < end && *q != '#') q++;
    o->query = (url__span_t){p, (size_t)(q - p), true};
    p = q;
  }
  if (p < end && *p == '#') o->frag = (url__span_t){p + 1, (size_t)(end - p - 1), true};
}

static int url__escape(buf_t *b, const char *p, size_t n);

/* RFC 3986 5.2.4 remove_dot_segments, from in to out. */
static int url__remove_dots(const char *in, size_t n, buf_t *out) {
  buf_t b = BUF_INIT;
  int r = 0;
  const char *p = in, *end = in + n;
  while (p < end) {
    size_t left = (size_t)(end - p);
    if (left >= 3 && !memcmp(p, "../", 3)) p += 3;
    else if (left >= 2 && !memcmp(p, "./", 2)) p += 2;
    else if (left >= 3 && !memcmp(p, "/./", 3)) p += 2;
    else if (left == 2 && !memcmp(p, "/.", 2)) { p += 1; r |= buf_putc(&b, '/'); p += 1; }
    else if ((left >= 4 && !memcmp(p, "/../", 4)) || (left == 3 && !memcmp(p, "/..", 3))) {
      /* drop the last segment of the output */
      while (b.len && b.data[b.len - 1] != '/') b.len--;
      if (b.len) b.len--;
      if (b.data) b.data[b.len] = 0;
      if (left == 3) { p += 3; r |= buf_putc(&b, '/'); }
      else p += 3;
    } else if ((left == 1 && *p == '.') || (left == 2 && !memcmp(p, "..", 2))) p = end;
    else {
      const char *q = p + (*p == '/' ? 1 : 0);
      while (q < end && *q != '/') q++;
      r |= buf_append(&b, p, (size_t)(q - p));
      p = q;
    }
  }
  r |= buf_append(out, b.data ? b.data : "", b.len);
  buf_free(&b);
  return r;
}

int watch_url_resolve(const char *base, const char *ref, char **out, const char **why) {
  *out = NULL;
  size_t bl = strlen(base), rl = strlen(ref);
  if (bl > WATCH_URL_MAX || rl > WATCH_URL_MAX) { *why = "URL too long"; return UV_EINVAL; }
  /* Leading and trailing spaces are not part of a Location. */
  while (rl && (ref[0] == ' ' || ref[0] == '\t')) { ref++; rl--; }
  while (rl && (ref[rl - 1] == ' ' || ref[rl - 1] == '\t')) rl--;
  for (size_t i = 0; i < rl; i++)
    if ((unsigned char)ref[i] < 0x20 || ref[i] == 0x7f) { *why = "control character in URL"; return UV_EINVAL; }
  url__parts_t b, r;
  url__split(base, bl, &b);
  url__split(ref, rl, &r);
  if (!b.scheme.set || !b.auth.set) { *why = "the base URL is not absolute"; return UV_EINVAL; }
  buf_t o = BUF_INIT;
  int e = 0;
  url__span_t scheme = b.scheme, auth, query;
  buf_t path = BUF_INIT;
  if (r.scheme.set) {
    scheme = r.scheme;
    auth = r.auth;
    e |= url__remove_dots(r.path.p, r.path.n, &path);
    query = r.query;
  } else if (r.auth.set) {
    auth = r.auth;
    e |= url__remove_dots(r.path.p, r.path.n, &path);
    query = r.query;
  } else {
    auth = b.auth;
    if (r.path.n == 0) {
      e |= buf_append(&path, b.path.p, b.path.n);
      query = r.query.set ? r.query : b.query;
    } else {
      buf_t merged = BUF_INIT;
      if (r.path.p[0] == '/') {
        e |= buf_append(&merged, r.path.p, r.path.n);
      } else {
        if (b.auth.set && b.path.n == 0) e |= buf_putc(&merged, '/');
        else {
          size_t k = b.path.n;
          while (k && b.path.p[k - 1] != '/') k--;
          e |= buf_append(&merged, b.path.p, k);
        }
        e |= buf_append(&merged, r.path.p, r.path.n);
      }
      e |= url__remove_dots(merged.data ? merged.data : "", merged.len, &path);
      buf_free(&merged);
      query = r.query;
    }
  }
  e |= buf_append(&o, scheme.p, scheme.n);
  e |= buf_putc(&o, ':');
  if (auth.set) {
    e |= buf_puts(&o, "//");
    e |= buf_append(&o, auth.p, auth.n);
  }
  e |= url__escape(&o, path.data ? path.data : "", path.len);
  if (query.set) {
    e |= buf_putc(&o, '?');
    e |= url__escape(&o, query.p, query.n);
  }
  buf_free(&path);
  if (e || !(*out = buf_steal(&o))) {
    buf_free(&o);
    *why = "out of memory";
    return UV_ENOMEM;
  }
  return 0;
}

static int url__hex(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  c |= 32;
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* Percent-decodes n bytes; NULL on a bad escape or out of memory (*bad says which). */
static char *url__decode(const char *p, size_t n, int *bad) {
  char *o = malloc(n + 1), *w = o;
  if (!o) return NULL;
  for (size_t i = 0; i < n; i++) {
    if (p[i] == '%') {
      int h, l;
      if (i + 2 >= n || (h = url__hex(p[i + 1])) < 0 || (l = url__hex(p[i + 2])) < 0) {
        free(o);
        *bad = 1;
        return NULL;
      }
      *w++ = (char)(h * 16 + l);
      i += 2;
    } else {
      *w++ = p[i];
    }
  }
  *w = 0;
  return o;
}

/* Appends p with the bytes a request target cannot carry percent-encoded. */
static int url__escape(buf_t *b, const char *p, size_t n) {
  int r = 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)p[i];
    if (c <= ' ' || c >= 0x7f || strchr("\"<>\\^`{|}", c))
      r |= buf_printf(b, "%%%02X", c);
    else
      r |= buf_putc(b, (char)c);
  }
  return r;
}

void watch_url_free(watch_url_t *u) {
  free(u->scheme);
  free(u->user);
  free(u->pass);
  free(u->host);
  free(u->hostname);
  free(u->authority);
  free(u->target);
  free(u->clean);
  free(u->shown);
  memset(u, 0, sizeof *u);
}

int watch_url_parse(const char *s, watch_url_t *u, const char **why) {
  memset(u, 0, sizeof *u);
  size_t len = strlen(s);
  if (len > WATCH_URL_MAX) { *why = "URL too long"; return UV_EINVAL; }
  for (size_t i = 0; i < len; i++)
    if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) { *why = "control character in URL"; return UV_EINVAL; }
  url__parts_t pt;
  url__split(s, len, &pt);
  if (!pt.scheme.set || !pt.auth.set) { *why = "not an absolute http:// or https:// URL"; return UV_EINVAL; }
  int is_https;
  if (pt.scheme.n == 5 && !strncasecmp(pt.scheme.p, "https", 5)) is_https = 1;
  else if (pt.scheme.n == 4 && !strncasecmp(pt.scheme.p, "http", 4)) is_https = 0;
  else { *why = "the scheme is not http or https"; return UV_EINVAL; }
  const char *a = pt.auth.p, *aend = a + pt.auth.n, *at = NULL;
  for (const char *q = a; q < aend; q++) if (*q == '@') at = q;
  int bad = 0, r = 0;
  if (at) {
    const char *colon = memchr(a, ':', (size_t)(at - a));
    const char *uend = colon ? colon : at;
    u->user = url__decode(a, (size_t)(uend - a), &bad);
    if (u->user && colon) u->pass = url__decode(colon + 1, (size_t)(at - colon - 1), &bad);
    if (bad) { *why = "bad percent-escape in the userinfo"; goto einval; }
    if (!u->user || (colon && !u->pass)) goto enomem;
    a = at + 1;
  }
  const char *hs = a, *he, *port = NULL;
  if (a < aend && *a == '[') {
    const char *rb = memchr(a, ']', (size_t)(aend - a));
    if (!rb) { *why = "missing ']' in the host"; goto einval; }
    hs = a + 1;
    he = rb;
    if (rb + 1 < aend) {
      if (rb[1] != ':') { *why = "junk after the IPv6 address"; goto einval; }
      port = rb + 2;
    }
  } else {
    const char *colon = memchr(a, ':', (size_t)(aend - a));
    he = colon ? colon : aend;
    if (colon) port = colon + 1;
  }
  if (he == hs) { *why = "the URL has no host"; goto einval; }
  if (port) {
    long v = 0;
    for (const char *q = port; q < aend; q++) {
      if (*q < '0' || *q > '9' || (v = v * 10 + (*q - '0')) > 65535) { *why = "invalid port"; goto einval; }
    }
    if (port < aend) {
      if (v == 0) { *why = "invalid port"; goto einval; }
      u->port = (int)v;
      u->has_port = true;
    }
  }
  if (!u->has_port) u->port = is_https ? 443 : 80;
  for (const char *q = hs; q < he; q++) {
    unsigned char c = (unsigned char)*q;
    if (c >= 0x80) { *why = "internationalized host names are not supported (write the xn-- form)"; goto einval; }
    if (!(((c | 32) >= 'a' && (c | 32) <= 'z') || (c >= '0' && c <= '9') || strchr(".-_~!$&'()*+,;=%:", c)) ||
        (c == ':' && hs == a)) {
      *why = "invalid character in the host";
      goto einval;
    }
  }
  /* An IPv6 zone is written %25zone. */
  u->host = url__decode(hs, (size_t)(he - hs), &bad);
  if (bad) { *why = "bad percent-escape in the host"; goto einval; }
  if (!u->host || !(u->hostname = strdup(u->host))) goto enomem;
  for (char *q = u->host; *q; q++) if (*q >= 'A' && *q <= 'Z') *q = (char)(*q + 32);
  if (!(u->scheme = strdup(is_https ? "https" : "http"))) goto enomem;
  if (!(u->authority = strndup(a, (size_t)(aend - a)))) goto enomem;
  buf_t t = BUF_INIT, c = BUF_INIT, sh = BUF_INIT;
  r |= pt.path.n ? url__escape(&t, pt.path.p, pt.path.n) : buf_putc(&t, '/');
  r |= buf_printf(&c, "%s://%s", u->scheme, u->authority);
  r |= buf_append(&c, t.data, t.len);
  r |= buf_append(&sh, c.data, c.len);
  if (pt.query.set) {
    r |= buf_putc(&t, '?');
    r |= url__escape(&t, pt.query.p, pt.query.n);
    r |= buf_putc(&c, '?');
    r |= url__escape(&c, pt.query.p, pt.query.n);
    /* Values of a query may be secrets (signed URLs, tokens): messages show only the keys. */
    r |= buf_putc(&sh, '?');
    const char *q = pt.query.p, *qe = q + pt.query.n;
    while (q < qe) {
      const char *amp = memchr(q, '&', (size_t)(qe - q));
      if (!amp) amp = qe;
      const char *eq = memchr(q, '=', (size_t)(amp - q));
      r |= url__escape(&sh, q, (size_t)((eq ? eq : amp) - q));
      if (eq) r |= buf_puts(&sh, "=xxxxx");
      if (amp < qe) r |= buf_putc(&sh, '&');
      q = amp + 1;
    }
  }
  if (r || !(u->target = buf_steal(&t)) || !(u->clean = buf_steal(&c)) || !(u->shown = buf_steal(&sh))) {
    buf_free(&t);
    buf_free(&c);
    buf_free(&sh);
    goto enomem;
  }
  return 0;
einval:
  watch_url_free(u);
  return UV_EINVAL;
enomem:
  watch_url_free(u);
  *why = "out of memory";
  return UV_ENOMEM;
}
