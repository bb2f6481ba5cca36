/* The text pool: one copy per distinct text however often it is held, freed with its last hold;
 * its byte count follows every hold and release; many texts grow the table. */
#include "t.h"
#include "base/textpool.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A block as glibc holds it (the request and 8, rounded up to 16, at least 32). */
static size_t block(size_t n) {
  size_t b = (n + 8 + 15) & ~(size_t)15;
  return b < 32 ? 32 : b;
}

int main(void) {
  textpool_t tp = TEXTPOOL_INIT;
  CHECK_EQ_INT(tp.bytes, 0);
  /* The text need not be NUL-terminated: only n bytes are read, and the copy ends with a NUL. */
  const char src[] = "{\"templates\":{\"a\":\"x\"}}TRAILING";
  size_t n = strlen(src) - strlen("TRAILING");
  const char *a = textpool_hold(&tp, src, n);
  CHECK(a != NULL && a != src);
  CHECK_EQ_STR(a, "{\"templates\":{\"a\":\"x\"}}");
  CHECK_EQ_INT(textpool_refs(a), 1);
  CHECK_EQ_INT(tp.n, 1);
  /* 16 buckets to start with, and one block of a 32-byte header and the text with its NUL. */
  size_t one = tp.bytes;
  CHECK_EQ_INT(tp.nb, 16);
  CHECK_EQ_INT(one, block(16 * sizeof(void *)) + block(32 + n + 1));

  /* The same text from elsewhere: the same copy, held twice, nothing more allocated. */
  char *again = strdup("{\"templates\":{\"a\":\"x\"}}");
  const char *b = textpool_hold(&tp, again, strlen(again));
  free(again);
  CHECK(b == a);
  CHECK_EQ_INT(textpool_refs(a), 2);
  CHECK_EQ_INT(tp.n, 1);
  CHECK_EQ_INT(tp.bytes, one);

  /* A different text (a prefix of the first, and one of the same length) is a copy of its own. */
  const char *c = textpool_hold(&tp, src, n - 1);
  const char *d = textpool_hold(&tp, "{\"templates\":{\"a\":\"y\"}}", n);
  CHECK(c != a && d != a && c != d);
  CHECK_EQ_INT(strlen(c), n - 1);
  CHECK_EQ_STR(d, "{\"templates\":{\"a\":\"y\"}}");
  CHECK_EQ_INT(tp.n, 3);
  CHECK_EQ_INT(textpool_refs(c), 1);
  size_t three = tp.bytes;
  CHECK_EQ_INT(three, one + block(32 + n) + block(32 + n + 1));
  textpool_release(&tp, d);
  CHECK_EQ_INT(tp.n, 2);
  CHECK_EQ_INT(three - tp.bytes, block(32 + n + 1));

  /* Releases: the copy stays while it is held, and goes with the last hold. */
  textpool_release(&tp, a);
  CHECK_EQ_INT(textpool_refs(b), 1);
  CHECK_EQ_STR(b, "{\"templates\":{\"a\":\"x\"}}");
  textpool_release(&tp, b);
  textpool_release(&tp, c);
  CHECK_EQ_INT(tp.n, 0);
  textpool_release(&tp, NULL); /* nothing */
  size_t empty = tp.bytes;     /* only the buckets are left */
  CHECK_EQ_INT(empty, block(16 * sizeof(void *)));
  /* Held again after it went: a new copy, counted again. */
  a = textpool_hold(&tp, src, n);
  CHECK_EQ_INT(textpool_refs(a), 1);
  CHECK_EQ_INT(tp.bytes, one);
  textpool_release(&tp, a);
  CHECK_EQ_INT(tp.bytes, empty);

  /* Many texts: the table grows, each stays findable, and all go back to nothing. */
  enum { N = 2000 };
  static const char *held[N];
  char t[64];
  for (int i = 0; i < N; i++) {
    snprintf(t, sizeof t, "text number %d", i);
    held[i] = textpool_hold(&tp, t, strlen(t));
  }
  CHECK_EQ_INT(tp.n, N);
  CHECK(tp.nb >= N);
  int same = 0;
  for (int i = 0; i < N; i++) {
    snprintf(t, sizeof t, "text number %d", i);
    same += textpool_hold(&tp, t, strlen(t)) == held[i] && !strcmp(held[i], t) && textpool_refs(held[i]) == 2;
  }
  CHECK_EQ_INT(same, N);
  CHECK_EQ_INT(tp.n, N);
  for (int i = 0; i < N; i++) textpool_release(&tp, held[i]);
  CHECK_EQ_INT(tp.n, N);
  for (int i = N - 1; i >= 0; i--) textpool_release(&tp, held[i]);
  CHECK_EQ_INT(tp.n, 0);
  CHECK_EQ_INT(tp.bytes, block(tp.nb * sizeof(void *)));

  /* Freeing the pool frees what is still held (the sanitizer build sees a leak otherwise). */
  textpool_hold(&tp, "left", 4);
  textpool_hold(&tp, "left", 4);
  textpool_hold(&tp, "", 0);
  CHECK_EQ_INT(tp.n, 2);
  textpool_free(&tp);
  CHECK(tp.b == NULL && tp.n == 0 && tp.nb == 0 && tp.bytes == 0);
  return t_done();
}
