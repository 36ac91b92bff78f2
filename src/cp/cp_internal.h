/*
 * cp_internal.h - the context-parallel object (include/sdpa_cp.h) and what
 * its files share: the ring transport (cp_ring.c), the forward
 * (cp_forward.c) and backward (cp_backward.c) passes, host accumulation
 * (cp_accumulate.c) and the object's creation (cp_create.c).
 *
 * Buffers (all proportional to the local length L; "dense" is the
 * [B, H, S, D] layout with strides {H S D, S D, D, 1}; a "block" is K and
 * V of one rank, each [B, Hkv, L, D]):
 *
 *   host USM  ring[2]       dtype K then V, dense: what the transport sends and receives
 *             acc[2]        f32 dK then dV of a block (backward): travels with it
 *             dq_acc        f32 [C][B, Hq, c, D] (backward): dQ, local
 *             part_d*[set][task] dtype dQ, dK, dV of one task (backward), added on
 *                           the host; two sets with a ring (steps alternate)
 *   device    kv_dev        dtype K then V: the received block, for the kernels
 *             part_o, part_lse, tmp_o   one task's O, LSE, O in f32 (forward)
 *             acc_o         f32 [C][B, Hq, c, D]: the running O (forward)
 *             own_lse       the running LSE when the caller gives no workspace
 *             zero_lse      one f32 0: the LSE of a merge used as a conversion
 *
 * with C chunks of c = L / C tokens per rank. The running LSE of chunk a is
 * chunk a of the cp workspace, f32 [C][B, Hq, c].
 */
#ifndef SDPA_CP_INTERNAL_H
#define SDPA_CP_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include <level_zero/ze_api.h>

#include "cp_schedule.h"
#include "sdpa.h"
#include "sdpa_cp_transport.h"

#define SDPA_CP_EXPORT __attribute__((visibility("default")))

/* Where a task's K/V come from: the caller's tensors (step 0, the rank's
 * own block) or kv_dev (a received block, dense). */
enum { CP_KV_CALLER = 0, CP_KV_RING = 1, CP_KV_SOURCES = 2 };
/* A task's mask: none, or the causal diagonal (top-left). */
enum { CP_MASK_NONE = 0, CP_MASK_DIAGONAL = 1, CP_MASKS = 2 };

/* Message tags (at most SDPA_CP_TRANSPORT_MAX_TAG). */
enum { CP_TAG_KV = 1, CP_TAG_DKV = 2, CP_TAG_AGREE = 3, CP_TAG_CREATE = 4 };

/* The phases of an execution whose ends every rank agrees on. */
enum { CP_PHASE_START = 0, CP_PHASE_END = 1 };

/* An agreement message: the execution number, the phase, the sender's
 * status, whether its object is broken and the peer it broke on. */
enum { CP_AGREE_SEQUENCE, CP_AGREE_PHASE, CP_AGREE_STATUS, CP_AGREE_BROKEN, CP_AGREE_PEER,
       CP_AGREE_WORDS };

/* The most allocations one object holds. */
#define CP_MAX_ALLOCATIONS 48

/* Messages are cut into pieces of at most this many bytes (MPI counts are
 * int), each its own request of the transport. */
#define CP_PIECE_BYTES ((size_t)1 << 30)
#define CP_TRANSFER_MAX_REQUESTS 64

/* Non-blocking transfers that complete together: the sends and receives of
 * one exchange. */
typedef struct cp_transfer {
    sdpa_cp_request_t *requests[CP_TRANSFER_MAX_REQUESTS]; /* NULL once complete */
    int tag;                                /* CP_TAG_KV or CP_TAG_DKV */
    signed char sends[CP_TRANSFER_MAX_REQUESTS]; /* 1: a send to next, 0: a receive from prev */
    int count;     /* 0: nothing posted */
    int done;      /* every request has completed */
    double posted; /* cp_now() when the first request was posted */
} cp_transfer_t;

struct sdpa_cp {
    /* The ring: the caller's transport (copied), and what frees the state
     * behind it when the object owns it (the MPI transport), or NULL. */
    sdpa_cp_transport_t transport;
    void (*transport_release)(void *owner);
    void *transport_owner;
    int ranks, rank, next, prev;

    /* The backend and the device. */
    const sdpa_backend_iface_t *be;
    sdpa_context_t *ctx;
    ze_context_handle_t ze_context;
    ze_device_handle_t ze_device;
    ze_command_list_handle_t list; /* asynchronous immediate, in the device's compute group */
    ze_event_pool_handle_t event_pool;
    ze_event_handle_t step_done; /* a barrier after a step's work signals it */
    ze_event_handle_t staged;    /* the rank's own K/V have reached ring[0] */

    /* The problem. */
    sdpa_cp_layout_t layout;
    sdpa_problem_desc_t problem; /* the caller's shard, copied */
    int backward, training, causal;
    int chunks; /* C */
    int64_t batch, q_heads, kv_heads, local_len, chunk_len, head_size;
    sdpa_dtype_t dtype;
    size_t elem_bytes;
    size_t block_bytes; /* one of K or V of a block, dense: B Hkv L D elements */

    /* Primitives (NULL where unused; attn may hold one primitive twice when
     * the caller's K/V are dense: free_primitives frees each once). */
    sdpa_primitive_t *attn[CP_KV_SOURCES][CP_MASKS];
    sdpa_primitive_t *pack_k, *pack_v;             /* caller's K/V -> ring[0] when strided */
    sdpa_primitive_t *merge_first, *merge_two;     /* forward: O_part -> f32 acc; acc + part */
    sdpa_primitive_t *to_dst;                      /* forward: f32 acc -> the caller's O chunk */
    sdpa_primitive_t *to_diff_q, *to_diff_k, *to_diff_v; /* backward: f32 -> the caller's */

    /* Memory (see the top of this file). */
    void *ring[2], *acc[2], *dq_acc;
    /* Backward task gradients: set step % 2 (one set without a ring), so
     * that the device writes a step's while the host adds the previous. */
    void *part_dq[2][CP_MAX_TASKS], *part_dk[2][CP_MAX_TASKS], *part_dv[2][CP_MAX_TASKS];
    void *kv_dev, *part_o, *part_lse, *tmp_o, *acc_o, *own_lse;
    float *zero_lse;
    void *allocations[CP_MAX_ALLOCATIONS];
    int allocation_count;
    size_t allocated_bytes; /* device and host USM above */
    size_t scratch_bytes;   /* the largest backward scratch (the backend's, per list) */

    /* The execution under way: its first local failure. Device work stops
     * at a failure but the ring keeps going, so that no peer waits forever;
     * the ranks agree on the outcome at the end. */
    sdpa_status_t failure;
    char failure_message[768];

    /* Waiting for peers (cp_wait.c). timeout: seconds, INFINITY for none.
     * sequence: executions started. step: the ring step under way. */
    double timeout;
    int64_t sequence;
    int step;
    /* broken: the messages are out of step (a timeout, a peer out of step
     * or broken); every later execution fails at once. broken_first: that
     * was the execution's first failure, so the device is still sound and
     * is drained. ring_in_flight, agree_in_flight: a request of the ring
     * (of the agreement) was released pending, so the buffers it may touch
     * are never freed. failed_peer: -1, or the peer. */
    int broken, broken_first, ring_in_flight, agree_in_flight, failed_peer;
    char broken_message[768];
    int64_t agree_out[CP_AGREE_WORDS];
    int64_t (*agree_in)[CP_AGREE_WORDS]; /* one per rank */
    sdpa_cp_request_t **agree_requests;  /* 2 (ranks - 1) */
    int step_done_armed; /* a signal of step_done is appended, not yet waited for */

    sdpa_cp_stats_t stats;
};

/* ---- cp_execute.c ------------------------------------------------------- */

/* Records status (not SDPA_SUCCESS) as the execution's failure if it is the
 * first, with the message sdpa_fail left on this thread; returns status. */
sdpa_status_t cp_note_failure(sdpa_cp_t *cp, sdpa_status_t status);

/* A Level Zero failure as a status with a message naming call. */
sdpa_status_t cp_ze_failure(ze_result_t result, const char *call);

/* A backend failure: status, with the backend's message quoted after what. */
sdpa_status_t cp_backend_failure(const sdpa_cp_t *cp, sdpa_status_t status, const char *what);

/* ---- cp_transport.c: the calls of the transport -------------------------- */

/* Seconds on a monotonic clock. */
double cp_now(void);

/* A failure (SDPA_ERROR_DEVICE) of the transport's call returning code. */
sdpa_status_t cp_transport_failure(const sdpa_cp_transport_t *t, int code, const char *call);

/* Checks a transport the library can use to reach the other ranks. */
sdpa_status_t cp_transport_check(const sdpa_cp_transport_t *t);

/* Collective, blocking, without a deadline (creation): every rank sends
 * words int64 words to every other with CP_TAG_CREATE; all[r * words ..]
 * receives rank r's (this rank's own copied). Returns 0 or the first code
 * a callback returned (then *call names it). */
int cp_exchange_all(const sdpa_cp_transport_t *t, const int64_t *mine, int words, int64_t *all,
                    const char **call);

/* Creates the object over desc's transport (sdpa_cp_create_with_transport);
 * release(owner), if release is not NULL, is called when the object is
 * destroyed or its creation fails (the MPI transport's state). */
sdpa_status_t cp_create(const sdpa_cp_transport_desc_t *desc, void (*release)(void *owner),
                        void *owner, sdpa_cp_t **out);

/* ---- cp_wait.c: waiting for peers with a deadline ------------------------ */

/* The deadline of a wait starting now (INFINITY without a timeout). */
double cp_deadline(const sdpa_cp_t *cp);

/* Waits until every request of count (NULL ones included) has completed,
 * or deadline. Completed requests become NULL. Returns 0 with *all 1 or 0
 * (the deadline passed), or the transport's error code (then *call names
 * the callback). */
int cp_wait_until(const sdpa_cp_transport_t *t, sdpa_cp_request_t **requests, int count,
                  double deadline, int *all, const char **call);

/* Gives up count requests: waits a little for those pending, then abandons
 * those still pending (setting *in_flight if the transport may still touch
 * their buffers). */
void cp_abandon(const sdpa_cp_transport_t *t, sdpa_cp_request_t **requests, int count,
                int *in_flight);

/* Breaks the object on peer with status and the message (printf-style),
 * which it returns as the failure. */
sdpa_status_t cp_break(sdpa_cp_t *cp, sdpa_status_t status, int peer, const char *format, ...)
        __attribute__((format(printf, 4, 5)));

/* True if the device failed during this execution (not a peer). */
int cp_device_failed(const sdpa_cp_t *cp);

/* Collective within an execution: every rank sends every other its status
 * for phase and waits for theirs until the deadline. Returns SDPA_SUCCESS
 * if all succeeded; else a failure on every rank that heard of it (its own,
 * or one naming the failed rank), or a broken object naming the peer that
 * did not report in time or was out of step. A broken rank only sends. */
sdpa_status_t cp_agree_execution(sdpa_cp_t *cp, int phase, sdpa_status_t local);

/* The timeout (seconds, INFINITY for none) of a desc's timeout_seconds
 * given: given if > 0, else SDPA_CP_TIMEOUT. Refuses a negative or NaN
 * value, or an environment value that is not a number of seconds. */
sdpa_status_t cp_timeout_of(double given, double *timeout);

/* Allocates the agreement's buffers; frees them unless in flight. */
sdpa_status_t cp_agree_alloc(sdpa_cp_t *cp);
void cp_agree_free(sdpa_cp_t *cp);

/* ---- cp_ring.c ---------------------------------------------------------- */

/* Posts a send of bytes at buffer to the next rank (or a receive from the
 * previous one) as part of t, in pieces. Counts the bytes. */
sdpa_status_t cp_post_send(sdpa_cp_t *cp, cp_transfer_t *t, const void *buffer, size_t bytes,
                           int tag);
sdpa_status_t cp_post_recv(sdpa_cp_t *cp, cp_transfer_t *t, void *buffer, size_t bytes, int tag);

/* Blocks until t has completed (nothing if nothing is posted); the time
 * blocked counts as exposed communication. At the deadline, breaks the
 * object naming the peer of the first request pending. */
sdpa_status_t cp_transfer_wait(sdpa_cp_t *cp, cp_transfer_t *t);

/* After a break: gives up whatever the count transfers still have posted. */
void cp_transfers_abandon(sdpa_cp_t *cp, cp_transfer_t *const *transfers, int count);

/* Blocks until t has completed, progressing it while the device still runs
 * the work behind event (not reset); only the time blocked after the device
 * has finished counts as exposed communication. */
sdpa_status_t cp_transfer_wait_busy(sdpa_cp_t *cp, cp_transfer_t *t, ze_event_handle_t event);

/* Waits for event while progressing the transfers (count of them, any may
 * be NULL or empty), then resets it. Returns the first failure. Adds the
 * time to compute_seconds. started: cp_now() when the work behind event
 * was appended. Does not wait after a failure of this execution (the event
 * may never come). */
sdpa_status_t cp_wait_device(sdpa_cp_t *cp, ze_event_handle_t event, double started,
                             cp_transfer_t *const *transfers, int count);

/* Appends a barrier that signals event once everything appended before has
 * run. */
sdpa_status_t cp_signal_after(sdpa_cp_t *cp, ze_event_handle_t event);

/* Collective (creation): every rank passes its status; returns
 * SDPA_SUCCESS if all succeeded, else a failure on every rank: this rank's
 * own, or one naming the failed rank. */
sdpa_status_t cp_agree(const sdpa_cp_transport_t *t, sdpa_status_t local);

/* ---- cp_accumulate.c ---------------------------------------------------- */

/* dst[i] += src[i] for i < count, src of dtype (f32, f16, bf16) read
 * exactly, the sum rounded to f32. */
void cp_add_to_f32(float *dst, const void *src, sdpa_dtype_t dtype, size_t count);

/* ---- cp_forward.c / cp_backward.c --------------------------------------- */

/* The ring passes; the execution's arguments were checked. Return the local
 * outcome (cp->failure). */
sdpa_status_t cp_forward(sdpa_cp_t *cp, const sdpa_exec_args_t *args);
sdpa_status_t cp_backward(sdpa_cp_t *cp, const sdpa_exec_args_t *args);

/* ---- cp_device.c: shared by both passes -------------------------------- */

/* Element offset of local chunk a in a tensor of the caller's layout. */
int64_t cp_chunk_offset(const sdpa_cp_t *cp, const sdpa_tensor_desc_t *t, int chunk);

/* pointer + elements elements of the problem's dtype (NULL stays NULL). */
const void *cp_advance(const sdpa_cp_t *cp, const void *pointer, int64_t elements);

/* Appends the staging of the caller's K and V into ring[0] (a copy when
 * dense, a packing merge otherwise) and a signal of cp->staged. */
sdpa_status_t cp_stage_own_block(sdpa_cp_t *cp, const sdpa_exec_args_t *args);

/* Appends the copy of ring[slot] to kv_dev, after everything before. */
sdpa_status_t cp_load_block(sdpa_cp_t *cp, int slot);

/* Starts *a, the arguments of task at step: q of its query chunk, K and V
 * of its key chunk (the caller's at step 0, kv_dev's later), the scale and
 * the ring's list. The pass adds the outputs. */
void cp_task_args(const sdpa_cp_t *cp, const sdpa_exec_args_t *args, int step,
                  const cp_task_t *task, sdpa_exec_args_t *a);

/* Appends a barrier and the execution of task's primitive (by its K/V
 * source and mask) with a. */
sdpa_status_t cp_execute_task(sdpa_cp_t *cp, int step, const cp_task_t *task,
                              const sdpa_exec_args_t *a);

/* Appends a barrier (so that what follows sees everything before). */
sdpa_status_t cp_barrier(sdpa_cp_t *cp);

/* Appends the merge of states (as many as merge was made for) into
 * dst / dst_lse, after a barrier. */
sdpa_status_t cp_merge(sdpa_cp_t *cp, sdpa_primitive_t *merge, const void *const *states,
                       const float *const *states_lse, void *dst, float *dst_lse);

/* Waits for cp->staged (the rank's own block is in ring[0]); host time. */
sdpa_status_t cp_wait_staged(sdpa_cp_t *cp);

/* Appends the signal of the caller's event (if any) and waits until the
 * list has drained. Returns the execution's local outcome. */
sdpa_status_t cp_finish(sdpa_cp_t *cp, const sdpa_exec_args_t *args);

/* Runs expr, a device operation, unless the execution has failed already,
 * and records its failure. */
#define CP_DEVICE(cp, expr)                                                                        \
    do {                                                                                           \
        if ((cp)->failure == SDPA_SUCCESS)                                                         \
            cp_note_failure((cp), (expr));                                                         \
    } while (0)

/* Runs expr, a step of the ring protocol, even after a failure (the other
 * ranks expect the messages), and records its failure. */
#define CP_ALWAYS(cp, expr) cp_note_failure((cp), (expr))

#endif /* SDPA_CP_INTERNAL_H */
