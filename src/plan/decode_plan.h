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
 * with sub-group size sg on device: rows = Hq / Hkv * Sq <=
 * SDPA_DECODE_MAX_ROWS, Sq <= SDPA_DECODE_MAX_QUERIES, no dropout, no
 * varlen, f32 accumulation, its local memory within the device's. */
int sdpa_decode_serves(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape,
                       const sdpa_device_info_t *device, uint32_t sg);

/* Sets *chosen to 1 if the forward takes the decode kernel: it serves the
 * problem and SDPA_ZE_DECODE is "1" (every such problem), or unset, empty
 * or "auto" and the problem splits its keys (sdpa_decode_num_splits > 1;
 * unsplit, the portable forward is faster on the CPU device so far); "0":
 * never. Returns SDPA_SUCCESS, or SDPA_ERROR_INVALID_CONFIG (*chosen 0)
 * for any other value of SDPA_ZE_DECODE, quoted in the message. */
sdpa_status_t sdpa_decode_chosen(const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape,
                                 const sdpa_device_info_t *device, uint32_t sg, int *chosen);

/* The most queries the decode kernel takes (beyond, the portable forward's
 * lanes along queries are busy anyway). */
#define SDPA_DECODE_MAX_QUERIES 8

/* The number of key splits for a problem the decode kernel serves:
 * problem->num_splits = 1: 1; n >= 2: n; 0: on a GPU enough work-groups to
 * give each compute unit one (B * Hkv groups times the splits), with at
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
