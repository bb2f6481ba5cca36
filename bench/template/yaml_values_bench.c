/* Values parse benchmark: one YAML file converted as helm/values/values.c converts values files
 * (YAML_OPT_DUP_LAST | YAML_OPT_NO_NUMBER_TEXT), N times through the default path (the full-tree
 * scanner when the file is in its subset) and N times through libyaml only (YAML_OPT_NO_FAST).
 * Prints the best and median time of each and whether the two trees are identical. No thresholds.
 * Build and run (from the repository root):
 *   cc -std=gnu11 -O2 -DNDEBUG -I. -I/usr/include/cjson -o /tmp/yaml_values_bench \
 *     bench/template/yaml_values_bench.c base/*.c -lcjson -lyaml -lmbedx509 -lmbedcrypto -lz -lm
 *   python3 tests/charts/huge-values.gen /tmp && /tmp/yaml_values_bench /tmp/huge.yaml 10 */
#include "base/yaml.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

/* Converts text n times with flags; best and median milliseconds; *last keeps the last tree. */
static int run(const char *text, size_t len, int flags, int n, double *best, double *median, cJSON **last) {
  double *t = malloc((size_t)n * sizeof *t);
  if (!t) return -1;
  *last = NULL;
  for (int i = 0; i < n; i++) {
    yaml_opts_t o = {.flags = flags};
    yaml_error_t e;
    cJSON *j = NULL;
    double t0 = now_ms();
    int rc = yaml_to_json(text, len, &o, &j, &e);
    t[i] = now_ms() - t0;
    if (rc) {
      fprintf(stderr, "conversion failed: %s\n", e.message);
      free(t);
      return -1;
    }
    if (i == n - 1) *last = j;
    else cJSON_Delete(j);
  }
  qsort(t, (size_t)n, sizeof *t, cmp_d);
  *best = t[0];
  *median = t[n / 2];
  free(t);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s FILE.yaml [N]\n", argv[0]);
    return 2;
  }
  int n = argc > 2 ? atoi(argv[2]) : 10;
  if (n < 1) n = 1;
  FILE *f = fopen(argv[1], "rb");
  if (!f) {
    perror(argv[1]);
    return 1;
  }
  fseek(f, 0, SEEK_END);
  long sz = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *text = malloc((size_t)sz + 1);
  if (!text || fread(text, 1, (size_t)sz, f) != (size_t)sz) {
    fprintf(stderr, "cannot read %s\n", argv[1]);
    return 1;
  }
  fclose(f);
  size_t len = (size_t)sz;
  const int flags = YAML_OPT_DUP_LAST | YAML_OPT_NO_NUMBER_TEXT;
  cJSON *fast_tree = NULL, *lib_tree = NULL, *probe = NULL;
  yaml_opts_t po = {.flags = flags};
  int in_subset = yaml_tree_fast(text, len, &po, &probe);
  cJSON_Delete(probe);
  double fb, fm, lb, lm;
  if (run(text, len, flags, n, &fb, &fm, &fast_tree) || run(text, len, flags | YAML_OPT_NO_FAST, n, &lb, &lm, &lib_tree))
    return 1;
  char *a = cJSON_PrintUnformatted(fast_tree), *b = cJSON_PrintUnformatted(lib_tree);
  int same = a && b && !strcmp(a, b);
  printf("file %s: %zu bytes, in the scanner's subset: %s, %d runs each\n", argv[1], len, in_subset ? "yes" : "no", n);
  printf("%-28s %10s %10s\n", "ms per parse", "best", "median");
  printf("%-28s %10.2f %10.2f\n", "default (scanner)", fb, fm);
  printf("%-28s %10.2f %10.2f\n", "libyaml only (NO_FAST)", lb, lm);
  printf("speedup (median)             %9.1fx\n", fm > 0 ? lm / fm : 0);
  printf("identical trees (printed)    %s\n", same ? "yes" : "NO");
  free(a);
  free(b);
  cJSON_Delete(fast_tree);
  cJSON_Delete(lib_tree);
  free(text);
  return same ? 0 : 1;
}
