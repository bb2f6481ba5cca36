#include "base/gz.h"
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

int gz_is_gzip(const void *data, size_t n) {
  const unsigned char *p = data;
  return n >= 3 && p[0] == 0x1f && p[1] == 0x8b && p[2] == 0x08;
}

int gz_compress(const void *in, size_t n, int level, unsigned char **out, size_t *out_len) {
  if (level < -1 || level > 9) return -EINVAL;
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  /* The window sized to the input: zlib's 32 KiB window takes 128 KiB of the ~256 KiB of state that
   * deflateInit allocates and clears on every call, most of the cost of compressing a few KiB (a
   * release record of the scale bench: 97 -> 67 us). A window that holds the whole input plus zlib's
   * 262-byte lookahead reaches every match the full one would (test_base_gz checks the output is no
   * larger); gzip does not record the window, any inflater reads it. memLevel stays 8: smaller ones
   * also shorten the blocks, which costs ratio. windowBits + 16 selects the gzip wrapper. */
  int wbits = 9;
  while (wbits < 15 && ((size_t)1 << wbits) - 262 < n) wbits++;
  if (deflateInit2(&zs, level, Z_DEFLATED, wbits + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) return -ENOMEM;
  gz_header hdr;
  memset(&hdr, 0, sizeof hdr);
  hdr.os = 255; /* "unknown", as Go writes */
  if (deflateSetHeader(&zs, &hdr) != Z_OK) {
    deflateEnd(&zs);
    return -ENOMEM;
  }
  size_t cap = deflateBound(&zs, (uLong)n) + 32;
  unsigned char *buf = malloc(cap);
  if (!buf) {
    deflateEnd(&zs);
    return -ENOMEM;
  }
  zs.next_in = (Bytef *)(uintptr_t)in;
  zs.next_out = buf;
  size_t done_in = 0;
  int rc;
  do {
    /* Feed in chunks so sizes above uInt's range work. */
    size_t chunk_in = n - done_in > 1u << 30 ? 1u << 30 : n - done_in;
    zs.next_in = (Bytef *)(uintptr_t)((const unsigned char *)in + done_in);
    zs.avail_in = (uInt)chunk_in;
    if (cap - zs.total_out == 0) {
      size_t ncap = cap * 2;
      unsigned char *nb = realloc(buf, ncap);
      if (!nb) {
        free(buf);
        deflateEnd(&zs);
        return -ENOMEM;
      }
      buf = nb;
      cap = ncap;
    }
    zs.next_out = buf + zs.total_out;
    size_t room = cap - zs.total_out;
    zs.avail_out = (uInt)(room > 1u << 30 ? 1u << 30 : room);
    int flush = done_in + chunk_in == n ? Z_FINISH : Z_NO_FLUSH;
    rc = deflate(&zs, flush);
    done_in += chunk_in - zs.avail_in;
    if (rc == Z_STREAM_ERROR) {
      free(buf);
      deflateEnd(&zs);
      return -EINVAL;
    }
  } while (rc != Z_STREAM_END);
  *out_len = zs.total_out;
  *out = buf;
  deflateEnd(&zs);
  return 0;
}

static int gz__fail(int code, char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int gz__fail(int code, char *err, size_t errlen, const char *fmt, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return code;
}

int gz_decompress(const void *data, size_t n, size_t max_out, unsigned char **out, size_t *out_len,
                  char *err, size_t errlen) {
  const unsigned char *p = data;
  if (!gz_is_gzip(p, n))
    return gz__fail(-EINVAL, err, errlen, "gzip: invalid header (input of %zu bytes)", n);
  if (max_out > SIZE_MAX / 2) max_out = SIZE_MAX / 2;
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  if (inflateInit2(&zs, 15 + 16) != Z_OK) return -ENOMEM;
  /* Grow the output as it is produced, never beyond max_out + 1 (one byte to detect overflow). */
  size_t cap = n * 4 + 64, len = 0;
  if (cap > max_out + 1) cap = max_out + 1;
  unsigned char *buf = malloc(cap + 1);
  if (!buf) {
    inflateEnd(&zs);
    return -ENOMEM;
  }
  size_t in_off = 0;
  int rc = 0;
  for (;;) {
    if (len == cap) {
      if (cap >= max_out + 1) {
        rc = gz__fail(-EFBIG, err, errlen, "gzip: decompressed data exceeds the limit of %zu bytes", max_out);
        goto out;
      }
      size_t ncap = cap * 2 > max_out + 1 || cap * 2 < cap ? max_out + 1 : cap * 2;
      unsigned char *nb = realloc(buf, ncap + 1);
      if (!nb) {
        rc = -ENOMEM;
        goto out;
      }
      buf = nb;
      cap = ncap;
    }
    size_t in_room = n - in_off, out_room = cap - len;
    zs.next_in = (Bytef *)(uintptr_t)(p + in_off);
    zs.avail_in = (uInt)(in_room > 1u << 30 ? 1u << 30 : in_room);
    zs.next_out = buf + len;
    zs.avail_out = (uInt)(out_room > 1u << 30 ? 1u << 30 : out_room);
    uInt avail_in0 = zs.avail_in, avail_out0 = zs.avail_out;
    int z = inflate(&zs, Z_NO_FLUSH);
    in_off += avail_in0 - zs.avail_in;
    len += avail_out0 - zs.avail_out;
    if (z == Z_STREAM_END) {
      if (in_off == n) break;
      /* Go reads concatenated members; anything after a member must be another member. */
      if (!gz_is_gzip(p + in_off, n - in_off)) {
        rc = gz__fail(-EINVAL, err, errlen, "gzip: invalid header at input byte %zu", in_off);
        goto out;
      }
      if (inflateReset(&zs) != Z_OK) {
        rc = -ENOMEM;
        goto out;
      }
      continue;
    }
    if (z == Z_MEM_ERROR) {
      rc = -ENOMEM;
      goto out;
    }
    if (z == Z_NEED_DICT || z == Z_DATA_ERROR || z == Z_STREAM_ERROR) {
      rc = gz__fail(-EINVAL, err, errlen, "gzip: corrupt data near input byte %zu of %zu", in_off, n);
      goto out;
    }
    if (z == Z_BUF_ERROR && in_off == n && len < cap) {
      rc = gz__fail(-EINVAL, err, errlen, "gzip: unexpected end of data after %zu input bytes", n);
      goto out;
    }
  }
  if (len > max_out) {
    rc = gz__fail(-EFBIG, err, errlen, "gzip: decompressed data exceeds the limit of %zu bytes", max_out);
    goto out;
  }
  buf[len] = 0;
  *out = buf;
  *out_len = len;
  buf = NULL;
out:
  free(buf);
  inflateEnd(&zs);
  return rc;
}
