/* test_watch_badobj.c with a compact cache (informer_opts_t.compact): the same objects skipped and
 * told, the same handler calls, the same last readable copies kept. */
#define TEST_INFORMER_COMPACT true
#include "test_watch_badobj.c"
