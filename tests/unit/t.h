/* A minimal unit-test harness: CHECK records a failure and goes on;
 * t_done() prints "N passed, N failed" and returns the exit status. */
#pragma once
#include <stdio.h>
#include <string.h>

static int t_passed, t_failed;

#define CHECK(cond) do { \
    if (cond) t_passed++; \
    else { t_failed++; fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); } \
  } while (0)

#define CHECK_EQ_INT(a, b) do { \
    long long _a = (long long)(a), _b = (long long)(b); \
    if (_a == _b) t_passed++; \
    else { t_failed++; fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", __FILE__, __LINE__, #a, #b, _a, _b); } \
  } while (0)

#define CHECK_EQ_STR(a, b) do { \
    const char *_a = (a), *_b = (b); \
    if (_a && _b && strcmp(_a, _b) == 0) t_passed++; \
    else { t_failed++; fprintf(stderr, "%s:%d: %s == %s failed:\n  got:  \"%s\"\n  want: \"%s\"\n", \
                              __FILE__, __LINE__, #a, #b, _a ? _a : "(null)", _b ? _b : "(null)"); } \
  } while (0)

static inline int t_done(void) {
  printf("%d passed, %d failed\n", t_passed, t_failed);
  return t_failed ? 1 : 0;
}
