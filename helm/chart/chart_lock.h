/* Chart.lock / requirements.lock as Helm's loader reads them (sigs.k8s.io/yaml into chart.Lock). */
#pragma once
#include <stddef.h>

/* Checks that a lock file decodes as Helm's LoadFiles decodes it; helm template uses nothing else
 * of it (a lock that does not match the dependencies is not an error). 0 when fine; otherwise -1
 * with "cannot load <what>: <Go's error>" in err (or -12 when out of memory). */
int chart_lock_check(const char *data, size_t len, const char *what, char *err, size_t errlen);
