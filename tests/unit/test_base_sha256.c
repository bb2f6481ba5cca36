#include "base/sha256.h"
#include <mbedtls/sha256.h>
#include <stdlib.h>
#include "t.h"

static void hex(const uint8_t d[32], char out[65]) {
  static const char hx[] = "0123456789abcdef";
  for (int i = 0; i < 32; i++) out[2 * i] = hx[d[i] >> 4], out[2 * i + 1] = hx[d[i] & 15];
  out[64] = 0;
}

static void vector(const char *in, size_t n, const char *want) {
  uint8_t d[32];
  char h[65];
  base_sha256(in, n, d);
  hex(d, h);
  CHECK_EQ_STR(h, want);
  base_sha256_portable(in, n, d);
  hex(d, h);
  CHECK_EQ_STR(h, want);
  base_sha256_hex(d, h);
  CHECK_EQ_STR(h, want);
}

int main(void) {
  /* FIPS 180-4 examples and the empty string (digests as coreutils sha256sum prints them) */
  vector("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  vector("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  vector("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  /* every length around the block and padding boundaries, and a long input, against mbedTLS */
  size_t max = 4096 + 130;
  unsigned char *buf = malloc(max);
  CHECK(buf != NULL);
  for (size_t i = 0; i < max; i++) buf[i] = (unsigned char)(i * 131 + (i >> 7));
  for (size_t n = 0; n < max; n = n < 300 ? n + 1 : n * 2 + 3) {
    uint8_t a[32], b[32], c[32];
    base_sha256(buf, n, a);
    base_sha256_portable(buf, n, b);
    mbedtls_sha256_ret(buf, n, c, 0);
    CHECK(memcmp(a, c, 32) == 0);
    CHECK(memcmp(b, c, 32) == 0);
    /* the incremental form, fed in pieces of every size from 1 to 130 bytes */
    for (size_t piece = 1; piece <= 130; piece += piece < 10 ? 1 : 29) {
      base_sha256_ctx_t ctx;
      base_sha256_init(&ctx);
      for (size_t off = 0; off < n; off += piece) base_sha256_update(&ctx, buf + off, n - off < piece ? n - off : piece);
      base_sha256_final(&ctx, a);
      CHECK(memcmp(a, c, 32) == 0);
    }
  }
  free(buf);
  return t_done();
}
