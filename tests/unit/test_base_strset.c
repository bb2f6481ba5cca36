/* The set of texts (base/strset): a text is found again after any number of others were added
 * (the table grows), texts that are prefixes of one another or differ only in their last byte are
 * told apart, an empty entry left unfilled stays absent, and counts are right. */
#include "base/strset.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "t.h"

int main(void) {
  strset_t s = STRSET_INIT;
  static char copies[5000][16];
  const char *stored[5000];
  for (int i = 0; i < 5000; i++) {
    char k[16];
    int n = snprintf(k, sizeof k, "key-%d", i);
    strset_entry_t *e = strset_get(&s, k, (size_t)n);
    CHECK(e != NULL && e->p == NULL);
    memcpy(copies[i], k, (size_t)n + 1);
    strset_fill(&s, e, copies[i], (size_t)n);
    stored[i] = copies[i];
  }
  CHECK(s.n == 5000);
  int found = 0;
  for (int i = 0; i < 5000; i++) {
    char k[16];
    int n = snprintf(k, sizeof k, "key-%d", i);
    strset_entry_t *e = strset_get(&s, k, (size_t)n);
    if (e && e->p == stored[i] && e->n == (size_t)n) found++;
  }
  CHECK(found == 5000);
  /* "key-1" is a prefix of "key-10": looked up by length too */
  strset_entry_t *e = strset_get(&s, "key-10", 5);
  CHECK(e && e->p == stored[1]);
  e = strset_get(&s, "key-", 4);
  CHECK(e && e->p == NULL); /* not there; left unfilled */
  e = strset_get(&s, "key-", 4);
  CHECK(e && e->p == NULL);
  CHECK(s.n == 5000);
  e = strset_get(&s, "", 0);
  CHECK(e && e->p == NULL);
  strset_fill(&s, e, "", 0);
  CHECK(strset_get(&s, "", 0)->p != NULL && s.n == 5001);
  strset_free(&s);
  CHECK(s.slot == NULL && s.n == 0);
  return t_done();
}
