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

#ifdef __cplusplus
extern "C" {
#endif

/* 2: timeout_seconds appended. A version 1 desc (struct_size up to and
 * including problem) is still accepted, as timeout_seconds = 0. */
#define SDPA_CP_DESC_VERSION 2u
#define SDPA_CP_STATS_VERSION 1u

/* Which global tokens a rank holds. With N ranks and L tokens per rank:
 *   CONTIGUOUS: rank r holds tokens r L .. r L + L - 1, in order. Fine
 *     without a mask; causal attention is unbalanced (rank r works at r + 1
 *     of the N steps).
 *   ZIGZAG: the sequence is cut into 2N chunks of L / 2 tokens; rank r holds
 *     chunk r followed by chunk 2N - 1 - r. Every rank does the same causal
 *     work at every step. L must be even.
 * sdpa_cp_global_token() maps a local row to its global token. */
typedef enum sdpa_cp_layout {
    SDPA_CP_LAYOUT_CONTIGUOUS = 0,
    SDPA_CP_LAYOUT_ZIGZAG = 1,
} sdpa_cp_layout_t;

typedef struct sdpa_cp sdpa_cp_t;

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

/* Collective (it frees the duplicated communicator). Frees everything the
 * object holds; its executions have all returned. NULL is ignored (and then
 * the call is not collective). */
void sdpa_cp_destroy(sdpa_cp_t *cp);

/* Collective and synchronous: computes the problem for the whole sequence
 * and returns when this rank's outputs are written (its command list has
 * drained) and its messages are complete. args is an sdpa_exec_args_t of the
 * rank's shard:
 *   forward: q, k, v, dst; scale or scale_ptr; workspace (FORWARD_TRAINING:
 *     SDPA_CP_QUERY_WORKSPACE_BYTES of device, host or shared USM, written:
 *     the log-sum-exp of every local query row over all S keys);
 *   backward: q, k, v, dst (the forward's O), workspace (what the training
 *     forward wrote), diff_dst; writes diff_q, diff_k, diff_v (dK and dV of
 *     the rank's own K/V tokens, summed over every rank's queries).
 * Pointers as for primitive_execute (views at any element offset, device or
 * host/shared USM). wait_events: the first command waits for them;
 * signal_event: signalled when the outputs are written. command_list and
 * scratch must be NULL (the object uses its own list; backward scratch is
 * the backend context's for that list).
 *
 * A peer that never comes (stopped, dead, or not calling): with a timeout
 * (desc->timeout_seconds, SDPA_CP_TIMEOUT), a rank that waited that long for
 * one peer gives up and returns SDPA_ERROR_DEVICE with a message naming the
 * rank it waited for and what for ("... waited 2 s for rank 3 (its arrival
 * at the start of execution 7) ..."); SDPA_CP_QUERY_FAILED_PEER gives that
 * rank as an int. The rank named is the one this rank depended on, which may
 * itself be waiting for another: the stopped rank is the one the others
 * name that names nobody. Every rank whose execution depends on the missing
 * one returns within about the timeout of blocking, plus the device work it
 * had queued (which it waits for, so the caller may reuse its buffers).
 * The object is then broken on that rank: its messages are out of step, so
 * every later sdpa_cp_execute fails at once (SDPA_ERROR_DEVICE); only
 * sdpa_cp_destroy is left, which does not wait for the peer. Peers that
 * learn of a broken rank at the execution's end break too. Pending
 * receives are cancelled; a send MPI cannot cancel is released
 * (MPI_Request_free) and the host buffers it reads are not freed by
 * sdpa_cp_destroy (they stay allocated until the Level Zero context is
 * destroyed), so MPI never reads freed memory. The duplicated communicator
 * is freed by sdpa_cp_destroy as usual. Without a timeout a missing peer
 * makes the others wait forever, as any MPI collective does.
 *
 * Every rank's k-th execution of an object pairs with every other rank's
 * k-th: a rank that skips one call pairs its next call with the others'
 * skipped one (with the wrong inputs, undetectably: nothing in the call
 * says which step of the caller's program it belongs to), and the hang
 * comes at the others' last call, which the timeout then bounds. The
 * execution number and phase travel in the start and end messages, so a
 * rank out of step in the protocol itself fails with
 * SDPA_ERROR_INVALID_ARGUMENT naming it. */
sdpa_status_t sdpa_cp_execute(sdpa_cp_t *cp, const sdpa_exec_args_t *args);

typedef enum sdpa_cp_query {
    /* size_t: bytes of the cp workspace: f32 [C][B][Hq][L / C], with C = 2
     * chunks per rank for ZIGZAG and 1 for CONTIGUOUS: element (c, b, h, i)
     * is the log-sum-exp of local row c L / C + i (natural log, scale
     * included). 0 for FORWARD_INFERENCE. */
    SDPA_CP_QUERY_WORKSPACE_BYTES = 1,
    /* size_t: bytes of device and host USM the object holds (its ring
     * buffers, staging and temporaries), plus the backend scratch its
     * backward executions need. Proportional to L. */
    SDPA_CP_QUERY_MEMORY_BYTES = 2,
    /* char[]: how the ring moves device data, e.g. "host-staged: ...". */
    SDPA_CP_QUERY_TRANSPORT = 3,
    /* int: ring steps per execution (the number of ranks). */
    SDPA_CP_QUERY_STEPS = 4,
    /* int: the rank this rank's object broke on (the peer it waited for
     * when it gave up, a peer out of step, or a peer that broke), or -1
     * while the object is whole (sdpa_cp_execute). */
    SDPA_CP_QUERY_FAILED_PEER = 5,
} sdpa_cp_query_t;

/* Local. Answers what into out (out_size bytes; a string is always
 * NUL-terminated, and truncated to fit). */
sdpa_status_t sdpa_cp_query(const sdpa_cp_t *cp, sdpa_cp_query_t what, void *out, size_t out_size);

/* What this rank measured, summed over executions since creation or the last
 * sdpa_cp_reset_stats. Overlap: of comm_seconds, exposed_comm_seconds were
 * not hidden behind compute. */
typedef struct sdpa_cp_stats {
    uint32_t struct_size;    /* sizeof(sdpa_cp_stats_t) */
    uint32_t struct_version; /* SDPA_CP_STATS_VERSION */
    uint64_t executions;
    uint64_t steps;          /* ring steps */
    uint64_t bytes_sent;     /* payload this rank sent (K/V blocks, dK/dV accumulators) */
    uint64_t bytes_received; /* payload it received */
    /* Wall time inside sdpa_cp_execute. */
    double total_seconds;
    /* Per step, from appending the step's work to seeing it complete (the
     * device's time, including the copy of the received block to device
     * memory). */
    double compute_seconds;
    /* Per step, from posting its transfers to their completion, as seen
     * while the device computed. */
    double comm_seconds;
    /* Time spent waiting for transfers after the step's compute had
     * finished: communication not hidden. */
    double exposed_comm_seconds;
    /* Host work on the critical path: waiting for the rank's K/V to reach
     * the host ring buffer, adding dK/dV and dQ contributions in f32. */
    double host_seconds;
} sdpa_cp_stats_t;

/* Local. Fills out (whose struct_size / struct_version the caller sets). */
sdpa_status_t sdpa_cp_get_stats(const sdpa_cp_t *cp, sdpa_cp_stats_t *out);

/* Local. Zeroes the counters. NULL is ignored. */
void sdpa_cp_reset_stats(sdpa_cp_t *cp);

/* Local. Which global token (0 .. ranks * local_len - 1) local row i of rank
 * rank holds; -1 if an argument is out of range (ranks < 1, rank outside
 * 0 .. ranks - 1, i outside 0 .. local_len - 1, or an odd local_len with
 * ZIGZAG). */
int64_t sdpa_cp_global_token(sdpa_cp_layout_t layout, int ranks, int rank, int64_t local_len,
                             int64_t i);

/* One sentence about the failure of the most recent call of this library
 * that returns a status, on the calling thread, or "" (never NULL) if that
 * call succeeded or there was none. Failures of the backend are quoted in
 * it. */
const char *sdpa_cp_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* SDPA_CP_H */
