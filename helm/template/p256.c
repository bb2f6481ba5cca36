/* P-256 base-point multiplication for key generation: see p256.h. */
#include "helm/template/p256.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <mbedtls/ecp.h>
#include <mbedtls/platform_util.h>

#include "helm/template/rsa_keygen.h"

typedef uint64_t fe_t[4]; /* Montgomery form, R = 2^256, least significant limb first */
typedef unsigned __int128 u128;

static const uint64_t P[4] = {0xffffffffffffffffull, 0x00000000ffffffffull, 0, 0xffffffff00000001ull};

/* r = a − p if that does not borrow (with the carry limb hi), else a. */
static inline void fe_reduce_once(fe_t r, const uint64_t a[4], uint64_t hi) {
  uint64_t d[4], borrow = 0;
  _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
    u128 s = (u128)a[j] - P[j] - borrow;
    d[j] = (uint64_t)s;
    borrow = (uint64_t)(s >> 64) & 1;
  }
  uint64_t mask = (uint64_t)0 - ((hi | (borrow ^ 1)) & 1);
  _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) r[j] = (d[j] & mask) | (a[j] & ~mask);
}

/* a·b·R^−1 mod p by rows (CIOS). −p^−1 mod 2^64 is 1, so a row's multiplier q is its lowest
 * limb, and adding q·p turns that limb into a carry of q (p[0] = 2^64 − 1) and adds nothing
 * two limbs up (p[2] = 0). */
static void fe_mul_c(fe_t r, const fe_t a, const fe_t b) {
  uint64_t t[6] = {0};
  _Pragma("GCC unroll 4") for (int i = 0; i < 4; i++) {
    uint64_t c = 0;
    _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
      u128 s = (u128)a[j] * b[i] + t[j] + c;
      t[j] = (uint64_t)s;
      c = (uint64_t)(s >> 64);
    }
    u128 s = (u128)t[4] + c;
    t[4] = (uint64_t)s;
    t[5] = (uint64_t)(s >> 64);
    uint64_t q = t[0];
    s = (u128)q * P[1] + t[1] + q;
    t[0] = (uint64_t)s;
    s = (u128)t[2] + (uint64_t)(s >> 64);
    t[1] = (uint64_t)s;
    s = (u128)q * P[3] + t[3] + (uint64_t)(s >> 64);
    t[2] = (uint64_t)s;
    c = (uint64_t)(s >> 64);
    s = (u128)t[4] + c;
    t[3] = (uint64_t)s;
    t[4] = t[5] + (uint64_t)(s >> 64);
  }
  fe_reduce_once(r, t, t[4]);
}

#if defined(__x86_64__) && defined(__GNUC__)
/* x86-64: the product's 8 limbs by MULX rows (ADOX for the low halves, ADCX for the high ones),
 * then Montgomery reduction of the low 4 limbs alone, added to the high 4. The low half L is
 * reduced one limb at a time on a window of four registers: with q its lowest limb, L + q·p =
 * L − q + q·(p + 1) where p + 1 = 2^96 + (2^64 − 2^32 + 1)·2^192, so the lowest limb cancels,
 * q·2^96 is two shifts and only the top term needs a MULX; (L + q·p)/2^64 < 2^192 + p fits in
 * four limbs, the top one being the high half plus the carry. What is left, (L + m·p)/2^256 ≤ p,
 * plus the high half (< p for inputs below p) is below 2p: one conditional subtraction. The
 * four limbs come out in registers, so no output pointer is held (12 registers: the asm builds
 * even with a frame pointer at -O0). */
static const uint64_t fe_zero_limb = 0;
#define FE_RED(Q, A, B, C) \
  "mov %[" Q "], %%rdx\n\t" "mov %[" Q "], %[lo]\n\t" "shl $32, %[lo]\n\t" "mov %[" Q "], %[hi]\n\t" \
  "shr $32, %[hi]\n\t" "add %[lo], %[" A "]\n\t" "adc %[hi], %[" B "]\n\t" "mulx %[p3], %[lo], %[hi]\n\t" \
  "adc %[lo], %[" C "]\n\t" "adc $0, %[hi]\n\t" "mov %[hi], %[" Q "]\n\t"
/* t0..t3 = reduce(t0..t3) + t4..t7, then minus p unless that borrows */
#define FE_TAIL \
  FE_RED("t0", "t1", "t2", "t3") FE_RED("t1", "t2", "t3", "t0") FE_RED("t2", "t3", "t0", "t1") \
  FE_RED("t3", "t0", "t1", "t2") \
  "xor %k[hi], %k[hi]\n\t" "add %[t4], %[t0]\n\t" "adc %[t5], %[t1]\n\t" "adc %[t6], %[t2]\n\t" \
  "adc %[t7], %[t3]\n\t" "adc $0, %[hi]\n\t" \
  "mov %[t0], %[t4]\n\t" "mov %[t1], %[t5]\n\t" "mov %[t2], %[t6]\n\t" "mov %[t3], %[t7]\n\t" \
  "mov $0xffffffff, %k[lo]\n\t" "sub $-1, %[t4]\n\t" "sbb %[lo], %[t5]\n\t" "sbb $0, %[t6]\n\t" \
  "sbb %[p3], %[t7]\n\t" "sbb $0, %[hi]\n\t" \
  "cmovnc %[t4], %[t0]\n\t" "cmovnc %[t5], %[t1]\n\t" "cmovnc %[t6], %[t2]\n\t" "cmovnc %[t7], %[t3]\n\t"
#define FE_OUTS \
  [t0] "=&r"(t0), [t1] "=&r"(t1), [t2] "=&r"(t2), [t3] "=&r"(t3), [t4] "=&r"(t4), [t5] "=&r"(t5), \
  [t6] "=&r"(t6), [t7] "=&r"(t7), [lo] "=&r"(lo), [hi] "=&r"(hi)
/* row i ≥ 1 of the product: t[i..i+4] += a·b[i] (t[i+4] was zero; the sum cannot carry out) */
#define FE_MROW(I, A0, A1, A2, A3, A4) \
  "mov " #I "(%[b]), %%rdx\n\t" "xor %k[" A4 "], %k[" A4 "]\n\t" \
  "mulx 0(%[a]), %[lo], %[hi]\n\t" "adox %[lo], %[" A0 "]\n\t" "adcx %[hi], %[" A1 "]\n\t" \
  "mulx 8(%[a]), %[lo], %[hi]\n\t" "adox %[lo], %[" A1 "]\n\t" "adcx %[hi], %[" A2 "]\n\t" \
  "mulx 16(%[a]), %[lo], %[hi]\n\t" "adox %[lo], %[" A2 "]\n\t" "adcx %[hi], %[" A3 "]\n\t" \
  "mulx 24(%[a]), %[lo], %[hi]\n\t" "adox %[lo], %[" A3 "]\n\t" "adcx %[hi], %[" A4 "]\n\t" \
  "adox %[z], %[" A4 "]\n\t"
static void fe_mul_adx(fe_t r, const fe_t a, const fe_t b) {
  uint64_t t0, t1, t2, t3, t4, t5, t6, t7, lo, hi;
  __asm__("mov 0(%[b]), %%rdx\n\t"
          "mulx 0(%[a]), %[t0], %[t1]\n\t"
          "mulx 8(%[a]), %[lo], %[t2]\n\t"
          "add %[lo], %[t1]\n\t"
          "mulx 16(%[a]), %[lo], %[t3]\n\t"
          "adc %[lo], %[t2]\n\t"
          "mulx 24(%[a]), %[lo], %[t4]\n\t"
          "adc %[lo], %[t3]\n\t"
          "adc $0, %[t4]\n\t"
          FE_MROW(8, "t1", "t2", "t3", "t4", "t5") FE_MROW(16, "t2", "t3", "t4", "t5", "t6")
          FE_MROW(24, "t3", "t4", "t5", "t6", "t7") FE_TAIL
          : FE_OUTS
          : [a] "r"(a), [b] "r"(b), [p3] "m"(P[3]), [z] "m"(fe_zero_limb)
          : "rdx", "cc", "memory");
  r[0] = t0, r[1] = t1, r[2] = t2, r[3] = t3;
}
/* The square of a0..a3 in place, all in registers (so that fe_sqr_n's chains of squarings go
 * through no memory): the six cross products once, doubled, plus the four squares (10 MULX, not
 * 16). a0 holds the product's lowest limb once a0² is taken; 13 registers and rdx. */
static inline __attribute__((always_inline)) void fe_sqr_regs(uint64_t *a0, uint64_t *a1, uint64_t *a2, uint64_t *a3) {
  uint64_t t1, t2, t3, t4, t5, t6, t7, lo, hi;
  __asm__("mov %[t0], %%rdx\n\t"
          "mulx %[a1], %[t1], %[t2]\n\t"
          "mulx %[a2], %[lo], %[t3]\n\t"
          "add %[lo], %[t2]\n\t"
          "mulx %[a3], %[lo], %[t4]\n\t"
          "adc %[lo], %[t3]\n\t"
          "adc $0, %[t4]\n\t"
          "mov %[a1], %%rdx\n\t"
          "xor %k[t5], %k[t5]\n\t"
          "mulx %[a2], %[lo], %[hi]\n\t"
          "adox %[lo], %[t3]\n\t"
          "adcx %[hi], %[t4]\n\t"
          "mulx %[a3], %[lo], %[hi]\n\t"
          "adox %[lo], %[t4]\n\t"
          "adcx %[hi], %[t5]\n\t"
          "adox %[z], %[t5]\n\t"
          "mov %[a2], %%rdx\n\t"
          "mulx %[a3], %[lo], %[t6]\n\t"
          "add %[lo], %[t5]\n\t"
          "adc $0, %[t6]\n\t"
          "xor %k[t7], %k[t7]\n\t" /* doubled */
          "add %[t1], %[t1]\n\t"
          "adc %[t2], %[t2]\n\t"
          "adc %[t3], %[t3]\n\t"
          "adc %[t4], %[t4]\n\t"
          "adc %[t5], %[t5]\n\t"
          "adc %[t6], %[t6]\n\t"
          "adc $0, %[t7]\n\t"
          "mov %[t0], %%rdx\n\t" /* plus the squares */
          "mulx %%rdx, %[t0], %[hi]\n\t"
          "add %[hi], %[t1]\n\t"
          "mov %[a1], %%rdx\n\t"
          "mulx %%rdx, %[lo], %[hi]\n\t"
          "adc %[lo], %[t2]\n\t"
          "adc %[hi], %[t3]\n\t"
          "mov %[a2], %%rdx\n\t"
          "mulx %%rdx, %[lo], %[hi]\n\t"
          "adc %[lo], %[t4]\n\t"
          "adc %[hi], %[t5]\n\t"
          "mov %[a3], %%rdx\n\t"
          "mulx %%rdx, %[lo], %[hi]\n\t"
          "adc %[lo], %[t6]\n\t"
          "adc %[hi], %[t7]\n\t"
          FE_TAIL
          "mov %[t1], %[a1]\n\t"
          "mov %[t2], %[a2]\n\t"
          "mov %[t3], %[a3]\n\t"
          : [t0] "+&r"(*a0), [a1] "+&r"(*a1), [a2] "+&r"(*a2), [a3] "+&r"(*a3), [t1] "=&r"(t1), [t2] "=&r"(t2),
            [t3] "=&r"(t3), [t4] "=&r"(t4), [t5] "=&r"(t5), [t6] "=&r"(t6), [t7] "=&r"(t7), [lo] "=&r"(lo),
            [hi] "=&r"(hi)
          : [p3] "m"(P[3]), [z] "m"(fe_zero_limb)
          : "rdx", "cc");
}
/* r = a^(2^n), n ≥ 0 */
static void fe_sqr_n_adx(fe_t r, const fe_t a, int n) {
  uint64_t a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
  while (n-- > 0) fe_sqr_regs(&a0, &a1, &a2, &a3);
  r[0] = a0, r[1] = a1, r[2] = a2, r[3] = a3;
}
static void fe_sqr_adx(fe_t r, const fe_t a) { fe_sqr_n_adx(r, a, 1); }
#undef FE_RED
#undef FE_TAIL
#undef FE_OUTS
#undef FE_MROW

/* a + b, then minus p unless that borrows (add/adc chains; plain x86-64). */
static inline __attribute__((always_inline)) void fe_add(fe_t r, const fe_t a, const fe_t b) {
  uint64_t t0 = a[0], t1 = a[1], t2 = a[2], t3 = a[3], u0, u1, u2, u3, c;
  __asm__("xor %k[c], %k[c]\n\t"
          "add 0(%[b]), %[t0]\n\t" "adc 8(%[b]), %[t1]\n\t" "adc 16(%[b]), %[t2]\n\t" "adc 24(%[b]), %[t3]\n\t"
          "adc $0, %[c]\n\t"
          "mov %[t0], %[u0]\n\t" "mov %[t1], %[u1]\n\t" "mov %[t2], %[u2]\n\t" "mov %[t3], %[u3]\n\t"
          "sub $-1, %[u0]\n\t" "sbb %[p1], %[u1]\n\t" "sbb $0, %[u2]\n\t" "sbb %[p3], %[u3]\n\t" "sbb $0, %[c]\n\t"
          "cmovnc %[u0], %[t0]\n\t" "cmovnc %[u1], %[t1]\n\t" "cmovnc %[u2], %[t2]\n\t" "cmovnc %[u3], %[t3]\n\t"
          : [t0] "+&r"(t0), [t1] "+&r"(t1), [t2] "+&r"(t2), [t3] "+&r"(t3), [u0] "=&r"(u0), [u1] "=&r"(u1),
            [u2] "=&r"(u2), [u3] "=&r"(u3), [c] "=&r"(c)
          : [b] "r"(b), "m"(*(const fe_t *)b), [p1] "m"(P[1]), [p3] "m"(P[3])
          : "cc");
  r[0] = t0, r[1] = t1, r[2] = t2, r[3] = t3;
}

/* a − b, plus p where that borrowed (the borrow as a mask selects p's limbs). */
static inline __attribute__((always_inline)) void fe_sub(fe_t r, const fe_t a, const fe_t b) {
  uint64_t t0 = a[0], t1 = a[1], t2 = a[2], t3 = a[3], m, m1, m3;
  __asm__("sub 0(%[b]), %[t0]\n\t" "sbb 8(%[b]), %[t1]\n\t" "sbb 16(%[b]), %[t2]\n\t" "sbb 24(%[b]), %[t3]\n\t"
          "sbb %[m], %[m]\n\t"
          "mov %[m], %[m1]\n\t" "shr $32, %[m1]\n\t" "mov %[p3], %[m3]\n\t" "and %[m], %[m3]\n\t"
          "add %[m], %[t0]\n\t" "adc %[m1], %[t1]\n\t" "adc $0, %[t2]\n\t" "adc %[m3], %[t3]\n\t"
          : [t0] "+&r"(t0), [t1] "+&r"(t1), [t2] "+&r"(t2), [t3] "+&r"(t3), [m] "=&r"(m), [m1] "=&r"(m1), [m3] "=&r"(m3)
          : [b] "r"(b), "m"(*(const fe_t *)b), [p3] "m"(P[3])
          : "cc");
  r[0] = t0, r[1] = t1, r[2] = t2, r[3] = t3;
}

static int fe_adx; /* set once by p256_init */
static void fe_mul(fe_t r, const fe_t a, const fe_t b) {
  if (fe_adx) fe_mul_adx(r, a, b);
  else fe_mul_c(r, a, b);
}
static void fe_sqr(fe_t r, const fe_t a) {
  if (fe_adx) fe_sqr_adx(r, a);
  else fe_mul_c(r, a, a);
}
#else
static void fe_mul(fe_t r, const fe_t a, const fe_t b) { fe_mul_c(r, a, b); }
static void fe_sqr(fe_t r, const fe_t a) { fe_mul_c(r, a, a); }

static inline __attribute__((always_inline)) void fe_add(fe_t r, const fe_t a, const fe_t b) {
  uint64_t t[4], c = 0;
  _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
    u128 s = (u128)a[j] + b[j] + c;
    t[j] = (uint64_t)s;
    c = (uint64_t)(s >> 64);
  }
  fe_reduce_once(r, t, c);
}

static inline __attribute__((always_inline)) void fe_sub(fe_t r, const fe_t a, const fe_t b) {
  uint64_t t[4], borrow = 0, c = 0;
  _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
    u128 s = (u128)a[j] - b[j] - borrow;
    t[j] = (uint64_t)s;
    borrow = (uint64_t)(s >> 64) & 1;
  }
  uint64_t mask = (uint64_t)0 - borrow; /* add p back when it borrowed */
  _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
    u128 s = (u128)t[j] + (P[j] & mask) + c;
    r[j] = (uint64_t)s;
    c = (uint64_t)(s >> 64);
  }
}
#endif

static void fe_copy(fe_t r, const fe_t a) { memcpy(r, a, sizeof(fe_t)); }

/* r = mask ? a : r */
static inline __attribute__((always_inline)) void fe_cmov(fe_t r, const fe_t a, uint64_t mask) {
  _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) r[j] = (a[j] & mask) | (r[j] & ~mask);
}

static fe_t fe_one, fe_r2; /* R mod p, R² mod p: set once by p256_init */

static void fe_sqr_n(fe_t r, const fe_t a, int n) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (fe_adx) {
    fe_sqr_n_adx(r, a, n);
    return;
  }
#endif
  fe_copy(r, a);
  while (n-- > 0) fe_sqr(r, r);
}

/* a^(p−2) (Fermat). p − 2 from the top: 32 ones, 31 zeros, a one, 96 zeros, 94 ones, a zero, a
 * one; built from x_k = a^(2^k − 1): 255 squarings and 13 multiplications. */
static void fe_inv(fe_t r, const fe_t a) {
  fe_t x2, x4, x8, x16, x32, t;
  fe_sqr(t, a);
  fe_mul(x2, t, a);
  fe_sqr_n(t, x2, 2);
  fe_mul(x4, t, x2);
  fe_sqr_n(t, x4, 4);
  fe_mul(x8, t, x4);
  fe_sqr_n(t, x8, 8);
  fe_mul(x16, t, x8);
  fe_sqr_n(t, x16, 16);
  fe_mul(x32, t, x16);
  fe_sqr_n(t, x32, 32);
  fe_mul(t, t, a);
  fe_sqr_n(t, t, 128);
  fe_mul(t, t, x32);
  fe_sqr_n(t, t, 32);
  fe_mul(t, t, x32);
  fe_sqr_n(t, t, 16);
  fe_mul(t, t, x16);
  fe_sqr_n(t, t, 8);
  fe_mul(t, t, x8);
  fe_sqr_n(t, t, 4);
  fe_mul(t, t, x4);
  fe_sqr_n(t, t, 2);
  fe_mul(t, t, x2);
  fe_sqr_n(t, t, 2);
  fe_mul(r, t, a);
}

static void fe_from_be(fe_t r, const unsigned char *b) {
  uint64_t t[4];
  _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
    t[j] = 0;
    for (int k = 0; k < 8; k++) t[j] = t[j] << 8 | b[(3 - j) * 8 + k];
  }
  fe_mul(r, t, fe_r2);
}

static void fe_to_be(unsigned char *b, const fe_t a) {
  static const fe_t one = {1, 0, 0, 0};
  fe_t t;
  fe_mul(t, a, one);
  _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++)
    for (int k = 0; k < 8; k++) b[(3 - j) * 8 + k] = (unsigned char)(t[j] >> (56 - 8 * k));
}

/* ---- points ------------------------------------------------------------------------ */

typedef struct {
  fe_t x, y, z;
} jac_t; /* Jacobian: (X/Z², Y/Z³) */
typedef struct {
  fe_t x, y;
} aff_t;

/* dbl-2001-b (a = −3). */
static void pt_dbl(jac_t *r, const jac_t *p) {
  fe_t delta, gamma, beta, alpha, t, u;
  fe_sqr(delta, p->z);
  fe_sqr(gamma, p->y);
  fe_mul(beta, p->x, gamma);
  fe_sub(t, p->x, delta);
  fe_add(u, p->x, delta);
  fe_mul(alpha, t, u);
  fe_add(t, alpha, alpha);
  fe_add(alpha, t, alpha);
  fe_add(t, p->y, p->z);
  fe_sqr(t, t);
  fe_sub(t, t, gamma);
  fe_sub(r->z, t, delta);
  fe_add(beta, beta, beta);
  fe_add(beta, beta, beta); /* 4·beta */
  fe_sqr(t, alpha);
  fe_add(u, beta, beta);
  fe_sub(r->x, t, u);
  fe_sub(t, beta, r->x);
  fe_mul(t, alpha, t);
  fe_sqr(gamma, gamma);
  fe_add(gamma, gamma, gamma);
  fe_add(gamma, gamma, gamma);
  fe_add(gamma, gamma, gamma); /* 8·gamma² */
  fe_sub(r->y, t, gamma);
}

/* The end of both additions: X3 = r² − J − 2V, Y3 = r·(V − X3) − 2·S1·J. */
static void pt_add_xy(jac_t *out, const fe_t rr, const fe_t j, const fe_t v, const fe_t s1) {
  fe_t t, u;
  fe_sqr(t, rr);
  fe_sub(t, t, j);
  fe_sub(t, t, v);
  fe_sub(out->x, t, v);
  fe_sub(t, v, out->x);
  fe_mul(t, rr, t);
  fe_mul(u, s1, j);
  fe_add(u, u, u);
  fe_sub(out->y, t, u);
}

/* add-2007-bl, for p ≠ ±q, neither at infinity (only used to make the table). */
static void pt_add(jac_t *r, const jac_t *p, const jac_t *q) {
  fe_t z1z1, z2z2, u1, u2, s1, s2, h, i, j, rr, v, t;
  fe_sqr(z1z1, p->z);
  fe_sqr(z2z2, q->z);
  fe_mul(u1, p->x, z2z2);
  fe_mul(u2, q->x, z1z1);
  fe_mul(t, q->z, z2z2);
  fe_mul(s1, p->y, t);
  fe_mul(t, p->z, z1z1);
  fe_mul(s2, q->y, t);
  fe_sub(h, u2, u1);
  fe_add(t, h, h);
  fe_sqr(i, t);
  fe_mul(j, h, i);
  fe_sub(rr, s2, s1);
  fe_add(rr, rr, rr);
  fe_mul(v, u1, i);
  pt_add_xy(r, rr, j, v, s1);
  fe_add(t, p->z, q->z);
  fe_sqr(t, t);
  fe_sub(t, t, z1z1);
  fe_sub(t, t, z2z2);
  fe_mul(r->z, t, h);
}

/* madd-2007-bl: p + q with q affine, for p ≠ ±q and p not at infinity. */
static void pt_madd(jac_t *r, const jac_t *p, const aff_t *q) {
  fe_t z1z1, u2, s2, h, hh, i, j, rr, v, t;
  fe_sqr(z1z1, p->z);
  fe_mul(u2, q->x, z1z1);
  fe_mul(t, p->z, z1z1);
  fe_mul(s2, q->y, t);
  fe_sub(h, u2, p->x);
  fe_sqr(hh, h);
  fe_add(i, hh, hh);
  fe_add(i, i, i);
  fe_mul(j, h, i);
  fe_sub(rr, s2, p->y);
  fe_add(rr, rr, rr);
  fe_mul(v, p->x, i);
  pt_add_xy(r, rr, j, v, p->y);
  fe_add(t, p->z, h);
  fe_sqr(t, t);
  fe_sub(t, t, z1z1);
  fe_sub(r->z, t, hh);
}

/* ---- the table ------------------------------------------------------------------------ */

/* d is read in TAB_W = 43 signed 6-bit digits (Booth): digit i = −32·b[6i+5] + Σ_{k<5} 2^k·b[6i+k]
 * + b[6i−1] is in [−32, 32], so a row needs only the 32 multiples j·64^i·G, j = 1..32, and a
 * negative digit negates y. Against unsigned 4-bit digits: 43 additions instead of 64, and a
 * scan of 88 KB instead of 61. */
enum { TAB_W = 43, TAB_N = 32 };
static aff_t tab[TAB_W][TAB_N] __attribute__((aligned(64))); /* tab[i][j − 1] = j·64^i·G */
static int tab_ok;
static unsigned char order_be[32];
static pthread_once_t tab_once = PTHREAD_ONCE_INIT;

static void p256_init(void) {
#if defined(__x86_64__) && defined(__GNUC__)
  fe_adx = rsa_keygen__have_adx();
#endif
  /* R mod p = 2^256 − p; R² mod p by doubling it 256 times */
  uint64_t borrow = 0;
  _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
    u128 s = (u128)0 - P[j] - borrow;
    fe_one[j] = (uint64_t)s;
    borrow = (uint64_t)(s >> 64) & 1;
  }
  fe_copy(fe_r2, fe_one);
  for (int k = 0; k < 256; k++) fe_add(fe_r2, fe_r2, fe_r2);
  mbedtls_ecp_group grp;
  mbedtls_ecp_group_init(&grp);
  unsigned char gx[32], gy[32];
  int rc = mbedtls_ecp_group_load(&grp, MBEDTLS_ECP_DP_SECP256R1);
  if (!rc) rc = mbedtls_mpi_write_binary(&grp.G.X, gx, 32);
  if (!rc) rc = mbedtls_mpi_write_binary(&grp.G.Y, gy, 32);
  if (!rc) rc = mbedtls_mpi_write_binary(&grp.N, order_be, 32);
  mbedtls_ecp_group_free(&grp);
  enum { ALL = TAB_W * TAB_N };
  jac_t *all = malloc(ALL * sizeof *all);
  fe_t *acc = malloc(ALL * sizeof *acc);
  if (rc || !all || !acc) {
    free(all);
    free(acc);
    return;
  }
  jac_t b;
  fe_from_be(b.x, gx);
  fe_from_be(b.y, gy);
  fe_copy(b.z, fe_one);
  for (int i = 0; i < TAB_W; i++) {
    jac_t *row = all + TAB_N * i;
    row[0] = b;
    pt_dbl(&row[1], &row[0]);
    for (int j = 2; j < TAB_N; j++) pt_add(&row[j], &row[j - 1], &row[0]);
    pt_dbl(&b, &row[TAB_N - 1]); /* 64·b */
  }
  /* every Z inverted at once: prefix products, one inversion, then back */
  fe_copy(acc[0], all[0].z);
  for (int k = 1; k < ALL; k++) fe_mul(acc[k], acc[k - 1], all[k].z);
  fe_t inv, zi, zi2;
  fe_inv(inv, acc[ALL - 1]);
  for (int k = ALL - 1; k >= 0; k--) {
    if (k) {
      fe_mul(zi, inv, acc[k - 1]);
      fe_mul(inv, inv, all[k].z);
    } else {
      fe_copy(zi, inv);
    }
    fe_sqr(zi2, zi);
    aff_t *t = &tab[k / TAB_N][k % TAB_N];
    fe_mul(t->x, all[k].x, zi2);
    fe_mul(zi2, zi2, zi);
    fe_mul(t->y, all[k].y, zi2);
  }
  free(all);
  free(acc);
  tab_ok = 1;
}

/* Digit i of d (little-endian limbs) as a magnitude in [0, 32] and a sign mask, with no branch:
 * w holds bits 6i−1 .. 6i+5 (b[−1] = 0 and bits from 256 on are 0). */
static inline void p256__digit(const uint64_t d[4], int i, unsigned *mag, uint64_t *neg) {
  int pos = 6 * i - 1, limb = pos < 0 ? 0 : pos / 64, sh = pos < 0 ? 0 : pos % 64;
  uint64_t w = pos < 0 ? d[0] << 1 : d[limb] >> sh;
  if (pos >= 0 && sh > 57 && limb < 3) w |= d[limb + 1] << (64 - sh);
  w &= 0x7f;
  unsigned u = (unsigned)((w >> 1) + (w & 1)), s = (unsigned)(w >> 6); /* digit = u − 64·s */
  unsigned m = 0u - s;
  *mag = ((64 - u) & m) | (u & ~m);
  *neg = (uint64_t)0 - (uint64_t)s;
}

typedef uint32_t p256_v4 __attribute__((vector_size(16))); /* one SSE2 register */

/* row[mag − 1] into out, or zeros for mag 0, reading every entry of the row. The mask is made
 * by a vector compare: a scalar mask broadcast through memory stalls store forwarding, and
 * vectors wider than the baseline's 16 bytes are compared lane by lane with branches' flags. */
static inline void p256__select(aff_t *out, const aff_t row[TAB_N], unsigned mag) {
  p256_v4 v[4] = {{0}}, want = {0}, j = {0}, one = {0};
  want += mag;
  one += 1;
  for (int e = 0; e < TAB_N; e++) {
    j += one;
    p256_v4 m = (p256_v4)(j == want), ev[4];
    memcpy(ev, &row[e], sizeof ev);
    _Pragma("GCC unroll 4") for (int k = 0; k < 4; k++) v[k] |= ev[k] & m;
  }
  memcpy(out, v, sizeof v);
}

/* d·G into x, y (affine, big-endian); d in [1, n − 1].
 * The sum goes up from the lowest digit; before digit i it is S_i·G with S_i = (d mod 2^6i) −
 * b[6i−1]·2^6i, so |S_i| ≤ 2^(6i−1), and digit i adds ±m·2^6i·G, 1 ≤ m ≤ 32. The mixed
 * addition is wrong only if S_i ≡ ±m·2^6i (mod n) or S_i ≡ 0; the last is the sum at
 * infinity, handled by masks. For i ≤ 41, S_i ∓ m·2^6i is non-zero and below 2^252 < n in
 * magnitude. For i = 42 the digit is d's top bits plus b[251], in [0, 16], and S_42 + m·2^252 = d
 * ≢ 0; S_42 ≡ m·2^252 = d − S_42 would need d = 2·S_42 (then m·2^252 = S_42, too big) or d =
 * n + 2·S_42 (then m = 16, S_42 = 2^256 − n > 0 and d > n). So the formula never meets p = ±q. */
static void base_mul(const unsigned char d[32], unsigned char x[32], unsigned char y[32]) {
  uint64_t k[4];
  _Pragma("GCC unroll 4") for (int j = 0; j < 4; j++) {
    k[j] = 0;
    for (int b = 0; b < 8; b++) k[j] = k[j] << 8 | d[(3 - j) * 8 + b];
  }
  jac_t acc, sum;
  memset(&acc, 0, sizeof acc);
  uint64_t inf = ~(uint64_t)0; /* acc is the point at infinity */
  static const fe_t zero = {0, 0, 0, 0};
  for (int i = 0; i < TAB_W; i++) {
    unsigned mag;
    uint64_t neg;
    p256__digit(k, i, &mag, &neg);
    aff_t sel;
    p256__select(&sel, tab[i], mag);
    fe_t ny;
    fe_sub(ny, zero, sel.y);
    fe_cmov(sel.y, ny, neg);
    uint64_t nonzero = (uint64_t)0 - (uint64_t)(((mag - 1u) >> 31 & 1) ^ 1);
    pt_madd(&sum, &acc, &sel);
    uint64_t use_fresh = inf & nonzero, use_sum = ~inf & nonzero;
    /* sel as a Jacobian point, for when acc was at infinity */
    fe_cmov(acc.x, sel.x, use_fresh);
    fe_cmov(acc.y, sel.y, use_fresh);
    fe_cmov(acc.z, fe_one, use_fresh);
    fe_cmov(acc.x, sum.x, use_sum);
    fe_cmov(acc.y, sum.y, use_sum);
    fe_cmov(acc.z, sum.z, use_sum);
    inf &= ~nonzero;
  }
  mbedtls_platform_zeroize(k, sizeof k);
  fe_t zi, zi2, ax, ay;
  fe_inv(zi, acc.z);
  fe_sqr(zi2, zi);
  fe_mul(ax, acc.x, zi2);
  fe_mul(zi2, zi2, zi);
  fe_mul(ay, acc.y, zi2);
  fe_to_be(x, ax);
  fe_to_be(y, ay);
}

int p256__base_mul(const unsigned char d[32], unsigned char x[32], unsigned char y[32]) {
  pthread_once(&tab_once, p256_init);
  if (!tab_ok) return -1;
  base_mul(d, x, y);
  return 0;
}

int p256_keygen(p256_rng_fn rng, void *rng_ctx, unsigned char d[32], unsigned char x[32], unsigned char y[32]) {
  pthread_once(&tab_once, p256_init);
  if (!tab_ok) return -1;
  for (;;) {
    if (rng(rng_ctx, d, 32)) return -1;
    int lt = 0, zero = 1; /* d < n and d ≠ 0 */
    for (int k = 0; k < 32; k++) {
      zero &= d[k] == 0;
      if (!lt && d[k] != order_be[k]) {
        lt = d[k] < order_be[k] ? 1 : -1;
      }
    }
    if (lt == 1 && !zero) break;
  }
  base_mul(d, x, y);
  return 0;
}
