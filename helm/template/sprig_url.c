/* Sprig's urlParse and urlJoin on a port of Go's net/url (Go 1.26): Parse
 * (scheme, opaque, authority with userinfo and host, IP literals checked like
 * netip.ParseAddr, path and fragment unescaping, ForceQuery, OmitHost),
 * URL.String with EscapedPath/EscapedFragment, Userinfo.String, Hostname,
 * and the error texts (url.Error, EscapeError, InvalidHostError,
 * parseAddrError). GODEBUG urlstrictcolons=1 (Go 1.26's default). */
#include <string.h>

#include "helm/template/sprig_internal.h"

enum {
  ENC_PATH = 1 << 0,
  ENC_PATH_SEGMENT = 1 << 1,
  ENC_HOST = 1 << 2,
  ENC_ZONE = 1 << 3,
  ENC_USER_PASSWORD = 1 << 4,
  ENC_QUERY_COMPONENT = 1 << 5,
  ENC_FRAGMENT = 1 << 6,
};

typedef struct {
  const char *p;
  size_t n;
} str_t;

static str_t S(const char *p, size_t n) {
  str_t s = {p, n};
  return s;
}
static str_t sub(str_t s, size_t from, size_t to) { return S(s.p + from, to - from); }
static bool eq(str_t a, const char *b) { return a.n == strlen(b) && memcmp(a.p, b, a.n) == 0; }
static long idx(str_t s, char c) {
  for (size_t i = 0; i < s.n; i++)
    if (s.p[i] == c) return (long)i;
  return -1;
}
static long ridx(str_t s, char c) {
  for (size_t i = s.n; i > 0; i--)
    if (s.p[i - 1] == c) return (long)(i - 1);
  return -1;
}
static bool has_prefix(str_t s, const char *p) {
  size_t k = strlen(p);
  return s.n >= k && memcmp(s.p, p, k) == 0;
}
static long idx_str(str_t s, const char *needle) {
  size_t k = strlen(needle);
  for (size_t i = 0; i + k <= s.n; i++)
    if (memcmp(s.p + i, needle, k) == 0) return (long)i;
  return -1;
}

static bool ishex(unsigned char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
static unsigned char unhex(unsigned char c) { return (unsigned char)(9 * (c >> 6) + (c & 15)); }

/* net/url's shouldEscape (gen_encoding_table.go's reference function). */
static bool should_escape(unsigned char c, int mode) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')) return false;
  if (mode == ENC_HOST || mode == ENC_ZONE) {
    switch (c) {
    case '!': case '$': case '&': case '\'': case '(': case ')': case '*': case '+': case ',': case ';':
    case '=': case ':': case '[': case ']': case '<': case '>': case '"':
      return false;
    }
  }
  switch (c) {
  case '-': case '_': case '.': case '~':
    return false;
  case '$': case '&': case '+': case ',': case '/': case ':': case ';': case '=': case '?': case '@':
    switch (mode) {
    case ENC_PATH: return c == '?';
    case ENC_PATH_SEGMENT: return c == '/' || c == ';' || c == ',' || c == '?';
    case ENC_USER_PASSWORD: return c == '@' || c == '/' || c == '?' || c == ':';
    case ENC_QUERY_COMPONENT: return true;
    case ENC_FRAGMENT: return false;
    }
  }
  if (mode == ENC_FRAGMENT) {
    switch (c) {
    case '!': case '(': case ')': case '*':
      return false;
    }
  }
  return true;
}

static void quote(buf_t *b, str_t s) { tpl_fmt_quote(b, s.p, s.n); }

/* unescape: 0 with the result in *out (arena), -1 with the message in err. */
static int unescape(tpl_arena_t *a, str_t s, int mode, str_t *out, buf_t *err) {
  size_t n = 0;
  bool has_plus = false;
  for (size_t i = 0; i < s.n;) {
    unsigned char c = (unsigned char)s.p[i];
    if (c == '%') {
      n++;
      if (i + 2 >= s.n || !ishex((unsigned char)s.p[i + 1]) || !ishex((unsigned char)s.p[i + 2])) {
        str_t e = sub(s, i, s.n);
        if (e.n > 3) e.n = 3;
        buf_puts(err, "invalid URL escape ");
        quote(err, e);
        return -1;
      }
      str_t three = sub(s, i, i + 3);
      if (mode == ENC_HOST && unhex((unsigned char)s.p[i + 1]) < 8 && !eq(three, "%25")) {
        buf_puts(err, "invalid URL escape ");
        quote(err, three);
        return -1;
      }
      if (mode == ENC_ZONE) {
        unsigned char v = (unsigned char)(unhex((unsigned char)s.p[i + 1]) << 4 | unhex((unsigned char)s.p[i + 2]));
        if (!eq(three, "%25") && v != ' ' && should_escape(v, ENC_HOST)) {
          buf_puts(err, "invalid URL escape ");
          quote(err, three);
          return -1;
        }
      }
      i += 3;
    } else if (c == '+') {
      has_plus = mode == ENC_QUERY_COMPONENT;
      i++;
    } else {
      if ((mode == ENC_HOST || mode == ENC_ZONE) && c < 0x80 && should_escape(c, mode)) {
        buf_puts(err, "invalid character ");
        quote(err, sub(s, i, i + 1));
        buf_puts(err, " in host name");
        return -1;
      }
      i++;
    }
  }
  if (n == 0 && !has_plus) {
    *out = s;
    return 0;
  }
  char *t = tpl_arena_alloc(a, s.n + 1);
  if (!t) return TPL_ENOMEM;
  size_t j = 0;
  for (size_t i = 0; i < s.n; i++) {
    if (s.p[i] == '%') {
      t[j++] = (char)(unhex((unsigned char)s.p[i + 1]) << 4 | unhex((unsigned char)s.p[i + 2]));
      i += 2;
    } else if (s.p[i] == '+') {
      t[j++] = mode == ENC_QUERY_COMPONENT ? ' ' : '+';
    } else {
      t[j++] = s.p[i];
    }
  }
  *out = S(t, j);
  return 0;
}

static int escape(buf_t *b, str_t s, int mode) {
  static const char hex[] = "0123456789ABCDEF";
  for (size_t i = 0; i < s.n; i++) {
    unsigned char c = (unsigned char)s.p[i];
    int rc;
    if (c == ' ' && mode == ENC_QUERY_COMPONENT) {
      rc = buf_putc(b, '+');
    } else if (should_escape(c, mode)) {
      char t[3] = {'%', hex[c >> 4], hex[c & 15]};
      rc = buf_append(b, t, 3);
    } else {
      rc = buf_putc(b, (char)c);
    }
    if (rc) return TPL_ENOMEM;
  }
  return 0;
}

typedef struct {
  str_t scheme, opaque, host, path, raw_path, fragment, raw_fragment, raw_query;
  bool has_user, password_set, force_query, omit_host;
  str_t username, password;
} url_t;

/* ---- netip.ParseAddr (only whether it parses, and its error) ---- */

static void addr_err(buf_t *err, str_t in, const char *msg, const str_t *at) {
  buf_puts(err, "ParseAddr(");
  quote(err, in);
  buf_puts(err, "): ");
  buf_puts(err, msg);
  if (at && at->n) {
    buf_puts(err, " (at ");
    quote(err, *at);
    buf_puts(err, ")");
  }
}

static int ipv4_fields(str_t in, size_t off, size_t end, buf_t *err) {
  int val = 0, pos = 0, dig = 0;
  str_t s = sub(in, off, end);
  for (size_t i = 0; i < s.n; i++) {
    char c = s.p[i];
    if (c >= '0' && c <= '9') {
      if (dig == 1 && val == 0) return addr_err(err, in, "IPv4 field has octet with leading zero", NULL), -1;
      val = val * 10 + (c - '0');
      dig++;
      if (val > 255) return addr_err(err, in, "IPv4 field has value >255", NULL), -1;
    } else if (c == '.') {
      if (i == 0 || i == s.n - 1 || s.p[i - 1] == '.') {
        str_t at = sub(s, i, s.n);
        return addr_err(err, in, "IPv4 field must have at least one digit", &at), -1;
      }
      if (pos == 3) return addr_err(err, in, "IPv4 address too long", NULL), -1;
      pos++;
      val = 0;
      dig = 0;
    } else {
      str_t at = sub(s, i, s.n);
      return addr_err(err, in, "unexpected character", &at), -1;
    }
  }
  if (pos < 3) return addr_err(err, in, "IPv4 address too short", NULL), -1;
  return 0;
}

/* Returns 4 (IPv4), 6 (IPv6, including 4-in-6) or -1 (err set). */
static int parse_addr(str_t in, buf_t *err) {
  for (size_t k = 0; k < in.n; k++) {
    if (in.p[k] == '.') return ipv4_fields(in, 0, in.n, err) ? -1 : 4;
    if (in.p[k] == '%') return addr_err(err, in, "missing IPv6 address", NULL), -1;
    if (in.p[k] != ':') continue;
    str_t s = in, zone = S("", 0);
    long z = idx(s, '%');
    if (z >= 0) {
      zone = sub(s, (size_t)z + 1, s.n);
      s = sub(s, 0, (size_t)z);
      if (!zone.n) return addr_err(err, in, "zone must be a non-empty string", NULL), -1;
    }
    int ellipsis = -1, i = 0;
    if (s.n >= 2 && s.p[0] == ':' && s.p[1] == ':') {
      ellipsis = 0;
      s = sub(s, 2, s.n);
      if (!s.n) return 6;
    }
    while (i < 16) {
      size_t off = 0;
      uint32_t acc = 0;
      for (; off < s.n; off++) {
        char c = s.p[off];
        if (c >= '0' && c <= '9') acc = (acc << 4) + (uint32_t)(c - '0');
        else if (c >= 'a' && c <= 'f') acc = (acc << 4) + (uint32_t)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F') acc = (acc << 4) + (uint32_t)(c - 'A' + 10);
        else break;
        if (off > 3) return addr_err(err, in, "each group must have 4 or less digits", &s), -1;
        if (acc > 0xffff) return addr_err(err, in, "IPv6 field has value >=2^16", &s), -1;
      }
      if (off == 0) return addr_err(err, in, "each colon-separated field must have at least one digit", &s), -1;
      if (off < s.n && s.p[off] == '.') {
        if (ellipsis < 0 && i != 12)
          return addr_err(err, in, "embedded IPv4 address must replace the final 2 fields of the address", &s), -1;
        if (i + 4 > 16)
          return addr_err(err, in, "too many hex fields to fit an embedded IPv4 at the end of the address", &s), -1;
        size_t end = in.n;
        if (zone.n) end -= zone.n + 1;
        if (ipv4_fields(in, end - s.n, end, err)) return -1;
        s = S("", 0);
        i += 4;
        break;
      }
      i += 2;
      s = sub(s, off, s.n);
      if (!s.n) break;
      if (s.p[0] != ':') return addr_err(err, in, "unexpected character, want colon", &s), -1;
      if (s.n == 1) return addr_err(err, in, "colon must be followed by more characters", &s), -1;
      s = sub(s, 1, s.n);
      if (s.p[0] == ':') {
        if (ellipsis >= 0) return addr_err(err, in, "multiple :: in address", &s), -1;
        ellipsis = i;
        s = sub(s, 1, s.n);
        if (!s.n) break;
      }
    }
    if (s.n) return addr_err(err, in, "trailing garbage after address", &s), -1;
    if (i < 16) {
      if (ellipsis < 0) return addr_err(err, in, "address string too short", NULL), -1;
    } else if (ellipsis >= 0) {
      return addr_err(err, in, "the :: must expand to at least one field of zeros", NULL), -1;
    }
    return 6;
  }
  return addr_err(err, in, "unable to parse IP", NULL), -1;
}

static bool valid_optional_port(str_t p) {
  if (!p.n) return true;
  if (p.p[0] != ':') return false;
  for (size_t i = 1; i < p.n; i++)
    if (p.p[i] < '0' || p.p[i] > '9') return false;
  return true;
}

static int str_cat(tpl_arena_t *a, str_t *out, str_t x, str_t y, str_t z) {
  char *t = tpl_arena_alloc(a, x.n + y.n + z.n + 1);
  if (!t) return TPL_ENOMEM;
  memcpy(t, x.p, x.n);
  memcpy(t + x.n, y.p, y.n);
  memcpy(t + x.n + y.n, z.p, z.n);
  *out = S(t, x.n + y.n + z.n);
  return 0;
}

static int parse_host(tpl_arena_t *a, str_t scheme, str_t host, str_t *out, buf_t *err) {
  long ob = ridx(host, '[');
  if (ob > 0) return buf_puts(err, "invalid IP-literal"), -1;
  if (ob == 0) {
    long cb = ridx(host, ']');
    if (cb < 0) return buf_puts(err, "missing ']' in host"), -1;
    str_t colon_port = sub(host, (size_t)cb + 1, host.n);
    if (!valid_optional_port(colon_port)) {
      buf_puts(err, "invalid port ");
      quote(err, colon_port);
      buf_puts(err, " after host");
      return -1;
    }
    str_t ucp, uh;
    int rc = unescape(a, colon_port, ENC_HOST, &ucp, err);
    if (rc) return rc;
    str_t hostname = sub(host, 1, (size_t)cb);
    long zi = idx_str(hostname, "%25");
    if (zi >= 0) {
      str_t hp, zp;
      if ((rc = unescape(a, sub(hostname, 0, (size_t)zi), ENC_HOST, &hp, err))) return rc;
      if ((rc = unescape(a, sub(hostname, (size_t)zi, hostname.n), ENC_ZONE, &zp, err))) return rc;
      if ((rc = str_cat(a, &uh, hp, zp, S("", 0)))) return rc;
    } else if ((rc = unescape(a, hostname, ENC_HOST, &uh, err))) {
      return rc;
    }
    buf_t e2 = BUF_INIT;
    int kind = parse_addr(uh, &e2);
    if (kind < 0) {
      buf_puts(err, "invalid host: ");
      buf_append(err, e2.data, e2.len);
      buf_free(&e2);
      return -1;
    }
    if (kind == 4) return buf_puts(err, "invalid IP-literal"), -1;
    str_t tmp;
    if ((rc = str_cat(a, &tmp, S("[", 1), uh, S("]", 1)))) return rc;
    return str_cat(a, out, tmp, ucp, S("", 0));
  }
  long i = idx(host, ':');
  if (i >= 0) {
    long last = ridx(host, ':');
    if (last != i && !(eq(scheme, "http") || eq(scheme, "https"))) i = last;
    str_t colon_port = sub(host, (size_t)i, host.n);
    if (!valid_optional_port(colon_port)) {
      buf_puts(err, "invalid port ");
      quote(err, colon_port);
      buf_puts(err, " after host");
      return -1;
    }
  }
  return unescape(a, host, ENC_HOST, out, err);
}

static bool valid_userinfo(str_t s) {
  for (size_t i = 0; i < s.n; i++) {
    unsigned char c = (unsigned char)s.p[i];
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9')) continue;
    if (strchr("-._:~!$&'()*+,;=%@", c) && c) continue;
    return false; /* non-ASCII runes (and bad UTF-8) are refused too */
  }
  return true;
}

static int parse_authority(tpl_arena_t *a, url_t *u, str_t auth, buf_t *err) {
  long i = ridx(auth, '@');
  int rc = parse_host(a, u->scheme, i < 0 ? auth : sub(auth, (size_t)i + 1, auth.n), &u->host, err);
  if (rc || i < 0) return rc;
  str_t ui = sub(auth, 0, (size_t)i);
  if (!valid_userinfo(ui)) return buf_puts(err, "net/url: invalid userinfo"), -1;
  long colon = idx(ui, ':');
  if (colon < 0) {
    if ((rc = unescape(a, ui, ENC_USER_PASSWORD, &u->username, err))) return rc;
  } else {
    if ((rc = unescape(a, sub(ui, 0, (size_t)colon), ENC_USER_PASSWORD, &u->username, err))) return rc;
    if ((rc = unescape(a, sub(ui, (size_t)colon + 1, ui.n), ENC_USER_PASSWORD, &u->password, err))) return rc;
    u->password_set = true;
  }
  u->has_user = true;
  return 0;
}

/* setPath / setFragment: RawPath only when the default escaping differs. */
static int set_escaped(tpl_arena_t *a, str_t p, int mode, str_t *val, str_t *raw, buf_t *err) {
  int rc = unescape(a, p, mode, val, err);
  if (rc) return rc;
  buf_t e = BUF_INIT;
  if (escape(&e, *val, mode)) return buf_free(&e), TPL_ENOMEM;
  bool same = e.len == p.n && (p.n == 0 || memcmp(e.data, p.p, p.n) == 0);
  buf_free(&e);
  *raw = same ? S("", 0) : p;
  return 0;
}

static int parse_inner(tpl_arena_t *a, str_t raw, url_t *u, buf_t *err) {
  for (size_t i = 0; i < raw.n; i++)
    if ((unsigned char)raw.p[i] < ' ' || raw.p[i] == 0x7f)
      return buf_puts(err, "net/url: invalid control character in URL"), -1;
  if (eq(raw, "*")) {
    u->path = raw;
    return 0;
  }
  str_t rest = raw;
  for (size_t i = 0; i < raw.n; i++) {
    char c = raw.p[i];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) continue;
    if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.') {
      if (i == 0) break;
      continue;
    }
    if (c == ':') {
      if (i == 0) return buf_puts(err, "missing protocol scheme"), -1;
      char *lc = tpl_arena_alloc(a, i + 1);
      if (!lc) return TPL_ENOMEM;
      for (size_t k = 0; k < i; k++) lc[k] = (char)(raw.p[k] >= 'A' && raw.p[k] <= 'Z' ? raw.p[k] + 32 : raw.p[k]);
      u->scheme = S(lc, i);
      rest = sub(raw, i + 1, raw.n);
    }
    break;
  }
  size_t nq = 0;
  for (size_t i = 0; i < rest.n; i++) nq += rest.p[i] == '?';
  if (rest.n && rest.p[rest.n - 1] == '?' && nq == 1) {
    u->force_query = true;
    rest.n--;
  } else {
    long q = idx(rest, '?');
    if (q >= 0) {
      u->raw_query = sub(rest, (size_t)q + 1, rest.n);
      rest = sub(rest, 0, (size_t)q);
    }
  }
  if (!has_prefix(rest, "/")) {
    if (u->scheme.n) {
      u->opaque = rest;
      return 0;
    }
    long sl = idx(rest, '/');
    str_t seg = sl < 0 ? rest : sub(rest, 0, (size_t)sl);
    if (idx(seg, ':') >= 0) return buf_puts(err, "first path segment in URL cannot contain colon"), -1;
  }
  if ((u->scheme.n || !has_prefix(rest, "///")) && has_prefix(rest, "//")) {
    str_t auth = sub(rest, 2, rest.n);
    rest = S("", 0);
    long sl = idx(auth, '/');
    if (sl >= 0) {
      rest = sub(auth, (size_t)sl, auth.n);
      auth = sub(auth, 0, (size_t)sl);
    }
    int rc = parse_authority(a, u, auth, err);
    if (rc) return rc;
  } else if (u->scheme.n && has_prefix(rest, "/")) {
    u->omit_host = true;
  }
  return set_escaped(a, rest, ENC_PATH, &u->path, &u->raw_path, err);
}

static void url_error(buf_t *err, str_t url, buf_t *inner) {
  buf_t m = BUF_INIT;
  buf_puts(&m, "parse ");
  quote(&m, url);
  buf_puts(&m, ": ");
  buf_append(&m, inner->data, inner->len);
  buf_reset(inner);
  buf_append(inner, m.data, m.len);
  buf_free(&m);
}

/* url.Parse: 0, -1 (err holds the *url.Error text) or TPL_ENOMEM. */
static int url_parse(tpl_arena_t *a, str_t raw, url_t *u, buf_t *err) {
  memset(u, 0, sizeof *u);
  long h = idx(raw, '#');
  str_t base = h < 0 ? raw : sub(raw, 0, (size_t)h);
  int rc = parse_inner(a, base, u, err);
  if (rc < 0 && rc != TPL_ENOMEM) url_error(err, base, err);
  if (rc || h < 0) return rc;
  str_t frag = sub(raw, (size_t)h + 1, raw.n);
  if (!frag.n) return 0;
  rc = set_escaped(a, frag, ENC_FRAGMENT, &u->fragment, &u->raw_fragment, err);
  if (rc < 0 && rc != TPL_ENOMEM) url_error(err, raw, err);
  return rc;
}

static int userinfo_string(buf_t *b, const url_t *u) {
  if (escape(b, u->username, ENC_USER_PASSWORD)) return TPL_ENOMEM;
  if (u->password_set && (buf_putc(b, ':') || escape(b, u->password, ENC_USER_PASSWORD))) return TPL_ENOMEM;
  return 0;
}

/* URL.String for a URL built from fields (RawPath, RawFragment empty; OmitHost, ForceQuery false). */
static int url_string(buf_t *b, const url_t *u) {
  if (u->scheme.n && (buf_append(b, u->scheme.p, u->scheme.n) || buf_putc(b, ':'))) return TPL_ENOMEM;
  if (u->opaque.n) {
    if (buf_append(b, u->opaque.p, u->opaque.n)) return TPL_ENOMEM;
  } else {
    if (u->scheme.n || u->host.n || u->has_user) {
      if ((u->host.n || u->path.n || u->has_user) && buf_puts(b, "//")) return TPL_ENOMEM;
      if (u->has_user && (userinfo_string(b, u) || buf_putc(b, '@'))) return TPL_ENOMEM;
      if (u->host.n && escape(b, u->host, ENC_HOST)) return TPL_ENOMEM;
    }
    buf_t p = BUF_INIT;
    int rc = eq(u->path, "*") ? buf_putc(&p, '*') : escape(&p, u->path, ENC_PATH);
    if (rc) return buf_free(&p), TPL_ENOMEM;
    str_t path = S(p.data ? p.data : "", p.len);
    if (path.n && path.p[0] != '/' && u->host.n) rc |= buf_putc(b, '/');
    if (b->len == 0) {
      long sl = idx(path, '/');
      if (idx(sl < 0 ? path : sub(path, 0, (size_t)sl), ':') >= 0) rc |= buf_puts(b, "./");
    }
    rc |= buf_append(b, path.p, path.n);
    buf_free(&p);
    if (rc) return TPL_ENOMEM;
  }
  if (u->raw_query.n && (buf_putc(b, '?') || buf_append(b, u->raw_query.p, u->raw_query.n))) return TPL_ENOMEM;
  if (u->fragment.n && (buf_putc(b, '#') || escape(b, u->fragment, ENC_FRAGMENT))) return TPL_ENOMEM;
  return 0;
}

static int set_str(tpl_call_t *c, tpl_map_t *m, const char *k, str_t v) {
  tpl_value_t s = tpl_value_str_copy(tpl_call_arena(c), v.p ? v.p : "", v.n);
  if (s.kind == TPL_INVALID) return TPL_ENOMEM;
  return tpl_map_set(tpl_call_arena(c), m, k, strlen(k), s);
}

SPRIG_FN(f_url_parse) {
  (void)n;
  tpl_arena_t *a = tpl_call_arena(c);
  url_t u;
  buf_t err = BUF_INIT;
  int rc = url_parse(a, S(args[0].u.s.p, args[0].u.s.n), &u, &err);
  if (rc == TPL_ENOMEM) return buf_free(&err), rc;
  if (rc) {
    rc = tpl_call_errorf(c, "unable to parse url: %.*s", (int)err.len, err.data ? err.data : "");
    buf_free(&err);
    return rc;
  }
  buf_free(&err);
  tpl_value_t m = tpl_value_map_new(a, TPL_ELEM_ANY);
  if (m.kind == TPL_INVALID) return TPL_ENOMEM;
  /* Hostname(): splitHostPort without the port, brackets removed. */
  str_t hn = u.host;
  long colon = ridx(hn, ':');
  if (colon >= 0 && valid_optional_port(sub(hn, (size_t)colon, hn.n))) hn = sub(hn, 0, (size_t)colon);
  if (hn.n >= 2 && hn.p[0] == '[' && hn.p[hn.n - 1] == ']') hn = sub(hn, 1, hn.n - 1);
  buf_t ui = BUF_INIT;
  if (u.has_user && userinfo_string(&ui, &u)) return buf_free(&ui), TPL_ENOMEM;
  rc = set_str(c, m.u.map, "scheme", u.scheme);
  rc |= set_str(c, m.u.map, "host", u.host);
  rc |= set_str(c, m.u.map, "hostname", hn);
  rc |= set_str(c, m.u.map, "path", u.path);
  rc |= set_str(c, m.u.map, "query", u.raw_query);
  rc |= set_str(c, m.u.map, "opaque", u.opaque);
  rc |= set_str(c, m.u.map, "fragment", u.fragment);
  rc |= set_str(c, m.u.map, "userinfo", S(ui.data, ui.len));
  buf_free(&ui);
  if (rc) return TPL_ENOMEM;
  *out = m;
  return 0;
}

/* Sprig's dictGetOrEmpty. */
static int dict_get(tpl_call_t *c, const tpl_value_t *d, const char *key, str_t *out) {
  *out = S("", 0);
  if (!d->u.map) return 0;
  const tpl_value_t *v = tpl_map_get(d->u.map, key, strlen(key));
  if (!v) return 0;
  tpl_value_t e = sprig__elem(d, v);
  if (e.kind == TPL_NIL || e.kind == TPL_INVALID) return tpl_call_errorf(c, SPRIG_NIL_DEREF);
  if (e.kind != TPL_STRING)
    return tpl_call_errorf(c, "unable to parse %s key, must be of type string, but %s found", key,
                           sprig__kind_name(&e));
  *out = S(e.u.s.p, e.u.s.n);
  return 0;
}

SPRIG_FN(f_url_join) {
  (void)n;
  url_t u;
  memset(&u, 0, sizeof u);
  int rc;
  if ((rc = dict_get(c, &args[0], "scheme", &u.scheme)) || (rc = dict_get(c, &args[0], "host", &u.host)) ||
      (rc = dict_get(c, &args[0], "path", &u.path)) || (rc = dict_get(c, &args[0], "query", &u.raw_query)) ||
      (rc = dict_get(c, &args[0], "opaque", &u.opaque)) || (rc = dict_get(c, &args[0], "fragment", &u.fragment)))
    return rc;
  str_t ui;
  if ((rc = dict_get(c, &args[0], "userinfo", &ui))) return rc;
  if (ui.n) {
    tpl_arena_t *a = tpl_call_arena(c);
    str_t raw;
    if (str_cat(a, &raw, S("proto://", 8), ui, S("@host", 5))) return TPL_ENOMEM;
    url_t t;
    buf_t err = BUF_INIT;
    rc = url_parse(a, raw, &t, &err);
    if (rc == TPL_ENOMEM) return buf_free(&err), rc;
    if (rc) {
      rc = tpl_call_errorf(c, "unable to parse userinfo in dict: %.*s", (int)err.len, err.data ? err.data : "");
      buf_free(&err);
      return rc;
    }
    buf_free(&err);
    u.has_user = t.has_user;
    u.username = t.username;
    u.password = t.password;
    u.password_set = t.password_set;
  }
  buf_t b = BUF_INIT;
  if (url_string(&b, &u)) return buf_free(&b), TPL_ENOMEM;
  return sprig__ret_buf(c, &b, out);
}

const tpl_func_t sprig__url_fns[] = {
    {"urlParse", "s", f_url_parse, NULL, "func(string) map[string]interface {}"},
    {"urlJoin", "m", f_url_join, NULL, "func(map[string]interface {}) string"},
};
const size_t sprig__url_nfns = sizeof sprig__url_fns / sizeof sprig__url_fns[0];
