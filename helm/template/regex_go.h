/* Go's regexp syntax (RE2, as regexp.Compile parses it) read exactly as Go
 * reads it — the same accepted patterns, the same error texts — and written
 * out as an equivalent PCRE2 pattern, so that Sprig's regex functions can run
 * on PCRE2 with Go's semantics. Pure: no I/O, no global state. */
#pragma once
#include <stddef.h>

#include "base/buf.h"

/* What a translated pattern needs beside its text. */
typedef struct tpl_regex_info_s {
  unsigned ncap; /* capture groups, numbered 1..ncap as Go numbers them */
  buf_t names;   /* for group 1..ncap in order: its name (empty when unnamed) and a NUL */
} tpl_regex_info_t;

/* Parses Go pattern p[0..n) and writes a PCRE2 pattern (ASCII text, to compile
 * with PCRE2_UTF and no other option) that matches what Go's would: 0; -1 with
 * Go's error text ("error parsing regexp: ...") in err; -12 when out of memory.
 * info is filled on success (free info->names with buf_free). */
int tpl_regex_translate(const char *p, size_t n, buf_t *out, tpl_regex_info_t *info, buf_t *err);
