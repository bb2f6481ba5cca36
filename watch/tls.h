/* TLS over any byte transport with mbedTLS, memory-BIO style: ciphertext that arrives is
 * pushed in, ciphertext to send is taken out; nothing here ever blocks or touches a socket. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <mbedtls/version.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>
#include <mbedtls/pk.h>
#include <mbedtls/entropy.h>
#include <mbedtls/ctr_drbg.h>
#include "base/buf.h"
#include "watch/kubeconfig.h"

/* Shared per client: trust anchors, client credentials, RNG, and what name the server must prove. */
typedef struct watch_tls_conf_s {
  mbedtls_ssl_config conf;
  mbedtls_x509_crt ca;       /* the configuration's own trust (certificate-authority data) */
  mbedtls_x509_crt *chain;   /* what is trusted: &ca, or the process's one parsed system bundle */
  int system_ca;             /* chain is the system bundle (a reference held) */
  mbedtls_x509_crt cert;
  mbedtls_pk_context key;
  mbedtls_entropy_context entropy;
  mbedtls_ctr_drbg_context drbg;
  int insecure;
  char *verify_name;      /* DNS name for SNI and certificate checks; NULL when verifying an IP */
  unsigned char ip[16];   /* the server IP when the host is an IP literal */
  size_t ip_len;          /* 4 or 16, 0 when verifying a name */
  char *ip_text;
  int refs;               /* sessions using it, plus the owner's reference to a derived conf */
  int derived;            /* made by watch_tls_conf_with_cert: heap-allocated, freed by its last unref */
  /* The last session a full handshake (or a new ticket) gave: the next connection offers it for
   * resumption, which spares both sides the key exchange and the certificates' signatures. */
  mbedtls_ssl_session saved;
  int have_saved;
} watch_tls_conf_t;

/* One TLS session. */
typedef struct watch_tls_s {
  mbedtls_ssl_context ssl;
  watch_tls_conf_t *conf;
  buf_t in;         /* ciphertext received, consumed from in_off */
  size_t in_off;
  buf_t out;        /* ciphertext waiting to be written to the transport */
  int ip_mismatch;  /* the peer certificate did not list the server IP */
  int saw_cert;     /* the server sent its certificate (a full handshake, verified) */
} watch_tls_t;

/* Sets up trust and credentials from cfg; 0 or a negative code with *errmsg. */
int watch_tls_conf_init(watch_tls_conf_t *t, const kube_config_t *cfg, char **errmsg);
/* Frees a configuration made by watch_tls_conf_init (no session and no derived conf may still use it). */
void watch_tls_conf_free(watch_tls_conf_t *t);
/* Makes a configuration that trusts and verifies exactly as base does but presents the given client
 * certificate and key (PEM, or DER; NUL-terminated), e.g. from an exec credential plugin. It borrows
 * base's CA chain and random generator, so base must outlive it. It comes with one reference for
 * the caller, and each session started on it holds another; the last watch_tls_conf_unref frees it.
 * 0, or a negative code with *errmsg naming what is wrong. */
int watch_tls_conf_with_cert(watch_tls_conf_t **out, watch_tls_conf_t *base, const char *cert, size_t cert_len,
                             const char *key, size_t key_len, char **errmsg);
/* Drops a reference; frees a derived conf when it was the last (NULL is fine). */
void watch_tls_conf_unref(watch_tls_conf_t *t);
/* Starts a client session, holding a reference on conf and offering its saved session for
 * resumption; 0 or UV_ENOMEM. */
int watch_tls_init(watch_tls_t *s, watch_tls_conf_t *conf);
/* Frees a session and drops its reference on its conf. */
void watch_tls_free(watch_tls_t *s);
/* Adds received ciphertext; 0 or UV_ENOMEM. */
int watch_tls_push(watch_tls_t *s, const char *p, size_t n);
/* Advances the handshake: 0 done, 1 needs more input, else a negative mbedTLS code. */
int watch_tls_handshake(watch_tls_t *s);
/* Reads plaintext: >0 bytes, 0 needs more input, UV_EOF on close_notify, else a negative mbedTLS code. */
int watch_tls_read(watch_tls_t *s, char *p, size_t n);
/* Encrypts all of p into the out buffer; 0 or a negative code. */
int watch_tls_write(watch_tls_t *s, const char *p, size_t n);
/* 1 when err is a fatal alert by which the server refused (or asked for) our client certificate. */
int watch_tls_cert_rejected(const watch_tls_t *s, int err);
/* Describes a handshake failure: verification flags, name mismatch, or the mbedTLS error text. */
void watch_tls_describe(watch_tls_t *s, int err, buf_t *msg);
