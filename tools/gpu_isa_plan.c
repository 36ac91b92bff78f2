/*
 * gpu_isa_plan.c - what the ze plugin would build for a set of problems on
 * the Intel GPUs of gpu_models.h, for tools/gpu-isa.
 *
 * For every model and every problem of the representative set, runs the
 * plugin's own code path on a fabricated device: sdpa_device_info_from_ze,
 * sdpa_problem_check, then sdpa_fwd_plan_make or sdpa_bwd_plan_make (the
 * configuration tables, the constraint checks and the constants), and
 * prints, one JSON object per line:
 *
 *   {"type":"device", ...}    a model: ocloc name, class, limits
 *   {"type":"problem", ...}   a problem: name, whether CI runs it
 *   {"type":"plan", ...}      (device, problem): the head size, the SPIR-V variant, the
 *                             kernels the plugin creates from it with their
 *                             local size and local memory, the configuration
 *                             string, the build flags, and every
 *                             specialization constant the plugin passes
 *                             ("SpecId:value ...", only the ids the variant
 *                             declares, as plugin/ze/kernel.c filters them);
 *                             or status "unsupported" and the plugin's message.
 *
 * Usage: gpu_isa_plan [--set ci|full] [--spirv-out DIR]
 *   --set        the problems: full (default) or the subset CI compiles
 *   --spirv-out  also write each planned variant's embedded SPIR-V, the
 *                bytes the plugin hands to zeModuleCreate, to
 *                DIR/<variant>.spv
 */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bwd_plan.h"
#include "error.h"
#include "fwd_plan.h"
#include "gpu_models.h"
#include "kernel_abi_bwd.h"
#include "kernel_config.h"
#include "problem.h"
#include "spec_table.h"
#include "spirv_registry.h"

/* One problem of the representative set. */
typedef struct gate_problem {
    char name[64];
    sdpa_prop_kind_t kind;
    sdpa_dtype_t dtype;    /* Q, O (and the gradients) */
    sdpa_dtype_t kv_dtype; /* K, V: the dtype, or s8 / s4 quantized */
    int64_t head_size, batch, q_heads, kv_heads, q_len, k_len;
    sdpa_mask_kind_t mask;
    int dropout;
    int deterministic;
    /* ABI 1.1: a sliding window of 256 (causal), softcap 30 and per-head
     * ALiBi (modifiers); K/V a paged cache of 64-token blocks (paged); Q/K/V
     * packed as 4 sequences (varlen). */
    int modifiers, paged, varlen;
    /* ABI 1.1 num_splits: >= 2 forces split-KV decode (the thin-Q decode
     * kernel, spirv/portable/sdpa_decode.cl). */
    uint32_t num_splits;
    /* ABI 1.2: attention sinks (the portable forward, decode and merge). */
    int sinks;
    /* ABI 1.2: V's head size when it differs from head_size (0: the same);
     * with a paged cache V is a view of K's first head_size_v columns (MLA). */
    int64_t head_size_v;
    /* Plan with this configuration override (SDPA_CONFIG or
     * BWD_SDPA_CONFIG, by kind) instead of the tables: a fallback row. */
    char config[64];
    int in_ci; /* part of the reduced set CI compiles */
} gate_problem_t;

#define MAX_PROBLEMS 160

static const int64_t head_sizes[] = {64, 128, 256};
static const sdpa_dtype_t float_dtypes[] = {SDPA_DTYPE_F16, SDPA_DTYPE_BF16, SDPA_DTYPE_F32};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

typedef struct problem_set {
    gate_problem_t items[MAX_PROBLEMS];
    size_t count;
} problem_set_t;

static const char *mask_word(sdpa_mask_kind_t mask)
{
    switch (mask) {
    case SDPA_MASK_BUFFER:
        return " mask";
    case SDPA_MASK_CAUSAL_TOP_LEFT:
        return " causal";
    case SDPA_MASK_CAUSAL_BOTTOM_RIGHT:
        return " causal-br";
    default:
        return "";
    }
}

/* The set's next problem, uninitialized. */
static gate_problem_t *next_slot(problem_set_t *set)
{
    if (set->count >= MAX_PROBLEMS) {
        fprintf(stderr, "gpu_isa_plan: more than %d problems\n", MAX_PROBLEMS);
        exit(2);
    }
    return &set->items[set->count++];
}

/* Appends a problem named "<what> <dtype> d<D><mask><suffix>": by default
 * B 1, 8 heads, 512 queries and keys, in CI's set. */
static gate_problem_t *add(problem_set_t *set, const char *what, sdpa_prop_kind_t kind,
                           sdpa_dtype_t dtype, int64_t d, sdpa_mask_kind_t mask, const char *suffix)
{
    gate_problem_t *p = next_slot(set);
    memset(p, 0, sizeof(*p));
    snprintf(p->name, sizeof(p->name), "%s %s d%" PRId64 "%s%s", what, sdpa_dtype_name(dtype), d,
             mask_word(mask), suffix);
    p->kind = kind;
    p->dtype = p->kv_dtype = dtype;
    p->head_size = d;
    p->batch = 1;
    p->q_heads = p->kv_heads = 8;
    p->q_len = p->k_len = 512;
    p->mask = mask;
    p->in_ci = 1;
    return p;
}

/* Decode: one query per head, 32 query heads on 8 K/V heads (the Q = 1
 * GQA path), 2048 keys. */
static gate_problem_t *decode(gate_problem_t *p)
{
    p->q_heads = 32;
    p->q_len = 1;
    p->k_len = 2048;
    return p;
}

/* The backward of forward problem f: f's shape, features and place in
 * CI's set, named as f with "bwd" for its first word and suffix appended. */
static gate_problem_t *add_backward_of(problem_set_t *set, const gate_problem_t *f,
                                       const char *suffix)
{
    gate_problem_t *p = next_slot(set);
    *p = *f;
    p->kind = SDPA_BACKWARD;
    snprintf(p->name, sizeof(p->name), "bwd%s%s", strchr(f->name, ' '), suffix);
    return p;
}

/* The quantized-K/V problems of head size d: decode and a causal prefill,
 * K/V in kv (s8 or s4). */
static void add_quantized(problem_set_t *set, int64_t d, sdpa_dtype_t kv, int prefill_in_ci)
{
    char suffix[32];
    snprintf(suffix, sizeof(suffix), " kv-%s gqa4", sdpa_dtype_name(kv));
    decode(add(set, "decode", SDPA_FORWARD_INFERENCE, SDPA_DTYPE_F16, d, SDPA_MASK_NONE, suffix))
            ->kv_dtype = kv;
    snprintf(suffix, sizeof(suffix), " kv-%s", sdpa_dtype_name(kv));
    gate_problem_t *p = add(set, "fwd", SDPA_FORWARD_INFERENCE, SDPA_DTYPE_F16, d,
                            SDPA_MASK_CAUSAL_TOP_LEFT, suffix);
    p->kv_dtype = kv;
    p->in_ci = prefill_in_ci;
}

/*
 * The representative set: head sizes 64, 128, 256; f16, bf16, f32;
 * no mask, causal, mask buffer; GQA with the Q = 1 decode path; s8 and s4
 * K/V; dropout; training forward; backward atomic and deterministic. Then
 * what makes every configuration row the gate's GPUs can select appear at
 * least once: head size 32, thin backward (16 queries), and each fallback
 * row forced through the override variables. CI compiles the problems
 * marked in_ci: each head size, dtype, pass and mode at least once, the
 * masks, decode, quantized, dropout and GQA paths in f16, every row.
 */
static void build_problem_set(problem_set_t *set)
{
    static const sdpa_mask_kind_t masks[] = {SDPA_MASK_NONE, SDPA_MASK_CAUSAL_TOP_LEFT,
                                             SDPA_MASK_BUFFER};
    set->count = 0;
    for (size_t di = 0; di < COUNT(head_sizes); di++) {
        const int64_t d = head_sizes[di];
        for (size_t ti = 0; ti < COUNT(float_dtypes); ti++) {
            const sdpa_dtype_t dt = float_dtypes[ti];
            const int f16 = dt == SDPA_DTYPE_F16;
            /* bf16 also at the Llama bench shape (D128 causal): the gate's
             * targets hold for f16 and bf16. */
            for (size_t mi = 0; mi < COUNT(masks); mi++)
                add(set, "fwd", SDPA_FORWARD_INFERENCE, dt, d, masks[mi], "")->in_ci =
                        f16 || masks[mi] == SDPA_MASK_NONE ||
                        (dt == SDPA_DTYPE_BF16 && d == 128 &&
                         masks[mi] == SDPA_MASK_CAUSAL_TOP_LEFT);
            decode(add(set, "decode", SDPA_FORWARD_INFERENCE, dt, d, SDPA_MASK_NONE, " gqa4"))
                    ->in_ci = f16;
            add(set, "train", SDPA_FORWARD_TRAINING, dt, d, SDPA_MASK_CAUSAL_TOP_LEFT, "")->in_ci =
                    f16;
            add(set, "bwd", SDPA_BACKWARD, dt, d, SDPA_MASK_NONE, " atomic");
            gate_problem_t *p =
                    add(set, "bwd", SDPA_BACKWARD, dt, d, SDPA_MASK_NONE, " deterministic");
            p->deterministic = 1;
            p->in_ci = f16;
        }
        add_quantized(set, d, SDPA_DTYPE_S8, 1);
        add_quantized(set, d, SDPA_DTYPE_S4, 0);

        gate_problem_t *p = add(set, "train", SDPA_FORWARD_TRAINING, SDPA_DTYPE_F16, d,
                                SDPA_MASK_CAUSAL_TOP_LEFT, " dropout");
        p->dropout = 1;
        add(set, "bwd", SDPA_BACKWARD, SDPA_DTYPE_F16, d, SDPA_MASK_CAUSAL_TOP_LEFT, " atomic");
        if (d == 128) /* the Llama bench shape in bf16 */
            add(set, "bwd", SDPA_BACKWARD, SDPA_DTYPE_BF16, d, SDPA_MASK_CAUSAL_TOP_LEFT,
                " atomic");
        add(set, "bwd", SDPA_BACKWARD, SDPA_DTYPE_F16, d, SDPA_MASK_BUFFER, " atomic")->in_ci = 0;
        for (int det = 0; det <= 1; det++) {
            p = add(set, "bwd", SDPA_BACKWARD, SDPA_DTYPE_F16, d, SDPA_MASK_CAUSAL_TOP_LEFT,
                    det ? " gqa4 deterministic" : " gqa4 atomic");
            p->q_heads = 32;
            p->deterministic = det;
            p->in_ci = det;
        }
        p = add(set, "bwd", SDPA_BACKWARD, SDPA_DTYPE_F16, d, SDPA_MASK_CAUSAL_TOP_LEFT,
                " dropout atomic");
        p->dropout = 1;
    }

    /* Head size 32 (the xe_hpg and xe_hpc h32 rows) and thin backward
     * (Sq <= 16: the thin rows). */
    add(set, "fwd", SDPA_FORWARD_INFERENCE, SDPA_DTYPE_F16, 32, SDPA_MASK_NONE, "");
    decode(add(set, "decode", SDPA_FORWARD_INFERENCE, SDPA_DTYPE_F16, 32, SDPA_MASK_NONE, " gqa4"));
    add_quantized(set, 32, SDPA_DTYPE_S8, 1);
    static const int64_t bwd_heads[] = {32, 64, 128, 256};
    for (size_t di = 0; di < COUNT(bwd_heads); di++) {
        if (bwd_heads[di] == 32)
            add(set, "bwd", SDPA_BACKWARD, SDPA_DTYPE_F16, 32, SDPA_MASK_NONE, " atomic");
        add(set, "bwd", SDPA_BACKWARD, SDPA_DTYPE_F16, bwd_heads[di], SDPA_MASK_NONE,
            " sq16 atomic")
                ->q_len = 16;
    }

    /* ABI 1.1 (issue 16): the score modifiers forward and backward, a paged
     * decode with f16 and s8 caches, a varlen prefill and its backward
     * (atomic and deterministic); all in CI's set. */
    gate_problem_t *modifiers = add(set, "fwd", SDPA_FORWARD_INFERENCE, SDPA_DTYPE_F16, 128,
                                    SDPA_MASK_CAUSAL_BOTTOM_RIGHT, " window softcap alibi");
    modifiers->modifiers = 1;
    add_backward_of(set, modifiers, " atomic");
    decode(add(set, "decode", SDPA_FORWARD_INFERENCE, SDPA_DTYPE_F16, 128, SDPA_MASK_NONE,
               " paged gqa4"))
            ->paged = 1;
    gate_problem_t *paged = decode(add(set, "decode", SDPA_FORWARD_INFERENCE, SDPA_DTYPE_F16, 128,
                                       SDPA_MASK_NONE, " paged kv-s8 gqa4"));
    paged->paged = 1;
    paged->kv_dtype = SDPA_DTYPE_S8;
    gate_problem_t *varlen = add(set, "fwd", SDPA_FORWARD_TRAINING, SDPA_DTYPE_F16, 128,
                                 SDPA_MASK_CAUSAL_BOTTOM_RIGHT, " varlen");
    varlen->varlen = 1;
    add_backward_of(set, varlen, " atomic");
    add_backward_of(set, varlen, " deterministic")->deterministic = 1;

    /* Split-KV decode (the thin-Q decode kernel): f16, s8 and s4 K/V, a
     * paged cache with every modifier, MHA at head size 256. */
    decode(add(set, "decode", SDPA_FORWARD_INFERENCE, SDPA_DTYPE_F16, 128, SDPA_MASK_NONE,
               " split4 gqa4"))
            ->num_splits = 4;
    static const sdpa_dtype_t split_kv[2] = {SDPA_DTYPE_S8, SDPA_DTYPE_S4};
    for (size_t i = 0; i < COUNT(split_kv); i++) {
        char suffix[32];
        snprintf(suffix, sizeof(suffix), " split4 kv-%s gqa4", sdpa_dtype_name(split_kv[i]));
        gate_problem_t *q = decode(add(set, "decode", SDPA_FORWARD_INFERENCE, SDPA_DTYPE_F16, 128,
                                       SDPA_MASK_NONE, suffix));
        q->kv_dtype = split_kv[i];
        q->num_splits = 4;
    }
    gate_problem_t *split_paged =
            decode(add(set, "decode", SDPA_FORWARD_TRAINING, SDPA_DTYPE_BF16, 128,
                       SDPA_MASK_CAUSAL_BOTTOM_RIGHT, " split4 paged modifiers gqa4"));
    split_paged->paged = split_paged->modifiers = 1;
    split_paged->num_splits = 4;
    gate_problem_t *split_mha = add(set, "decode", SDPA_FORWARD_INFERENCE, SDPA_DTYPE_F16, 256,
                                    SDPA_MASK_NONE, " split8 mha");
    split_mha->q_len = 1;
    split_mha->k_len = 4096;
    split_mha->num_splits = 8;

    /* ABI 1.2 attention sinks (issue 29): the portable forward with every
     * modifier (training: the LSE), a paged decode unsplit (on GPUs the
     * portable forward's Q = 1 GQA rows) and split (the decode kernel and
     * the merge, which counts the sink); a varlen backward (sdpa_bwd_sinks
     * beside the pipeline). */
    gate_problem_t *sinks_fwd = add(set, "train", SDPA_FORWARD_TRAINING, SDPA_DTYPE_F16, 128,
                                    SDPA_MASK_CAUSAL_BOTTOM_RIGHT, " window softcap alibi sinks");
    sinks_fwd->modifiers = sinks_fwd->sinks = 1;
    gate_problem_t *sinks_decode = decode(add(set, "decode", SDPA_FORWARD_INFERENCE, SDPA_DTYPE_F16,
                                              128, SDPA_MASK_NONE, " unsplit paged gqa4 sinks"));
    sinks_decode->paged = sinks_decode->sinks = 1;
    sinks_decode->num_splits = 1;
    gate_problem_t *sinks_split =
            decode(add(set, "decode", SDPA_FORWARD_TRAINING, SDPA_DTYPE_BF16, 128,
                       SDPA_MASK_CAUSAL_BOTTOM_RIGHT, " split4 paged modifiers gqa4 sinks"));
    sinks_split->paged = sinks_split->modifiers = sinks_split->sinks = 1;
    sinks_split->num_splits = 4;
    add(set, "bwd", SDPA_BACKWARD, SDPA_DTYPE_F16, 128, SDPA_MASK_CAUSAL_BOTTOM_RIGHT,
        " varlen sinks deterministic")
            ->varlen = 1;
    set->items[set->count - 1].sinks = set->items[set->count - 1].deterministic = 1;

    /* ABI 1.2 FP8 K/V (issue 29): e4m3 decode and causal prefill (the
     * fast path's converting loads where it serves them), an e5m2 decode;
     * V's head size apart from Q's (DeepSeek-V3 prefill 192 / 128, forward
     * and backward: the portable kernels) and MLA decode (576 / 512, V a
     * view of K, one K/V head, paged). */
    add_quantized(set, 128, SDPA_DTYPE_F8_E4M3, 1);
    decode(add(set, "decode", SDPA_FORWARD_INFERENCE, SDPA_DTYPE_F16, 128, SDPA_MASK_NONE,
               " kv-f8_e5m2 gqa4"))
            ->kv_dtype = SDPA_DTYPE_F8_E5M2;
    gate_problem_t *dv128 = add(set, "train", SDPA_FORWARD_TRAINING, SDPA_DTYPE_BF16, 192,
                                SDPA_MASK_CAUSAL_BOTTOM_RIGHT, " dv128");
    dv128->head_size_v = 128;
    add_backward_of(set, dv128, " atomic");
    gate_problem_t *mla = decode(add(set, "decode", SDPA_FORWARD_INFERENCE, SDPA_DTYPE_BF16, 576,
                                     SDPA_MASK_NONE, " dv512 mla paged"));
    mla->head_size_v = 512;
    mla->paged = 1;
    mla->q_heads = 128;
    mla->kv_heads = 1;
    mla->k_len = 4096;

    /* The fallback rows (what Xe2, Xe3 and unknown GPUs fall back to), on
     * each model where they fit. */
    for (size_t i = 0; i < sdpa_fwd_config_fallbacks_size; i++) {
        const sdpa_fwd_config_row_t *row = &sdpa_fwd_config_fallbacks[i];
        gate_problem_t *p = add(set, "fwd", SDPA_FORWARD_INFERENCE, SDPA_DTYPE_F16,
                                row->criteria.head_size, SDPA_MASK_NONE, " fallback");
        sdpa_fwd_config_format(&row->config, p->config, sizeof(p->config));
    }
    for (size_t i = 0; i < sdpa_bwd_config_fallbacks_size; i++) {
        const sdpa_bwd_config_row_t *row = &sdpa_bwd_config_fallbacks[i];
        gate_problem_t *p = add(set, "bwd", SDPA_BACKWARD, SDPA_DTYPE_F16, row->criteria.head_size,
                                SDPA_MASK_NONE, " fallback atomic");
        sdpa_bwd_config_format(&row->config, p->config, sizeof(p->config));
    }
}

static sdpa_tensor_desc_t dense(sdpa_dtype_t dtype, int64_t d0, int64_t d1, int64_t d2, int64_t d3)
{
    sdpa_tensor_desc_t t = {dtype, {d0, d1, d2, d3}, {d1 * d2 * d3, d2 * d3, d3, 1}};
    return t;
}

/* The descriptor a framework would pass for p: dense tensors, host scale,
 * a broadcast [1, 1, Sq, Sk] mask in Q's dtype, per-group (32) f16 scales
 * for integer K/V (and u8 zero points for s8), dropout with host scalars, an
 * offset and the keep-mask output in training. */
static void describe(const gate_problem_t *p, sdpa_problem_desc_t *desc)
{
    memset(desc, 0, sizeof(*desc));
    desc->struct_size = sizeof(*desc);
    desc->struct_version = SDPA_PROBLEM_DESC_VERSION;
    desc->prop_kind = p->kind;
    desc->q = dense(p->dtype, p->batch, p->q_heads, p->q_len, p->head_size);
    desc->k = dense(p->kv_dtype, p->batch, p->kv_heads, p->k_len, p->head_size);
    desc->v = dense(p->kv_dtype, p->batch, p->kv_heads, p->k_len, p->head_size);
    desc->dst = dense(p->dtype, p->batch, p->q_heads, p->q_len, p->head_size);
    desc->mask_kind = p->mask;
    if (p->mask == SDPA_MASK_BUFFER)
        desc->mask = dense(p->dtype, 1, 1, p->q_len, p->k_len);
    desc->scale_kind = SDPA_SCALE_HOST;
    desc->softmax_kind = SDPA_SOFTMAX_ACCURATE;
    desc->kq_acc_dtype = desc->vs_acc_dtype = SDPA_DTYPE_F32;
    if (p->head_size_v) {
        desc->v = dense(p->kv_dtype, p->batch, p->kv_heads, p->k_len, p->head_size_v);
        desc->dst = dense(p->dtype, p->batch, p->q_heads, p->q_len, p->head_size_v);
    }
    if (p->kv_dtype == SDPA_DTYPE_F8_E4M3 || p->kv_dtype == SDPA_DTYPE_F8_E5M2) {
        /* vLLM's FP8 cache: one f32 scale per tensor. */
        desc->k_quant = desc->v_quant = (sdpa_quant_desc_t){
                SDPA_QUANT_PER_TENSOR, SDPA_DTYPE_F32, SDPA_QUANT_NONE, SDPA_DTYPE_UNDEF, 0};
    } else if (p->kv_dtype != p->dtype) {
        sdpa_quant_desc_t q = {SDPA_QUANT_PER_GROUP, SDPA_DTYPE_F16, SDPA_QUANT_NONE,
                               SDPA_DTYPE_UNDEF, 32};
        if (p->kv_dtype == SDPA_DTYPE_S8) {
            q.zero_points = SDPA_QUANT_PER_GROUP;
            q.zero_points_dtype = SDPA_DTYPE_U8;
        }
        desc->k_quant = desc->v_quant = q;
    }
    if (p->dropout) {
        desc->dropout.enabled = 1;
        desc->dropout.host_scalars = 1;
        desc->dropout.with_offset = 1;
        desc->dropout.with_mask_output = p->kind == SDPA_FORWARD_TRAINING;
    }
    if (p->modifiers) {
        desc->window = (sdpa_window_desc_t){1, 256, 0};
        desc->softcap = 30.0f;
        desc->alibi = SDPA_ALIBI_PER_HEAD;
    }
    if (p->paged) { /* every sequence's blocks, [num_blocks, Hkv, 64, D] */
        const int64_t block = 64, per_seq = p->k_len / block;
        desc->k = dense(p->kv_dtype, p->batch * per_seq, p->kv_heads, block, p->head_size);
        desc->v = desc->k;
        if (p->head_size_v)
            desc->v.dims[3] = p->head_size_v;
        desc->paged_kv = (sdpa_paged_kv_desc_t){1, per_seq, 0};
    }
    desc->num_splits = p->num_splits;
    desc->sinks = (uint32_t)p->sinks;
    if (p->varlen) { /* 4 sequences of at most Sq / 4 queries and Sk / 4 keys */
        desc->varlen = (sdpa_varlen_desc_t){1, 4, p->q_len / 4, p->k_len / 4};
    }
    if (p->kind == SDPA_BACKWARD) {
        desc->diff_dst = desc->dst;
        desc->diff_q = desc->q;
        desc->diff_k = desc->k;
        desc->diff_v = desc->v;
        desc->diff_k.dtype = desc->diff_v.dtype = p->dtype;
        desc->deterministic = (uint32_t)p->deterministic;
    }
}

/* Prints s as a JSON string. */
static void json_string(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

/* Prints the constants of values that module declares, "id:value ...", in
 * the syntax of spirv-opt --set-spec-const-default-value. */
static void print_constants(const sdpa_spec_values_t *values, const sdpa_spirv_module_t *module)
{
    putchar('"');
    const char *sep = "";
    for (uint32_t i = 0; i < values->count; i++) {
        uint32_t id = values->ids[i];
        if (!sdpa_spirv_has_spec_id(module, id))
            continue;
        const sdpa_spec_constant_info_t *info = sdpa_spec_constant_find(id);
        const sdpa_spec_slot_t *slot = &values->slots[i];
        printf("%s%" PRIu32 ":", sep, id);
        switch (info->type) {
        case SDPA_SPEC_TYPE_bool:
            printf("%s", slot->b ? "true" : "false");
            break;
        case SDPA_SPEC_TYPE_uint:
            printf("%" PRIu32, slot->u);
            break;
        case SDPA_SPEC_TYPE_long:
            printf("%" PRId64, slot->l);
            break;
        case SDPA_SPEC_TYPE_float:
            printf("%.9g", (double)slot->f);
            break;
        default:
            printf("%" PRId32, slot->i);
            break;
        }
        sep = " ";
    }
    putchar('"');
}

static void print_kernel(const char *sep, const char *name, const uint32_t local[3], uint32_t slm)
{
    printf("%s{\"name\":", sep);
    json_string(name);
    printf(",\"local\":[%" PRIu32 ",%" PRIu32 ",%" PRIu32 "],\"slm\":%" PRIu32 "}", local[0],
           local[1], local[2], slm);
}

/* Directory for --spirv-out, or NULL. */
static const char *spirv_out;

/* Writes module's SPIR-V to spirv_out/<variant>.spv (again for each plan:
 * a few hundred KiB). Returns 0 or -1 after a message. */
static int write_spirv(const sdpa_spirv_module_t *module, const char *variant)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s.spv", spirv_out, variant);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(module->code, 1, module->size, f) != module->size) {
        fprintf(stderr, "gpu_isa_plan: cannot write %s\n", path);
        if (f)
            fclose(f);
        return -1;
    }
    return fclose(f) == 0 ? 0 : -1;
}

/* The plan line of a variant: everything but the kernels list. Returns 1
 * if the variant exists (the line continues), 0 if not (the line is
 * complete), -1 if its SPIR-V could not be written. */
static int print_plan_head(const char *device, const gate_problem_t *p, const char *source,
                           int d_max, uint32_t subgroup, const char *config,
                           const char *build_flags, const sdpa_spec_values_t *constants)
{
    const sdpa_spirv_module_t *module = sdpa_spirv_find(source, d_max, (int)subgroup);
    if (module && spirv_out) {
        char variant[64];
        snprintf(variant, sizeof(variant), "%s.%d.%" PRIu32, source, d_max, subgroup);
        if (write_spirv(module, variant) != 0)
            return -1;
    }
    printf("{\"type\":\"plan\",\"device\":");
    json_string(device);
    printf(",\"problem\":");
    json_string(p->name);
    if (!module) {
        /* The plugin fails the same way (sdpa_ze_kernel_from_cache). */
        char message[160];
        snprintf(message, sizeof(message), "no SPIR-V variant %s.%d.%" PRIu32 " is built in",
                 source, d_max, subgroup);
        printf(",\"status\":\"unsupported\",\"message\":");
        json_string(message);
        printf("}\n");
        return 0;
    }
    char variant[64];
    snprintf(variant, sizeof(variant), "%s.%d.%" PRIu32, source, d_max, subgroup);
    printf(",\"head_size\":%" PRId64 ",\"status\":\"ok\",\"variant\":", p->head_size);
    json_string(variant);
    printf(",\"subgroup\":%" PRIu32 ",\"config\":", subgroup);
    /* A forced fallback row says so instead of naming the variable. */
    char forced[256];
    const char *env = strstr(config, " (SDPA_CONFIG)");
    if (!env)
        env = strstr(config, " (BWD_SDPA_CONFIG)");
    if (p->config[0] && env) {
        snprintf(forced, sizeof(forced), "%.*s (fallback: h%d, forced)", (int)(env - config),
                 config, sdpa_head_size_bucket(p->head_size));
        config = forced;
    }
    json_string(config);
    printf(",\"flags\":");
    json_string(build_flags);
    printf(",\"spec\":");
    print_constants(constants, module);
    return 1;
}

/* The plan line of a problem the plugin refuses on device: "unsupported"
 * (the device cannot serve it; a forced fallback row that does not fit it
 * counts too, as the plugin would never select it there), else "error". */
static void print_unsupported(const char *device, const gate_problem_t *p, sdpa_status_t status)
{
    if (p->config[0] && status == SDPA_ERROR_INVALID_CONFIG)
        status = SDPA_ERROR_UNSUPPORTED;
    printf("{\"type\":\"plan\",\"device\":");
    json_string(device);
    printf(",\"problem\":");
    json_string(p->name);
    printf(",\"status\":\"%s\",\"message\":",
           status == SDPA_ERROR_UNSUPPORTED ? "unsupported" : "error");
    json_string(sdpa_error_message());
    printf("}\n");
}

/* 1 if status is the plugin refusing p on this device rather than a bug. */
static int refusal(const gate_problem_t *p, sdpa_status_t status)
{
    return status == SDPA_ERROR_UNSUPPORTED ||
           (p->config[0] && status == SDPA_ERROR_INVALID_CONFIG);
}

/* Plans p on device as the ze backend does (primitive.c, fwd.c, bwd.c) and
 * prints the plan line. Returns 0 unless planning failed in a way the
 * plugin would report as a bug rather than a refusal. */
static int plan_problem(const char *device_name, const sdpa_device_info_t *device,
                        const gate_problem_t *p)
{
    sdpa_problem_desc_t desc, checked;
    sdpa_shape_t shape;
    describe(p, &desc);
    sdpa_status_t status = sdpa_problem_check(&desc, &checked, &shape);
    if (status != SDPA_SUCCESS) {
        fprintf(stderr, "gpu_isa_plan: problem \"%s\" is invalid: %s\n", p->name,
                sdpa_error_message());
        return 1;
    }
    /* The plugin reads the override variables when it plans; so do we, set
     * for a forced row only (main() clears the caller's). */
    const char *override = p->kind == SDPA_BACKWARD ? "BWD_SDPA_CONFIG" : "SDPA_CONFIG";
    if (p->config[0])
        setenv(override, p->config, 1);

    if (p->kind != SDPA_BACKWARD) {
        sdpa_fwd_plan_t plan;
        status = sdpa_fwd_plan_make(&checked, &shape, device, &plan);
        unsetenv(override);
        if (status != SDPA_SUCCESS) {
            print_unsupported(device_name, p, status);
            return !refusal(p, status);
        }
        /* The portable sdpa_fwd or the fast path's sdpa_xe_fwd. */
        int head = print_plan_head(device_name, p, plan.variant, plan.d_max, plan.subgroup_size,
                                   plan.config_string, plan.build_flags, &plan.constants);
        if (head <= 0)
            return head < 0;
        printf(",\"kernels\":[");
        print_kernel("", plan.kernel_name, plan.local_size, plan.slm_bytes);
        printf("]}\n");
        return 0;
    }

    /* Backward: the kernels sdpa_ze_bwd_prepare creates, from sdpa_bwd.<d>.<sg>
     * (sdpa_bwd-fadd.<d>.<sg> where the plan adds f32 natively), which holds
     * all four (the backend builds them as three modules of the same code,
     * kernel_abi_bwd.h). */
    sdpa_bwd_plan_t *plan = malloc(sizeof(*plan));
    if (!plan) {
        fprintf(stderr, "gpu_isa_plan: out of memory\n");
        return 1;
    }
    status = sdpa_bwd_plan_make(&checked, &shape, device, plan);
    unsetenv(override);
    if (status != SDPA_SUCCESS) {
        print_unsupported(device_name, p, status);
        free(plan);
        return !refusal(p, status);
    }
    /* The main (and deterministic dQ) kernels come from the plan's main
     * variant: the portable module, or the fast path's, which then gets a
     * plan line of its own (its build flags differ). */
    const int deterministic = plan->dq_pass;
    char all_four[64];
    snprintf(all_four, sizeof(all_four), "%s%s", SDPA_BWD_SOURCE,
             plan->native_f32_add ? SDPA_BWD_FADD_FIELD : "");
    int head =
            print_plan_head(device_name, p, all_four, SDPA_BWD_VARIANT_D_MAX, plan->subgroup_size,
                            plan->config_string, plan->build_flags, &plan->constants);
    if (head > 0) {
        printf(",\"kernels\":[");
        print_kernel("", SDPA_BWD_PREPROCESS_KERNEL, plan->pre_local, 0);
        if (plan->kind != SDPA_BWD_KIND_XE) {
            print_kernel(",", SDPA_BWD_KERNEL, plan->local_size, plan->slm_bytes);
            if (deterministic)
                print_kernel(",", SDPA_BWD_DQ_KERNEL, plan->local_size, plan->dq_slm_bytes);
        }
        if (plan->num_posts)
            print_kernel(",", SDPA_BWD_POSTPROCESS_KERNEL, plan->post_local, 0);
        if (checked.sinks) {
            const uint32_t sinks_local[3] = {plan->subgroup_size, 1, 1};
            print_kernel(",", SDPA_BWD_SINKS_KERNEL, sinks_local, 0);
        }
        printf("]}\n");
    }
    if (head > 0 && plan->kind == SDPA_BWD_KIND_XE) {
        head = print_plan_head(device_name, p, plan->main_variant, SDPA_BWD_VARIANT_D_MAX,
                               plan->subgroup_size, plan->config_string, plan->main_build_flags,
                               &plan->constants);
        if (head > 0) {
            printf(",\"kernels\":[");
            print_kernel("", plan->main_kernel, plan->local_size, plan->slm_bytes);
            if (deterministic)
                print_kernel(",", plan->dq_kernel, plan->local_size, plan->dq_slm_bytes);
            printf("]}\n");
        }
    }
    free(plan);
    return head < 0;
}

static void print_device(const gpu_model_t *model, const sdpa_device_info_t *info)
{
    const ze_device_properties_t *pr = &model->props;
    printf("{\"type\":\"device\",\"device\":");
    json_string(model->ocloc_device);
    printf(",\"family\":");
    json_string(model->family);
    printf(",\"class\":\"%s\",\"name\":", sdpa_device_class_name(info->device_class));
    json_string(info->name);
    printf(",\"device_id\":\"0x%04" PRIX32 "\",\"eus\":%" PRIu32 ",\"threads_per_eu\":%" PRIu32
           ",\"eu_simd\":%" PRIu32 ",\"grf_bytes\":%d,\"slm\":%" PRIu64 ",\"max_group\":%" PRIu32
           ",\"subgroups\":[",
           info->device_id, pr->numSlices * pr->numSubslicesPerSlice * pr->numEUsPerSubslice,
           pr->numThreadsPerEU, pr->physicalEUSimdWidth, model->grf_bytes, info->slm_bytes,
           info->max_group_size);
    for (uint32_t i = 0; i < info->num_subgroup_sizes; i++)
        printf("%s%" PRIu32, i ? "," : "", info->subgroup_sizes[i]);
    printf("],\"subgroup\":%" PRIu32 ",\"integrated\":%s}\n", sdpa_device_subgroup_size(info),
           info->integrated ? "true" : "false");
}

int main(int argc, char **argv)
{
    int ci_only = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--set") == 0 && i + 1 < argc) {
            const char *set = argv[++i];
            if (strcmp(set, "ci") != 0 && strcmp(set, "full") != 0) {
                fprintf(stderr, "gpu_isa_plan: --set %s: ci or full\n", set);
                return 2;
            }
            ci_only = strcmp(set, "ci") == 0;
        } else if (strcmp(argv[i], "--spirv-out") == 0 && i + 1 < argc) {
            spirv_out = argv[++i];
        } else {
            fprintf(stderr, "usage: gpu_isa_plan [--set ci|full] [--spirv-out DIR]\n");
            return 2;
        }
    }

    static problem_set_t set;
    build_problem_set(&set);
    for (size_t i = 0; i < set.count; i++) {
        const gate_problem_t *p = &set.items[i];
        if (ci_only && !p->in_ci)
            continue;
        printf("{\"type\":\"problem\",\"problem\":");
        json_string(p->name);
        printf(",\"ci\":%s}\n", p->in_ci ? "true" : "false");
    }

    /* The gate measures the tables' choices, whatever the caller's
     * environment overrides. */
    unsetenv("SDPA_CONFIG");
    unsetenv("QUANTIZED_SDPA_CONFIG");
    unsetenv("BWD_SDPA_CONFIG");

    int failures = 0;
    for (size_t m = 0; m < GPU_MODEL_COUNT; m++) {
        sdpa_device_info_t info;
        gpu_model_device_info(&gpu_models[m], &info);
        print_device(&gpu_models[m], &info);
        for (size_t i = 0; i < set.count; i++)
            if (!ci_only || set.items[i].in_ci)
                failures += plan_problem(gpu_models[m].ocloc_device, &info, &set.items[i]);
    }
    return failures ? 1 : 0;
}
