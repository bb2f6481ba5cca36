#include "base/gz.h"
#include <errno.h>
#include <stdlib.h>
#include <zlib.h>
#include "t.h"

int main(void) {
  const char *text = "hello hello hello hello gzip world\n";
  unsigned char *z;
  size_t zlen;
  CHECK_EQ_INT(gz_compress(text, strlen(text), GZ_BEST_COMPRESSION, &z, &zlen), 0);
  /* Header as Go writes it: magic, deflate, no flags, mtime 0, XFL 2 (best), OS 255 */
  CHECK(gz_is_gzip(z, zlen));
  CHECK_EQ_INT(z[3], 0);
  CHECK_EQ_INT(z[4] | z[5] | z[6] | z[7], 0);
  CHECK_EQ_INT(z[8], 2);
  CHECK_EQ_INT(z[9], 255);
  unsigned char *out;
  size_t olen;
  char err[160];
  CHECK_EQ_INT(gz_decompress(z, zlen, 1 << 20, &out, &olen, err, sizeof err), 0);
  CHECK_EQ_INT(olen, strlen(text));
  CHECK_EQ_STR((char *)out, text);
  free(out);

  /* exactly at the limit passes, one byte below fails */
  CHECK_EQ_INT(gz_decompress(z, zlen, strlen(text), &out, &olen, err, sizeof err), 0);
  free(out);
  CHECK_EQ_INT(gz_decompress(z, zlen, strlen(text) - 1, &out, &olen, err, sizeof err), -EFBIG);
  CHECK(strstr(err, "limit") != NULL);

  /* concatenated members decode as one stream (as Go's gzip.Reader) */
  unsigned char *two = malloc(zlen * 2);
  memcpy(two, z, zlen);
  memcpy(two + zlen, z, zlen);
  CHECK_EQ_INT(gz_decompress(two, zlen * 2, 1 << 20, &out, &olen, err, sizeof err), 0);
  CHECK_EQ_INT(olen, 2 * strlen(text));
  free(out);
  /* trailing garbage after a member is an error */
  two[zlen] = 'x';
  CHECK_EQ_INT(gz_decompress(two, zlen + 4, 1 << 20, &out, &olen, err, sizeof err), -EINVAL);
  free(two);

  /* truncated and corrupt input */
  CHECK_EQ_INT(gz_decompress(z, zlen - 6, 1 << 20, &out, &olen, err, sizeof err), -EINVAL);
  CHECK(strstr(err, "unexpected end") != NULL || strstr(err, "corrupt") != NULL);
  z[zlen - 1] ^= 0xff; /* ISIZE trailer */
  CHECK_EQ_INT(gz_decompress(z, zlen, 1 << 20, &out, &olen, err, sizeof err), -EINVAL);
  CHECK_EQ_INT(gz_decompress("not gzip", 8, 1 << 20, &out, &olen, err, sizeof err), -EINVAL);
  CHECK(strstr(err, "invalid header") != NULL);
  free(z);

  /* empty input */
  CHECK_EQ_INT(gz_compress("", 0, GZ_DEFAULT_COMPRESSION, &z, &zlen), 0);
  CHECK_EQ_INT(gz_decompress(z, zlen, 0, &out, &olen, err, sizeof err), 0);
  CHECK_EQ_INT(olen, 0);
  free(out);
  free(z);

  /* A gzip bomb: 64 MiB of zeros compresses to ~64 KiB; a 1 MiB limit stops it early. */
  size_t big = 64u << 20;
  unsigned char *zeros = calloc(1, big);
  CHECK(zeros != NULL);
  CHECK_EQ_INT(gz_compress(zeros, big, 9, &z, &zlen), 0);
  free(zeros);
  CHECK(zlen < 200000);
  CHECK_EQ_INT(gz_decompress(z, zlen, 1 << 20, &out, &olen, err, sizeof err), -EFBIG);
  CHECK(strstr(err, "exceeds the limit of 1048576 bytes") != NULL);
  free(z);

  /* Inputs around each fitted window's edge (the window is sized to the input: 2^k - 262 bytes
   * fit a window of 2^k) round-trip and come out no larger than with zlib's full 32 KiB window. */
  static const size_t edges[] = {250, 251, 1024 - 262, 1024 - 261, 4096 - 262, 4096 - 261, 16384 - 262,
                                 16384 - 261, 32768 - 262, 32768 - 261, 70000};
  unsigned char *src = malloc(70000);
  CHECK(src != NULL);
  unsigned seed = 7;
  for (size_t i = 0; i < 70000; i++) { /* text-like: words from a small alphabet, repeats far apart */
    seed = seed * 1103515245u + 12345u;
    src[i] = (unsigned char)(i % 97 == 0 ? '\n' : "abcdefghij klmnop\"{}:,"[(seed >> 16) % 23]);
  }
  for (size_t e = 0; e < sizeof edges / sizeof *edges; e++) {
    size_t n = edges[e];
    CHECK_EQ_INT(gz_compress(src, n, GZ_BEST_COMPRESSION, &z, &zlen), 0);
    CHECK_EQ_INT(gz_decompress(z, zlen, n, &out, &olen, err, sizeof err), 0);
    CHECK_EQ_INT(olen, n);
    CHECK(memcmp(out, src, n) == 0);
    free(out);
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    CHECK_EQ_INT(deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    unsigned char full[80000];
    zs.next_in = src;
    zs.avail_in = (uInt)n;
    zs.next_out = full;
    zs.avail_out = sizeof full;
    CHECK_EQ_INT(deflate(&zs, Z_FINISH), Z_STREAM_END);
    if (zlen > zs.total_out) fprintf(stderr, "input %zu: %zu bytes, full window %lu\n", n, zlen, zs.total_out);
    CHECK(zlen <= zs.total_out);
    deflateEnd(&zs);
    free(z);
  }
  free(src);

  CHECK_EQ_INT(gz_compress("x", 1, 12, &z, &zlen), -EINVAL);

  /* gz_compress_split: head and tail read back as one text, a kept tail reused only for the same
   * text, and the output near gz_compress's (a record's head is its info, the tail the rest). */
  {
    size_t tn = 40000;
    char *tail = malloc(tn + 1);
    for (size_t i = 0; i < tn; i++) tail[i] = "templates: {{ .Values.image.tag }}\n"[i % 35] + (char)(i / 997 % 3);
    const char *heads[] = {"", "{\"name\":\"app\",\"info\":{\"status\":\"pending-install\"}",
                           "{\"name\":\"app\",\"info\":{\"status\":\"deployed\",\"description\":\"Install complete\"}"};
    size_t tails[] = {0, 1, 250, 251, 511, 4096, 9000, tn};
    gz_tail_t cache = {0};
    for (size_t h = 0; h < 3; h++)
      for (size_t k = 0; k < sizeof tails / sizeof *tails; k++) {
        size_t hn = strlen(heads[h]), n = tails[k];
        unsigned char *sz, *again, *whole_z;
        size_t szlen, againlen, wlen;
        CHECK_EQ_INT(gz_compress_split(heads[h], hn, tail, n, GZ_BEST_COMPRESSION, &cache, &sz, &szlen), 0);
        CHECK(gz_is_gzip(sz, szlen));
        CHECK_EQ_INT(sz[8], 2);
        CHECK_EQ_INT(sz[9], 255);
        char *whole = malloc(hn + n + 1);
        memcpy(whole, heads[h], hn);
        memcpy(whole + hn, tail, n);
        CHECK_EQ_INT(gz_decompress(sz, szlen, 1 << 20, &out, &olen, err, sizeof err), 0);
        CHECK_EQ_INT(olen, hn + n);
        CHECK(olen == hn + n && !memcmp(out, whole, olen));
        free(out);
        /* the tail kept: the same bytes again, with no cache the same bytes too */
        CHECK_EQ_INT(cache.text_len, n);
        CHECK_EQ_INT(gz_compress_split(heads[h], hn, tail, n, GZ_BEST_COMPRESSION, &cache, &again, &againlen), 0);
        CHECK(againlen == szlen && !memcmp(again, sz, szlen));
        free(again);
        CHECK_EQ_INT(gz_compress_split(heads[h], hn, tail, n, GZ_BEST_COMPRESSION, NULL, &again, &againlen), 0);
        CHECK(againlen == szlen && !memcmp(again, sz, szlen));
        free(again);
        /* the tail read back from the member alone (a listed record), reused behind another head:
         * the same bytes as that split made afresh */
        {
          gz_tail_t back;
          CHECK_EQ_INT(gz_tail_from_member(sz, szlen, 1 << 20, &back), 0);
          CHECK(back.text_len == n && (!n || !memcmp(back.text, tail, n)));
          CHECK(back.crc == crc32(0L, (const Bytef *)tail, (uInt)n));
          const char *other = heads[(h + 1) % 3];
          unsigned char *fresh, *reused;
          size_t flen, rlen;
          CHECK_EQ_INT(gz_compress_split(other, strlen(other), tail, n, GZ_BEST_COMPRESSION, NULL, &fresh, &flen), 0);
          CHECK_EQ_INT(gz_compress_split(other, strlen(other), tail, n, GZ_BEST_COMPRESSION, &back, &reused, &rlen), 0);
          CHECK(rlen == flen && !memcmp(reused, fresh, flen));
          free(fresh);
          free(reused);
          gz_tail_free(&back);
          /* cut short, or its trailer's bytes missing: no tail */
          CHECK_EQ_INT(gz_tail_from_member(sz, szlen - 9, 1 << 20, &back), -ENOENT);
          CHECK(!back.text && !back.raw);
        }
        CHECK_EQ_INT(gz_compress(whole, hn + n, GZ_BEST_COMPRESSION, &whole_z, &wlen), 0);
        {
          gz_tail_t none; /* one stream, as gz_compress (and Go's gzip) writes it: no tail to take */
          CHECK_EQ_INT(gz_tail_from_member(whole_z, wlen, 1 << 20, &none), -ENOENT);
        }
        /* the head's own block, the 5-byte empty block that ends it on a byte, the tail's block header
         * (about 20 bytes on this text), and the tail's matches into the head given up */
        if (szlen > wlen + 32 + wlen / 100) fprintf(stderr, "split %zu+%zu: %zu bytes, whole %zu\n", hn, n, szlen, wlen);
        CHECK(szlen <= wlen + 32 + wlen / 100);
        free(whole_z);
        free(whole);
        free(sz);
      }
    /* a different tail of the same length is compressed again, not taken from the cache */
    CHECK_EQ_INT(gz_compress_split(heads[1], strlen(heads[1]), tail, tn, GZ_BEST_COMPRESSION, &cache, &z, &zlen), 0);
    free(z);
    tail[tn / 2] ^= 1;
    CHECK_EQ_INT(gz_compress_split(heads[1], strlen(heads[1]), tail, tn, GZ_BEST_COMPRESSION, &cache, &z, &zlen), 0);
    CHECK_EQ_INT(gz_decompress(z, zlen, 1 << 20, &out, &olen, err, sizeof err), 0);
    CHECK(olen == strlen(heads[1]) + tn && !memcmp(out + strlen(heads[1]), tail, tn));
    free(out);
    free(z);
    CHECK_EQ_INT(gz_compress_split("x", 1, "y", 1, 12, &cache, &z, &zlen), -EINVAL);
    {
      gz_tail_t none; /* not gzip, or too short */
      CHECK_EQ_INT(gz_tail_from_member("not gzip at all, not at all", 27, 0, &none), -ENOENT);
      CHECK_EQ_INT(gz_tail_from_member("\x1f\x8b\x08", 3, 0, &none), -ENOENT);
    }
    /* a bound below the tail's size refuses it */
    {
      unsigned char *m;
      size_t mlen;
      gz_tail_t back;
      CHECK_EQ_INT(gz_compress_split(heads[1], strlen(heads[1]), tail, 9000, GZ_BEST_COMPRESSION, NULL, &m, &mlen), 0);
      CHECK_EQ_INT(gz_tail_from_member(m, mlen, 8999, &back), -ENOENT);
      CHECK_EQ_INT(gz_tail_from_member(m, mlen, 9000, &back), 0);
      gz_tail_free(&back);
      free(m);
    }
    gz_tail_free(&cache);
    CHECK(!cache.text && !cache.raw);
    free(tail);
  }
  return t_done();
}
