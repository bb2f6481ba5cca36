/* Lookups over the Go-generated tables in unicode_tables.c. */
#include "helm/template/unicode.h"

bool tpl_unicode_is(int t, int32_t r) {
  const tpl_utable_t *tb = &tpl_utables[t];
  if (r < 0 || tb->n == 0 || (uint32_t)r < tb->r[0].lo || (uint32_t)r > tb->r[tb->n - 1].hi) return false;
  size_t lo = 0, hi = tb->n;
  while (lo < hi) {
    size_t m = lo + (hi - lo) / 2;
    if ((uint32_t)r > tb->r[m].hi) lo = m + 1;
    else if ((uint32_t)r < tb->r[m].lo) hi = m;
    else return true;
  }
  return false;
}

bool tpl_unicode_is_print(int32_t r) {
  if (r >= 0x20 && r < 0x7F) return true;
  return tpl_unicode_is(TPL_U_PRINT, r);
}
bool tpl_unicode_is_graphic(int32_t r) { return tpl_unicode_is(TPL_U_GRAPHIC, r); }
bool tpl_unicode_is_letter(int32_t r) {
  if (r < 0x80) return (r | 0x20) >= 'a' && (r | 0x20) <= 'z';
  return tpl_unicode_is(TPL_U_LETTER, r);
}
bool tpl_unicode_is_digit(int32_t r) {
  if (r < 0x80) return r >= '0' && r <= '9';
  return tpl_unicode_is(TPL_U_DIGIT, r);
}
/* Latin-1 first, as Go's unicode.IsSpace does. */
bool tpl_unicode_is_space(int32_t r) {
  if (r >= 0 && r <= 0xFF)
    return r == ' ' || (r >= '\t' && r <= '\r') || r == 0x85 || r == 0xA0;
  return tpl_unicode_is(TPL_U_SPACE, r);
}
bool tpl_unicode_is_upper(int32_t r) { return tpl_unicode_is(TPL_U_UPPER, r); }
bool tpl_unicode_is_lower(int32_t r) { return tpl_unicode_is(TPL_U_LOWER, r); }
bool tpl_unicode_is_punct(int32_t r) { return tpl_unicode_is(TPL_U_PUNCT, r); }

static int32_t tpl__ucase(int which, int32_t r) {
  const tpl_ucases_t *c = &tpl_ucases[which];
  if (r < 0) return r;
  size_t lo = 0, hi = c->n;
  while (lo < hi) {
    size_t m = lo + (hi - lo) / 2;
    if ((uint32_t)r > c->r[m].hi) lo = m + 1;
    else if ((uint32_t)r < c->r[m].lo) hi = m;
    else return r + c->r[m].delta;
  }
  return r;
}

/* ASCII first (as Go's unicode.ToUpper/ToLower/ToTitle do): no table search. */
int32_t tpl_unicode_to_upper(int32_t r) {
  if (r < 0x80) return r >= 'a' && r <= 'z' ? r - 32 : r;
  return tpl__ucase(0, r);
}
int32_t tpl_unicode_to_lower(int32_t r) {
  if (r < 0x80) return r >= 'A' && r <= 'Z' ? r + 32 : r;
  return tpl__ucase(1, r);
}
int32_t tpl_unicode_to_title(int32_t r) {
  if (r < 0x80) return r >= 'a' && r <= 'z' ? r - 32 : r;
  return tpl__ucase(2, r);
}

/* runtime.roundupsize: the bytes mallocgc really hands out for size. */
static size_t tpl__roundupsize(size_t size, bool noscan) {
  enum { max_small = 32768, header = 8, min_for_header = 512, page = 8192 };
  size_t req = size;
  if (req <= max_small - header) {
    if (!noscan && req > min_for_header) req += header;
    size_t lo = 0, hi = tpl_go_size_classes_n;
    while (lo < hi) { /* smallest class >= req */
      size_t m = lo + (hi - lo) / 2;
      if (tpl_go_size_classes[m] < req) lo = m + 1;
      else hi = m;
    }
    return tpl_go_size_classes[lo] - (req - size);
  }
  req += page - 1;
  if (req < size) return size;
  return req & ~(size_t)(page - 1);
}

/* runtime.nextslicecap + growslice's rounding to the allocation size. */
size_t tpl_go_append_cap(size_t old_cap, size_t new_len, size_t esize, bool noscan) {
  size_t newcap = old_cap, dbl = old_cap + old_cap;
  if (new_len > dbl) {
    newcap = new_len;
  } else if (old_cap < 256) {
    newcap = dbl;
  } else {
    while (newcap < new_len) newcap += (newcap + 3 * 256) >> 2;
  }
  if (esize == 0) return newcap;
  if (newcap > SIZE_MAX / esize / 2) return new_len;
  return tpl__roundupsize(newcap * esize, noscan) / esize;
}
