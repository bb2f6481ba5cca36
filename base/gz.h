/* gzip (RFC 1952) compression and bounded decompression over zlib. */
#pragma once
#include <stddef.h>

#define GZ_DEFAULT_COMPRESSION (-1)
#define GZ_BEST_COMPRESSION 9

/* Compresses n bytes into one gzip member (header like Go's gzip.Writer: no name, mtime 0, OS unknown)
 * at level -1 (default) or 0..9; *out is malloc'd, caller frees; 0, -EINVAL or -ENOMEM. */
int gz_compress(const void *in, size_t n, int level, unsigned char **out, size_t *out_len);
/* Reports whether data starts with the gzip magic bytes 1f 8b 08. */
int gz_is_gzip(const void *data, size_t n);
/* Decompresses every gzip member in data into *out (NUL-terminated, caller frees), refusing to produce
 * more than max_out bytes; 0, -EINVAL (corrupt or truncated, message says where), -EFBIG (over
 * max_out: a possible gzip bomb) or -ENOMEM. */
int gz_decompress(const void *data, size_t n, size_t max_out, unsigned char **out, size_t *out_len,
                  char *err, size_t errlen);
