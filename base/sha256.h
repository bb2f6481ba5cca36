/* SHA-256 (FIPS 180-4), using the CPU's SHA extensions when it has them. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* Writes the SHA-256 digest of data[0..n) into out. */
void base_sha256(const void *data, size_t n, uint8_t out[32]);
/* As base_sha256 but never with the CPU's SHA extensions (the portable code, for tests). */
void base_sha256_portable(const void *data, size_t n, uint8_t out[32]);

/* Writes a digest as 64 lowercase hex digits and a NUL. */
void base_sha256_hex(const uint8_t d[32], char out[65]);

/* Incremental SHA-256 for data that arrives in pieces (a streamed index, a download). */
typedef struct base_sha256_ctx_s {
  uint32_t st[8];
  uint8_t buf[64];
  size_t nbuf;
  uint64_t total;
} base_sha256_ctx_t;
void base_sha256_init(base_sha256_ctx_t *c);
void base_sha256_update(base_sha256_ctx_t *c, const void *data, size_t n);
void base_sha256_final(base_sha256_ctx_t *c, uint8_t out[32]);
