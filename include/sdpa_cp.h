/*
 * sdpa_cp.h - context-parallel attention: one sequence sharded across the
 * processes of an MPI communicator (ring attention), on top of the backends
 * of sdpa.h. Library: libsdpa_cp, built and installed when configure finds
 * MPI; the backends themselves never link MPI.
 *
 * What it computes. N processes (ranks of a communicator, one Level Zero
 * device each) hold one shard each of Q, K and V of one sequence of S = N L
 * tokens: L tokens per rank, in the order an sdpa_cp_layout_t says. Together
 * they compute exact attention over the whole sequence (the same result as
 * one sdpa primitive over all S tokens, up to rounding), each rank writing
 * the O rows of its own tokens; backward gives each rank dQ, dK and dV of its
 * own tokens. It is a client of the backend table like a framework: every
 * kernel it runs is an sdpa primitive (attention on a block of keys with its
 * log-sum-exp, merge_create / merge_execute of ABI 1.1).
 *
 * How. K/V blocks travel around the ring of ranks (rank r sends to r + 1 and
 * receives from r - 1, modulo N): at step t rank r holds the block of rank
 * r - t, computes its queries' attention over it while the block of the next
 * step is already in flight (non-blocking sends and receives, progressed
 * while the device computes), and merges the partial result into its running
 * (O, LSE) with the merge operation, in f32. Backward runs the same ring:
 * each K/V block travels with its f32 dK/dV accumulators, to which every rank
 * adds its contribution, and returns to its owner at the end; dQ stays local.
 * Causal attention over contiguous shards would leave rank 0 idle for most
 * steps; SDPA_CP_LAYOUT_ZIGZAG gives every rank the same work at every step.
 *
 * Memory and transport. Every buffer this library allocates is proportional
 * to L (none to S). MPI moves host memory only: K/V blocks and gradient
 * accumulators travel in host USM (zeMemAllocHost) ring buffers; the rank's
 * own K/V are copied (or packed, when strided) from the device into them,
 * received blocks are copied to device memory for the kernels, and dK/dV
 * contributions are written by the device to host USM and added there in
 * f32. SDPA_CP_QUERY_TRANSPORT names the path. An MPI that takes Level Zero
 * device pointers could skip those copies; this library does not use one.
 *
 * Conventions are sdpa.h's: statuses, struct_size / struct_version, messages
 * through sdpa_cp_last_error(). Functions marked collective must be called
 * by every rank of the communicator, in the same order, with matching
 * arguments; a failure on any rank makes the call fail on every rank (no
 * rank is left waiting), each with its own message.
 *
 * Threads. A cp object is used by one thread at a time, and that thread makes
 * MPI calls: initialize MPI with at least MPI_THREAD_FUNNELED if it is not
 * the main thread (MPI_THREAD_SERIALIZED if several threads take turns).
 */
#ifndef SDPA_CP_H
#define SDPA_CP_H

#include <stddef.h>
#include <stdint.h>

#include <mpi.h>

#include "sdpa.h"
#include "sdpa_cp_transport.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 2: timeout_seconds appended. A version 1 desc (struct_size up to and
 * including problem) is still accepted, as timeout_seconds = 0. */
#define SDPA_CP_DESC_VERSION 2u

/* What one rank passes to sdpa_cp_create. */
typedef struct sdpa_cp_desc {
    uint32_t struct_size;    /* sizeof(sdpa_cp_desc_t) */
    uint32_t struct_version; /* SDPA_CP_DESC_VERSION */
    /* The ring: ranks in the communicator's order. Duplicated at creation
     * (the object's messages never mix with the caller's). */
    MPI_Comm comm;
    /* A backend table of ABI 1.1 or later (merge_create), and a context of
     * it bound to ze_context and ze_device, the rank's device. */
    const sdpa_backend_iface_t *backend;
    sdpa_context_t *context;
    ze_context_handle_t ze_context;
    ze_device_handle_t ze_device;
    sdpa_cp_layout_t layout;
    /* This rank's shard as one sdpa problem, copied at creation: q [B, Hq, L,
     * D], k and v [B, Hkv, L, D], dst [B, Hq, L, D] (and for BACKWARD
     * diff_dst, diff_q, diff_k, diff_v of the same shapes), any strides, one
     * dtype for all of them (f32, f16 or bf16); Sq = Sk = L, the same on
     * every rank. prop_kind: FORWARD_INFERENCE, FORWARD_TRAINING (writes the
     * cp workspace) or BACKWARD (reads it). mask_kind: NONE, or causal over
     * the whole sequence (CAUSAL_TOP_LEFT and CAUSAL_BOTTOM_RIGHT are the
     * same mask here: queries and keys are the same S tokens). Scale (host or
     * device), softmax_kind, accumulation dtypes and deterministic are passed
     * to every primitive. Refused (SDPA_ERROR_UNSUPPORTED): mask buffers,
     * dropout, quantized K/V, the dS output, K/V dtypes other than q's, a
     * V head size other than q's (v.dims[3] != q.dims[3]). */
    const sdpa_problem_desc_t *problem;
    /* Version 2. The longest sdpa_cp_execute waits for a peer while it has
     * nothing else to do (a message of the ring, or a rank's arrival at the
     * execution's start or end), in seconds: then it gives up, and the
     * execution fails with SDPA_ERROR_DEVICE naming the rank it waited for
     * (sdpa_cp_execute). 0: the environment's SDPA_CP_TIMEOUT if set, else
     * no limit; INFINITY: no limit, whatever the environment says; negative
     * or NaN: SDPA_ERROR_INVALID_ARGUMENT. It must exceed the largest gap
     * between the ranks' arrivals in a healthy run (a rank that saves a
     * checkpoint before its next execution keeps the others waiting). Ranks
     * may differ. Creation and destruction are not bounded by it. */
    double timeout_seconds;
} sdpa_cp_desc_t;

/* Collective. Checks desc (and that every rank passed the same shapes,
 * dtype, layout and settings), creates the primitives its rank's steps need
 * (building modules: the expensive part, as for sdpa primitives), allocates
 * its buffers and an asynchronous immediate command list on ze_device.
 * Returns SDPA_SUCCESS and *out, or a status with *out NULL. The caller keeps
 * the backend, its context, the Level Zero context and the communicator alive
 * until sdpa_cp_destroy. */
sdpa_status_t sdpa_cp_create(const sdpa_cp_desc_t *desc, sdpa_cp_t **out);

#ifdef __cplusplus
}
#endif

#endif /* SDPA_CP_H */
