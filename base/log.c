#include "base/log.h"
#include "base/buf.h"
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

static log_level_t log__min = LOG_INFO;
static const char *const log__names[] = {"debug", "info", "warn", "error"};

void log_set_level(log_level_t lvl) { log__min = lvl; }

int log_level_parse(const char *s) {
  for (int i = 0; i < 4; i++)
    if (strcasecmp(s, log__names[i]) == 0) return i;
  return -1;
}

/* Quotes a logfmt value when it holds spaces, quotes, '=' or control characters. */
static void log__value(buf_t *b, const char *v) {
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

static void log__emit(log_level_t lvl, const char *msg, va_list ap) {
  buf_t b = BUF_INIT;
  struct timespec ts;
  struct tm tm;
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  char t[64];
  strftime(t, sizeof t, "%Y-%m-%dT%H:%M:%S", &tm);
  buf_printf(&b, "ts=%s.%03ldZ level=%s msg=", t, ts.tv_nsec / 1000000, log__names[lvl]);
  log__value(&b, msg);
  for (;;) {
    const char *k = va_arg(ap, const char *);
    if (!k) break;
    const char *v = va_arg(ap, const char *);
    buf_putc(&b, ' ');
    buf_puts(&b, k);
    buf_putc(&b, '=');
    log__value(&b, v ? v : "");
  }
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
