/*
 * config_fwd_table.c - forward configurations: which tiling serves which
 * problem (see kernel_config.h for the matching rules).
 *
 * R(class, head size, Sk bound or ANY, props, unroll_m_kq, unroll_n_kq,
 *   unroll_m_vs, unroll_n_vs, wg_m_kq, wg_n_kq, wg_m_vs, wg_n_vs)
 *
 * Every row here can be selected (tests/core/test_config_rows.c proves it):
 * a row no problem on any device of its class can choose is deleted, not
 * kept as data. Our kernels multiply with FMAs (queries carry
 * SDPA_CONFIG_FMA), so oneDNN's systolic rows (those without FMA) are not
 * here; a systolic kernel brings its own table.
 *
 * The xe_hpg (also serving xe_lp) and xe_hpc rows are ours: sized for the
 * local memory sdpa_fwd.cl stages K, V, S and O in (kernel_abi.h) and for
 * the register file, and compiled by Intel's compiler for Tiger Lake, Arc
 * A770 and Max 1550 on every change (make gpu-isa: doc/gpu-isa.md records
 * them building spill-free). The xe2 rows are what remains selectable of
 * oneDNN's sdpa configs.cpp FMA rows (its micro_sdpa tables); Debian's GPU
 * compiler predates Xe2, so they are not measured.
 *
 * The CPU rows for head sizes 64 and 128 are measured (doc/cpu-performance.md);
 * the others are placeholders that satisfy every constraint. Row order does
 * not matter.
 */
#include "config_table_rows.h"

/* clang-format off */
#define R(cls, head, seq, props, umkq, unkq, umvs, unvs, wmkq, wnkq, wmvs, wnvs) \
    {{SDPA_DEVICE_CLASS_##cls, head, seq, props}, {umkq, unkq, umvs, unvs, wmkq, wnkq, wmvs, wnvs}}

const sdpa_fwd_config_row_t sdpa_fwd_config_table[] = {
        /* xe_hpg, which xe_lp shares (config_match.c): ours, for sub-group 8
         * and 64 KiB of local memory: 8 or 16 sub-groups, at most 16
         * elements of S and 32 of O per lane, every one measured spill-free
         * (doc/gpu-isa.md). Head size 256 (and DeepSeek-V3's 192 / 128,
         * which takes its bucket) fits 64 KiB only with 8 queries by 4
         * keys: 4 sub-groups, 64 elements of O per lane, which Debian 12's
         * IGC spills (160 to 288 bytes): no row, the forward is refused. */
        R(XE_HPG,  32, ANY, FMA,            8,  8,  8,  8, 4, 4, 4, 4),
        R(XE_HPG,  32, ANY, FMA|THIN,       4,  8,  8,  4, 8, 1, 4, 2),
        R(XE_HPG,  32, ANY, FMA|QUANT,      8,  8,  8,  8, 4, 4, 4, 4),
        R(XE_HPG,  32, ANY, FMA|QUANT|THIN, 4,  8,  8,  4, 8, 1, 4, 2),
        R(XE_HPG,  64, ANY, FMA,            8, 16, 16, 16, 4, 2, 4, 2),
        R(XE_HPG,  64, ANY, FMA|THIN,       4,  8, 16,  4, 8, 1, 4, 2),
        R(XE_HPG,  64, ANY, FMA|QUANT,      8, 16, 16, 16, 4, 2, 4, 2),
        R(XE_HPG,  64, ANY, FMA|QUANT|THIN, 4,  8, 16,  4, 8, 1, 4, 2),
        R(XE_HPG, 128, ANY, FMA,            2, 16, 16, 16, 8, 1, 8, 1),
        R(XE_HPG, 128, ANY, FMA|THIN,       2,  8, 16,  8, 8, 1, 8, 1),
        R(XE_HPG, 128, ANY, FMA|QUANT,      2, 16, 16, 16, 8, 1, 8, 1),
        R(XE_HPG, 128, ANY, FMA|QUANT|THIN, 2,  8, 16,  8, 8, 1, 8, 1),

        /* xe_hpc: ours, for sub-group 16 and 128 KiB of local memory: 8 or
         * 16 sub-groups, at most 16 elements of S and 32 of O per lane,
         * measured spill-free (doc/gpu-isa.md). Head size 512 does not fit
         * 128 KiB. */
        R(XE_HPC,  32, ANY, FMA,             8, 32, 16,  8, 8, 2, 2, 8),
        R(XE_HPC,  32, ANY, FMA|THIN,        8, 16, 16,  4, 8, 1, 2, 4),
        R(XE_HPC,  32, ANY, FMA|QUANT,       8, 32, 16,  8, 8, 2, 2, 8),
        R(XE_HPC,  32, ANY, FMA|QUANT|THIN,  8, 16, 16,  4, 8, 1, 2, 4),
        R(XE_HPC,  64, ANY, FMA,             8, 32, 16, 16, 8, 2, 4, 4),
        R(XE_HPC,  64, ANY, FMA|THIN,        8, 16, 16,  8, 8, 1, 4, 2),
        R(XE_HPC,  64, ANY, FMA|QUANT,       8, 32, 16, 16, 8, 2, 4, 4),
        R(XE_HPC,  64, ANY, FMA|QUANT|THIN,  8, 16, 16,  8, 8, 1, 4, 2),
        R(XE_HPC, 128, ANY, FMA,             4, 16, 16, 16, 8, 2, 8, 2),
        R(XE_HPC, 128, ANY, FMA|THIN,        4, 16, 16, 16, 8, 1, 8, 1),
        R(XE_HPC, 128, ANY, FMA|QUANT,       4, 16, 16, 16, 8, 2, 8, 2),
        R(XE_HPC, 128, ANY, FMA|QUANT|THIN,  4, 16, 16, 16, 8, 1, 8, 1),
        R(XE_HPC, 256, ANY, FMA,             2, 16, 32, 16, 8, 1, 8, 1),
        R(XE_HPC, 256, ANY, FMA|THIN,        2, 16, 32, 16, 8, 1, 8, 1),
        R(XE_HPC, 256, ANY, FMA|QUANT,       2, 16, 32, 16, 8, 1, 8, 1),
        R(XE_HPC, 256, ANY, FMA|QUANT|THIN,  2, 16, 32, 16, 8, 1, 8, 1),

        /* xe2 */

        R(XE2, 32, 384, FMA, 32, 16, 16, 16, 2, 4, 2, 4),
        R(XE2, 64, 384, FMA, 16, 16, 16, 16, 4, 4, 4, 4),

        R(XE2, 16, ANY, FMA, 16, 16, 16, 16, 2, 4, 2, 4),
        R(XE2, 32, ANY, FMA, 32, 16, 16, 16, 2, 4, 2, 4),
        R(XE2, 64, ANY, FMA, 16, 16, 16, 16, 4, 4, 4, 4),

        R(XE2, 32, 385, FMA|THIN, 16, 16, 16, 16, 8, 2, 8, 2),

        R(XE2, 32, ANY, FMA|THIN, 16, 16, 16, 16, 8, 2, 8, 2),

        R(XE2, 32, 384, FMA|QUANT, 16, 16, 32, 16, 4, 2, 4, 2),
        R(XE2, 128, 384, FMA|QUANT, 16, 16, 32, 16, 4, 4, 4, 4),

        R(XE2, 32, ANY, FMA|QUANT, 16, 16, 32, 16, 4, 2, 4, 2),
        R(XE2, 128, ANY, FMA|QUANT, 16, 16, 32, 16, 4, 4, 4, 4),

        R(XE2, 128, ANY, FMA|THIN|QUANT, 16, 16, 32, 16, 8, 2, 8, 2),

        R(XE2, 16, ANY, FMA|INTEG, 16, 16, 16, 16, 2, 4, 2, 4),
        R(XE2, 32, ANY, FMA|INTEG, 32, 16, 16, 16, 2, 4, 2, 4),
        R(XE2, 64, ANY, FMA|INTEG, 16, 16, 32, 16, 2, 4, 2, 4),

        R(XE2, 32, ANY, FMA|THIN|INTEG, 16, 16, 16, 16, 8, 2, 8, 2),
        R(XE2, 64, ANY, FMA|THIN|INTEG, 16, 16, 16, 16, 4, 2, 4, 2),

        /* cpu (drivers/ze_cpu and any CPU Level Zero driver). A work-group
         * runs on one thread, its sub-groups one after the other, so more
         * sub-groups add no parallelism, only barrier and loop overhead;
         * larger tiles stage K and V once for more queries. Head sizes 64
         * and 128: one sub-group, 64 keys x 64 queries (thin Q: 128 keys),
         * measured in CPU time on a Zen 4 (doc/cpu-performance.md: BERT
         * forward -18%, long-16k -17%, Llama prefill -6%, decode -37%
         * against the 4 x 2 grid of 64 keys x 32 queries). Past 256 keys
         * (issue 15), head size 64 takes 256 queries in 4 sub-groups: K and
         * V are staged once per 256 queries instead of 64 (long-16k -8%,
         * BERT -3%); up to 256 keys the 64-query tile keeps a small
         * problem on more work-groups than cores. 32, 256 and 576
         * keep the unmeasured placeholders: query tiles of 32 (16 for thin
         * Q), K/V tiles that keep the local memory under 256 KiB (576,
         * the bucket of MLA's 576/512 and of 512: 4 x 144 head-dim rows,
         * 16 queries by 16 keys; 512's 32 queries by 8 keys would need
         * 257 KiB at 576). */
        R(CPU,  32, ANY, FMA,            16, 16,  16, 16, 2, 2, 2, 2),
        R(CPU,  32, ANY, FMA|THIN,       16, 16,  16, 16, 2, 1, 2, 1),
        R(CPU,  32, ANY, FMA|F32,        16, 16,  16, 16, 2, 2, 2, 2),
        R(CPU,  32, ANY, FMA|F32|THIN,   16, 16,  16, 16, 2, 1, 2, 1),
        R(CPU,  32, ANY, FMA|QUANT,      16, 16,  16, 16, 2, 2, 2, 2),
        R(CPU,  32, ANY, FMA|QUANT|THIN, 16, 16,  16, 16, 2, 1, 2, 1),

        R(CPU,  64, 256, FMA,             64, 64,  64, 64, 1, 1, 1, 1),
        R(CPU,  64, 256, FMA|F32,         64, 64,  64, 64, 1, 1, 1, 1),
        R(CPU,  64, ANY, FMA,             64, 64,  64, 64, 1, 4, 1, 4),
        R(CPU,  64, ANY, FMA|THIN,       128, 16,  64, 16, 1, 1, 1, 1),
        R(CPU,  64, ANY, FMA|F32,         64, 64,  64, 64, 1, 4, 1, 4),
        R(CPU,  64, ANY, FMA|F32|THIN,   128, 16,  64, 16, 1, 1, 1, 1),
        R(CPU,  64, ANY, FMA|QUANT,       64, 64,  64, 64, 1, 1, 1, 1),
        R(CPU,  64, ANY, FMA|QUANT|THIN, 128, 16,  64, 16, 1, 1, 1, 1),

        R(CPU, 128, ANY, FMA,             64, 64, 128, 64, 1, 1, 1, 1),
        R(CPU, 128, ANY, FMA|THIN,       128, 16, 128, 16, 1, 1, 1, 1),
        R(CPU, 128, ANY, FMA|F32,         64, 64, 128, 64, 1, 1, 1, 1),
        R(CPU, 128, ANY, FMA|F32|THIN,   128, 16, 128, 16, 1, 1, 1, 1),
        R(CPU, 128, ANY, FMA|QUANT,       64, 64, 128, 64, 1, 1, 1, 1),
        R(CPU, 128, ANY, FMA|QUANT|THIN, 128, 16, 128, 16, 1, 1, 1, 1),

        R(CPU, 256, ANY, FMA,            16, 16,  64, 16, 4, 2, 4, 2),
        R(CPU, 256, ANY, FMA|THIN,       16, 16,  64, 16, 4, 1, 4, 1),
        R(CPU, 256, ANY, FMA|F32,        16, 16,  64, 16, 4, 2, 4, 2),
        R(CPU, 256, ANY, FMA|F32|THIN,   16, 16,  64, 16, 4, 1, 4, 1),
        R(CPU, 256, ANY, FMA|QUANT,      16, 16,  64, 16, 4, 2, 4, 2),
        R(CPU, 256, ANY, FMA|QUANT|THIN, 16, 16,  64, 16, 4, 1, 4, 1),

        R(CPU, 576, ANY, FMA,             4, 16, 144, 16, 4, 1, 4, 1),
        R(CPU, 576, ANY, FMA|THIN,        4, 16, 144, 16, 4, 1, 4, 1),
        R(CPU, 576, ANY, FMA|F32,         4, 16, 144, 16, 4, 1, 4, 1),
        R(CPU, 576, ANY, FMA|F32|THIN,    4, 16, 144, 16, 4, 1, 4, 1),
        R(CPU, 576, ANY, FMA|QUANT,       4, 16, 144, 16, 4, 1, 4, 1),
        R(CPU, 576, ANY, FMA|QUANT|THIN,  4, 16, 144, 16, 4, 1, 4, 1),
};

const size_t sdpa_fwd_config_table_size =
        sizeof(sdpa_fwd_config_table) / sizeof(sdpa_fwd_config_table[0]);

/* Last resort for any GPU and problem, one per head-size bucket up to 256: a
 * query tile of 16 (fine for thin and wide Q alike), 4 sub-groups (8 for
 * 256), and K/V tiles small enough for 64 KiB of local memory up to head
 * size 128; the 256 row needs 105 KiB, so it runs on devices with 128 KiB.
 * Sub-group 8 or 16. The 256 row keeps O at 2 vectors per lane: with 4, the
 * GPU compiler's first attempt spilled on Xe-HPC (doc/gpu-isa.md). No GPU
 * we know has the local memory a head size of 512 needs (147 KiB at least;
 * the CPU has rows of its own), so there is no 512 row: such a problem is
 * refused on a GPU. */
const sdpa_fwd_config_row_t sdpa_fwd_config_fallbacks[] = {
        R(UNKNOWN_GPU,  32, ANY, 0, 16, 16,  16, 16, 2, 1, 2, 1),
        R(UNKNOWN_GPU,  64, ANY, 0,  8, 16,  16, 16, 4, 1, 4, 1),
        R(UNKNOWN_GPU, 128, ANY, 0,  4, 16,  32, 16, 4, 1, 4, 1),
        R(UNKNOWN_GPU, 256, ANY, 0,  2, 16,  32, 16, 8, 1, 8, 1),
};
/* clang-format on */

const size_t sdpa_fwd_config_fallbacks_size =
        sizeof(sdpa_fwd_config_fallbacks) / sizeof(sdpa_fwd_config_fallbacks[0]);
