/* test_fwd_plan.c - variant, configuration, specialization constants and
 * launch geometry of forward problems. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "check_main.h"
#include "core_fixtures.h"
#include "error.h"
#include "bwd_plan.h"
#include "fwd_plan.h"
#include "gpu_models.h"
#include "kernel_abi_decode.h"

static sdpa_device_info_t cpu;

static void setup(void)
{
    fixture_cpu_device(&cpu);
    fixture_setenv("SDPA_CONFIG", NULL);
    fixture_setenv("QUANTIZED_SDPA_CONFIG", NULL);
}

static int get_int(const sdpa_fwd_plan_t *plan, sdpa_spec_id_t id)
{
    return sdpa_spec_values_get_int(&plan->constants, id);
}

static int get_bool(const sdpa_fwd_plan_t *plan, sdpa_spec_id_t id)
{
    return sdpa_spec_values_get_bool(&plan->constants, id);
}

static void plan_ok(const sdpa_problem_desc_t *p, const sdpa_shape_t *s,
                    const sdpa_device_info_t *dev, sdpa_fwd_plan_t *plan)
{
    sdpa_status_t status = sdpa_fwd_plan_make(p, s, dev, plan);
    ck_assert_msg(status == SDPA_SUCCESS, "%s: %s", sdpa_status_string(status),
                  sdpa_error_message());
    /* K or V read from global memory only in the variant that has the code
     * (SDPA_FWD_GLOBAL_KV_FIELD): the plain one would stage them silently. */
    const int global_kv = sdpa_spec_values_get_bool(&plan->constants, SDPA_SC_K_FROM_GLOBAL) ||
                          sdpa_spec_values_get_bool(&plan->constants, SDPA_SC_V_FROM_GLOBAL);
    ck_assert_msg((strcmp(plan->variant, SDPA_FWD_SOURCE SDPA_FWD_GLOBAL_KV_FIELD) == 0) ==
                          global_kv,
                  "variant %s with K/V from global memory %d", plan->variant, global_kv);
}

/* sdpa_fwd_plan_make refuses the problem with status, and its message says
 * why (contains why). */
static void plan_refused(const sdpa_problem_desc_t *p, const sdpa_shape_t *s,
                         const sdpa_device_info_t *dev, sdpa_status_t status, const char *why)
{
    sdpa_fwd_plan_t plan;
    ck_assert_int_eq(sdpa_fwd_plan_make(p, s, dev, &plan), status);
    ck_assert_msg(strstr(sdpa_error_message(), why) != NULL, "\"%s\" does not say \"%s\"",
                  sdpa_error_message(), why);
}

/* Backward-only constants; every other attention constant is forward's. */
static int is_backward_only(uint32_t id)
{
    return (id >= SDPA_SC_UNROLL_M_BCBR && id <= SDPA_SC_WG_N_DBR) ||
           (id >= SDPA_SC_WITH_DS && id <= SDPA_SC_DETERMINISTIC) || id == SDPA_SC_DS_DT ||
           id == SDPA_SC_DQ_PARTIALS || id == SDPA_SC_BWD_UNIT_D_STRIDES;
}

/* The merge kernel's own constants (sdpa_merge.cl). */
static int is_merge_only(uint32_t id)
{
    return id >= SDPA_SC_MERGE_NUM_STATES && id <= SDPA_SC_MERGE_WRITE_LSE;
}

START_TEST(basic_f16_problem)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t s;
    fixture_problem(SDPA_DTYPE_F16, 2, 8, 8, 100, 300, 64, &p, &s);
    sdpa_fwd_plan_t plan;
    plan_ok(&p, &s, &cpu, &plan);

    ck_assert_int_eq(plan.d_max, 64);
    ck_assert_uint_eq(plan.subgroup_size, 16);
    ck_assert_str_eq(plan.config_string,
                     "fwd d64 sg16 cfg=64,64,64,64,1,4,1,4 (table: cpu h64 fma)");
    ck_assert_str_eq(plan.build_flags, "");
    /* Sk > 256: BQ = 256 in 4 sub-groups, BK = 64. */
    ck_assert_launch(plan.local_size, plan.group_count, 16, 4, 1, 1 /* ceil(100 / 256) */, 8, 2);
    ck_assert_uint_eq(plan.slm_bytes, SDPA_FWD_SLM_BYTES(64, 256, 64, 1));
    ck_assert_int_eq(plan.head_size, 64);
    ck_assert_int_eq(plan.k_len, 300);
    ck_assert_int_eq(plan.q_len, 100);

    /* Strides: K, Q, V, O, then the (absent) mask. */
    static const int64_t expected[SDPA_FWD_STRIDE_ARGS] = {8 * 300 * 64,
                                                           300 * 64,
                                                           64,
                                                           1,
                                                           8 * 100 * 64,
                                                           100 * 64,
                                                           64,
                                                           1,
                                                           8 * 300 * 64,
                                                           300 * 64,
                                                           64,
                                                           1,
                                                           8 * 100 * 64,
                                                           100 * 64,
                                                           64,
                                                           1,
                                                           0,
                                                           0,
                                                           0,
                                                           0};
    ck_assert_mem_eq(plan.strides, expected, sizeof(expected));

    /* Every forward constant is set, no backward or merge one. */
    for (size_t i = 0; i < sdpa_spec_constant_count; i++) {
        uint32_t id = sdpa_spec_constant_table[i].id;
        if (id < SDPA_SPEC_FIRST_ATTENTION_ID)
            continue;
        int set = sdpa_spec_values_find(&plan.constants, (sdpa_spec_id_t)id) != NULL;
        ck_assert_msg(set == !(is_backward_only(id) || is_merge_only(id)), "%s: set = %d",
                      sdpa_spec_constant_table[i].name, set);
    }

    ck_assert_int_eq(get_int(&plan, SDPA_SC_QRY_DT), SDPA_DTYPE_F16);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_KEY_DT), SDPA_DTYPE_F16);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_VAL_DT), SDPA_DTYPE_F16);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_DST_DT), SDPA_DTYPE_F16);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_MSK_DT), SDPA_DTYPE_UNDEF);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_SCALE_DT), SDPA_DTYPE_F32);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_KEY_SCALES_DT), 0);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_KV_GROUP_SIZE), 1);
    ck_assert(!get_bool(&plan, SDPA_SC_TRANSPOSE_K));
    ck_assert(get_bool(&plan, SDPA_SC_D_FULL));
    ck_assert(!get_bool(&plan, SDPA_SC_Q1_GQA_BATCH));
    ck_assert(get_bool(&plan, SDPA_SC_WITH_ATTN_SCALE));
    ck_assert(get_bool(&plan, SDPA_SC_WITH_HOST_SCALE));
    ck_assert(!get_bool(&plan, SDPA_SC_INVERT_SCALE));
    ck_assert_int_eq(get_int(&plan, SDPA_SC_MASK_KIND), SDPA_MASK_NONE);
    ck_assert(!get_bool(&plan, SDPA_SC_BROADCAST_MASK_Q));
    ck_assert(!get_bool(&plan, SDPA_SC_SOFTMAX_INF_AS_ZERO));
    ck_assert(!get_bool(&plan, SDPA_SC_KQ_F16_ACC));
    ck_assert(!get_bool(&plan, SDPA_SC_VS_F16_ACC));
    ck_assert(!get_bool(&plan, SDPA_SC_IS_TRAINING));
    ck_assert(get_bool(&plan, SDPA_SC_REMAINDER_Q)); /* 100 % 256 */
    ck_assert_int_eq(get_int(&plan, SDPA_SC_UNROLL_M_KQ), 64);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_WG_M_KQ), 1);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_WG_N_KQ), 4);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_WG_M_VS), 1);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_KEY_SCALES), SDPA_QUANT_NONE);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_KEY_GROUP_SIZE), 1);
    ck_assert(!get_bool(&plan, SDPA_SC_WITH_DROPOUT));
    ck_assert(!get_bool(&plan, SDPA_SC_DROPOUT_OUTPUT_MASK));

    /* The constants survive the copy into the caller's struct. */
    ze_module_constants_t mc = sdpa_spec_values_ze(&plan.constants);
    ck_assert_uint_eq(mc.numConstants, plan.constants.count);
    ck_assert_ptr_eq(mc.pConstantValues[0], &plan.constants.slots[0]);
}
END_TEST

START_TEST(no_remainders_when_tiles_divide)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t s;
    fixture_problem(SDPA_DTYPE_BF16, 1, 4, 4, 128, 256, 64, &p, &s);
    sdpa_fwd_plan_t plan;
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert(!get_bool(&plan, SDPA_SC_REMAINDER_Q));
    ck_assert_uint_eq(plan.group_count[0], 2);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_QRY_DT), SDPA_DTYPE_BF16);
}
END_TEST

START_TEST(q1_gqa_decode_batches_query_heads)
{
    /* Sq = 1, 32 query heads over 8 K/V heads: 4 queries per work-group. */
    sdpa_problem_desc_t p;
    sdpa_shape_t s;
    fixture_problem(SDPA_DTYPE_F16, 3, 32, 8, 1, 1000, 128, &p, &s);
    sdpa_fwd_plan_t plan;
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert(get_bool(&plan, SDPA_SC_Q1_GQA_BATCH));
    ck_assert_int_eq(get_int(&plan, SDPA_SC_KV_GROUP_SIZE), 4);
    /* At most 4 rows: the CPU device narrows the tiles to 16 keys and, as
     * D is full and K's and V's rows contiguous, reads K and V from global
     * memory, in sub-group 16. */
    ck_assert_str_eq(plan.config_string, "fwd d128 sg16 cfg=16,16,128,16,1,1,1,1 (table: cpu h128 "
                                         "thin fma, rows<=8 sg16 K global V global)");
    ck_assert(get_bool(&plan, SDPA_SC_V_FROM_GLOBAL));
    ck_assert(get_bool(&plan, SDPA_SC_K_FROM_GLOBAL));
    ck_assert(get_bool(&plan, SDPA_SC_D_FULL));
    ck_assert_uint_eq(plan.subgroup_size, 16);
    ck_assert_uint_eq(plan.local_size[0], 16);
    ck_assert_uint_eq(plan.group_count[0], 1); /* ceil(4 / 16) */
    ck_assert_uint_eq(plan.group_count[1], 8); /* K/V heads */
    ck_assert_uint_eq(plan.group_count[2], 3);
    ck_assert_uint_eq(plan.local_size[1], 1);
    ck_assert(get_bool(&plan, SDPA_SC_REMAINDER_Q)); /* 4 of 16 rows */
    ck_assert_int_eq(get_int(&plan, SDPA_SC_UNROLL_N_KQ), 16);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_UNROLL_N_VS), 16);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_UNROLL_M_KQ), 16);
    ck_assert_int_eq(plan.q_len, 1);

    /* V's head dimension strided: staged, as the kernel reads V only from
     * contiguous rows. */
    p.v.strides[3] = 2;
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert_uint_eq(plan.subgroup_size, 16);
    ck_assert(!get_bool(&plan, SDPA_SC_V_FROM_GLOBAL));
    ck_assert(get_bool(&plan, SDPA_SC_K_FROM_GLOBAL));
    p.v.strides[3] = 1;

    /* Likewise K, and for the emulated f16 accumulation of S: K staged, in
     * sub-group 8 and query tiles of 8. */
    p.k.strides[3] = 2;
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert(!get_bool(&plan, SDPA_SC_K_FROM_GLOBAL));
    ck_assert(get_bool(&plan, SDPA_SC_V_FROM_GLOBAL));
    ck_assert_str_eq(plan.config_string, "fwd d128 sg8 cfg=16,8,128,8,1,1,1,1 (table: cpu h128 "
                                         "thin fma, rows<=4 sg8 V global)");
    ck_assert_uint_eq(plan.local_size[0], 8);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_UNROLL_N_KQ), 8);
    p.k.strides[3] = 1;
    p.kq_acc_dtype = SDPA_DTYPE_F16;
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert_uint_eq(plan.subgroup_size, 8);
    ck_assert(!get_bool(&plan, SDPA_SC_K_FROM_GLOBAL));
    p.kq_acc_dtype = SDPA_DTYPE_F32;

    /* An environment override is taken as it is, in sub-group 16. */
    fixture_setenv("SDPA_CONFIG", "128,16,128,16,1,1,1,1");
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert_str_eq(plan.config_string, "fwd d128 sg16 cfg=128,16,128,16,1,1,1,1 (SDPA_CONFIG)");
    ck_assert(!get_bool(&plan, SDPA_SC_V_FROM_GLOBAL));
    ck_assert(!get_bool(&plan, SDPA_SC_K_FROM_GLOBAL));
    fixture_setenv("SDPA_CONFIG", NULL);

    /* 8 rows: K and V from global memory in the narrow tiles; with K
     * staged they keep the table row (sub-group 8 is for at most 4 rows). */
    fixture_problem(SDPA_DTYPE_F16, 1, 32, 4, 1, 1000, 128, &p, &s);
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert_str_eq(plan.config_string, "fwd d128 sg16 cfg=16,16,128,16,1,1,1,1 (table: cpu h128 "
                                         "thin fma, rows<=8 sg16 K global V global)");
    ck_assert(get_bool(&plan, SDPA_SC_V_FROM_GLOBAL));
    ck_assert(get_bool(&plan, SDPA_SC_K_FROM_GLOBAL));
    p.k.strides[3] = 2;
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert_str_eq(plan.config_string,
                     "fwd d128 sg16 cfg=128,16,128,16,1,1,1,1 (table: cpu h128 thin fma)");
    ck_assert(!get_bool(&plan, SDPA_SC_V_FROM_GLOBAL));
    ck_assert(!get_bool(&plan, SDPA_SC_K_FROM_GLOBAL));
    p.k.strides[3] = 1;

    /* 32 query heads per K/V head are no longer thin. */
    fixture_problem(SDPA_DTYPE_F16, 1, 32, 1, 1, 1000, 128, &p, &s);
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert_str_eq(plan.config_string,
                     "fwd d128 sg16 cfg=64,64,128,64,1,1,1,1 (table: cpu h128 fma)");
    ck_assert_uint_eq(plan.group_count[0], 1); /* ceil(32 / 64) */
    ck_assert_uint_eq(plan.group_count[1], 1);
    ck_assert(get_bool(&plan, SDPA_SC_REMAINDER_Q)); /* 32 of 64 rows */

    /* Sq = 1 without GQA: one query per work-group, one group per head. */
    fixture_problem(SDPA_DTYPE_F16, 2, 16, 16, 1, 1000, 128, &p, &s);
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert(!get_bool(&plan, SDPA_SC_Q1_GQA_BATCH));
    ck_assert_uint_eq(plan.group_count[0], 1);
    ck_assert_uint_eq(plan.group_count[1], 16);
    ck_assert(get_bool(&plan, SDPA_SC_REMAINDER_Q));

    /* GQA with Sq > 1 keeps one group row per query head. */
    fixture_problem(SDPA_DTYPE_F16, 2, 16, 4, 64, 1000, 128, &p, &s);
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert(!get_bool(&plan, SDPA_SC_Q1_GQA_BATCH));
    ck_assert_int_eq(get_int(&plan, SDPA_SC_KV_GROUP_SIZE), 4);
    ck_assert_uint_eq(plan.group_count[0], 1); /* ceil(64 / 64) */
    ck_assert_uint_eq(plan.group_count[1], 16);
}
END_TEST

START_TEST(mask_strides_and_broadcast)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t s;
    fixture_problem(SDPA_DTYPE_F16, 2, 4, 4, 50, 70, 32, &p, &s);
    sdpa_fwd_plan_t plan;
    const int m = SDPA_FWD_ARG_MSK_S0 - SDPA_FWD_ARG_K_S0;

    /* [1, 1, 1, Sk]: one row for everything. */
    p.mask_kind = SDPA_MASK_BUFFER;
    p.mask = fixture_tensor(SDPA_DTYPE_BF16, 1, 1, 1, 70);
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert(get_bool(&plan, SDPA_SC_BROADCAST_MASK_Q));
    ck_assert_int_eq(get_int(&plan, SDPA_SC_MASK_KIND), SDPA_MASK_BUFFER);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_MSK_DT), SDPA_DTYPE_BF16);
    ck_assert_int_eq(plan.strides[m + 0], 0);
    ck_assert_int_eq(plan.strides[m + 1], 0);
    ck_assert_int_eq(plan.strides[m + 2], 0);
    ck_assert_int_eq(plan.strides[m + 3], 1);

    /* [B, 1, Sq, Sk]: heads broadcast. */
    p.mask = fixture_tensor(SDPA_DTYPE_F32, 2, 1, 50, 70);
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert(!get_bool(&plan, SDPA_SC_BROADCAST_MASK_Q));
    ck_assert_int_eq(plan.strides[m + 0], 50 * 70);
    ck_assert_int_eq(plan.strides[m + 1], 0);
    ck_assert_int_eq(plan.strides[m + 2], 70);
    ck_assert_int_eq(plan.strides[m + 3], 1);

    /* [B, Hq, Sq, Sk] with padded rows. */
    p.mask = fixture_tensor(SDPA_DTYPE_F16, 2, 4, 50, 70);
    p.mask.strides[2] = 72;
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert_int_eq(plan.strides[m + 1], 50 * 70);
    ck_assert_int_eq(plan.strides[m + 2], 72);

    /* Causal: no buffer, no mask strides. */
    p.mask_kind = SDPA_MASK_CAUSAL_BOTTOM_RIGHT;
    memset(&p.mask, 0, sizeof(p.mask));
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_MASK_KIND), SDPA_MASK_CAUSAL_BOTTOM_RIGHT);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_MSK_DT), SDPA_DTYPE_UNDEF);
    ck_assert(!get_bool(&plan, SDPA_SC_BROADCAST_MASK_Q));
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(plan.strides[m + i], 0);
}
END_TEST

START_TEST(transposed_k_and_full_head)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t s;
    fixture_problem(SDPA_DTYPE_F16, 1, 2, 2, 40, 300, 40, &p, &s);
    /* K stored [B, H, D, S]. */
    p.k.strides[0] = 2 * 40 * 300;
    p.k.strides[1] = 40 * 300;
    p.k.strides[2] = 1;
    p.k.strides[3] = 300;
    sdpa_fwd_plan_t plan;
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert(get_bool(&plan, SDPA_SC_TRANSPOSE_K));
    ck_assert_int_eq(plan.strides[SDPA_FWD_ARG_K_S2 - SDPA_FWD_ARG_K_S0], 1);
    ck_assert_int_eq(plan.strides[SDPA_FWD_ARG_K_S3 - SDPA_FWD_ARG_K_S0], 300);
    /* D = 40 in the 64 bucket: not full. */
    ck_assert_int_eq(plan.d_max, 64);
    ck_assert(!get_bool(&plan, SDPA_SC_D_FULL));

    /* D = 64 with a 2-byte row stride: full whatever the rows' alignment. */
    fixture_problem(SDPA_DTYPE_F16, 1, 2, 2, 40, 300, 64, &p, &s);
    p.q.strides[2] = 65;
    p.q.strides[1] = 65 * 40;
    p.q.strides[0] = 2 * 65 * 40;
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert(get_bool(&plan, SDPA_SC_D_FULL));
    ck_assert_int_eq(plan.strides[SDPA_FWD_ARG_Q_S2 - SDPA_FWD_ARG_K_S0], 65);
}
END_TEST

START_TEST(scale_softmax_training_and_accumulation)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t s;
    fixture_problem(SDPA_DTYPE_F16, 1, 2, 2, 16, 16, 32, &p, &s);
    sdpa_fwd_plan_t plan;

    p.scale_kind = SDPA_SCALE_DEVICE;
    p.scale_dtype = SDPA_DTYPE_BF16;
    p.invert_scale = 1;
    p.softmax_kind = SDPA_SOFTMAX_INF_AS_ZERO;
    p.prop_kind = SDPA_FORWARD_TRAINING;
    p.kq_acc_dtype = SDPA_DTYPE_F16;
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert(get_bool(&plan, SDPA_SC_WITH_ATTN_SCALE));
    ck_assert(!get_bool(&plan, SDPA_SC_WITH_HOST_SCALE));
    ck_assert(get_bool(&plan, SDPA_SC_INVERT_SCALE));
    ck_assert_int_eq(get_int(&plan, SDPA_SC_SCALE_DT), SDPA_DTYPE_BF16);
    ck_assert(get_bool(&plan, SDPA_SC_SOFTMAX_INF_AS_ZERO));
    ck_assert(get_bool(&plan, SDPA_SC_IS_TRAINING));
    ck_assert(get_bool(&plan, SDPA_SC_KQ_F16_ACC));
    ck_assert(!get_bool(&plan, SDPA_SC_VS_F16_ACC));

    p.scale_kind = SDPA_SCALE_NONE;
    p.scale_dtype = SDPA_DTYPE_UNDEF;
    p.invert_scale = 0;
    p.kq_acc_dtype = SDPA_DTYPE_F32;
    p.vs_acc_dtype = SDPA_DTYPE_F16;
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert(!get_bool(&plan, SDPA_SC_WITH_ATTN_SCALE));
    ck_assert(!get_bool(&plan, SDPA_SC_WITH_HOST_SCALE));
    ck_assert(!get_bool(&plan, SDPA_SC_INVERT_SCALE));
    ck_assert(!get_bool(&plan, SDPA_SC_KQ_F16_ACC));
    ck_assert(get_bool(&plan, SDPA_SC_VS_F16_ACC));

    /* f16 accumulation needs fp16 arithmetic. */
    sdpa_device_info_t no_fp16 = cpu;
    no_fp16.has_fp16 = 0;
    plan_refused(&p, &s, &no_fp16, SDPA_ERROR_UNSUPPORTED, "has no fp16");
}
END_TEST

START_TEST(quantized_kv)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t s;
    fixture_problem(SDPA_DTYPE_F16, 1, 8, 2, 1, 4096, 128, &p, &s);
    p.k.dtype = SDPA_DTYPE_U4;
    p.v.dtype = SDPA_DTYPE_S8;
    p.k_quant = (sdpa_quant_desc_t){SDPA_QUANT_PER_GROUP, SDPA_DTYPE_F16, SDPA_QUANT_PER_TENSOR,
                                    SDPA_DTYPE_U8, 32};
    p.v_quant = (sdpa_quant_desc_t){SDPA_QUANT_PER_TENSOR, SDPA_DTYPE_F32, SDPA_QUANT_NONE,
                                    SDPA_DTYPE_UNDEF, 0};
    sdpa_fwd_plan_t plan;
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_KEY_DT), SDPA_DTYPE_U4);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_VAL_DT), SDPA_DTYPE_S8);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_KEY_SCALES), SDPA_QUANT_PER_GROUP);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_KEY_ZERO_POINTS), SDPA_QUANT_PER_TENSOR);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_VAL_SCALES), SDPA_QUANT_PER_TENSOR);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_VAL_ZERO_POINTS), SDPA_QUANT_NONE);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_KEY_SCALES_DT), SDPA_DTYPE_F16);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_KEY_ZP_DT), SDPA_DTYPE_U8);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_VAL_SCALES_DT), SDPA_DTYPE_F32);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_VAL_ZP_DT), SDPA_DTYPE_UNDEF);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_KEY_GROUP_SIZE), 32);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_VAL_GROUP_SIZE), 1);
    /* 4-bit K keeps the table row on the CPU device; 8-bit K and V read
     * from global memory take the narrow tiles. */
    ck_assert_str_eq(plan.config_string,
                     "fwd d128 sg16 cfg=128,16,128,16,1,1,1,1 (table: cpu h128 thin quant fma)");
    p.k.dtype = SDPA_DTYPE_S8;
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert_str_eq(plan.config_string, "fwd d128 sg16 cfg=16,16,128,16,1,1,1,1 (table: cpu "
                                         "h128 thin quant fma, rows<=8 sg16 K global V global)");
    ck_assert(get_bool(&plan, SDPA_SC_K_FROM_GLOBAL));
    p.k.dtype = SDPA_DTYPE_U4;

    /* Only QUANTIZED_SDPA_CONFIG applies to quantized K/V. */
    fixture_setenv("SDPA_CONFIG", "16,16,16,16,8,1,8,1");
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert_int_eq(plan.source.from_env, 0);
    fixture_setenv("QUANTIZED_SDPA_CONFIG", "16,16,16,16,8,1,8,1");
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert_str_eq(plan.config_string,
                     "fwd d128 sg16 cfg=16,16,16,16,8,1,8,1 (QUANTIZED_SDPA_CONFIG)");
}
END_TEST

START_TEST(dropout_flags)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t s;
    fixture_problem(SDPA_DTYPE_F32, 1, 2, 2, 16, 16, 32, &p, &s);
    p.prop_kind = SDPA_FORWARD_TRAINING;
    p.dropout = (sdpa_dropout_desc_t){1, 1, 0, 1};
    sdpa_fwd_plan_t plan;
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert(get_bool(&plan, SDPA_SC_WITH_DROPOUT));
    ck_assert(get_bool(&plan, SDPA_SC_DROPOUT_HOST_SCALARS));
    ck_assert(!get_bool(&plan, SDPA_SC_DROPOUT_OFFSET));
    ck_assert(get_bool(&plan, SDPA_SC_DROPOUT_OUTPUT_MASK));
    ck_assert_str_eq(plan.config_string,
                     "fwd d32 sg16 cfg=16,16,16,16,2,1,2,1 (table: cpu h32 thin fma f32)");
    p.dropout = (sdpa_dropout_desc_t){1, 0, 1, 0};
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert(!get_bool(&plan, SDPA_SC_DROPOUT_HOST_SCALARS));
    ck_assert(get_bool(&plan, SDPA_SC_DROPOUT_OFFSET));
    ck_assert(!get_bool(&plan, SDPA_SC_DROPOUT_OUTPUT_MASK));
}
END_TEST

START_TEST(env_override_reaches_the_plan)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t s;
    fixture_problem(SDPA_DTYPE_F16, 1, 2, 2, 100, 100, 128, &p, &s);
    sdpa_fwd_plan_t plan;
    fixture_setenv("SDPA_CONFIG", "16,16,16,16,8,2,8,2");
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert_str_eq(plan.config_string, "fwd d128 sg16 cfg=16,16,16,16,8,2,8,2 (SDPA_CONFIG)");
    ck_assert_int_eq(get_int(&plan, SDPA_SC_WG_M_KQ), 8);
    ck_assert_uint_eq(plan.local_size[1], 16);

    fixture_setenv("SDPA_CONFIG", "16,16,16,16,8,2,8");
    plan_refused(&p, &s, &cpu, SDPA_ERROR_INVALID_CONFIG, "SDPA_CONFIG = \"16,16,16,16,8,2,8\"");
    fixture_setenv("SDPA_CONFIG", "16,16,16,16,4,2,4,2");
    plan_refused(&p, &s, &cpu, SDPA_ERROR_INVALID_CONFIG, "16 * 4 = 64 < 128");
}
END_TEST

START_TEST(refusals)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t s;
    fixture_backward_problem(SDPA_DTYPE_F16, 1, 2, 2, 16, 16, 32, &p, &s);
    plan_refused(&p, &s, &cpu, SDPA_ERROR_INVALID_ARGUMENT, "prop_kind = 2");
    p.prop_kind = SDPA_FORWARD_INFERENCE;

    sdpa_device_info_t odd = cpu;
    odd.num_subgroup_sizes = 1;
    odd.subgroup_sizes[0] = 64;
    plan_refused(&p, &s, &odd, SDPA_ERROR_UNSUPPORTED, "sub-group sizes");

    s.head_size = 577;
    plan_refused(&p, &s, &cpu, SDPA_ERROR_UNSUPPORTED, "head size 577");
    /* V's head size takes part in the bucket too. */
    s.head_size = 64;
    s.head_size_v = 577;
    plan_refused(&p, &s, &cpu, SDPA_ERROR_UNSUPPORTED, "head size 577");

    /* More work-groups than the device launches in one dimension. */
    fixture_problem(SDPA_DTYPE_F16, 70000, 2, 2, 16, 16, 32, &p, &s);
    sdpa_device_info_t small = cpu;
    small.max_group_count_xyz[2] = 65535;
    plan_refused(&p, &s, &small, SDPA_ERROR_UNSUPPORTED, "group count z = 70000 exceeds");
}
END_TEST

START_TEST(large_buffers_need_the_build_flag)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t s;
    sdpa_fwd_plan_t plan;
    /* Q and O of 2^31 f16 elements: 4 GiB. */
    fixture_problem(SDPA_DTYPE_F16, 1, 64, 64, 65536, 1024, 512, &p, &s);
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert_str_eq(plan.build_flags, SDPA_ZE_FLAG_LARGE_BUFFERS);
    /* One element less is fine. */
    fixture_problem(SDPA_DTYPE_F16, 1, 64, 64, 65535, 1024, 512, &p, &s);
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert_str_eq(plan.build_flags, "");
    /* The dropout keep mask counts: 2^16 x 2^16 bytes. */
    fixture_problem(SDPA_DTYPE_F16, 1, 1, 1, 65536, 65536, 64, &p, &s);
    p.prop_kind = SDPA_FORWARD_TRAINING;
    p.dropout = (sdpa_dropout_desc_t){1, 1, 0, 1};
    plan_ok(&p, &s, &cpu, &plan);
    ck_assert_str_eq(plan.build_flags, SDPA_ZE_FLAG_LARGE_BUFFERS);
}
END_TEST

START_TEST(same_problem_same_constants)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t s;
    sdpa_fwd_plan_t a, b;
    fixture_problem(SDPA_DTYPE_F16, 2, 8, 8, 100, 300, 64, &p, &s);
    plan_ok(&p, &s, &cpu, &a);
    /* Another batch and length with the same tiles and remainders: the
     * module can be shared. */
    fixture_problem(SDPA_DTYPE_F16, 4, 8, 8, 36, 700, 64, &p, &s);
    plan_ok(&p, &s, &cpu, &b);
    ck_assert(sdpa_spec_values_equal(&a.constants, &b.constants));
    ck_assert_uint_eq(sdpa_spec_values_hash(&a.constants), sdpa_spec_values_hash(&b.constants));
    /* Another dtype cannot. */
    fixture_problem(SDPA_DTYPE_BF16, 2, 8, 8, 100, 300, 64, &p, &s);
    plan_ok(&p, &s, &cpu, &b);
    ck_assert(!sdpa_spec_values_equal(&a.constants, &b.constants));
}
END_TEST

START_TEST(gpu_plans)
{
    sdpa_problem_desc_t p;
    sdpa_shape_t s;
    sdpa_fwd_plan_t plan;

    /* The portable kernel's rows (the fast path, test_fwd_xe_plan.c, would
     * take these f16 problems on Xe2 and Xe-HPC). */
    /* Xe2, D = 64: oneDNN's FMA row fits (BQ 64, 16 sub-groups). */
    sdpa_device_info_t bmg;
    fixture_gpu_device(SDPA_DEVICE_CLASS_XE2, &bmg);
    bmg.kernels = SDPA_KERNELS_PORTABLE;
    fixture_problem(SDPA_DTYPE_F16, 1, 16, 16, 2048, 2000, 64, &p, &s);
    plan_ok(&p, &s, &bmg, &plan);
    ck_assert_str_eq(plan.config_string,
                     "fwd d64 sg16 cfg=16,16,16,16,4,4,4,4 (table: xe2 h64 fma)");
    ck_assert_uint_eq(plan.local_size[1], 16);
    ck_assert_uint_eq(plan.group_count[0], 32); /* 2048 / 64 */
    ck_assert_uint_le(plan.slm_bytes, bmg.slm_bytes);

    /* Xe-HPC, D = 128: our row, 16 sub-groups, BQ 32, BK 32 in 93 KiB of
     * its 128. */
    sdpa_device_info_t pvc;
    fixture_gpu_device(SDPA_DEVICE_CLASS_XE_HPC, &pvc);
    pvc.kernels = SDPA_KERNELS_PORTABLE;
    fixture_problem(SDPA_DTYPE_F16, 1, 16, 16, 2048, 2000, 128, &p, &s);
    plan_ok(&p, &s, &pvc, &plan);
    ck_assert_str_eq(plan.config_string,
                     "fwd d128 sg16 cfg=4,16,16,16,8,2,8,2 (table: xe_hpc h128 fma)");
    ck_assert_int_eq(plan.source.skipped_rows, 0);
    ck_assert_uint_eq(plan.local_size[1], 16);
    ck_assert_uint_le(plan.slm_bytes, pvc.slm_bytes);
    /* D = 512 does not fit a GPU. */
    fixture_problem(SDPA_DTYPE_F16, 1, 16, 16, 64, 64, 512, &p, &s);
    plan_refused(&p, &s, &pvc, SDPA_ERROR_UNSUPPORTED, "head size 512: no configuration serves it");

    /* An integrated Xe-LP has no rows of its own: Xe-HPG's, at sub-group 8. */
    sdpa_device_info_t tgl;
    fixture_gpu_device(SDPA_DEVICE_CLASS_XE_LP, &tgl);
    fixture_problem(SDPA_DTYPE_F32, 1, 16, 16, 100, 100, 32, &p, &s);
    plan_ok(&p, &s, &tgl, &plan);
    ck_assert_str_eq(plan.config_string, "fwd d32 sg8 cfg=8,8,8,8,4,4,4,4 (table: xe_hpg h32 fma)");
    ck_assert_uint_eq(plan.local_size[0], 8);
    ck_assert_uint_eq(plan.local_size[1], 16);
}
END_TEST

/* DeepSeek-V3's prefill, Q/K head size 192 and V's 128 (bucket 256: the
 * portable kernels, the fast path declines Dv != D), plans forward
 * (training, causal) and backward on every GPU model of the ISA gate,
 * within its local memory: the 64 KiB of Xe-LP and Xe-HPG too. */
START_TEST(value_head_192_plans_on_every_gpu)
{
    for (size_t i = 0; i < GPU_MODEL_COUNT; i++) {
        sdpa_device_info_t dev;
        gpu_model_device_info(&gpu_models[i], &dev);
        sdpa_problem_desc_t p;
        sdpa_shape_t s;
        fixture_problem(SDPA_DTYPE_BF16, 1, 8, 8, 512, 512, 192, &p, &s);
        p.v = fixture_tensor(SDPA_DTYPE_BF16, 1, 8, 512, 128);
        p.dst = fixture_tensor(SDPA_DTYPE_BF16, 1, 8, 512, 128);
        s.head_size_v = 128;
        p.prop_kind = SDPA_FORWARD_TRAINING;
        p.mask_kind = SDPA_MASK_CAUSAL_BOTTOM_RIGHT;
        sdpa_fwd_plan_t fwd;
        sdpa_status_t status = sdpa_fwd_plan_make(&p, &s, &dev, &fwd);
        if (dev.slm_bytes < 128 * 1024) {
            /* 64 KiB fits the h256 forward only at 8 queries by 4 keys in 4
             * sub-groups: 64 elements of O per lane, which Debian 12's IGC
             * spills on Xe-HPG (the ISA gate). Refused, saying why. */
            ck_assert_msg(status == SDPA_ERROR_UNSUPPORTED && strstr(sdpa_error_message(),
                                                                     "local memory") != NULL,
                          "%s forward: %d %s", gpu_models[i].ocloc_device, (int)status,
                          sdpa_error_message());
        } else {
            ck_assert_msg(status == SDPA_SUCCESS, "%s forward: %s", gpu_models[i].ocloc_device,
                          sdpa_error_message());
            ck_assert_int_eq(fwd.d_max, 256);
            ck_assert_uint_le(fwd.slm_bytes, dev.slm_bytes);
        }

        fixture_make_backward(&p, SDPA_DTYPE_BF16);
        sdpa_bwd_plan_t bwd;
        status = sdpa_bwd_plan_make(&p, &s, &dev, &bwd);
        ck_assert_msg(status == SDPA_SUCCESS, "%s backward: %s", gpu_models[i].ocloc_device,
                      sdpa_error_message());
        ck_assert_uint_le(bwd.slm_bytes, dev.slm_bytes);
        ck_assert_uint_le(bwd.dq_slm_bytes, dev.slm_bytes);
    }
}
END_TEST

/* MLA decode (DeepSeek: 128 query heads on one K/V head, D 576, V a view
 * of K's first 512 columns) plans on every GPU model, in f16 and bf16, split
 * (B 1) and unsplit (B 32: the portable forward's local memory at D 576
 * exceeds every GPU's, so the decode kernel takes it): the decode kernel in
 * blocks of rows, each block as large as the device's local memory allows
 * (at most SDPA_DECODE_MAX_ROWS), shared out evenly. */
START_TEST(mla_decode_plans_on_every_gpu)
{
    static const sdpa_dtype_t dtypes[2] = {SDPA_DTYPE_F16, SDPA_DTYPE_BF16};
    static const int64_t batches[2] = {1, 32};
    for (size_t i = 0; i < GPU_MODEL_COUNT; i++) {
        sdpa_device_info_t dev;
        gpu_model_device_info(&gpu_models[i], &dev);
        for (int t = 0; t < 4; t++) {
            sdpa_problem_desc_t p;
            sdpa_shape_t s;
            fixture_problem(dtypes[t % 2], batches[t / 2], 128, 1, 1, 4096, 576, &p, &s);
            p.v = p.k; /* the view: K's strides, 512 columns */
            p.v.dims[3] = 512;
            p.dst = fixture_tensor(dtypes[t % 2], batches[t / 2], 128, 1, 512);
            s.head_size_v = 512;
            sdpa_fwd_plan_t plan;
            const sdpa_status_t status = sdpa_fwd_plan_make(&p, &s, &dev, &plan);
            ck_assert_msg(status == SDPA_SUCCESS, "%s: %s", gpu_models[i].ocloc_device,
                          sdpa_error_message());
            ck_assert_int_eq(plan.kind, SDPA_FWD_KIND_DECODE);
            const uint32_t rows = plan.decode_rows, blocks = plan.decode_row_blocks;
            const int64_t sg = plan.subgroup_size;
            ck_assert_msg(rows >= 1 && rows <= SDPA_DECODE_MAX_ROWS, "%s: %u rows",
                          gpu_models[i].ocloc_device, rows);
            ck_assert_uint_eq(blocks, (128 + rows - 1) / rows);
            ck_assert_uint_eq(plan.group_count[1], blocks);
            ck_assert_uint_eq(plan.group_count[2], batches[t / 2]);
            ck_assert_int_eq(get_int(&plan, SDPA_SC_DECODE_ROWS), (int)rows);
            ck_assert_uint_eq(plan.slm_bytes, SDPA_DECODE_SLM_BYTES(rows, 576, 512, sg));
            ck_assert_uint_le(plan.slm_bytes, dev.slm_bytes);
            /* No fewer blocks fit: one more row per block exceeds the
             * device (with sub-group 16 in 128 KiB: 13 rows, 126.5 KiB; 8 in
             * 64 KiB: 6 rows, 60.25 KiB). */
            const int64_t fewer = (int64_t)blocks - 1;
            ck_assert_msg((uint64_t)SDPA_DECODE_SLM_BYTES((128 + fewer - 1) / fewer, 576, 512, sg) >
                                  dev.slm_bytes,
                          "%s: %u blocks of %u rows", gpu_models[i].ocloc_device, blocks, rows);
            ck_assert(strstr(plan.config_string, " rows=") != NULL);
            if (batches[t / 2] == 1) /* one work-group per block: split */
                ck_assert_uint_gt(plan.num_splits, 1);
        }
    }
}
END_TEST

START_TEST(checked_problem_plans)
{
    /* The output of sdpa_problem_check plans as the hand-built one does. */
    sdpa_problem_desc_t desc, checked, hand;
    sdpa_shape_t shape, hand_shape;
    fixture_problem(SDPA_DTYPE_F16, 2, 8, 2, 77, 300, 96, &desc, &hand_shape);
    desc.mask_kind = SDPA_MASK_CAUSAL_TOP_LEFT;
    hand = desc;
    sdpa_status_t status = sdpa_problem_check(&desc, &checked, &shape);
    ck_assert_msg(status == SDPA_SUCCESS, "%s", sdpa_error_message());
    ck_assert_mem_eq(&shape, &hand_shape, sizeof(shape));
    sdpa_fwd_plan_t a, b;
    plan_ok(&checked, &shape, &cpu, &a);
    plan_ok(&hand, &hand_shape, &cpu, &b);
    ck_assert(sdpa_spec_values_equal(&a.constants, &b.constants));
    ck_assert_str_eq(a.config_string, b.config_string);
    ck_assert_mem_eq(a.strides, b.strides, sizeof(a.strides));
}
END_TEST

/* Split-KV decode (decode_plan.h): automatic splits from the compute units,
 * forced ones capped at 16 and at the key tiles, scratch for the states,
 * the merge planned; the portable forward where the decode kernel does not
 * serve or SDPA_ZE_DECODE says so. */
START_TEST(split_kv_decode_plans)
{
    sdpa_device_info_t dev = cpu;
    dev.compute_units = 8;
    sdpa_problem_desc_t p;
    sdpa_shape_t s;
    sdpa_fwd_plan_t plan;
    fixture_problem(SDPA_DTYPE_F16, 1, 8, 1, 1, 32768, 128, &p, &s);
    /* The CPU device does not split by itself (decode_plan.h). */
    plan_ok(&p, &s, &dev, &plan);
    ck_assert_int_ne(plan.kind, SDPA_FWD_KIND_DECODE);
    /* A GPU with the CPU's limits and 8 compute units does. */
    dev.device_class = SDPA_DEVICE_CLASS_UNKNOWN_GPU;
    plan_ok(&p, &s, &dev, &plan);
    ck_assert_str_eq(plan.config_string, "fwd decode sg16 keys=16 splits=8");
    ck_assert_uint_eq(plan.group_count[0], 8);
    ck_assert_uint_eq(plan.group_count[1], 1);
    ck_assert_uint_eq(plan.local_size[0], 16);
    ck_assert(get_bool(&plan, SDPA_SC_DECODE_SPLIT));
    ck_assert_int_eq(get_int(&plan, SDPA_SC_DECODE_ROWS), 0); /* one block of every row */
    ck_assert_int_eq(get_int(&plan, SDPA_SC_DST_DT), SDPA_DTYPE_F32);
    ck_assert_uint_eq(plan.split_lse_offset, 8 * 8 * 128 * 4);
    ck_assert_uint_eq(plan.split_scratch_bytes, 8 * 8 * 128 * 4 + 256);
    ck_assert_uint_eq(plan.merge.group_count[1], 8);
    ck_assert_str_eq(plan.merge.config_string, "merge n8 f32->f16 d128 wg64");

    const struct {
        uint32_t asked;
        int64_t keys;
        uint32_t splits;
    } forced[4] = {{100, 32768, 16}, {3, 40, 3}, {5, 20, 2}, {2, 16, 1}};
    for (int i = 0; i < 4; i++) {
        fixture_problem(SDPA_DTYPE_F16, 4, 8, 2, 1, forced[i].keys, 64, &p, &s);
        p.num_splits = forced[i].asked;
        p.prop_kind = SDPA_FORWARD_TRAINING;
        plan_ok(&p, &s, &dev, &plan);
        if (forced[i].splits == 1) { /* one tile: nothing to split */
            ck_assert_int_ne(plan.kind, SDPA_FWD_KIND_DECODE);
            ck_assert_uint_eq(plan.split_scratch_bytes, 0);
            continue;
        }
        ck_assert_uint_eq(plan.num_splits, forced[i].splits);
        ck_assert_uint_eq(plan.group_count[0], forced[i].splits);
        ck_assert_uint_eq(plan.merge.local_size[0], 64);
        ck_assert(strstr(plan.merge.config_string, " lse") != NULL); /* training */
    }

    /* B x Hkv fills the units: no split, the portable forward. */
    ck_assert_int_eq(dev.device_class, SDPA_DEVICE_CLASS_UNKNOWN_GPU);
    fixture_problem(SDPA_DTYPE_F16, 2, 32, 8, 1, 32768, 128, &p, &s);
    plan_ok(&p, &s, &dev, &plan);
    ck_assert_int_ne(plan.kind, SDPA_FWD_KIND_DECODE);
    ck_assert_uint_eq(plan.split_scratch_bytes, 0);
    /* Dropout: num_splits is ignored. */
    fixture_problem(SDPA_DTYPE_F16, 1, 8, 1, 1, 32768, 128, &p, &s);
    p.num_splits = 4;
    p.prop_kind = SDPA_FORWARD_TRAINING;
    p.dropout.enabled = 1;
    p.dropout.host_scalars = 1;
    plan_ok(&p, &s, &dev, &plan);
    ck_assert_int_ne(plan.kind, SDPA_FWD_KIND_DECODE);
    /* More than 16 rows per K/V head: split, in blocks of 16 rows. */
    fixture_problem(SDPA_DTYPE_F16, 1, 32, 1, 1, 32768, 128, &p, &s);
    p.num_splits = 4;
    plan_ok(&p, &s, &dev, &plan);
    ck_assert_str_eq(plan.config_string, "fwd decode sg16 keys=16 splits=4 (num_splits) rows=2x16");
    ck_assert_uint_eq(plan.group_count[1], 2);
    ck_assert_int_eq(get_int(&plan, SDPA_SC_DECODE_ROWS), 16);

    /* SDPA_ZE_DECODE: 0 never, 1 also unsplit. */
    fixture_problem(SDPA_DTYPE_F16, 1, 8, 1, 1, 32768, 128, &p, &s);
    p.num_splits = 4;
    fixture_setenv("SDPA_ZE_DECODE", "0");
    plan_ok(&p, &s, &dev, &plan);
    ck_assert_int_ne(plan.kind, SDPA_FWD_KIND_DECODE);
    p.num_splits = 1;
    fixture_setenv("SDPA_ZE_DECODE", "1");
    plan_ok(&p, &s, &dev, &plan);
    ck_assert_str_eq(plan.config_string, "fwd decode sg16 keys=16 splits=1 (num_splits)");
    ck_assert(!get_bool(&plan, SDPA_SC_DECODE_SPLIT));
    ck_assert_int_eq(get_int(&plan, SDPA_SC_DST_DT), SDPA_DTYPE_F16);
    ck_assert_uint_eq(plan.split_scratch_bytes, 0);

    /* "auto" and empty: as unset (unsplit: the portable forward). Any
     * other value is refused, naming it, for any forward problem. */
    const char *as_auto[2] = {"auto", ""};
    for (int i = 0; i < 2; i++) {
        fixture_setenv("SDPA_ZE_DECODE", as_auto[i]);
        plan_ok(&p, &s, &dev, &plan);
        ck_assert_int_ne(plan.kind, SDPA_FWD_KIND_DECODE);
    }
    const char *refused[4] = {"yes", "2", "AUTO", " 1"};
    sdpa_problem_desc_t prefill;
    sdpa_shape_t prefill_shape;
    fixture_problem(SDPA_DTYPE_F16, 1, 8, 1, 100, 100, 128, &prefill, &prefill_shape);
    for (int i = 0; i < 4; i++) {
        fixture_setenv("SDPA_ZE_DECODE", refused[i]);
        char expected[64];
        snprintf(expected, sizeof(expected), "SDPA_ZE_DECODE = \"%s\": expected auto, 0 or 1",
                 refused[i]);
        ck_assert_int_eq(sdpa_fwd_plan_make(&p, &s, &dev, &plan), SDPA_ERROR_INVALID_CONFIG);
        ck_assert_str_eq(sdpa_error_message(), expected);
        ck_assert_int_eq(sdpa_fwd_plan_make(&prefill, &prefill_shape, &dev, &plan),
                         SDPA_ERROR_INVALID_CONFIG);
        ck_assert_str_eq(sdpa_error_message(), expected);
    }
    fixture_setenv("SDPA_ZE_DECODE", NULL);
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_ONCE(basic_f16_problem),
            TEST_ONCE(no_remainders_when_tiles_divide),
            TEST_ONCE(q1_gqa_decode_batches_query_heads),
            TEST_ONCE(mask_strides_and_broadcast),
            TEST_ONCE(transposed_k_and_full_head),
            TEST_ONCE(scale_softmax_training_and_accumulation),
            TEST_ONCE(quantized_kv),
            TEST_ONCE(dropout_flags),
            TEST_ONCE(env_override_reaches_the_plan),
            TEST_ONCE(refusals),
            TEST_ONCE(large_buffers_need_the_build_flag),
            TEST_ONCE(same_problem_same_constants),
            TEST_ONCE(gpu_plans),
            TEST_ONCE(value_head_192_plans_on_every_gpu),
            TEST_ONCE(checked_problem_plans),
            TEST_ONCE(split_kv_decode_plans),
            TEST_ONCE(mla_decode_plans_on_every_gpu),
    };
    const test_suite_t suite = {.name = "fwd_plan", .setup = setup};
    return test_run_table(&suite, tests, TEST_COUNT(tests));
}
