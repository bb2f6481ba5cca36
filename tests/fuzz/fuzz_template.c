/* libFuzzer target for the template engine: lexer, parser and executor.
 * Input: TEMPLATE [ '\0' JSON-VALUES ]. The template is parsed as "main" in
 * a set with Helm's include/required/fail (so define/template/include
 * recursion is reachable) and executed in Helm, strict and plain Go modes
 * (chosen by the input's length) with small limits, so every input ends
 * quickly. Any crash, sanitizer report, leak or timeout is a bug.
 * Build and run: tests/fuzz/fuzz_template.sh (clang + libFuzzer); without
 * libFuzzer, build with -DFUZZ_STANDALONE and pass files to replay. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "helm/template/helm_funcs.h"
#include "helm/template/tpl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char default_values[] =
    "{\"a\":1,\"s\":\"str\",\"l\":[1,\"x\",null,{\"k\":[true]}],\"m\":{\"b\":{\"c\":2.5},\"e\":\"\"},\"n\":null,"
    "\"f\":1e6,\"t\":true}";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1 << 16) return 0;
  const char *text = (const char *)data;
  size_t tlen = size;
  const char *json = default_values;
  size_t jlen = sizeof default_values - 1;
  const void *nul = memchr(data, 0, size);
  if (nul) {
    tlen = (size_t)((const uint8_t *)nul - data);
    json = text + tlen + 1;
    jlen = size - tlen - 1;
  }
  tpl_funcs_t *funcs = tpl_funcs_new();
  if (!funcs) return 0;
  if (tpl_helm_funcs_add(funcs)) {
    tpl_funcs_free(funcs);
    return 0;
  }
  tpl_arena_t *a = tpl_arena_new(64u << 20);
  tpl_set_t *set = tpl_set_new(size % 3 == 2 ? NULL : funcs);
  buf_t out = BUF_INIT, err = BUF_INIT;
  tpl_value_t vals;
  if (!a || !set) goto done;
  if (tpl_value_from_json(a, json, jlen, &vals, &err)) {
    buf_reset(&err);
    if (tpl_value_from_json(a, default_values, sizeof default_values - 1, &vals, &err)) goto done;
  }
  if (tpl_set_parse(set, "main", text, tlen, &err) == 0) {
    tpl_helm_state_t hs;
    memset(&hs, 0, sizeof hs);
    tpl_exec_opts_t o = {
        .missingkey = size % 3 == 0 ? TPL_MISSINGKEY_ZERO : size % 3 == 1 ? TPL_MISSINGKEY_ERROR : TPL_MISSINGKEY_DEFAULT,
        .max_output = 1u << 20,
        .max_steps = 200000,
        .max_stack = 64u << 20,
        .udata = &hs,
    };
    int rc = tpl_set_execute(set, "main", vals, a, &o, &out, &err);
    /* An error always comes with a message. */
    if (rc && rc != TPL_ENOMEM && err.len == 0) abort();
    /* Executing a parsed set again gives the same result (sets are immutable). */
    if (rc == 0 && size < 4096) {
      buf_t out2 = BUF_INIT;
      memset(&hs, 0, sizeof hs);
      int rc2 = tpl_set_execute(set, "main", vals, a, &o, &out2, &err);
      if (rc2 == 0 && (out2.len != out.len || (out.len && memcmp(out.data, out2.data, out.len) != 0))) abort();
      buf_free(&out2);
    }
  }
done:
  buf_free(&out);
  buf_free(&err);
  tpl_set_free(set);
  tpl_arena_free(a);
  tpl_funcs_free(funcs);
  return 0;
}

#ifdef FUZZ_STANDALONE
/* Replays files (or stdin) through the target: for builds without libFuzzer
 * and for AFL-style drivers. */
static int replay(FILE *f) {
  size_t cap = 1 << 16, n = 0;
  uint8_t *b = malloc(cap);
  if (!b) return 1;
  size_t r;
  while ((r = fread(b + n, 1, cap - n, f)) > 0) {
    n += r;
    if (n == cap) {
      uint8_t *nb = realloc(b, cap * 2);
      if (!nb) break;
      b = nb;
      cap *= 2;
    }
  }
  LLVMFuzzerTestOneInput(b, n);
  free(b);
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) return replay(stdin);
  for (int i = 1; i < argc; i++) {
    FILE *f = fopen(argv[i], "rb");
    if (!f) {
      perror(argv[i]);
      return 1;
    }
    replay(f);
    fclose(f);
  }
  printf("replayed %d inputs\n", argc - 1);
  return 0;
}
#endif
