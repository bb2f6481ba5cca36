/* Masterminds semver v3.5.0 (the version Helm v4.3.1 pins), shared by the template functions
 * (semver, semverCompare in helm/template/sprig_semver.c) and by chart code: chart versions,
 * dependency constraints, kubeVersion checks, repository and OCI version choice.
 *
 * NewVersion in its default coercing mode and StrictNewVersion; NewConstraint (hyphen ranges,
 * ||, comma/space conjunctions, = != > < >= => <= =< ~ ~> ^, x, X and * wildcards) and Check
 * with its prerelease rule (a prerelease matches only a group that names one). The library's
 * regular expressions run on PCRE2. Error texts are Go's. Costs: a parse is one regex match
 * over at most 256 bytes; a constraint (at most 512 bytes, 32 || groups) is parsed once and
 * checked in O(number of its terms) with no allocation. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"

/* A parsed version; pre, meta and orig point into the parsed text (not NUL-terminated). */
typedef struct semver_s {
  uint64_t major, minor, patch;
  const char *pre, *meta, *orig;
  size_t npre, nmeta, norig;
} semver_t;

/* A parsed constraint (semver.Constraints); immutable, usable from any thread. */
typedef struct semver_constraint_s semver_constraint_t;

/* semver.NewVersion (coercing: "v1", "1.2" accepted): 0, or -1 with Go's error text in err. */
int semver_parse(const char *s, size_t n, semver_t *v, buf_t *err);
/* semver.StrictNewVersion (exactly MAJOR.MINOR.PATCH[-pre][+meta]): 0 or -1. */
int semver_parse_strict(const char *s, size_t n, semver_t *v);
/* Version.Compare: -1, 0 or 1 (metadata ignored). */
int semver_compare(const semver_t *a, const semver_t *b);
/* Appends Version.String() (MAJOR.MINOR.PATCH[-pre][+meta]); 0 or -12. */
int semver_format(buf_t *b, const semver_t *v);

/* semver.NewConstraint: 0 and *out (free with semver_constraint_free), -1 with Go's error
 * text in err, or -12 when out of memory. */
int semver_constraint_new(const char *s, size_t n, semver_constraint_t **out, buf_t *err);
/* Constraints.Check(v): 1 satisfied, 0 not. */
int semver_constraint_check(const semver_constraint_t *c, const semver_t *v);
/* Frees a constraint (NULL is fine). */
void semver_constraint_free(semver_constraint_t *c);

/* 1 when v (n bytes) parses with semver.NewVersion (coercing mode), else 0. */
int semver_valid(const char *v, size_t n);
/* NewConstraint(constraint).Check(NewVersion(version)): 1 satisfied, 0 not, -1 when the
 * constraint or the version does not parse, -12 when out of memory. */
int semver_check(const char *constraint, size_t cn, const char *version, size_t vn);
