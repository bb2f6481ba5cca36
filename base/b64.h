/* Standard base64 (RFC 4648, with padding), as Go's base64.StdEncoding. */
#pragma once
#include <stddef.h>

/* Bytes b64_encode writes for n input bytes, without the terminator. */
size_t b64_encoded_len(size_t n);
/* Encodes n bytes into out (room for b64_encoded_len(n) + 1); NUL-terminates; returns the length. */
size_t b64_encode(const void *in, size_t n, char *out);
/* Encodes into a new NUL-terminated string (*out, caller frees); 0 or -ENOMEM. */
int b64_encode_alloc(const void *in, size_t n, char **out, size_t *out_len);
/* Decodes text (CR and LF are skipped, as Go does) into a new buffer (*out, NUL-terminated, caller frees)
 * and its length; 0, -EINVAL with a message naming the offset of the bad input, or -ENOMEM. */
int b64_decode_alloc(const char *in, size_t n, unsigned char **out, size_t *out_len, char *err, size_t errlen);
