/* test_watch_informer.c with a compact cache (informer_opts_t.compact): the same handler calls in
 * the same order (list, watch, relists, keep_text), the same objects read back (printed as the
 * projections are), the pooled texts held as often, and the memory figures of one text block per
 * object. */
#define TEST_INFORMER_COMPACT true
#include "test_watch_informer.c"
