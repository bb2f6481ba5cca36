#include "base/b64.h"
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static const char b64__alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t b64_encoded_len(size_t n) { return (n + 2) / 3 * 4; }

size_t b64_encode(const void *in, size_t n, char *out) {
  const unsigned char *p = in;
  size_t o = 0, i = 0;
  for (; i + 3 <= n; i += 3) {
    uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 | p[i + 2];
    out[o++] = b64__alphabet[v >> 18 & 63];
    out[o++] = b64__alphabet[v >> 12 & 63];
    out[o++] = b64__alphabet[v >> 6 & 63];
    out[o++] = b64__alphabet[v & 63];
  }
  if (n - i == 1) {
    uint32_t v = (uint32_t)p[i] << 16;
    out[o++] = b64__alphabet[v >> 18 & 63];
    out[o++] = b64__alphabet[v >> 12 & 63];
    out[o++] = '=';
    out[o++] = '=';
  } else if (n - i == 2) {
    uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8;
    out[o++] = b64__alphabet[v >> 18 & 63];
    out[o++] = b64__alphabet[v >> 12 & 63];
    out[o++] = b64__alphabet[v >> 6 & 63];
    out[o++] = '=';
  }
  out[o] = 0;
  return o;
}

int b64_encode_alloc(const void *in, size_t n, char **out, size_t *out_len) {
  if (n > (SIZE_MAX - 4) / 4 * 3) return -ENOMEM;
  char *s = malloc(b64_encoded_len(n) + 1);
  if (!s) return -ENOMEM;
  size_t len = b64_encode(in, n, s);
  *out = s;
  if (out_len) *out_len = len;
  return 0;
}

static int b64__value(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

int b64_decode_alloc(const char *in, size_t n, unsigned char **out, size_t *out_len, char *err, size_t errlen) {
  unsigned char *o = malloc(n / 4 * 3 + 3 + 1);
  if (!o) return -ENOMEM;
  size_t olen = 0;
  uint32_t acc = 0;
  int have = 0;    /* sextets in acc */
  int pad = 0;     /* '=' seen */
  size_t i;
  for (i = 0; i < n; i++) {
    unsigned char c = (unsigned char)in[i];
    if (c == '\r' || c == '\n') continue;
    if (c == '=') {
      /* Padding is only valid after 2 or 3 sextets of a quantum, and must complete it. */
      if (pad == 0 && have < 2) goto bad;
      pad++;
      if (have + pad > 4) goto bad;
      continue;
    }
    if (pad) goto bad; /* data after padding */
    int v = b64__value(c);
    if (v < 0) goto bad;
    acc = acc << 6 | (uint32_t)v;
    if (++have == 4) {
      o[olen++] = (unsigned char)(acc >> 16);
      o[olen++] = (unsigned char)(acc >> 8);
      o[olen++] = (unsigned char)acc;
      acc = 0;
      have = 0;
    }
  }
  if (pad) {
    if (have + pad != 4) { i = n; goto bad; }
    if (have == 2) {
      o[olen++] = (unsigned char)(acc >> 4);
    } else { /* have == 3 */
      o[olen++] = (unsigned char)(acc >> 10);
      o[olen++] = (unsigned char)(acc >> 2);
    }
  } else if (have) {
    i = n;
    goto bad; /* unpadded tail */
  }
  o[olen] = 0;
  *out = o;
  if (out_len) *out_len = olen;
  return 0;
bad:
  free(o);
  if (err && errlen) snprintf(err, errlen, "base64: illegal data at input byte %zu", i);
  return -EINVAL;
}
