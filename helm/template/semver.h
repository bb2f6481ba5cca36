/* Masterminds semver v3.5.0 (the port in sprig_semver.c) for code outside templates: chart
 * versions, dependency version constraints and kubeVersion checks, as Helm uses the library. */
#pragma once
#include <stddef.h>

/* 1 when v (n bytes) parses with semver.NewVersion (coercing mode), else 0. */
int semver_valid(const char *v, size_t n);
/* NewConstraint(constraint).Check(NewVersion(version)): 1 satisfied, 0 not, -1 when the
 * constraint or the version does not parse, -12 when out of memory. */
int semver_check(const char *constraint, size_t cn, const char *version, size_t vn);
