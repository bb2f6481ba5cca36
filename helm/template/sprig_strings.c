/* Sprig's string, conversion, default, reflection, path, encoding and hash
 * functions (strings.go, defaults.go, numeric.go conversions, reflect.go,
 * Go's path package, crypto hashes). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <mbedtls/sha1.h>
#include <mbedtls/sha512.h>

#include "base/b64.h"
#include "base/sha256.h"
#include "helm/template/sprig_internal.h"
#include "helm/template/unicode.h"

/* Go's unicode case mappings and predicates (tables generated from Go: unicode_tables.c). */
static int32_t to_upper(int32_t r) { return tpl_unicode_to_upper(r); }
static int32_t to_lower(int32_t r) { return tpl_unicode_to_lower(r); }
static bool is_upper(int32_t r) { return tpl_unicode_is_upper(r); }
static bool is_lower(int32_t r) { return tpl_unicode_is_lower(r); }
static bool is_title(int32_t r) { return tpl_unicode_is(TPL_U_TITLE, r); }

static void put_rune(buf_t *b, int32_t r) {
  char u[4];
  buf_append(b, u, tpl__utf8_encode(r, u));
}

/* strings.Map-style case mapping over runes (invalid bytes become U+FFFD, as Go's ToUpper does when mapping). */
static int map_case(tpl_call_t *c, const tpl_value_t *s, int32_t (*f)(int32_t), tpl_value_t *out) {
  buf_t b = BUF_INIT;
  const char *p = s->u.s.p;
  size_t n = s->u.s.n;
  bool changed = false;
  /* ASCII text: mapped straight into the arena (ASCII letters map to ASCII letters), eight bytes at
   * a time: for bytes below 0x80, adding 0x80 - lo sets a byte's top bit when it is >= lo, adding
   * 0x7F - hi when it is > hi, and no sum carries into the next byte. */
  unsigned char lo = f == to_upper ? 'a' : 'A', hi = f == to_upper ? 'z' : 'Z';
  const uint64_t ones = 0x0101010101010101ull, tops = 0x8080808080808080ull;
  uint64_t any = 0, high = 0;
  size_t k = 0;
  for (; k + 8 <= n; k += 8) {
    uint64_t x;
    memcpy(&x, p + k, 8);
    high |= x;
    any |= (x + (0x80 - lo) * ones) & ~(x + (0x7F - hi) * ones);
  }
  for (; k < n; k++) {
    unsigned char ch = (unsigned char)p[k];
    high |= ch;
    if (ch >= lo && ch <= hi) any |= 0x80;
  }
  if (!(high & tops)) {
    if (!(any & tops)) {
      *out = *s;
      return 0;
    }
    char *t = tpl_arena_text(tpl_call_arena(c), n);
    if (!t) return TPL_ENOMEM;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
      uint64_t x;
      memcpy(&x, p + i, 8);
      uint64_t m = (x + (0x80 - lo) * ones) & ~(x + (0x7F - hi) * ones) & tops;
      x ^= m >> 2; /* 0x80 >> 2: the case bit */
      memcpy(t + i, &x, 8);
    }
    for (; i < n; i++) {
      unsigned char ch = (unsigned char)p[i];
      t[i] = (char)(ch >= lo && ch <= hi ? ch ^ 0x20 : ch);
    }
    *out = tpl_value_strn(t, n);
    return 0;
  }
  for (size_t i = 0; i < n;) {
    int32_t r;
    size_t w = tpl__utf8_decode(p + i, n - i, &r);
    int32_t m = f(r);
    if (m != r || (r == 0xFFFD && w == 1)) changed = true;
    if (r == 0xFFFD && w == 1 && m == r) buf_append(&b, p + i, 1); /* kept as is unless changed around it */
    else put_rune(&b, m);
    i += w;
  }
  if (!changed) {
    buf_free(&b);
    *out = *s;
    return 0;
  }
  return sprig__ret_buf(c, &b, out);
}

SPRIG_FN(f_upper) { return map_case(c, &args[0], to_upper, out); }
SPRIG_FN(f_lower) { return map_case(c, &args[0], to_lower, out); }

/* strings.Title: upper-cases letters that begin words. */
static bool is_separator(int32_t r) {
  if (r <= 0x7F) {
    if (r >= '0' && r <= '9') return false;
    if (r >= 'a' && r <= 'z') return false;
    if (r >= 'A' && r <= 'Z') return false;
    if (r == '_') return false;
    return true;
  }
  if (tpl_unicode_is_letter(r) || tpl_unicode_is_digit(r)) return false;
  return tpl_unicode_is_space(r);
}

SPRIG_FN(f_title) {
  buf_t b = BUF_INIT;
  const char *p = args[0].u.s.p;
  size_t len = args[0].u.s.n;
  int32_t prev = ' ';
  for (size_t i = 0; i < len;) {
    int32_t r;
    size_t w = tpl__utf8_decode(p + i, len - i, &r);
    if (is_separator(prev)) put_rune(&b, tpl_unicode_to_title(r));
    else if (r == 0xFFFD && w == 1) buf_append(&b, p + i, 1);
    else put_rune(&b, r);
    prev = r;
    i += w;
  }
  return sprig__ret_buf(c, &b, out);
}

/* goutils.Uncapitalize: lower-cases the first rune after each space (over []rune(s)). */
SPRIG_FN(f_untitle) {
  buf_t b = BUF_INIT;
  const char *p = args[0].u.s.p;
  size_t len = args[0].u.s.n;
  bool next = true;
  for (size_t i = 0; i < len;) {
    int32_t r;
    size_t w = tpl__utf8_decode(p + i, len - i, &r);
    if (tpl_unicode_is_space(r)) next = true;
    else if (next) r = to_lower(r), next = false;
    put_rune(&b, r);
    i += w;
  }
  return sprig__ret_buf(c, &b, out);
}

/* goutils.SwapCase over []rune(s): upper and title case to lower; lower to upper, or to title case
 * at the start and after a space (only non-letters update "after a space"). */
SPRIG_FN(f_swapcase) {
  buf_t b = BUF_INIT;
  const char *p = args[0].u.s.p;
  size_t len = args[0].u.s.n;
  bool ws = true;
  for (size_t i = 0; i < len;) {
    int32_t r;
    size_t w = tpl__utf8_decode(p + i, len - i, &r);
    if (is_upper(r) || is_title(r)) r = to_lower(r), ws = false;
    else if (is_lower(r)) r = ws ? tpl_unicode_to_title(r) : to_upper(r), ws = false;
    else ws = tpl_unicode_is_space(r);
    put_rune(&b, r);
    i += w;
  }
  return sprig__ret_buf(c, &b, out);
}

/* strings.TrimSpace */
SPRIG_FN(f_trim) {
  const char *p = args[0].u.s.p;
  size_t s = 0, e = args[0].u.s.n;
  while (s < e) {
    int32_t r;
    size_t w = tpl__utf8_decode(p + s, e - s, &r);
    if (!tpl_unicode_is_space(r) || (r == 0xFFFD && w == 1)) break;
    s += w;
  }
  while (e > s) {
    size_t st = e - 1;
    while (st > s && ((unsigned char)p[st] & 0xC0) == 0x80 && e - st < 4) st--;
    int32_t r;
    size_t w = tpl__utf8_decode(p + st, e - st, &r);
    if (st + w != e) {
      st = e - 1;
      r = 0xFFFD;
    }
    if (!tpl_unicode_is_space(r)) break;
    e = st;
  }
  *out = tpl_value_strn(p + s, e - s);
  return 0;
}

static bool in_cutset(const char *cut, size_t cn, int32_t r) {
  for (size_t i = 0; i < cn;) {
    int32_t x;
    i += tpl__utf8_decode(cut + i, cn - i, &x);
    if (x == r) return true;
  }
  return false;
}

/* trimAll CUTSET S: strings.Trim(s, cutset) */
SPRIG_FN(f_trimall) {
  const char *cut = args[0].u.s.p, *p = args[1].u.s.p;
  size_t cn = args[0].u.s.n, s = 0, e = args[1].u.s.n;
  if (e == 0 || cn == 0) {
    *out = args[1];
    return 0;
  }
  while (s < e) {
    int32_t r;
    size_t w = tpl__utf8_decode(p + s, e - s, &r);
    if (!in_cutset(cut, cn, r)) break;
    s += w;
  }
  while (e > s) {
    size_t st = e - 1;
    while (st > s && ((unsigned char)p[st] & 0xC0) == 0x80 && e - st < 4) st--;
    int32_t r;
    size_t w = tpl__utf8_decode(p + st, e - st, &r);
    if (st + w != e) {
      st = e - 1;
      r = 0xFFFD;
    }
    if (!in_cutset(cut, cn, r)) break;
    e = st;
  }
  *out = tpl_value_strn(p + s, e - s);
  return 0;
}

SPRIG_FN(f_trimsuffix) {
  const tpl_value_t *a = &args[0], *s = &args[1];
  if (s->u.s.n >= a->u.s.n && memcmp(s->u.s.p + s->u.s.n - a->u.s.n, a->u.s.p, a->u.s.n) == 0)
    *out = tpl_value_strn(s->u.s.p, s->u.s.n - a->u.s.n);
  else *out = *s;
  return 0;
}

SPRIG_FN(f_trimprefix) {
  const tpl_value_t *a = &args[0], *s = &args[1];
  if (s->u.s.n >= a->u.s.n && memcmp(s->u.s.p, a->u.s.p, a->u.s.n) == 0)
    *out = tpl_value_strn(s->u.s.p + a->u.s.n, s->u.s.n - a->u.s.n);
  else *out = *s;
  return 0;
}

/* goutils.DeleteWhiteSpace: works on bytes taken as runes (Latin-1). */
SPRIG_FN(f_nospace) {
  buf_t b = BUF_INIT;
  const unsigned char *p = (const unsigned char *)args[0].u.s.p;
  size_t len = args[0].u.s.n, count = 0;
  for (size_t i = 0; i < len; i++) {
    if (!tpl_unicode_is_space(p[i])) {
      put_rune(&b, p[i]);
      count++;
    }
  }
  if (count == len) {
    buf_free(&b);
    *out = args[0];
    return 0;
  }
  return sprig__ret_buf(c, &b, out);
}

SPRIG_FN(f_initials) {
  buf_t b = BUF_INIT;
  const unsigned char *p = (const unsigned char *)args[0].u.s.p;
  size_t len = args[0].u.s.n;
  bool gap = true;
  for (size_t i = 0; i < len; i++) {
    if (tpl_unicode_is_space(p[i])) gap = true;
    else if (gap) {
      put_rune(&b, p[i]);
      gap = false;
    }
  }
  return sprig__ret_buf(c, &b, out);
}

static bool memfind(const char *h, size_t hn, const char *nd, size_t nn, size_t *pos) {
  if (nn == 0) {
    *pos = 0;
    return true;
  }
  if (nn > hn) return false;
  for (size_t i = 0; i + nn <= hn; i++)
    if (h[i] == nd[0] && memcmp(h + i, nd, nn) == 0) {
      *pos = i;
      return true;
    }
  return false;
}

SPRIG_FN(f_contains) {
  size_t pos;
  *out = tpl_value_bool(memfind(args[1].u.s.p, args[1].u.s.n, args[0].u.s.p, args[0].u.s.n, &pos));
  return 0;
}
SPRIG_FN(f_hasprefix) {
  *out = tpl_value_bool(args[1].u.s.n >= args[0].u.s.n && memcmp(args[1].u.s.p, args[0].u.s.p, args[0].u.s.n) == 0);
  return 0;
}
SPRIG_FN(f_hassuffix) {
  *out = tpl_value_bool(args[1].u.s.n >= args[0].u.s.n &&
                        memcmp(args[1].u.s.p + args[1].u.s.n - args[0].u.s.n, args[0].u.s.p, args[0].u.s.n) == 0);
  return 0;
}

SPRIG_FN(f_quote) {
  if (n == 1) {
    /* one string of printable ASCII without '"' or '\\' (most): quoted straight into the arena */
    tpl_value_t v = sprig__arg(&args[0]);
    if (v.kind == TPL_STRING) {
      const char *p = v.u.s.p;
      size_t len = v.u.s.n, k = 0;
      while (k < len && (unsigned char)p[k] >= 0x20 && (unsigned char)p[k] < 0x7F && p[k] != '"' && p[k] != '\\') k++;
      if (k == len) {
        char *q = tpl_arena_text(tpl_call_arena(c), len + 2);
        if (!q) return TPL_ENOMEM;
        q[0] = '"';
        memcpy(q + 1, p, len);
        q[len + 1] = '"';
        *out = tpl_value_strn(q, len + 2);
        return 0;
      }
    }
  }
  buf_t b = BUF_INIT, t = BUF_INIT;
  bool first = true;
  for (size_t i = 0; i < n; i++) {
    tpl_value_t v = sprig__arg(&args[i]);
    if (v.kind == TPL_NIL) continue;
    if (!first) buf_putc(&b, ' ');
    first = false;
    buf_reset(&t);
    sprig__strval(&t, &v);
    tpl_fmt_quote(&b, t.data ? t.data : "", t.len);
  }
  buf_free(&t);
  return sprig__ret_buf(c, &b, out);
}

SPRIG_FN(f_squote) {
  buf_t b = BUF_INIT;
  bool first = true;
  for (size_t i = 0; i < n; i++) {
    tpl_value_t v = sprig__arg(&args[i]);
    if (v.kind == TPL_NIL) continue;
    if (!first) buf_putc(&b, ' ');
    first = false;
    buf_putc(&b, '\'');
    tpl_fmt_value(&b, &v);
    buf_putc(&b, '\'');
  }
  return sprig__ret_buf(c, &b, out);
}

SPRIG_FN(f_cat) {
  buf_t b = BUF_INIT;
  bool first = true;
  for (size_t i = 0; i < n; i++) {
    tpl_value_t v = sprig__arg(&args[i]);
    if (v.kind == TPL_NIL) continue;
    if (!first) buf_putc(&b, ' ');
    first = false;
    tpl_fmt_value(&b, &v);
  }
  return sprig__ret_buf(c, &b, out);
}

static int do_indent(tpl_call_t *c, int64_t spaces, const tpl_value_t *s, bool nl, tpl_value_t *out) {
  if (spaces < 0) spaces = 0; /* strings.Repeat panics on negative counts */
  buf_t b = BUF_INIT;
  if (nl && buf_putc(&b, '\n')) return TPL_ENOMEM;
  if (spaces > (1 << 24)) {
    buf_free(&b);
    return tpl_call_errorf(c, "strings: Repeat output length overflow");
  }
  /* the exact size first (the text of toYaml of a big spec goes through here), then line by line */
  const char *p = s->u.s.p, *end = p + s->u.s.n;
  size_t lines = 1, pad = (size_t)spaces;
  for (const char *q = p; (q = memchr(q, '\n', (size_t)(end - q))); q++) lines++;
  if (pad && lines > (SIZE_MAX - s->u.s.n - 2) / pad) {
    buf_free(&b);
    return TPL_ENOMEM;
  }
  if (buf_reserve(&b, lines * pad + s->u.s.n)) {
    buf_free(&b);
    return TPL_ENOMEM;
  }
  for (const char *q = p;;) {
    memset(b.data + b.len, ' ', pad);
    b.len += pad;
    const char *nl_at = memchr(q, '\n', (size_t)(end - q));
    size_t k = nl_at ? (size_t)(nl_at - q) + 1 : (size_t)(end - q);
    memcpy(b.data + b.len, q, k);
    b.len += k;
    if (!nl_at) break;
    q = nl_at + 1;
  }
  b.data[b.len] = 0;
  return sprig__ret_buf(c, &b, out);
}

SPRIG_FN(f_indent) {
  if (args[0].u.i < 0) return tpl_call_errorf(c, "strings: negative Repeat count");
  return do_indent(c, args[0].u.i, &args[1], false, out);
}
SPRIG_FN(f_nindent) {
  if (args[0].u.i < 0) return tpl_call_errorf(c, "strings: negative Repeat count");
  return do_indent(c, args[0].u.i, &args[1], true, out);
}

/* strings.Replace(src, old, new, -1), including Go's empty-old behaviour (insert between runes). */
SPRIG_FN(f_replace) {
  const tpl_value_t *old = &args[0], *nw = &args[1], *src = &args[2];
  buf_t b = BUF_INIT;
  if (old->u.s.n == 0) {
    const char *p = src->u.s.p;
    size_t len = src->u.s.n;
    buf_append(&b, nw->u.s.p, nw->u.s.n);
    for (size_t i = 0; i < len;) {
      int32_t r;
      size_t w = tpl__utf8_decode(p + i, len - i, &r);
      buf_append(&b, p + i, w);
      buf_append(&b, nw->u.s.p, nw->u.s.n);
      i += w;
    }
    return sprig__ret_buf(c, &b, out);
  }
  size_t i = 0, pos;
  while (memfind(src->u.s.p + i, src->u.s.n - i, old->u.s.p, old->u.s.n, &pos)) {
    buf_append(&b, src->u.s.p + i, pos);
    buf_append(&b, nw->u.s.p, nw->u.s.n);
    i += pos + old->u.s.n;
  }
  buf_append(&b, src->u.s.p + i, src->u.s.n - i);
  return sprig__ret_buf(c, &b, out);
}

SPRIG_FN(f_plural) {
  *out = args[2].u.i == 1 ? args[0] : args[1];
  return 0;
}

SPRIG_FN(f_repeat) {
  int64_t count = args[0].u.i;
  if (count < 0) return tpl_call_errorf(c, "strings: negative Repeat count");
  size_t sl = args[1].u.s.n;
  /* Go's strings.Repeat: an empty result costs nothing, whatever the count */
  if (!sl || !count) return sprig__ret_str(c, "", 0, out);
  if ((uint64_t)count > (uint64_t)INT64_MAX / sl) return tpl_call_errorf(c, "strings: Repeat output length overflow");
  size_t total = (size_t)count * sl, room = tpl_call_room(c);
  if (room == SIZE_MAX) {
    if (total > ((size_t)64 << 20)) return tpl_call_errorf(c, "strings: Repeat output length overflow");
  } else {
    int rc = tpl_call_reserve(c, total + 1); /* the render's memory budget */
    if (rc) return rc;
  }
  char *p = tpl_arena_text(tpl_call_arena(c), total);
  if (!p) return TPL_ENOMEM;
  memcpy(p, args[1].u.s.p, sl);
  for (size_t have = sl; have < total;) { /* doubling copies */
    size_t k = have <= total - have ? have : total - have;
    memcpy(p + have, p, k);
    have += k;
  }
  *out = tpl_value_strn(p, total);
  return 0;
}

SPRIG_FN(f_substr) {
  int64_t start = args[0].u.i, end = args[1].u.i, len = (int64_t)args[2].u.s.n;
  const char *p = args[2].u.s.p;
  if (start < 0) {
    if (end < 0) return tpl_call_errorf(c, "runtime error: slice bounds out of range [:%lld]", (long long)end);
    if (end > len)
      return tpl_call_errorf(c, "runtime error: slice bounds out of range [:%lld] with length %lld", (long long)end,
                             (long long)len);
    *out = tpl_value_strn(p, (size_t)end);
    return 0;
  }
  if (end < 0 || end > len) {
    if (start > len)
      return tpl_call_errorf(c, "runtime error: slice bounds out of range [%lld:%lld]", (long long)start,
                             (long long)len);
    *out = tpl_value_strn(p + start, (size_t)(len - start));
    return 0;
  }
  if (start > end)
    return tpl_call_errorf(c, "runtime error: slice bounds out of range [%lld:%lld]", (long long)start, (long long)end);
  *out = tpl_value_strn(p + start, (size_t)(end - start));
  return 0;
}

SPRIG_FN(f_trunc) {
  int64_t cnt = args[0].u.i, len = (int64_t)args[1].u.s.n;
  const char *p = args[1].u.s.p;
  if (cnt < 0 && len + cnt > 0) *out = tpl_value_strn(p + len + cnt, (size_t)(-cnt));
  else if (cnt >= 0 && len > cnt) *out = tpl_value_strn(p, (size_t)cnt);
  else *out = args[1];
  return 0;
}

static int abbreviate_full(buf_t *b, const char *s, int64_t len, int64_t offset, int64_t maxw) {
  if (len == 0) return 0;
  if (maxw < 4) return -1;
  if (len <= maxw) return buf_append(b, s, (size_t)len);
  if (offset > len) offset = len;
  if (len - offset < maxw - 3) offset = len - (maxw - 3);
  if (offset <= 4) {
    buf_append(b, s, (size_t)(maxw - 3));
    return buf_puts(b, "...");
  }
  if (maxw < 7) return -1;
  if (offset + maxw - 3 < len) {
    buf_puts(b, "...");
    return abbreviate_full(b, s + offset, len - offset, 0, maxw - 3);
  }
  buf_puts(b, "...");
  return buf_append(b, s + len - (maxw - 3), (size_t)(maxw - 3));
}

SPRIG_FN(f_abbrev) {
  if (args[0].u.i < 4) {
    *out = args[1];
    return 0;
  }
  buf_t b = BUF_INIT;
  abbreviate_full(&b, args[1].u.s.p, (int64_t)args[1].u.s.n, 0, args[0].u.i);
  return sprig__ret_buf(c, &b, out);
}

SPRIG_FN(f_abbrevboth) {
  int64_t left = args[0].u.i, right = args[1].u.i;
  if (right < 4 || (left > 0 && right < 7)) {
    *out = args[2];
    return 0;
  }
  buf_t b = BUF_INIT;
  if (abbreviate_full(&b, args[2].u.s.p, (int64_t)args[2].u.s.n, left, right)) buf_reset(&b);
  return sprig__ret_buf(c, &b, out);
}

/* ---- conversions ---- */

SPRIG_FN(f_tostring) {
  tpl_value_t v = sprig__arg(&args[0]);
  if (v.kind == TPL_STRING) {
    *out = v;
    return 0;
  }
  buf_t b = BUF_INIT;
  sprig__strval(&b, &v);
  return sprig__ret_buf(c, &b, out);
}

SPRIG_FN(f_atoi) {
  int64_t v;
  const char *p = args[0].u.s.p;
  size_t len = args[0].u.s.n;
  /* strconv.Atoi: base 10, no underscores or prefixes; small inputs give 0 on error, long ones
   * go through ParseInt, whose range error still yields the clamped value. */
  bool ok = len > 0;
  for (size_t i = 0; i < len && ok; i++) {
    char ch = p[i];
    if (!(ch >= '0' && ch <= '9') && !(i == 0 && (ch == '+' || ch == '-') && len > 1)) ok = false;
  }
  if (!ok) v = 0;
  else {
    int rc = sprig__parse_int(p, len, 10, &v);
    if (rc == -1) v = 0;
  }
  *out = tpl_value_int(v);
  return 0;
}

SPRIG_FN(f_int64) {
  int64_t v;
  tpl_value_t a = sprig__arg(&args[0]);
  if (sprig__to_int64(&a, &v)) v = 0;
  *out = tpl_value_int64(v);
  return 0;
}
SPRIG_FN(f_int) {
  int64_t v;
  tpl_value_t a = sprig__arg(&args[0]);
  if (sprig__to_int64(&a, &v)) v = 0;
  *out = tpl_value_int(v);
  return 0;
}
SPRIG_FN(f_float64) {
  double v;
  tpl_value_t a = sprig__arg(&args[0]);
  if (sprig__to_float64(&a, &v)) v = 0;
  *out = tpl_value_float(v);
  return 0;
}

SPRIG_FN(f_todecimal) {
  buf_t b = BUF_INIT;
  tpl_value_t a = sprig__arg(&args[0]);
  tpl_fmt_sprint(&b, &a, 1);
  int64_t v;
  if (sprig__parse_int(b.data ? b.data : "", b.len, 8, &v)) v = 0;
  buf_free(&b);
  *out = tpl_value_int64(v);
  return 0;
}

/* strslice: []string from a list (nil elements dropped), or a one-element list. */
int sprig__strslice(tpl_call_t *c, const tpl_value_t *in, tpl_value_t *out);
int sprig__strslice(tpl_call_t *c, const tpl_value_t *in, tpl_value_t *out) {
  tpl_arena_t *a = tpl_call_arena(c);
  tpl_value_t v = sprig__arg(in);
  if (v.kind == TPL_LIST && v.elem == TPL_ELEM_STRING) {
    *out = v;
    return 0;
  }
  *out = tpl_value_list_new(a, TPL_ELEM_STRING, 0);
  if (out->kind == TPL_INVALID) return TPL_ENOMEM;
  if (v.kind == TPL_NIL) return 0;
  buf_t b = BUF_INIT;
  if (v.kind == TPL_LIST) {
    for (size_t i = 0; v.u.list && i < v.u.list->len; i++) {
      tpl_value_t it = tpl_list_at(v.u.list, i), e = sprig__arg(&it);
      if (e.kind == TPL_NIL) continue;
      buf_reset(&b);
      sprig__strval(&b, &e);
      tpl_value_t s = tpl_value_str_copy(a, b.data ? b.data : "", b.len);
      if (s.kind == TPL_INVALID || tpl_list_push(a, out->u.list, s)) {
        buf_free(&b);
        return TPL_ENOMEM;
      }
    }
    buf_free(&b);
    return 0;
  }
  sprig__strval(&b, &v);
  tpl_value_t s = tpl_value_str_copy(a, b.data ? b.data : "", b.len);
  buf_free(&b);
  if (s.kind == TPL_INVALID || tpl_list_push(a, out->u.list, s)) return TPL_ENOMEM;
  return 0;
}

SPRIG_FN(f_tostrings) { return sprig__strslice(c, &args[0], out); }

SPRIG_FN(f_join) {
  tpl_value_t l;
  int rc = sprig__strslice(c, &args[1], &l);
  if (rc) return rc;
  buf_t b = BUF_INIT;
  for (size_t i = 0; i < l.u.list->len; i++) {
    if (i) buf_append(&b, args[0].u.s.p, args[0].u.s.n);
    buf_append(&b, l.u.list->items[i].u.s.p, l.u.list->items[i].u.s.n);
  }
  return sprig__ret_buf(c, &b, out);
}

/* strings.SplitN semantics (n < 0: all). Returns a []string. */
static int go_split(tpl_call_t *c, const tpl_value_t *sep, const tpl_value_t *s, int64_t n, tpl_value_t *out) {
  tpl_arena_t *a = tpl_call_arena(c);
  *out = tpl_value_list_new(a, TPL_ELEM_STRING, 0);
  if (out->kind == TPL_INVALID) return TPL_ENOMEM;
  if (n == 0) {
    out->u.list = NULL; /* nil slice */
    return 0;
  }
  const char *p = s->u.s.p;
  size_t len = s->u.s.n;
  if (sep->u.s.n == 0) {
    /* explode into UTF-8 sequences */
    size_t cnt = 0;
    for (size_t i = 0; i < len;) {
      int32_t r;
      size_t w = tpl__utf8_decode(p + i, len - i, &r);
      cnt++;
      if (n > 0 && (int64_t)cnt == n) {
        if (tpl_list_push(a, out->u.list, tpl_value_strn(p + i, len - i))) return TPL_ENOMEM;
        return 0;
      }
      if (tpl_list_push(a, out->u.list, tpl_value_strn(p + i, w))) return TPL_ENOMEM;
      i += w;
    }
    return 0;
  }
  size_t i = 0, pos;
  int64_t cnt = 0;
  while ((n < 0 || cnt < n - 1) && memfind(p + i, len - i, sep->u.s.p, sep->u.s.n, &pos)) {
    if (tpl_list_push(a, out->u.list, tpl_value_strn(p + i, pos))) return TPL_ENOMEM;
    i += pos + sep->u.s.n;
    cnt++;
  }
  if (tpl_list_push(a, out->u.list, tpl_value_strn(p + i, len - i))) return TPL_ENOMEM;
  return 0;
}

SPRIG_FN(f_splitlist) { return go_split(c, &args[0], &args[1], -1, out); }

static int split_map(tpl_call_t *c, const tpl_value_t *l, tpl_value_t *out) {
  tpl_arena_t *a = tpl_call_arena(c);
  *out = tpl_value_map_new(a, TPL_ELEM_STRING);
  if (out->kind == TPL_INVALID) return TPL_ENOMEM;
  for (size_t i = 0; l->u.list && i < l->u.list->len; i++) {
    char k[32];
    int kn = snprintf(k, sizeof k, "_%zu", i);
    if (tpl_map_set(a, out->u.map, k, (size_t)kn, l->u.list->items[i])) return TPL_ENOMEM;
  }
  return 0;
}

SPRIG_FN(f_split) {
  tpl_value_t l;
  int rc = go_split(c, &args[0], &args[1], -1, &l);
  return rc ? rc : split_map(c, &l, out);
}
SPRIG_FN(f_splitn) {
  tpl_value_t l;
  int rc = go_split(c, &args[0], &args[2], args[1].u.i, &l);
  return rc ? rc : split_map(c, &l, out);
}

SPRIG_FN(f_sortalpha) {
  tpl_value_t v = sprig__arg(&args[0]);
  if (v.kind == TPL_LIST) {
    tpl_value_t l;
    int rc = sprig__strslice(c, &v, &l);
    if (rc) return rc;
    /* sort.Strings sorts in place: a []string argument is sorted itself. */
    tpl_list_t *x = l.u.list;
    tpl_arena_note_write(tpl_call_arena(c), x);
    for (size_t i = 1; x && i < x->len; i++) {
      tpl_value_t t = x->items[i];
      size_t j = i;
      while (j > 0) {
        const tpl_value_t *p = &x->items[j - 1];
        size_t m = p->u.s.n < t.u.s.n ? p->u.s.n : t.u.s.n;
        int cmp = memcmp(p->u.s.p, t.u.s.p, m);
        if (cmp < 0 || (cmp == 0 && p->u.s.n <= t.u.s.n)) break;
        x->items[j] = x->items[j - 1];
        j--;
      }
      x->items[j] = t;
    }
    *out = l;
    return 0;
  }
  tpl_arena_t *a = tpl_call_arena(c);
  *out = tpl_value_list_new(a, TPL_ELEM_STRING, 1);
  if (out->kind == TPL_INVALID) return TPL_ENOMEM;
  buf_t b = BUF_INIT;
  sprig__strval(&b, &v);
  tpl_value_t s = tpl_value_str_copy(a, b.data ? b.data : "", b.len);
  buf_free(&b);
  if (s.kind == TPL_INVALID) return TPL_ENOMEM;
  return tpl_list_push(a, out->u.list, s);
}

/* ---- defaults ---- */

SPRIG_FN(f_default) {
  if (n < 2) {
    *out = sprig__arg(&args[0]);
    return 0;
  }
  tpl_value_t g = sprig__arg(&args[1]);
  *out = sprig__empty(&g) ? sprig__arg(&args[0]) : g;
  return 0;
}
SPRIG_FN(f_empty) {
  tpl_value_t v = sprig__arg(&args[0]);
  *out = tpl_value_bool(sprig__empty(&v));
  return 0;
}
SPRIG_FN(f_coalesce) {
  for (size_t i = 0; i < n; i++) {
    tpl_value_t v = sprig__arg(&args[i]);
    if (!sprig__empty(&v)) {
      *out = v;
      return 0;
    }
  }
  *out = tpl_value_nil();
  return 0;
}
SPRIG_FN(f_all) {
  for (size_t i = 0; i < n; i++) {
    tpl_value_t v = sprig__arg(&args[i]);
    if (sprig__empty(&v)) {
      *out = tpl_value_bool(false);
      return 0;
    }
  }
  *out = tpl_value_bool(true);
  return 0;
}
SPRIG_FN(f_any) {
  for (size_t i = 0; i < n; i++) {
    tpl_value_t v = sprig__arg(&args[i]);
    if (!sprig__empty(&v)) {
      *out = tpl_value_bool(true);
      return 0;
    }
  }
  *out = tpl_value_bool(false);
  return 0;
}
SPRIG_FN(f_ternary) {
  *out = sprig__arg(args[2].u.b ? &args[0] : &args[1]);
  return 0;
}

/* ---- reflection ---- */

SPRIG_FN(f_typeof) {
  buf_t b = BUF_INIT;
  tpl_value_t v = sprig__arg(&args[0]);
  tpl_value_type_name(&v, &b);
  return sprig__ret_buf(c, &b, out);
}
SPRIG_FN(f_typeis) {
  buf_t b = BUF_INIT;
  tpl_value_t v = sprig__arg(&args[1]);
  tpl_value_type_name(&v, &b);
  bool eq = b.len == args[0].u.s.n && memcmp(b.data, args[0].u.s.p, b.len) == 0;
  buf_free(&b);
  *out = tpl_value_bool(eq);
  return 0;
}
SPRIG_FN(f_typeislike) {
  buf_t b = BUF_INIT;
  tpl_value_t v = sprig__arg(&args[1]);
  tpl_value_type_name(&v, &b);
  const char *t = args[0].u.s.p;
  size_t tn = args[0].u.s.n;
  bool eq = (b.len == tn && memcmp(b.data, t, tn) == 0) || (b.len == tn + 1 && b.data[0] == '*' && memcmp(b.data + 1, t, tn) == 0);
  buf_free(&b);
  *out = tpl_value_bool(eq);
  return 0;
}
SPRIG_FN(f_kindof) {
  tpl_value_t v = sprig__arg(&args[0]);
  *out = tpl_value_str(sprig__kind_name(&v));
  return 0;
}
SPRIG_FN(f_kindis) {
  tpl_value_t v = sprig__arg(&args[1]);
  const char *k = sprig__kind_name(&v);
  *out = tpl_value_bool(strlen(k) == args[0].u.s.n && memcmp(k, args[0].u.s.p, args[0].u.s.n) == 0);
  return 0;
}
SPRIG_FN(f_deepequal) {
  tpl_value_t a = sprig__arg(&args[0]), b = sprig__arg(&args[1]);
  *out = tpl_value_bool(sprig__deep_equal(&a, &b));
  return 0;
}

/* ---- paths (Go's path package; filepath is the same on Linux) ---- */

/* path.Clean into b. */
static void path_clean(buf_t *b, const char *p, size_t n) {
  if (n == 0) {
    buf_putc(b, '.');
    return;
  }
  bool rooted = p[0] == '/';
  size_t start = b->len;
  size_t r = 0, dotdot = 0;
  if (rooted) {
    buf_putc(b, '/');
    r = 1;
    dotdot = 1;
  }
  size_t w = rooted ? 1 : 0; /* bytes written relative to start */
  while (r < n) {
    if (p[r] == '/') r++;
    else if (p[r] == '.' && (r + 1 == n || p[r + 1] == '/')) r++;
    else if (p[r] == '.' && p[r + 1] == '.' && (r + 2 == n || p[r + 2] == '/')) {
      r += 2;
      if (w > dotdot) {
        w--;
        while (w > dotdot && b->data[start + w] != '/') w--;
        b->len = start + w;
      } else if (!rooted) {
        if (w > 0) {
          buf_putc(b, '/');
          w++;
        }
        buf_puts(b, "..");
        w += 2;
        dotdot = w;
      }
    } else {
      if ((rooted && w != 1) || (!rooted && w != 0)) {
        buf_putc(b, '/');
        w++;
      }
      for (; r < n && p[r] != '/'; r++) {
        buf_putc(b, p[r]);
        w++;
      }
    }
  }
  if (w == 0) {
    buf_putc(b, '.');
  }
  b->data[b->len] = 0;
}

SPRIG_FN(f_clean) {
  buf_t b = BUF_INIT;
  path_clean(&b, args[0].u.s.p, args[0].u.s.n);
  return sprig__ret_buf(c, &b, out);
}

SPRIG_FN(f_base) {
  const char *p = args[0].u.s.p;
  size_t len = args[0].u.s.n;
  if (len == 0) {
    *out = tpl_value_str(".");
    return 0;
  }
  while (len > 0 && p[len - 1] == '/') len--;
  size_t i = len;
  while (i > 0 && p[i - 1] != '/') i--;
  if (len - i == 0) {
    *out = tpl_value_str("/");
    return 0;
  }
  *out = tpl_value_strn(p + i, len - i);
  return 0;
}

SPRIG_FN(f_dir) {
  const char *p = args[0].u.s.p;
  size_t len = args[0].u.s.n, i = len;
  while (i > 0 && p[i - 1] != '/') i--;
  buf_t b = BUF_INIT;
  path_clean(&b, p, i);
  return sprig__ret_buf(c, &b, out);
}

SPRIG_FN(f_ext) {
  const char *p = args[0].u.s.p;
  size_t len = args[0].u.s.n;
  for (size_t i = len; i > 0 && p[i - 1] != '/'; i--)
    if (p[i - 1] == '.') {
      *out = tpl_value_strn(p + i - 1, len - i + 1);
      return 0;
    }
  *out = tpl_value_str("");
  return 0;
}

SPRIG_FN(f_isabs) {
  *out = tpl_value_bool(args[0].u.s.n > 0 && args[0].u.s.p[0] == '/');
  return 0;
}

/* ---- encodings and hashes ---- */

SPRIG_FN(f_b64enc) {
  size_t len = b64_encoded_len(args[0].u.s.n);
  char *p = tpl_arena_alloc(tpl_call_arena(c), len + 1);
  if (!p) return TPL_ENOMEM;
  b64_encode(args[0].u.s.p, args[0].u.s.n, p);
  *out = tpl_value_strn(p, len);
  return 0;
}

/* Go's base64.StdEncoding.DecodeString (a port of decodeQuantum); -1 with the offset Go reports. */
static int go_b64_decode(const char *src, size_t n, buf_t *o, long *bad) {
  static signed char map[256];
  static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  if (!map['B']) {
    memset(map, -1, sizeof map);
    for (int i = 0; i < 64; i++) map[(unsigned char)al[i]] = (signed char)i;
  }
  size_t si = 0;
  while (si < n) {
    unsigned dbuf[4] = {0};
    int dlen = 4;
    bool trailing = false;
    for (int j = 0; j < 4; j++) {
      if (si == n) {
        if (j == 0) return 0;
        *bad = (long)si - j; /* padding is required */
        return -1;
      }
      unsigned char in = (unsigned char)src[si++];
      if (map[in] >= 0) {
        dbuf[j] = (unsigned)map[in];
        continue;
      }
      if (in == '\n' || in == '\r') {
        j--;
        continue;
      }
      if (in != '=') {
        *bad = (long)si - 1;
        return -1;
      }
      if (j == 0 || j == 1) {
        *bad = (long)si - 1;
        return -1;
      }
      if (j == 2) {
        while (si < n && (src[si] == '\n' || src[si] == '\r')) si++;
        if (si == n) {
          *bad = (long)n;
          return -1;
        }
        if (src[si] != '=') {
          *bad = (long)si - 1;
          return -1;
        }
        si++;
      }
      while (si < n && (src[si] == '\n' || src[si] == '\r')) si++;
      if (si < n) trailing = true;
      dlen = j;
      break;
    }
    unsigned val = dbuf[0] << 18 | dbuf[1] << 12 | dbuf[2] << 6 | dbuf[3];
    unsigned char b0 = (unsigned char)(val >> 16), b1 = (unsigned char)(val >> 8), b2 = (unsigned char)val;
    if (dlen >= 2) buf_putc(o, (char)b0);
    if (dlen >= 3) buf_putc(o, (char)b1);
    if (dlen >= 4) buf_putc(o, (char)b2);
    if (trailing) {
      *bad = (long)si;
      return -1;
    }
    if (dlen < 4) return 0;
  }
  return 0;
}

SPRIG_FN(f_b64dec) {
  buf_t b = BUF_INIT;
  long bad = 0;
  if (go_b64_decode(args[0].u.s.p, args[0].u.s.n, &b, &bad)) {
    buf_reset(&b);
    buf_printf(&b, "illegal base64 data at input byte %ld", bad);
  }
  return sprig__ret_buf(c, &b, out);
}

SPRIG_FN(f_b32enc) {
  static const char al[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  const unsigned char *p = (const unsigned char *)args[0].u.s.p;
  size_t len = args[0].u.s.n;
  buf_t b = BUF_INIT;
  for (size_t i = 0; i < len; i += 5) {
    unsigned char blk[5] = {0};
    size_t m = len - i < 5 ? len - i : 5;
    memcpy(blk, p + i, m);
    uint64_t v = ((uint64_t)blk[0] << 32) | ((uint64_t)blk[1] << 24) | ((uint64_t)blk[2] << 16) | ((uint64_t)blk[3] << 8) | blk[4];
    static const int outc[] = {0, 2, 4, 5, 7, 8};
    int oc = outc[m];
    for (int k = 0; k < 8; k++) buf_putc(&b, k < oc ? al[(v >> (35 - 5 * k)) & 31] : '=');
  }
  return sprig__ret_buf(c, &b, out);
}

SPRIG_FN(f_b32dec) {
  const char *s = args[0].u.s.p;
  size_t len = args[0].u.s.n;
  buf_t b = BUF_INIT;
  /* Go's base32 decoding (StdEncoding, padded), with its error offsets. */
  size_t si = 0;
  long bad = -1;
  bool end = false;
  while (si < len && !end && bad < 0) {
    unsigned vals[8] = {0};
    size_t dlen = 8;
    for (size_t j = 0; j < 8;) {
      while (si < len && (s[si] == '\r' || s[si] == '\n')) si++;
      if (si >= len) {
        if (j == 0) {
          dlen = 0;
          end = true;
          break;
        }
        bad = (long)(si - j);
        break;
      }
      char ch = s[si];
      si++;
      if (ch == '=' && j >= 2 && si - 1 < len) {
        /* padding */
        size_t padstart = si - 1;
        if (j == 1 || j == 3 || j == 6) {
          bad = (long)padstart;
          break;
        }
        for (size_t k = 0; k < 8 - 1 - j; k++) {
          while (si < len && (s[si] == '\r' || s[si] == '\n')) si++;
          if (si >= len) {
            bad = (long)len;
            break;
          }
          if (s[si] != '=') {
            bad = (long)si;
            break;
          }
          si++;
        }
        if (bad >= 0) break;
        while (si < len && (s[si] == '\r' || s[si] == '\n')) si++;
        if (si < len) bad = (long)si;
        dlen = j;
        end = true;
        break;
      }
      int v = -1;
      if (ch >= 'A' && ch <= 'Z') v = ch - 'A';
      else if (ch >= '2' && ch <= '7') v = ch - '2' + 26;
      if (v < 0) {
        bad = (long)(si - 1);
        break;
      }
      vals[j++] = (unsigned)v;
    }
    if (bad >= 0) break;
    uint64_t v = 0;
    for (int k = 0; k < 8; k++) v = (v << 5) | vals[k];
    static const int bytes_for[] = {0, 0, 1, 0, 2, 3, 0, 4, 5};
    int nb = bytes_for[dlen];
    for (int k = 0; k < nb; k++) buf_putc(&b, (char)((v >> (32 - 8 * k)) & 0xFF));
  }
  if (bad >= 0) {
    buf_reset(&b);
    buf_printf(&b, "illegal base32 data at input byte %ld", bad);
  }
  return sprig__ret_buf(c, &b, out);
}

static int hexout(tpl_call_t *c, const unsigned char *d, size_t n, tpl_value_t *out) {
  static const char hx[] = "0123456789abcdef";
  char *p = tpl_arena_alloc(tpl_call_arena(c), n * 2 + 1);
  if (!p) return TPL_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    p[2 * i] = hx[d[i] >> 4];
    p[2 * i + 1] = hx[d[i] & 15];
  }
  *out = tpl_value_strn(p, n * 2);
  return 0;
}

SPRIG_FN(f_sha1sum) {
  unsigned char d[20];
  mbedtls_sha1_ret((const unsigned char *)args[0].u.s.p, args[0].u.s.n, d);
  return hexout(c, d, 20, out);
}
SPRIG_FN(f_sha256sum) {
  /* The sum of a remembered encoding (`toJson .Values | sha256sum`) is remembered with it. */
  tpl_arena_t *a = tpl_call_arena(c);
  const char *sp = args[0].u.s.p;
  size_t sn = args[0].u.s.n, len;
  bool memo = tpl_arena_memo_owns(a, sp, sn);
  const char *t = memo ? tpl_memo_text_get(a, sp, sn, 1, &len) : NULL;
  if (t) {
    *out = tpl_value_strn(t, len);
    return 0;
  }
  unsigned char d[32];
  base_sha256(sp, sn, d);
  int rc = hexout(c, d, 32, out);
  if (!rc && memo) {
    t = tpl_memo_text_put(a, sp, sn, 1, out->u.s.p, out->u.s.n);
    if (t) *out = tpl_value_strn(t, out->u.s.n);
  }
  return rc;
}
SPRIG_FN(f_sha512sum) {
  unsigned char d[64];
  mbedtls_sha512_ret((const unsigned char *)args[0].u.s.p, args[0].u.s.n, d, 0);
  return hexout(c, d, 64, out);
}
SPRIG_FN(f_adler32sum) {
  uLong a = adler32(0L, Z_NULL, 0);
  const unsigned char *p = (const unsigned char *)args[0].u.s.p;
  size_t len = args[0].u.s.n;
  while (len > 0) {
    uInt chunk = len > (1u << 30) ? (1u << 30) : (uInt)len;
    a = adler32(a, p, chunk);
    p += chunk;
    len -= chunk;
  }
  char buf[32];
  int k = snprintf(buf, sizeof buf, "%lu", (unsigned long)a);
  return sprig__ret_str(c, buf, (size_t)k, out);
}

SPRIG_FN(f_hello) {
  *out = tpl_value_str("Hello!");
  return 0;
}

const tpl_func_t sprig__strings_fns[] = {
    {"hello", "", f_hello, NULL, "func() string"},
    {"upper", "s", f_upper, NULL, "func(string) string"},
    {"lower", "s", f_lower, NULL, "func(string) string"},
    {"title", "s", f_title, NULL, "func(string) string"},
    {"untitle", "s", f_untitle, NULL, "func(string) string"},
    {"swapcase", "s", f_swapcase, NULL, "func(string) string"},
    {"trim", "s", f_trim, NULL, "func(string) string"},
    {"trimAll", "ss", f_trimall, NULL, "func(string, string) string"},
    {"trimall", "ss", f_trimall, NULL, "func(string, string) string"},
    {"trimSuffix", "ss", f_trimsuffix, NULL, "func(string, string) string"},
    {"trimPrefix", "ss", f_trimprefix, NULL, "func(string, string) string"},
    {"nospace", "s", f_nospace, NULL, "func(string) string"},
    {"initials", "s", f_initials, NULL, "func(string) string"},
    {"contains", "ss", f_contains, NULL, "func(string, string) bool"},
    {"hasPrefix", "ss", f_hasprefix, NULL, "func(string, string) bool"},
    {"hasSuffix", "ss", f_hassuffix, NULL, "func(string, string) bool"},
    {"quote", "a*", f_quote, NULL, "func(...interface {}) string"},
    {"squote", "a*", f_squote, NULL, "func(...interface {}) string"},
    {"cat", "a*", f_cat, NULL, "func(...interface {}) string"},
    {"indent", "is", f_indent, NULL, "func(int, string) string"},
    {"nindent", "is", f_nindent, NULL, "func(int, string) string"},
    {"replace", "sss", f_replace, NULL, "func(string, string, string) string"},
    {"plural", "ssi", f_plural, NULL, "func(string, string, int) string"},
    {"repeat", "is", f_repeat, NULL, "func(int, string) string"},
    {"substr", "iis", f_substr, NULL, "func(int, int, string) string"},
    {"trunc", "is", f_trunc, NULL, "func(int, string) string"},
    {"abbrev", "is", f_abbrev, NULL, "func(int, string) string"},
    {"abbrevboth", "iis", f_abbrevboth, NULL, "func(int, int, string) string"},
    {"toString", "a", f_tostring, NULL, "func(interface {}) string"},
    {"atoi", "s", f_atoi, NULL, "func(string) int"},
    {"int64", "a", f_int64, NULL, "func(interface {}) int64"},
    {"int", "a", f_int, NULL, "func(interface {}) int"},
    {"float64", "a", f_float64, NULL, "func(interface {}) float64"},
    {"toDecimal", "a", f_todecimal, NULL, "func(interface {}) int64"},
    {"toStrings", "a", f_tostrings, NULL, "func(interface {}) []string"},
    {"join", "sa", f_join, NULL, "func(string, interface {}) string"},
    {"splitList", "ss", f_splitlist, NULL, "func(string, string) []string"},
    {"split", "ss", f_split, NULL, "func(string, string) map[string]string"},
    {"splitn", "sis", f_splitn, NULL, "func(string, int, string) map[string]string"},
    {"sortAlpha", "a", f_sortalpha, NULL, "func(interface {}) []string"},
    {"default", "aa*", f_default, NULL, "func(interface {}, ...interface {}) interface {}"},
    {"empty", "a", f_empty, NULL, "func(interface {}) bool"},
    {"coalesce", "a*", f_coalesce, NULL, "func(...interface {}) interface {}"},
    {"all", "a*", f_all, NULL, "func(...interface {}) bool"},
    {"any", "a*", f_any, NULL, "func(...interface {}) bool"},
    {"ternary", "aab", f_ternary, NULL, "func(interface {}, interface {}, bool) interface {}"},
    {"typeOf", "a", f_typeof, NULL, "func(interface {}) string"},
    {"typeIs", "sa", f_typeis, NULL, "func(string, interface {}) bool"},
    {"typeIsLike", "sa", f_typeislike, NULL, "func(string, interface {}) bool"},
    {"kindOf", "a", f_kindof, NULL, "func(interface {}) string"},
    {"kindIs", "sa", f_kindis, NULL, "func(string, interface {}) bool"},
    {"deepEqual", "aa", f_deepequal, NULL, "func(interface {}, interface {}) bool"},
    {"base", "s", f_base, NULL, "func(string) string"},
    {"dir", "s", f_dir, NULL, "func(string) string"},
    {"clean", "s", f_clean, NULL, "func(string) string"},
    {"ext", "s", f_ext, NULL, "func(string) string"},
    {"isAbs", "s", f_isabs, NULL, "func(string) bool"},
    {"osBase", "s", f_base, NULL, "func(string) string"},
    {"osDir", "s", f_dir, NULL, "func(string) string"},
    {"osClean", "s", f_clean, NULL, "func(string) string"},
    {"osExt", "s", f_ext, NULL, "func(string) string"},
    {"osIsAbs", "s", f_isabs, NULL, "func(string) bool"},
    {"b64enc", "s", f_b64enc, NULL, "func(string) string"},
    {"b64dec", "s", f_b64dec, NULL, "func(string) string"},
    {"b32enc", "s", f_b32enc, NULL, "func(string) string"},
    {"b32dec", "s", f_b32dec, NULL, "func(string) string"},
    {"sha1sum", "s", f_sha1sum, NULL, "func(string) string"},
    {"sha256sum", "s", f_sha256sum, NULL, "func(string) string"},
    {"sha512sum", "s", f_sha512sum, NULL, "func(string) string"},
    {"adler32sum", "s", f_adler32sum, NULL, "func(string) string"},
};
const size_t sprig__strings_nfns = sizeof sprig__strings_fns / sizeof sprig__strings_fns[0];
