/*
 * decode_plan.h - when the forward takes the thin-Q decode kernel
 * (spirv/portable/sdpa_decode.cl, kernel_abi_decode.h) and how many key splits it
 * runs (split-KV decode: partial states in scratch, merged by
 * spirv/portable/sdpa_merge.cl). Device-free decisions; fwd_plan.c builds the launch.
 */
#ifndef SDPA_CORE_DECODE_PLAN_H
#define SDPA_CORE_DECODE_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "device.h"
#include "problem.h"
#include "sdpa.h"

/* 1 if the decode kernel can serve problem (a checked forward problem)
 * with sub-group size sg on device: Sq <= SDPA_DECODE_MAX_QUERIES, no
 * dropout, no varlen, f32 accumulation, and a block of its rows
 * (sdpa_decode_row_block) fits the device's local memory. */
int sdpa_decode_serves(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape,
                       const sdpa_device_info_t *device, uint32_t sg);

/* How the decode kernel serves the rows = Hq / Hkv * Sq rows of a K/V
 * head: *blocks work-groups of *block_rows rows each (the last possibly
 * fewer), the fewest blocks of at most SDPA_DECODE_MAX_ROWS rows, shared
 * out evenly, whose local memory (SDPA_DECODE_SLM_BYTES) fits the
 * device's. Every problem of at most SDPA_DECODE_MAX_ROWS rows that fits
 * is one block of every row. Returns 0 (both 0) if not even one row fits. */
int sdpa_decode_row_block(const sdpa_shape_t *shape, const sdpa_device_info_t *device, uint32_t sg,
                          uint32_t *block_rows, uint32_t *blocks);

/* Sets *chosen to 1 if the forward takes the decode kernel first: it
 * serves the problem and SDPA_ZE_DECODE is "1" (every such problem), or
 * unset, empty or "auto" and the problem splits its keys
 * (sdpa_decode_num_splits > 1; unsplit, the portable forward is faster on
 * the CPU device so far); "0": never. Sets *fallback to 1 if the kernel
 * serves the problem and SDPA_ZE_DECODE is not "0": the forward then takes
 * it where the portable forward refuses the problem (MLA's head size 576
 * on a GPU). Returns SDPA_SUCCESS, or SDPA_ERROR_INVALID_CONFIG (both 0)
 * for any other value of SDPA_ZE_DECODE, quoted in the message. */
sdpa_status_t sdpa_decode_chosen(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape,
                                 const sdpa_device_info_t *device, uint32_t sg, int *chosen,
                                 int *fallback);

/* The most queries the decode kernel takes (beyond, the portable forward's
 * lanes along queries are busy anyway). */
#define SDPA_DECODE_MAX_QUERIES 8

/* The number of key splits for a problem the decode kernel serves:
 * problem->num_splits = 1: 1; n >= 2: n; 0: on a GPU enough work-groups to
 * give each compute unit one (B * Hkv * row blocks groups times the splits), with at
 * least SDPA_DECODE_MIN_TILES_PER_SPLIT key tiles per split, on the CPU
 * device 1 (the kernel is slower there than the portable forward). Always at most
 * SDPA_DECODE_MAX_SPLITS and at most the key tiles of Sk. */
uint32_t sdpa_decode_num_splits(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape,
                                const sdpa_device_info_t *device, uint32_t sg);

#define SDPA_DECODE_MIN_TILES_PER_SPLIT 8

/* Lays out the split scratch for n splits (sdpa_scratch_append): n states
 * of f32 O [B, Hq, Sq, D], then (at *lse_offset) n f32 log-sum-exps
 * [B, Hq, Sq]; *bytes in all, 0 for n = 1. Returns SDPA_SUCCESS, or
 * SDPA_ERROR_UNSUPPORTED if it would exceed the largest addressable
 * buffer. */
sdpa_status_t sdpa_decode_scratch_plan(const sdpa_shape_t *shape, uint32_t n, size_t *bytes,
                                       size_t *lse_offset);

/* The merge of n split states into problem's O (and its log-sum-exp
 * workspace when training), as a merge primitive would take it. */
void sdpa_decode_merge_desc(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape,
                            uint32_t n, sdpa_merge_desc_t *out);

#endif /* SDPA_CORE_DECODE_PLAN_H */
