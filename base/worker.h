/* One helper thread that runs posted jobs in order (FIFO), for work a one-shot command can do
 * beside its main thread (`rudder template` parses and sorts manifests on it while templates
 * render). Jobs must not touch what the main thread uses meanwhile; the cJSON pool is off on the
 * helper (cjpool_thread_off), so cJSON the helper makes is malloc'd and must be freed by code that
 * does not assume the pool. The controller's loop does not use it. */
#pragma once
#include <stddef.h>

typedef struct worker_s worker_t;

/* Starts the thread; NULL when it cannot be started or this process may use only one CPU (callers
 * then do the work themselves). */
worker_t *worker_start(void);

/* Queues fn(arg). Its ticket (1, 2, ... in posting order), or -1 when out of memory (fn is then
 * not run). */
long worker_post(worker_t *w, void (*fn)(void *), void *arg);

/* Returns once the job with this ticket, and so every job posted before it, has finished. */
void worker_wait_for(worker_t *w, long ticket);

/* Returns once every job posted so far has finished. */
void worker_wait(worker_t *w);

/* Waits for every job, ends the thread and frees w (NULL: nothing). */
void worker_stop(worker_t *w);
