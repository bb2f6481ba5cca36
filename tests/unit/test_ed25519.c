/* Ed25519 (base/ed25519.c) on the test vectors of RFC 8032 section 7.1 (public key from
 * the secret seed, the exact signature, verification), and verification's refusals:
 * changed messages, signatures and keys, S >= L, non-canonical point encodings. */
#include "base/ed25519.h"

#include <stdlib.h>
#include <string.h>

#include "t.h"

static size_t unhex(const char *h, uint8_t *out, size_t cap) {
  size_t n = strlen(h) / 2;
  if (n > cap) abort();
  for (size_t i = 0; i < n; i++) {
    unsigned v;
    if (sscanf(h + 2 * i, "%2x", &v) != 1) abort();
    out[i] = (uint8_t)v;
  }
  return n;
}

static void tohex(const uint8_t *b, size_t n, char *out) {
  for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", b[i]);
  out[2 * n] = 0;
}

typedef struct {
  const char *name, *secret, *pub, *msg, *sig;
} vector_t;

/* RFC 8032 section 7.1: TEST 1, TEST 2, TEST 3, TEST 1024 and TEST SHA(abc) (the message of
 * the last one is SHA-512("abc")). */
static const vector_t vectors[] = {
    {"TEST 1", "9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60",
     "d75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a", "",
     "e5564300c360ac729086e2cc806e828a84877f1eb8e5d974d873e06522490155"
     "5fb8821590a33bacc61e39701cf9b46bd25bf5f0595bbe24655141438e7a100b"},
    {"TEST 2", "4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb",
     "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c", "72",
     "92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da"
     "085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00"},
    {"TEST 3", "c5aa8df43f9f837bedb7442f31dcb7b166d38535076f094b85ce3a2e0b4458f7",
     "fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025", "af82",
     "6291d657deec24024827e69c3abe01a30ce548a284743a445e3680d7db5ac3ac"
     "18ff9b538d16f290ae67f760984dc6594a7c15e9716ed28dc027beceea1ec40a"},
    {"TEST 1024", "f5e5767cf153319517630f226876b86c8160cc583bc013744c6bf255f5cc0ee5",
     "278117fc144c72340f67d0f2316e8386ceffbf2b2428c9c51fef7c597f1d426e",
    "08b8b2b733424243760fe426a4b54908632110a66c2f6591eabd3345e3e4eb98fa6e264bf09efe12ee50f8f54e9f77b1"
    "e355f6c50544e23fb1433ddf73be84d879de7c0046dc4996d9e773f4bc9efe5738829adb26c81b37c93a1b270b20329d"
    "658675fc6ea534e0810a4432826bf58c941efb65d57a338bbd2e26640f89ffbc1a858efcb8550ee3a5e1998bd177e93a"
    "7363c344fe6b199ee5d02e82d522c4feba15452f80288a821a579116ec6dad2b3b310da903401aa62100ab5d1a36553e"
    "06203b33890cc9b832f79ef80560ccb9a39ce767967ed628c6ad573cb116dbefefd75499da96bd68a8a97b928a8bbc10"
    "3b6621fcde2beca1231d206be6cd9ec7aff6f6c94fcd7204ed3455c68c83f4a41da4af2b74ef5c53f1d8ac70bdcb7ed1"
    "85ce81bd84359d44254d95629e9855a94a7c1958d1f8ada5d0532ed8a5aa3fb2d17ba70eb6248e594e1a2297acbbb39d"
    "502f1a8c6eb6f1ce22b3de1a1f40cc24554119a831a9aad6079cad88425de6bde1a9187ebb6092cf67bf2b13fd65f270"
    "88d78b7e883c8759d2c4f5c65adb7553878ad575f9fad878e80a0c9ba63bcbcc2732e69485bbc9c90bfbd62481d9089b"
    "eccf80cfe2df16a2cf65bd92dd597b0707e0917af48bbb75fed413d238f5555a7a569d80c3414a8d0859dc65a46128ba"
    "b27af87a71314f318c782b23ebfe808b82b0ce26401d2e22f04d83d1255dc51addd3b75a2b1ae0784504df543af8969b"
    "e3ea7082ff7fc9888c144da2af58429ec96031dbcad3dad9af0dcbaaaf268cb8fcffead94f3c7ca495e056a9b47acdb7"
    "51fb73e666c6c655ade8297297d07ad1ba5e43f1bca32301651339e22904cc8c42f58c30c04aafdb038dda0847dd988d"
    "cda6f3bfd15c4b4c4525004aa06eeff8ca61783aacec57fb3d1f92b0fe2fd1a85f6724517b65e614ad6808d6f6ee34df"
    "f7310fdc82aebfd904b01e1dc54b2927094b2db68d6f903b68401adebf5a7e08d78ff4ef5d63653a65040cf9bfd4aca7"
    "984a74d37145986780fc0b16ac451649de6188a7dbdf191f64b5fc5e2ab47b57f7f7276cd419c17a3ca8e1b939ae49e4"
    "88acba6b965610b5480109c8b17b80e1b7b750dfc7598d5d5011fd2dcc5600a32ef5b52a1ecc820e308aa342721aac09"
    "43bf6686b64b2579376504ccc493d97e6aed3fb0f9cd71a43dd497f01f17c0e2cb3797aa2a2f256656168e6c496afc5f"
    "b93246f6b1116398a346f1a641f3b041e989f7914f90cc2c7fff357876e506b50d334ba77c225bc307ba537152f3f161"
    "0e4eafe595f6d9d90d11faa933a15ef1369546868a7f3a45a96768d40fd9d03412c091c6315cf4fde7cb68606937380d"
    "b2eaaa707b4c4185c32eddcdd306705e4dc1ffc872eeee475a64dfac86aba41c0618983f8741c5ef68d3a101e8a3b8ca"
    "c60c905c15fc910840b94c00a0b9d0",
     "0aab4c900501b3e24d7cdf4663326a3a87df5e4843b2cbdb67cbf6e460fec350"
     "aa5371b1508f9f4528ecea23c436d94b5e8fcd4f681e30a6ac00a9704a188a03"},
    {"TEST SHA(abc)", "833fe62409237b9d62ec77587520911e9a759cec1d19755b7da901b96dca3d42",
     "ec172b93ad5e563bf4932c70e1245034c35467ef2efd4d64ebf819683467e2bf",
     "ddaf35a193617abacc417349ae20413112e6fa4e89a97ea20a9eeee64b55d39a"
     "2192992a274fc1a836ba3c23a3feebbd454d4423643ce80e2a9ac94fa54ca49f",
     "dc2a4459e7369633a52b1bf277839a00201009a3efbf3ecb69bea2186c26b589"
     "09351fc9ac90b3ecfdfbc7c66431e0303dca179c138ac17ad9bef1177331a704"},
};

/* L, the order of the base point, little-endian. */
static const uint8_t L_BYTES[32] = {0xed, 0xd3, 0xf5, 0x5c, 0x1a, 0x63, 0x12, 0x58, 0xd6, 0x9c, 0xf7,
                                    0xa2, 0xde, 0xf9, 0xde, 0x14, 0, 0, 0, 0, 0, 0,
                                    0, 0, 0, 0, 0, 0, 0, 0, 0, 0x10};

int main(void) {
  static uint8_t msg[1024];
  for (size_t v = 0; v < sizeof vectors / sizeof vectors[0]; v++) {
    const vector_t *t = &vectors[v];
    uint8_t seed[32], pub[32], sig[64], got_pub[32], got_sig[64];
    char hex[129];
    unhex(t->secret, seed, sizeof seed);
    unhex(t->pub, pub, sizeof pub);
    unhex(t->sig, sig, sizeof sig);
    size_t n = unhex(t->msg, msg, sizeof msg);
    if (v == 3) CHECK_EQ_INT(n, 1023);
    ed25519_public_key(got_pub, seed);
    tohex(got_pub, 32, hex);
    CHECK_EQ_STR(hex, t->pub);
    ed25519_sign(got_sig, msg, n, seed);
    tohex(got_sig, 64, hex);
    CHECK_EQ_STR(hex, t->sig);
    CHECK_EQ_INT(ed25519_verify(sig, msg, n, pub), 0);
    /* every single-bit change of the signature, the message or the key is refused */
    int refused = 0, tries = 0;
    for (int bit = 0; bit < 512; bit += 7, tries++) {
      uint8_t s2[64];
      memcpy(s2, sig, 64);
      s2[bit / 8] ^= (uint8_t)(1 << (bit % 8));
      refused += ed25519_verify(s2, msg, n, pub) != 0;
    }
    CHECK_EQ_INT(refused, tries);
    if (n) {
      msg[n - 1] ^= 1;
      CHECK_EQ_INT(ed25519_verify(sig, msg, n, pub), -1);
      msg[n - 1] ^= 1;
    }
    CHECK_EQ_INT(ed25519_verify(sig, msg, n + 1, pub), -1);
    uint8_t p2[32];
    memcpy(p2, pub, 32);
    p2[0] ^= 2;
    CHECK_EQ_INT(ed25519_verify(sig, msg, n, p2), -1);
    /* S + L is the same value mod L but not canonical: refused (RFC 8032 5.1.7 step 1) */
    uint8_t s3[64];
    memcpy(s3, sig, 64);
    unsigned carry = 0;
    for (int i = 0; i < 32; i++) {
      unsigned x = s3[32 + i] + L_BYTES[i] + carry;
      s3[32 + i] = (uint8_t)x;
      carry = x >> 8;
    }
    CHECK_EQ_INT(ed25519_verify(s3, msg, n, pub), -1);
    /* the swapped keys of two vectors do not verify each other's signatures */
    if (v > 0) {
      uint8_t other[32];
      unhex(vectors[v - 1].pub, other, sizeof other);
      CHECK_EQ_INT(ed25519_verify(sig, msg, n, other), -1);
    }
  }
  /* Non-canonical and invalid public keys: y = p (encodes 0 non-canonically), y = p + 1, and
   * a y with no x on the curve (y = 2: (y^2-1)/(d y^2+1) is not a square). */
  {
    uint8_t seed[32] = {1}, sig[64], bad[32];
    ed25519_sign(sig, "x", 1, seed);
    memset(bad, 0xff, 32);
    bad[0] = 0xed;
    bad[31] = 0x7f;
    CHECK_EQ_INT(ed25519_verify(sig, "x", 1, bad), -1);
    bad[0] = 0xee;
    CHECK_EQ_INT(ed25519_verify(sig, "x", 1, bad), -1);
    memset(bad, 0, 32);
    bad[0] = 2;
    CHECK_EQ_INT(ed25519_verify(sig, "x", 1, bad), -1);
    uint8_t pub[32];
    ed25519_public_key(pub, seed);
    CHECK_EQ_INT(ed25519_verify(sig, "x", 1, pub), 0);
    CHECK_EQ_INT(ed25519_verify(sig, "y", 1, pub), -1);
  }
  /* Sign/verify round trips over many seeds and message lengths (seed and message from a
   * fixed xorshift stream), and signatures are deterministic. */
  {
    uint64_t st = 0x9e3779b97f4a7c15ULL;
    int ok = 0, same = 0, total = 0;
    for (int r = 0; r < 200; r++, total++) {
      uint8_t seed[32], pub[32], sig[64], sig2[64];
      size_t n = (size_t)r * 5 % 300;
      for (size_t i = 0; i < 32 + n; i++) {
        st ^= st << 13, st ^= st >> 7, st ^= st << 17;
        if (i < 32) seed[i] = (uint8_t)st;
        else msg[i - 32] = (uint8_t)st;
      }
      ed25519_public_key(pub, seed);
      ed25519_sign(sig, msg, n, seed);
      ed25519_sign(sig2, msg, n, seed);
      same += memcmp(sig, sig2, 64) == 0;
      ok += ed25519_verify(sig, msg, n, pub) == 0 && (n == 0 || (msg[0] ^= 0x80, ed25519_verify(sig, msg, n, pub) != 0));
    }
    CHECK_EQ_INT(ok, total);
    CHECK_EQ_INT(same, total);
  }
  return t_done();
}
