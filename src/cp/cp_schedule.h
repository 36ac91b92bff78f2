/*
 * cp_schedule.h - which blocks of attention a rank computes at each ring
 * step: no device, no MPI, so that the load balance and the coverage of the
 * causal mask are unit-tested on their own (tests/cp/test_cp_schedule.c).
 *
 * A rank's L tokens are C chunks of L / C tokens (C = 1 for CONTIGUOUS, 2
 * for ZIGZAG), each a run of consecutive global tokens: a global chunk.
 * At step t rank r holds the K/V block of rank (r - t) mod N, whose C chunks
 * are global chunks too. One task is the attention of one local query chunk
 * over one key chunk of the block, with the mask the global causal mask
 * leaves there: none when the key chunk precedes the query chunk, the
 * top-left causal mask on the diagonal (the same chunk), and no task at all
 * when the key chunk follows it.
 */
#ifndef SDPA_CP_SCHEDULE_H
#define SDPA_CP_SCHEDULE_H

#include <stdint.h>

#include "sdpa.h"
#include "sdpa_cp_transport.h"

/* The most chunks a rank holds, and tasks in one step (C * C). */
#define CP_MAX_CHUNKS 2
#define CP_MAX_TASKS (CP_MAX_CHUNKS * CP_MAX_CHUNKS)

typedef struct cp_task {
    int q_chunk;           /* local query chunk, 0 .. C - 1 */
    int k_chunk;           /* chunk of the block held at this step, 0 .. C - 1 */
    sdpa_mask_kind_t mask; /* SDPA_MASK_NONE or SDPA_MASK_CAUSAL_TOP_LEFT */
} cp_task_t;

/* C for layout: 1 (CONTIGUOUS), 2 (ZIGZAG), 0 for an unknown layout. */
int cp_chunks_per_rank(sdpa_cp_layout_t layout);

/* The global chunk (0 .. C N - 1, in sequence order) that local chunk c of
 * rank holds; -1 if an argument is out of range. */
int64_t cp_global_chunk(sdpa_cp_layout_t layout, int ranks, int rank, int chunk);

/* The rank whose K/V block rank holds at step (0 .. ranks - 1). */
int cp_block_owner(int ranks, int rank, int step);

/* Fills tasks (CP_MAX_TASKS entries) with the tasks of rank at step, query
 * chunks in order and key chunks in order within each: that order is the
 * order in which partial results are merged and gradients added, so it is
 * part of what makes results reproducible. causal 0: every pair, unmasked.
 * Returns the number of tasks (0 .. C * C), or -1 for arguments out of
 * range. */
int cp_step_tasks(sdpa_cp_layout_t layout, int causal, int ranks, int rank, int step,
                  cp_task_t tasks[CP_MAX_TASKS]);

#endif /* SDPA_CP_SCHEDULE_H */
