/* Error messages into caller-supplied buffers. */
#pragma once
#include <stddef.h>

/* Writes the printf-formatted message into err (when err and errlen are non-zero) and returns code. */
int base_errf(char *err, size_t errlen, int code, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
