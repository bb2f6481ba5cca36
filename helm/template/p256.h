/* P-256 key generation for Sprig's genPrivateKey "ecdsa": a private scalar d uniform in
 * [1, n − 1] (32 random bytes, redrawn while 0 or ≥ n, as Go's ecdsa.GenerateKey draws it) and
 * the public point d·G, by a fixed-base comb of signed 6-bit digits over a table of j·64^i·G
 * (i < 43, 1 ≤ j ≤ 32, 88 KB) made once per process. Field arithmetic in Montgomery form on four
 * 64-bit limbs; the table is read by masked scans, additions are selected by masks, so the work
 * does not depend on d. The curve's constants come from mbedTLS's group
 * (mbedtls_ecp_group_load). */
#ifndef RUDDER_HELM_TEMPLATE_P256_H
#define RUDDER_HELM_TEMPLATE_P256_H

#include <stddef.h>

typedef int (*p256_rng_fn)(void *ctx, unsigned char *out, size_t n);

/* d (32 bytes), x and y of d·G (32 bytes each), all big-endian. Returns 0, −1 when rng fails
 * or the table cannot be made. */
int p256_keygen(p256_rng_fn rng, void *rng_ctx, unsigned char d[32], unsigned char x[32], unsigned char y[32]);

/* For the tests: x and y of d·G for a given d in [1, n − 1] (big-endian). 0, or −1. */
int p256__base_mul(const unsigned char d[32], unsigned char x[32], unsigned char y[32]);

#endif
