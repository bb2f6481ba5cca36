/* RSA keys from helm/template/rsa_keygen.c (genPrivateKey "rsa", the certificate functions'
 * keys) are valid and of the right form. Primes straight from rsa_keygen_primes: bits/2 bits
 * each with the two top bits set, prime by mbedTLS's own Miller–Rabin (40 rounds), p > q,
 * |p − q| ≥ 2^(bits/2 − 100), p − 1 and q − 1 prime to 65537. Keys through the templates:
 * `openssl rsa -check` (p and q prime, n = pq, d·e ≡ 1 mod p−1 and q−1, the CRT values), the
 * size and e = 65537 from `openssl rsa -text`, and N's two primes as in the PEM. Montgomery
 * multiplication, both the MULX/ADX rows and the portable loops, against mbedTLS's bignums.
 * Needs openssl. */
#include <mbedtls/bignum.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "helm/template/rsa_keygen.h"
#include "t.h"
#include "t_oracle.h"
#include "t_render.h"

static char dir[] = "/tmp/rudder-rsakeygen-XXXXXX";

static int rng(void *ctx, unsigned char *out, size_t n) {
  (void)ctx;
  return getrandom(out, n, 0) == (ssize_t)n ? 0 : -1; /* short only if a signal interrupts it */
}

static int mpi_rng(void *ctx, unsigned char *out, size_t n) { return rng(ctx, out, n); }

/* One pair of primes for a key of `bits` bits, checked. */
static void check_primes(unsigned bits) {
  unsigned char p[512], q[512];
  size_t pn = bits / 16;
  CHECK(rsa_keygen_supported(bits));
  if (rsa_keygen_primes(bits, rng, NULL, p, q)) {
    CHECK(!"rsa_keygen_primes failed");
    return;
  }
  CHECK((p[0] & 0xc0) == 0xc0 && (q[0] & 0xc0) == 0xc0);
  CHECK((p[pn - 1] & 1) && (q[pn - 1] & 1));
  mbedtls_mpi P, Q, N, D, T, E;
  mbedtls_mpi *all[] = {&P, &Q, &N, &D, &T, &E};
  for (size_t i = 0; i < 6; i++) mbedtls_mpi_init(all[i]);
  mbedtls_mpi_read_binary(&P, p, pn);
  mbedtls_mpi_read_binary(&Q, q, pn);
  mbedtls_mpi_lset(&E, 65537);
  CHECK_EQ_INT(mbedtls_mpi_bitlen(&P), bits / 2);
  CHECK_EQ_INT(mbedtls_mpi_bitlen(&Q), bits / 2);
  mbedtls_mpi_mul_mpi(&N, &P, &Q);
  CHECK_EQ_INT(mbedtls_mpi_bitlen(&N), bits);
  CHECK(mbedtls_mpi_cmp_mpi(&P, &Q) > 0);
  mbedtls_mpi_sub_mpi(&D, &P, &Q);
  CHECK(mbedtls_mpi_bitlen(&D) > bits / 2 - 100);
  CHECK_EQ_INT(mbedtls_mpi_is_prime_ext(&P, 40, mpi_rng, NULL), 0);
  CHECK_EQ_INT(mbedtls_mpi_is_prime_ext(&Q, 40, mpi_rng, NULL), 0);
  mbedtls_mpi_sub_int(&T, &P, 1);
  mbedtls_mpi_gcd(&D, &T, &E);
  CHECK_EQ_INT(mbedtls_mpi_cmp_int(&D, 1), 0);
  mbedtls_mpi_sub_int(&T, &Q, 1);
  mbedtls_mpi_gcd(&D, &T, &E);
  CHECK_EQ_INT(mbedtls_mpi_cmp_int(&D, 1), 0);
  for (size_t i = 0; i < 6; i++) mbedtls_mpi_free(all[i]);
}

/* a·b ≡ r·2^(64n) (mod m) for random operands, by both paths where the CPU has MULX/ADX. */
static void check_mont(size_t n) {
  uint64_t a[64], b[64], m[64], r[64];
  unsigned char be[512];
  for (int round = 0; round < 200; round++) {
    rng(NULL, (unsigned char *)m, n * 8);
    m[0] |= 1;
    m[n - 1] |= 1ull << 63;
    rng(NULL, (unsigned char *)a, n * 8);
    rng(NULL, (unsigned char *)b, n * 8);
    a[n - 1] &= ~(1ull << 63); /* a, b < m */
    b[n - 1] &= ~(1ull << 63);
    if (round == 0) { /* the largest operands: m − 1 */
      memcpy(a, m, n * 8);
      a[0] ^= 1;
      memcpy(b, a, n * 8);
    }
    mbedtls_mpi A, B, M, R, L, Rr;
    mbedtls_mpi *all[] = {&A, &B, &M, &R, &L, &Rr};
    for (size_t i = 0; i < 6; i++) mbedtls_mpi_init(all[i]);
#define READ(X, x) \
  do { \
    for (size_t j = 0; j < n; j++) \
      for (int k = 0; k < 8; k++) be[(n - 1 - j) * 8 + (size_t)(7 - k)] = (unsigned char)(x[j] >> (8 * k)); \
    mbedtls_mpi_read_binary(&X, be, n * 8); \
  } while (0)
    READ(A, a);
    READ(B, b);
    READ(M, m);
    mbedtls_mpi_mul_mpi(&L, &A, &B);
    mbedtls_mpi_mod_mpi(&L, &L, &M);
    for (int portable = 0; portable < 2; portable++) {
      if (rsa_keygen__mont_mul(a, b, m, n, portable, r)) {
        CHECK(!portable); /* only the MULX/ADX rows may be missing */
        continue;
      }
      READ(R, r);
      CHECK(mbedtls_mpi_cmp_mpi(&R, &M) < 0);
      mbedtls_mpi_shift_l(&R, 64 * n);
      mbedtls_mpi_mod_mpi(&Rr, &R, &M);
      CHECK_EQ_INT(mbedtls_mpi_cmp_mpi(&Rr, &L), 0);
    }
#undef READ
    for (size_t i = 0; i < 6; i++) mbedtls_mpi_free(all[i]);
  }
}

/* A PEM key from a template: openssl's checks, its size and exponent. */
static void check_pem(const char *text, unsigned bits) {
  char *pem = t_render_text(text, 0);
  CHECK(pem && strncmp(pem, "-----BEGIN RSA PRIVATE KEY-----\n", 32) == 0);
  if (!pem) return;
  t_put(dir, "k.pem", pem, strlen(pem));
  char *ok = t_sh(dir, "openssl rsa -check -noout -in k.pem");
  CHECK(ok && strstr(ok, "RSA key ok"));
  char *txt = t_sh(dir, "openssl rsa -text -noout -in k.pem");
  char want[64];
  snprintf(want, sizeof want, "Private-Key: (%u bit, 2 primes)", bits);
  CHECK(txt && strstr(txt, want));
  CHECK(txt && strstr(txt, "publicExponent: 65537 (0x10001)"));
  if (!ok || !txt) fprintf(stderr, "key:\n%s\n", pem);
  free(ok);
  free(txt);
  free(pem);
}

int main(void) {
  if (!mkdtemp(dir)) return perror("mkdtemp"), 1;
  if (system("command -v openssl >/dev/null 2>&1") != 0) {
    fprintf(stderr, "FAIL: openssl not found (tests/deps installs it)\n");
    return 1;
  }
  for (size_t n = 4; n <= 64; n *= 2) check_mont(n);
  check_mont(24);
  for (int i = 0; i < 8; i++) check_primes(2048);
  check_primes(1024);
  check_primes(3072);
  check_primes(4096);
  CHECK(!rsa_keygen_supported(2000) && !rsa_keygen_supported(512) && !rsa_keygen_supported(16384));
  check_pem("{{ genPrivateKey \"rsa\" }}", 4096);
  check_pem("{{ genPrivateKey \"\" }}", 4096);
  for (int i = 0; i < 3; i++) {
    check_pem("{{ (genCA \"ca\" 365).Key }}", 2048);
    check_pem("{{ (genSelfSignedCert \"x\" nil nil 365).Key }}", 2048);
    check_pem("{{ (genSignedCert \"x\" nil nil 365 (genCA \"ca\" 365)).Key }}", 2048);
  }
  char rm[128];
  snprintf(rm, sizeof rm, "rm -rf %s", dir);
  if (system(rm)) fprintf(stderr, "cannot remove %s\n", dir);
  return t_done();
}
