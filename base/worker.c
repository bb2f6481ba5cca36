#define _GNU_SOURCE
#include "base/worker.h"

#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "base/cjpool.h"

/* Jobs go from the posting thread to the helper through a single-producer single-consumer list
 * without a lock: the helper's head is a node whose job has been taken (at first the stub), the
 * poster appends behind its tail. Each side spins a while before it sleeps (the mutex and the
 * condition variables are for sleeping only); the atomics are sequentially consistent where a
 * side announces it sleeps and then looks again, so that a wake-up is never lost. The poster frees
 * the nodes the helper is done with (a block is freed by the thread that allocated it: no waits
 * on the other thread's malloc arena). */
typedef struct worker_job_s {
  struct worker_job_s *next;
  void (*fn)(void *);
  void *arg;
} worker_job_t;

struct worker_s {
  worker_job_t stub;
  worker_job_t *head; /* the helper's (read by the poster to free the nodes before it) */
  worker_job_t *tail; /* the poster's */
  worker_job_t *reclaim; /* the poster's: the oldest node it has not freed */
  size_t posted;      /* the poster's */
  size_t finished;    /* written by the helper */
  bool stop;
  int sleeping; /* the helper sleeps on cv */
  int waiters;  /* threads sleeping on idle */
  pthread_mutex_t mu;
  pthread_cond_t cv, idle;
  pthread_t th;
};

/* A waiter for a job's end spins this long before it sleeps: a job is often finished within a
 * few hundred microseconds, and a sleeping thread takes long to wake. */
#define WORKER_SPIN_NS 500000L
/* The helper, out of jobs, spins only this long: the poster is running templates and posts again
 * much later than that as often as not, so a longer spin burns a core's time for nothing (it
 * doubled the CPU time of a chart of 300 small templates parsed ahead) and, on a busy machine,
 * takes it from the thread doing the work. */
#define WORKER_IDLE_SPIN_NS 20000L

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

static worker_job_t *worker__next(worker_t *w) { return __atomic_load_n(&w->head->next, __ATOMIC_SEQ_CST); }
static bool worker__stopping(worker_t *w) { return __atomic_load_n(&w->stop, __ATOMIC_SEQ_CST); }

static void *worker_main(void *p) {
  worker_t *w = p;
  cjpool_thread_off(); /* the cJSON pool belongs to the main thread */
  for (;;) {
    worker_job_t *j = worker__next(w);
    if (!j) {
      long start = worker__ns();
      for (unsigned k = 1; !(j = worker__next(w)) && !worker__stopping(w); k++) {
        worker__relax();
        if (!(k & 63) && worker__ns() - start > WORKER_IDLE_SPIN_NS) break;
      }
    }
    if (!j && !worker__stopping(w)) {
      pthread_mutex_lock(&w->mu);
      __atomic_store_n(&w->sleeping, 1, __ATOMIC_SEQ_CST);
      while (!(j = worker__next(w)) && !worker__stopping(w)) pthread_cond_wait(&w->cv, &w->mu);
      __atomic_store_n(&w->sleeping, 0, __ATOMIC_SEQ_CST);
      pthread_mutex_unlock(&w->mu);
    }
    if (!j) break; /* stopping, and nothing left */
    __atomic_store_n(&w->head, j, __ATOMIC_RELEASE); /* j is the new stub: the ones before it are done */
    j->fn(j->arg);
    __atomic_store_n(&w->finished, w->finished + 1, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&w->waiters, __ATOMIC_SEQ_CST)) {
      pthread_mutex_lock(&w->mu);
      pthread_cond_broadcast(&w->idle);
      pthread_mutex_unlock(&w->mu);
    }
  }
  return NULL;
}

worker_t *worker_start(void) {
  /* both threads spin while waiting: only where they can run at the same time */
  cpu_set_t cpus;
  if (sched_getaffinity(0, sizeof cpus, &cpus) == 0 && CPU_COUNT(&cpus) < 2) return NULL;
  worker_t *w = calloc(1, sizeof *w);
  if (!w) return NULL;
  w->head = w->tail = w->reclaim = &w->stub;
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

/* Frees the nodes before the helper's head. */
static void worker__reclaim(worker_t *w) {
  worker_job_t *h = __atomic_load_n(&w->head, __ATOMIC_ACQUIRE);
  while (w->reclaim != h) {
    worker_job_t *n = w->reclaim->next;
    if (w->reclaim != &w->stub) free(w->reclaim);
    w->reclaim = n;
  }
}

long worker_post(worker_t *w, void (*fn)(void *), void *arg) {
  worker__reclaim(w);
  worker_job_t *j = malloc(sizeof *j);
  if (!j) return -1;
  j->next = NULL;
  j->fn = fn;
  j->arg = arg;
  __atomic_store_n(&w->tail->next, j, __ATOMIC_SEQ_CST);
  w->tail = j;
  long ticket = (long)++w->posted;
  if (__atomic_load_n(&w->sleeping, __ATOMIC_SEQ_CST)) {
    pthread_mutex_lock(&w->mu);
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
  }
  return ticket;
}

static bool worker__done_to(worker_t *w, long ticket) {
  return (long)__atomic_load_n(&w->finished, __ATOMIC_SEQ_CST) >= ticket;
}

void worker_wait_for(worker_t *w, long ticket) {
  long start = worker__ns();
  for (unsigned k = 1; !worker__done_to(w, ticket); k++) {
    worker__relax();
    if (!(k & 63) && worker__ns() - start > WORKER_SPIN_NS) break;
  }
  if (worker__done_to(w, ticket)) return;
  pthread_mutex_lock(&w->mu);
  __atomic_add_fetch(&w->waiters, 1, __ATOMIC_SEQ_CST);
  while (!worker__done_to(w, ticket)) pthread_cond_wait(&w->idle, &w->mu);
  __atomic_sub_fetch(&w->waiters, 1, __ATOMIC_SEQ_CST);
  pthread_mutex_unlock(&w->mu);
}

void worker_wait(worker_t *w) { worker_wait_for(w, (long)w->posted); }

void worker_stop(worker_t *w) {
  if (!w) return;
  __atomic_store_n(&w->stop, true, __ATOMIC_SEQ_CST);
  if (__atomic_load_n(&w->sleeping, __ATOMIC_SEQ_CST)) {
    pthread_mutex_lock(&w->mu);
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
  }
  pthread_join(w->th, NULL);
  worker__reclaim(w);
  if (w->head != &w->stub) free(w->head);
  pthread_cond_destroy(&w->idle);
  pthread_cond_destroy(&w->cv);
  pthread_mutex_destroy(&w->mu);
  free(w);
}
