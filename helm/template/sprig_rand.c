/* Sprig's random functions on the kernel's CSPRNG (getrandom): uuidv4,
 * randAlphaNum/randAlpha/randNumeric/randAscii (goutils' alphabets),
 * randBytes (base64) and shuffle. Tested by properties (test_template_sprig_rand.c). */
#include <string.h>
#include <sys/random.h>

#include "base/b64.h"
#include "helm/template/sprig_internal.h"

static int fill_random(void *p, size_t n) {
  unsigned char *b = p;
  while (n) {
    ssize_t k = getrandom(b, n, 0);
    if (k <= 0) return -1;
    b += k;
    n -= (size_t)k;
  }
  return 0;
}

/* Uniform index below m by rejection sampling. */
static int rand_below(uint32_t m, uint32_t *out) {
  uint32_t lim = UINT32_MAX - UINT32_MAX % m, v;
  do {
    if (fill_random(&v, sizeof v)) return -1;
  } while (v >= lim);
  *out = v % m;
  return 0;
}

static int rand_string(tpl_call_t *c, int64_t count, const char *alphabet, tpl_value_t *out) {
  if (count <= 0) {
    *out = tpl_value_str("");
    return 0;
  }
  if (count > (1 << 24)) return tpl_call_errorf(c, "random string of %lld characters is too long", (long long)count);
  size_t m = strlen(alphabet);
  char *p = tpl_arena_alloc(tpl_call_arena(c), (size_t)count + 1);
  if (!p) return TPL_ENOMEM;
  for (int64_t i = 0; i < count; i++) {
    uint32_t k;
    if (rand_below((uint32_t)m, &k)) return tpl_call_errorf(c, "getrandom failed");
    p[i] = alphabet[k];
  }
  *out = tpl_value_strn(p, (size_t)count);
  return 0;
}

#define ALPHA "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
#define DIGITS "0123456789"

SPRIG_FN(f_randalphanum) { return rand_string(c, args[0].u.i, ALPHA DIGITS, out); }
SPRIG_FN(f_randalpha) { return rand_string(c, args[0].u.i, ALPHA, out); }
SPRIG_FN(f_randnumeric) { return rand_string(c, args[0].u.i, DIGITS, out); }
SPRIG_FN(f_randascii) {
  char al[96];
  for (int i = 0; i < 95; i++) al[i] = (char)(32 + i);
  al[95] = 0;
  return rand_string(c, args[0].u.i, al, out);
}

SPRIG_FN(f_randbytes) {
  int64_t count = args[0].u.i;
  if (count < 0) return tpl_call_errorf(c, "runtime error: makeslice: len out of range");
  if (count > (1 << 24)) return tpl_call_errorf(c, "randBytes: %lld bytes is too many", (long long)count);
  unsigned char *b = tpl_arena_alloc(tpl_call_arena(c), (size_t)count + 1);
  if (!b) return TPL_ENOMEM;
  if (fill_random(b, (size_t)count)) return tpl_call_errorf(c, "getrandom failed");
  size_t len = b64_encoded_len((size_t)count);
  char *p = tpl_arena_alloc(tpl_call_arena(c), len + 1);
  if (!p) return TPL_ENOMEM;
  b64_encode(b, (size_t)count, p);
  *out = tpl_value_strn(p, len);
  return 0;
}

SPRIG_FN(f_uuidv4) {
  unsigned char u[16];
  if (fill_random(u, sizeof u)) return tpl_call_errorf(c, "getrandom failed");
  u[6] = (unsigned char)((u[6] & 0x0F) | 0x40);
  u[8] = (unsigned char)((u[8] & 0x3F) | 0x80);
  char s[37];
  static const char hx[] = "0123456789abcdef";
  size_t k = 0;
  for (int i = 0; i < 16; i++) {
    if (i == 4 || i == 6 || i == 8 || i == 10) s[k++] = '-';
    s[k++] = hx[u[i] >> 4];
    s[k++] = hx[u[i] & 15];
  }
  return sprig__ret_str(c, s, 36, out);
}

/* xstrings.Shuffle: a random permutation of the runes. */
SPRIG_FN(f_shuffle) {
  const char *p = args[0].u.s.p;
  size_t len = args[0].u.s.n, nr = 0;
  int32_t *r = malloc((len + 1) * sizeof(int32_t));
  if (!r) return TPL_ENOMEM;
  for (size_t i = 0; i < len;) i += tpl__utf8_decode(p + i, len - i, &r[nr++]);
  for (size_t i = nr; i > 1; i--) {
    uint32_t j;
    if (rand_below((uint32_t)i, &j)) {
      free(r);
      return tpl_call_errorf(c, "getrandom failed");
    }
    int32_t t = r[i - 1];
    r[i - 1] = r[j];
    r[j] = t;
  }
  buf_t b = BUF_INIT;
  for (size_t i = 0; i < nr; i++) {
    char u[4];
    buf_append(&b, u, tpl__utf8_encode(r[i], u));
  }
  free(r);
  return sprig__ret_buf(c, &b, out);
}

const tpl_func_t sprig__rand_fns[] = {
    {"randAlphaNum", "i", f_randalphanum, NULL, "func(int) string"},
    {"randAlpha", "i", f_randalpha, NULL, "func(int) string"},
    {"randNumeric", "i", f_randnumeric, NULL, "func(int) string"},
    {"randAscii", "i", f_randascii, NULL, "func(int) string"},
    {"randBytes", "i", f_randbytes, NULL, "func(int) (string, error)"},
    {"uuidv4", "", f_uuidv4, NULL, "func() string"},
    {"shuffle", "s", f_shuffle, NULL, "func(string) string"},
};
const size_t sprig__rand_nfns = sizeof sprig__rand_fns / sizeof sprig__rand_fns[0];
