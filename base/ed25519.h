/* Ed25519 (RFC 8032, section 5.1): public keys from 32-byte seeds, deterministic
 * signatures and their verification. Written from the RFC: field arithmetic mod
 * 2^255-19 in five 51-bit limbs, extended twisted Edwards coordinates, a
 * double-and-add-always scalar multiplication with masked selects, scalars mod L
 * by bitwise reduction; SHA-512 from mbedTLS. Meant for template-time
 * certificates (Sprig's genCA/genSelfSignedCert/genSignedCert with Ed25519 keys),
 * not for high signing rates. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* pub = the encoded point [s]B, s the clamped first half of SHA-512(seed). */
void ed25519_public_key(uint8_t pub[32], const uint8_t seed[32]);
/* sig = R || S over msg[0..n) with the key of seed (PureEdDSA, no context). */
void ed25519_sign(uint8_t sig[64], const void *msg, size_t n, const uint8_t seed[32]);
/* 0 when sig is a valid signature of msg under pub (S < L, A and R canonical
 * encodings, [S]B = R + [k]A), -1 otherwise. */
int ed25519_verify(const uint8_t sig[64], const void *msg, size_t n, const uint8_t pub[32]);
