/* Sprig's case conversions from huandu/xstrings v1.5.0 (snakecase,
 * kebabcase = camelCaseToLowerCase; camelcase = ToPascalCase) and goutils
 * v1.1.1 word wrapping (wrap, wrapWith), ported line by line. */
#include <string.h>

#include "helm/template/sprig_internal.h"

typedef struct {
  const char *p;
  size_t n;
} str_t;

static size_t dec(str_t s, int32_t *r) { return tpl__utf8_decode(s.p, s.n, r); }
static str_t adv(str_t s, size_t k) { return (str_t){s.p + k, s.n - k}; }

static void put_rune(buf_t *b, int32_t r) {
  char t[4];
  size_t k = tpl__utf8_encode(r, t);
  buf_append(b, t, k);
}

static bool is_upper(int32_t r) { return tpl_unicode_is_upper(r); }
static bool is_punct(int32_t r) { return tpl_unicode_is_punct(r); }
static bool is_number(int32_t r) { return tpl_unicode_is(TPL_U_NUMBER, r); }
static bool is_connector(int32_t r) { return r == '-' || r == '_' || tpl_unicode_is_space(r); }
static bool is_alphabet(int32_t r) {
  if (!tpl_unicode_is_letter(r)) return false;
  if (r < 0x3400) return true;
  if (r >= 0x4E00 && r <= 0x9FCC) return false;
  if (r >= 0x3400 && r <= 0x4D85) return false;
  if (r >= 0x20000 && r <= 0x2B81D) return false;
  return true;
}

/* ---- ToPascalCase ---- */

SPRIG_FN(f_camelcase) {
  (void)n;
  str_t str = {args[0].u.s.p, args[0].u.s.n};
  if (!str.n) return *out = tpl_value_str(""), 0;
  buf_t b = BUF_INIT;
  bool first_upper = false;
  int32_t r0 = 0, r1;
  size_t size = 0;
  while (str.n) {
    size = dec(str, &r0);
    str = adv(str, size);
    if (!is_connector(r0)) {
      first_upper = is_upper(r0);
      r0 = tpl_unicode_to_upper(r0);
      break;
    }
    put_rune(&b, r0);
  }
  if (!str.n) {
    if (size) put_rune(&b, r0);
    return sprig__ret_buf(c, &b, out);
  }
  while (str.n) {
    r1 = r0;
    size = dec(str, &r0);
    str = adv(str, size);
    if (is_connector(r0) && is_connector(r1)) {
      put_rune(&b, r1);
      continue;
    }
    if (is_connector(r1)) {
      first_upper = is_upper(r0);
      r0 = tpl_unicode_to_upper(r0);
    } else {
      if (first_upper) {
        if (is_upper(r0)) r0 = tpl_unicode_to_lower(r0);
        else first_upper = false;
      }
      put_rune(&b, r1);
    }
  }
  put_rune(&b, r0);
  return sprig__ret_buf(c, &b, out);
}

/* ---- camelCaseToLowerCase ---- */

enum { W_INVALID, W_NUMBER, W_UPPER, W_ALPHA, W_CONNECTOR, W_PUNCT, W_OTHER };

static size_t next_valid(str_t s, int32_t prev, int32_t *r) {
  size_t size = 0;
  while (s.n) {
    size_t sz = dec(s, r);
    size += sz;
    if (*r != 0xFFFD) return size;
    s = adv(s, sz);
  }
  *r = prev;
  return size;
}

static int next_word(str_t str, str_t *word, str_t *rem) {
  int wt = W_INVALID;
  *word = (str_t){str.p, 0};
  *rem = (str_t){str.p + str.n, 0};
  if (!str.n) return W_INVALID;
  size_t offset = 0;
  str_t remaining = str;
  int32_t r;
  size_t size = next_valid(remaining, 0xFFFD, &r);
  offset += size;
  if (r == 0xFFFD) {
    *word = (str_t){str.p, offset};
    *rem = adv(str, offset);
    return W_INVALID;
  }
  if (is_connector(r)) {
    wt = W_CONNECTOR;
    remaining = adv(remaining, size);
    while (remaining.n) {
      size = next_valid(remaining, r, &r);
      if (!is_connector(r)) break;
      offset += size;
      remaining = adv(remaining, size);
    }
  } else if (is_punct(r)) {
    wt = W_PUNCT;
    remaining = adv(remaining, size);
    while (remaining.n) {
      size = next_valid(remaining, r, &r);
      if (!is_punct(r)) break;
      offset += size;
      remaining = adv(remaining, size);
    }
  } else if (is_upper(r)) {
    wt = W_UPPER;
    remaining = adv(remaining, size);
    if (remaining.n) {
      size = next_valid(remaining, r, &r);
      if (is_upper(r)) {
        size_t prev_size = size;
        offset += size;
        remaining = adv(remaining, size);
        while (remaining.n) {
          size = next_valid(remaining, r, &r);
          if (!is_upper(r)) break;
          prev_size = size;
          offset += size;
          remaining = adv(remaining, size);
        }
        if (remaining.n && is_alphabet(r)) {
          offset -= prev_size;
          remaining = adv(str, offset);
        }
      } else if (is_alphabet(r)) {
        offset += size;
        remaining = adv(remaining, size);
        while (remaining.n) {
          size = next_valid(remaining, r, &r);
          if (!is_alphabet(r) || is_upper(r)) break;
          offset += size;
          remaining = adv(remaining, size);
        }
      }
    }
  } else if (is_alphabet(r)) {
    wt = W_ALPHA;
    remaining = adv(remaining, size);
    while (remaining.n) {
      size = next_valid(remaining, r, &r);
      if (!is_alphabet(r) || is_upper(r)) break;
      offset += size;
      remaining = adv(remaining, size);
    }
  } else if (is_number(r)) {
    wt = W_NUMBER;
    remaining = adv(remaining, size);
    while (remaining.n) {
      size = next_valid(remaining, r, &r);
      if (!is_number(r)) break;
      offset += size;
      remaining = adv(remaining, size);
    }
  } else {
    wt = W_OTHER;
    remaining = adv(remaining, size);
    while (remaining.n) {
      size = next_valid(remaining, r, &r);
      if (size == 0 || is_connector(r) || is_alphabet(r) || is_number(r) || is_punct(r)) break;
      offset += size;
      remaining = adv(remaining, size);
    }
  }
  *word = (str_t){str.p, offset};
  *rem = remaining;
  return wt;
}

static void to_lower(buf_t *b, int wt, str_t s, int32_t connector) {
  if (wt != W_UPPER && wt != W_CONNECTOR) {
    buf_append(b, s.p, s.n);
    return;
  }
  while (s.n) {
    int32_t r;
    size_t size = dec(s, &r);
    s = adv(s, size);
    if (is_connector(r)) put_rune(b, connector);
    else if (is_upper(r)) put_rune(b, tpl_unicode_to_lower(r));
    else put_rune(b, r);
  }
}

static int lower_case(tpl_call_t *c, str_t str, int32_t connector, tpl_value_t *out) {
  if (!str.n) return *out = tpl_value_str(""), 0;
  buf_t b = BUF_INIT;
  str_t word, remaining, last;
  int wt = next_word(str, &word, &remaining);
  while (remaining.n) {
    if (wt != W_CONNECTOR) to_lower(&b, wt, word, connector);
    int prev = wt;
    last = word;
    wt = next_word(remaining, &word, &remaining);
    switch (prev) {
    case W_NUMBER:
      while (wt == W_ALPHA || wt == W_NUMBER) {
        to_lower(&b, wt, word, connector);
        wt = next_word(remaining, &word, &remaining);
      }
      if (wt != W_INVALID && wt != W_PUNCT && wt != W_CONNECTOR) put_rune(&b, connector);
      break;
    case W_CONNECTOR: to_lower(&b, prev, last, connector); break;
    case W_PUNCT: break;
    default:
      if (wt != W_NUMBER) {
        if (wt != W_CONNECTOR && wt != W_PUNCT) put_rune(&b, connector);
        break;
      }
      if (!remaining.n) break;
      last = word;
      wt = next_word(remaining, &word, &remaining);
      if (wt != W_ALPHA) {
        to_lower(&b, W_NUMBER, last, connector);
        if (wt != W_CONNECTOR && wt != W_PUNCT) put_rune(&b, connector);
        break;
      }
      put_rune(&b, connector);
      to_lower(&b, W_NUMBER, last, connector);
      while (wt == W_ALPHA || wt == W_NUMBER) {
        to_lower(&b, wt, word, connector);
        wt = next_word(remaining, &word, &remaining);
      }
      if (wt != W_INVALID && wt != W_CONNECTOR && wt != W_PUNCT) put_rune(&b, connector);
    }
  }
  to_lower(&b, wt, word, connector);
  return sprig__ret_buf(c, &b, out);
}

SPRIG_FN(f_snakecase) { (void)n; return lower_case(c, (str_t){args[0].u.s.p, args[0].u.s.n}, '_', out); }
SPRIG_FN(f_kebabcase) { (void)n; return lower_case(c, (str_t){args[0].u.s.p, args[0].u.s.n}, '-', out); }

/* ---- goutils.WrapCustom ---- */

static int wrap_custom(tpl_call_t *c, const char *str, size_t len, int64_t wl, const char *nl, size_t nll,
                       bool long_words, tpl_value_t *out) {
  if (!len) return *out = tpl_value_str(""), 0;
  if (!nll) nl = "\n", nll = 1;
  if (wl < 1) wl = 1;
  size_t w = (size_t)wl, offset = 0;
  buf_t b = BUF_INIT;
  while (len - offset > w) {
    if (str[offset] == ' ') {
      offset++;
      continue;
    }
    size_t end = w + offset + 1;
    ssize_t sp = -1;
    for (size_t k = end; k > offset; k--)
      if (str[k - 1] == ' ') {
        sp = (ssize_t)(k - 1);
        break;
      }
    if (sp >= (ssize_t)offset) {
      buf_append(&b, str + offset, (size_t)sp - offset);
      buf_append(&b, nl, nll);
      offset = (size_t)sp + 1;
    } else if (long_words) {
      buf_append(&b, str + offset, w);
      buf_append(&b, nl, nll);
      offset += w;
    } else {
      size_t e2 = w + offset;
      const char *q = memchr(str + e2, ' ', len - e2);
      if (!q) {
        buf_append(&b, str + offset, len - offset);
        offset = len;
      } else {
        size_t at = (size_t)(q - str);
        buf_append(&b, str + offset, at - offset);
        buf_append(&b, nl, nll);
        offset = at + 1;
      }
    }
  }
  buf_append(&b, str + offset, len - offset);
  return sprig__ret_buf(c, &b, out);
}

SPRIG_FN(f_wrap) {
  (void)n;
  return wrap_custom(c, args[1].u.s.p, args[1].u.s.n, args[0].u.i, "", 0, false, out);
}
SPRIG_FN(f_wrapwith) {
  (void)n;
  return wrap_custom(c, args[2].u.s.p, args[2].u.s.n, args[0].u.i, args[1].u.s.p, args[1].u.s.n, true, out);
}

const tpl_func_t sprig__xstrings_fns[] = {
    {"snakecase", "s", f_snakecase, NULL, "func(string) string"},
    {"kebabcase", "s", f_kebabcase, NULL, "func(string) string"},
    {"camelcase", "s", f_camelcase, NULL, "func(string) string"},
    {"wrap", "is", f_wrap, NULL, "func(int, string) string"},
    {"wrapWith", "iss", f_wrapwith, NULL, "func(int, string, string) string"},
};
const size_t sprig__xstrings_nfns = sizeof sprig__xstrings_fns / sizeof sprig__xstrings_fns[0];
