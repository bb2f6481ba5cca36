/* Leveled, structured logging in logfmt: `ts=... level=info msg="..." key=value ...`. */
#pragma once
#include <stdarg.h>

typedef enum { LOG_DEBUG = 0, LOG_INFO, LOG_WARN, LOG_ERROR } log_level_t;

/* Sets the lowest level that is printed (default info). */
void log_set_level(log_level_t lvl);
/* Parses "debug|info|warn|error"; -1 when unknown. */
int log_level_parse(const char *s);
/* Logs msg with key/value pairs given as alternating const char* strings, NULL-terminated. */
void log_kv(log_level_t lvl, const char *msg, ...);
/* Logs a printf-formatted message with no extra keys. */
void log_msgf(log_level_t lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define LOG_D(...) log_kv(LOG_DEBUG, __VA_ARGS__, (const char *)NULL)
#define LOG_I(...) log_kv(LOG_INFO, __VA_ARGS__, (const char *)NULL)
#define LOG_W(...) log_kv(LOG_WARN, __VA_ARGS__, (const char *)NULL)
#define LOG_E(...) log_kv(LOG_ERROR, __VA_ARGS__, (const char *)NULL)
