/* The semver port moved to helm/semver/semver.h (shared by templates and chart sources); this
 * name stays for the chart and render code that includes it. */
#pragma once
#include "helm/semver/semver.h"
