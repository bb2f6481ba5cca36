#include "watch/proxyenv.h"
#include "base/b64.h"
#include "base/buf.h"
#include <arpa/inet.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>

/* A net.IP: 4 or 16 bytes. */
typedef struct {
  unsigned char b[16];
  int len;
} px__ip_t;

enum { PX_CIDR, PX_IP, PX_DOMAIN };

struct watch_noproxy_rule_s {
  int kind;
  px__ip_t ip, mask;  /* PX_CIDR: network and mask; PX_IP: the address (16 bytes) */
  char *host;         /* PX_DOMAIN: always starts with '.' */
  char *port;         /* "" when none */
  bool match_host;    /* PX_DOMAIN: also the name itself (no leading '.' was written) */
};

static const unsigned char px__v4in6[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};

/* ip.To4(): 0 when it has no IPv4 form. */
static int px__to4(const px__ip_t *ip, px__ip_t *out) {
  if (ip->len == 4) { *out = *ip; return 1; }
  if (ip->len == 16 && !memcmp(ip->b, px__v4in6, 12)) {
    memcpy(out->b, ip->b + 12, 4);
    out->len = 4;
    return 1;
  }
  return 0;
}

/* netip.ParseAddr without a zone: 1 and *is4 when s is an IPv4 or IPv6 literal (16 bytes in out). */
static int px__parse_addr(const char *s, size_t n, unsigned char out[16], int *is4) {
  char tmp[64];
  if (n == 0 || n >= sizeof tmp) return 0;
  memcpy(tmp, s, n);
  tmp[n] = 0;
  unsigned char a4[4];
  if (inet_pton(AF_INET, tmp, a4) == 1) {
    memcpy(out, px__v4in6, 12);
    memcpy(out + 12, a4, 4);
    *is4 = 1;
    return 1;
  }
  *is4 = 0;
  return inet_pton(AF_INET6, tmp, out) == 1;
}

static bool px__equal(const px__ip_t *a, const px__ip_t *b) {
  if (a->len == b->len) return !memcmp(a->b, b->b, (size_t)a->len);
  const px__ip_t *l = a->len == 16 ? a : b, *s = a->len == 16 ? b : a;
  return s->len == 4 && l->len == 16 && !memcmp(l->b, px__v4in6, 12) && !memcmp(l->b + 12, s->b, 4);
}

/* IPNet.Contains, with networkNumberAndMask's handling of mixed lengths. */
static bool px__contains(const watch_noproxy_rule_t *r, const px__ip_t *ip0) {
  px__ip_t nn, m = r->mask, ip = *ip0, x;
  if (!px__to4(&r->ip, &nn)) {
    nn = r->ip;
    if (nn.len != 16) return false;
  }
  if (m.len == 4) {
    if (nn.len != 4) return false;
  } else if (m.len == 16) {
    if (nn.len == 4) {
      memmove(m.b, m.b + 12, 4);
      m.len = 4;
    }
  } else {
    return false;
  }
  if (px__to4(&ip, &x)) ip = x;
  if (ip.len != nn.len) return false;
  for (int i = 0; i < ip.len; i++)
    if ((nn.b[i] & m.b[i]) != (ip.b[i] & m.b[i])) return false;
  return true;
}

/* net.SplitHostPort: 0 on success. */
static int px__split_host_port(const char *s, size_t n, const char **h, size_t *hl, const char **p, size_t *pl) {
  const char *last = NULL;
  for (size_t i = 0; i < n; i++) if (s[i] == ':') last = s + i;
  if (!last) return -1;
  size_t i = (size_t)(last - s), j = 0, k = 0;
  if (s[0] == '[') {
    const char *rb = memchr(s, ']', n);
    if (!rb) return -1;
    size_t end = (size_t)(rb - s);
    if (end + 1 == n) return -1;
    if (end + 1 != i) return -1;
    *h = s + 1;
    *hl = end - 1;
    j = 1;
    k = end + 1;
  } else {
    *h = s;
    *hl = i;
    if (memchr(s, ':', i)) return -1;
  }
  if (memchr(s + j, '[', n - j)) return -1;
  if (memchr(s + k, ']', n - k)) return -1;
  *p = s + i + 1;
  *pl = n - i - 1;
  return 0;
}

static void px__url_free(watch_proxy_url_t *u) {
  if (!u) return;
  free(u->scheme);
  free(u->host);
  free(u->auth);
  free(u->shown);
  free(u);
}

void watch_proxy_env_free(watch_proxy_env_t *e) {
  px__url_free(e->http);
  px__url_free(e->https);
  for (size_t i = 0; i < e->n_rules; i++) {
    free(e->rules[i].host);
    free(e->rules[i].port);
  }
  free(e->rules);
  memset(e, 0, sizeof *e);
}

static int px__hex(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  c |= 32;
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

static int px__unescape(buf_t *b, const char *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (p[i] == '%') {
      int h, l;
      if (i + 2 >= n || (h = px__hex(p[i + 1])) < 0 || (l = px__hex(p[i + 2])) < 0) return UV_EINVAL;
      if (buf_putc(b, (char)(h * 16 + l))) return UV_ENOMEM;
      i += 2;
    } else if (buf_putc(b, p[i])) {
      return UV_ENOMEM;
    }
  }
  return 0;
}

/* Go's url.Parse, as far as a proxy value needs it: 0 with the parts (scheme and host may be
 * empty; *has_host says whether URL.Host, the host and port, is), UV_EINVAL when Go's parse fails. */
static int px__parse_url(const char *s, watch_proxy_url_t **out, int *has_host) {
  *out = NULL;
  size_t n = strlen(s);
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f) return UV_EINVAL;
  /* getScheme */
  size_t i = 0;
  for (; i < n; i++) {
    char c = s[i];
    if ((c | 32) >= 'a' && (c | 32) <= 'z') continue;
    if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.') {
      if (i == 0) break;
      continue;
    }
    break;
  }
  *has_host = 0;
  size_t sl = 0;
  const char *rest = s;
  if (i < n && s[i] == ':') {
    if (i == 0) return UV_EINVAL; /* missing protocol scheme */
    sl = i;
    rest = s + i + 1;
  }
  const char *end = s + n;
  const char *hash = memchr(rest, '#', (size_t)(end - rest));
  if (hash) end = hash;
  const char *qm = memchr(rest, '?', (size_t)(end - rest));
  const char *pend = qm ? qm : end;
  const char *a, *ae;
  if (pend - rest >= 2 && rest[0] == '/' && rest[1] == '/') {
    a = rest + 2;
    ae = a;
    while (ae < pend && *ae != '/') ae++;
  } else {
    /* No authority: a path (or an opaque part after a scheme). Without a scheme its first
     * segment must not hold a colon. */
    if (!sl && rest < pend && *rest != '/') {
      const char *slash = memchr(rest, '/', (size_t)(pend - rest));
      if (memchr(rest, ':', (size_t)((slash ? slash : pend) - rest))) return UV_EINVAL;
    }
    a = ae = rest;
  }
  /* The path must unescape. */
  for (const char *q = ae; q < pend; q++)
    if (*q == '%' && (pend - q < 3 || px__hex(q[1]) < 0 || px__hex(q[2]) < 0)) return UV_EINVAL;
  const char *at = NULL;
  for (const char *q = a; q < ae; q++) if (*q == '@') at = q;
  watch_proxy_url_t *u = calloc(1, sizeof *u);
  buf_t user = BUF_INIT, pass = BUF_INIT, host = BUF_INIT, tmp = BUF_INIT;
  int r = 0, have_pass = 0;
  if (!u) return UV_ENOMEM;
  if (at) {
    for (const char *q = a; q < at; q++) {
      unsigned char c = (unsigned char)*q;
      if (!(((c | 32) >= 'a' && (c | 32) <= 'z') || (c >= '0' && c <= '9') || strchr("-._:~!$&'()*+,;=%@", c))) {
        r = UV_EINVAL;
        goto done;
      }
    }
    const char *colon = memchr(a, ':', (size_t)(at - a));
    if ((r = px__unescape(&user, a, (size_t)((colon ? colon : at) - a)))) goto done;
    if (colon) {
      have_pass = 1;
      if ((r = px__unescape(&pass, colon + 1, (size_t)(at - colon - 1)))) goto done;
    }
    a = at + 1;
  }
  const char *hs = a, *he = ae, *port = NULL;
  if (a < ae && *a == '[') {
    const char *rb = memchr(a, ']', (size_t)(ae - a));
    if (!rb) { r = UV_EINVAL; goto done; }
    hs = a + 1;
    he = rb;
    if (rb + 1 < ae) {
      if (rb[1] != ':') { r = UV_EINVAL; goto done; }
      port = rb + 2;
    }
  } else {
    const char *colon = NULL;
    for (const char *q = a; q < ae; q++) if (*q == ':') colon = q;
    if (colon) { he = colon; port = colon + 1; }
    if (colon && memchr(a, ':', (size_t)(colon - a))) { r = UV_EINVAL; goto done; }
  }
  for (const char *q = port; q && q < ae; q++) if (*q < '0' || *q > '9') { r = UV_EINVAL; goto done; }
  if ((r = px__unescape(&host, hs, (size_t)(he - hs)))) goto done;
  *has_host = ae > a;
  if (!(u->scheme = strndup(s, sl)) || !(u->host = host.len ? buf_steal(&host) : strdup(""))) { r = UV_ENOMEM; goto done; }
  for (char *q = u->scheme; *q; q++) if (*q >= 'A' && *q <= 'Z') *q = (char)(*q + 32);
  long pv = -1;
  if (port && port < ae && ae - port <= 5) pv = strtol(port, NULL, 10);
  else if (port && port < ae) pv = 99999;
  u->port = pv >= 0 ? (int)pv : !strcmp(u->scheme, "https") ? 443 : !strcmp(u->scheme, "socks5") ? 1080 : 80;
  if (at) {
    r |= buf_append(&tmp, user.data ? user.data : "", user.len);
    r |= buf_putc(&tmp, ':');
    if (have_pass) r |= buf_append(&tmp, pass.data ? pass.data : "", pass.len);
    char *enc = NULL;
    size_t el;
    if (r || b64_encode_alloc(tmp.data, tmp.len, &enc, &el)) { r = UV_ENOMEM; goto done; }
    buf_reset(&tmp);
    r = buf_printf(&tmp, "Basic %s", enc);
    free(enc);
    if (r || !(u->auth = buf_steal(&tmp))) { r = UV_ENOMEM; goto done; }
  }
  buf_reset(&tmp);
  r = strchr(u->host, ':') ? buf_printf(&tmp, "%s://[%s]:%d", u->scheme, u->host, u->port)
                           : buf_printf(&tmp, "%s://%s:%d", u->scheme, u->host, u->port);
  if (r || !(u->shown = buf_steal(&tmp))) r = UV_ENOMEM;
done:
  buf_free(&user);
  buf_free(&pass);
  buf_free(&host);
  buf_free(&tmp);
  if (r) {
    px__url_free(u);
    return r;
  }
  *out = u;
  return 0;
}

/* Go's parseProxy: the value as a URL, else with "http://" in front; NULL when neither works. */
static int px__parse_proxy(const char *v, const char *from, watch_proxy_url_t **out) {
  *out = NULL;
  if (!v || !*v) return 0;
  int has_host;
  int r = px__parse_url(v, out, &has_host);
  if (r == UV_ENOMEM) return r;
  if (r || !*(*out)->scheme || !has_host) {
    /* As Go: try again with http:// in front; when that fails too, the first answer stands
     * unless it was an error. */
    buf_t b = BUF_INIT;
    watch_proxy_url_t *second = NULL;
    if (buf_printf(&b, "http://%s", v)) return UV_ENOMEM;
    int r2 = px__parse_url(b.data, &second, &has_host);
    buf_free(&b);
    if (r2 == UV_ENOMEM) return r2;
    if (!r2) {
      px__url_free(*out);
      *out = second;
      r = 0;
    }
  }
  if (r == UV_EINVAL) return 0; /* ignored, as Go ignores it */
  (*out)->from = from;
  return 0;
}

static int px__add(watch_proxy_env_t *e, const watch_noproxy_rule_t *r) {
  watch_noproxy_rule_t *n = realloc(e->rules, (e->n_rules + 1) * sizeof *n);
  if (!n) return UV_ENOMEM;
  e->rules = n;
  e->rules[e->n_rules++] = *r;
  return 0;
}

static int px__is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'; }

/* One NO_PROXY entry (already trimmed and lower-cased), as httpproxy's config.init reads it. */
static int px__entry(watch_proxy_env_t *e, char *p, size_t n) {
  watch_noproxy_rule_t r = {0};
  /* IPv4/CIDR, IPv6/CIDR */
  const char *slash = memchr(p, '/', n);
  if (slash) {
    unsigned char a[16];
    int is4;
    size_t al = (size_t)(slash - p), ml = n - al - 1;
    const char *m = slash + 1;
    if (px__parse_addr(p, al, a, &is4)) {
      long bits = 0;
      size_t k = 0;
      for (; k < ml && m[k] >= '0' && m[k] <= '9'; k++) {
        bits = bits * 10 + (m[k] - '0');
        if (bits >= 0xFFFFFF) break;
      }
      int maxbits = is4 ? 32 : 128;
      if (k > 0 && k == ml && bits <= maxbits) {
        r.kind = PX_CIDR;
        r.mask.len = is4 ? 4 : 16;
        for (int i = 0; i < r.mask.len; i++) {
          int left = (int)bits - i * 8;
          r.mask.b[i] = left >= 8 ? 0xff : left <= 0 ? 0 : (unsigned char)(0xff << (8 - left));
        }
        /* IP(addr16).Mask(m) */
        if (is4) {
          r.ip.len = 4;
          for (int i = 0; i < 4; i++) r.ip.b[i] = a[12 + i] & r.mask.b[i];
        } else {
          r.ip.len = 16;
          for (int i = 0; i < 16; i++) r.ip.b[i] = a[i] & r.mask.b[i];
        }
        if (!(r.port = strdup(""))) return UV_ENOMEM;
        return px__add(e, &r) ? (free(r.port), UV_ENOMEM) : 0;
      }
    }
  }
  const char *h, *pp = "";
  size_t hl, pl = 0;
  if (px__split_host_port(p, n, &h, &hl, &pp, &pl) == 0) {
    if (hl == 0) return 0;
    if (h[0] == '[' && h[hl - 1] == ']') { h++; hl -= hl >= 2 ? 2 : hl; }
  } else {
    h = p;
    hl = n;
    pp = "";
    pl = 0;
  }
  unsigned char a[16];
  int is4;
  if (px__parse_addr(h, hl, a, &is4)) {
    r.kind = PX_IP;
    r.ip.len = 16;
    memcpy(r.ip.b, a, 16);
    if (!(r.port = strndup(pp, pl))) return UV_ENOMEM;
    return px__add(e, &r) ? (free(r.port), UV_ENOMEM) : 0;
  }
  if (hl == 0) return 0;
  if (hl >= 2 && h[0] == '*' && h[1] == '.') { h++; hl--; }
  r.kind = PX_DOMAIN;
  r.match_host = h[0] != '.';
  buf_t b = BUF_INIT;
  int x = r.match_host ? buf_putc(&b, '.') : 0;
  x |= buf_append(&b, h, hl);
  if (x || !(r.host = buf_steal(&b)) || !(r.port = strndup(pp, pl)) || px__add(e, &r)) {
    buf_free(&b);
    free(r.host);
    free(r.port);
    return UV_ENOMEM;
  }
  return 0;
}

int watch_proxy_env_init(watch_proxy_env_t *e, const char *http_proxy, const char *https_proxy, const char *no_proxy,
                         bool cgi) {
  memset(e, 0, sizeof *e);
  e->cgi = cgi;
  int r = px__parse_proxy(http_proxy, "HTTP_PROXY", &e->http);
  if (!r) r = px__parse_proxy(https_proxy, "HTTPS_PROXY", &e->https);
  for (const char *s = no_proxy ? no_proxy : ""; !r && *s && !e->all;) {
    const char *c = strchr(s, ',');
    size_t n = c ? (size_t)(c - s) : strlen(s);
    const char *a = s, *z = s + n;
    while (a < z && px__is_space(*a)) a++;
    while (z > a && px__is_space(z[-1])) z--;
    if (z > a) {
      char *p = strndup(a, (size_t)(z - a));
      if (!p) { r = UV_ENOMEM; break; }
      for (char *q = p; *q; q++) if (*q >= 'A' && *q <= 'Z') *q = (char)(*q + 32);
      if (!strcmp(p, "*")) e->all = true;
      else r = px__entry(e, p, (size_t)(z - a));
      free(p);
    }
    s = c ? c + 1 : s + n;
  }
  if (r) watch_proxy_env_free(e);
  return r;
}

static const char *px__env(const char *upper, const char *lower) {
  const char *v = getenv(upper);
  if (v && *v) return v;
  v = getenv(lower);
  return v && *v ? v : NULL;
}

int watch_proxy_env_from_environ(watch_proxy_env_t *e) {
  const char *rm = getenv("REQUEST_METHOD");
  return watch_proxy_env_init(e, px__env("HTTP_PROXY", "http_proxy"), px__env("HTTPS_PROXY", "https_proxy"),
                              px__env("NO_PROXY", "no_proxy"), rm && *rm);
}

bool watch_proxy_env_use(const watch_proxy_env_t *e, const char *host, int port) {
  if (!strcmp(host, "localhost")) return false;
  /* netip.ParseAddr: IPv6 may carry a zone, which no rule looks at. */
  px__ip_t ip = {{0}, 0};
  const char *pct = strchr(host, '%');
  size_t hl = pct ? (size_t)(pct - host) : strlen(host);
  unsigned char a[16];
  int is4;
  if ((!pct || (pct[1] && memchr(host, ':', hl))) && px__parse_addr(host, hl, a, &is4) && !(pct && is4)) {
    if (is4) {
      ip.len = 4;
      memcpy(ip.b, a + 12, 4);
    } else {
      ip.len = 16;
      memcpy(ip.b, a, 16);
    }
    px__ip_t v4;
    static const unsigned char lo6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    if (px__to4(&ip, &v4) ? v4.b[0] == 127 : !memcmp(ip.b, lo6, 16)) return false;
  }
  if (e->all) return false;
  char ps[16];
  snprintf(ps, sizeof ps, "%d", port);
  size_t n = strlen(host);
  char *low = malloc(n + 1);
  if (!low) return true;
  for (size_t i = 0; i <= n; i++) low[i] = (char)(host[i] >= 'A' && host[i] <= 'Z' ? host[i] + 32 : host[i]);
  bool use = true;
  for (size_t i = 0; use && i < e->n_rules; i++) {
    const watch_noproxy_rule_t *r = &e->rules[i];
    if (r->kind == PX_CIDR) {
      if (ip.len && px__contains(r, &ip)) use = false;
    } else if (r->kind == PX_IP) {
      if (ip.len && px__equal(&r->ip, &ip) && (!*r->port || !strcmp(r->port, ps))) use = false;
    } else if (!ip.len) {
      size_t rl = strlen(r->host);
      bool suffix = n >= rl && !memcmp(low + n - rl, r->host, rl);
      if ((suffix || (r->match_host && !strcmp(low, r->host + 1))) && (!*r->port || !strcmp(r->port, ps))) use = false;
    }
  }
  free(low);
  return use;
}

const watch_proxy_url_t *watch_proxy_env_for(const watch_proxy_env_t *e, bool https, const char *host, int port,
                                             const char **err) {
  *err = NULL;
  const watch_proxy_url_t *p = https ? e->https : e->http;
  if (!p) return NULL;
  if (!https && e->cgi) {
    *err = "refusing to use HTTP_PROXY value in CGI environment; see golang.org/s/cgihttpproxy";
    return NULL;
  }
  if (!watch_proxy_env_use(e, host, port)) return NULL;
  return p;
}
