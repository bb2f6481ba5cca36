/* A Helm repository index (index.yaml) read as a stream, keeping only the charts asked for.
 *
 * The bytes are pushed in as they arrive (index_parser_feed, any chunk sizes, then
 * index_parser_finish) and run through libyaml's event parser; no tree is built. Of the
 * `entries` map only the charts named up front are kept (every version's name, version,
 * appVersion, urls, digest, created, deprecated, kubeVersion, apiVersion, type and
 * dependencies); the others are only counted. No I/O; one parser is used by one thread at a
 * time, and parsers share nothing.
 *
 * What Helm v4's repo.loadIndex does and this does too: JSON or YAML (YAML is read strictly:
 * an unknown field, or a field of the wrong kind, in the index, a chart version, a dependency
 * or a maintainer is an error, as yaml.UnmarshalStrict makes it); a missing top-level apiVersion is an error; a version that
 * fails Helm's chart metadata validation (name missing or not a base name, version missing or
 * not semver, bad type, bad dependency alias, null dependency) is skipped and counted, not kept;
 * versions are sorted newest first (semver order; versions equal in semver keep the index's
 * order). Not done: non-ASCII characters that Go's sanitizer would drop are kept as they are.
 *
 * Hostile input: aliases are refused (an alias bomb costs nothing), nesting, scalar length,
 * total bytes and version counts are bounded (index_limits_t), every error names the line.
 *
 * Memory: at most two windows of input (index_limits_t.window, by default twice the longest
 * scalar plus 64 KiB) plus libyaml's fixed buffers, plus what is kept; independent of the
 * index's size. libyaml may read at most one window past where it stood when an event began,
 * so a single token (a scalar with the blanks and comments before it) longer than the window
 * is refused, at the same place however the input was chunked: results never depend on the
 * chunking. Costs: O(bytes) parsing; the wanted-name lookup per chart is O(1) (hashed). */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "helm/semver/semver.h"

#define INDEX_EINVAL (-22) /* malformed or refused index, bad constraint or URL; the message says why */
#define INDEX_ENOMEM (-12)
#define INDEX_E2BIG (-7)    /* a limit was exceeded */
#define INDEX_ENOENT (-2)   /* no such chart, or no version matches */

typedef struct index_limits_s {
  size_t max_bytes;    /* total input bytes (0: 256 MiB) */
  size_t max_string;   /* longest scalar, key or value, in bytes (0: 64 KiB) */
  size_t max_depth;    /* mapping/sequence nesting (0: 64) */
  size_t max_versions; /* chart versions in the whole index, kept or not (0: 1,000,000) */
  size_t max_kept;     /* versions held at once: of all asked-for charts, or of the one chart a walk
                        * hands over (0: 100,000) */
  size_t max_list;     /* urls, keywords, sources, maintainers or dependencies of one version (0: 1,000) */
  size_t window;       /* bytes of look-ahead held for libyaml (0: 2 * max_string + 64 KiB) */
} index_limits_t;

typedef struct index_dependency_s {
  char *name, *version, *repository, *alias, *condition;
} index_dependency_t;

typedef struct index_maintainer_s {
  char *name, *email, *url; /* "" when absent */
} index_maintainer_t;

/* One kept chart version. Strings are NUL-terminated, never NULL ("" when absent). */
typedef struct index_version_s {
  char *name, *version, *app_version, *digest, *created, *kube_version, *api_version, *type, *description;
  char *home, *icon;
  bool deprecated;
  char **urls;
  size_t nurls;
  char **keywords, **sources;
  size_t nkeywords, nsources;
  index_maintainer_t *maintainers;
  size_t nmaintainers;
  index_dependency_t *deps;
  size_t ndeps;
  semver_t sv;  /* the parsed version (points into version) */
  size_t order; /* position in the index among this chart's versions */
} index_version_t;

/* An asked-for chart: present tells whether the index has the name at all. */
typedef struct index_chart_s {
  char *name;
  bool present;
  index_version_t *versions; /* newest first (Helm's order) */
  size_t nversions, cap;
  size_t skipped; /* versions dropped by Helm's validation */
} index_chart_t;

typedef struct index_counts_s {
  size_t charts;   /* chart names under entries */
  size_t versions; /* versions under entries (all charts, before validation) */
  size_t kept;     /* versions kept */
  size_t skipped;  /* kept charts' versions dropped by validation */
  size_t bytes;    /* input bytes */
} index_counts_t;

typedef struct index_parser_s index_parser_t;

/* Fills in the defaults for every 0 field of lim. */
void index_limits_defaults(index_limits_t *lim);

/* A parser keeping the charts names[0..n) (copied; duplicates ignored); lim NULL: defaults.
 * 0 and *out, INDEX_EINVAL (bad arguments) or INDEX_ENOMEM. */
int index_parser_new(const char *const *names, size_t n, const index_limits_t *lim, index_parser_t **out);
/* Pushes the next len bytes. 0, or the first error (INDEX_EINVAL/E2BIG with a message naming
 * the line in err, or INDEX_ENOMEM); after an error every call returns it again. */
int index_parser_feed(index_parser_t *p, const void *bytes, size_t len, char *err, size_t errlen);
/* Ends the input and checks what only the end can tell (apiVersion present, input not empty). */
int index_parser_finish(index_parser_t *p, char *err, size_t errlen);
/* Called by a walking parser once per chart of the index, when its entry ends (an entry that
 * is null or [] too, with no versions): the versions that pass Helm's validation, newest first.
 * chart and everything it points to are valid during the call only. 0 goes on; a negative
 * code stops the parse, which then fails with that code. */
typedef int (*index_walk_cb)(const index_chart_t *chart, void *data);

/* A parser that keeps no chart but hands every chart of the index to cb as its entry ends, in
 * the index's order: memory is one chart's versions at a time (max_kept bounds them), however
 * many charts the index holds. Feed and finish as any parser; index_parser_chart finds nothing.
 * Duplicate chart names are handed over twice (only asked-for names are checked for them).
 * 0 and *out, INDEX_EINVAL (no cb) or INDEX_ENOMEM. */
int index_parser_new_walk(const index_limits_t *lim, index_walk_cb cb, void *data, index_parser_t **out);

/* The asked-for chart called name (NULL if it was not asked for); valid until the parser is
 * freed. Complete only after index_parser_finish returned 0. */
const index_chart_t *index_parser_chart(const index_parser_t *p, const char *name);
/* Counts so far. */
index_counts_t index_parser_counts(const index_parser_t *p);
/* The index's top-level apiVersion ("" until seen). */
const char *index_parser_api_version(const index_parser_t *p);
/* The largest number of input bytes held at once (the window in use). */
size_t index_parser_peak_buffered(const index_parser_t *p);
/* Frees the parser and everything it kept (NULL is fine). */
void index_parser_free(index_parser_t *p);

/* The version Helm picks for constraint (IndexFile.Get): "" means "*"; a version string equal
 * to the constraint wins first; then the newest version the constraint accepts (prereleases
 * only when the constraint names one). chart NULL or not present: INDEX_ENOENT "no chart name
 * found"; no versions: "no chart version found"; nothing matches: INDEX_ENOENT "no chart
 * version found for NAME-CONSTRAINT"; a bad constraint: INDEX_EINVAL with semver's message.
 * O(versions) after one constraint parse. */
int index_chart_select(const index_chart_t *chart, const char *constraint, const index_version_t **out, char *err,
                       size_t errlen);

/* A chart URL from the index resolved against the repository URL as Helm does
 * (repo.ResolveReferenceURL): an absolute URL as it is; otherwise resolved (RFC 3986, Go's
 * net/url rules) against the repository URL with a '/' added to its path, keeping the
 * repository URL's query. Appends to out; 0, INDEX_EINVAL with a message, or INDEX_ENOMEM. */
int index_url_resolve(const char *repo_url, const char *chart_url, buf_t *out, char *err, size_t errlen);
