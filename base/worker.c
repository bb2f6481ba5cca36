#define _GNU_SOURCE
#include "base/worker.h"

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "base/cjpool.h"

typedef struct worker_job_s {
  struct worker_job_s *next;
  void (*fn)(void *);
  void *arg;
} worker_job_t;

struct worker_s {
  pthread_mutex_t mu;
  pthread_cond_t cv;   /* the helper: a job was posted, or stop */
  pthread_cond_t idle; /* waiters: a job finished */
  pthread_t th;
  worker_job_t *head, **tail; /* head and finished are also read without the lock (spinning) */
  size_t posted, finished;
  int waiters; /* threads asleep on idle */
  bool stop;
};

/* Both sides spin this long before they sleep: a job is often posted (or finished) a few
 * microseconds later, and a sleeping thread takes much longer than that to wake. */
#define WORKER_SPIN_NS 500000L

static long worker__ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1000000000L + t.tv_nsec;
}

static void worker__relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/* Spins (without the lock) until cond(w) holds or the time is up. */
static bool worker__spin(worker_t *w, bool (*cond)(worker_t *, long), long arg) {
  long start = worker__ns();
  for (unsigned k = 1;; k++) {
    if (cond(w, arg)) return true;
    worker__relax();
    if (!(k & 63) && worker__ns() - start > WORKER_SPIN_NS) return false;
  }
}

static bool worker__has_job(worker_t *w, long unused) {
  (void)unused;
  return __atomic_load_n(&w->head, __ATOMIC_ACQUIRE) != NULL || __atomic_load_n(&w->stop, __ATOMIC_ACQUIRE);
}

static bool worker__done_to(worker_t *w, long ticket) {
  return (long)__atomic_load_n(&w->finished, __ATOMIC_ACQUIRE) >= ticket;
}

static void *worker_main(void *p) {
  worker_t *w = p;
  cjpool_thread_off(); /* the cJSON pool belongs to the main thread */
  pthread_mutex_lock(&w->mu);
  for (;;) {
    if (!w->head && !w->stop) {
      pthread_mutex_unlock(&w->mu);
      worker__spin(w, worker__has_job, 0);
      pthread_mutex_lock(&w->mu);
    }
    while (!w->head && !w->stop) pthread_cond_wait(&w->cv, &w->mu);
    worker_job_t *j = w->head;
    if (!j) break; /* stop, and nothing left */
    __atomic_store_n(&w->head, j->next, __ATOMIC_RELEASE);
    if (!w->head) w->tail = &w->head;
    pthread_mutex_unlock(&w->mu);
    j->fn(j->arg);
    free(j);
    pthread_mutex_lock(&w->mu);
    __atomic_store_n(&w->finished, w->finished + 1, __ATOMIC_RELEASE);
    if (w->waiters) pthread_cond_broadcast(&w->idle);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

worker_t *worker_start(void) {
  /* both threads spin while waiting: only where they can run at the same time */
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) < 2) return NULL;
  worker_t *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->tail = &w->head;
  if (pthread_mutex_init(&w->mu, NULL)) goto fail_mu;
  if (pthread_cond_init(&w->cv, NULL)) goto fail_cv;
  if (pthread_cond_init(&w->idle, NULL)) goto fail_idle;
  if (pthread_create(&w->th, NULL, worker_main, w)) goto fail_th;
  return w;
fail_th:
  pthread_cond_destroy(&w->idle);
fail_idle:
  pthread_cond_destroy(&w->cv);
fail_cv:
  pthread_mutex_destroy(&w->mu);
fail_mu:
  free(w);
  return NULL;
}

long worker_post(worker_t *w, void (*fn)(void *), void *arg) {
  worker_job_t *j = malloc(sizeof *j);
  if (!j) return -1;
  j->next = NULL;
  j->fn = fn;
  j->arg = arg;
  pthread_mutex_lock(&w->mu);
  if (w->head) *w->tail = j;
  else __atomic_store_n(&w->head, j, __ATOMIC_RELEASE);
  w->tail = &j->next;
  long ticket = (long)++w->posted;
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
  return ticket;
}

void worker_wait_for(worker_t *w, long ticket) {
  if (worker__spin(w, worker__done_to, ticket)) return;
  pthread_mutex_lock(&w->mu);
  w->waiters++;
  while ((long)w->finished < ticket) pthread_cond_wait(&w->idle, &w->mu);
  w->waiters--;
  pthread_mutex_unlock(&w->mu);
}

void worker_wait(worker_t *w) {
  pthread_mutex_lock(&w->mu);
  long all = (long)w->posted;
  pthread_mutex_unlock(&w->mu);
  worker_wait_for(w, all);
}

void worker_stop(worker_t *w) {
  if (!w) return;
  pthread_mutex_lock(&w->mu);
  __atomic_store_n(&w->stop, true, __ATOMIC_RELEASE);
  pthread_cond_signal(&w->cv);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->th, NULL);
  pthread_cond_destroy(&w->idle);
  pthread_cond_destroy(&w->cv);
  pthread_mutex_destroy(&w->mu);
  free(w);
}
