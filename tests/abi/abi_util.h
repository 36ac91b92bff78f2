/*
 * abi_util.h - what the ABI tests share, one concern per file: host tensors
 * (elements.h), attention cases with their buffers (attn_case.h), the
 * independent double-precision oracle (oracle.h) and tolerance-aware
 * comparisons (compare.h). Written independently of plugin/ref: its own
 * decoding, its own dense loops, its own dropout counter layout (only the
 * Philox block function, checked against the Random123 known answers, is
 * shared).
 */
#ifndef SDPA_TESTS_ABI_UTIL_H
#define SDPA_TESTS_ABI_UTIL_H

#include "attn_case.h"
#include "compare.h"
#include "elements.h"
#include "oracle.h"

#endif /* SDPA_TESTS_ABI_UTIL_H */
