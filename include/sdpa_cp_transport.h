/*
 * sdpa_cp_transport.h - context-parallel attention (ring attention) over a
 * transport the caller provides: one sequence sharded across N ranks (one
 * Level Zero device each), whose messages move through a small table of
 * callbacks (sdpa_cp_transport_t). libsdpa_cp implements everything on top
 * of it and links no MPI; sdpa_cp.h adds the MPI entry points, which wrap
 * an MPI transport. A framework plugs its own communicator here
 * (torch.distributed, oneCCL, sockets, threads of one process); what the
 * ring computes, its layouts, memory and failure handling are described in
 * sdpa_cp.h's opening comment and doc/context-parallel.md, and hold for
 * every transport.
 *
 * What the transport carries. Point-to-point byte messages between ranks
 * 0 .. ranks - 1, with a small tag (0 .. SDPA_CP_TRANSPORT_MAX_TAG):
 *  - K/V blocks and dK/dV accumulators to the next rank around the ring
 *    (pieces of at most 1 GiB each), posted before the device computes and
 *    tested while it does;
 *  - small status messages (at most a few hundred bytes) between every pair
 *    of ranks, at creation and at the start and end of every execution.
 * Messages from one rank to another with the same tag must be received in
 * the order they were sent, by the receives in the order they were posted
 * (MPI's non-overtaking rule): a block travels as several messages of one
 * tag whose receives are all pending at once.
 *
 * What memory the callbacks receive. Always host-accessible memory: the
 * ring buffers are host USM (zeMemAllocHost) of the rank's Level Zero
 * context, on a GPU as on the CPU device, and the status messages are in
 * ordinary host memory (malloc). The device is never given a buffer while
 * a request on it is pending. A transport may read and write them with the
 * CPU (memcpy, sockets, gloo, a host-staged MPI); it is never given device
 * USM.
 *
 * Threads. Every callback is called on the thread that calls the library
 * function (sdpa_cp_create, sdpa_cp_execute, sdpa_cp_destroy), one at a
 * time per cp object; objects of different ranks may live in one process
 * on different threads, each with its own transport.
 */
#ifndef SDPA_CP_TRANSPORT_H
#define SDPA_CP_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "sdpa.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SDPA_CP_TRANSPORT_VERSION 1u
#define SDPA_CP_TRANSPORT_DESC_VERSION 1u
#define SDPA_CP_STATS_VERSION 1u

/* The largest tag the library passes to a transport. */
#define SDPA_CP_TRANSPORT_MAX_TAG 15

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

/* A pending message, the transport's own handle: the library passes it back
 * to test, wait or abandon, and stops using it once one of them reports it
 * complete or it has been abandoned (the transport then frees it). */
typedef struct sdpa_cp_request sdpa_cp_request_t;

/* The callbacks through which a rank's cp object talks to the other ranks.
 * Copied at creation; user (and what it points to) must stay valid until
 * sdpa_cp_destroy. Every callback returns 0 on success, or a nonzero error
 * code of the transport (which error_string may describe): the library then
 * fails the call with SDPA_ERROR_DEVICE, quoting the code (a request whose
 * test or wait failed may then be abandoned, or left to the transport).
 * Later versions append members (never reorder them), read only when
 * struct_size covers them; version 1 is the whole struct. */
typedef struct sdpa_cp_transport {
    uint32_t struct_size;    /* sizeof(sdpa_cp_transport_t) */
    uint32_t struct_version; /* SDPA_CP_TRANSPORT_VERSION */
    /* Passed as the first argument of every callback. */
    void *user;
    /* This rank, 0 .. ranks - 1, and the number of ranks (at least 1). */
    int rank;
    int ranks;
    /* Starts sending bytes bytes at buffer to rank peer with tag; returns at
     * once with *request (never NULL on success). The buffer is not changed
     * nor freed until the request completes or is abandoned. */
    int (*isend)(void *user, const void *buffer, size_t bytes, int peer, int tag,
                 sdpa_cp_request_t **request);
    /* Starts receiving bytes bytes from rank peer with tag into buffer (a
     * message of exactly that size). */
    int (*irecv)(void *user, void *buffer, size_t bytes, int peer, int tag,
                 sdpa_cp_request_t **request);
    /* Without blocking: *done = 1 if request has completed (for a receive:
     * the data is in the buffer; then the request is finished and freed by
     * the transport), else 0. It also progresses the transport, if it needs
     * the caller's thread for that: the library calls it in a loop while the
     * device computes, and while it waits with a deadline. */
    int (*test)(void *user, sdpa_cp_request_t *request, int *done);
    /* (optional) Blocks until request completes, then finishes it as test
     * does. Used when the object has no timeout; NULL: test in a loop. */
    int (*wait)(void *user, sdpa_cp_request_t *request);
    /* (optional) Gives up a request that will not complete (its peer did
     * not come before the timeout): cancel it if possible and free it once
     * it is done. Returns 1 if the transport may still read or write its
     * buffer afterwards (the library then never frees that buffer: it stays
     * allocated until the Level Zero context is destroyed), else 0. NULL:
     * the library forgets the request and keeps its buffer, as for 1. */
    int (*abandon)(void *user, sdpa_cp_request_t *request);
    /* (optional) A description of a code the callbacks returned, for the
     * library's messages; NULL or a NULL result: "error CODE". */
    const char *(*error_string)(void *user, int code);
} sdpa_cp_transport_t;

/* What one rank passes to sdpa_cp_create_with_transport: sdpa_cp_desc_t of
 * sdpa_cp.h with a transport in place of the communicator. */
typedef struct sdpa_cp_transport_desc {
    uint32_t struct_size;    /* sizeof(sdpa_cp_transport_desc_t) */
    uint32_t struct_version; /* SDPA_CP_TRANSPORT_DESC_VERSION */
    /* The ring: rank r sends to (r + 1) % ranks and receives from
     * (r - 1 + ranks) % ranks. Copied; see sdpa_cp_transport_t. The
     * transport's messages must not be mixed with others of the same
     * ranks and tags (give each object its own channel: MPI duplicates the
     * communicator, torch.distributed can use a group per object). */
    const sdpa_cp_transport_t *transport;
    /* As in sdpa_cp_desc_t (sdpa_cp.h): the backend, its context bound to
     * ze_context and ze_device, the layout, this rank's shard and the
     * timeout (0: SDPA_CP_TIMEOUT, INFINITY: none). */
    const sdpa_backend_iface_t *backend;
    sdpa_context_t *context;
    ze_context_handle_t ze_context;
    ze_device_handle_t ze_device;
    sdpa_cp_layout_t layout;
    const sdpa_problem_desc_t *problem;
    double timeout_seconds;
} sdpa_cp_transport_desc_t;

/* Collective over the transport's ranks; otherwise sdpa_cp_create of
 * sdpa_cp.h. A desc or transport that cannot be used to reach the other
 * ranks (NULL, a wrong struct_size or version, a required callback NULL,
 * rank outside 0 .. ranks - 1) fails on this rank alone, sending nothing
 * (SDPA_ERROR_INVALID_ARGUMENT or SDPA_ERROR_INVALID_STRUCT). The caller
 * keeps the backend, its context, the Level Zero context and the
 * transport's user state alive until sdpa_cp_destroy. */
sdpa_status_t sdpa_cp_create_with_transport(const sdpa_cp_transport_desc_t *desc, sdpa_cp_t **out);

/* Collective (an MPI object frees its duplicated communicator; the
 * transport's callbacks are not called). Frees everything the object holds;
 * its executions have all returned. NULL is ignored (and then the call is
 * not collective). */
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
 * requests are given up (the transport's abandon: MPI cancels receives and
 * releases sends with MPI_Request_free); the host buffers a request given
 * up may still touch are not freed by sdpa_cp_destroy (they stay allocated
 * until the Level Zero context is destroyed), so the transport never reads
 * freed memory. Without a timeout a missing peer makes the others wait
 * forever, as any MPI collective does.
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

#endif /* SDPA_CP_TRANSPORT_H */
