#include "watch/tls.h"
#include "watch/internal.h"
#include "base/log.h"
#include <arpa/inet.h>
#include <stdlib.h>
#include <pthread.h>
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

/* The system bundle is parsed once per process and shared, read-only, by every configuration that
 * trusts it (a parsed bundle of ~150 certificates is a few hundred KiB; one per origin added up). */
static struct {
  pthread_mutex_t mu;
  int refs;
  mbedtls_x509_crt crt;
} tls__system = {.mu = PTHREAD_MUTEX_INITIALIZER};

static mbedtls_x509_crt *tls__system_ref(void) {
  mbedtls_x509_crt *c = NULL;
  pthread_mutex_lock(&tls__system.mu);
  if (!tls__system.refs) {
    mbedtls_x509_crt_init(&tls__system.crt);
    if (mbedtls_x509_crt_parse_file(&tls__system.crt, TLS__SYSTEM_CA) < 0) mbedtls_x509_crt_free(&tls__system.crt);
    else tls__system.refs = 1;
  } else {
    tls__system.refs++;
  }
  if (tls__system.refs) c = &tls__system.crt;
  pthread_mutex_unlock(&tls__system.mu);
  return c;
}

static void tls__system_unref(void) {
  pthread_mutex_lock(&tls__system.mu);
  if (tls__system.refs && !--tls__system.refs) mbedtls_x509_crt_free(&tls__system.crt);
  pthread_mutex_unlock(&tls__system.mu);
}

void watch_tls_conf_free(watch_tls_conf_t *t) {
  mbedtls_ssl_session_free(&t->saved);
  t->have_saved = 0;
  mbedtls_ssl_config_free(&t->conf);
  if (t->system_ca) tls__system_unref();
  t->system_ca = 0;
  mbedtls_x509_crt_free(&t->ca);
  mbedtls_x509_crt_free(&t->cert);
  mbedtls_pk_free(&t->key);
  mbedtls_ctr_drbg_free(&t->drbg);
  mbedtls_entropy_free(&t->entropy);
  free(t->verify_name);
  free(t->ip_text);
  t->verify_name = t->ip_text = NULL;
}

static void tls__conf_zero(watch_tls_conf_t *t) {
  memset(t, 0, sizeof *t);
  mbedtls_ssl_session_init(&t->saved);
  mbedtls_ssl_config_init(&t->conf);
  mbedtls_x509_crt_init(&t->ca);
  mbedtls_x509_crt_init(&t->cert);
  mbedtls_pk_init(&t->key);
  mbedtls_entropy_init(&t->entropy);
  mbedtls_ctr_drbg_init(&t->drbg);
}

/* The client-side SSL settings every configuration shares: TLS 1.2 or later, HTTP/1.1 only, and
 * verification against ca unless t->insecure. */
static int tls__ssl_conf(watch_tls_conf_t *t, mbedtls_x509_crt *ca, mbedtls_ctr_drbg_context *drbg, char **errmsg) {
  int r;
  if ((r = mbedtls_ssl_config_defaults(&t->conf, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                       MBEDTLS_SSL_PRESET_DEFAULT))) {
    tls__errf(errmsg, r, "TLS: configuration defaults failed");
    return r;
  }
#if MBEDTLS_VERSION_MAJOR >= 3
  mbedtls_ssl_conf_min_tls_version(&t->conf, MBEDTLS_SSL_VERSION_TLS1_2);
#else
  mbedtls_ssl_conf_min_version(&t->conf, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
#endif
  mbedtls_ssl_conf_rng(&t->conf, mbedtls_ctr_drbg_random, drbg);
  /* Offer only HTTP/1.1 so that an h2-capable apiserver does not switch protocols. */
  static const char *alpn[] = {"http/1.1", NULL};
  mbedtls_ssl_conf_alpn_protocols(&t->conf, alpn);
  if (t->insecure) {
    mbedtls_ssl_conf_authmode(&t->conf, MBEDTLS_SSL_VERIFY_NONE);
  } else {
    mbedtls_ssl_conf_authmode(&t->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
    mbedtls_ssl_conf_ca_chain(&t->conf, ca, NULL);
  }
  return 0;
}

/* Parses a client certificate and its key (PEM or DER, NUL-terminated) and presents them. */
static int tls__own_cert(watch_tls_conf_t *t, mbedtls_ctr_drbg_context *drbg, const char *cert, size_t cert_len,
                         const char *key, size_t key_len, char **errmsg) {
  int r;
  if ((r = mbedtls_x509_crt_parse(&t->cert, (const unsigned char *)cert, tls__len(cert, cert_len)))) {
    /* A positive r counts certificates that failed among others that parsed. */
    tls__errf(errmsg, r < 0 ? r : MBEDTLS_ERR_X509_INVALID_FORMAT, "TLS: cannot parse the client certificate");
    return r < 0 ? r : UV_EINVAL;
  }
#if MBEDTLS_VERSION_MAJOR >= 3
  r = mbedtls_pk_parse_key(&t->key, (const unsigned char *)key, tls__len(key, key_len), NULL, 0,
                           mbedtls_ctr_drbg_random, drbg);
#else
  (void)drbg;
  r = mbedtls_pk_parse_key(&t->key, (const unsigned char *)key, tls__len(key, key_len), NULL, 0);
#endif
  if (r) {
    tls__errf(errmsg, r, "TLS: cannot parse the client key");
    return r;
  }
#if MBEDTLS_VERSION_MAJOR >= 3
  r = mbedtls_pk_check_pair(&t->cert.pk, &t->key, mbedtls_ctr_drbg_random, drbg);
#else
  r = mbedtls_pk_check_pair(&t->cert.pk, &t->key);
#endif
  if (!r) r = mbedtls_ssl_conf_own_cert(&t->conf, &t->cert, &t->key);
  if (r) {
    tls__errf(errmsg, r, "TLS: the client certificate and key do not go together");
    return r;
  }
  return 0;
}

int watch_tls_conf_init(watch_tls_conf_t *t, const kube_config_t *cfg, char **errmsg) {
  int r;
  tls__conf_zero(t);
  static const char pers[] = "rudder-kube-client";
  if ((r = mbedtls_ctr_drbg_seed(&t->drbg, mbedtls_entropy_func, &t->entropy, (const unsigned char *)pers,
                                 sizeof pers - 1))) {
    tls__errf(errmsg, r, "TLS: seeding the random generator failed");
    goto fail;
  }
  t->insecure = cfg->insecure_skip_tls_verify;
  if (cfg->ca_pem) {
    if ((r = mbedtls_x509_crt_parse(&t->ca, (const unsigned char *)cfg->ca_pem, tls__len(cfg->ca_pem, cfg->ca_pem_len)))) {
      /* A positive r counts certificates that failed among others that parsed. */
      tls__errf(errmsg, r < 0 ? r : MBEDTLS_ERR_X509_INVALID_FORMAT, "TLS: cannot parse the certificate authority data");
      goto fail;
    }
  } else if (!t->insecure) {
    if (!(t->chain = tls__system_ref())) {
      watch__errf(errmsg, "TLS: no certificate authority given for %s and the system bundle %s is unusable",
                  cfg->server ? cfg->server : "the server", TLS__SYSTEM_CA);
      r = UV_EINVAL;
      goto fail;
    }
    t->system_ca = 1;
  }
  if (!t->chain) t->chain = &t->ca;
  if ((r = tls__ssl_conf(t, t->chain, &t->drbg, errmsg))) goto fail;
  if (t->insecure)
    LOG_W("TLS certificate verification is disabled (insecure-skip-tls-verify); the server is not authenticated",
          "server", cfg->server ? cfg->server : "");
  if (cfg->cert_pem && cfg->key_pem &&
      (r = tls__own_cert(t, &t->drbg, cfg->cert_pem, cfg->cert_pem_len, cfg->key_pem, cfg->key_pem_len, errmsg)))
    goto fail;
  const char *name = cfg->tls_server_name ? cfg->tls_server_name : cfg->host;
  if (!name) {
    watch__errf(errmsg, "TLS: no server host");
    r = UV_EINVAL;
    goto fail;
  }
  /* mbedTLS 2.x matches only DNS names, so IP literals are checked against iPAddress SANs here. */
  if (inet_pton(AF_INET, name, t->ip) == 1) t->ip_len = 4;
  else if (inet_pton(AF_INET6, name, t->ip) == 1) t->ip_len = 16;
  /* A fully qualified name's final dot is not part of the name a certificate lists (nor of SNI). */
  size_t nlen = strlen(name);
  if (nlen > 1 && name[nlen - 1] == '.') nlen--;
  if (t->ip_len) r = (t->ip_text = strdup(name)) ? 0 : UV_ENOMEM;
  else r = (t->verify_name = strndup(name, nlen)) ? 0 : UV_ENOMEM;
  if (r) goto fail;
  return 0;
fail:
  watch_tls_conf_free(t);
  return r < 0 ? r : UV_EINVAL;
}

int watch_tls_conf_with_cert(watch_tls_conf_t **out, watch_tls_conf_t *base, const char *cert, size_t cert_len,
                             const char *key, size_t key_len, char **errmsg) {
  *out = NULL;
  watch_tls_conf_t *t = malloc(sizeof *t);
  if (!t) {
    watch__errf(errmsg, "out of memory");
    return UV_ENOMEM;
  }
  tls__conf_zero(t);
  t->derived = 1;
  t->refs = 1;
  t->insecure = base->insecure;
  memcpy(t->ip, base->ip, sizeof t->ip);
  t->ip_len = base->ip_len;
  int r = 0;
  if ((base->verify_name && !(t->verify_name = strdup(base->verify_name))) ||
      (base->ip_text && !(t->ip_text = strdup(base->ip_text)))) {
    watch__errf(errmsg, "out of memory");
    r = UV_ENOMEM;
  }
  t->chain = base->chain; /* the base outlives what is derived from it */
  if (!r) r = tls__ssl_conf(t, base->chain, &base->drbg, errmsg);
  if (!r) r = tls__own_cert(t, &base->drbg, cert, cert_len, key, key_len, errmsg);
  if (r) {
    watch_tls_conf_free(t);
    free(t);
    return r < 0 ? r : UV_EINVAL;
  }
  *out = t;
  return 0;
}

void watch_tls_conf_unref(watch_tls_conf_t *t) {
  if (!t || --t->refs > 0 || !t->derived) return;
  watch_tls_conf_free(t);
  free(t);
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
  s->saw_cert = 1;
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
  /* Offered for resumption; a server that refuses it gets a full handshake (mbedTLS falls back). */
  if (conf->have_saved && mbedtls_ssl_set_session(&s->ssl, &conf->saved)) {
    mbedtls_ssl_session_free(&conf->saved); /* unusable: the next full handshake saves another */
    mbedtls_ssl_session_init(&conf->saved);
    conf->have_saved = 0;
  }
  conf->refs++;
  return 0;
}

/* Keeps the session of s for the next connection (a failure keeps the one saved before). */
static void tls__save_session(watch_tls_t *s) {
  watch_tls_conf_t *c = s->conf;
  mbedtls_ssl_session n;
  mbedtls_ssl_session_init(&n);
  if (mbedtls_ssl_get_session(&s->ssl, &n)) {
    mbedtls_ssl_session_free(&n);
    return;
  }
  mbedtls_ssl_session_free(&c->saved);
  c->saved = n; /* moved: n's heap parts now belong to saved */
  c->have_saved = 1;
}

void watch_tls_free(watch_tls_t *s) {
  mbedtls_ssl_free(&s->ssl);
  buf_free(&s->in);
  buf_free(&s->out);
  watch_tls_conf_t *conf = s->conf;
  s->conf = NULL;
  watch_tls_conf_unref(conf);
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
  if (!r) {
    /* A full handshake brought a new session (and ticket); a resumed one may carry a new ticket too. */
    tls__save_session(s);
  }
  return r;
}

int watch_tls_read(watch_tls_t *s, char *p, size_t n) {
  int r = mbedtls_ssl_read(&s->ssl, (unsigned char *)p, n);
  if (r > 0) return r;
  if (r == MBEDTLS_ERR_SSL_WANT_READ || r == MBEDTLS_ERR_SSL_WANT_WRITE) return 0;
#ifdef MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET
  if (r == MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET) { /* TLS 1.3 sends its tickets after the handshake */
    tls__save_session(s);
    return 0;
  }
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

/* The description byte of a fatal alert the peer just sent, or -1. */
static int tls__peer_alert(const watch_tls_t *s, int err) {
  if (err != MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE) return -1;
#if MBEDTLS_VERSION_MAJOR >= 3
  const mbedtls_ssl_context *ssl = &s->ssl;
  if (ssl->MBEDTLS_PRIVATE(in_msgtype) != MBEDTLS_SSL_MSG_ALERT || !ssl->MBEDTLS_PRIVATE(in_msg)) return -1;
  return ssl->MBEDTLS_PRIVATE(in_msg)[1];
#else
  if (s->ssl.in_msgtype != MBEDTLS_SSL_MSG_ALERT || !s->ssl.in_msg) return -1;
  return s->ssl.in_msg[1];
#endif
}

static const char *tls__alert_name(int a) {
  switch (a) {
  case MBEDTLS_SSL_ALERT_MSG_HANDSHAKE_FAILURE: return "handshake_failure";
  case MBEDTLS_SSL_ALERT_MSG_NO_CERT: return "no_certificate";
  case MBEDTLS_SSL_ALERT_MSG_BAD_CERT: return "bad_certificate";
  case MBEDTLS_SSL_ALERT_MSG_UNSUPPORTED_CERT: return "unsupported_certificate";
  case MBEDTLS_SSL_ALERT_MSG_CERT_REVOKED: return "certificate_revoked";
  case MBEDTLS_SSL_ALERT_MSG_CERT_EXPIRED: return "certificate_expired";
  case MBEDTLS_SSL_ALERT_MSG_CERT_UNKNOWN: return "certificate_unknown";
  case MBEDTLS_SSL_ALERT_MSG_UNKNOWN_CA: return "unknown_ca";
  case MBEDTLS_SSL_ALERT_MSG_ACCESS_DENIED: return "access_denied";
  case MBEDTLS_SSL_ALERT_MSG_DECRYPT_ERROR: return "decrypt_error";
  case MBEDTLS_SSL_ALERT_MSG_PROTOCOL_VERSION: return "protocol_version";
  case MBEDTLS_SSL_ALERT_MSG_INTERNAL_ERROR: return "internal_error";
  case 116: return "certificate_required";
  default: return NULL;
  }
}

int watch_tls_cert_rejected(const watch_tls_t *s, int err) {
  switch (tls__peer_alert(s, err)) {
  case MBEDTLS_SSL_ALERT_MSG_NO_CERT:
  case MBEDTLS_SSL_ALERT_MSG_BAD_CERT:
  case MBEDTLS_SSL_ALERT_MSG_UNSUPPORTED_CERT:
  case MBEDTLS_SSL_ALERT_MSG_CERT_REVOKED:
  case MBEDTLS_SSL_ALERT_MSG_CERT_EXPIRED:
  case MBEDTLS_SSL_ALERT_MSG_CERT_UNKNOWN:
  case MBEDTLS_SSL_ALERT_MSG_UNKNOWN_CA:
  case MBEDTLS_SSL_ALERT_MSG_ACCESS_DENIED:
  case 116: /* certificate_required (TLS 1.3) */
    return 1;
  default:
    return 0;
  }
}

void watch_tls_describe(watch_tls_t *s, int err, buf_t *msg) {
  int alert = tls__peer_alert(s, err);
  if (alert >= 0) {
    const char *name = tls__alert_name(alert);
    if (name) buf_printf(msg, "the server sent a fatal alert: %s", name);
    else buf_printf(msg, "the server sent fatal alert %d", alert);
    if (watch_tls_cert_rejected(s, err))
      buf_puts(msg, s->conf && s->conf->cert.raw.len ? " (it refused the client certificate)"
                                                                : " (it requires a client certificate)");
    return;
  }
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
