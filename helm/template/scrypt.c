/* scrypt (RFC 7914) as golang.org/x/crypto/scrypt computes it: PBKDF2-
 * HMAC-SHA256 with one iteration (on mbedTLS's HMAC), ROMix with BlockMix
 * and Salsa20/8 written here; and Sprig's derivePassword on top of it
 * (Master Password's algorithm: N=32768, r=8, p=2, 64-byte key, then
 * HMAC-SHA256 of the site and counter picks a template and its characters). */
#include <string.h>

#include <mbedtls/md.h>

#include "helm/template/sprig_internal.h"

#define ROTL(a, b) (((a) << (b)) | ((a) >> (32 - (b))))

static void salsa20_8(uint32_t b[16]) {
  uint32_t x[16];
  memcpy(x, b, sizeof x);
  for (int i = 0; i < 8; i += 2) {
    x[4] ^= ROTL(x[0] + x[12], 7);
    x[8] ^= ROTL(x[4] + x[0], 9);
    x[12] ^= ROTL(x[8] + x[4], 13);
    x[0] ^= ROTL(x[12] + x[8], 18);
    x[9] ^= ROTL(x[5] + x[1], 7);
    x[13] ^= ROTL(x[9] + x[5], 9);
    x[1] ^= ROTL(x[13] + x[9], 13);
    x[5] ^= ROTL(x[1] + x[13], 18);
    x[14] ^= ROTL(x[10] + x[6], 7);
    x[2] ^= ROTL(x[14] + x[10], 9);
    x[6] ^= ROTL(x[2] + x[14], 13);
    x[10] ^= ROTL(x[6] + x[2], 18);
    x[3] ^= ROTL(x[15] + x[11], 7);
    x[7] ^= ROTL(x[3] + x[15], 9);
    x[11] ^= ROTL(x[7] + x[3], 13);
    x[15] ^= ROTL(x[11] + x[7], 18);
    x[1] ^= ROTL(x[0] + x[3], 7);
    x[2] ^= ROTL(x[1] + x[0], 9);
    x[3] ^= ROTL(x[2] + x[1], 13);
    x[0] ^= ROTL(x[3] + x[2], 18);
    x[6] ^= ROTL(x[5] + x[4], 7);
    x[7] ^= ROTL(x[6] + x[5], 9);
    x[4] ^= ROTL(x[7] + x[6], 13);
    x[5] ^= ROTL(x[4] + x[7], 18);
    x[11] ^= ROTL(x[10] + x[9], 7);
    x[8] ^= ROTL(x[11] + x[10], 9);
    x[9] ^= ROTL(x[8] + x[11], 13);
    x[10] ^= ROTL(x[9] + x[8], 18);
    x[12] ^= ROTL(x[15] + x[14], 7);
    x[13] ^= ROTL(x[12] + x[15], 9);
    x[14] ^= ROTL(x[13] + x[12], 13);
    x[15] ^= ROTL(x[14] + x[13], 18);
  }
  for (int i = 0; i < 16; i++) b[i] += x[i];
}

/* BlockMix: b holds 2r 64-byte blocks (as 32r words); y is scratch of the same size. */
static void block_mix(uint32_t *b, uint32_t *y, size_t r) {
  uint32_t x[16];
  memcpy(x, b + (2 * r - 1) * 16, sizeof x);
  for (size_t i = 0; i < 2 * r; i++) {
    for (int k = 0; k < 16; k++) x[k] ^= b[i * 16 + (size_t)k];
    salsa20_8(x);
    memcpy(y + i * 16, x, sizeof x);
  }
  for (size_t i = 0; i < r; i++) {
    memcpy(b + i * 16, y + (2 * i) * 16, 64);
    memcpy(b + (r + i) * 16, y + (2 * i + 1) * 16, 64);
  }
}

static void smix(uint8_t *b, size_t r, uint64_t n, uint32_t *v, uint32_t *x, uint32_t *y) {
  size_t words = 32 * r;
  for (size_t k = 0; k < words; k++)
    x[k] = (uint32_t)b[4 * k] | (uint32_t)b[4 * k + 1] << 8 | (uint32_t)b[4 * k + 2] << 16 | (uint32_t)b[4 * k + 3] << 24;
  for (uint64_t i = 0; i < n; i++) {
    memcpy(v + i * words, x, words * 4);
    block_mix(x, y, r);
  }
  for (uint64_t i = 0; i < n; i++) {
    uint64_t j = ((uint64_t)x[(2 * r - 1) * 16 + 1] << 32 | x[(2 * r - 1) * 16]) & (n - 1);
    for (size_t k = 0; k < words; k++) x[k] ^= v[j * words + k];
    block_mix(x, y, r);
  }
  for (size_t k = 0; k < words; k++) {
    b[4 * k] = (uint8_t)x[k];
    b[4 * k + 1] = (uint8_t)(x[k] >> 8);
    b[4 * k + 2] = (uint8_t)(x[k] >> 16);
    b[4 * k + 3] = (uint8_t)(x[k] >> 24);
  }
}

/* PBKDF2-HMAC-SHA256 with one iteration. 0 or -1. */
static int pbkdf2_1(const uint8_t *pw, size_t pn, const uint8_t *salt, size_t sn, uint8_t *out, size_t olen) {
  const mbedtls_md_info_t *md = mbedtls_md_info_from_type(MBEDTLS_MD_SHA256);
  uint8_t *in = malloc(sn + 4);
  if (!md || !in) return free(in), -1;
  memcpy(in, salt, sn);
  for (uint32_t blk = 1; olen; blk++) {
    in[sn] = (uint8_t)(blk >> 24);
    in[sn + 1] = (uint8_t)(blk >> 16);
    in[sn + 2] = (uint8_t)(blk >> 8);
    in[sn + 3] = (uint8_t)blk;
    uint8_t u[32];
    if (mbedtls_md_hmac(md, pw, pn, in, sn + 4, u)) return free(in), -1;
    size_t k = olen < 32 ? olen : 32;
    memcpy(out, u, k);
    out += k;
    olen -= k;
  }
  free(in);
  return 0;
}

/* scrypt.Key for N a power of two > 1, r*p < 2^30. 0, -1 (hash failure) or TPL_ENOMEM. */
int sprig__scrypt(const uint8_t *pw, size_t pn, const uint8_t *salt, size_t sn, uint64_t n, size_t r, size_t p,
                  uint8_t *out, size_t olen);
int sprig__scrypt(const uint8_t *pw, size_t pn, const uint8_t *salt, size_t sn, uint64_t n, size_t r, size_t p,
                  uint8_t *out, size_t olen) {
  size_t blen = p * 128 * r;
  uint8_t *b = malloc(blen);
  uint32_t *v = malloc((size_t)n * 32 * r * 4);
  uint32_t *xy = malloc(64 * r * 4);
  int rc = 0;
  if (!b || !v || !xy) {
    rc = TPL_ENOMEM;
  } else if (pbkdf2_1(pw, pn, salt, sn, b, blen)) {
    rc = -1;
  } else {
    for (size_t i = 0; i < p; i++) smix(b + i * 128 * r, r, n, v, xy, xy + 32 * r);
    if (pbkdf2_1(pw, pn, b, blen, out, olen)) rc = -1;
  }
  free(b);
  free(v);
  free(xy);
  return rc;
}

static const char *const tmpl_maximum[] = {"anoxxxxxxxxxxxxxxxxx", "axxxxxxxxxxxxxxxxxno"};
static const char *const tmpl_long[] = {"CvcvnoCvcvCvcv", "CvcvCvcvnoCvcv", "CvcvCvcvCvcvno", "CvccnoCvcvCvcv", "CvccCvcvnoCvcv",
                                        "CvccCvcvCvcvno", "CvcvnoCvccCvcv", "CvcvCvccnoCvcv", "CvcvCvccCvcvno", "CvcvnoCvcvCvcc",
                                        "CvcvCvcvnoCvcc", "CvcvCvcvCvccno", "CvccnoCvccCvcv", "CvccCvccnoCvcv", "CvccCvccCvcvno",
                                        "CvcvnoCvccCvcc", "CvcvCvccnoCvcc", "CvcvCvccCvccno", "CvccnoCvcvCvcc", "CvccCvcvnoCvcc",
                                        "CvccCvcvCvccno"};
static const char *const tmpl_medium[] = {"CvcnoCvc", "CvcCvcno"};
static const char *const tmpl_short[] = {"Cvcn"};
static const char *const tmpl_basic[] = {"aaanaaan", "aannaaan", "aaannaaa"};
static const char *const tmpl_pin[] = {"nnnn"};

static const char *chars_for(char c) {
  switch (c) {
  case 'V': return "AEIOU";
  case 'C': return "BCDFGHJKLMNPQRSTVWXYZ";
  case 'v': return "aeiou";
  case 'c': return "bcdfghjklmnpqrstvwxyz";
  case 'A': return "AEIOUBCDFGHJKLMNPQRSTVWXYZ";
  case 'a': return "AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz";
  case 'n': return "0123456789";
  case 'o': return "@&%?,=[]_:-+*$#!'^~;()/.";
  case 'x': return "AEIOUaeiouBCDFGHJKLMNPQRSTVWXYZbcdfghjklmnpqrstvwxyz0123456789!@#$%^&*()";
  }
  return "";
}

static void be32(buf_t *b, uint32_t v) {
  char t[4] = {(char)(v >> 24), (char)(v >> 16), (char)(v >> 8), (char)v};
  buf_append(b, t, 4);
}

SPRIG_FN(f_derive_password) {
  (void)n;
  /* counter is a Go uint32 (signature letter 'u'): the executor converted the constant. */
  uint32_t counter = (uint32_t)args[0].u.u;
  const tpl_value_t *type = &args[1], *pw = &args[2], *user = &args[3], *site = &args[4];
  const char *const *tmpls = NULL;
  size_t ntm = 0;
#define T(name, arr)                                                                                  \
  if (type->u.s.n == strlen(name) && memcmp(type->u.s.p, name, type->u.s.n) == 0) {                   \
    tmpls = arr;                                                                                      \
    ntm = sizeof arr / sizeof arr[0];                                                                 \
  }
  T("maximum", tmpl_maximum) T("long", tmpl_long) T("medium", tmpl_medium) T("short", tmpl_short) T("basic", tmpl_basic)
      T("pin", tmpl_pin)
#undef T
  buf_t b = BUF_INIT;
  if (!tmpls) {
    buf_puts(&b, "cannot find password template ");
    buf_append(&b, type->u.s.p, type->u.s.n);
    return sprig__ret_buf(c, &b, out);
  }
  static const char seed[] = "com.lyndir.masterpassword";
  buf_append(&b, seed, sizeof seed - 1);
  be32(&b, (uint32_t)user->u.s.n);
  buf_append(&b, user->u.s.p, user->u.s.n);
  uint8_t key[64];
  int rc = sprig__scrypt((const uint8_t *)pw->u.s.p, pw->u.s.n, (const uint8_t *)b.data, b.len, 32768, 8, 2, key, 64);
  if (rc) {
    buf_free(&b);
    return rc == TPL_ENOMEM ? rc : tpl_call_errorf(c, "scrypt failed");
  }
  b.len = sizeof seed - 1;
  be32(&b, (uint32_t)site->u.s.n);
  buf_append(&b, site->u.s.p, site->u.s.n);
  be32(&b, counter);
  uint8_t mac[32];
  if (mbedtls_md_hmac(mbedtls_md_info_from_type(MBEDTLS_MD_SHA256), key, 64, (const uint8_t *)b.data, b.len, mac)) {
    buf_free(&b);
    return tpl_call_errorf(c, "hmac failed");
  }
  const char *tmpl = tmpls[mac[0] % ntm];
  buf_reset(&b);
  for (size_t i = 0; tmpl[i]; i++) {
    const char *cs = chars_for(tmpl[i]);
    buf_putc(&b, cs[mac[i + 1] % strlen(cs)]);
  }
  memset(key, 0, sizeof key);
  return sprig__ret_buf(c, &b, out);
}

const tpl_func_t sprig__scrypt_fns[] = {
    {"derivePassword", "ussss", f_derive_password, NULL, "func(uint32, string, string, string, string) string"},
};
const size_t sprig__scrypt_nfns = sizeof sprig__scrypt_fns / sizeof sprig__scrypt_fns[0];
