/* Ed25519 after RFC 8032 section 5.1 (see ed25519.h). */
#include "base/ed25519.h"

#include <string.h>

#include <mbedtls/platform_util.h>
#include <mbedtls/sha512.h>
#include <mbedtls/version.h>

/* ---- SHA-512 over up to three pieces --------------------------------------------- */

#if MBEDTLS_VERSION_NUMBER >= 0x03000000
#define sha512_starts(c) mbedtls_sha512_starts(c, 0)
#define sha512_update mbedtls_sha512_update
#define sha512_finish mbedtls_sha512_finish
#else
#define sha512_starts(c) mbedtls_sha512_starts_ret(c, 0)
#define sha512_update mbedtls_sha512_update_ret
#define sha512_finish mbedtls_sha512_finish_ret
#endif

static void sha512_3(uint8_t out[64], const void *a, size_t an, const void *b, size_t bn, const void *m, size_t mn) {
  mbedtls_sha512_context c;
  mbedtls_sha512_init(&c);
  /* Without hardware hooks these cannot fail on valid arguments. */
  (void)sha512_starts(&c);
  if (an) (void)sha512_update(&c, a, an);
  if (bn) (void)sha512_update(&c, b, bn);
  if (mn) (void)sha512_update(&c, m, mn);
  (void)sha512_finish(&c, out);
  mbedtls_sha512_free(&c);
}

/* ---- the field GF(p), p = 2^255 - 19 ------------------------------------------------ */

/* An element is v[0] + v[1] 2^51 + v[2] 2^102 + v[3] 2^153 + v[4] 2^204; after every
 * operation each limb is below 2^52, which keeps the 128-bit products of fe_mul far
 * from overflowing. */
typedef struct {
  uint64_t v[5];
} fe;
typedef unsigned __int128 u128;

#define M51 ((UINT64_C(1) << 51) - 1)

/* d = -121665/121666, 2d, sqrt(-1) = 2^((p-1)/4), and the base point B = (x, 4/5) with x
 * even, its T = xy: the values of RFC 8032 section 5.1 in 51-bit limbs. */
static const fe FE_D2 = {{0x69b9426b2f159ULL, 0x35050762add7aULL, 0x3cf44c0038052ULL, 0x6738cc7407977ULL,
                          0x2406d9dc56dffULL}};
static const fe FE_D = {{0x34dca135978a3ULL, 0x1a8283b156ebdULL, 0x5e7a26001c029ULL, 0x739c663a03cbbULL,
                         0x52036cee2b6ffULL}};
static const fe FE_SQRTM1 = {{0x61b274a0ea0b0ULL, 0xd5a5fc8f189dULL, 0x7ef5e9cbd0c60ULL, 0x78595a6804c9eULL,
                              0x2b8324804fc1dULL}};
static const fe FE_BX = {{0x62d608f25d51aULL, 0x412a4b4f6592aULL, 0x75b7171a4b31dULL, 0x1ff60527118feULL,
                          0x216936d3cd6e5ULL}};
static const fe FE_BY = {{0x6666666666658ULL, 0x4ccccccccccccULL, 0x1999999999999ULL, 0x3333333333333ULL,
                          0x6666666666666ULL}};
static const fe FE_BT = {{0x68ab3a5b7dda3ULL, 0xeea2a5eadbbULL, 0x2af8df483c27eULL, 0x332b375274732ULL,
                          0x67875f0fd78b7ULL}};

static void fe_set(fe *h, uint64_t x) {
  memset(h, 0, sizeof *h);
  h->v[0] = x;
}

/* Moves each limb's bits above 51 into the next one (the top one's, times 19, into v[0]). */
static void fe_carry(fe *h) {
  for (int i = 0; i < 4; i++) {
    h->v[i + 1] += h->v[i] >> 51;
    h->v[i] &= M51;
  }
  h->v[0] += 19 * (h->v[4] >> 51);
  h->v[4] &= M51;
}

static void fe_add(fe *h, const fe *f, const fe *g) {
  for (int i = 0; i < 5; i++) h->v[i] = f->v[i] + g->v[i];
  fe_carry(h);
}

/* f - g as f + 4p - g, so that no limb goes below zero. */
static void fe_sub(fe *h, const fe *f, const fe *g) {
  static const uint64_t p4[5] = {4 * (M51 - 18), 4 * M51, 4 * M51, 4 * M51, 4 * M51};
  for (int i = 0; i < 5; i++) h->v[i] = f->v[i] + p4[i] - g->v[i];
  fe_carry(h);
}

static void fe_neg(fe *h, const fe *f) {
  fe z;
  fe_set(&z, 0);
  fe_sub(h, &z, f);
}

/* Schoolbook product; a term at 2^(51k) with k >= 5 folds down as 2^255 = 19 (mod p). */
static void fe_mul(fe *h, const fe *f, const fe *g) {
  const uint64_t *a = f->v, *b = g->v;
  uint64_t b19[5];
  for (int i = 1; i < 5; i++) b19[i] = 19 * b[i];
  u128 r[5];
  r[0] = (u128)a[0] * b[0] + (u128)a[1] * b19[4] + (u128)a[2] * b19[3] + (u128)a[3] * b19[2] + (u128)a[4] * b19[1];
  r[1] = (u128)a[0] * b[1] + (u128)a[1] * b[0] + (u128)a[2] * b19[4] + (u128)a[3] * b19[3] + (u128)a[4] * b19[2];
  r[2] = (u128)a[0] * b[2] + (u128)a[1] * b[1] + (u128)a[2] * b[0] + (u128)a[3] * b19[4] + (u128)a[4] * b19[3];
  r[3] = (u128)a[0] * b[3] + (u128)a[1] * b[2] + (u128)a[2] * b[1] + (u128)a[3] * b[0] + (u128)a[4] * b19[4];
  r[4] = (u128)a[0] * b[4] + (u128)a[1] * b[3] + (u128)a[2] * b[2] + (u128)a[3] * b[1] + (u128)a[4] * b[0];
  for (int i = 0; i < 4; i++) {
    r[i + 1] += r[i] >> 51;
    h->v[i] = (uint64_t)r[i] & M51;
  }
  h->v[4] = (uint64_t)r[4] & M51;
  h->v[0] += 19 * (uint64_t)(r[4] >> 51);
  h->v[1] += h->v[0] >> 51;
  h->v[0] &= M51;
}

static void fe_sq(fe *h, const fe *f) { fe_mul(h, f, f); }

/* f^e for a public 256-bit exponent e (little-endian bytes), square and multiply. */
static void fe_pow(fe *h, const fe *f, const uint8_t e[32]) {
  fe r;
  fe_set(&r, 1);
  for (int i = 255; i >= 0; i--) {
    fe_sq(&r, &r);
    if ((e[i >> 3] >> (i & 7)) & 1) fe_mul(&r, &r, f);
  }
  *h = r;
}

/* 1/f = f^(p-2). */
static void fe_inv(fe *h, const fe *f) {
  uint8_t e[32];
  memset(e, 0xff, sizeof e);
  e[0] = 0xeb; /* p - 2 = 2^255 - 21 */
  e[31] = 0x7f;
  fe_pow(h, f, e);
}

static void fe_tobytes(uint8_t s[32], const fe *f) {
  fe h = *f;
  fe_carry(&h);
  /* Now h < 2^255 + 2^18 < 2p: q = 1 exactly when h >= p, i.e. when h + 19 reaches 2^255. */
  uint64_t q = (h.v[0] + 19) >> 51;
  for (int i = 1; i < 5; i++) q = (h.v[i] + q) >> 51;
  h.v[0] += 19 * q; /* h - qp = h + 19q - q 2^255: drop bit 255 below */
  for (int i = 0; i < 4; i++) {
    h.v[i + 1] += h.v[i] >> 51;
    h.v[i] &= M51;
  }
  h.v[4] &= M51;
  uint64_t w[4] = {h.v[0] | h.v[1] << 51, h.v[1] >> 13 | h.v[2] << 38, h.v[2] >> 26 | h.v[3] << 25,
                   h.v[3] >> 39 | h.v[4] << 12};
  for (int i = 0; i < 32; i++) s[i] = (uint8_t)(w[i / 8] >> (8 * (i % 8)));
}

static uint64_t load64(const uint8_t *s) {
  uint64_t x = 0;
  for (int i = 7; i >= 0; i--) x = x << 8 | s[i];
  return x;
}

/* The low 255 bits of s (the caller deals with bit 255 and with values >= p). */
static void fe_frombytes(fe *h, const uint8_t s[32]) {
  h->v[0] = load64(s) & M51;
  h->v[1] = (load64(s + 6) >> 3) & M51;
  h->v[2] = (load64(s + 12) >> 6) & M51;
  h->v[3] = (load64(s + 19) >> 1) & M51;
  h->v[4] = (load64(s + 24) >> 12) & M51;
}

static int fe_isneg(const fe *f) {
  uint8_t s[32];
  fe_tobytes(s, f);
  return s[0] & 1;
}

static int fe_eq(const fe *f, const fe *g) {
  uint8_t a[32], b[32];
  fe_tobytes(a, f);
  fe_tobytes(b, g);
  return memcmp(a, b, 32) == 0;
}

/* f = g when mask is all ones, unchanged when it is zero. */
static void fe_cmov(fe *f, const fe *g, uint64_t mask) {
  for (int i = 0; i < 5; i++) f->v[i] ^= mask & (f->v[i] ^ g->v[i]);
}

/* ---- points in extended coordinates (X:Y:Z:T), x = X/Z, y = Y/Z, xy = T/Z ---------- */

typedef struct {
  fe X, Y, Z, T;
} ge;

static void ge_identity(ge *p) {
  fe_set(&p->X, 0);
  fe_set(&p->Y, 1);
  fe_set(&p->Z, 1);
  fe_set(&p->T, 0);
}

static void ge_base(ge *p) {
  p->X = FE_BX;
  p->Y = FE_BY;
  fe_set(&p->Z, 1);
  p->T = FE_BT;
}

/* RFC 8032 5.1.4 addition (complete: also right for p == q). */
static void ge_add(ge *r, const ge *p, const ge *q) {
  fe a, b, c, d, e, f, g, h, t;
  fe_sub(&a, &p->Y, &p->X);
  fe_sub(&t, &q->Y, &q->X);
  fe_mul(&a, &a, &t);
  fe_add(&b, &p->Y, &p->X);
  fe_add(&t, &q->Y, &q->X);
  fe_mul(&b, &b, &t);
  fe_mul(&c, &p->T, &q->T);
  fe_mul(&c, &c, &FE_D2);
  fe_mul(&d, &p->Z, &q->Z);
  fe_add(&d, &d, &d);
  fe_sub(&e, &b, &a);
  fe_sub(&f, &d, &c);
  fe_add(&g, &d, &c);
  fe_add(&h, &b, &a);
  fe_mul(&r->X, &e, &f);
  fe_mul(&r->Y, &g, &h);
  fe_mul(&r->T, &e, &h);
  fe_mul(&r->Z, &f, &g);
}

/* RFC 8032 5.1.4 doubling. */
static void ge_dbl(ge *r, const ge *p) {
  fe a, b, c, e, f, g, h;
  fe_sq(&a, &p->X);
  fe_sq(&b, &p->Y);
  fe_sq(&c, &p->Z);
  fe_add(&c, &c, &c);
  fe_add(&h, &a, &b);
  fe_add(&e, &p->X, &p->Y);
  fe_sq(&e, &e);
  fe_sub(&e, &h, &e);
  fe_sub(&g, &a, &b);
  fe_add(&f, &c, &g);
  fe_mul(&r->X, &e, &f);
  fe_mul(&r->Y, &g, &h);
  fe_mul(&r->T, &e, &h);
  fe_mul(&r->Z, &f, &g);
}

/* r = [s]p for a 256-bit little-endian s: one doubling and one addition per bit, the
 * sum kept or not by a mask, so the work does not depend on the scalar's bits. */
static void ge_scalarmult(ge *r, const ge *p, const uint8_t s[32]) {
  ge acc, t;
  ge_identity(&acc);
  for (int i = 255; i >= 0; i--) {
    ge_dbl(&acc, &acc);
    ge_add(&t, &acc, p);
    uint64_t mask = (uint64_t)0 - (uint64_t)((s[i >> 3] >> (i & 7)) & 1);
    fe_cmov(&acc.X, &t.X, mask);
    fe_cmov(&acc.Y, &t.Y, mask);
    fe_cmov(&acc.Z, &t.Z, mask);
    fe_cmov(&acc.T, &t.T, mask);
  }
  *r = acc;
}

/* 5.1.2: y in little-endian with the low bit of x in bit 255. */
static void ge_encode(uint8_t s[32], const ge *p) {
  fe zi, x, y;
  fe_inv(&zi, &p->Z);
  fe_mul(&x, &p->X, &zi);
  fe_mul(&y, &p->Y, &zi);
  fe_tobytes(s, &y);
  s[31] |= (uint8_t)(fe_isneg(&x) << 7);
}

/* 5.1.3; -1 when s is not the canonical encoding of a curve point. */
static int ge_decode(ge *p, const uint8_t s[32]) {
  int x0 = s[31] >> 7;
  fe y, u, v, v3, x, t;
  fe_frombytes(&y, s);
  uint8_t chk[32];
  fe_tobytes(chk, &y);
  chk[31] |= (uint8_t)(x0 << 7);
  if (memcmp(chk, s, 32)) return -1; /* y >= p */
  fe one;
  fe_set(&one, 1);
  fe_sq(&u, &y);
  fe_mul(&v, &u, &FE_D);
  fe_sub(&u, &u, &one); /* u = y^2 - 1 */
  fe_add(&v, &v, &one); /* v = d y^2 + 1 */
  /* x = u v^3 (u v^7)^((p-5)/8) */
  fe_sq(&v3, &v);
  fe_mul(&v3, &v3, &v);
  fe_sq(&t, &v3);
  fe_mul(&t, &t, &v);
  fe_mul(&t, &t, &u);
  uint8_t e[32];
  memset(e, 0xff, sizeof e);
  e[0] = 0xfd; /* (p-5)/8 = 2^252 - 3 */
  e[31] = 0x0f;
  fe_pow(&t, &t, e);
  fe_mul(&x, &u, &v3);
  fe_mul(&x, &x, &t);
  fe vx2, nu;
  fe_sq(&vx2, &x);
  fe_mul(&vx2, &vx2, &v);
  fe_neg(&nu, &u);
  if (!fe_eq(&vx2, &u)) {
    if (!fe_eq(&vx2, &nu)) return -1;
    fe_mul(&x, &x, &FE_SQRTM1);
  }
  fe zero;
  fe_set(&zero, 0);
  if (fe_eq(&x, &zero) && x0) return -1;
  if (fe_isneg(&x) != x0) fe_neg(&x, &x);
  p->X = x;
  p->Y = y;
  fe_set(&p->Z, 1);
  fe_mul(&p->T, &x, &y);
  return 0;
}

/* ---- scalars mod L = 2^252 + 27742317777372353535851937790883648493 ---------------- */

static const uint32_t SC_L[8] = {0x5cf5d3ed, 0x5812631a, 0xa2f79cd6, 0x14def9de, 0, 0, 0, 0x10000000};

/* out = x mod L for a little-endian number of nbytes bytes: one bit at a time, r = 2r + bit
 * then r -= L when that does not borrow (chosen by a mask). */
static void sc_reduce(uint8_t out[32], const uint8_t *x, size_t nbytes) {
  uint32_t r[8] = {0};
  for (size_t i = nbytes * 8; i-- > 0;) {
    uint32_t bit = (x[i >> 3] >> (i & 7)) & 1;
    for (int k = 7; k > 0; k--) r[k] = r[k] << 1 | r[k - 1] >> 31;
    r[0] = r[0] << 1 | bit;
    uint32_t t[8];
    uint64_t borrow = 0;
    for (int k = 0; k < 8; k++) {
      uint64_t d = (uint64_t)r[k] - SC_L[k] - borrow;
      t[k] = (uint32_t)d;
      borrow = (d >> 32) & 1;
    }
    uint32_t keep = (uint32_t)0 - (uint32_t)borrow; /* all ones: r < L, keep r */
    for (int k = 0; k < 8; k++) r[k] = (r[k] & keep) | (t[k] & ~keep);
  }
  for (int i = 0; i < 32; i++) out[i] = (uint8_t)(r[i / 4] >> (8 * (i % 4)));
}

/* out = (a b + c) mod L for 256-bit little-endian a, b, c. */
static void sc_muladd(uint8_t out[32], const uint8_t a[32], const uint8_t b[32], const uint8_t c[32]) {
  uint32_t x[8], y[8], p[17] = {0};
  for (int i = 0; i < 8; i++) {
    x[i] = (uint32_t)a[4 * i] | (uint32_t)a[4 * i + 1] << 8 | (uint32_t)a[4 * i + 2] << 16 | (uint32_t)a[4 * i + 3] << 24;
    y[i] = (uint32_t)b[4 * i] | (uint32_t)b[4 * i + 1] << 8 | (uint32_t)b[4 * i + 2] << 16 | (uint32_t)b[4 * i + 3] << 24;
  }
  for (int i = 0; i < 8; i++) {
    uint64_t carry = 0;
    for (int j = 0; j < 8; j++) {
      uint64_t t = (uint64_t)x[i] * y[j] + p[i + j] + carry;
      p[i + j] = (uint32_t)t;
      carry = t >> 32;
    }
    p[i + 8] = (uint32_t)carry;
  }
  uint64_t carry = 0;
  for (int i = 0; i < 17; i++) {
    uint64_t t = (uint64_t)p[i] + carry;
    if (i < 8)
      t += (uint32_t)c[4 * i] | (uint32_t)c[4 * i + 1] << 8 | (uint32_t)c[4 * i + 2] << 16 | (uint32_t)c[4 * i + 3] << 24;
    p[i] = (uint32_t)t;
    carry = t >> 32;
  }
  uint8_t wide[68];
  for (int i = 0; i < 68; i++) wide[i] = (uint8_t)(p[i / 4] >> (8 * (i % 4)));
  sc_reduce(out, wide, sizeof wide);
  mbedtls_platform_zeroize(wide, sizeof wide);
  mbedtls_platform_zeroize(p, sizeof p);
}

/* s < L, comparing from the top byte. */
static int sc_canonical(const uint8_t s[32]) {
  for (int i = 31; i >= 0; i--) {
    uint8_t l = (uint8_t)(SC_L[i / 4] >> (8 * (i % 4)));
    if (s[i] != l) return s[i] < l;
  }
  return 0;
}

/* ---- 5.1.5 keys, 5.1.6 signing, 5.1.7 verification --------------------------------- */

/* h = SHA-512(seed); s = its first half with bits 0-2 and 255 cleared and bit 254 set. */
static void expand_seed(uint8_t h[64], const uint8_t seed[32]) {
  sha512_3(h, seed, 32, NULL, 0, NULL, 0);
  h[0] &= 248;
  h[31] &= 127;
  h[31] |= 64;
}

static void public_from_scalar(uint8_t pub[32], const uint8_t s[32]) {
  ge B, A;
  ge_base(&B);
  ge_scalarmult(&A, &B, s);
  ge_encode(pub, &A);
}

void ed25519_public_key(uint8_t pub[32], const uint8_t seed[32]) {
  uint8_t h[64];
  expand_seed(h, seed);
  public_from_scalar(pub, h);
  mbedtls_platform_zeroize(h, sizeof h);
}

void ed25519_sign(uint8_t sig[64], const void *msg, size_t n, const uint8_t seed[32]) {
  uint8_t h[64], pub[32], d[64], r[32], k[32];
  expand_seed(h, seed);
  public_from_scalar(pub, h);
  sha512_3(d, h + 32, 32, msg, n, NULL, 0);
  sc_reduce(r, d, sizeof d);
  public_from_scalar(sig, r); /* R = [r]B */
  sha512_3(d, sig, 32, pub, 32, msg, n);
  sc_reduce(k, d, sizeof d);
  sc_muladd(sig + 32, k, h, r); /* S = (r + k s) mod L */
  mbedtls_platform_zeroize(h, sizeof h);
  mbedtls_platform_zeroize(d, sizeof d);
  mbedtls_platform_zeroize(r, sizeof r);
}

int ed25519_verify(const uint8_t sig[64], const void *msg, size_t n, const uint8_t pub[32]) {
  if (!sc_canonical(sig + 32)) return -1;
  ge A, B, sb, ka, q;
  if (ge_decode(&A, pub)) return -1;
  uint8_t d[64], k[32], chk[32];
  sha512_3(d, sig, 32, pub, 32, msg, n);
  sc_reduce(k, d, sizeof d);
  /* [S]B - [k]A must be R (compared as encodings: a non-canonical R never matches). */
  fe_neg(&A.X, &A.X);
  fe_neg(&A.T, &A.T);
  ge_base(&B);
  ge_scalarmult(&sb, &B, sig + 32);
  ge_scalarmult(&ka, &A, k);
  ge_add(&q, &sb, &ka);
  ge_encode(chk, &q);
  return memcmp(chk, sig, 32) ? -1 : 0;
}
