/* Internal to the values.schema.json validator (schema.c): Go-compatible syntax checks with Go's
 * error texts (schema_go.c) and the JSON Schema metaschemas (schema_meta.c). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <cjson/cJSON.h>

#include "base/buf.h"

/* regexp.Compile's syntax check (RE2 with Go's Perl flags): true when Go accepts s; otherwise
 * false with "error parsing regexp: <code>: `<expr>`" in why. Unicode class names are checked
 * only for their shape (the caller's PCRE2 compile catches unknown names). */
bool schema_go_regexp_ok(const char *s, buf_t *why);

/* netip.ParseAddr(s[:n]): true when it parses; otherwise false with Go's error text in why.
 * *is4 and *zone (may be NULL) tell what was parsed. */
bool schema_go_parse_addr(const char *s, size_t n, buf_t *why, bool *is4, bool *zone);

/* The library's uri, uri-reference (iri, iri-reference), uri-template, json-pointer,
 * relative-json-pointer and ipv6 format checks; 1 valid, 0 invalid (reason in why), -1 when fmt
 * is none of them. */
int schema_go_format(const char *fmt, const char *s, buf_t *why);

/* The metaschema of a draft (4, 6, 7, 2019, 2020) as a schema tree the validator runs on a
 * values.schema.json; NULL when out of memory. The caller deletes it. */
cJSON *schema_meta_build(int draft);
/* Where Go says the metaschema is ("https://json-schema.org/draft/2020-12/schema#"). */
const char *schema_meta_url(int draft);

/* The absolute URL ref names from base (RFC 3986 section 5.2, as net/url's ResolveReference);
 * malloc'd, NULL when out of memory. */
char *schema_uri_resolve(const char *base, const char *ref);
