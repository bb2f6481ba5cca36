/* Leveled, structured logging to stderr, one line per call: logfmt (`ts=... level=info msg="..."
 * key=value ...`, the default) or JSON lines (`{"ts":"...","level":"info","msg":"...","key":"value"}`).
 *
 * Tags: log_tag_add binds a field to a value of another ("every line whose release is ns/a gets
 * reconcile_id=..."), so that lines logged anywhere during a reconcile carry its id without every
 * call passing it. Logging may be called from any thread. */
#pragma once
#include <stdarg.h>

typedef enum { LOG_DEBUG = 0, LOG_INFO, LOG_WARN, LOG_ERROR } log_level_t;
typedef enum { LOG_FORMAT_LOGFMT = 0, LOG_FORMAT_JSON } log_format_t;

/* Sets the lowest level that is printed (default info). */
void log_set_level(log_level_t lvl);
/* Parses "debug|info|warn|error"; -1 when unknown. */
int log_level_parse(const char *s);
/* Sets the line format (default logfmt). */
void log_set_format(log_format_t f);
/* Parses "logfmt|json"; -1 when unknown. */
int log_format_parse(const char *s);
/* Logs msg with key/value pairs given as alternating const char* strings, NULL-terminated. */
void log_kv(log_level_t lvl, const char *msg, ...);
/* Logs a printf-formatted message with no extra keys. */
void log_msgf(log_level_t lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* From now on, every line with field=value also carries tag=tag_value (all copied), until
 * log_tag_remove(field, value); the latest tag added for a value wins. 0 or -12. */
int log_tag_add(const char *field, const char *value, const char *tag, const char *tag_value);
/* Removes the latest tag added for field=value (a no-op when there is none). */
void log_tag_remove(const char *field, const char *value);

#define LOG_D(...) log_kv(LOG_DEBUG, __VA_ARGS__, (const char *)NULL)
#define LOG_I(...) log_kv(LOG_INFO, __VA_ARGS__, (const char *)NULL)
#define LOG_W(...) log_kv(LOG_WARN, __VA_ARGS__, (const char *)NULL)
#define LOG_E(...) log_kv(LOG_ERROR, __VA_ARGS__, (const char *)NULL)
