/* SHA-256 (FIPS 180-4), using the CPU's SHA extensions when it has them. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* Writes the SHA-256 digest of data[0..n) into out. */
void base_sha256(const void *data, size_t n, uint8_t out[32]);
/* As base_sha256 but never with the CPU's SHA extensions (the portable code, for tests). */
void base_sha256_portable(const void *data, size_t n, uint8_t out[32]);
