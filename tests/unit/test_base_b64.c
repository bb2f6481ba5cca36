#include "base/b64.h"
#include <errno.h>
#include <stdlib.h>
#include "t.h"

static void roundtrip(const char *in, const char *want) {
  char *enc;
  size_t elen;
  CHECK_EQ_INT(b64_encode_alloc(in, strlen(in), &enc, &elen), 0);
  CHECK_EQ_STR(enc, want);
  CHECK_EQ_INT(elen, strlen(want));
  unsigned char *dec;
  size_t dlen;
  CHECK_EQ_INT(b64_decode_alloc(enc, elen, &dec, &dlen, NULL, 0), 0);
  CHECK_EQ_INT(dlen, strlen(in));
  CHECK(memcmp(dec, in, dlen) == 0);
  free(enc);
  free(dec);
}

static void bad(const char *in, const char *what) {
  unsigned char *dec = NULL;
  size_t dlen;
  char err[128] = "";
  CHECK_EQ_INT(b64_decode_alloc(in, strlen(in), &dec, &dlen, err, sizeof err), -EINVAL);
  CHECK(dec == NULL);
  CHECK(strstr(err, what) != NULL);
}

int main(void) {
  /* RFC 4648 test vectors */
  roundtrip("", "");
  roundtrip("f", "Zg==");
  roundtrip("fo", "Zm8=");
  roundtrip("foo", "Zm9v");
  roundtrip("foob", "Zm9vYg==");
  roundtrip("fooba", "Zm9vYmE=");
  roundtrip("foobar", "Zm9vYmFy");
  roundtrip("\xff\xfe\xfd?>", "//79Pz4=");

  /* binary with NUL */
  const unsigned char bin[] = {0, 1, 2, 0xff, 0};
  char out[16];
  CHECK_EQ_INT(b64_encode(bin, sizeof bin, out), 8);
  CHECK_EQ_STR(out, "AAEC/wA=");

  /* Go's decoder skips CR and LF */
  unsigned char *dec;
  size_t dlen;
  CHECK_EQ_INT(b64_decode_alloc("Zm9v\r\nYmFy\n", 11, &dec, &dlen, NULL, 0), 0);
  CHECK_EQ_INT(dlen, 6);
  CHECK(memcmp(dec, "foobar", 6) == 0);
  free(dec);

  bad("Zm9v!", "byte 4");
  bad("Zg=", "illegal");      /* incomplete padding */
  bad("Zg", "illegal");       /* missing padding */
  bad("Z===", "illegal");     /* too much padding */
  bad("Zg==Zg==", "illegal"); /* data after padding */
  bad("Zm9v-_==", "byte 4");  /* URL alphabet is not standard */
  bad("Zm 9v", "byte 2");
  return t_done();
}
