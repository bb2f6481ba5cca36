/* gzip (RFC 1952) compression and bounded decompression over zlib. */
#pragma once
#include <stddef.h>

#define GZ_DEFAULT_COMPRESSION (-1)
#define GZ_BEST_COMPRESSION 9

/* Compresses n bytes into one gzip member (header like Go's gzip.Writer: no name, mtime 0, OS unknown)
 * at level -1 (default) or 0..9; *out is malloc'd, caller frees; 0, -EINVAL or -ENOMEM. */
int gz_compress(const void *in, size_t n, int level, unsigned char **out, size_t *out_len);
/* A compressed tail kept for gz_compress_split: the tail's text, its raw deflate stream (compressed
 * on its own, so it refers to nothing before it) and its CRC-32. Zeroed: empty. */
typedef struct gz_tail_s {
  unsigned char *text, *raw;
  size_t text_len, raw_len;
  unsigned long crc;
} gz_tail_t;
/* Compresses head followed by tail into one gzip member as gz_compress does, the tail as a deflate
 * stream of its own behind the head's (flushed to a byte boundary): when *cache holds this tail's
 * text, its stream is reused and only the head is compressed; else the tail is compressed and kept
 * in *cache (cache may be NULL). The same bytes come out of any inflater; the output is some 20-30
 * bytes larger than gz_compress's (two blocks and the empty one between them; the tail's matches
 * into the head are given up). 0, -EINVAL or -ENOMEM (*cache then emptied). */
int gz_compress_split(const void *head, size_t hn, const void *tail, size_t tn, int level, gz_tail_t *cache,
                      unsigned char **out, size_t *out_len);
/* The tail of a member gz_compress_split wrote, read back from the member alone (a record as listed
 * from the API), for a gz_compress_split of the same tail behind another head: the stream after
 * the head's sync flush, checked to inflate on its own (so it refers to nothing before it) to at
 * most max_out bytes (0: no bound) and to end where the member's trailer begins. The text is what
 * it inflates to; gz_compress_split reuses it only when its tail is that text. 0 with *out filled,
 * -ENOENT when the member holds no such tail (one stream, as Go's gzip writes), or -ENOMEM. */
int gz_tail_from_member(const void *member, size_t n, size_t max_out, gz_tail_t *out);
/* Frees what cache holds and zeroes it. */
void gz_tail_free(gz_tail_t *cache);
/* Reports whether data starts with the gzip magic bytes 1f 8b 08. */
int gz_is_gzip(const void *data, size_t n);
/* Decompresses every gzip member in data into *out (NUL-terminated, caller frees), refusing to produce
 * more than max_out bytes; 0, -EINVAL (corrupt or truncated, message says where), -EFBIG (over
 * max_out: a possible gzip bomb) or -ENOMEM. */
int gz_decompress(const void *data, size_t n, size_t max_out, unsigned char **out, size_t *out_len,
                  char *err, size_t errlen);
