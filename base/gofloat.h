/* Go's strconv shortest formatting of floating-point numbers, shared by the JSON and YAML encoders. */
#pragma once
#include <stddef.h>

/* Shortest decimal digits that read back as |v| (at float32 precision when is32), the closest such
 * string as Go's strconv chooses it: digits without dot or trailing zeros into d (dlen bytes), and
 * |v| = 0.d x 10^*dp. Returns the number of digits. v must be finite and non-zero. */
int gofloat_shortest(double v, int is32, char *d, size_t dlen, int *dp);

/* gofloat_shortest's path without printf: when v (> 0) is exactly a short decimal (an integer below
 * 2^50 divided by a power of ten up to 10^15, e.g. 8080, 0.5, 12.25) its digits as above; 0 when it
 * is not (then use gofloat_shortest). */
int gofloat_exact(double v, int is32, char *d, size_t dlen, int *dp);
