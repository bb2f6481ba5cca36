/* A faster allocator for cJSON in one-shot commands (`rudder template`): values files of
 * megabytes become hundreds of thousands of cJSON nodes and strings, each a malloc and a free.
 * Blocks are carved in order from 64 KiB chunks aligned to their size (so a block's chunk is its
 * address rounded down, and a pointer that is in no chunk came from malloc and goes to free:
 * strings that code allocates and puts into nodes stay fine); a chunk is reused as soon as every
 * block carved from it has been freed, so a tree freed as a whole returns its memory, while a
 * block freed alone is not reused. Blocks over 1 KiB go to malloc.
 * Process-wide (cJSON_InitHooks) and used by one thread (others call cjpool_thread_off): meant for short commands, not for the
 * controller's loop, where long-lived nodes would keep chunks alive. */
#pragma once
#include <stddef.h>

/* Routes cJSON's allocations through the pool (again: no effect). Not under AddressSanitizer,
 * which should see every block. */
void cjpool_install(void);

/* From now on the calling thread allocates cJSON blocks with malloc and frees them with free,
 * without looking at the pool: a helper thread (`rudder template`'s, base/worker.c) calls
 * this first, and must then free only cJSON it allocated itself. The pool stays the main thread's. */
void cjpool_thread_off(void);

/* Chunks currently held (in use or kept empty for reuse). */
size_t cjpool_chunks(void);
