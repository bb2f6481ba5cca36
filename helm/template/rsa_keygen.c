/* RSA prime generation: see rsa_keygen.h. Montgomery multiplication is CIOS on 64-bit
 * limbs (least significant first) with a masked final subtraction; exponentiation uses a
 * fixed 4-bit window read by a masked scan of the table, so neither depends on the bits of
 * the candidate in its branches or addresses. The table of small primes is made once per
 * process (pthread_once) and only read afterwards. */
#include "helm/template/rsa_keygen.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t limb_t;
typedef unsigned __int128 dlimb_t;

#define RK_MAXL 64 /* limbs of the largest prime: 4096 bits, for 8192-bit keys */
#define RK_SIEVE_MAX (1u << 18)
#define RK_E 65537u

/* ---- small primes ------------------------------------------------------------- */

/* Odd primes below RK_SIEVE_MAX, and groups of consecutive ones whose product fits in 32
 * bits, so that one pass of divisions over the candidate serves a whole group. */
static uint32_t rk_primes[23000];
static size_t rk_nprimes;
typedef struct {
  uint32_t prod, first, count;
} rk_group_t;
static rk_group_t rk_groups[23000];
static size_t rk_ngroups;
static pthread_once_t rk_once = PTHREAD_ONCE_INIT;

static void rk_init(void) {
  static unsigned char composite[RK_SIEVE_MAX / 2]; /* index i: the number 2i+1 */
  for (uint32_t i = 1; i < RK_SIEVE_MAX / 2; i++) {
    if (composite[i]) continue;
    uint32_t p = 2 * i + 1;
    rk_primes[rk_nprimes++] = p;
    for (uint64_t m = (uint64_t)p * p; m < RK_SIEVE_MAX; m += 2 * p) composite[m / 2] = 1;
  }
  for (size_t i = 0; i < rk_nprimes;) {
    uint64_t prod = rk_primes[i];
    size_t j = i + 1;
    while (j < rk_nprimes && prod * rk_primes[j] < (1ull << 32)) prod *= rk_primes[j++];
    rk_groups[rk_ngroups++] = (rk_group_t){(uint32_t)prod, (uint32_t)i, (uint32_t)(j - i)};
    i = j;
  }
}

/* ---- Montgomery arithmetic ---------------------------------------------------- */

typedef struct {
  size_t n;
  limb_t m[RK_MAXL];
  limb_t minv;         /* −m^−1 mod 2^64 */
  limb_t one[RK_MAXL]; /* R mod m, R = 2^(64n) */
  limb_t r2[RK_MAXL];  /* R² mod m */
  int adx;             /* multiply with MULX/ADCX/ADOX */
} mont_t;

/* t < 2m (n limbs and a top limb of 0 or 1) into r: subtract m unless that borrows. */
static void mont_reduce_final(limb_t *r, const limb_t *t, limb_t top, const mont_t *M) {
  size_t n = M->n;
  limb_t d[RK_MAXL], borrow = 0;
  for (size_t j = 0; j < n; j++) {
    dlimb_t s = (dlimb_t)t[j] - M->m[j] - borrow;
    d[j] = (limb_t)s;
    borrow = (limb_t)(s >> 64) & 1;
  }
  limb_t mask = (limb_t)0 - ((top | (borrow ^ 1)) & 1);
  for (size_t j = 0; j < n; j++) r[j] = (d[j] & mask) | (t[j] & ~mask);
}

#if defined(__x86_64__) && defined(__GNUC__)
/* rp[0..4k) += up[0..4k)·v, returns the carry limb: MULX with two carry chains, ADCX for
 * the products' halves and ADOX for rp (the loop's LEA and JRCXZ leave both flags alone). */
static inline limb_t addmul_adx(limb_t *rp, const limb_t *up, size_t k, limb_t v) {
  limb_t lo, hi, h2;
  __asm__("xor %k[hi], %k[hi]\n\t"
          "1:\n\t"
          "mulx (%[up]), %[lo], %[h2]\n\t"
          "adcx %[hi], %[lo]\n\t"
          "adox (%[rp]), %[lo]\n\t"
          "mov %[lo], (%[rp])\n\t"
          "mulx 8(%[up]), %[lo], %[hi]\n\t"
          "adcx %[h2], %[lo]\n\t"
          "adox 8(%[rp]), %[lo]\n\t"
          "mov %[lo], 8(%[rp])\n\t"
          "mulx 16(%[up]), %[lo], %[h2]\n\t"
          "adcx %[hi], %[lo]\n\t"
          "adox 16(%[rp]), %[lo]\n\t"
          "mov %[lo], 16(%[rp])\n\t"
          "mulx 24(%[up]), %[lo], %[hi]\n\t"
          "adcx %[h2], %[lo]\n\t"
          "adox 24(%[rp]), %[lo]\n\t"
          "mov %[lo], 24(%[rp])\n\t"
          "lea 32(%[up]), %[up]\n\t"
          "lea 32(%[rp]), %[rp]\n\t"
          "lea -1(%[k]), %[k]\n\t"
          "jrcxz 2f\n\t"
          "jmp 1b\n"
          "2:\n\t"
          "mov $0, %k[lo]\n\t"
          "adcx %[lo], %[hi]\n\t"
          "adox %[lo], %[hi]\n\t"
          : [up] "+r"(up), [rp] "+r"(rp), [k] "+c"(k), [lo] "=&r"(lo), [hi] "=&r"(hi), [h2] "=&r"(h2)
          : "d"(v)
          : "cc", "memory");
  return hi;
}

int rsa_keygen__have_adx(void) {
  static int known; /* 1 + the answer; the same for every thread, so a race only repeats it */
  int k = __atomic_load_n(&known, __ATOMIC_RELAXED);
  if (!k) {
    __builtin_cpu_init();
    k = 1 + (__builtin_cpu_supports("adx") && __builtin_cpu_supports("bmi2"));
    __atomic_store_n(&known, k, __ATOMIC_RELAXED);
  }
  return k == 2;
}

/* Montgomery multiplication by rows on a sliding window of t: each row adds a·b[i] and
 * q·m, which clears its lowest limb; the window then moves up one limb. */
static void mont_mul_adx(limb_t *r, const limb_t *a, const limb_t *b, const mont_t *M) {
  size_t n = M->n;
  limb_t t[2 * RK_MAXL + 2];
  memset(t, 0, (2 * n + 2) * sizeof *t);
  for (size_t i = 0; i < n; i++) {
    limb_t *w = t + i;
    limb_t c1 = addmul_adx(w, a, n / 4, b[i]);
    limb_t c2 = addmul_adx(w, M->m, n / 4, w[0] * M->minv);
    dlimb_t s = (dlimb_t)w[n] + c1 + c2;
    w[n] = (limb_t)s;
    w[n + 1] = (limb_t)(s >> 64);
  }
  mont_reduce_final(r, t + n, t[2 * n], M);
}
#endif

/* r = a·b·R^−1 mod m, for a, b < m; r may alias a or b. */
static void mont_mul(limb_t *r, const limb_t *a, const limb_t *b, const mont_t *M) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (M->adx) {
    mont_mul_adx(r, a, b, M);
    return;
  }
#endif
  size_t n = M->n;
  const limb_t *m = M->m;
  limb_t t[RK_MAXL + 2];
  memset(t, 0, (n + 2) * sizeof *t);
  for (size_t i = 0; i < n; i++) {
    limb_t c = 0, bi = b[i];
    for (size_t j = 0; j < n; j++) {
      dlimb_t s = (dlimb_t)a[j] * bi + t[j] + c;
      t[j] = (limb_t)s;
      c = (limb_t)(s >> 64);
    }
    dlimb_t s = (dlimb_t)t[n] + c;
    t[n] = (limb_t)s;
    t[n + 1] = (limb_t)(s >> 64);
    limb_t q = t[0] * M->minv;
    s = (dlimb_t)q * m[0] + t[0];
    c = (limb_t)(s >> 64);
    for (size_t j = 1; j < n; j++) {
      s = (dlimb_t)q * m[j] + t[j] + c;
      t[j - 1] = (limb_t)s;
      c = (limb_t)(s >> 64);
    }
    s = (dlimb_t)t[n] + c;
    t[n - 1] = (limb_t)s;
    t[n] = t[n + 1] + (limb_t)(s >> 64);
  }
  mont_reduce_final(r, t, t[n], M);
}

/* r = 2a mod m, for a < m. */
static void mont_dbl(limb_t *r, const limb_t *a, const mont_t *M) {
  size_t n = M->n;
  limb_t t[RK_MAXL], carry = 0;
  for (size_t j = 0; j < n; j++) {
    t[j] = (a[j] << 1) | carry;
    carry = a[j] >> 63;
  }
  mont_reduce_final(r, t, carry, M);
}

/* The constants for an odd m of n limbs whose top bit is set. */
static void mont_setup(mont_t *M, const limb_t *m, size_t n) {
  M->n = n;
#if defined(__x86_64__) && defined(__GNUC__)
  M->adx = rsa_keygen__have_adx();
#else
  M->adx = 0;
#endif
  memcpy(M->m, m, n * sizeof *m);
  limb_t inv = m[0]; /* Newton: each step doubles the correct low bits (3 to start) */
  for (int i = 0; i < 5; i++) inv *= 2 - m[0] * inv;
  M->minv = (limb_t)0 - inv;
  /* R mod m = R − m, as m > R/2 */
  limb_t borrow = 0;
  for (size_t j = 0; j < n; j++) {
    dlimb_t s = (dlimb_t)0 - m[j] - borrow;
    M->one[j] = (limb_t)s;
    borrow = (limb_t)(s >> 64) & 1;
  }
  /* R² mod m is the Montgomery form of 2^(64n): square-and-double from the form of 1 */
  limb_t *x = M->r2;
  memcpy(x, M->one, n * sizeof *x);
  uint64_t e = 64 * (uint64_t)n;
  int top = 63 - __builtin_clzll(e);
  for (int b = top; b >= 0; b--) {
    if (b != top) mont_mul(x, x, x, M);
    if ((e >> b) & 1) mont_dbl(x, x, M);
  }
}

static int limbs_eq(const limb_t *a, const limb_t *b, size_t n) {
  limb_t d = 0;
  for (size_t j = 0; j < n; j++) d |= a[j] ^ b[j];
  return d == 0;
}

/* r = (base in Montgomery form)^e, Montgomery form; e has en limbs. */
static void mont_exp(limb_t *r, const limb_t *base, const limb_t *e, size_t en, const mont_t *M) {
  size_t n = M->n;
  limb_t tab[16][RK_MAXL], sel[RK_MAXL];
  memcpy(tab[0], M->one, n * sizeof(limb_t));
  memcpy(tab[1], base, n * sizeof(limb_t));
  for (int i = 2; i < 16; i++) mont_mul(tab[i], tab[i - 1], base, M);
  memcpy(r, M->one, n * sizeof(limb_t));
  for (size_t w = en * 16; w-- > 0;) {
    if (w != en * 16 - 1)
      for (int k = 0; k < 4; k++) mont_mul(r, r, r, M);
    limb_t idx = (e[w / 16] >> (4 * (w % 16))) & 15;
    memset(sel, 0, n * sizeof(limb_t));
    for (limb_t i = 0; i < 16; i++) {
      limb_t mask = (limb_t)0 - (limb_t)(((i ^ idx) - 1) >> 63); /* i == idx */
      for (size_t j = 0; j < n; j++) sel[j] |= tab[i][j] & mask;
    }
    mont_mul(r, r, sel, M);
  }
}

static int cmp_limbs(const limb_t *a, const limb_t *b, size_t n) {
  for (size_t j = n; j-- > 0;)
    if (a[j] != b[j]) return a[j] < b[j] ? -1 : 1;
  return 0;
}

/* ---- Miller–Rabin ---------------------------------------------------------------- */

/* p − 1 = d·2^s: d into d (n limbs), returns s. */
static unsigned split_pm1(const limb_t *p, size_t n, limb_t *d) {
  memcpy(d, p, n * sizeof *d);
  d[0] &= ~(limb_t)1;
  unsigned s = 0;
  size_t z = 0;
  while (!d[z]) z++, s += 64;
  unsigned b = (unsigned)__builtin_ctzll(d[z]);
  s += b;
  size_t shift = s / 64;
  unsigned bits = s % 64;
  for (size_t j = 0; j < n; j++) {
    limb_t lo = j + shift < n ? d[j + shift] : 0, hi = j + shift + 1 < n ? d[j + shift + 1] : 0;
    d[j] = bits ? (lo >> bits) | (hi << (64 - bits)) : lo;
  }
  return s;
}

/* One round with the witness x = a^d (Montgomery form): 1 when p passes. */
static int mr_finish(limb_t *x, unsigned s, const mont_t *M, const limb_t *minus_one) {
  size_t n = M->n;
  if (limbs_eq(x, M->one, n) || limbs_eq(x, minus_one, n)) return 1;
  for (unsigned i = 1; i < s; i++) {
    mont_mul(x, x, x, M);
    if (limbs_eq(x, minus_one, n)) return 1;
    if (limbs_eq(x, M->one, n)) return 0;
  }
  return 0;
}

/* FIPS 186-5 table B.1: rounds for an error below 2^−100 (1024-bit primes: 5, 2048: 4). */
static int mr_rounds(size_t bits) { return bits >= 1536 ? 4 : 5; }

/* Miller–Rabin on an odd p of n limbs with its top bit set: 1 probably prime, 0 composite,
 * −1 rng failure. */
static int mr_test(const limb_t *p, size_t n, rsa_keygen_rng_fn rng, void *rng_ctx) {
  mont_t M;
  mont_setup(&M, p, n);
  limb_t d[RK_MAXL], x[RK_MAXL], minus_one[RK_MAXL], pm1[RK_MAXL], borrow = 0;
  unsigned s = split_pm1(p, n, d);
  memcpy(pm1, p, n * sizeof *p);
  pm1[0] ^= 1;
  size_t dl = n;
  while (dl > 1 && !d[dl - 1]) dl--;
  for (size_t j = 0; j < n; j++) { /* p − R mod p, the form of −1 */
    dlimb_t t = (dlimb_t)p[j] - M.one[j] - borrow;
    minus_one[j] = (limb_t)t;
    borrow = (limb_t)(t >> 64) & 1;
  }
  /* base 2: square, then double under a mask, per bit of d */
  memcpy(x, M.one, n * sizeof *x);
  for (size_t b = dl * 64; b-- > 0;) {
    limb_t dbl[RK_MAXL];
    mont_mul(x, x, x, &M);
    mont_dbl(dbl, x, &M);
    limb_t mask = (limb_t)0 - ((d[b / 64] >> (b % 64)) & 1);
    for (size_t j = 0; j < n; j++) x[j] = (dbl[j] & mask) | (x[j] & ~mask);
  }
  if (!mr_finish(x, s, &M, minus_one)) return 0;
  for (int round = 1; round < mr_rounds(n * 64); round++) {
    limb_t a[RK_MAXL], am[RK_MAXL];
    for (;;) { /* a uniform in [2, p − 2] */
      if (rng(rng_ctx, (unsigned char *)a, n * sizeof *a)) return -1;
      a[n - 1] &= ~(limb_t)0 >> __builtin_clzll(p[n - 1]);
      if (cmp_limbs(a, pm1, n) >= 0) continue;
      limb_t high = 0;
      for (size_t j = 1; j < n; j++) high |= a[j];
      if (high || a[0] >= 2) break;
    }
    mont_mul(am, a, M.r2, &M);
    mont_exp(x, am, d, dl, &M);
    if (!mr_finish(x, s, &M, minus_one)) return 0;
  }
  return 1;
}

/* ---- the search ---------------------------------------------------------------- */

/* memset that the compiler keeps: for the primes and what is near them. */
static void rk_wipe(void *p, size_t n) {
  volatile unsigned char *v = p;
  while (n--) *v++ = 0;
}

/* x mod each group's product, from the most significant 32 bits down. */
static void residues(const limb_t *x, size_t n, uint32_t bound, uint32_t *res) {
  for (size_t g = 0; g < rk_ngroups && rk_groups[g].first < rk_nprimes && rk_primes[rk_groups[g].first] < bound; g++) {
    uint64_t q = rk_groups[g].prod, r = 0;
    for (size_t j = n; j-- > 0;) {
      r = ((r << 32) | (x[j] >> 32)) % q;
      r = ((r << 32) | (x[j] & 0xffffffffu)) % q;
    }
    for (uint32_t k = 0; k < rk_groups[g].count; k++) {
      uint32_t i = rk_groups[g].first + k;
      res[i] = (uint32_t)(r % rk_primes[i]);
    }
  }
}

static uint32_t mod_e(const limb_t *x, size_t n) {
  uint64_t r = 0;
  for (size_t j = n; j-- > 0;) {
    r = ((r << 32) | (x[j] >> 32)) % RK_E;
    r = ((r << 32) | (x[j] & 0xffffffffu)) % RK_E;
  }
  return (uint32_t)r;
}

/* A prime of n limbs with its two top bits set and p mod e ≠ 1, into p. */
static int gen_prime(size_t n, rsa_keygen_rng_fn rng, void *rng_ctx, limb_t *p) {
  size_t bits = 64 * n;
  uint32_t bound = bits >= 2048 ? RK_SIEVE_MAX : 1u << 16;
  size_t window = 2 * bits; /* odd offsets; no prime in it with probability about e^−5.8 */
  uint32_t *res = malloc(rk_nprimes * sizeof *res);
  if (!res) return -1;
  unsigned char marks[2 * 64 * RK_MAXL];
  limb_t x[RK_MAXL], y[RK_MAXL];
  for (;;) {
    if (rng(rng_ctx, (unsigned char *)x, n * sizeof *x)) return free(res), -1;
    x[n - 1] |= (limb_t)3 << 62;
    x[0] |= 1;
    residues(x, n, bound, res);
    uint32_t re = mod_e(x, n);
    memset(marks, 0, window);
    for (size_t i = 0; i < rk_nprimes && rk_primes[i] < bound; i++) {
      uint32_t q = rk_primes[i];
      /* x + 2k ≡ 0 (mod q): k ≡ −r·2^−1 */
      uint64_t k = (uint64_t)(q - res[i]) % q * ((q + 1) / 2) % q;
      for (; k < window; k += q) marks[k] = 1;
    }
    { /* x + 2k ≡ 1 (mod e) would make e divide p − 1 */
      uint64_t k = (uint64_t)(RK_E + 1 - re) % RK_E * ((RK_E + 1) / 2) % RK_E;
      for (; k < window; k += RK_E) marks[k] = 1;
    }
    for (size_t k = 0; k < window; k++) {
      if (marks[k]) continue;
      limb_t c = 2 * (limb_t)k;
      for (size_t j = 0; j < n; j++) {
        limb_t v = x[j] + c;
        c = v < c;
        y[j] = v;
      }
      if (c || (y[n - 1] >> 62) != 3) break; /* carried past the top bits: start again */
      int rc = mr_test(y, n, rng, rng_ctx);
      if (rc) {
        if (rc > 0) memcpy(p, y, n * sizeof *y);
        rk_wipe(x, sizeof x);
        rk_wipe(y, sizeof y);
        rk_wipe(res, rk_nprimes * sizeof *res);
        free(res);
        return rc > 0 ? 0 : -1;
      }
    }
  }
}

int rsa_keygen_supported(unsigned bits) { return bits >= 1024 && bits <= 128 * RK_MAXL && bits % 512 == 0; }

static void to_be(const limb_t *x, size_t n, unsigned char *out) {
  for (size_t j = 0; j < n; j++)
    for (int b = 0; b < 8; b++) out[(n - 1 - j) * 8 + (size_t)(7 - b)] = (unsigned char)(x[j] >> (8 * b));
}

int rsa_keygen_primes(unsigned bits, rsa_keygen_rng_fn rng, void *rng_ctx, unsigned char *p, unsigned char *q) {
  if (!rsa_keygen_supported(bits)) return -1;
  pthread_once(&rk_once, rk_init);
  size_t n = bits / 128;
  limb_t a[RK_MAXL], b[RK_MAXL], diff[RK_MAXL];
  if (gen_prime(n, rng, rng_ctx, a)) return -1;
  for (;;) {
    if (gen_prime(n, rng, rng_ctx, b)) return -1;
    int c = cmp_limbs(a, b, n);
    if (!c) continue;
    if (c < 0) {
      limb_t t[RK_MAXL];
      memcpy(t, a, sizeof t);
      memcpy(a, b, sizeof t);
      memcpy(b, t, sizeof t);
    }
    limb_t borrow = 0;
    for (size_t j = 0; j < n; j++) {
      dlimb_t s = (dlimb_t)a[j] - b[j] - borrow;
      diff[j] = (limb_t)s;
      borrow = (limb_t)(s >> 64) & 1;
    }
    /* |p − q| ≥ 2^(bits/2 − 100): some bit at or above that position is set */
    size_t lowbit = bits / 2 - 100;
    int far = 0;
    for (size_t j = lowbit / 64; j < n; j++) far |= (j == lowbit / 64 ? diff[j] >> (lowbit % 64) : diff[j]) != 0;
    if (far) break;
  }
  to_be(a, n, p);
  to_be(b, n, q);
  rk_wipe(a, sizeof a);
  rk_wipe(b, sizeof b);
  rk_wipe(diff, sizeof diff);
  return 0;
}

int rsa_keygen__mont_mul(const uint64_t *a, const uint64_t *b, const uint64_t *m,
                         size_t n, int portable, uint64_t *r) {
  if (!n || n % 4 || n > RK_MAXL) return -1;
  mont_t M;
  limb_t x[RK_MAXL], y[RK_MAXL], z[RK_MAXL];
  for (size_t j = 0; j < n; j++) x[j] = a[j], y[j] = b[j];
  mont_setup(&M, m, n);
  if (!portable && !M.adx) return -1;
  M.adx = !portable;
  mont_mul(z, x, y, &M);
  for (size_t j = 0; j < n; j++) r[j] = z[j];
  return 0;
}
