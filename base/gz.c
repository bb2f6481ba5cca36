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

/* The window bits of a stream of n bytes: the smallest window holding the input and zlib's lookahead
 * (gz_compress says why). */
static int gz__wbits(size_t n) {
  int wbits = 9;
  while (wbits < 15 && ((size_t)1 << wbits) - 262 < n) wbits++;
  return wbits;
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
  int wbits = gz__wbits(n);
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

/* Appends n bytes of in as a raw deflate stream to *buf (cap *cap, used *len), ended by flush
 * (Z_FINISH: a final block; Z_SYNC_FLUSH: byte-aligned, not final). 0, -EINVAL or -ENOMEM. */
static int gz__raw(const void *in, size_t n, int level, int flush, unsigned char **buf, size_t *cap, size_t *len) {
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  if (n > 1u << 30) return -EINVAL; /* record parts: far below; gz_compress takes larger inputs */
  if (deflateInit2(&zs, level, Z_DEFLATED, -gz__wbits(n), 8, Z_DEFAULT_STRATEGY) != Z_OK) return -ENOMEM;
  size_t need = *len + deflateBound(&zs, (uLong)n) + 16;
  if (need > *cap) {
    unsigned char *nb = realloc(*buf, need);
    if (!nb) {
      deflateEnd(&zs);
      return -ENOMEM;
    }
    *buf = nb;
    *cap = need;
  }
  zs.next_in = (Bytef *)(uintptr_t)in;
  zs.avail_in = (uInt)n;
  zs.next_out = *buf + *len;
  zs.avail_out = (uInt)(*cap - *len);
  int rc = deflate(&zs, flush);
  int ok = flush == Z_FINISH ? rc == Z_STREAM_END : rc == Z_OK && !zs.avail_in;
  *len += zs.total_out;
  deflateEnd(&zs);
  return ok ? 0 : -EINVAL;
}

void gz_tail_free(gz_tail_t *cache) {
  if (!cache) return;
  free(cache->text);
  free(cache->raw);
  memset(cache, 0, sizeof *cache);
}

static void gz__le32(unsigned char *p, unsigned long v) {
  for (int i = 0; i < 4; i++) p[i] = (unsigned char)(v >> (8 * i));
}

int gz_compress_split(const void *head, size_t hn, const void *tail, size_t tn, int level, gz_tail_t *cache,
                      unsigned char **out, size_t *out_len) {
  if (level < -1 || level > 9 || hn > 1u << 30 || tn > 1u << 30) return -EINVAL;
  gz_tail_t fresh = {0}, *t = cache ? cache : &fresh;
  int rc = 0;
  if (!t->raw || t->text_len != tn || (tn && memcmp(t->text, tail, tn))) {
    gz_tail_free(t);
    size_t cap = 0;
    if ((rc = gz__raw(tail, tn, level, Z_FINISH, &t->raw, &cap, &t->raw_len)) ||
        (tn && !(t->text = malloc(tn)))) {
      gz_tail_free(t);
      return rc ? rc : -ENOMEM;
    }
    if (tn) memcpy(t->text, tail, tn);
    t->text_len = tn;
    t->crc = crc32(0L, tail, (uInt)tn);
  }
  /* The member: header as Go's gzip.Writer writes it (XFL 2 at the best level, 4 at the fastest),
   * the head's stream, the tail's, then CRC-32 and size of the whole input. */
  size_t cap = 10 + t->raw_len + 8, len = 10;
  unsigned char *buf = malloc(cap);
  if (!buf) rc = -ENOMEM;
  if (!rc) {
    static const unsigned char hdr[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff};
    memcpy(buf, hdr, 10);
    buf[8] = level == 9 ? 2 : level == 1 ? 4 : 0;
    rc = gz__raw(head, hn, level, Z_SYNC_FLUSH, &buf, &cap, &len);
  }
  if (!rc && cap < len + t->raw_len + 8) {
    unsigned char *nb = realloc(buf, len + t->raw_len + 8);
    if (nb) buf = nb;
    else rc = -ENOMEM;
  }
  if (rc) {
    free(buf);
    gz_tail_free(&fresh);
    if (cache) gz_tail_free(cache);
    return rc;
  }
  memcpy(buf + len, t->raw, t->raw_len);
  len += t->raw_len;
  gz__le32(buf + len, crc32_combine(crc32(0L, head, (uInt)hn), t->crc, (z_off_t)tn));
  gz__le32(buf + len + 4, (unsigned long)((hn + tn) & 0xffffffffu));
  len += 8;
  gz_tail_free(&fresh);
  *out = buf;
  *out_len = len;
  return 0;
}

/* Inflates the raw deflate stream raw[0..n) on its own (no dictionary: a reference to anything
 * before it fails) into *text, at most max_out bytes; 0 when it is one whole stream that ends
 * exactly at n. */
static int gz__raw_alone(const unsigned char *raw, size_t n, size_t max_out, unsigned char **text, size_t *tn) {
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  if (n > 1u << 30 || inflateInit2(&zs, -15) != Z_OK) return -ENOMEM;
  size_t cap = n * 4 + 64 < max_out ? n * 4 + 64 : max_out, len = 0;
  unsigned char *buf = malloc(cap + 1);
  int rc = buf ? Z_OK : Z_MEM_ERROR;
  zs.next_in = (Bytef *)(uintptr_t)raw;
  zs.avail_in = (uInt)n;
  while (rc == Z_OK) {
    if (len == cap) {
      if (cap >= max_out) { rc = Z_BUF_ERROR; break; }
      size_t ncap = cap * 2 < max_out ? cap * 2 : max_out;
      unsigned char *nb = realloc(buf, ncap + 1);
      if (!nb) { rc = Z_MEM_ERROR; break; }
      buf = nb;
      cap = ncap;
    }
    zs.next_out = buf + len;
    zs.avail_out = (uInt)(cap - len > 1u << 30 ? 1u << 30 : cap - len);
    uInt before = zs.avail_out;
    rc = inflate(&zs, Z_NO_FLUSH);
    len += before - zs.avail_out;
    if (rc == Z_OK && !zs.avail_in && zs.avail_out) rc = Z_BUF_ERROR; /* input ended inside the stream */
  }
  inflateEnd(&zs);
  if (rc != Z_STREAM_END || zs.avail_in) {
    free(buf);
    return rc == Z_MEM_ERROR ? -ENOMEM : -EINVAL;
  }
  *text = buf;
  *tn = len;
  return 0;
}

int gz_tail_from_member(const void *member, size_t n, size_t max_out, gz_tail_t *out) {
  const unsigned char *p = member;
  memset(out, 0, sizeof *out);
  /* gz_compress_split's member: a 10-byte header without extra fields (FLG 0), then the head's
   * stream ended by a sync flush (an empty stored block: 00 00 ff ff), then the tail's own stream,
   * then CRC-32 and size. Any other member (one stream, as Go's gzip writes) has no tail to find. */
  if (!gz_is_gzip(p, n) || n < 10 + 4 + 2 + 8 || p[3] != 0) return -ENOENT;
  if (!max_out || max_out > SIZE_MAX / 2) max_out = SIZE_MAX / 2;
  const unsigned char *end = p + n - 8;
  int tries = 0;
  for (const unsigned char *m = p + 10; m + 4 < end && tries < 4; m++) {
    if (m[0] || m[1] || m[2] != 0xff || m[3] != 0xff) continue;
    tries++;
    unsigned char *text;
    size_t tn;
    int rc = gz__raw_alone(m + 4, (size_t)(end - (m + 4)), max_out, &text, &tn);
    if (rc == -ENOMEM) return rc;
    if (!rc) {
      if (!(out->raw = malloc((size_t)(end - (m + 4))))) {
        free(text);
        return -ENOMEM;
      }
      memcpy(out->raw, m + 4, (size_t)(end - (m + 4)));
      out->raw_len = (size_t)(end - (m + 4));
      out->text = text;
      out->text_len = tn;
      out->crc = crc32(0L, text, (uInt)tn);
      return 0;
    }
  }
  return -ENOENT;
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
