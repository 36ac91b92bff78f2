/*
 * config_bwd_table.c - backward configurations: which tiling serves which
 * problem (see kernel_config.h for the matching rules).
 *
 * R(class, head size, Sk bound or ANY, props, unroll_m_bcbr, unroll_n_bcbr,
 *   unroll_m_dbc, unroll_n_dbc, unroll_m_dbr, unroll_n_dbr, wg_m_bcbr,
 *   wg_n_bcbr, wg_m_dbc, wg_n_dbc, wg_m_dbr, wg_n_dbr)
 *
 * Every row here can be selected (tests/core/test_config_rows.c). oneDNN's
 * backward table (sdpa configs.cpp) has only systolic rows for Xe2 and rows
 * for Xe-HPC that our kernels' local memory mostly cannot hold, so the GPU
 * rows are ours: sized for the local memory sdpa_bwd.cl stages its tiles in
 * (kernel_abi_bwd.h), measured spill-free on Tiger Lake, Arc A770 and Max
 * 1550 by make gpu-isa (doc/gpu-isa.md). Xe2 and Xe3 take the fallbacks.
 *
 * The CPU rows for head sizes 64 and 128 are measured (doc/cpu-performance.md);
 * the others are placeholders that satisfy every constraint. Row order does
 * not matter.
 */
#include "config_table_rows.h"

/* clang-format off */
#define R(cls, head, seq, props, um_bcbr, un_bcbr, um_dbc, un_dbc, um_dbr, un_dbr, wm_bcbr, \
          wn_bcbr, wm_dbc, wn_dbc, wm_dbr, wn_dbr) \
    {{SDPA_DEVICE_CLASS_##cls, head, seq, props}, \
     {um_bcbr, un_bcbr, um_dbc, un_dbc, um_dbr, un_dbr, wm_bcbr, wn_bcbr, wm_dbc, wn_dbc, \
      wm_dbr, wn_dbr}}

const sdpa_bwd_config_row_t sdpa_bwd_config_table[] = {
        /* xe_hpg, which xe_lp shares (config_match.c): ours, for sub-group 8
         * and 64 KiB of local memory; 16 sub-groups with small tiles each
         * (Xe-LP spilled with larger ones, doc/gpu-isa.md). Head size 256
         * (and DeepSeek-V3's 192 / 128) fits 64 KiB only with Bc = Br = 8,
         * 8 sub-groups: 57 KiB at D 256, 43 KiB at 192 (Bc = Br = 16 needs
         * 86 KiB at 192). */
        R(XE_HPG,  32, ANY, FMA,      8, 8,  8, 8,  8, 8, 4, 4, 4, 4, 4, 4),
        R(XE_HPG,  32, ANY, FMA|THIN, 8, 4,  8, 8,  8, 4, 4, 4, 4, 4, 4, 4),
        R(XE_HPG,  64, ANY, FMA,      8, 4, 16, 8, 16, 4, 4, 4, 4, 4, 4, 4),
        R(XE_HPG,  64, ANY, FMA|THIN, 8, 4, 16, 8, 16, 4, 4, 4, 4, 4, 4, 4),
        R(XE_HPG, 128, ANY, FMA,      8, 2, 16, 8, 16, 8, 2, 8, 8, 2, 8, 2),
        R(XE_HPG, 128, ANY, FMA|THIN, 8, 2, 16, 8, 16, 8, 2, 8, 8, 2, 8, 2),
        R(XE_HPG, 256, ANY, FMA,      8, 1, 32, 8, 32, 8, 1, 8, 8, 1, 8, 1),
        R(XE_HPG, 256, ANY, FMA|THIN, 8, 1, 32, 8, 32, 8, 1, 8, 8, 1, 8, 1),

        /* xe_hpc: ours, for sub-group 16 and 128 KiB of local memory, 16
         * sub-groups. Head size 512 does not fit 128 KiB. */
        R(XE_HPC,  32, ANY, FMA,      16, 8, 16, 16, 16, 8, 4, 4, 2, 4, 2, 4),
        R(XE_HPC,  32, ANY, FMA|THIN, 16, 4, 16, 16, 16, 4, 4, 4, 2, 4, 2, 4),
        R(XE_HPC,  64, ANY, FMA,      16, 8, 16, 16, 16, 8, 4, 4, 4, 4, 4, 4),
        R(XE_HPC,  64, ANY, FMA|THIN, 16, 4, 16, 16, 16, 4, 4, 4, 4, 4, 4, 4),
        R(XE_HPC, 128, ANY, FMA,      16, 2, 16, 16, 16, 8, 2, 8, 8, 2, 8, 2),
        R(XE_HPC, 128, ANY, FMA|THIN, 16, 2, 16, 16, 16, 8, 2, 8, 8, 2, 8, 2),
        R(XE_HPC, 256, ANY, FMA,      16, 1, 16, 16, 16, 16, 1, 16, 16, 1, 16, 1),
        R(XE_HPC, 256, ANY, FMA|THIN, 16, 1, 16, 16, 16, 16, 1, 16, 16, 1, 16, 1),

        /* xe2 */

        /* cpu (drivers/ze_cpu and any CPU Level Zero driver). A work-group
         * runs on one thread, its sub-groups one after the other: head sizes
         * 64 and 128 take one sub-group, Br = 32 and Bc = 128 (64 for 128,
         * whose Bc = 128 would not fit 256 KiB; a larger Bc also means fewer
         * dQ atomics), measured in CPU time on a Zen 4
         * (doc/cpu-performance.md: BERT backward -25%, Llama prefill
         * backward -10% against the 4 x 2 grid of Bc = 64, Br = 32). 32, 256
         * and 512 keep the unmeasured placeholders that fit 256 KiB of local
         * memory (SDPA_BWD_SLM_BYTES grows with Bc * D): Bc = 64, Br = 32
         * (16 for thin Q), Bc = 32, Br = 16 for 256 and Bc = Br = 16 for
         * 512. */
        R(CPU,  32, ANY, FMA,          16, 16,  16, 16, 16, 16, 4, 2, 2, 4,  2, 2),
        R(CPU,  32, ANY, FMA|THIN,     16, 16,  32, 16, 16, 16, 4, 1, 1, 4,  2, 1),
        R(CPU,  32, ANY, FMA|F32,      16, 16,  16, 16, 16, 16, 4, 2, 2, 4,  2, 2),
        R(CPU,  32, ANY, FMA|F32|THIN, 16, 16,  32, 16, 16, 16, 4, 1, 1, 4,  2, 1),

        R(CPU,  64, ANY, FMA,          128, 32,  64, 128,  64, 32, 1, 1, 1, 1, 1, 1),
        R(CPU,  64, ANY, FMA|THIN,     128, 16,  64, 128,  64, 16, 1, 1, 1, 1, 1, 1),
        R(CPU,  64, ANY, FMA|F32,      128, 32,  64, 128,  64, 32, 1, 1, 1, 1, 1, 1),
        R(CPU,  64, ANY, FMA|F32|THIN, 128, 16,  64, 128,  64, 16, 1, 1, 1, 1, 1, 1),

        R(CPU, 128, ANY, FMA,           64, 32, 128,  64, 128, 32, 1, 1, 1, 1, 1, 1),
        R(CPU, 128, ANY, FMA|THIN,      64, 16, 128,  64, 128, 16, 1, 1, 1, 1, 1, 1),
        R(CPU, 128, ANY, FMA|F32,       64, 32, 128,  64, 128, 32, 1, 1, 1, 1, 1, 1),
        R(CPU, 128, ANY, FMA|F32|THIN,  64, 16, 128,  64, 128, 16, 1, 1, 1, 1, 1, 1),

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

/* Last resort for any GPU and problem, one per head-size bucket up to 256,
 * valid at sub-group 8 and 16 with 512 work-items. Local memory decides where
 * they fit (kernel_abi_bwd.h stages K, V, Q and dO as f32): up to head size
 * 128 in 64 KiB, 256 in 128 KiB. Head size 512 would need 227 KiB, which no
 * GPU we know has (the CPU has rows of its own): refused on a GPU. */
const sdpa_bwd_config_row_t sdpa_bwd_config_fallbacks[] = {
        R(UNKNOWN_GPU,  32, ANY, 0, 16, 8,  16, 16,  16, 16, 2, 4, 2, 2, 2, 2),
        R(UNKNOWN_GPU,  64, ANY, 0, 16, 4,  16, 16,  16, 16, 2, 4, 4, 2, 4, 1),
        R(UNKNOWN_GPU, 128, ANY, 0, 16, 4,  32, 16,  32, 16, 1, 4, 4, 1, 4, 1),
        R(UNKNOWN_GPU, 256, ANY, 0, 16, 4,  64, 16,  64, 16, 1, 4, 4, 1, 4, 1),
};
/* clang-format on */

const size_t sdpa_bwd_config_fallbacks_size =
        sizeof(sdpa_bwd_config_fallbacks) / sizeof(sdpa_bwd_config_fallbacks[0]);
