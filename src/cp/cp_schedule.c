/* cp_schedule.c - the tasks of every ring step (see cp_schedule.h). */
#include "cp_schedule.h"

int cp_chunks_per_rank(sdpa_cp_layout_t layout)
{
    switch (layout) {
    case SDPA_CP_LAYOUT_CONTIGUOUS:
        return 1;
    case SDPA_CP_LAYOUT_ZIGZAG:
        return 2;
    }
    return 0;
}

int64_t cp_global_chunk(sdpa_cp_layout_t layout, int ranks, int rank, int chunk)
{
    int chunks = cp_chunks_per_rank(layout);
    if (chunks == 0 || ranks < 1 || rank < 0 || rank >= ranks || chunk < 0 || chunk >= chunks)
        return -1;
    if (layout == SDPA_CP_LAYOUT_CONTIGUOUS)
        return rank;
    /* ZIGZAG: chunk r from the front, chunk 2N - 1 - r from the back, so that
     * the work of the early chunk (few keys before it) and of the late one
     * (many) add up to the same on every rank. */
    return chunk == 0 ? rank : 2 * (int64_t)ranks - 1 - rank;
}

int cp_block_owner(int ranks, int rank, int step)
{
    return (int)(((int64_t)rank - step % ranks + ranks) % ranks);
}

int cp_step_tasks(sdpa_cp_layout_t layout, int causal, int ranks, int rank, int step,
                  cp_task_t tasks[CP_MAX_TASKS])
{
    int chunks = cp_chunks_per_rank(layout);
    if (chunks == 0 || ranks < 1 || rank < 0 || rank >= ranks || step < 0 || step >= ranks)
        return -1;
    int owner = cp_block_owner(ranks, rank, step);
    int count = 0;
    for (int q = 0; q < chunks; q++) {
        int64_t query_chunk = cp_global_chunk(layout, ranks, rank, q);
        for (int k = 0; k < chunks; k++) {
            int64_t key_chunk = cp_global_chunk(layout, ranks, owner, k);
            sdpa_mask_kind_t mask = SDPA_MASK_NONE;
            if (causal && key_chunk > query_chunk)
                continue; /* every key follows every query: nothing to see */
            if (causal && key_chunk == query_chunk)
                mask = SDPA_MASK_CAUSAL_TOP_LEFT;
            tasks[count++] = (cp_task_t){.q_chunk = q, .k_chunk = k, .mask = mask};
        }
    }
    return count;
}
