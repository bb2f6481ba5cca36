#include "watch/tls.h"
#include "watch/internal.h"
#include "base/log.h"
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <uv.h>
#include <mbedtls/asn1.h>
#include <mbedtls/error.h>
#include <mbedtls/oid.h>

#define TLS__SYSTEM_CA "/etc/ssl/certs/ca-certificates.crt"

/* mbedTLS wants the terminating NUL counted for PEM and not for DER. */
static size_t tls__len(const char *p, size_t n) { return strstr(p, "-----BEGIN") ? n + 1 : n; }

static void tls__errf(char **errmsg, int r, const char *what) {
  char e[160];
  mbedtls_strerror(r, e, sizeof e);
  watch__errf(errmsg, "%s: %s", what, e);
}

void watch_tls_conf_free(watch_tls_conf_t *t) {
  mbedtls_ssl_config_free(&t->conf);
  mbedtls_x509_crt_free(&t->ca);
  mbedtls_x509_crt_free(&t->cert);
  mbedtls_pk_free(&t->key);
  mbedtls_ctr_drbg_free(&t->drbg);
  mbedtls_entropy_free(&t->entropy);
  free(t->verify_name);
  free(t->ip_text);
  t->verify_name = t->ip_text = NULL;
}

int watch_tls_conf_init(watch_tls_conf_t *t, const kube_config_t *cfg, char **errmsg) {
  int r;
  memset(t, 0, sizeof *t);
  mbedtls_ssl_config_init(&t->conf);
  mbedtls_x509_crt_init(&t->ca);
  mbedtls_x509_crt_init(&t->cert);
  mbedtls_pk_init(&t->key);
  mbedtls_entropy_init(&t->entropy);
  mbedtls_ctr_drbg_init(&t->drbg);
  static const char pers[] = "rudder-kube-client";
  if ((r = mbedtls_ctr_drbg_seed(&t->drbg, mbedtls_entropy_func, &t->entropy, (const unsigned char *)pers,
                                 sizeof pers - 1))) {
    tls__errf(errmsg, r, "TLS: seeding the random generator failed");
    goto fail;
  }
  if ((r = mbedtls_ssl_config_defaults(&t->conf, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                       MBEDTLS_SSL_PRESET_DEFAULT))) {
    tls__errf(errmsg, r, "TLS: configuration defaults failed");
    goto fail;
  }
#if MBEDTLS_VERSION_MAJOR >= 3
  mbedtls_ssl_conf_min_tls_version(&t->conf, MBEDTLS_SSL_VERSION_TLS1_2);
#else
  mbedtls_ssl_conf_min_version(&t->conf, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
#endif
  mbedtls_ssl_conf_rng(&t->conf, mbedtls_ctr_drbg_random, &t->drbg);
  /* Offer only HTTP/1.1 so that an h2-capable apiserver does not switch protocols. */
  static const char *alpn[] = {"http/1.1", NULL};
  mbedtls_ssl_conf_alpn_protocols(&t->conf, alpn);

  t->insecure = cfg->insecure_skip_tls_verify;
  if (cfg->ca_pem) {
    if ((r = mbedtls_x509_crt_parse(&t->ca, (const unsigned char *)cfg->ca_pem, tls__len(cfg->ca_pem, cfg->ca_pem_len)))) {
      /* A positive r counts certificates that failed among others that parsed. */
      tls__errf(errmsg, r < 0 ? r : MBEDTLS_ERR_X509_INVALID_FORMAT, "TLS: cannot parse the certificate authority data");
      goto fail;
    }
  } else if (!t->insecure && mbedtls_x509_crt_parse_file(&t->ca, TLS__SYSTEM_CA) < 0) {
    watch__errf(errmsg, "TLS: no certificate authority given for %s and the system bundle %s is unusable",
                cfg->server ? cfg->server : "the server", TLS__SYSTEM_CA);
    r = UV_EINVAL;
    goto fail;
  }
  if (t->insecure) {
    LOG_W("TLS certificate verification is disabled (insecure-skip-tls-verify); the server is not authenticated",
          "server", cfg->server ? cfg->server : "");
    mbedtls_ssl_conf_authmode(&t->conf, MBEDTLS_SSL_VERIFY_NONE);
  } else {
    mbedtls_ssl_conf_authmode(&t->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
    mbedtls_ssl_conf_ca_chain(&t->conf, &t->ca, NULL);
  }
  if (cfg->cert_pem && cfg->key_pem) {
    if ((r = mbedtls_x509_crt_parse(&t->cert, (const unsigned char *)cfg->cert_pem,
                                    tls__len(cfg->cert_pem, cfg->cert_pem_len)))) {
      tls__errf(errmsg, r < 0 ? r : MBEDTLS_ERR_X509_INVALID_FORMAT, "TLS: cannot parse the client certificate");
      goto fail;
    }
#if MBEDTLS_VERSION_MAJOR >= 3
    r = mbedtls_pk_parse_key(&t->key, (const unsigned char *)cfg->key_pem, tls__len(cfg->key_pem, cfg->key_pem_len),
                             NULL, 0, mbedtls_ctr_drbg_random, &t->drbg);
#else
    r = mbedtls_pk_parse_key(&t->key, (const unsigned char *)cfg->key_pem, tls__len(cfg->key_pem, cfg->key_pem_len),
                             NULL, 0);
#endif
    if (r) {
      tls__errf(errmsg, r, "TLS: cannot parse the client key");
      goto fail;
    }
    if ((r = mbedtls_ssl_conf_own_cert(&t->conf, &t->cert, &t->key))) {
      tls__errf(errmsg, r, "TLS: the client certificate and key do not go together");
      goto fail;
    }
  }
  const char *name = cfg->tls_server_name ? cfg->tls_server_name : cfg->host;
  if (!name) {
    watch__errf(errmsg, "TLS: no server host");
    r = UV_EINVAL;
    goto fail;
  }
  /* mbedTLS 2.x matches only DNS names, so IP literals are checked against iPAddress SANs here. */
  if (inet_pton(AF_INET, name, t->ip) == 1) t->ip_len = 4;
  else if (inet_pton(AF_INET6, name, t->ip) == 1) t->ip_len = 16;
  if (t->ip_len) r = (t->ip_text = strdup(name)) ? 0 : UV_ENOMEM;
  else r = (t->verify_name = strdup(name)) ? 0 : UV_ENOMEM;
  if (r) goto fail;
  return 0;
fail:
  watch_tls_conf_free(t);
  return r < 0 ? r : UV_EINVAL;
}

/* Returns 1 when the certificate's subjectAltName lists ip (walking the DER, since mbedTLS 2.x
 * does not keep iPAddress entries). */
static int tls__cert_has_ip(const mbedtls_x509_crt *crt, const unsigned char *ip, size_t ip_len) {
  unsigned char *p = crt->raw.p, *end = p + crt->raw.len;
  size_t len;
  if (mbedtls_asn1_get_tag(&p, end, &len, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE)) return 0;
  end = p + len;
  if (mbedtls_asn1_get_tag(&p, end, &len, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE)) return 0;
  unsigned char *tbs_end = p + len;
  while (p < tbs_end) {
    unsigned char tag = *p++;
    if (mbedtls_asn1_get_len(&p, tbs_end, &len)) return 0;
    unsigned char *next = p + len;
    if (tag == (MBEDTLS_ASN1_CONTEXT_SPECIFIC | MBEDTLS_ASN1_CONSTRUCTED | 3)) {
      unsigned char *e_end;
      if (mbedtls_asn1_get_tag(&p, next, &len, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE)) return 0;
      e_end = p + len;
      while (p < e_end) {
        if (mbedtls_asn1_get_tag(&p, e_end, &len, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE)) return 0;
        unsigned char *ext_end = p + len;
        size_t olen;
        if (mbedtls_asn1_get_tag(&p, ext_end, &olen, MBEDTLS_ASN1_OID)) return 0;
        int is_san = olen == MBEDTLS_OID_SIZE(MBEDTLS_OID_SUBJECT_ALT_NAME) &&
                     memcmp(p, MBEDTLS_OID_SUBJECT_ALT_NAME, olen) == 0;
        p += olen;
        if (is_san) {
          if (p < ext_end && *p == MBEDTLS_ASN1_BOOLEAN) {
            int crit;
            if (mbedtls_asn1_get_bool(&p, ext_end, &crit)) return 0;
          }
          if (mbedtls_asn1_get_tag(&p, ext_end, &len, MBEDTLS_ASN1_OCTET_STRING)) return 0;
          if (mbedtls_asn1_get_tag(&p, ext_end, &len, MBEDTLS_ASN1_CONSTRUCTED | MBEDTLS_ASN1_SEQUENCE)) return 0;
          unsigned char *names_end = p + len;
          while (p < names_end) {
            unsigned char t = *p++;
            if (mbedtls_asn1_get_len(&p, names_end, &len)) return 0;
            if (t == (MBEDTLS_ASN1_CONTEXT_SPECIFIC | 7) && len == ip_len && memcmp(p, ip, ip_len) == 0) return 1;
            p += len;
          }
          return 0;
        }
        p = ext_end;
      }
      return 0;
    }
    p = next;
  }
  return 0;
}

static int tls__verify(void *ctx, mbedtls_x509_crt *crt, int depth, uint32_t *flags) {
  watch_tls_t *s = ctx;
  if (depth == 0 && s->conf->ip_len && !tls__cert_has_ip(crt, s->conf->ip, s->conf->ip_len)) {
    s->ip_mismatch = 1;
    *flags |= MBEDTLS_X509_BADCERT_CN_MISMATCH;
  }
  return 0;
}

static int tls__send(void *ctx, const unsigned char *p, size_t n) {
  watch_tls_t *s = ctx;
  /* Buffered, never partial: the caller flushes `out` to the transport. */
  if (buf_append(&s->out, p, n)) return MBEDTLS_ERR_SSL_ALLOC_FAILED;
  return (int)n;
}

static int tls__recv(void *ctx, unsigned char *p, size_t n) {
  watch_tls_t *s = ctx;
  size_t avail = s->in.len - s->in_off;
  if (!avail) return MBEDTLS_ERR_SSL_WANT_READ;
  if (n > avail) n = avail;
  memcpy(p, s->in.data + s->in_off, n);
  s->in_off += n;
  if (s->in_off == s->in.len) { buf_reset(&s->in); s->in_off = 0; }
  return (int)n;
}

int watch_tls_init(watch_tls_t *s, watch_tls_conf_t *conf) {
  memset(s, 0, sizeof *s);
  s->conf = conf;
  mbedtls_ssl_init(&s->ssl);
  int r = mbedtls_ssl_setup(&s->ssl, &conf->conf);
  /* For IP literals no SNI is sent (RFC 6066) and the name check is ours. */
  if (!r) r = mbedtls_ssl_set_hostname(&s->ssl, conf->verify_name);
  if (r) {
    mbedtls_ssl_free(&s->ssl);
    return r == MBEDTLS_ERR_SSL_ALLOC_FAILED ? UV_ENOMEM : r;
  }
  if (!conf->insecure) mbedtls_ssl_set_verify(&s->ssl, tls__verify, s);
  mbedtls_ssl_set_bio(&s->ssl, s, tls__send, tls__recv, NULL);
  return 0;
}

void watch_tls_free(watch_tls_t *s) {
  mbedtls_ssl_free(&s->ssl);
  buf_free(&s->in);
  buf_free(&s->out);
}

int watch_tls_push(watch_tls_t *s, const char *p, size_t n) {
  /* Drop what mbedTLS has consumed before growing. */
  if (s->in_off && s->in_off == s->in.len) { buf_reset(&s->in); s->in_off = 0; }
  else if (s->in_off > 65536) { buf_consume(&s->in, s->in_off); s->in_off = 0; }
  return buf_append(&s->in, p, n) ? UV_ENOMEM : 0;
}

int watch_tls_handshake(watch_tls_t *s) {
  int r = mbedtls_ssl_handshake(&s->ssl);
  if (r == MBEDTLS_ERR_SSL_WANT_READ || r == MBEDTLS_ERR_SSL_WANT_WRITE) return 1;
  return r;
}

int watch_tls_read(watch_tls_t *s, char *p, size_t n) {
  int r = mbedtls_ssl_read(&s->ssl, (unsigned char *)p, n);
  if (r > 0) return r;
  if (r == MBEDTLS_ERR_SSL_WANT_READ || r == MBEDTLS_ERR_SSL_WANT_WRITE) return 0;
#ifdef MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET
  if (r == MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET) return 0;
#endif
  if (r == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY || r == 0) return UV_EOF;
  return r;
}

int watch_tls_write(watch_tls_t *s, const char *p, size_t n) {
  while (n) {
    int r = mbedtls_ssl_write(&s->ssl, (const unsigned char *)p, n);
    if (r < 0) return r == MBEDTLS_ERR_SSL_ALLOC_FAILED ? UV_ENOMEM : r;
    p += r;
    n -= (size_t)r;
  }
  return 0;
}

void watch_tls_describe(watch_tls_t *s, int err, buf_t *msg) {
  if (err == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED) {
    uint32_t flags = mbedtls_ssl_get_verify_result(&s->ssl);
    if (s->ip_mismatch) {
      buf_printf(msg, "server certificate is not valid for IP %s (no matching IP address in subjectAltName)",
                 s->conf->ip_text);
      flags &= ~(uint32_t)MBEDTLS_X509_BADCERT_CN_MISMATCH;
    } else if (flags & MBEDTLS_X509_BADCERT_CN_MISMATCH) {
      buf_printf(msg, "server certificate is not valid for host name %s", s->conf->verify_name);
      flags &= ~(uint32_t)MBEDTLS_X509_BADCERT_CN_MISMATCH;
    } else {
      buf_puts(msg, "server certificate verification failed");
    }
    if (flags) {
      char info[512];
      int n = mbedtls_x509_crt_verify_info(info, sizeof info, "", flags);
      /* verify_info separates reasons with newlines. */
      for (int i = 0; i < n && info[i]; i++) if (info[i] == '\n') info[i] = ';';
      while (n > 0 && (info[n - 1] == ';' || info[n - 1] == ' ')) info[--n] = 0;
      if (n > 0) buf_printf(msg, ": %s", info);
    }
    return;
  }
  char e[200];
  mbedtls_strerror(err, e, sizeof e);
  buf_puts(msg, e);
}
