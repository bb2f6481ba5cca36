/* A TLS-terminating, HTTP-aware fault proxy inside the test process (loopback only), for
 * injecting API errors between a client and a real kube-apiserver.
 *
 * Downstream it serves TLS with a certificate for IP 127.0.0.1 that fproxy_mint_cert makes at
 * test time with openssl, signed by the test cluster's CA (so clients from the cluster's
 * kubeconfig trust it unchanged). Each complete request either gets a scripted fault response
 * (429 with Retry-After: 1, 503 with or without Retry-After) or is forwarded byte for byte to
 * the real API server over its own TLS connection with the admin client certificate; the
 * response is relayed back as it comes. The proxy counts requests and stamps their arrival
 * times so that tests can check attempts and the waits between them. One request at a time per
 * connection (the client under test does not pipeline). */
#pragma once
#include "base/buf.h"
#include "watch/kubeconfig.h"
#include "watch/tls.h"
#include <llhttp.h>
#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/pk.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <uv.h>

enum {
  FP_FORWARD = 0,  /* pass the request to the API server */
  FP_429 = 429,    /* 429 Too Many Requests, Retry-After: 1 (as the API server's APF sends it) */
  FP_503 = 503,    /* 503 Service Unavailable without Retry-After */
  FP_503_RA = 5031 /* 503 Service Unavailable with Retry-After: 1 */
};

#define FP_MAX_LOG 256

typedef struct fproxy_s fproxy_t;

typedef struct fpconn_s {
  fproxy_t *p;
  uv_tcp_t down, up;      /* down: the client side; up: the API server side */
  uv_connect_t connect;
  int refs, closing;
  /* downstream TLS (server side), memory-BIO style */
  mbedtls_ssl_context ssl;
  buf_t din, dout;        /* ciphertext in (consumed from din_off) and waiting to be written */
  size_t din_off;
  int hs_done;
  /* request framing */
  llhttp_t parser;
  llhttp_settings_t set;
  buf_t req;              /* raw plaintext bytes of the request being received */
  /* upstream TLS (client side, admin credentials) */
  watch_tls_t utls;
  int up_state;           /* 0 none, 1 connecting, 2 handshake, 3 ready */
  buf_t upend;            /* plaintext waiting for the upstream handshake */
  struct fpconn_s *next;
} fpconn_t;

struct fproxy_s {
  uv_loop_t *loop;
  uv_tcp_t listen;
  int port, target_port;
  mbedtls_ssl_config conf;
  mbedtls_x509_crt crt;
  mbedtls_pk_context key;
  mbedtls_entropy_context entropy;
  mbedtls_ctr_drbg_context drbg;
  watch_tls_conf_t upconf;
  int script[64];         /* faults for the next requests, in order; FP_FORWARD once used up */
  size_t n_script, next_script;
  int requests, forwarded, injected;
  int kind[FP_MAX_LOG];   /* what each request got */
  uint64_t at_ns[FP_MAX_LOG]; /* uv_hrtime() when each request was complete */
  fpconn_t *conns;
  char errmsg[256];
};

static inline void fp__freed(uv_handle_t *h) {
  fpconn_t *c = h->data;
  if (--c->refs) return;
  mbedtls_ssl_free(&c->ssl);
  if (c->up_state >= 2) watch_tls_free(&c->utls);
  buf_free(&c->din);
  buf_free(&c->dout);
  buf_free(&c->req);
  buf_free(&c->upend);
  free(c);
}

static inline void fp_conn_close(fpconn_t *c) {
  if (c->closing) return;
  c->closing = 1;
  for (fpconn_t **pp = &c->p->conns; *pp; pp = &(*pp)->next)
    if (*pp == c) { *pp = c->next; break; }
  uv_close((uv_handle_t *)&c->down, fp__freed);
  uv_close((uv_handle_t *)&c->up, fp__freed);
}

static inline void fp__wrote(uv_write_t *w, int status) { free(w); }

/* Writes and empties b on s. */
static inline int fp__flush(uv_tcp_t *s, buf_t *b) {
  if (!b->len) return 0;
  uv_write_t *w = malloc(sizeof *w + b->len);
  if (!w) return UV_ENOMEM;
  memcpy(w + 1, b->data, b->len);
  uv_buf_t ub = uv_buf_init((char *)(w + 1), (unsigned)b->len);
  buf_reset(b);
  int r = uv_write(w, (uv_stream_t *)s, &ub, 1, fp__wrote);
  if (r) free(w);
  return r;
}

static inline int fp__bio_send(void *ctx, const unsigned char *p, size_t n) {
  fpconn_t *c = ctx;
  return buf_append(&c->dout, p, n) ? MBEDTLS_ERR_SSL_ALLOC_FAILED : (int)n;
}

static inline int fp__bio_recv(void *ctx, unsigned char *p, size_t n) {
  fpconn_t *c = ctx;
  size_t avail = c->din.len - c->din_off;
  if (!avail) return MBEDTLS_ERR_SSL_WANT_READ;
  if (n > avail) n = avail;
  memcpy(p, c->din.data + c->din_off, n);
  c->din_off += n;
  if (c->din_off == c->din.len) { buf_reset(&c->din); c->din_off = 0; }
  return (int)n;
}

/* Encrypts plaintext to the client. */
static inline void fp__down_write(fpconn_t *c, const char *p, size_t n) {
  while (n) {
    int r = mbedtls_ssl_write(&c->ssl, (const unsigned char *)p, n);
    if (r < 0) { fp_conn_close(c); return; }
    p += r;
    n -= (size_t)r;
  }
  if (fp__flush(&c->down, &c->dout)) fp_conn_close(c);
}

static inline void fp__alloc(uv_handle_t *h, size_t hint, uv_buf_t *b) {
  static char rb[65536]; /* consumed synchronously in the read callbacks */
  *b = uv_buf_init(rb, sizeof rb);
}

static inline void fp__up_pump(fpconn_t *c) {
  if (c->up_state == 2) {
    int r = watch_tls_handshake(&c->utls);
    if (fp__flush(&c->up, &c->utls.out)) { fp_conn_close(c); return; }
    if (r == 1) return;
    if (r) {
      buf_t m = BUF_INIT;
      watch_tls_describe(&c->utls, r, &m);
      snprintf(c->p->errmsg, sizeof c->p->errmsg, "upstream TLS handshake: %s", m.data ? m.data : "?");
      buf_free(&m);
      fp_conn_close(c);
      return;
    }
    c->up_state = 3;
    if (c->upend.len) {
      if (watch_tls_write(&c->utls, c->upend.data, c->upend.len)) { fp_conn_close(c); return; }
      buf_reset(&c->upend);
      if (fp__flush(&c->up, &c->utls.out)) { fp_conn_close(c); return; }
    }
  }
  static char pt[16384];
  for (;;) {
    int r = watch_tls_read(&c->utls, pt, sizeof pt);
    if (c->utls.out.len && fp__flush(&c->up, &c->utls.out)) { fp_conn_close(c); return; }
    if (r == 0) return;
    if (r < 0) { fp_conn_close(c); return; }
    fp__down_write(c, pt, (size_t)r);
    if (c->closing) return;
  }
}

static inline void fp__up_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b) {
  fpconn_t *c = s->data;
  if (c->closing || n == 0) return;
  if (n < 0) { fp_conn_close(c); return; }
  if (watch_tls_push(&c->utls, b->base, (size_t)n)) { fp_conn_close(c); return; }
  fp__up_pump(c);
}

static inline void fp__up_connected(uv_connect_t *r, int status) {
  fpconn_t *c = r->data;
  if (c->closing) return;
  if (status < 0 || watch_tls_init(&c->utls, &c->p->upconf)) {
    snprintf(c->p->errmsg, sizeof c->p->errmsg, "upstream connect: %s", uv_strerror(status));
    fp_conn_close(c);
    return;
  }
  c->up_state = 2;
  uv_read_start((uv_stream_t *)&c->up, fp__alloc, fp__up_read);
  fp__up_pump(c);
}

static inline void fp__forward(fpconn_t *c, const char *p, size_t n) {
  if (c->up_state == 3) {
    if (watch_tls_write(&c->utls, p, n) || fp__flush(&c->up, &c->utls.out)) fp_conn_close(c);
    return;
  }
  buf_append(&c->upend, p, n);
  if (c->up_state) return;
  c->up_state = 1;
  struct sockaddr_in a;
  uv_ip4_addr("127.0.0.1", c->p->target_port, &a);
  if (uv_tcp_connect(&c->connect, &c->up, (struct sockaddr *)&a, fp__up_connected)) fp_conn_close(c);
}

static inline void fp__inject(fpconn_t *c, int kind) {
  int code = kind == FP_429 ? 429 : 503;
  const char *reason = code == 429 ? "Too Many Requests" : "Service Unavailable";
  const char *sreason = code == 429 ? "TooManyRequests" : "ServiceUnavailable";
  int ra = kind == FP_429 || kind == FP_503_RA;
  buf_t body = BUF_INIT, out = BUF_INIT;
  buf_printf(&body, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\","
                    "\"message\":\"injected by the fault proxy\",\"reason\":\"%s\",%s\"code\":%d}",
             sreason, ra ? "\"details\":{\"retryAfterSeconds\":1}," : "", code);
  buf_printf(&out, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n%sContent-Length: %zu\r\n\r\n%s", code,
             reason, ra ? "Retry-After: 1\r\n" : "", body.len, body.data);
  fp__down_write(c, out.data, out.len);
  buf_free(&body);
  buf_free(&out);
}

static inline int fp__on_complete(llhttp_t *lp) {
  fpconn_t *c = lp->data;
  fproxy_t *p = c->p;
  int kind = p->next_script < p->n_script ? p->script[p->next_script++] : FP_FORWARD;
  if (p->requests < FP_MAX_LOG) {
    p->kind[p->requests] = kind;
    p->at_ns[p->requests] = uv_hrtime();
  }
  p->requests++;
  if (kind == FP_FORWARD) {
    p->forwarded++;
    fp__forward(c, c->req.data, c->req.len);
  } else {
    p->injected++;
    fp__inject(c, kind);
  }
  buf_reset(&c->req);
  return c->closing ? HPE_PAUSED : 0;
}

static inline void fp__down_read(uv_stream_t *s, ssize_t n, const uv_buf_t *b) {
  fpconn_t *c = s->data;
  if (c->closing || n == 0) return;
  if (n < 0) { fp_conn_close(c); return; }
  if (buf_append(&c->din, b->base, (size_t)n)) { fp_conn_close(c); return; }
  if (!c->hs_done) {
    int r = mbedtls_ssl_handshake(&c->ssl);
    if (fp__flush(&c->down, &c->dout)) { fp_conn_close(c); return; }
    if (r == MBEDTLS_ERR_SSL_WANT_READ || r == MBEDTLS_ERR_SSL_WANT_WRITE) return;
    if (r) { snprintf(c->p->errmsg, sizeof c->p->errmsg, "downstream TLS handshake: -0x%x", -r); fp_conn_close(c); return; }
    c->hs_done = 1;
  }
  static char pt[16384];
  for (;;) {
    int r = mbedtls_ssl_read(&c->ssl, (unsigned char *)pt, sizeof pt);
    if (c->dout.len && fp__flush(&c->down, &c->dout)) { fp_conn_close(c); return; }
    if (r == MBEDTLS_ERR_SSL_WANT_READ || r == MBEDTLS_ERR_SSL_WANT_WRITE) return;
    if (r <= 0) { fp_conn_close(c); return; }
    /* The raw bytes go along unchanged; llhttp only finds where each request ends. */
    buf_append(&c->req, pt, (size_t)r);
    if (llhttp_execute(&c->parser, pt, (size_t)r) != HPE_OK) { fp_conn_close(c); return; }
    if (c->closing) return;
  }
}

static inline void fp__accept(uv_stream_t *l, int status) {
  fproxy_t *p = l->data;
  if (status < 0) return;
  fpconn_t *c = calloc(1, sizeof *c);
  c->p = p;
  uv_tcp_init(p->loop, &c->down);
  uv_tcp_init(p->loop, &c->up);
  c->down.data = c->up.data = c->connect.data = c;
  c->refs = 2;
  c->next = p->conns;
  p->conns = c;
  mbedtls_ssl_init(&c->ssl);
  if (uv_accept(l, (uv_stream_t *)&c->down) || mbedtls_ssl_setup(&c->ssl, &p->conf)) { fp_conn_close(c); return; }
  mbedtls_ssl_set_bio(&c->ssl, c, fp__bio_send, fp__bio_recv, NULL);
  llhttp_settings_init(&c->set);
  c->set.on_message_complete = fp__on_complete;
  llhttp_init(&c->parser, HTTP_REQUEST, &c->set);
  c->parser.data = c;
  uv_read_start((uv_stream_t *)&c->down, fp__alloc, fp__down_read);
}

/* Makes dir/proxy.crt and dir/proxy.key: an EC P-256 serving certificate for IP 127.0.0.1,
 * valid for a day, signed by ca_crt/ca_key. 0 or -1 (openssl's own messages go to stderr). */
static inline int fproxy_mint_cert(const char *dir, const char *ca_crt, const char *ca_key) {
  char cmd[4096];
  snprintf(cmd, sizeof cmd,
           "set -e; cd '%s'; "
           "openssl ecparam -name prime256v1 -genkey -noout -out proxy.key; "
           "openssl req -new -key proxy.key -subj /CN=rudder-fault-proxy -out proxy.csr; "
           "printf 'subjectAltName=IP:127.0.0.1\\nbasicConstraints=CA:FALSE\\n"
           "keyUsage=digitalSignature\\nextendedKeyUsage=serverAuth\\n' > proxy.ext; "
           "openssl x509 -req -in proxy.csr -CA '%s' -CAkey '%s' -set_serial 0x%08x%08x -days 1 "
           "-extfile proxy.ext -out proxy.crt 2>/dev/null",
           dir, ca_crt, ca_key, (unsigned)getpid(), (unsigned)uv_hrtime());
  return system(cmd) == 0 ? 0 : -1;
}

/* Removes what fproxy_mint_cert wrote, and dir. */
static inline void fproxy_unmint(const char *dir) {
  static const char *files[] = {"proxy.key", "proxy.csr", "proxy.ext", "proxy.crt"};
  char path[1024];
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
    snprintf(path, sizeof path, "%s/%s", dir, files[i]);
    unlink(path);
  }
  rmdir(dir);
}

/* Listens on 127.0.0.1 (a free port) with cert/key, forwarding to the server of upstream (its
 * port, CA and client credentials). 0 or -1 with p->errmsg. */
static inline int fproxy_start(fproxy_t *p, uv_loop_t *lp, const char *cert_file, const char *key_file,
                               const kube_config_t *upstream) {
  memset(p, 0, sizeof *p);
  signal(SIGPIPE, SIG_IGN);
  p->loop = lp;
  p->target_port = upstream->port;
  mbedtls_ssl_config_init(&p->conf);
  mbedtls_x509_crt_init(&p->crt);
  mbedtls_pk_init(&p->key);
  mbedtls_entropy_init(&p->entropy);
  mbedtls_ctr_drbg_init(&p->drbg);
  char *err = NULL;
  int r = mbedtls_ctr_drbg_seed(&p->drbg, mbedtls_entropy_func, &p->entropy, (const unsigned char *)"fproxy", 6);
  if (!r) r = mbedtls_x509_crt_parse_file(&p->crt, cert_file);
#if MBEDTLS_VERSION_MAJOR >= 3
  if (!r) r = mbedtls_pk_parse_keyfile(&p->key, key_file, NULL, mbedtls_ctr_drbg_random, &p->drbg);
#else
  if (!r) r = mbedtls_pk_parse_keyfile(&p->key, key_file, NULL);
#endif
  if (!r) r = mbedtls_ssl_config_defaults(&p->conf, MBEDTLS_SSL_IS_SERVER, MBEDTLS_SSL_TRANSPORT_STREAM,
                                          MBEDTLS_SSL_PRESET_DEFAULT);
  if (!r) {
    mbedtls_ssl_conf_rng(&p->conf, mbedtls_ctr_drbg_random, &p->drbg);
    r = mbedtls_ssl_conf_own_cert(&p->conf, &p->crt, &p->key);
  }
  if (r) {
    snprintf(p->errmsg, sizeof p->errmsg, "proxy TLS setup failed: -0x%x", -r);
    return -1;
  }
  if (watch_tls_conf_init(&p->upconf, upstream, &err)) {
    snprintf(p->errmsg, sizeof p->errmsg, "upstream TLS: %s", err ? err : "?");
    free(err);
    return -1;
  }
  uv_tcp_init(lp, &p->listen);
  p->listen.data = p;
  struct sockaddr_in a;
  uv_ip4_addr("127.0.0.1", 0, &a);
  r = uv_tcp_bind(&p->listen, (struct sockaddr *)&a, 0);
  if (!r) r = uv_listen((uv_stream_t *)&p->listen, 128, fp__accept);
  struct sockaddr_storage ss;
  int len = sizeof ss;
  if (!r) r = uv_tcp_getsockname(&p->listen, (struct sockaddr *)&ss, &len);
  if (!r) p->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
  if (r) snprintf(p->errmsg, sizeof p->errmsg, "listen: %s", uv_strerror(r));
  return r ? -1 : 0;
}

/* Scripts the faults for the next n requests (replacing any left over) and resets the counters. */
static inline void fproxy_script(fproxy_t *p, const int *kinds, size_t n) {
  if (n > sizeof p->script / sizeof p->script[0]) n = sizeof p->script / sizeof p->script[0];
  if (n) memcpy(p->script, kinds, n * sizeof *kinds);
  p->n_script = n;
  p->next_script = 0;
  p->requests = p->forwarded = p->injected = 0;
}

/* Milliseconds between the arrival of request i-1 and request i (since the last fproxy_script). */
static inline double fproxy_gap_ms(const fproxy_t *p, int i) {
  if (i <= 0 || i >= p->requests || i >= FP_MAX_LOG) return -1;
  return (double)(p->at_ns[i] - p->at_ns[i - 1]) / 1e6;
}

/* Closes the listener and every connection; the loop must run afterwards to finish the closes. */
static inline void fproxy_stop(fproxy_t *p) {
  while (p->conns) fp_conn_close(p->conns);
  uv_close((uv_handle_t *)&p->listen, NULL);
}

/* Frees the TLS state once the loop has finished fproxy_stop's closes. */
static inline void fproxy_free(fproxy_t *p) {
  watch_tls_conf_free(&p->upconf);
  mbedtls_ssl_config_free(&p->conf);
  mbedtls_x509_crt_free(&p->crt);
  mbedtls_pk_free(&p->key);
  mbedtls_ctr_drbg_free(&p->drbg);
  mbedtls_entropy_free(&p->entropy);
}
