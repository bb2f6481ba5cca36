#include "base/log.h"
#include "base/buf.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static log_level_t log__min = LOG_INFO;
static log_format_t log__format = LOG_FORMAT_LOGFMT;
static const char *const log__names[] = {"debug", "info", "warn", "error"};

/* The tags, newest first; one block each (the struct and its four strings). Few at a time (one per
 * reconcile in flight), so a list walked per line is cheap enough. */
typedef struct log__tag_s {
  struct log__tag_s *next;
  const char *field, *value, *tag, *tag_value;
} log__tag_t;
static pthread_mutex_t log__mu = PTHREAD_MUTEX_INITIALIZER;
static log__tag_t *log__tags;

void log_set_level(log_level_t lvl) { log__min = lvl; }
void log_set_format(log_format_t f) { log__format = f; }

int log_level_parse(const char *s) {
  for (int i = 0; i < 4; i++)
    if (strcasecmp(s, log__names[i]) == 0) return i;
  return -1;
}

int log_format_parse(const char *s) {
  if (!strcasecmp(s, "logfmt")) return LOG_FORMAT_LOGFMT;
  if (!strcasecmp(s, "json")) return LOG_FORMAT_JSON;
  return -1;
}

int log_tag_add(const char *field, const char *value, const char *tag, const char *tag_value) {
  size_t n[4] = {strlen(field) + 1, strlen(value) + 1, strlen(tag) + 1, strlen(tag_value) + 1};
  log__tag_t *t = malloc(sizeof *t + n[0] + n[1] + n[2] + n[3]);
  if (!t) return -12;
  char *p = (char *)(t + 1);
  const char *src[4] = {field, value, tag, tag_value};
  const char **dst[4] = {&t->field, &t->value, &t->tag, &t->tag_value};
  for (int i = 0; i < 4; i++) {
    memcpy(p, src[i], n[i]);
    *dst[i] = p;
    p += n[i];
  }
  pthread_mutex_lock(&log__mu);
  t->next = log__tags;
  __atomic_store_n(&log__tags, t, __ATOMIC_RELAXED);
  pthread_mutex_unlock(&log__mu);
  return 0;
}

void log_tag_remove(const char *field, const char *value) {
  pthread_mutex_lock(&log__mu);
  log__tag_t *t = NULL;
  for (log__tag_t **pp = &log__tags; *pp; pp = &(*pp)->next)
    if (!strcmp((*pp)->field, field) && !strcmp((*pp)->value, value)) {
      t = *pp;
      __atomic_store_n(pp, t->next, __ATOMIC_RELAXED);
      break;
    }
  pthread_mutex_unlock(&log__mu);
  free(t);
}

/* Quotes a logfmt value when it holds spaces, quotes, '=' or control characters. */
static void log__logfmt_value(buf_t *b, const char *v) {
  int quote = !*v;
  for (const char *p = v; *p; p++)
    if (*p == ' ' || *p == '"' || *p == '=' || (unsigned char)*p < 0x20) { quote = 1; break; }
  if (!quote) { buf_puts(b, v); return; }
  buf_putc(b, '"');
  for (const char *p = v; *p; p++) {
    unsigned char c = (unsigned char)*p;
    if (c == '"' || c == '\\') { buf_putc(b, '\\'); buf_putc(b, (char)c); }
    else if (c == '\n') buf_puts(b, "\\n");
    else if (c == '\t') buf_puts(b, "\\t");
    else if (c < 0x20) buf_printf(b, "\\u%04x", c);
    else buf_putc(b, (char)c);
  }
  buf_putc(b, '"');
}

/* Length of the valid UTF-8 sequence at p (1-4), or 0 when it is not one. */
static int log__utf8_len(const unsigned char *p) {
  if (p[0] < 0x80) return 1;
  int n = p[0] >= 0xf0 && p[0] <= 0xf4 ? 4 : p[0] >= 0xe0 ? 3 : p[0] >= 0xc2 && p[0] < 0xe0 ? 2 : 0;
  for (int i = 1; i < n; i++)
    if ((p[i] & 0xc0) != 0x80) return 0;
  if (n == 3 && ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0))) return 0; /* overlong, surrogate */
  if (n == 4 && ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))) return 0;
  return n;
}

/* A JSON string; bytes that are not UTF-8 become U+FFFD so that every line parses. */
static void log__json_string(buf_t *b, const char *v) {
  buf_putc(b, '"');
  for (const unsigned char *p = (const unsigned char *)v; *p;) {
    unsigned char c = *p;
    if (c == '"' || c == '\\') { buf_putc(b, '\\'); buf_putc(b, (char)c); p++; continue; }
    if (c < 0x20) {
      if (c == '\n') buf_puts(b, "\\n");
      else if (c == '\t') buf_puts(b, "\\t");
      else buf_printf(b, "\\u%04x", c);
      p++;
      continue;
    }
    int n = log__utf8_len(p);
    if (!n) { buf_puts(b, "\\ufffd"); p++; continue; }
    buf_append(b, p, (size_t)n);
    p += n;
  }
  buf_putc(b, '"');
}

static void log__field(buf_t *b, const char *k, const char *v) {
  if (log__format == LOG_FORMAT_JSON) {
    buf_putc(b, ',');
    log__json_string(b, k);
    buf_putc(b, ':');
    log__json_string(b, v);
  } else {
    buf_putc(b, ' ');
    buf_puts(b, k);
    buf_putc(b, '=');
    log__logfmt_value(b, v);
  }
}

/* The tags of the line's fields, after them (each tag once). */
static void log__tags_of(buf_t *b, const char **kv, size_t n) {
  const char *written[8];
  size_t nw = 0;
  pthread_mutex_lock(&log__mu);
  for (const log__tag_t *t = log__tags; t && nw < 8; t = t->next) {
    size_t i = 0;
    while (i < n && strcmp(kv[2 * i], t->field)) i++;
    if (i == n || strcmp(kv[2 * i + 1], t->value)) continue;
    size_t j = 0, w = 0;
    while (j < n && strcmp(kv[2 * j], t->tag)) j++;
    while (w < nw && strcmp(written[w], t->tag)) w++;
    if (j < n || w < nw) continue; /* given by the call, or by a newer tag already written */
    log__field(b, t->tag, t->tag_value);
    written[nw++] = t->tag;
  }
  pthread_mutex_unlock(&log__mu);
}

#define LOG__MAX_FIELDS 32

static void log__emit(log_level_t lvl, const char *msg, va_list ap) {
  buf_t b = BUF_INIT;
  struct timespec ts;
  struct tm tm;
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  char t[64], stamp[80];
  strftime(t, sizeof t, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(stamp, sizeof stamp, "%s.%03ldZ", t, ts.tv_nsec / 1000000);
  if (log__format == LOG_FORMAT_JSON) {
    buf_puts(&b, "{\"ts\":\"");
    buf_puts(&b, stamp);
    buf_printf(&b, "\",\"level\":\"%s\"", log__names[lvl]);
    log__field(&b, "msg", msg);
  } else {
    buf_printf(&b, "ts=%s level=%s msg=", stamp, log__names[lvl]);
    log__logfmt_value(&b, msg);
  }
  const char *kv[2 * LOG__MAX_FIELDS];
  size_t n = 0;
  for (;;) {
    const char *k = va_arg(ap, const char *);
    if (!k) break;
    const char *v = va_arg(ap, const char *);
    if (!v) v = "";
    log__field(&b, k, v);
    if (n < LOG__MAX_FIELDS) {
      kv[2 * n] = k;
      kv[2 * n + 1] = v;
      n++;
    }
  }
  if (n && __atomic_load_n(&log__tags, __ATOMIC_RELAXED)) log__tags_of(&b, kv, n); /* the lock only when tagged */
  if (log__format == LOG_FORMAT_JSON) buf_putc(&b, '}');
  buf_putc(&b, '\n');
  if (b.data) {
    ssize_t w = write(STDERR_FILENO, b.data, b.len);
    (void)w;
  }
  buf_free(&b);
}

void log_kv(log_level_t lvl, const char *msg, ...) {
  if (lvl < log__min) return;
  va_list ap;
  va_start(ap, msg);
  log__emit(lvl, msg, ap);
  va_end(ap);
}

static void log__plain(log_level_t lvl, const char *msg, ...) {
  va_list ap;
  va_start(ap, msg);
  log__emit(lvl, msg, ap);
  va_end(ap);
}

void log_msgf(log_level_t lvl, const char *fmt, ...) {
  if (lvl < log__min) return;
  buf_t m = BUF_INIT;
  va_list ap;
  va_start(ap, fmt);
  buf_vprintf(&m, fmt, ap);
  va_end(ap);
  log__plain(lvl, m.data ? m.data : "", (const char *)NULL);
  buf_free(&m);
}
