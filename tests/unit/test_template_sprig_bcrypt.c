/* bcrypt and htpasswd: Blowfish against Schneier's vectors, bcrypt against
 * golang.org/x/crypto's own test vectors (fixed salts), and property tests of
 * the functions (random salts): format, length, distinct salts, the 72-byte
 * limit, htpasswd's username rule, and every hash verified by Go's
 * bcrypt.CompareHashAndPassword through the template oracle's
 * -bcrypt-verify mode (needs Go; fails when it is missing). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "helm/template/blowfish.h"
#include "helm/template/helm_funcs.h"
#include "helm/template/sprig.h"
#include "helm/template/tpl.h"
#include "t.h"
#include "t_oracle.h"
#include "t_render.h"

static char *render(const char *text) { return t_render_text(text, 0); }

/* Decodes bcrypt's base64 (22 characters -> 16 bytes). */
static void salt_decode(const char *s, uint8_t out[16]) {
  static const char al[] = "./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  uint8_t bits[24] = {0};
  for (int i = 0; i < 22; i++) bits[i] = (uint8_t)(strchr(al, s[i]) - al);
  for (int i = 0, o = 0; o < 16; i += 4) {
    uint32_t v = (uint32_t)bits[i] << 18 | (uint32_t)bits[i + 1] << 12 | (uint32_t)bits[i + 2] << 6 | bits[i + 3];
    out[o++] = (uint8_t)(v >> 16);
    if (o < 16) out[o++] = (uint8_t)(v >> 8);
    if (o < 16) out[o++] = (uint8_t)v;
  }
}

static void kat(const char *pw, const char *want) {
  uint8_t salt[16];
  salt_decode(want + 7, salt);
  char got[61];
  CHECK_EQ_INT(bcrypt_hash((const uint8_t *)pw, strlen(pw), 10, salt, got), 0);
  CHECK_EQ_STR(got, want);
}

static int is_b64(char ch) { return ch && strchr("./ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789", ch); }

static int well_formed(const char *h) {
  if (!h || strlen(h) != 60 || strncmp(h, "$2a$10$", 7) != 0) return 0;
  for (int i = 7; i < 60; i++)
    if (!is_b64(h[i])) return 0;
  return 1;
}

int main(void) {
  /* Blowfish: https://www.schneier.com/code/vectors.txt (first entries). */
  static const struct {
    uint8_t key[8], pt[8], ct[8];
  } bf[] = {
      {{0}, {0}, {0x4E, 0xF9, 0x97, 0x45, 0x61, 0x98, 0xDD, 0x78}},
      {{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF},
       {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF},
       {0x51, 0x86, 0x6F, 0xD5, 0xB8, 0x5E, 0xCB, 0x8A}},
      {{0x30, 0, 0, 0, 0, 0, 0, 0}, {0x10, 0, 0, 0, 0, 0, 0, 0x01}, {0x7D, 0x85, 0x6F, 0x9A, 0x61, 0x30, 0x63, 0xF2}},
      {{0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11},
       {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11},
       {0x24, 0x66, 0xDD, 0x87, 0x8B, 0x96, 0x3C, 0x9D}},
      {{0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF},
       {0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11},
       {0x61, 0xF9, 0xC3, 0x80, 0x22, 0x81, 0xB0, 0x96}},
  };
  for (size_t i = 0; i < sizeof bf / sizeof bf[0]; i++) {
    blowfish_t c;
    blowfish_init(&c, bf[i].key, 8);
    uint8_t b[8];
    memcpy(b, bf[i].pt, 8);
    blowfish_encrypt(&c, b);
    CHECK(memcmp(b, bf[i].ct, 8) == 0);
  }
  /* bcrypt: x/crypto/bcrypt's test vectors. */
  kat("allmine", "$2a$10$XajjQvNhvvRt5GSeFk1xFeyqRrsxkhBkUiQeg0dt.wU1qD4aFDcga");
  kat("passw0rd", "$2a$10$LK9XRuhNxHHCvjX3tdkRKei1QiCDUKrJRhZv7WWZPuQGRUM92rOUa");
  char big[80];
  memset(big, 'x', sizeof big);
  char tmp[61];
  uint8_t salt[16] = {0};
  CHECK_EQ_INT(bcrypt_hash((const uint8_t *)big, 73, 10, salt, tmp), -1);
  CHECK_EQ_INT(bcrypt_hash((const uint8_t *)big, 72, 4, salt, tmp), 0);
  CHECK(strncmp(tmp, "$2a$04$", 7) == 0 && strlen(tmp) == 60);

  /* Property tests through the template functions. */
  static const char *pws[] = {"", "secret", "pässwörd ☃", "with space and :colon", "72 bytes xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"};
  char *hashes[16] = {0};
  char *hexpw[16] = {0};
  size_t nh = 0;
  for (size_t i = 0; i < sizeof pws / sizeof pws[0]; i++) {
    char t[512];
    snprintf(t, sizeof t, "{{ bcrypt %s%s%s }}", "\"", pws[i], "\"");
    char *h = render(t);
    CHECK(well_formed(h));
    char *h2 = render(t);
    CHECK(h && h2 && strcmp(h, h2) != 0); /* random salts */
    free(h2);
    hashes[nh] = h;
    hexpw[nh] = malloc(2 * strlen(pws[i]) + 1);
    for (size_t k = 0; k < strlen(pws[i]); k++) sprintf(hexpw[nh] + 2 * k, "%02x", (unsigned char)pws[i][k]);
    hexpw[nh][2 * strlen(pws[i])] = 0;
    nh++;
  }
  char *hp = render("{{ htpasswd \"alice\" \"s3cret\" }}");
  CHECK(hp && strncmp(hp, "alice:", 6) == 0 && well_formed(hp ? hp + 6 : NULL));
  hashes[nh] = hp ? strdup(hp + 6) : NULL;
  hexpw[nh++] = strdup("733363726574");
  free(hp);
  char *bad = render("{{ htpasswd \"a:b\" \"pw\" }}");
  CHECK_EQ_STR(bad, "invalid username: a:b");
  free(bad);
  char *lng = render("{{ bcrypt (repeat 73 \"x\") }}");
  CHECK_EQ_STR(lng, "failed to encrypt string with bcrypt: bcrypt: password length exceeds 72 bytes");
  free(lng);

  /* Verify every hash with Go's bcrypt. */
  char cmd[2048];
  char oracle[1024] = {0};
  if (t_oracle_build(oracle, sizeof oracle)) {
    t_failed++;
  } else {
    char in[] = "/tmp/rudder-bcrypt-XXXXXX";
    int fd = mkstemp(in);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    CHECK(f != NULL);
    if (f) {
      for (size_t i = 0; i < nh; i++) fprintf(f, "%s %s\n", hexpw[i], hashes[i] ? hashes[i] : "none");
      /* A wrong password must not verify (the checker really checks). */
      fprintf(f, "%s %s\n", "77726f6e67", hashes[1] ? hashes[1] : "none");
      fclose(f);
      snprintf(cmd, sizeof cmd, "'%s' -bcrypt-verify < %s", oracle, in);
      FILE *p = popen(cmd, "r");
      char line[512];
      int ok = 0, fails = 0;
      while (p && fgets(line, sizeof line, p)) {
        if (strncmp(line, "ok", 2) == 0) ok++;
        else fails++;
      }
      if (p) pclose(p);
      CHECK_EQ_INT(ok, (long long)nh);
      CHECK_EQ_INT(fails, 1);
      unlink(in);
    }
  }
  for (size_t i = 0; i < nh; i++) {
    free(hashes[i]);
    free(hexpw[i]);
  }
  return t_done();
}
