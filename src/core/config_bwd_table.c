/*
 * config_bwd_table.c - backward configurations: which tiling serves which
 * problem (see kernel_config.h for the matching rules).
 *
 * R(class, head size, Sk bound or ANY, props, unroll_m_bcbr, unroll_n_bcbr,
 *   unroll_m_dbc, unroll_n_dbc, unroll_m_dbr, unroll_n_dbr, wg_m_bcbr,
 *   wg_n_bcbr, wg_m_dbc, wg_n_dbc, wg_m_dbr, wg_n_dbr)
 *
 * The GPU rows are the data of oneDNN's sdpa configs.cpp (its backward
 * table). oneDNN refuses some problems outright (Xe2 integrated, short
 * self-attention on Xe2, fewer than 256 queries on Xe-HPC) because it has
 * another implementation for them; we have not, so those problems take the
 * matching rows or the fallbacks. Rows without FMA were tuned for systolic
 * kernels and match only queries without FMA.
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

/* clang-format off */
#define R(cls, head, seq, props, um_bcbr, un_bcbr, um_dbc, un_dbc, um_dbr, un_dbr, wm_bcbr, \
          wn_bcbr, wm_dbc, wn_dbc, wm_dbr, wn_dbr) \
    {{SDPA_DEVICE_CLASS_##cls, head, seq, props}, \
     {um_bcbr, un_bcbr, um_dbc, un_dbc, um_dbr, un_dbr, wm_bcbr, wn_bcbr, wm_dbc, wn_dbc, \
      wm_dbr, wn_dbr}}

const sdpa_bwd_config_row_t sdpa_bwd_config_table[] = {
        /* xe_hpc */
        R(XE_HPC, 32, ANY, 0, 16, 16, 16, 16, 16, 16, 2, 16, 2, 2, 2, 16),
        R(XE_HPC, 32, 128, 0, 16, 16, 16, 16, 16, 16, 2, 4, 2, 2, 2, 4),

        R(XE_HPC, 64, ANY, 0, 16, 32, 16, 16, 32, 32, 2, 16, 4, 2, 2, 16),
        R(XE_HPC, 64, 64, 0, 16, 16, 16, 16, 16, 32, 2, 4, 4, 2, 4, 2),
        R(XE_HPC, 64, 77, 0, 16, 16, 16, 16, 32, 32, 1, 8, 4, 1, 2, 4),
        R(XE_HPC, 64, 128, 0, 16, 16, 16, 16, 16, 16, 4, 4, 4, 4, 4, 4),

        R(XE_HPC, 128, ANY, 0, 16, 16, 16, 16, 32, 32, 2, 8, 8, 2, 4, 4),

        R(XE_HPC, 32, ANY, THIN, 16, 16, 16, 16, 32, 16, 1, 2, 2, 1, 1, 2),
        R(XE_HPC, 64, ANY, THIN, 32, 16, 16, 32, 32, 32, 1, 4, 4, 1, 2, 2),
        R(XE_HPC, 128, ANY, THIN, 16, 16, 16, 16, 32, 32, 2, 8, 8, 2, 4, 4),

        R(XE_HPC, 32, ANY, F32|FMA, 32, 32, 16, 16, 32, 32, 1, 4, 2, 2, 1, 4),
        R(XE_HPC, 64, ANY, F32|FMA, 16, 32, 16, 16, 16, 32, 4, 4, 4, 4, 4, 4),
        R(XE_HPC, 128, ANY, F32|FMA, 16, 16, 16, 32, 32, 32, 2, 4, 8, 1, 4, 2),

        /* xe2 */
        R(XE2, 32, ANY, INTEG, 16, 64, 16, 16, 32, 32, 2, 2, 2, 2, 1, 4),
        R(XE2, 64, ANY, INTEG, 16, 32, 16, 16, 32, 32, 2, 4, 4, 2, 2, 4),
        R(XE2, 128, ANY, INTEG, 16, 32, 16, 16, 32, 32, 4, 8, 8, 4, 4, 8),

        R(XE2, 32, ANY, 0, 16, 64, 16, 16, 32, 32, 2, 2, 2, 2, 1, 4),
        R(XE2, 32, 128, 0, 16, 16, 16, 16, 16, 16, 4, 4, 2, 4, 2, 4),
        R(XE2, 32, 196, 0, 16, 16, 16, 16, 16, 32, 1, 2, 2, 1, 2, 1),
        R(XE2, 64, ANY, 0, 16, 32, 16, 16, 32, 32, 2, 4, 4, 2, 2, 4),
        R(XE2, 64, 50, 0, 16, 16, 16, 16, 32, 32, 1, 4, 4, 1, 2, 2),
        R(XE2, 64, 64, 0, 16, 16, 16, 32, 32, 32, 2, 4, 4, 1, 2, 2),
        R(XE2, 64, 65, 0, 16, 16, 16, 16, 16, 32, 2, 4, 4, 2, 4, 2),
        R(XE2, 64, 128, 0, 16, 16, 32, 32, 16, 16, 4, 4, 2, 2, 4, 4),
        R(XE2, 64, 512, 0, 16, 16, 16, 32, 16, 16, 4, 4, 4, 2, 4, 4),
        R(XE2, 88, ANY, 0, 16, 16, 16, 32, 32, 32, 2, 8, 8, 1, 4, 4),
        R(XE2, 128, ANY, 0, 16, 16, 16, 16, 32, 32, 2, 8, 8, 2, 4, 4),


        /* cpu (drivers/ze_cpu and any CPU Level Zero driver): placeholders
         * that fit 256 KiB of local memory (SDPA_BWD_SLM_BYTES grows with
         * Bc * D): Bc = 64, Br = 32 (16 for thin Q) up to head size 128,
         * then Bc = 32, Br = 16 for 256 and Bc = Br = 16 for 512. */
        R(CPU,  32, ANY, FMA,          16, 16,  16, 16, 16, 16, 4, 2, 2, 4,  2, 2),
        R(CPU,  32, ANY, FMA|THIN,     16, 16,  32, 16, 16, 16, 4, 1, 1, 4,  2, 1),
        R(CPU,  32, ANY, FMA|F32,      16, 16,  16, 16, 16, 16, 4, 2, 2, 4,  2, 2),
        R(CPU,  32, ANY, FMA|F32|THIN, 16, 16,  32, 16, 16, 16, 4, 1, 1, 4,  2, 1),

        R(CPU,  64, ANY, FMA,          16, 16,  32, 16, 16, 16, 4, 2, 2, 4,  4, 2),
        R(CPU,  64, ANY, FMA|THIN,     16, 16,  64, 16, 16, 16, 4, 1, 1, 4,  4, 1),
        R(CPU,  64, ANY, FMA|F32,      16, 16,  32, 16, 16, 16, 4, 2, 2, 4,  4, 2),
        R(CPU,  64, ANY, FMA|F32|THIN, 16, 16,  64, 16, 16, 16, 4, 1, 1, 4,  4, 1),

        R(CPU, 128, ANY, FMA,          16, 16,  64, 16, 32, 16, 4, 2, 2, 4,  4, 2),
        R(CPU, 128, ANY, FMA|THIN,     16, 16, 128, 16, 32, 16, 4, 1, 1, 4,  4, 1),
        R(CPU, 128, ANY, FMA|F32,      16, 16,  64, 16, 32, 16, 4, 2, 2, 4,  4, 2),
        R(CPU, 128, ANY, FMA|F32|THIN, 16, 16, 128, 16, 32, 16, 4, 1, 1, 4,  4, 1),

        R(CPU, 256, ANY, FMA,          16,  4,  64, 16, 32, 16, 2, 4, 4, 2,  8, 1),
        R(CPU, 256, ANY, FMA|THIN,     16,  4,  64, 16, 32, 16, 2, 4, 4, 2,  8, 1),
        R(CPU, 256, ANY, FMA|F32,      16,  4,  64, 16, 32, 16, 2, 4, 4, 2,  8, 1),
        R(CPU, 256, ANY, FMA|F32|THIN, 16,  4,  64, 16, 32, 16, 2, 4, 4, 2,  8, 1),

        R(CPU, 512, ANY, FMA,          16,  4, 128, 16, 128, 16, 1, 4, 4, 1, 4, 1),
        R(CPU, 512, ANY, FMA|THIN,     16,  4, 128, 16, 128, 16, 1, 4, 4, 1, 4, 1),
        R(CPU, 512, ANY, FMA|F32,      16,  4, 128, 16, 128, 16, 1, 4, 4, 1, 4, 1),
        R(CPU, 512, ANY, FMA|F32|THIN, 16,  4, 128, 16, 128, 16, 1, 4, 4, 1, 4, 1),
};

const size_t sdpa_bwd_config_table_size =
        sizeof(sdpa_bwd_config_table) / sizeof(sdpa_bwd_config_table[0]);

/* Last resort for any device and problem, one per head-size bucket, valid
 * at sub-group 8 and 16 with 512 work-items. Local memory decides where they
 * fit (kernel_abi_bwd.h stages K, V, Q and dO as f32): up to head size 128 in
 * 64 KiB, 256 in 128 KiB; the 512 row needs 227 KiB (the CPU). */
const sdpa_bwd_config_row_t sdpa_bwd_config_fallbacks[] = {
        R(UNKNOWN_GPU,  32, ANY, 0, 16, 8,  16, 16,  16, 16, 2, 4, 2, 2, 2, 2),
        R(UNKNOWN_GPU,  64, ANY, 0, 16, 4,  16, 16,  16, 16, 2, 4, 4, 2, 4, 1),
        R(UNKNOWN_GPU, 128, ANY, 0, 16, 4,  32, 16,  32, 16, 1, 4, 4, 1, 4, 1),
        R(UNKNOWN_GPU, 256, ANY, 0, 16, 4,  64, 16,  64, 16, 1, 4, 4, 1, 4, 1),
        R(UNKNOWN_GPU, 512, ANY, 0, 16, 4, 128, 16, 128, 16, 1, 4, 4, 1, 4, 1),
};
/* clang-format on */

const size_t sdpa_bwd_config_fallbacks_size =
        sizeof(sdpa_bwd_config_fallbacks) / sizeof(sdpa_bwd_config_fallbacks[0]);
