/*
 * xe_config_table.c - configurations of the forward fast path
 * (spirv/xe/sdpa_xe_fwd.cl), chosen like the portable tables' rows
 * (kernel_config.h) but only for the fast path (xe_fwd_plan.h).
 *
 * R(class, head size, Sk bound or ANY, props, unroll_m_kq, unroll_n_kq,
 *   unroll_m_vs, unroll_n_vs, wg_m_kq, wg_n_kq, wg_m_vs, wg_n_vs)
 *
 * In fast-path terms (kernel_abi_xe.h): unroll_n_* is the sub-group size
 * (one query per lane), unroll_m_kq the keys and unroll_m_vs the head-dim
 * rows of O a sub-group holds in registers (its SPIR-V variant:
 * sdpa_xe_fwd-k<unroll_m_kq>-d<unroll_m_vs>), wg_m the sub-groups that share
 * a query block (they split the keys of S and the rows of O) and wg_n the
 * query blocks of a work-group.
 *
 * Why these tiles (register files: Xe-HPC and Xe2 build the fast path with
 * 256 registers of 64 bytes, Xe-HPG has 128 of 32 bytes; an f32 per lane is
 * one register in either):
 *   Xe-HPC, Xe2 (sub-group 16): 32 keys and 64 rows of O per sub-group, 32 +
 *     64 registers of accumulators; D <= 64 needs one sub-group per query
 *     block (no barrier in the key loop), D = 128 two, D = 256 four. Four
 *     query blocks (64 queries) per work-group share each K/V tile in L1;
 *     thin problems (<= 16 queries, decode) have one.
 *   Xe-HPG (sub-group 8): 16 keys and 32 rows of O (48 accumulator
 *     registers of 128), one sub-group per 32 head-dim rows; larger tiles
 *     spill once masks and dropout add their registers, and so do eight
 *     sub-groups per query block, so head sizes above 128 stay on the
 *     portable kernel. Eight query blocks share each key tile's K and V^T
 *     staging in local memory (sdpa_xe_hpg_load.h; 57 KiB at D = 128):
 *     with four, each sub-group's share of it cost a third of the key
 *     loop's instructions.
 * The tiles are the built variants (spirv/abi/variants.def); the
 * ISA gate (doc/gpu-isa.md) shows each compiled without spills. The shapes
 * are first choices from the register budget, not tuned on hardware.
 */
#include "xe_bwd_plan.h"
#include "xe_fwd_plan.h"

#define ANY SDPA_CONFIG_ANY_SEQ
#define THIN SDPA_CONFIG_THIN_Q
#define QUANT SDPA_CONFIG_QUANTIZED

/* clang-format off */
#define R(cls, head, seq, props, umkq, unkq, umvs, unvs, wmkq, wnkq, wmvs, wnvs) \
    {{SDPA_DEVICE_CLASS_##cls, head, seq, props}, {umkq, unkq, umvs, unvs, wmkq, wnkq, wmvs, wnvs}}

/* The rows of a sub-group-16 class (Xe-HPC, Xe2), for props p (0 or QUANT:
 * quantized K/V take the same tiles, in the cvt variants; at D = 256 their
 * converted K/V tiles would not fit local memory, so the SG16_256 rows are
 * for unquantized K/V only). */
#define SG16_ROWS(cls, p) \
        R(cls, 64, ANY, p,        32, 16, 64, 16, 1, 4, 1, 4), \
        R(cls, 64, ANY, p|THIN,   32, 16, 64, 16, 1, 1, 1, 1), \
        R(cls, 128, ANY, p,       32, 16, 64, 16, 2, 4, 2, 4), \
        R(cls, 128, ANY, p|THIN,  32, 16, 64, 16, 2, 1, 2, 1)
#define SG16_256_ROWS(cls) \
        R(cls, 256, ANY, 0,       32, 16, 64, 16, 4, 2, 4, 2), \
        R(cls, 256, ANY, THIN,    32, 16, 64, 16, 4, 1, 4, 1)

/* The rows of Xe-HPG, for props p. */
#define SG8_ROWS(p) \
        R(XE_HPG, 32, ANY, p,       16, 8, 32, 8, 1, 8, 1, 8), \
        R(XE_HPG, 32, ANY, p|THIN,  16, 8, 32, 8, 1, 2, 1, 2), \
        R(XE_HPG, 64, ANY, p,       16, 8, 32, 8, 2, 8, 2, 8), \
        R(XE_HPG, 64, ANY, p|THIN,  16, 8, 32, 8, 2, 2, 2, 2), \
        R(XE_HPG, 128, ANY, p,      16, 8, 32, 8, 4, 8, 4, 8), \
        R(XE_HPG, 128, ANY, p|THIN, 16, 8, 32, 8, 4, 2, 4, 2)

const sdpa_fwd_config_row_t sdpa_fwd_xe_config_table[] = {
        SG16_ROWS(XE_HPC, 0),
        SG16_256_ROWS(XE_HPC),
        SG16_ROWS(XE_HPC, QUANT),
        SG16_ROWS(XE2, 0),
        SG16_256_ROWS(XE2),
        SG16_ROWS(XE2, QUANT),
        SG8_ROWS(0),
        SG8_ROWS(QUANT),
};
/* clang-format on */

const size_t sdpa_fwd_xe_config_table_size =
        sizeof(sdpa_fwd_xe_config_table) / sizeof(sdpa_fwd_xe_config_table[0]);

/*
 * Backward rows: the 12 integers of BWD_SDPA_CONFIG in fast-path terms
 * (kernel_abi_xe.h):
 *
 * B(class, head size, props, KEYS, DSUB, KGROUPS, DSPLIT) =
 *   KEYS,16, DSUB,KEYS, DSUB,16, KGROUPS,1, DSPLIT,KGROUPS, DSPLIT,1
 *
 * One sub-group per key group computes the scores; every sub-group keeps
 * 2 x KEYS x DSUB gradient sums in registers. With the 256-register file
 * (both classes build the backward with it), 16 columns per sub-group
 * compile without spills, 32 do not; so DSPLIT = head size / 16, and never
 * 1 (the rows start at head size 32). Sub-group 16 (Xe-HPC, Xe2): groups of
 * 16 keys, two per work-group. Sub-group 8 (Xe-HPG): groups of 8 keys, two
 * per work-group (four would need 70 KiB for sdpa_xe_bwd_dq's 64 queries at
 * head size 128); head sizes above 128 stay on the portable kernels, as in
 * the forward.
 */
/* clang-format off */
#define B(cls, head, props, keys, dsub, kgroups, dsplit) \
    {{SDPA_DEVICE_CLASS_##cls, head, ANY, props}, \
     {keys, 16, dsub, keys, dsub, 16, kgroups, 1, dsplit, kgroups, dsplit, 1}}

#define BWD_SG16_ROWS(cls, p) \
        B(cls, 32, p, 16, 16, 2, 2), \
        B(cls, 64, p, 16, 16, 2, 4), \
        B(cls, 128, p, 16, 16, 2, 8), \
        B(cls, 256, p, 16, 16, 2, 16)
#define BWD_SG8_ROWS(p) \
        B(XE_HPG, 32, p, 8, 16, 2, 2), \
        B(XE_HPG, 64, p, 8, 16, 2, 4), \
        B(XE_HPG, 128, p, 8, 16, 2, 8)

const sdpa_bwd_config_row_t sdpa_bwd_xe_config_table[] = {
        BWD_SG16_ROWS(XE_HPC, 0),
        BWD_SG16_ROWS(XE_HPC, THIN),
        BWD_SG16_ROWS(XE2, 0),
        BWD_SG16_ROWS(XE2, THIN),
        BWD_SG8_ROWS(0),
        BWD_SG8_ROWS(THIN),
};
/* clang-format on */

const size_t sdpa_bwd_xe_config_table_size =
        sizeof(sdpa_bwd_xe_config_table) / sizeof(sdpa_bwd_xe_config_table[0]);
