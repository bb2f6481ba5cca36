/* Blowfish with the EksBlowfish key schedule used by bcrypt, and bcrypt
 * itself as golang.org/x/crypto/bcrypt computes it ($2a$, 16-byte salt,
 * 23 of the 24 ciphertext bytes encoded). No I/O, no global state. */
#pragma once
#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint32_t p[18];
  uint32_t s[4][256];
} blowfish_t;

/* The initial tables (hex digits of pi), generated into blowfish_pi.c. */
extern const uint32_t blowfish__pi_p[18];
extern const uint32_t blowfish__pi_s[1024];

/* Encrypts one 8-byte block in place (big-endian halves, as Go's Cipher.Encrypt). */
void blowfish_encrypt(const blowfish_t *c, uint8_t block[8]);
/* Go's blowfish.NewCipher key schedule (key of 1..56 bytes). */
void blowfish_init(blowfish_t *c, const uint8_t *key, size_t n);

/* bcrypt of pw[0..n) at cost (4..31) with a 16-byte salt: writes the
 * 60-character "$2a$CC$<22 salt><31 hash>" and a NUL into out. Returns 0, or
 * -1 when the password is longer than 72 bytes (Go's ErrPasswordTooLong). */
int bcrypt_hash(const uint8_t *pw, size_t n, int cost, const uint8_t salt[16], char out[61]);
