/* The helper thread of one-shot commands (base/worker): jobs run in posting order, one at a time,
 * off the calling thread; tickets count up from 1 and worker_wait_for returns only once that job
 * and every earlier one have finished; worker_wait waits for all; worker_stop runs what is still
 * queued before it ends; the helper allocates cJSON from malloc while the main thread keeps the
 * pool (cjpool_thread_off), and trees it makes are freed on the main thread. With one CPU there is
 * no helper. */
#define _GNU_SOURCE
#include "base/worker.h"
#include <cjson/cJSON.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "base/cjpool.h"
#include "t.h"

#define NJOBS 2000

typedef struct {
  int id;
  int *order; /* shared log of finished ids */
  int *n;
  pthread_t *self;
  cJSON *made;
} job_t;

static void run(void *p) {
  job_t *j = p;
  if (j->id % 97 == 0) {
    struct timespec ts = {0, 200000}; /* now and then a slow one */
    nanosleep(&ts, NULL);
  }
  j->order[(*j->n)++] = j->id; /* only the helper writes: jobs never overlap */
  *j->self = pthread_self();
  j->made = cJSON_CreateObject();
  cJSON_AddStringToObject(j->made, "id", "x");
  cJSON_AddNumberToObject(j->made, "n", j->id);
}

int main(void) {
  cjpool_install();
  cpu_set_t cpus;
  CHECK(sched_getaffinity(0, sizeof cpus, &cpus) == 0);
  if (CPU_COUNT(&cpus) < 2) { /* one CPU: no helper (both sides spin), callers do the work */
    CHECK(worker_start() == NULL);
    return t_done();
  }
  worker_t *w = worker_start();
  CHECK(w != NULL);
  static int order[NJOBS];
  int n = 0;
  static job_t jobs[NJOBS];
  static pthread_t who[NJOBS];
  long tickets[NJOBS];
  for (int i = 0; i < NJOBS; i++) {
    jobs[i] = (job_t){i, order, &n, &who[i], NULL};
    tickets[i] = worker_post(w, run, &jobs[i]);
    CHECK(tickets[i] == i + 1);
    if (i == NJOBS / 2) {
      worker_wait_for(w, tickets[i / 2]);
      for (int k = 0; k <= i / 2; k++) CHECK(jobs[k].made != NULL); /* done, and all before it */
    }
  }
  worker_wait(w);
  CHECK(n == NJOBS);
  for (int i = 0; i < NJOBS; i++) {
    CHECK(order[i] == i);
    CHECK(!pthread_equal(who[i], pthread_self()));
    CHECK(cJSON_GetObjectItemCaseSensitive(jobs[i].made, "n")->valueint == i);
  }
  /* the pool of this thread still works beside the helper's trees */
  cJSON *mine = cJSON_CreateArray();
  for (int i = 0; i < NJOBS; i++) cJSON_AddItemToArray(mine, jobs[i].made); /* freed here, as a whole */
  cJSON_Delete(mine);

  /* jobs still queued at worker_stop run before it returns */
  n = 0;
  for (int i = 0; i < 100; i++) {
    jobs[i] = (job_t){i * 97, order, &n, &who[i], NULL};
    CHECK(worker_post(w, run, &jobs[i]) == NJOBS + i + 1);
  }
  worker_stop(w);
  CHECK(n == 100);
  for (int i = 0; i < 100; i++) {
    CHECK(order[i] == i * 97);
    cJSON_Delete(jobs[i].made);
  }
  worker_stop(NULL); /* nothing */
  return t_done();
}
