/* Property tests of Sprig's random functions (outputs differ per run, so the
 * oracle cannot compare them): lengths, alphabets, UUID v4 format, base64
 * lengths, shuffle being a permutation, and that two draws differ. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "helm/template/helm_funcs.h"
#include "helm/template/sprig.h"
#include "helm/template/tpl.h"
#include "t.h"
#include "t_render.h"

static char *render(const char *text) { return t_render_text(text, 0); }

static int all_in(const char *s, const char *alphabet) {
  for (; *s; s++)
    if (!strchr(alphabet, *s)) return 0;
  return 1;
}

static void check_uuid(const char *u) {
  CHECK(u && strlen(u) == 36);
  if (!u || strlen(u) != 36) return;
  for (int i = 0; i < 36; i++) {
    if (i == 8 || i == 13 || i == 18 || i == 23) CHECK(u[i] == '-');
    else CHECK(strchr("0123456789abcdef", u[i]) != NULL);
  }
  CHECK(u[14] == '4');
  CHECK(strchr("89ab", u[19]) != NULL);
}

int main(void) {
  static const char alpha[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  for (int n = 0; n < 70; n += 7) {
    char t[128];
    snprintf(t, sizeof t, "{{ randAlphaNum %d }}", n);
    char *s = render(t);
    CHECK(s && (int)strlen(s) == n);
    if (s) CHECK(all_in(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"));
    free(s);
    snprintf(t, sizeof t, "{{ randAlpha %d }}", n);
    s = render(t);
    CHECK(s && (int)strlen(s) == n && all_in(s, alpha));
    free(s);
    snprintf(t, sizeof t, "{{ randNumeric %d }}", n);
    s = render(t);
    CHECK(s && (int)strlen(s) == n && all_in(s, "0123456789"));
    free(s);
    snprintf(t, sizeof t, "{{ randAscii %d }}", n);
    s = render(t);
    CHECK(s && (int)strlen(s) == n);
    for (char *p = s; p && *p; p++) CHECK(*p >= 32 && *p <= 126);
    free(s);
    snprintf(t, sizeof t, "{{ randBytes %d }}", n);
    s = render(t);
    CHECK(s && (int)strlen(s) == (n + 2) / 3 * 4);
    free(s);
  }
  char *neg = render("{{ randAlphaNum -1 }}");
  CHECK_EQ_STR(neg, "");
  free(neg);
  /* Two 32-character draws are (overwhelmingly likely) different. */
  char *a = render("{{ randAlphaNum 32 }}"), *b = render("{{ randAlphaNum 32 }}");
  CHECK(a && b && strcmp(a, b) != 0);
  free(a);
  free(b);
  for (int i = 0; i < 50; i++) {
    char *u = render("{{ uuidv4 }}");
    check_uuid(u);
    free(u);
  }
  char *u1 = render("{{ uuidv4 }}"), *u2 = render("{{ uuidv4 }}");
  CHECK(u1 && u2 && strcmp(u1, u2) != 0);
  free(u1);
  free(u2);
  /* shuffle is a permutation of the runes */
  char *sh = render("{{ shuffle \"héllo wörld\" }}");
  CHECK(sh && strlen(sh) == strlen("héllo wörld"));
  if (sh) {
    int counts[256] = {0};
    for (const unsigned char *p = (const unsigned char *)"héllo wörld"; *p; p++) counts[*p]++;
    for (const unsigned char *p = (const unsigned char *)sh; *p; p++) counts[*p]--;
    int ok = 1;
    for (int i = 0; i < 256; i++) ok &= counts[i] == 0;
    CHECK(ok);
  }
  free(sh);
  char *e = render("{{ shuffle \"\" }}");
  CHECK_EQ_STR(e, "");
  free(e);
  return t_done();
}
