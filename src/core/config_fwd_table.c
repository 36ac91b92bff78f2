/*
 * config_fwd_table.c - forward configurations: which tiling serves which
 * problem (see kernel_config.h for the matching rules).
 *
 * R(class, head size, Sk bound or ANY, props, unroll_m_kq, unroll_n_kq,
 *   unroll_m_vs, unroll_n_vs, wg_m_kq, wg_n_kq, wg_m_vs, wg_n_vs)
 *
 * The GPU rows are the data of oneDNN's sdpa configs.cpp (its micro_sdpa
 * tables), converted to this form. Left out: oneDNN's rows for head sizes
 * above 512 and for Xe3P (we do not serve the former and cannot recognise the
 * latter), and the 18 rows whose S and O grids have different sub-group
 * counts (sdpa_fwd.cl runs both grids on the same sub-groups; all 18 are
 * systolic rows). Rows without FMA were tuned for oneDNN's systolic kernels;
 * ours are FMA kernels, so only FMA rows match until a systolic variant
 * exists. oneDNN staged neither K nor V in local memory; sdpa_fwd.cl stages
 * both as f32, so many GPU rows need more local memory than their device
 * has: the choice skips those (config_choose.h).
 *
 * The CPU rows are placeholders that satisfy every constraint; replace them
 * with measured ones (one line per row). Row order does not matter.
 */
#include "kernel_config.h"

#define ANY SDPA_CONFIG_ANY_SEQ
#define THIN SDPA_CONFIG_THIN_Q
#define QUANT SDPA_CONFIG_QUANTIZED
#define INTEG SDPA_CONFIG_INTEGRATED
#define FMA SDPA_CONFIG_FMA
#define F32 SDPA_CONFIG_F32
#define F16ACC SDPA_CONFIG_F16_ACC

/* clang-format off */
#define R(cls, head, seq, props, umkq, unkq, umvs, unvs, wmkq, wnkq, wmvs, wnvs) \
    {{SDPA_DEVICE_CLASS_##cls, head, seq, props}, {umkq, unkq, umvs, unvs, wmkq, wnkq, wmvs, wnvs}}

const sdpa_fwd_config_row_t sdpa_fwd_config_table[] = {
        /* xe_hpg */
        R(XE_HPG, 16, ANY, FMA|F32, 8, 16, 8, 16, 2, 4, 2, 4),

        R(XE_HPG, 32, ANY, 0, 16, 16, 16, 16, 2, 8, 2, 8),
        R(XE_HPG, 32, 256, 0, 16, 16, 16, 16, 2, 8, 2, 8),
        R(XE_HPG, 32, 64, 0, 16, 16, 16, 8, 4, 4, 2, 8),
        R(XE_HPG, 32, 32, 0, 8, 8, 8, 8, 4, 4, 4, 4),
        R(XE_HPG, 32, ANY, THIN, 8, 32, 16, 8, 8, 1, 2, 4),

        R(XE_HPG, 32, ANY, QUANT, 32, 16, 16, 16, 2, 8, 2, 8),
        R(XE_HPG, 32, ANY, QUANT|THIN, 32, 16, 8, 8, 16, 2, 8, 4),

        R(XE_HPG, 32, ANY, FMA, 16, 16, 8, 16, 8, 4, 8, 4),
        R(XE_HPG, 32, ANY, FMA|THIN, 8, 32, 16, 8, 8, 1, 2, 4),

        R(XE_HPG, 32, ANY, FMA|F32, 32, 16, 32, 16, 4, 2, 4, 2),
        R(XE_HPG, 32, ANY, QUANT|FMA|F32, 8, 16, 16, 16, 16, 1, 16, 1),
        R(XE_HPG, 32, ANY, THIN|QUANT|FMA|F32, 16, 16, 8, 8, 16, 1, 8, 2),

        R(XE_HPG, 64, ANY, 0, 32, 16, 16, 16, 4, 8, 4, 8),
        R(XE_HPG, 64, 128, 0, 16, 16, 16, 16, 4, 8, 4, 8),
        R(XE_HPG, 64, 64, 0, 32, 16, 16, 8, 8, 4, 4, 8),
        R(XE_HPG, 64, ANY, THIN, 8, 16, 16, 8, 8, 1, 4, 2),

        R(XE_HPG, 64, ANY, FMA, 16, 16, 16, 16, 8, 2, 8, 2),
        R(XE_HPG, 64, ANY, FMA|THIN, 16, 16, 32, 8, 32, 1, 16, 2),

        R(XE_HPG, 64, ANY, QUANT, 32, 16, 16, 16, 4, 8, 4, 8),
        R(XE_HPG, 64, 128, QUANT, 16, 16, 16, 8, 8, 4, 4, 8),
        R(XE_HPG, 64, 64, QUANT, 32, 8, 32, 8, 2, 8, 2, 8),
        R(XE_HPG, 64, 32, QUANT, 8, 8, 16, 8, 4, 8, 4, 8),

        R(XE_HPG, 64, ANY, QUANT|THIN, 16, 16, 8, 8, 16, 2, 8, 4),
        R(XE_HPG, 64, 128, QUANT|THIN, 16, 8, 8, 8, 8, 4, 8, 4),
        R(XE_HPG, 64, 64, QUANT|THIN, 8, 8, 8, 8, 8, 2, 8, 2),

        R(XE_HPG, 64, ANY, FMA|F32, 16, 32, 16, 16, 8, 1, 4, 2),
        R(XE_HPG, 64, ANY, THIN|FMA|F32, 32, 16, 32, 16, 16, 1, 16, 1),
        R(XE_HPG, 64, ANY, QUANT|FMA|F32, 8, 16, 16, 8, 8, 1, 4, 2),
        R(XE_HPG, 64, ANY, THIN|QUANT|FMA|F32, 16, 16, 8, 8, 32, 1, 16, 2),


        R(XE_HPG, 80, ANY, FMA, 16, 16, 16, 16, 5, 4, 5, 4),
        R(XE_HPG, 80, ANY, FMA|F16ACC, 8, 16, 16, 16, 8, 4, 8, 4),

        R(XE_HPG, 128, ANY, 0, 16, 16, 32, 8, 8, 4, 4, 8),
        R(XE_HPG, 128, 32, 0, 16, 16, 16, 8, 16, 2, 8, 4),
        R(XE_HPG, 128, 256, THIN, 8, 16, 32, 8, 8, 1, 4, 2),
        R(XE_HPG, 128, ANY, THIN, 8, 16, 16, 8, 16, 1, 8, 2),

        R(XE_HPG, 128, ANY, QUANT, 8, 32, 16, 32, 8, 2, 8, 2),
        R(XE_HPG, 128, 32, QUANT, 8, 32, 16, 32, 8, 2, 8, 2),
        R(XE_HPG, 128, 64, QUANT, 8, 8, 16, 8, 8, 4, 8, 4),
        R(XE_HPG, 128, 512, QUANT, 16, 16, 16, 16, 8, 4, 8, 4),
        R(XE_HPG, 128, 96, QUANT|THIN, 8, 8, 8, 8, 16, 2, 16, 2),
        R(XE_HPG, 128, ANY, QUANT|THIN, 16, 16, 16, 8, 16, 2, 8, 4),

        R(XE_HPG, 128, ANY, FMA, 8, 16, 16, 16, 8, 4, 8, 4),
        R(XE_HPG, 128, 448, FMA, 8, 16, 16, 16, 8, 4, 8, 4),
        R(XE_HPG, 128, 448, FMA|F16ACC, 8, 16, 16, 16, 8, 2, 8, 2),
        R(XE_HPG, 128, ANY, FMA|THIN, 32, 16, 32, 8, 16, 2, 8, 4),

        R(XE_HPG, 128, ANY, FMA|F32, 8, 16, 32, 8, 8, 2, 4, 4),
        R(XE_HPG, 128, ANY, THIN|FMA|F32, 8, 16, 32, 8, 16, 1, 8, 2),
        R(XE_HPG, 128, ANY, QUANT|FMA|F32, 8, 16, 16, 16, 8, 1, 8, 1),
        R(XE_HPG, 128, ANY, THIN|QUANT|FMA|F32, 16, 16, 16, 8, 32, 1, 16, 2),

        R(XE_HPG, 256, ANY, 0, 16, 16, 32, 8, 16, 2, 8, 4),
        R(XE_HPG, 256, 128, 0, 8, 16, 32, 16, 8, 4, 8, 4),
        R(XE_HPG, 256, 32, 0, 8, 16, 32, 8, 16, 2, 8, 4),

        R(XE_HPG, 256, ANY, QUANT, 16, 16, 64, 8, 8, 4, 4, 8),
        R(XE_HPG, 256, 512, QUANT, 16, 16, 32, 16, 8, 4, 8, 4),
        R(XE_HPG, 256, 64, QUANT, 8, 8, 32, 8, 8, 4, 8, 4),

        R(XE_HPG, 256, ANY, THIN, 8, 8, 16, 8, 16, 1, 16, 1),
        R(XE_HPG, 256, 64, THIN, 16, 8, 16, 8, 16, 1, 16, 1),
        R(XE_HPG, 256, 32, THIN, 16, 16, 32, 8, 16, 1, 8, 2),

        R(XE_HPG, 256, ANY, THIN|QUANT, 32, 8, 32, 8, 8, 4, 8, 4),
        R(XE_HPG, 256, 96, THIN|QUANT, 8, 8, 16, 8, 16, 2, 16, 2),

        R(XE_HPG, 256, ANY, FMA, 8, 16, 32, 16, 8, 1, 8, 1),
        R(XE_HPG, 256, ANY, FMA|THIN, 16, 8, 16, 8, 32, 1, 32, 1),

        R(XE_HPG, 256, ANY, FMA|F32, 32, 8, 32, 8, 16, 2, 16, 2),
        R(XE_HPG, 256, ANY, THIN|FMA|F32, 8, 16, 32, 8, 16, 1, 8, 2),
        R(XE_HPG, 256, ANY, QUANT|FMA|F32, 16, 8, 32, 8, 8, 2, 8, 2),
        R(XE_HPG, 256, ANY, THIN|QUANT|FMA|F32, 8, 16, 32, 8, 16, 2, 8, 4),

        R(XE_HPG, 512, 64, QUANT, 8, 8, 64, 8, 8, 4, 8, 4),
        R(XE_HPG, 512, 128, QUANT, 8, 16, 32, 16, 16, 2, 16, 2),
        R(XE_HPG, 512, 256, QUANT, 16, 8, 64, 8, 8, 4, 8, 4),
        R(XE_HPG, 512, ANY, QUANT, 8, 16, 64, 8, 16, 2, 8, 4),

        R(XE_HPG, 512, 64, THIN|QUANT, 8, 16, 32, 8, 32, 1, 16, 2),
        R(XE_HPG, 512, 256, THIN|QUANT, 16, 8, 32, 8, 16, 2, 16, 2),
        R(XE_HPG, 512, ANY, THIN|QUANT, 16, 8, 16, 8, 32, 1, 32, 1),

        R(XE_HPG, 512, ANY, 0, 8, 16, 32, 16, 16, 2, 16, 2),
        R(XE_HPG, 512, ANY, THIN, 8, 8, 32, 8, 16, 1, 16, 1),

        /* xe_hpc */
        R(XE_HPC, 32, ANY, 0, 16, 64, 32, 16, 4, 2, 1, 8),
        R(XE_HPC, 32, ANY, THIN, 16, 64, 16, 16, 8, 1, 2, 4),
        R(XE_HPC, 32, 32, 0, 16, 16, 16, 16, 2, 4, 2, 4),
        R(XE_HPC, 32, 32, THIN, 16, 64, 16, 16, 8, 1, 2, 4),

        R(XE_HPC, 64, ANY, 0, 16, 64, 32, 16, 8, 2, 2, 8),
        R(XE_HPC, 64, 64, 0, 32, 32, 32, 16, 4, 2, 2, 4),
        R(XE_HPC, 64, 32, 0, 16, 16, 16, 16, 4, 2, 4, 2),
        R(XE_HPC, 64, ANY, THIN, 32, 32, 32, 16, 4, 1, 2, 2),
        R(XE_HPC, 64, 64, THIN, 16, 16, 16, 16, 4, 1, 4, 1),

        R(XE_HPC, 64, 1024, QUANT, 16, 64, 16, 16, 16, 1, 4, 4),
        R(XE_HPC, 64, 384, QUANT, 16, 64, 16, 32, 8, 2, 4, 4),
        R(XE_HPC, 64, 64, QUANT, 16, 16, 16, 16, 4, 4, 4, 4),
        R(XE_HPC, 64, ANY, QUANT, 16, 64, 16, 32, 8, 1, 4, 2),

        R(XE_HPC, 64, 1152, THIN|QUANT, 16, 16, 16, 16, 16, 1, 16, 1),
        R(XE_HPC, 64, 256, THIN|QUANT, 16, 16, 16, 16, 16, 1, 16, 1),
        R(XE_HPC, 64, ANY, THIN|QUANT, 64, 16, 16, 16, 16, 2, 16, 2),

        R(XE_HPC, 128, ANY, 0, 16, 64, 32, 16, 16, 2, 4, 8),
        R(XE_HPC, 128, 64, 0, 16, 32, 32, 32, 4, 2, 4, 2),
        R(XE_HPC, 128, 32, 0, 16, 16, 16, 16, 8, 2, 8, 2),
        R(XE_HPC, 128, ANY, THIN, 32, 32, 32, 16, 8, 1, 4, 2),

        R(XE_HPC, 128, ANY, QUANT, 16, 64, 16, 32, 16, 1, 8, 2),
        R(XE_HPC, 128, 128, QUANT, 16, 16, 16, 16, 8, 4, 8, 4),
        R(XE_HPC, 128, 32, QUANT, 16, 16, 16, 16, 8, 2, 8, 2),
        R(XE_HPC, 128, 128, INTEG|QUANT, 16, 16, 16, 16, 8, 2, 8, 2),

        R(XE_HPC, 128, ANY, THIN|QUANT, 16, 16, 16, 16, 16, 1, 16, 1),
        R(XE_HPC, 128, 512, THIN|QUANT|F32, 16, 16, 16, 16, 16, 2, 16, 2),
        R(XE_HPC, 128, 96, THIN|QUANT, 16, 16, 16, 16, 8, 1, 8, 1),
        R(XE_HPC, 128, ANY, INTEG|THIN|QUANT, 16, 16, 16, 16, 8, 1, 8, 1),

        R(XE_HPC, 256, ANY, 0, 16, 32, 32, 32, 8, 4, 8, 4),
        R(XE_HPC, 256, 64, 0, 16, 32, 32, 32, 8, 1, 8, 1),
        R(XE_HPC, 256, ANY, THIN, 16, 16, 16, 16, 16, 1, 16, 1),

        R(XE_HPC, 256, ANY, FMA|THIN, 16, 16, 32, 16, 32, 1, 32, 1),

        R(XE_HPC, 256, ANY, QUANT, 16, 32, 32, 32, 8, 4, 8, 4),
        R(XE_HPC, 256, 64, QUANT, 16, 16, 16, 16, 16, 2, 16, 2),

        R(XE_HPC, 256, 1152, QUANT|THIN, 16, 16, 16, 16, 32, 1, 32, 1),
        R(XE_HPC, 256, 196, QUANT|THIN, 16, 16, 16, 16, 16, 1, 16, 1),

        R(XE_HPC, 512, ANY, 0, 32, 16, 64, 16, 8, 4, 8, 4),
        R(XE_HPC, 512, 128, 0, 16, 16, 64, 16, 8, 4, 8, 4),
        R(XE_HPC, 512, 32, 0, 16, 16, 64, 16, 8, 2, 8, 2),

        R(XE_HPC, 512, ANY, THIN, 32, 16, 32, 16, 16, 1, 16, 1),
        R(XE_HPC, 512, 1024, THIN, 64, 16, 32, 16, 16, 1, 16, 1),
        R(XE_HPC, 512, 512, THIN, 32, 16, 32, 16, 16, 1, 16, 1),
        R(XE_HPC, 512, 128, THIN, 16, 16, 64, 16, 8, 1, 8, 1),


        R(XE_HPC, 512, ANY, QUANT, 16, 32, 64, 16, 16, 2, 8, 4),
        R(XE_HPC, 512, 128, QUANT, 16, 16, 64, 16, 8, 2, 8, 2),

        R(XE_HPC, 512, ANY, THIN|QUANT, 16, 16, 32, 16, 16, 2, 16, 2),

        R(XE_HPC, 32, ANY, FMA|THIN, 16, 16, 16, 16, 32, 1, 32, 1),

        R(XE_HPC, 32, 1024, FMA, 32, 32, 16, 16, 8, 2, 4, 4),
        R(XE_HPC, 32, ANY, FMA, 32, 32, 16, 16, 8, 2, 4, 4),

        R(XE_HPC, 64, 384, FMA, 16, 16, 16, 16, 8, 4, 8, 4),
        R(XE_HPC, 64, 1024, FMA, 16, 32, 16, 16, 16, 2, 8, 4),
        R(XE_HPC, 64, ANY, FMA, 16, 32, 16, 16, 16, 2, 8, 4),

        R(XE_HPC, 128, 384, FMA, 32, 32, 16, 16, 16, 1, 8, 2),
        R(XE_HPC, 128, 1024, FMA, 32, 32, 16, 32, 8, 2, 8, 2),
        R(XE_HPC, 128, ANY, FMA, 32, 32, 16, 32, 8, 2, 8, 2),

        R(XE_HPC, 256, 384, FMA, 16, 32, 16, 16, 32, 1, 16, 2),
        R(XE_HPC, 256, 1024, FMA, 16, 16, 32, 16, 8, 4, 8, 4),
        R(XE_HPC, 256, ANY, FMA, 16, 16, 32, 16, 8, 4, 8, 4),

        R(XE_HPC, 512, 1024, FMA, 16, 16, 32, 16, 16, 1, 16, 1),
        R(XE_HPC, 512, ANY, FMA, 16, 16, 32, 16, 16, 1, 16, 1),

        R(XE_HPC, 16, ANY, F32|FMA, 16, 32, 16, 16, 4, 1, 2, 2),
        R(XE_HPC, 32, ANY, F32|FMA, 16, 32, 16, 16, 4, 2, 2, 4),
        R(XE_HPC, 64, ANY, F32|FMA, 16, 16, 16, 16, 4, 2, 4, 2),
        R(XE_HPC, 64, 384, F32|FMA, 16, 16, 16, 16, 8, 2, 8, 2),
        R(XE_HPC, 128, ANY, F32|FMA, 32, 32, 16, 32, 8, 2, 8, 2),
        R(XE_HPC, 256, ANY, F32|FMA, 16, 16, 32, 16, 8, 4, 8, 4),
        R(XE_HPC, 512, ANY, F32|FMA, 16, 16, 32, 16, 16, 1, 16, 1),

        /* xe2 */
        R(XE2, 32, ANY, 0, 16, 64, 32, 16, 4, 2, 1, 8),
        R(XE2, 32, ANY, THIN, 16, 64, 16, 16, 8, 1, 2, 4),
        R(XE2, 32, 32, 0, 16, 16, 16, 16, 2, 4, 2, 4),
        R(XE2, 32, 32, THIN, 16, 64, 16, 16, 8, 1, 2, 4),

        R(XE2, 32, ANY, QUANT, 16, 64, 16, 32, 16, 1, 8, 2),
        R(XE2, 32, 512, QUANT, 16, 64, 16, 32, 8, 4, 4, 8),
        R(XE2, 32, 384, QUANT, 16, 64, 16, 16, 16, 1, 4, 4),
        R(XE2, 32, 128, QUANT, 16, 64, 16, 32, 8, 1, 4, 2),
        R(XE2, 32, 32, QUANT, 16, 16, 16, 16, 4, 4, 4, 4),
        R(XE2, 32, 1024, INTEG|QUANT, 16, 64, 16, 32, 8, 4, 4, 8),
        R(XE2, 32, 384, INTEG|QUANT, 16, 64, 16, 16, 16, 1, 4, 4),
        R(XE2, 32, 128, INTEG|QUANT, 16, 16, 16, 16, 4, 4, 4, 4),

        R(XE2, 32, 512, THIN|QUANT, 64, 16, 16, 16, 8, 1, 8, 1),
        R(XE2, 32, 128, THIN|QUANT, 16, 16, 16, 16, 8, 2, 8, 2),
        R(XE2, 32, 64, THIN|QUANT, 16, 16, 16, 16, 4, 2, 4, 2),

        R(XE2, 32, ANY, INTEG|THIN|QUANT, 16, 16, 16, 16, 8, 1, 8, 1),
        R(XE2, 32, 384, INTEG|THIN|QUANT, 64, 16, 16, 16, 4, 1, 4, 1),

        R(XE2, 64, ANY, 0, 16, 64, 32, 16, 8, 2, 2, 8),
        R(XE2, 64, 64, 0, 32, 32, 32, 16, 4, 2, 2, 4),
        R(XE2, 64, 32, 0, 16, 16, 16, 16, 4, 2, 4, 2),
        R(XE2, 64, 64, THIN, 16, 16, 16, 16, 4, 2, 4, 2),

        R(XE2, 64, ANY, QUANT, 16, 64, 16, 32, 16, 1, 8, 2),
        R(XE2, 64, 512, QUANT, 16, 64, 16, 32, 8, 4, 4, 8),
        R(XE2, 64, 384, QUANT, 16, 64, 16, 16, 16, 1, 4, 4),
        R(XE2, 64, 128, QUANT, 16, 64, 16, 32, 8, 1, 4, 2),
        R(XE2, 64, 32, QUANT, 16, 16, 16, 16, 4, 4, 4, 4),
        R(XE2, 64, 1024, INTEG|QUANT, 16, 64, 16, 32, 8, 4, 4, 8),
        R(XE2, 64, 384, INTEG|QUANT, 16, 64, 16, 16, 16, 1, 4, 4),
        R(XE2, 64, 128, INTEG|QUANT, 16, 16, 16, 16, 4, 4, 4, 4),
        R(XE2, 64, 96, INTEG|QUANT, 16, 64, 16, 32, 8, 1, 4, 2),

        R(XE2, 64, 512, THIN|QUANT, 64, 16, 16, 16, 8, 2, 8, 2),
        R(XE2, 64, 128, THIN|QUANT, 16, 16, 16, 16, 8, 2, 8, 2),
        R(XE2, 64, 64, THIN|QUANT, 16, 16, 16, 16, 4, 2, 4, 2),

        R(XE2, 64, ANY, INTEG|THIN|QUANT, 16, 16, 16, 16, 8, 2, 8, 2),
        R(XE2, 64, 384, INTEG|THIN|QUANT, 64, 16, 16, 16, 4, 2, 4, 2),

        R(XE2, 128, ANY, 0, 16, 64, 32, 16, 16, 2, 4, 8),
        R(XE2, 128, 64, 0, 16, 32, 32, 32, 4, 2, 4, 2),
        R(XE2, 128, 32, 0, 16, 16, 16, 16, 8, 2, 8, 2),

        R(XE2, 128, ANY, THIN, 32, 32, 32, 16, 8, 1, 4, 2),

        R(XE2, 128, ANY, QUANT, 16, 16, 16, 16, 8, 4, 8, 4),
        R(XE2, 128, 128, QUANT, 16, 16, 16, 16, 8, 4, 8, 4),
        R(XE2, 128, 32, QUANT, 16, 16, 16, 16, 8, 2, 8, 2),
        R(XE2, 128, 128, INTEG|QUANT, 16, 16, 16, 16, 8, 2, 8, 2),

        R(XE2, 128, ANY, THIN|QUANT, 16, 16, 16, 16, 16, 2, 16, 2),
        R(XE2, 128, 96, THIN|QUANT, 16, 16, 16, 16, 8, 2, 8, 2),

        R(XE2, 256, 1024, THIN, 64, 16, 32, 16, 16, 2, 16, 2),
        R(XE2, 256, 512, THIN, 32, 16, 64, 16, 16, 1, 16, 1),
        R(XE2, 256, 128, THIN, 16, 16, 64, 16, 8, 1, 8, 1),
        R(XE2, 256, ANY, THIN, 32, 16, 64, 16, 16, 1, 16, 1),

        R(XE2, 256, ANY, THIN|QUANT, 16, 16, 64, 16, 16, 1, 16, 1),
        R(XE2, 256, 64, THIN|QUANT, 16, 16, 64, 16, 8, 1, 8, 1),

        R(XE2, 256, ANY, INTEG, 16, 16, 16, 16, 16, 2, 16, 2),
        R(XE2, 256, 128, INTEG, 16, 16, 64, 16, 8, 2, 8, 2),

        R(XE2, 256, ANY, INTEG|THIN, 16, 16, 64, 16, 16, 2, 16, 2),
        R(XE2, 256, 256, INTEG|THIN, 16, 16, 64, 16, 8, 1, 8, 1),
        R(XE2, 256, 1024, INTEG|THIN, 16, 16, 64, 16, 8, 2, 8, 2),

        R(XE2, 256, ANY, QUANT, 16, 64, 16, 32, 32, 1, 16, 2),
        R(XE2, 256, 384, QUANT, 16, 32, 32, 32, 8, 2, 8, 2),
        R(XE2, 256, 128, QUANT, 16, 32, 32, 32, 8, 1, 8, 1),
        R(XE2, 256, 64, QUANT, 16, 32, 64, 16, 8, 2, 4, 4),

        R(XE2, 256, 128, INTEG|QUANT, 16, 32, 32, 32, 8, 2, 8, 2),
        R(XE2, 256, 64, INTEG|QUANT, 16, 16, 16, 16, 16, 2, 16, 2),

        R(XE2, 256, ANY, INTEG|THIN|QUANT, 32, 16, 64, 16, 4, 1, 4, 1),
        R(XE2, 256, 1151, INTEG|THIN|QUANT, 16, 16, 64, 16, 4, 1, 4, 1),
        R(XE2, 256, 511, INTEG|THIN|QUANT, 32, 32, 32, 16, 16, 1, 8, 2),
        R(XE2, 256, 383, INTEG|THIN|QUANT, 16, 16, 16, 16, 16, 2, 16, 2),

        R(XE2, 256, ANY, 0, 16, 32, 32, 32, 8, 4, 8, 4),
        R(XE2, 256, 64, 0, 16, 32, 32, 32, 8, 1, 8, 1),

        R(XE2, 512, ANY, 0, 32, 16, 64, 16, 8, 4, 8, 4),
        R(XE2, 512, 64, 0, 16, 16, 64, 16, 8, 2, 8, 2),

        R(XE2, 512, 1024, THIN, 64, 16, 32, 16, 16, 2, 16, 2),
        R(XE2, 512, 512, THIN, 32, 16, 64, 16, 16, 1, 16, 1),
        R(XE2, 512, 128, THIN, 16, 16, 64, 16, 8, 1, 8, 1),
        R(XE2, 512, ANY, THIN, 32, 16, 64, 16, 16, 1, 16, 1),

        R(XE2, 512, ANY, QUANT, 16, 32, 64, 16, 16, 2, 8, 4),
        R(XE2, 512, 128, QUANT, 16, 16, 64, 16, 8, 2, 8, 2),

        R(XE2, 512, ANY, THIN|QUANT, 16, 16, 64, 16, 16, 1, 16, 1),
        R(XE2, 512, 64, THIN|QUANT, 16, 16, 64, 16, 8, 1, 8, 1),

        R(XE2, 512, ANY, INTEG, 32, 16, 64, 16, 8, 2, 8, 2),
        R(XE2, 512, 128, INTEG, 16, 16, 64, 16, 8, 2, 8, 2),

        R(XE2, 512, ANY, INTEG|THIN, 16, 16, 64, 16, 16, 2, 16, 2),
        R(XE2, 512, 256, INTEG|THIN, 16, 16, 64, 16, 8, 1, 8, 1),
        R(XE2, 512, 1024, INTEG|THIN, 16, 16, 64, 16, 8, 2, 8, 2),

        R(XE2, 512, ANY, INTEG|QUANT, 16, 32, 32, 32, 16, 1, 16, 1),

        R(XE2, 512, 1024, INTEG|THIN|QUANT, 16, 16, 64, 16, 16, 1, 16, 1),



        R(XE2, 32, 384, FMA, 32, 16, 16, 16, 2, 4, 2, 4),
        R(XE2, 64, 384, FMA, 16, 16, 16, 16, 4, 4, 4, 4),
        R(XE2, 128, 384, FMA, 16, 16, 32, 16, 4, 4, 4, 4),
        R(XE2, 256, 384, FMA, 16, 16, 32, 16, 8, 2, 8, 2),
        R(XE2, 512, 384, FMA, 16, 16, 32, 16, 16, 2, 16, 2),

        R(XE2, 16, ANY, FMA, 16, 16, 16, 16, 2, 4, 2, 4),
        R(XE2, 32, ANY, FMA, 32, 16, 16, 16, 2, 4, 2, 4),
        R(XE2, 64, ANY, FMA, 16, 16, 16, 16, 4, 4, 4, 4),
        R(XE2, 128, ANY, FMA, 16, 16, 32, 16, 4, 4, 4, 4),
        R(XE2, 256, ANY, FMA, 16, 16, 32, 16, 8, 2, 8, 2),
        R(XE2, 512, ANY, FMA, 16, 16, 32, 16, 16, 2, 16, 2),

        R(XE2, 32, 385, FMA|THIN, 16, 16, 16, 16, 8, 2, 8, 2),
        R(XE2, 64, 385, FMA|THIN, 32, 16, 16, 16, 8, 4, 8, 4),
        R(XE2, 128, 385, FMA|THIN, 16, 16, 32, 16, 16, 1, 16, 1),
        R(XE2, 256, 385, FMA|THIN, 32, 16, 32, 16, 16, 2, 16, 2),

        R(XE2, 32, ANY, FMA|THIN, 16, 16, 16, 16, 8, 2, 8, 2),
        R(XE2, 64, ANY, FMA|THIN, 32, 32, 16, 32, 4, 4, 4, 4),
        R(XE2, 128, ANY, FMA|THIN, 16, 16, 32, 16, 16, 1, 16, 1),
        R(XE2, 128, ANY, F32|FMA|THIN, 16, 16, 32, 16, 8, 2, 8, 2),
        R(XE2, 256, ANY, FMA|THIN, 16, 16, 16, 16, 16, 2, 16, 2),
        R(XE2, 512, ANY, FMA|THIN, 16, 16, 32, 16, 16, 2, 16, 2),


        R(XE2, 32, 384, FMA|QUANT, 16, 16, 32, 16, 4, 2, 4, 2),
        R(XE2, 64, 384, FMA|QUANT, 32, 16, 32, 16, 4, 4, 4, 4),
        R(XE2, 128, 384, FMA|QUANT, 16, 16, 32, 16, 4, 4, 4, 4),
        R(XE2, 256, 384, FMA|QUANT, 32, 16, 16, 16, 32, 1, 32, 1),

        R(XE2, 32, ANY, FMA|QUANT, 16, 16, 32, 16, 4, 2, 4, 2),
        R(XE2, 64, ANY, FMA|QUANT, 32, 16, 32, 16, 4, 4, 4, 4),
        R(XE2, 128, ANY, FMA|QUANT, 16, 16, 32, 16, 4, 4, 4, 4),
        R(XE2, 256, ANY, FMA|QUANT, 16, 16, 32, 16, 8, 4, 8, 4),

        R(XE2, 32, ANY, FMA|THIN|QUANT, 32, 32, 16, 16, 8, 2, 4, 4),
        R(XE2, 64, ANY, FMA|THIN|QUANT, 16, 32, 16, 16, 16, 2, 8, 4),
        R(XE2, 128, ANY, FMA|THIN|QUANT, 16, 16, 32, 16, 8, 2, 8, 2),
        R(XE2, 256, ANY, FMA|THIN|QUANT, 16, 16, 16, 16, 16, 2, 16, 2),


        R(XE2, 32, 384, FMA|INTEG, 32, 32, 16, 32, 4, 4, 4, 4),
        R(XE2, 64, 384, FMA|INTEG, 16, 16, 16, 16, 8, 4, 8, 4),
        R(XE2, 128, 384, FMA|INTEG, 16, 16, 32, 16, 4, 4, 4, 4),
        R(XE2, 256, 384, FMA|INTEG, 16, 16, 32, 16, 8, 2, 8, 2),
        R(XE2, 512, 384, FMA|INTEG, 16, 16, 32, 16, 16, 2, 16, 2),

        R(XE2, 16, ANY, FMA|INTEG, 16, 16, 16, 16, 2, 4, 2, 4),
        R(XE2, 32, ANY, FMA|INTEG, 32, 16, 16, 16, 2, 4, 2, 4),
        R(XE2, 64, ANY, FMA|INTEG, 16, 16, 32, 16, 2, 4, 2, 4),
        R(XE2, 128, ANY, FMA|INTEG, 16, 16, 32, 16, 4, 4, 4, 4),
        R(XE2, 256, ANY, FMA|INTEG, 16, 16, 32, 16, 8, 2, 8, 2),
        R(XE2, 512, ANY, FMA|INTEG, 16, 16, 32, 16, 16, 2, 16, 2),

        R(XE2, 128, 385, FMA|THIN|INTEG, 16, 16, 32, 16, 16, 1, 16, 1),

        R(XE2, 32, ANY, FMA|THIN|INTEG, 16, 16, 16, 16, 8, 2, 8, 2),
        R(XE2, 64, ANY, FMA|THIN|INTEG, 16, 16, 16, 16, 4, 2, 4, 2),
        R(XE2, 128, ANY, FMA|THIN|INTEG, 16, 16, 32, 16, 16, 1, 16, 1),
        R(XE2, 128, ANY, F32|FMA|THIN|INTEG, 16, 16, 32, 16, 4, 2, 4, 2),
        R(XE2, 256, ANY, FMA|THIN|INTEG, 16, 16, 32, 16, 8, 2, 8, 2),





        /* cpu (drivers/ze_cpu and any CPU Level Zero driver): placeholders,
         * query tiles of 32 (16 for thin Q), K/V tiles that keep the local
         * memory under 256 KiB. */
        R(CPU,  32, ANY, FMA,            16, 16,  16, 16, 2, 2, 2, 2),
        R(CPU,  32, ANY, FMA|THIN,       16, 16,  16, 16, 2, 1, 2, 1),
        R(CPU,  32, ANY, FMA|F32,        16, 16,  16, 16, 2, 2, 2, 2),
        R(CPU,  32, ANY, FMA|F32|THIN,   16, 16,  16, 16, 2, 1, 2, 1),
        R(CPU,  32, ANY, FMA|QUANT,      16, 16,  16, 16, 2, 2, 2, 2),
        R(CPU,  32, ANY, FMA|QUANT|THIN, 16, 16,  16, 16, 2, 1, 2, 1),

        R(CPU,  64, ANY, FMA,            16, 16,  16, 16, 4, 2, 4, 2),
        R(CPU,  64, ANY, FMA|THIN,       16, 16,  16, 16, 4, 1, 4, 1),
        R(CPU,  64, ANY, FMA|F32,        16, 16,  16, 16, 4, 2, 4, 2),
        R(CPU,  64, ANY, FMA|F32|THIN,   16, 16,  16, 16, 4, 1, 4, 1),
        R(CPU,  64, ANY, FMA|QUANT,      16, 16,  16, 16, 4, 2, 4, 2),
        R(CPU,  64, ANY, FMA|QUANT|THIN, 16, 16,  16, 16, 4, 1, 4, 1),

        R(CPU, 128, ANY, FMA,            16, 16,  32, 16, 4, 2, 4, 2),
        R(CPU, 128, ANY, FMA|THIN,       16, 16,  32, 16, 4, 1, 4, 1),
        R(CPU, 128, ANY, FMA|F32,        16, 16,  32, 16, 4, 2, 4, 2),
        R(CPU, 128, ANY, FMA|F32|THIN,   16, 16,  32, 16, 4, 1, 4, 1),
        R(CPU, 128, ANY, FMA|QUANT,      16, 16,  32, 16, 4, 2, 4, 2),
        R(CPU, 128, ANY, FMA|QUANT|THIN, 16, 16,  32, 16, 4, 1, 4, 1),

        R(CPU, 256, ANY, FMA,            16, 16,  64, 16, 4, 2, 4, 2),
        R(CPU, 256, ANY, FMA|THIN,       16, 16,  64, 16, 4, 1, 4, 1),
        R(CPU, 256, ANY, FMA|F32,        16, 16,  64, 16, 4, 2, 4, 2),
        R(CPU, 256, ANY, FMA|F32|THIN,   16, 16,  64, 16, 4, 1, 4, 1),
        R(CPU, 256, ANY, FMA|QUANT,      16, 16,  64, 16, 4, 2, 4, 2),
        R(CPU, 256, ANY, FMA|QUANT|THIN, 16, 16,  64, 16, 4, 1, 4, 1),

        R(CPU, 512, ANY, FMA,             2, 16, 128, 16, 4, 2, 4, 2),
        R(CPU, 512, ANY, FMA|THIN,        4, 16, 128, 16, 4, 1, 4, 1),
        R(CPU, 512, ANY, FMA|F32,         2, 16, 128, 16, 4, 2, 4, 2),
        R(CPU, 512, ANY, FMA|F32|THIN,    4, 16, 128, 16, 4, 1, 4, 1),
        R(CPU, 512, ANY, FMA|QUANT,       2, 16, 128, 16, 4, 2, 4, 2),
        R(CPU, 512, ANY, FMA|QUANT|THIN,  4, 16, 128, 16, 4, 1, 4, 1),
};

const size_t sdpa_fwd_config_table_size =
        sizeof(sdpa_fwd_config_table) / sizeof(sdpa_fwd_config_table[0]);

/* Last resort for any device and problem, one per head-size bucket: a query
 * tile of 16 (fine for thin and wide Q alike), 4 sub-groups, and K/V tiles
 * small enough for 64 KiB of local memory up to head size 128; the 256 row
 * needs 84 KiB and the 512 row 147 KiB (Q^T and O alone take 96), so those
 * run on devices with 128 KiB and 256 KiB (the CPU). Sub-group 8 or 16 (a
 * device with only sub-group 32 has no fallback). */
const sdpa_fwd_config_row_t sdpa_fwd_config_fallbacks[] = {
        R(UNKNOWN_GPU,  32, ANY, 0, 16, 16,  16, 16, 2, 1, 2, 1),
        R(UNKNOWN_GPU,  64, ANY, 0,  8, 16,  16, 16, 4, 1, 4, 1),
        R(UNKNOWN_GPU, 128, ANY, 0,  4, 16,  32, 16, 4, 1, 4, 1),
        R(UNKNOWN_GPU, 256, ANY, 0,  2, 16,  64, 16, 4, 1, 4, 1),
        R(UNKNOWN_GPU, 512, ANY, 0,  1, 16, 128, 16, 4, 1, 4, 1),
};
/* clang-format on */

const size_t sdpa_fwd_config_fallbacks_size =
        sizeof(sdpa_fwd_config_fallbacks) / sizeof(sdpa_fwd_config_fallbacks[0]);
