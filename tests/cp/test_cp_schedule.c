/*
 * test_cp_schedule.c - the ring's schedule (src/cp/cp_schedule.c) without a
 * device or MPI: over all ranks and steps, every pair of chunks the causal
 * mask leaves visible is computed exactly once with the right mask, the
 * zigzag layout gives every rank the same work at every step, and local rows
 * map to global tokens one to one.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "cp_schedule.h"
#include "sdpa_cp_transport.h"

#define MAX_RANKS 8

/* Work of a task in units of one full chunk pair: the diagonal is half. */
static double task_work(const cp_task_t *t)
{
    return t->mask == SDPA_MASK_NONE ? 1.0 : 0.5;
}

START_TEST(test_every_pair_once)
{
    const sdpa_cp_layout_t layouts[2] = {SDPA_CP_LAYOUT_CONTIGUOUS, SDPA_CP_LAYOUT_ZIGZAG};
    for (int l = 0; l < 2; l++)
        for (int causal = 0; causal < 2; causal++)
            for (int ranks = 1; ranks <= MAX_RANKS; ranks++) {
                int chunks = cp_chunks_per_rank(layouts[l]);
                int total = chunks * ranks;
                int *seen = calloc((size_t)(total * total), sizeof(int));
                ck_assert_ptr_nonnull(seen);
                for (int rank = 0; rank < ranks; rank++) {
                    int owners = 0;
                    for (int step = 0; step < ranks; step++) {
                        cp_task_t tasks[CP_MAX_TASKS];
                        int n = cp_step_tasks(layouts[l], causal, ranks, rank, step, tasks);
                        ck_assert_int_ge(n, 0);
                        int owner = cp_block_owner(ranks, rank, step);
                        owners |= 1 << owner;
                        for (int i = 0; i < n; i++) {
                            int64_t q = cp_global_chunk(layouts[l], ranks, rank, tasks[i].q_chunk);
                            int64_t k = cp_global_chunk(layouts[l], ranks, owner, tasks[i].k_chunk);
                            ck_assert(q >= 0 && k >= 0);
                            seen[q * total + k]++;
                            sdpa_mask_kind_t want = causal && q == k ? SDPA_MASK_CAUSAL_TOP_LEFT
                                                                     : SDPA_MASK_NONE;
                            ck_assert_int_eq(tasks[i].mask, want);
                            if (i > 0) /* query chunks in order, key chunks in order */
                                ck_assert(tasks[i - 1].q_chunk < tasks[i].q_chunk ||
                                          (tasks[i - 1].q_chunk == tasks[i].q_chunk &&
                                           tasks[i - 1].k_chunk < tasks[i].k_chunk));
                        }
                    }
                    ck_assert_int_eq(owners, (1 << ranks) - 1); /* every block once */
                }
                for (int q = 0; q < total; q++)
                    for (int k = 0; k < total; k++)
                        ck_assert_msg(seen[q * total + k] == (!causal || k <= q),
                                      "layout %d causal %d ranks %d: chunk pair (%d, %d) computed "
                                      "%d times",
                                      l, causal, ranks, q, k, seen[q * total + k]);
                free(seen);
            }
}
END_TEST

/* The reason for ZIGZAG: with a causal mask every rank does two chunk pairs
 * of work at every step; contiguous shards leave rank r idle after its
 * r + 1 first steps. */
START_TEST(test_zigzag_balances_causal_work)
{
    for (int ranks = 1; ranks <= MAX_RANKS; ranks++)
        for (int rank = 0; rank < ranks; rank++) {
            int busy_steps = 0;
            for (int step = 0; step < ranks; step++) {
                cp_task_t tasks[CP_MAX_TASKS];
                int n = cp_step_tasks(SDPA_CP_LAYOUT_ZIGZAG, 1, ranks, rank, step, tasks);
                double work = 0;
                for (int i = 0; i < n; i++)
                    work += task_work(&tasks[i]);
                ck_assert_msg(work == 2.0, "zigzag: rank %d of %d, step %d: work %g", rank, ranks,
                              step, work);
                n = cp_step_tasks(SDPA_CP_LAYOUT_CONTIGUOUS, 1, ranks, rank, step, tasks);
                busy_steps += n > 0;
            }
            ck_assert_int_eq(busy_steps, rank + 1);
        }
}
END_TEST

START_TEST(test_global_tokens)
{
    const sdpa_cp_layout_t layouts[2] = {SDPA_CP_LAYOUT_CONTIGUOUS, SDPA_CP_LAYOUT_ZIGZAG};
    const int64_t len = 6;
    for (int l = 0; l < 2; l++)
        for (int ranks = 1; ranks <= MAX_RANKS; ranks++) {
            char seen[MAX_RANKS * 6] = {0};
            for (int rank = 0; rank < ranks; rank++)
                for (int64_t i = 0; i < len; i++) {
                    int64_t g = sdpa_cp_global_token(layouts[l], ranks, rank, len, i);
                    ck_assert(g >= 0 && g < ranks * len);
                    ck_assert_int_eq(seen[g], 0);
                    seen[g] = 1;
                }
        }
    /* 4 ranks, 6 tokens each, chunks of 3: rank 1 holds chunks 1 and 6. */
    const int64_t want[6] = {3, 4, 5, 18, 19, 20};
    for (int64_t i = 0; i < 6; i++)
        ck_assert_int_eq(sdpa_cp_global_token(SDPA_CP_LAYOUT_ZIGZAG, 4, 1, 6, i), want[i]);
    ck_assert_int_eq(sdpa_cp_global_token(SDPA_CP_LAYOUT_CONTIGUOUS, 4, 1, 6, 2), 8);
}
END_TEST

START_TEST(test_out_of_range)
{
    cp_task_t tasks[CP_MAX_TASKS];
    ck_assert_int_eq(cp_step_tasks(SDPA_CP_LAYOUT_ZIGZAG, 1, 2, 2, 0, tasks), -1);
    ck_assert_int_eq(cp_step_tasks(SDPA_CP_LAYOUT_ZIGZAG, 1, 2, 0, 2, tasks), -1);
    ck_assert_int_eq(cp_step_tasks((sdpa_cp_layout_t)7, 1, 2, 0, 0, tasks), -1);
    ck_assert_int_eq(sdpa_cp_global_token(SDPA_CP_LAYOUT_ZIGZAG, 2, 0, 5, 0), -1); /* odd */
    ck_assert_int_eq(sdpa_cp_global_token(SDPA_CP_LAYOUT_ZIGZAG, 2, 0, 4, 4), -1);
    ck_assert_int_eq(sdpa_cp_global_token(SDPA_CP_LAYOUT_CONTIGUOUS, 0, 0, 4, 0), -1);
    ck_assert_int_eq(sdpa_cp_global_token(SDPA_CP_LAYOUT_CONTIGUOUS, 2, 2, 4, 0), -1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("context-parallel schedule");
    TCase *t = tcase_create("schedule");
    tcase_add_test(t, test_every_pair_once);
    tcase_add_test(t, test_zigzag_balances_causal_work);
    tcase_add_test(t, test_global_tokens);
    tcase_add_test(t, test_out_of_range);
    suite_add_tcase(s, t);
    SRunner *runner = srunner_create(s);
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
