/* small_problem.c - one small problem, its inputs and ref's outputs. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "small_problem.h"

sdpa_tensor_desc_t small_dense(sdpa_dtype_t dtype, int64_t b, int64_t h, int64_t s, int64_t d)
{
    sdpa_tensor_desc_t t;
    tensor_layout(&t, dtype, (const int64_t[]){b, h, s, d}, ORDER_BHSD, 0);
    return t;
}

static int backward(const small_problem_t *sp)
{
    return sp->p.prop_kind == SDPA_BACKWARD;
}

void small_problem_args(const small_problem_t *sp, const test_tensor_t *out, sdpa_exec_args_t *a)
{
    const test_tensor_t *t[ROLE_COUNT] = {&sp->q, &sp->k, &sp->v, &out[0]};
    void *workspace = NULL;
    if (backward(sp)) {
        const test_tensor_t *grads[ROLE_COUNT] = {&sp->q,   &sp->k,  &sp->v,  &sp->o,
                                                  &sp->d_o, &out[0], &out[1], &out[2]};
        memcpy(t, grads, sizeof(t));
        workspace = sp->ws.data;
    }
    attention_exec_args(t, workspace, 0.25f, a);
}

void small_outputs_alloc(const small_problem_t *sp, test_tensor_t *out)
{
    const sdpa_problem_desc_t *p = &sp->p;
    const sdpa_tensor_desc_t *descs[SMALL_OUTPUTS] = {backward(sp) ? &p->diff_q : &p->dst,
                                                      &p->diff_k, &p->diff_v};
    memset(out, 0, SMALL_OUTPUTS * sizeof(*out));
    for (int i = 0; i < sp->outputs; i++)
        tensor_alloc(&suite_env, &out[i], descs[i]);
}

void small_outputs_poison(const small_problem_t *sp, test_tensor_t *out)
{
    for (int i = 0; i < sp->outputs; i++)
        memset(out[i].data, 0xff, out[i].bytes);
}

void small_outputs_free(const small_problem_t *sp, test_tensor_t *out)
{
    for (int i = 0; i < sp->outputs; i++)
        tensor_free(&suite_env, &out[i]);
}

int small_outputs_identical(const small_problem_t *sp, const test_tensor_t *out,
                            const test_tensor_t *other)
{
    for (int i = 0; i < sp->outputs; i++)
        if (memcmp(out[i].data, other[i].data, out[i].bytes) != 0)
            return 0;
    return 1;
}

int small_outputs_match_ref(const small_problem_t *sp, const test_tensor_t *out, double abs_tol,
                            double ulps, char *why, size_t why_size)
{
    for (int i = 0; i < sp->outputs; i++) {
        compare_result_t r;
        tensor_compare(&out[i].desc, out[i].data, sp->want[i].data, abs_tol, ulps, &r);
        if (r.bad) {
            snprintf(why, why_size,
                     "output %d: %lld of %lld elements differ from ref (worst: %.6g, ref %.6g)", i,
                     (long long)r.bad, (long long)r.checked, r.worst_got, r.worst_want);
            return 0;
        }
    }
    return 1;
}

static void run_ref(const sdpa_problem_desc_t *p, const sdpa_exec_args_t *a)
{
    sdpa_primitive_t *prim = NULL;
    ck_assert_msg(suite_env.ref->primitive_create(suite_env.ref_ctx, p, &prim) == SDPA_SUCCESS,
                  "ref create: %s", suite_env.ref->last_error());
    ck_assert_msg(suite_env.ref->primitive_execute(prim, a) == SDPA_SUCCESS, "ref execute: %s",
                  suite_env.ref->last_error());
    suite_env.ref->primitive_destroy(prim);
}

void small_problem_open(small_problem_t *sp, const sdpa_problem_desc_t *p, uint64_t seed)
{
    memset(sp, 0, sizeof(*sp));
    sp->p = *p;
    sp->outputs = backward(sp) ? 3 : 1;
    test_rng_t rng = {seed};
    tensor_alloc(&suite_env, &sp->q, &p->q);
    tensor_alloc(&suite_env, &sp->k, &p->k);
    tensor_alloc(&suite_env, &sp->v, &p->v);
    tensor_fill_uniform(&sp->q, &rng, -1, 1);
    tensor_fill_uniform(&sp->k, &rng, -1, 1);
    tensor_fill_uniform(&sp->v, &rng, -1, 1);
    small_outputs_alloc(sp, sp->want);
    sdpa_exec_args_t a;
    if (backward(sp)) {
        tensor_alloc(&suite_env, &sp->o, &p->dst);
        sdpa_tensor_desc_t ws =
                small_dense(SDPA_DTYPE_F32, p->q.dims[0], p->q.dims[1], p->q.dims[2], 1);
        tensor_alloc(&suite_env, &sp->ws, &ws);
        tensor_alloc(&suite_env, &sp->d_o, &p->diff_dst);
        tensor_fill_uniform(&sp->d_o, &rng, -1, 1);
        sdpa_problem_desc_t train = *p;
        train.prop_kind = SDPA_FORWARD_TRAINING;
        small_problem_args(sp, sp->want, &a);
        run_ref(&train, &a);
    }
    small_problem_args(sp, sp->want, &a);
    run_ref(p, &a);
}

void small_problem_close(small_problem_t *sp)
{
    test_tensor_t *inputs[] = {&sp->q, &sp->k, &sp->v, &sp->o, &sp->ws, &sp->d_o};
    for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++)
        tensor_free(&suite_env, inputs[i]);
    small_outputs_free(sp, sp->want);
}
