/* The cJSON pool of one-shot commands (base/cjpool): trees built, copied, parsed, printed and
 * freed through it give the same results as with malloc; strings that code allocates with malloc
 * and puts into nodes are freed by free; a tree freed as a whole gives its chunks back for reuse;
 * big blocks bypass the chunks. Under AddressSanitizer the pool is not installed (these checks
 * then run on malloc, which is what the sanitizer should see). */
#define _GNU_SOURCE
#include "base/cjpool.h"
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include "t.h"

static cJSON *build(int n) {
  cJSON *root = cJSON_CreateObject();
  for (int i = 0; i < n; i++) {
    char k[32];
    snprintf(k, sizeof k, "key-%05d", i);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", k);
    cJSON_AddNumberToObject(o, "n", i);
    cJSON *l = cJSON_AddArrayToObject(o, "list");
    for (int j = 0; j < 3; j++) cJSON_AddItemToArray(l, cJSON_CreateNumber(i * 3 + j));
    cJSON_AddItemToObject(root, k, o);
  }
  return root;
}

int main(void) {
  cjpool_install();
  cjpool_install(); /* twice: no effect */

  cJSON *a = build(5000);
  CHECK(a != NULL);
  char *text = cJSON_PrintUnformatted(a);
  CHECK(text != NULL);
  cJSON *b = cJSON_Parse(text);
  CHECK(cJSON_Compare(a, b, 1));
  cJSON *c = cJSON_Duplicate(a, 1);
  CHECK(cJSON_Compare(a, c, 1));
  cJSON_free(text);

  /* strings from malloc put into nodes, freed with them */
  cJSON *s = cJSON_CreateNull();
  s->type = cJSON_String;
  s->valuestring = strdup("from malloc");
  s->string = strdup("key from malloc");
  cJSON_AddItemToObject(c, "extra", cJSON_CreateString("x")); /* the key is copied by cJSON */
  cJSON_AddItemToArray(c, s);
  CHECK_EQ_STR(cJSON_GetObjectItemCaseSensitive(c, "key from malloc")->valuestring, "from malloc");

  /* a big string goes to malloc and back */
  size_t big = 1 << 20;
  char *bs = malloc(big + 1);
  memset(bs, 'z', big);
  bs[big] = 0;
  cJSON *bn = cJSON_CreateString(bs);
  CHECK(bn && strlen(bn->valuestring) == big);
  cJSON_Delete(bn);
  free(bs);

  size_t held = cjpool_chunks();
  cJSON_Delete(a);
  cJSON_Delete(b);
  cJSON_Delete(c);
  /* everything freed: the chunks are kept for reuse or given back, not more are taken */
  cJSON *d = build(5000);
  CHECK(cjpool_chunks() <= held);
  cJSON_Delete(d);

  /* a block freed alone while its chunk lives is not reused, but the chunk is freed with the rest */
  for (int round = 0; round < 50; round++) {
    cJSON *t = build(200);
    cJSON *one = cJSON_DetachItemFromObject(t, "key-00007");
    cJSON_Delete(t);
    CHECK_EQ_STR(cJSON_GetObjectItemCaseSensitive(one, "name")->valuestring, "key-00007");
    cJSON_Delete(one);
  }
  CHECK(cjpool_chunks() <= held + 2);
  return t_done();
}
