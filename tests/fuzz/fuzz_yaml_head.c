/* libFuzzer target for the YAML head scanner (base/yaml.c, yaml_head_fast): whatever document it
 * accepts, libyaml's conversion (the same options, the fast path off) must accept too and give the
 * same head (apiVersion, kind, metadata.name, metadata.annotations, in the same order). Any crash,
 * sanitizer report, leak or disagreement is a bug.
 * Build and run: tests/fuzz/fuzz_yaml_head.sh (clang + libFuzzer); every build also makes
 * fuzz_yaml_head_replay (-DFUZZ_STANDALONE), which replays the files it is given. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/yaml.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1 << 16) return 0;
  const char *y = (const char *)data;
  cJSON *fast = NULL, *slow = NULL;
  if (!yaml_head_fast(y, size, &fast)) return 0;
  yaml_opts_t o = {.flags = YAML_OPT_DUP_LAST | YAML_OPT_SIMPLE_HEAD | YAML_OPT_NO_FAST_HEAD};
  yaml_error_t e;
  int rc = yaml_to_json(y, size, &o, &slow, &e);
  char *a = cJSON_PrintUnformatted(fast), *b = rc ? NULL : cJSON_PrintUnformatted(slow);
  if (!a || (!rc && !b)) abort(); /* out of memory: nothing to compare */
  if (rc || strcmp(a, b)) {
    fprintf(stderr, "head scanner: %s\nlibyaml (rc %d %s): %s\n", a, rc, rc ? e.message : "", b ? b : "-");
    abort();
  }
  free(a);
  free(b);
  cJSON_Delete(fast);
  cJSON_Delete(slow);
  return 0;
}

#ifdef FUZZ_STANDALONE
/* Replays each file named (a seed or a crash artifact) through the target. */
int main(int argc, char **argv) {
  int n = 0;
  for (int i = 1; i < argc; i++, n++) {
    FILE *f = fopen(argv[i], "rb");
    if (!f) {
      perror(argv[i]);
      return 1;
    }
    static uint8_t b[1 << 16];
    size_t len = fread(b, 1, sizeof b, f);
    fclose(f);
    LLVMFuzzerTestOneInput(b, len);
  }
  printf("replayed %d inputs\n", n);
  return 0;
}
#endif
