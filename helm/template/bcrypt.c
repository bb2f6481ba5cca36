/* Blowfish, EksBlowfish and bcrypt (see blowfish.h), following
 * golang.org/x/crypto/blowfish and bcrypt v0.58.0; Sprig's bcrypt and
 * htpasswd functions (cost 10, random salt). */
#include <string.h>
#include <sys/random.h>

#include "helm/template/blowfish.h"
#include "helm/template/sprig_internal.h"

#define F(c, x) \
  ((((c)->s[0][(x) >> 24] + (c)->s[1][((x) >> 16) & 0xff]) ^ (c)->s[2][((x) >> 8) & 0xff]) + (c)->s[3][(x)&0xff])

static void enc(const blowfish_t *c, uint32_t *l, uint32_t *r) {
  uint32_t xl = *l ^ c->p[0], xr = *r;
  for (int i = 1; i <= 16; i += 2) {
    xr ^= F(c, xl) ^ c->p[i];
    xl ^= F(c, xr) ^ c->p[i + 1];
  }
  xr ^= c->p[17];
  *l = xr;
  *r = xl;
}

void blowfish_encrypt(const blowfish_t *c, uint8_t b[8]) {
  uint32_t l = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
  uint32_t r = (uint32_t)b[4] << 24 | (uint32_t)b[5] << 16 | (uint32_t)b[6] << 8 | b[7];
  enc(c, &l, &r);
  for (int i = 0; i < 4; i++) {
    b[i] = (uint8_t)(l >> (24 - 8 * i));
    b[4 + i] = (uint8_t)(r >> (24 - 8 * i));
  }
}

static void init_tables(blowfish_t *c) {
  memcpy(c->p, blowfish__pi_p, sizeof c->p);
  memcpy(c->s, blowfish__pi_s, sizeof c->s);
}

/* Go's getNextWord: four bytes, cycling through b. */
static uint32_t next_word(const uint8_t *b, size_t n, size_t *pos) {
  uint32_t w = 0;
  size_t j = *pos;
  for (int i = 0; i < 4; i++) {
    w = w << 8 | b[j];
    if (++j >= n) j = 0;
  }
  *pos = j;
  return w;
}

/* expandKeyWithSalt (salt == NULL: ExpandKey). */
static void expand(blowfish_t *c, const uint8_t *key, size_t kn, const uint8_t *salt, size_t sn) {
  size_t j = 0;
  for (int i = 0; i < 18; i++) c->p[i] ^= next_word(key, kn, &j);
  j = 0;
  uint32_t l = 0, r = 0;
  for (int i = 0; i < 18; i += 2) {
    if (salt) {
      l ^= next_word(salt, sn, &j);
      r ^= next_word(salt, sn, &j);
    }
    enc(c, &l, &r);
    c->p[i] = l;
    c->p[i + 1] = r;
  }
  for (int b = 0; b < 4; b++) {
    for (int i = 0; i < 256; i += 2) {
      if (salt) {
        l ^= next_word(salt, sn, &j);
        r ^= next_word(salt, sn, &j);
      }
      enc(c, &l, &r);
      c->s[b][i] = l;
      c->s[b][i + 1] = r;
    }
  }
}

void blowfish_init(blowfish_t *c, const uint8_t *key, size_t n) {
  init_tables(c);
  expand(c, key, n, NULL, 0);
}

static const char b64[] = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/* base64 with bcrypt's alphabet, padding removed. */
static size_t encode64(char *dst, const uint8_t *src, size_t n) {
  size_t o = 0;
  for (size_t i = 0; i < n; i += 3) {
    uint32_t v = (uint32_t)src[i] << 16;
    if (i + 1 < n) v |= (uint32_t)src[i + 1] << 8;
    if (i + 2 < n) v |= src[i + 2];
    dst[o++] = b64[v >> 18];
    dst[o++] = b64[(v >> 12) & 63];
    if (i + 1 < n) dst[o++] = b64[(v >> 6) & 63];
    if (i + 2 < n) dst[o++] = b64[v & 63];
  }
  return o;
}

int bcrypt_hash(const uint8_t *pw, size_t n, int cost, const uint8_t salt[16], char out[61]) {
  if (n > 72) return -1;
  /* The key includes the trailing NUL (bug compatibility with C bcrypt). */
  uint8_t key[73];
  memcpy(key, pw, n);
  key[n] = 0;
  size_t kn = n + 1;
  blowfish_t *c = malloc(sizeof *c);
  if (!c) return TPL_ENOMEM;
  init_tables(c);
  expand(c, key, kn, salt, 16);
  for (uint64_t i = 0, rounds = (uint64_t)1 << cost; i < rounds; i++) {
    expand(c, key, kn, NULL, 0);
    expand(c, salt, 16, NULL, 0);
  }
  uint8_t data[24];
  memcpy(data, "OrpheanBeholderScryDoubt", 24);
  for (int i = 0; i < 24; i += 8)
    for (int j = 0; j < 64; j++) blowfish_encrypt(c, data + i);
  free(c);
  snprintf(out, 8, "$2a$%02d$", cost);
  size_t o = 7;
  o += encode64(out + o, salt, 16);
  o += encode64(out + o, data, 23);
  out[o] = 0;
  memset(key, 0, sizeof key);
  return 0;
}

static int bcrypt_str(tpl_call_t *c, const tpl_value_t *pw, buf_t *b) {
  uint8_t salt[16];
  size_t got = 0;
  while (got < sizeof salt) {
    ssize_t k = getrandom(salt + got, sizeof salt - got, 0);
    if (k < 0) return tpl_call_errorf(c, "getrandom failed");
    got += (size_t)k;
  }
  char h[61];
  int rc = bcrypt_hash((const uint8_t *)pw->u.s.p, pw->u.s.n, 10, salt, h);
  if (rc == TPL_ENOMEM) return rc;
  if (rc) return buf_puts(b, "failed to encrypt string with bcrypt: bcrypt: password length exceeds 72 bytes") ? TPL_ENOMEM : 0;
  return buf_puts(b, h) ? TPL_ENOMEM : 0;
}

SPRIG_FN(f_bcrypt) {
  (void)n;
  buf_t b = BUF_INIT;
  int rc = bcrypt_str(c, &args[0], &b);
  if (rc) return buf_free(&b), rc;
  return sprig__ret_buf(c, &b, out);
}

SPRIG_FN(f_htpasswd) {
  (void)n;
  buf_t b = BUF_INIT;
  int rc = 0;
  if (memchr(args[0].u.s.p, ':', args[0].u.s.n)) {
    rc |= buf_puts(&b, "invalid username: ");
    rc |= buf_append(&b, args[0].u.s.p, args[0].u.s.n);
    if (rc) return buf_free(&b), TPL_ENOMEM;
    return sprig__ret_buf(c, &b, out);
  }
  if (buf_append(&b, args[0].u.s.p, args[0].u.s.n) || buf_putc(&b, ':')) return buf_free(&b), TPL_ENOMEM;
  if ((rc = bcrypt_str(c, &args[1], &b))) return buf_free(&b), rc;
  return sprig__ret_buf(c, &b, out);
}

const tpl_func_t sprig__bcrypt_fns[] = {
    {"bcrypt", "s", f_bcrypt, NULL, "func(string) string"},
    {"htpasswd", "ss", f_htpasswd, NULL, "func(string, string) string"},
};
const size_t sprig__bcrypt_nfns = sizeof sprig__bcrypt_fns / sizeof sprig__bcrypt_fns[0];
