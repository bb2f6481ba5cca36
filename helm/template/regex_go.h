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
  unsigned *groups; /* [1..ncap]: the PCRE2 group that holds each Go group */
} tpl_regex_info_t;

/* Parses Go pattern p[0..n) and writes a PCRE2 pattern (ASCII text, to compile
 * with PCRE2_UTF and no other option) that matches what Go's would: 0; -1 with
 * Go's error text ("error parsing regexp: ...") in err; -12 when out of memory.
 * info is filled on success (free it with tpl_regex_info_free). The pattern
 * holds callouts (string callouts of digits): compile and match it with
 * tpl_regex_callout as the callout function. */
int tpl_regex_translate(const char *p, size_t n, buf_t *out, tpl_regex_info_t *info, buf_t *err);
/* Frees what tpl_regex_translate put in info. */
void tpl_regex_info_free(tpl_regex_info_t *info);
/* The callouts' answer (0 go on, 1 fail here), from the callout's text, the
 * current position, PCRE2's offset vector and its capture_top: Go's loops
 * refuse an empty iteration after the first. */
int tpl_regex_callout(const char *text, size_t cur, const size_t *ov, unsigned top);
