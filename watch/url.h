/* Absolute http(s) URLs from outside input (a caller's URL, a redirect's Location): parsed into
 * what a request needs, and relative references resolved as RFC 3986 section 5.2 (and Go's
 * url.ResolveReference) do. Bounded: inputs longer than WATCH_URL_MAX are refused. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#define WATCH_URL_MAX 8192

typedef struct watch_url_s {
  char *scheme;    /* "http" or "https" (lower-cased) */
  char *user;      /* userinfo, percent-decoded; NULL when the URL has none */
  char *pass;      /* NULL when the userinfo has no ':' */
  char *host;      /* lower-cased, without IPv6 brackets; a zone ("%eth0") decoded */
  char *hostname;  /* the same as written (Go's URL.Hostname(), for rules that compare it so) */
  int port;        /* the explicit port, else 443 or 80 */
  bool has_port;
  char *authority; /* host[:port] as written, without userinfo (the Host header) */
  char *target;    /* path and query, "/" when empty, with spaces and non-ASCII bytes percent-encoded */
  char *clean;     /* the URL without userinfo and fragment (what a response names) */
  char *shown;     /* for messages: without userinfo, fragment or query values ("?a=xxxxx") */
} watch_url_t;

/* Parses an absolute http:// or https:// URL; 0, UV_EINVAL with *why (static text) or UV_ENOMEM. */
int watch_url_parse(const char *s, watch_url_t *u, const char **why);
/* Frees what watch_url_parse filled in (safe on a zeroed or failed one). */
void watch_url_free(watch_url_t *u);
/* Resolves ref (absolute or relative) against the absolute URL base into *out (malloc'd); the
 * result's fragment is dropped. 0, UV_EINVAL (with *why) or UV_ENOMEM. */
int watch_url_resolve(const char *base, const char *ref, char **out, const char **why);
