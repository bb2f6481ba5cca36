/* Label selector syntax (watch/selector.h): what the API server accepts is accepted, the rest is
 * refused with the character where it went wrong. e2e.sharding asks the real API server about a
 * list of these too. */
#include "t.h"
#include "watch/selector.h"
#include <stdlib.h>

static void accepts(const char *s) {
  buf_t err = BUF_INIT;
  int rc = kube_label_selector_check(s, &err);
  if (rc) fprintf(stderr, "refused \"%s\": %s\n", s, err.data ? err.data : "");
  CHECK_EQ_INT(rc, 0);
  buf_free(&err);
}

static void refuses(const char *s, const char *want) {
  buf_t err = BUF_INIT;
  CHECK_EQ_INT(kube_label_selector_check(s, &err), -22);
  CHECK_EQ_STR(err.data, want);
  buf_free(&err);
}

int main(void) {
  accepts("");
  accepts("   ");
  accepts("sharding.fluxcd.io/key");
  accepts("!sharding.fluxcd.io/key");
  accepts("sharding.fluxcd.io/key in (shard1)");
  accepts("sharding.fluxcd.io/key in (shard1, shard2)");
  accepts("sharding.fluxcd.io/key notin (shard1,shard2),app=web");
  accepts("a=b,c==d,e!=f,g");
  accepts("tier=");                 /* the empty value */
  accepts("tier==");
  accepts("tier in (a,)");          /* an empty value in a list */
  accepts("x>1,y<-3");
  accepts("k in ()");               /* the API server takes an empty list */
  accepts("A_b.c-D=V_1.x-Y");
  accepts(" a = b , ! c ");

  refuses("sharding.fluxcd.io/key in shard1", "at character 27: \"in\" needs a list of values in parentheses");
  refuses("k notin (a", "at character 9: the '(' is not closed");
  refuses("k in (a b)", "at character 9: expected ',' or ')' in the list of values");
  refuses("a=b,", "at character 5: a ',' must be followed by a requirement");
  refuses(",a", "at character 1: expected a key");
  refuses("a=b c", "at character 5: expected ',' or the end after a requirement");
  refuses("!", "at character 2: '!' must be followed by a key");
  refuses("!a=b", "at character 3: expected ',' or the end after \"!key\"");
  refuses("a/b/c", "at character 1: a key has at most one '/' (prefix/name)");
  refuses("Bad.Prefix/k", "at character 1: a key's prefix must be a DNS subdomain (lowercase letters, digits, '-' "
                          "and '.', at most 253 characters)");
  refuses("-a=b", "at character 1: a key's name must be letters, digits, '-', '_' and '.', beginning and ending "
                  "with a letter or digit");
  refuses("a=-b", "at character 3: a value must be empty or letters, digits, '-', '_' and '.', beginning and "
                  "ending with a letter or digit");
  refuses("x>a", "at character 3: '<' and '>' need an integer value");
  refuses("in=x", "at character 1: expected a key");
  refuses("a=(b)", "at character 3: expected a value");
  refuses("a b", "at character 3: expected '=', '==', '!=', 'in', 'notin', '<', '>', ',' or the end after a key");
  char *lng = malloc(KUBE_SELECTOR_MAX + 2);
  if (lng) {
    memset(lng, 'a', KUBE_SELECTOR_MAX + 1);
    lng[KUBE_SELECTOR_MAX + 1] = 0;
    refuses(lng, "longer than 4096 characters");
    free(lng);
  }
  char key[80];
  memset(key, 'k', 64);
  key[64] = 0;
  refuses(key, "at character 1: a key's name must be at most 63 characters");
  return t_done();
}
