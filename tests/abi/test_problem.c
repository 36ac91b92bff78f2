/* test_problem.c - src/validate/problem_check.c directly: the normalized copy (a cache
 * key), the shape, the struct size/version rule and the names. The refusals
 * themselves are in the invalid table (invalid_table.c). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_main.h"
#include "abi_util.h"
#include "error.h"
#include "problem.h"
#include "problem_llm.h"

/* "B3 Hq8 Hkv2 G4 Sq5 Sk7 D64 Dv64" */
static void shape_text(const sdpa_shape_t *s, char *out, size_t size)
{
    snprintf(out, size, "B%lld Hq%lld Hkv%lld G%lld Sq%lld Sk%lld D%lld Dv%lld", (long long)s->batch,
             (long long)s->q_heads, (long long)s->kv_heads, (long long)s->kv_group_size,
             (long long)s->q_len, (long long)s->k_len, (long long)s->head_size,
             (long long)s->head_size_v);
}

/* Asserts that every field of got is want's. */
static void assert_shape(const sdpa_shape_t *got, const sdpa_shape_t *want)
{
    char g[160], w[160];
    shape_text(got, g, sizeof(g));
    shape_text(want, w, sizeof(w));
    ck_assert_msg(strcmp(g, w) == 0, "shape %s, expected %s", g, w);
}

START_TEST(test_shape_and_defaults)
{
    sdpa_problem_desc_t d, out;
    sdpa_shape_t shape;
    problem_init(&d, SDPA_FORWARD_TRAINING, 3, 8, 2, 5, 7, 64, SDPA_DTYPE_BF16, SDPA_DTYPE_F16);
    ck_assert_int_eq(sdpa_problem_check(&d, &out, &shape), SDPA_SUCCESS);
    assert_shape(&shape, &(sdpa_shape_t){3, 8, 2, 4, 5, 7, 64, 64});
    ck_assert_int_eq(out.kq_acc_dtype, SDPA_DTYPE_F32);
    ck_assert_int_eq(out.vs_acc_dtype, SDPA_DTYPE_F32);
    ck_assert_uint_eq(sdpa_workspace_bytes(&out, &shape), 3 * 8 * 5 * sizeof(float));
    d.prop_kind = SDPA_FORWARD_INFERENCE;
    ck_assert_int_eq(sdpa_problem_check(&d, &out, &shape), SDPA_SUCCESS);
    ck_assert_uint_eq(sdpa_workspace_bytes(&out, &shape), 0);
    d.kq_acc_dtype = SDPA_DTYPE_F16;
    ck_assert_int_eq(sdpa_problem_check(&d, &out, &shape), SDPA_SUCCESS);
    ck_assert_int_eq(out.kq_acc_dtype, SDPA_DTYPE_F16);
}
END_TEST

/* The same problem written two ways gives byte-identical copies: garbage in
 * padding and in members the problem does not use is dropped. */
START_TEST(test_normalized_copy)
{
    sdpa_problem_desc_t clean, messy, a, b;
    sdpa_shape_t shape;
    problem_init(&clean, SDPA_FORWARD_INFERENCE, 1, 4, 4, 8, 8, 32, SDPA_DTYPE_F16, SDPA_DTYPE_F16);
    clean.mask_kind = SDPA_MASK_CAUSAL_TOP_LEFT;

    memset(&messy, 0xab, sizeof(messy));
    messy.struct_size = sizeof(messy);
    messy.struct_version = SDPA_PROBLEM_DESC_VERSION;
    messy.prop_kind = clean.prop_kind;
    messy.q = clean.q;
    messy.k = clean.k;
    messy.v = clean.v;
    messy.dst = clean.dst;
    messy.mask_kind = clean.mask_kind;
    messy.mask = dense_tensor(SDPA_DTYPE_UNDEF, 9, 9, 9, 9); /* no tensor, odd dims */
    messy.scale_kind = SDPA_SCALE_HOST;
    messy.scale_dtype = SDPA_DTYPE_BF16; /* unused with a host scale */
    messy.invert_scale = 0;
    messy.softmax_kind = SDPA_SOFTMAX_ACCURATE;
    messy.kq_acc_dtype = SDPA_DTYPE_UNDEF; /* = F32 */
    messy.vs_acc_dtype = SDPA_DTYPE_F32;
    memset(&messy.k_quant, 0, sizeof(messy.k_quant));
    messy.k_quant.group_size = 16; /* unused without PER_GROUP */
    messy.k_quant.scales_dtype = SDPA_DTYPE_F32;
    memset(&messy.v_quant, 0, sizeof(messy.v_quant));
    memset(&messy.dropout, 0, sizeof(messy.dropout));
    messy.dropout.host_scalars = 1;          /* unused without dropout */
    messy.diff_dst = messy.diff_q = clean.q; /* ignored in forward */
    messy.diff_k = messy.diff_v = messy.ds = clean.k;
    messy.deterministic = 1;
    /* ABI 1.1 members that are off, with garbage beside the switch. */
    memset(&messy.varlen, 0, sizeof(messy.varlen));
    messy.varlen.max_seqlen_q = 77;
    memset(&messy.paged_kv, 0, sizeof(messy.paged_kv));
    messy.paged_kv.block_table_stride = 5;
    memset(&messy.window, 0, sizeof(messy.window));
    messy.window.left = 3;
    messy.softcap = -0.0f;
    messy.alibi = SDPA_ALIBI_NONE;
    messy.num_splits = 0;
    messy.sinks = 0; /* ABI 1.2 */

    ck_assert_int_eq(sdpa_problem_check(&clean, &a, &shape), SDPA_SUCCESS);
    ck_assert_msg(sdpa_problem_check(&messy, &b, &shape) == SDPA_SUCCESS, "%s",
                  sdpa_error_message());
    ck_assert_int_eq(memcmp(&a, &b, sizeof(a)), 0);
    /* A real difference stays. */
    clean.softmax_kind = SDPA_SOFTMAX_INF_AS_ZERO;
    ck_assert_int_eq(sdpa_problem_check(&clean, &a, &shape), SDPA_SUCCESS);
    ck_assert_int_ne(memcmp(&a, &b, sizeof(a)), 0);
}
END_TEST

START_TEST(test_struct_rule)
{
    const size_t v1 = 100, known = 100;
    ck_assert_int_eq(sdpa_struct_check("desc", 100, 1, 1, v1, known), SDPA_SUCCESS);
    ck_assert_int_eq(sdpa_struct_check("desc", 99, 1, 1, v1, known), SDPA_ERROR_INVALID_STRUCT);
    ck_assert_ptr_nonnull(strstr(sdpa_error_message(), "desc->struct_size = 99"));
    ck_assert_int_eq(sdpa_struct_check("desc", 101, 1, 1, v1, known), SDPA_ERROR_INVALID_STRUCT);
    ck_assert_int_eq(sdpa_struct_check("desc", 100, 0, 1, v1, known), SDPA_ERROR_INVALID_STRUCT);
    ck_assert_int_eq(sdpa_struct_check("desc", 100, 2, 1, v1, known), SDPA_ERROR_INVALID_STRUCT);
    ck_assert_ptr_nonnull(strstr(sdpa_error_message(), "desc->struct_version = 2"));
    /* A later version that grew: every size from v1's to the known one. */
    ck_assert_int_eq(sdpa_struct_check("args", 120, 2, 2, v1, 140), SDPA_SUCCESS);
    ck_assert_int_eq(sdpa_struct_check("args", 141, 2, 2, v1, 140), SDPA_ERROR_INVALID_STRUCT);
}
END_TEST

/* ABI 1.0 callers pass version 1 structs: the 1.1 members they do not
 * have read as zero (off), whatever lies past their struct_size; a version
 * 1 struct of the version 2 size contradicts its version. */
START_TEST(test_version1_callers)
{
    sdpa_problem_desc_t d, out;
    sdpa_shape_t shape;
    memset(&d, 0x5a, sizeof(d));
    problem_init(&d, SDPA_FORWARD_INFERENCE, 1, 2, 2, 3, 5, 8, SDPA_DTYPE_F32, SDPA_DTYPE_F32);
    memset((char *)&d + SDPA_PROBLEM_DESC_V1_SIZE, 0x5a, sizeof(d) - SDPA_PROBLEM_DESC_V1_SIZE);
    d.struct_version = 1;
    d.struct_size = (uint32_t)SDPA_PROBLEM_DESC_V1_SIZE;
    ck_assert_msg(sdpa_problem_check(&d, &out, &shape) == SDPA_SUCCESS, "%s",
                  sdpa_error_message());
    ck_assert_uint_eq(out.struct_version, SDPA_PROBLEM_DESC_VERSION);
    ck_assert_uint_eq(out.varlen.enabled | out.paged_kv.enabled | out.window.enabled, 0);
    ck_assert(out.softcap == 0.0f && out.alibi == SDPA_ALIBI_NONE && out.num_splits == 0);
    ck_assert_uint_eq(out.sinks, 0); /* ABI 1.2 */
    ck_assert_int_eq(shape.k_len, 5);
    d.struct_size = sizeof(d);
    ck_assert_int_eq(sdpa_problem_check(&d, &out, &shape), SDPA_ERROR_INVALID_STRUCT);
    ck_assert_ptr_nonnull(strstr(sdpa_error_message(), "larger than version 1"));

    float buffer[64];
    sdpa_exec_args_t args, copy;
    memset(&args, 0x5a, sizeof(args));
    args.struct_size = (uint32_t)SDPA_EXEC_ARGS_V1_SIZE;
    args.struct_version = 1;
    args.q = args.k = args.v = buffer;
    args.dst = buffer + 32;
    args.num_wait_events = 0;
    args.signal_event = NULL;
    ck_assert_msg(sdpa_exec_args_check(&out, &args, &copy) == SDPA_SUCCESS, "%s",
                  sdpa_error_message());
    ck_assert_ptr_null(copy.cu_seqlens_q);
    ck_assert_ptr_null(copy.alibi_slopes);
}
END_TEST

START_TEST(test_exec_args_copy)
{
    sdpa_problem_desc_t d, p;
    sdpa_shape_t shape;
    problem_init(&d, SDPA_FORWARD_INFERENCE, 1, 1, 1, 2, 2, 4, SDPA_DTYPE_F32, SDPA_DTYPE_F32);
    ck_assert_int_eq(sdpa_problem_check(&d, &p, &shape), SDPA_SUCCESS);
    float buffer[16];
    sdpa_exec_args_t args, out;
    memset(&args, 0, sizeof(args));
    args.struct_size = sizeof(args);
    args.struct_version = SDPA_EXEC_ARGS_VERSION;
    args.q = args.k = args.v = buffer;
    args.dst = buffer + 8;
    args.scale = 0.5f;
    ck_assert_int_eq(sdpa_exec_args_check(&p, &args, &out), SDPA_SUCCESS);
    ck_assert_ptr_eq(out.dst, buffer + 8);
    ck_assert_float_eq(out.scale, 0.5f);
    ck_assert_int_eq(sdpa_exec_args_check(&p, NULL, &out), SDPA_ERROR_INVALID_ARGUMENT);
    ck_assert_str_eq(sdpa_error_message(), "args is NULL");
}
END_TEST

START_TEST(test_names)
{
    ck_assert_str_eq(sdpa_dtype_name(SDPA_DTYPE_BF16), "bf16");
    ck_assert_str_eq(sdpa_dtype_name((sdpa_dtype_t)42), "invalid");
    ck_assert_int_eq(sdpa_dtype_bits(SDPA_DTYPE_U4), 4);
    ck_assert_int_eq(sdpa_dtype_bits(SDPA_DTYPE_UNDEF), 0);
    ck_assert(sdpa_dtype_is_float(SDPA_DTYPE_F16) && !sdpa_dtype_is_float(SDPA_DTYPE_S8));
    ck_assert(sdpa_dtype_is_quantized(SDPA_DTYPE_S4) && !sdpa_dtype_is_quantized(SDPA_DTYPE_S32));
    ck_assert_str_eq(sdpa_prop_kind_name(SDPA_BACKWARD), "BACKWARD");
    ck_assert_str_eq(sdpa_mask_kind_name(SDPA_MASK_CAUSAL_BOTTOM_RIGHT), "CAUSAL_BOTTOM_RIGHT");
    ck_assert_str_eq(sdpa_scale_kind_name(SDPA_SCALE_DEVICE), "DEVICE");
    ck_assert_str_eq(sdpa_softmax_kind_name(SDPA_SOFTMAX_INF_AS_ZERO), "INF_AS_ZERO");
    ck_assert_str_eq(sdpa_quant_kind_name(SDPA_QUANT_PER_GROUP), "PER_GROUP");
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_ONCE(test_shape_and_defaults), TEST_ONCE(test_normalized_copy),
            TEST_ONCE(test_struct_rule),        TEST_ONCE(test_version1_callers),
            TEST_ONCE(test_exec_args_copy),     TEST_ONCE(test_names),
    };
    const test_suite_t suite = {.name = "problem"};
    return test_run_table(&suite, tests, TEST_COUNT(tests));
}
