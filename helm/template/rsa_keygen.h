/* The two primes of an RSA key, for Sprig's genPrivateKey "rsa" and the certificate
 * functions' keys: each of bits/2 bits with its two top bits set (so that p·q has exactly
 * `bits` bits, as Go's rsa.GenerateKey makes them), p − 1 and q − 1 prime to e = 65537,
 * p ≠ q and |p − q| ≥ 2^(bits/2 − 100). Candidates come from a random odd start and the
 * sieve of a window after it by the odd primes below 2^16 (2^18 for primes of 2048 bits
 * and more); the survivors face Miller–Rabin, base 2 first, then the random bases of
 * FIPS 186-5 table B.1's count for the size (5 rounds for 1024-bit primes, 4 for 2048),
 * all in Montgomery arithmetic on 64-bit limbs. */
#ifndef RUDDER_HELM_TEMPLATE_RSA_KEYGEN_H
#define RUDDER_HELM_TEMPLATE_RSA_KEYGEN_H

#include <stddef.h>
#include <stdint.h>

typedef int (*rsa_keygen_rng_fn)(void *ctx, unsigned char *out, size_t n);

/* True when rsa_keygen_primes handles a key of `bits` bits (a multiple of 512 from 1024 to 8192). */
int rsa_keygen_supported(unsigned bits);

/* Writes p and q (p > q), big-endian, bits/16 bytes each. Returns 0, or -1 when rng fails
 * or bits is not supported. */
int rsa_keygen_primes(unsigned bits, rsa_keygen_rng_fn rng, void *rng_ctx, unsigned char *p, unsigned char *q);

/* True when the CPU has MULX and ADCX/ADOX (x86-64 BMI2 and ADX); also used by p256.c. */
int rsa_keygen__have_adx(void);

/* For the tests: r = a·b·2^(−64n) mod m (n limbs, least significant first; m odd with its top
 * bit set, a, b < m, n a multiple of 4 up to 64), by the MULX/ADX rows (portable = 0) or the
 * portable loops (portable = 1). Returns 0, or −1 when the CPU lacks MULX/ADX or n is wrong. */
int rsa_keygen__mont_mul(const uint64_t *a, const uint64_t *b, const uint64_t *m,
                         size_t n, int portable, uint64_t *r);

#endif
