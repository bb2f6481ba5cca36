/* SHA-256. The portable block function follows FIPS 180-4 directly; on x86-64 CPUs with the SHA
 * extensions (SHA-NI: most since 2017-2019) the blocks go through sha256rnds2/msg1/msg2, several
 * times faster. Charts hash whole values trees (`toJson .Values | sha256sum`) per template, so this
 * is on the render path. */
#include "base/sha256.h"
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define BASE_SHA256_NI 1
#endif

static const uint32_t sha256__k[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

typedef void (*sha256__blocks_fn)(uint32_t st[8], const uint8_t *p, size_t nblocks);

static inline uint32_t sha256__ror(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void sha256__blocks_c(uint32_t st[8], const uint8_t *p, size_t nblocks) {
  for (; nblocks--; p += 64) {
    uint32_t w[64];
    for (int i = 0; i < 16; i++)
      w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 | (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
    for (int i = 16; i < 64; i++) {
      uint32_t s0 = sha256__ror(w[i - 15], 7) ^ sha256__ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
      uint32_t s1 = sha256__ror(w[i - 2], 17) ^ sha256__ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
      w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = st[0], b = st[1], c = st[2], d = st[3], e = st[4], f = st[5], g = st[6], h = st[7];
    for (int i = 0; i < 64; i++) {
      uint32_t t1 = h + (sha256__ror(e, 6) ^ sha256__ror(e, 11) ^ sha256__ror(e, 25)) + ((e & f) ^ (~e & g)) +
                    sha256__k[i] + w[i];
      uint32_t t2 = (sha256__ror(a, 2) ^ sha256__ror(a, 13) ^ sha256__ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
      h = g, g = f, f = e, e = d + t1, d = c, c = b, b = a, a = t1 + t2;
    }
    st[0] += a, st[1] += b, st[2] += c, st[3] += d, st[4] += e, st[5] += f, st[6] += g, st[7] += h;
  }
}

#ifdef BASE_SHA256_NI
/* The state lives in two registers as the instructions want it: (A,B,E,F) and (C,D,G,H), lane 3
 * first. Each sha256rnds2 does two rounds with the two low words of its third operand (W + K). */
__attribute__((target("sha,sse4.1,ssse3"))) static void sha256__blocks_ni(uint32_t st[8], const uint8_t *p,
                                                                         size_t nblocks) {
  const __m128i bswap = _mm_set_epi64x(0x0c0d0e0f08090a0bULL, 0x0405060700010203ULL);
  __m128i dcba = _mm_loadu_si128((const __m128i *)&st[0]); /* lanes a,b,c,d */
  __m128i hgfe = _mm_loadu_si128((const __m128i *)&st[4]); /* lanes e,f,g,h */
  __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
  __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
  for (; nblocks--; p += 64) {
    __m128i abef0 = abef, cdgh0 = cdgh;
    __m128i w0 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 0)), bswap);
    __m128i w1 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 16)), bswap);
    __m128i w2 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 32)), bswap);
    __m128i w3 = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(p + 48)), bswap);
    for (int i = 0; i < 16; i++) {
      /* w0..w3 hold W[4i-16..4i-1] (i >= 4); the next four words replace the oldest */
      __m128i cur;
      if (i < 4) {
        cur = w0;
      } else {
        __m128i t = _mm_add_epi32(_mm_sha256msg1_epu32(w0, w1), _mm_alignr_epi8(w3, w2, 4));
        cur = _mm_sha256msg2_epu32(t, w3);
      }
      __m128i m = _mm_add_epi32(cur, _mm_loadu_si128((const __m128i *)&sha256__k[4 * i]));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, m);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(m, 0x0E));
      /* the first rnds2 left the new (A,B,E,F) in cdgh and the old one, now (C,D,G,H), in abef; the
       * second puts them back in their places */
      w0 = w1, w1 = w2, w2 = w3, w3 = cur;
    }
    abef = _mm_add_epi32(abef, abef0);
    cdgh = _mm_add_epi32(cdgh, cdgh0);
  }
  __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128((__m128i *)&st[0], _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128((__m128i *)&st[4], _mm_alignr_epi8(dchg, feba, 8));
}
#endif

static void sha256__run(sha256__blocks_fn blocks, const void *data, size_t n, uint8_t out[32]) {
  uint32_t st[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  const uint8_t *p = data;
  size_t full = n / 64;
  if (full) blocks(st, p, full);
  uint8_t tail[128] = {0};
  size_t rest = n - full * 64;
  if (rest) memcpy(tail, p + full * 64, rest);
  tail[rest] = 0x80;
  size_t tl = rest + 9 > 64 ? 128 : 64;
  uint64_t bits = (uint64_t)n * 8;
  for (int i = 0; i < 8; i++) tail[tl - 1 - i] = (uint8_t)(bits >> (8 * i));
  blocks(st, tail, tl / 64);
  for (int i = 0; i < 8; i++) {
    out[4 * i] = (uint8_t)(st[i] >> 24);
    out[4 * i + 1] = (uint8_t)(st[i] >> 16);
    out[4 * i + 2] = (uint8_t)(st[i] >> 8);
    out[4 * i + 3] = (uint8_t)st[i];
  }
}

void base_sha256_portable(const void *data, size_t n, uint8_t out[32]) { sha256__run(sha256__blocks_c, data, n, out); }

void base_sha256(const void *data, size_t n, uint8_t out[32]) {
#ifdef BASE_SHA256_NI
  if (__builtin_cpu_supports("sha") && __builtin_cpu_supports("sse4.1")) {
    sha256__run(sha256__blocks_ni, data, n, out);
    return;
  }
#endif
  sha256__run(sha256__blocks_c, data, n, out);
}

static sha256__blocks_fn sha256__best(void) {
#ifdef BASE_SHA256_NI
  if (__builtin_cpu_supports("sha") && __builtin_cpu_supports("sse4.1")) return sha256__blocks_ni;
#endif
  return sha256__blocks_c;
}

void base_sha256_init(base_sha256_ctx_t *c) {
  static const uint32_t iv[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(c->st, iv, sizeof iv);
  c->nbuf = 0;
  c->total = 0;
}

void base_sha256_update(base_sha256_ctx_t *c, const void *data, size_t n) {
  sha256__blocks_fn blocks = sha256__best();
  const uint8_t *p = data;
  c->total += n;
  if (c->nbuf) {
    size_t take = 64 - c->nbuf < n ? 64 - c->nbuf : n;
    memcpy(c->buf + c->nbuf, p, take);
    c->nbuf += take;
    p += take;
    n -= take;
    if (c->nbuf < 64) return;
    blocks(c->st, c->buf, 1);
    c->nbuf = 0;
  }
  if (n >= 64) {
    blocks(c->st, p, n / 64);
    p += n / 64 * 64;
    n %= 64;
  }
  if (n) memcpy(c->buf, p, n);
  c->nbuf = n;
}

void base_sha256_final(base_sha256_ctx_t *c, uint8_t out[32]) {
  uint8_t tail[128] = {0};
  memcpy(tail, c->buf, c->nbuf);
  tail[c->nbuf] = 0x80;
  size_t tl = c->nbuf + 9 > 64 ? 128 : 64;
  uint64_t bits = c->total * 8;
  for (int i = 0; i < 8; i++) tail[tl - 1 - i] = (uint8_t)(bits >> (8 * i));
  sha256__best()(c->st, tail, tl / 64);
  for (int i = 0; i < 8; i++) {
    out[4 * i] = (uint8_t)(c->st[i] >> 24);
    out[4 * i + 1] = (uint8_t)(c->st[i] >> 16);
    out[4 * i + 2] = (uint8_t)(c->st[i] >> 8);
    out[4 * i + 3] = (uint8_t)c->st[i];
  }
}

void base_sha256_hex(const uint8_t d[32], char out[65]) {
  static const char hx[] = "0123456789abcdef";
  for (int i = 0; i < 32; i++) out[2 * i] = hx[d[i] >> 4], out[2 * i + 1] = hx[d[i] & 15];
  out[64] = 0;
}
