/* The pieces of Helm's OCI registry support that need no network: references, the
 * distribution API's paths, Helm chart manifests, tag lists and the version Helm picks from
 * them, and the registry's Bearer challenge and token response.
 *
 * References are `oci://host[:port]/path/name[:tag][@sha256:<hex>]` checked as Helm (and the
 * ORAS library under it) checks them: a '+' in a tag becomes '_' (tags cannot hold '+'; Helm
 * writes chart version 1.0.0+build as tag 1.0.0_build), a digest wins over a tag. No I/O;
 * every function is usable from any thread. JSON inputs are bounded (OCI_MAX_JSON) and
 * checked field by field; errors say what is wrong. Costs: O(input) except tag choice,
 * O(n log n) in the number of tags. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

#define OCI_EINVAL (-22) /* malformed input; the message says what */
#define OCI_ENOMEM (-12)
#define OCI_E2BIG (-7)   /* over a limit */
#define OCI_ENOENT (-2)  /* no layer of Helm's type, no matching tag */

#define OCI_MAX_JSON ((size_t)4 << 20) /* largest manifest or tag list accepted (as distribution) */
#define OCI_MAX_LAYERS 256
#define OCI_MAX_TAGS 100000

/* Media types (Helm's pkg/registry constants). */
#define OCI_MEDIA_HELM_CONFIG "application/vnd.cncf.helm.config.v1+json"
#define OCI_MEDIA_HELM_CHART "application/vnd.cncf.helm.chart.content.v1.tar+gzip"
#define OCI_MEDIA_HELM_CHART_LEGACY "application/tar+gzip"
#define OCI_MEDIA_HELM_PROV "application/vnd.cncf.helm.chart.provenance.v1.prov"
#define OCI_MEDIA_MANIFEST "application/vnd.oci.image.manifest.v1+json"

typedef struct oci_ref_s {
  char *registry;   /* host[:port] */
  char *repository; /* path/name, no leading '/' */
  char *tag;        /* "" when none (with '+' turned into '_') */
  char *digest;     /* "" or "sha256:<64 hex>" (or sha384/sha512) */
} oci_ref_t;

typedef struct oci_descriptor_s {
  char *media_type, *digest;
  uint64_t size;
} oci_descriptor_t;

typedef struct oci_manifest_s {
  oci_descriptor_t config; /* media type OCI_MEDIA_HELM_CONFIG */
  oci_descriptor_t chart;  /* the chart layer (Helm's type, or the legacy one) */
  oci_descriptor_t prov;   /* the provenance layer; digest "" when absent */
  int legacy;              /* the chart layer has the legacy media type (Helm warns) */
} oci_manifest_t;

typedef struct oci_challenge_s {
  char *scheme;  /* "Bearer" or "Basic" as written */
  char *realm, *service, *scope; /* "" when absent */
} oci_challenge_t;

/* Parses an oci:// reference. 0, or OCI_EINVAL with "invalid reference: ..." in err. */
int oci_ref_parse(const char *s, oci_ref_t *ref, char *err, size_t errlen);
/* Frees what oci_ref_parse filled in. */
void oci_ref_free(oci_ref_t *ref);

/* Appends /v2/<repository>/manifests/<reference> (a tag or digest; NULL: the ref's digest, else its tag). */
int oci_path_manifest(const oci_ref_t *ref, const char *reference, buf_t *out);
/* Appends /v2/<repository>/blobs/<digest>. */
int oci_path_blob(const oci_ref_t *ref, const char *digest, buf_t *out);
/* Appends /v2/<repository>/tags/list, with ?n=<n> (n > 0) and &last=<last> (non-NULL) for paging. */
int oci_path_tags(const oci_ref_t *ref, size_t n, const char *last, buf_t *out);
/* The next page's path from a Link header (`<path>; rel="next"`): 0 and out, OCI_ENOENT when none. */
int oci_link_next(const char *link, buf_t *out);

/* Parses an image manifest and picks Helm's config and chart layer (as Helm's pull does).
 * 0; OCI_EINVAL (not JSON, not an image manifest, a bad descriptor), OCI_ENOENT (no config or
 * chart layer of Helm's types), OCI_E2BIG, with a message. */
int oci_manifest_parse(const char *json, size_t len, oci_manifest_t *m, char *err, size_t errlen);
/* Frees what oci_manifest_parse filled in. */
void oci_manifest_free(oci_manifest_t *m);

/* Parses a tags list ({"name": ..., "tags": [...]}): *tags (strings and array malloc'd; free
 * with oci_tags_free) and *n. 0, OCI_EINVAL or OCI_E2BIG with a message. */
int oci_tags_parse(const char *json, size_t len, char ***tags, size_t *n, char *err, size_t errlen);
void oci_tags_free(char **tags, size_t n);
/* The version Helm picks from a registry's tags for constraint ("" = "*"): tags that are
 * strict semver once '_' is read as '+', newest first; one equal to the constraint wins, else
 * the first the constraint accepts. Appends the version (with '+'; the tag to fetch has '_')
 * to out. 0, OCI_EINVAL (bad constraint, semver's message) or OCI_ENOENT. */
int oci_tags_select(const char *const *tags, size_t n, const char *constraint, buf_t *out, char *err, size_t errlen);

/* Parses a WWW-Authenticate header's first challenge (`Bearer realm="...",service="...",scope="..."`).
 * 0, or OCI_EINVAL (no scheme, a Bearer challenge without realm, bad syntax) with a message. */
int oci_challenge_parse(const char *header, oci_challenge_t *c, char *err, size_t errlen);
void oci_challenge_free(oci_challenge_t *c);
/* Appends the token request URL: realm?service=...&scope=... (query-escaped; scope overrides
 * the challenge's when non-NULL). */
int oci_challenge_token_url(const oci_challenge_t *c, const char *scope, buf_t *out);
/* Parses a token endpoint's answer ({"token": ...} or {"access_token": ...}, expires_in in
 * seconds, 60 when absent as the distribution spec says). Appends the token to out. */
int oci_token_parse(const char *json, size_t len, buf_t *out, uint64_t *expires_in, char *err, size_t errlen);

/* Credentials for registry from a `kubernetes.io/dockerconfigjson` Secret's `.dockerconfigjson`
 * (Docker's config.json: {"auths": {"<key>": {"auth": ..., "username": ..., "password": ...,
 * "identitytoken": ...}}}), looked up as Helm's registry client (ORAS's credential store) does:
 * the key equal to registry ("docker.io" is stored as "https://index.docker.io/v1/"), else the
 * first key that is registry once a leading http:// or https:// and any path are dropped. In the
 * entry, `auth` (base64 of user:password, split at the first ':') wins over username/password;
 * an `identitytoken` (an OAuth2 refresh token) is handed out as user "<token>" with the token as
 * password, Docker's convention, and fetches registry tokens by OAuth2 (OCI_TOKEN_USER).
 * Field names match case-insensitively, as Go's encoding/json matches them; `registrytoken` is
 * not used. 0 with *user and *pass (malloc'd; either may be ""); OCI_ENOENT (no entry for
 * registry, or an entry without credentials: go anonymous); OCI_EINVAL (not JSON, auths or the
 * entry not an object, a field not a string, auth not base64 of user:password) or OCI_E2BIG,
 * with a message that never holds a credential. */
#define OCI_TOKEN_USER "<token>"
int oci_dockerconfig_creds(const char *json, size_t len, const char *registry, char **user, char **pass, char *err,
                           size_t errlen);
