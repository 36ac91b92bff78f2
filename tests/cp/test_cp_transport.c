/*
 * test_cp_transport.c - context-parallel attention over a transport of the
 * caller's (include/sdpa_cp_transport.h), without MPI: the ranks are threads
 * of this process, each with its own cp object on the suite's device, and
 * the transport is a loopback hub that copies messages between them.
 *
 * The whole sequence (exact values from one seed, tests/abi) is attended
 * once by the double-precision oracle; each rank takes its shard by
 * sdpa_cp_global_token, the ring runs forward (training) and backward at 2
 * and 3 ranks, and every rank's O, log-sum-exp, dQ, dK and dV are compared
 * with the oracle's rows within tolerances that follow from the dtype (as
 * in test_cp.c). Also: a transport the library cannot use is refused on the
 * calling rank alone, a failing callback fails creation on every rank with
 * the transport's own message, and a rank that never executes is named by
 * its peer after the timeout, its requests abandoned through the table.
 *
 * Check's assertions are made on the main thread only (a failed assertion
 * leaves its thread by longjmp); the rank threads record what they saw.
 */
#include <check.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "abi_util.h"
#include "checked_iface.h"
#include "element.h"
#include "sdpa_cp_transport.h"
#include "tensors.h"
#include "ze_env.h"

#define MAX_RANKS 3
#define TAGS (SDPA_CP_TRANSPORT_MAX_TAG + 1)

/* ------------------------------------------------------------------------- */
/* The loopback transport                                                    */
/* ------------------------------------------------------------------------- */

/* Error codes of the loopback, described by loop_error_string. */
enum { LOOP_NO_MEMORY = 1, LOOP_SIZE_MISMATCH = 2, LOOP_REFUSED = 3, LOOP_BAD_PEER = 4 };

/* A message sent and not yet received: its source, destination, tag and
 * number among the messages of that (source, destination, tag). */
typedef struct loop_message {
    struct loop_message *next;
    int source, destination, tag;
    uint64_t number;
    size_t bytes;
    unsigned char data[];
} loop_message_t;

/* What the ranks share. Sends copy the data into a message at once (they
 * complete when posted); a receive takes the message whose number is its own
 * among the receives posted for that (source, tag), so that messages match
 * in the order sent, as MPI's do. */
typedef struct loop_hub {
    pthread_mutex_t lock;
    pthread_cond_t arrived;
    int ranks;
    loop_message_t *messages;
    uint64_t sent[MAX_RANKS][MAX_RANKS][TAGS];   /* [source][destination][tag] */
    uint64_t posted[MAX_RANKS][MAX_RANKS][TAGS]; /* receives [destination][source][tag] */
    int refuse_sends;                            /* isend fails with LOOP_REFUSED */
    int abandoned;                               /* requests given up */
} loop_hub_t;

typedef struct loop_endpoint {
    loop_hub_t *hub;
    int rank;
} loop_endpoint_t;

struct sdpa_cp_request {
    int receive; /* 0: a send, complete */
    int source, tag;
    uint64_t number;
    void *buffer;
    size_t bytes;
};

static void hub_init(loop_hub_t *hub, int ranks)
{
    memset(hub, 0, sizeof(*hub));
    pthread_mutex_init(&hub->lock, NULL);
    pthread_cond_init(&hub->arrived, NULL);
    hub->ranks = ranks;
}

/* Frees the hub and returns how many messages nobody received. */
static int hub_free(loop_hub_t *hub)
{
    int left = 0;
    while (hub->messages) {
        loop_message_t *m = hub->messages;
        hub->messages = m->next;
        free(m);
        left++;
    }
    pthread_cond_destroy(&hub->arrived);
    pthread_mutex_destroy(&hub->lock);
    return left;
}

static int loop_isend(void *user, const void *buffer, size_t bytes, int peer, int tag,
                      sdpa_cp_request_t **out)
{
    loop_endpoint_t *e = user;
    loop_hub_t *hub = e->hub;
    if (hub->refuse_sends)
        return LOOP_REFUSED;
    if (peer < 0 || peer >= hub->ranks || tag < 0 || tag >= TAGS)
        return LOOP_BAD_PEER;
    loop_message_t *m = malloc(sizeof(*m) + bytes);
    sdpa_cp_request_t *r = calloc(1, sizeof(*r));
    if (m == NULL || r == NULL) {
        free(m);
        free(r);
        return LOOP_NO_MEMORY;
    }
    memcpy(m->data, buffer, bytes);
    m->bytes = bytes;
    m->source = e->rank;
    m->destination = peer;
    m->tag = tag;
    pthread_mutex_lock(&hub->lock);
    m->number = hub->sent[e->rank][peer][tag]++;
    m->next = hub->messages;
    hub->messages = m;
    pthread_cond_broadcast(&hub->arrived);
    pthread_mutex_unlock(&hub->lock);
    *out = r;
    return 0;
}

static int loop_irecv(void *user, void *buffer, size_t bytes, int peer, int tag,
                      sdpa_cp_request_t **out)
{
    loop_endpoint_t *e = user;
    loop_hub_t *hub = e->hub;
    if (peer < 0 || peer >= hub->ranks || tag < 0 || tag >= TAGS)
        return LOOP_BAD_PEER;
    sdpa_cp_request_t *r = calloc(1, sizeof(*r));
    if (r == NULL)
        return LOOP_NO_MEMORY;
    r->receive = 1;
    r->source = peer;
    r->tag = tag;
    r->buffer = buffer;
    r->bytes = bytes;
    pthread_mutex_lock(&hub->lock);
    r->number = hub->posted[e->rank][peer][tag]++;
    pthread_mutex_unlock(&hub->lock);
    *out = r;
    return 0;
}

/* With the lock held: completes receive r if its message has come. */
static int take_message(loop_endpoint_t *e, sdpa_cp_request_t *r, int *done)
{
    *done = 0;
    for (loop_message_t **p = &e->hub->messages; *p; p = &(*p)->next) {
        loop_message_t *m = *p;
        if (m->destination != e->rank || m->source != r->source || m->tag != r->tag ||
            m->number != r->number)
            continue;
        if (m->bytes != r->bytes)
            return LOOP_SIZE_MISMATCH;
        memcpy(r->buffer, m->data, m->bytes);
        *p = m->next;
        free(m);
        *done = 1;
        return 0;
    }
    return 0;
}

static int loop_test(void *user, sdpa_cp_request_t *r, int *done)
{
    loop_endpoint_t *e = user;
    int code = 0;
    if (!r->receive) {
        *done = 1;
    } else {
        pthread_mutex_lock(&e->hub->lock);
        code = take_message(e, r, done);
        pthread_mutex_unlock(&e->hub->lock);
    }
    if (code == 0 && *done)
        free(r);
    return code;
}

static int loop_wait(void *user, sdpa_cp_request_t *r)
{
    loop_endpoint_t *e = user;
    int code = 0, done = 1;
    if (r->receive) {
        pthread_mutex_lock(&e->hub->lock);
        while ((code = take_message(e, r, &done)) == 0 && !done)
            pthread_cond_wait(&e->hub->arrived, &e->hub->lock);
        pthread_mutex_unlock(&e->hub->lock);
    }
    if (code == 0)
        free(r);
    return code;
}

/* Receives copy only when tested: a request given up touches nothing. */
static int loop_abandon(void *user, sdpa_cp_request_t *r)
{
    loop_endpoint_t *e = user;
    pthread_mutex_lock(&e->hub->lock);
    e->hub->abandoned++;
    pthread_mutex_unlock(&e->hub->lock);
    free(r);
    return 0;
}

static const char *loop_error_string(void *user, int code)
{
    (void)user;
    switch (code) {
    case LOOP_NO_MEMORY:
        return "loopback: no memory";
    case LOOP_SIZE_MISMATCH:
        return "loopback: a message of another size than its receive";
    case LOOP_REFUSED:
        return "loopback: sends refused";
    case LOOP_BAD_PEER:
        return "loopback: peer or tag out of range";
    default:
        return NULL;
    }
}

static sdpa_cp_transport_t loop_transport(loop_endpoint_t *e)
{
    return (sdpa_cp_transport_t){.struct_size = sizeof(sdpa_cp_transport_t),
                                 .struct_version = SDPA_CP_TRANSPORT_VERSION,
                                 .user = e,
                                 .rank = e->rank,
                                 .ranks = e->hub->ranks,
                                 .isend = loop_isend,
                                 .irecv = loop_irecv,
                                 .test = loop_test,
                                 .wait = loop_wait,
                                 .abandon = loop_abandon,
                                 .error_string = loop_error_string};
}

/* ------------------------------------------------------------------------- */
/* Ranks as threads                                                          */
/* ------------------------------------------------------------------------- */

/* What one rank does (run by rank_main) and what it saw. */
typedef struct rank_job {
    loop_endpoint_t endpoint;
    sdpa_cp_layout_t layout;
    const sdpa_problem_desc_t *fwd, *bwd; /* bwd NULL: forward only */
    sdpa_exec_args_t args;
    double timeout_seconds;
    int skip_execute; /* create, then never execute (a rank that does not come) */
    sdpa_status_t create_status, fwd_status, bwd_status;
    char message[1024];
    int failed_peer;
} rank_job_t;

static sdpa_status_t rank_create(rank_job_t *job, const sdpa_problem_desc_t *p, sdpa_cp_t **cp)
{
    sdpa_cp_transport_t transport = loop_transport(&job->endpoint);
    sdpa_cp_transport_desc_t d = {.struct_size = sizeof(d),
                                  .struct_version = SDPA_CP_TRANSPORT_DESC_VERSION,
                                  .transport = &transport,
                                  .backend = suite_env.ze,
                                  .context = suite_env.ze_ctx,
                                  .ze_context = suite_env.context,
                                  .ze_device = suite_env.device,
                                  .layout = job->layout,
                                  .problem = p,
                                  .timeout_seconds = job->timeout_seconds};
    sdpa_status_t status = sdpa_cp_create_with_transport(&d, cp);
    if (status != SDPA_SUCCESS)
        snprintf(job->message, sizeof(job->message), "%s", sdpa_cp_last_error());
    return status;
}

static sdpa_status_t rank_execute(rank_job_t *job, sdpa_cp_t *cp)
{
    sdpa_status_t status = sdpa_cp_execute(cp, &job->args);
    if (status != SDPA_SUCCESS) {
        snprintf(job->message, sizeof(job->message), "%s", sdpa_cp_last_error());
        sdpa_cp_query(cp, SDPA_CP_QUERY_FAILED_PEER, &job->failed_peer, sizeof(job->failed_peer));
    }
    return status;
}

static void *rank_main(void *arg)
{
    rank_job_t *job = arg;
    job->failed_peer = -1;
    job->create_status = job->fwd_status = job->bwd_status = SDPA_SUCCESS;
    sdpa_cp_t *fwd = NULL, *bwd = NULL;
    job->create_status = rank_create(job, job->fwd, &fwd);
    if (job->create_status == SDPA_SUCCESS && job->bwd != NULL)
        job->create_status = rank_create(job, job->bwd, &bwd);
    if (job->create_status == SDPA_SUCCESS && !job->skip_execute) {
        job->fwd_status = rank_execute(job, fwd);
        if (job->fwd_status == SDPA_SUCCESS && bwd != NULL)
            job->bwd_status = rank_execute(job, bwd);
    }
    sdpa_cp_destroy(bwd);
    sdpa_cp_destroy(fwd);
    return NULL;
}

/* Runs the jobs, one thread each, until they all return. */
static void run_ranks(rank_job_t *jobs, int ranks)
{
    pthread_t threads[MAX_RANKS];
    for (int r = 0; r < ranks; r++)
        ck_assert_int_eq(pthread_create(&threads[r], NULL, rank_main, &jobs[r]), 0);
    for (int r = 0; r < ranks; r++)
        ck_assert_int_eq(pthread_join(threads[r], NULL), 0);
}

/* ------------------------------------------------------------------------- */
/* A ring checked against the oracle                                         */
/* ------------------------------------------------------------------------- */

typedef struct ring_case {
    int ranks;
    sdpa_cp_layout_t layout;
    int causal;
    sdpa_dtype_t dtype;
    int64_t batch, q_heads, kv_heads, local_len, head_size;
} ring_case_t;

/* One rank's shard tensors. */
typedef struct shard {
    test_tensor_t q, k, v, o, d_o, dq, dk, dv;
    float *ws;
    size_t ws_bytes;
    sdpa_problem_desc_t fwd, bwd;
} shard_t;

/* The shard's tensors by role (tensors.h). */
static void shard_roles(const shard_t *s, const test_tensor_t *t[ROLE_COUNT])
{
    const test_tensor_t *roles[ROLE_COUNT] = {&s->q,   &s->k,  &s->v,  &s->o,
                                              &s->d_o, &s->dq, &s->dk, &s->dv};
    memcpy(t, roles, sizeof(roles));
}

static double *doubles(int64_t count)
{
    double *p = malloc(sizeof(double) * (size_t)count);
    ck_assert_ptr_nonnull(p);
    return p;
}

static void shard_tensor(test_tensor_t *t, sdpa_dtype_t dtype, int64_t b, int64_t h, int64_t l,
                         int64_t d)
{
    sdpa_tensor_desc_t desc;
    int64_t dims[4] = {b, h, l, d};
    tensor_layout(&desc, dtype, dims, ORDER_BHSD, 0);
    tensor_alloc(&suite_env, t, &desc);
}

/* Copies the rows rank holds of full into its shard t. */
static void take_rows(const ring_case_t *c, int rank, const sdpa_tensor_desc_t *full_desc,
                      const void *full, test_tensor_t *t)
{
    const sdpa_tensor_desc_t *d = &t->desc;
    for (int64_t i = 0; i < d->dims[2]; i++) {
        int64_t g = sdpa_cp_global_token(c->layout, c->ranks, rank, d->dims[2], i);
        ck_assert_int_ge(g, 0);
        for (int64_t b = 0; b < d->dims[0]; b++)
            for (int64_t h = 0; h < d->dims[1]; h++)
                for (int64_t x = 0; x < d->dims[3]; x++)
                    tensor_set(d, t->data, b, h, i, x, tensor_get(full_desc, full, b, h, g, x));
    }
}

/* The rows rank holds of dense [B][H][S][depth] full, dense [B][H][L][depth]. */
static double *expected_rows(const ring_case_t *c, int rank, const double *full, int64_t heads,
                             int64_t depth)
{
    const int64_t B = c->batch, L = c->local_len, S = L * c->ranks;
    double *out = doubles(B * heads * L * depth);
    for (int64_t b = 0; b < B; b++)
        for (int64_t h = 0; h < heads; h++)
            for (int64_t i = 0; i < L; i++) {
                int64_t g = sdpa_cp_global_token(c->layout, c->ranks, rank, L, i);
                memcpy(out + ((b * heads + h) * L + i) * depth,
                       full + ((b * heads + h) * S + g) * depth, sizeof(double) * (size_t)depth);
            }
    return out;
}

static void shard_open(shard_t *s, const ring_case_t *c, int rank, const attn_case_t *full)
{
    const int64_t B = c->batch, Hq = c->q_heads, Hkv = c->kv_heads, L = c->local_len,
                  D = c->head_size;
    memset(s, 0, sizeof(*s));
    shard_tensor(&s->q, c->dtype, B, Hq, L, D);
    shard_tensor(&s->k, c->dtype, B, Hkv, L, D);
    shard_tensor(&s->v, c->dtype, B, Hkv, L, D);
    shard_tensor(&s->o, c->dtype, B, Hq, L, D);
    shard_tensor(&s->d_o, c->dtype, B, Hq, L, D);
    shard_tensor(&s->dq, c->dtype, B, Hq, L, D);
    shard_tensor(&s->dk, c->dtype, B, Hkv, L, D);
    shard_tensor(&s->dv, c->dtype, B, Hkv, L, D);
    take_rows(c, rank, &full->desc.q, full->args.q, &s->q);
    take_rows(c, rank, &full->desc.k, full->args.k, &s->k);
    take_rows(c, rank, &full->desc.v, full->args.v, &s->v);
    take_rows(c, rank, &full->desc.diff_dst, full->args.diff_dst, &s->d_o);
    s->ws_bytes = (size_t)(B * Hq * L) * sizeof(float);
    s->ws = test_alloc(&suite_env, s->ws_bytes);

    const test_tensor_t *t[ROLE_COUNT];
    shard_roles(s, t);
    attention_problems(t, c->causal ? SDPA_MASK_CAUSAL_TOP_LEFT : SDPA_MASK_NONE, &s->fwd,
                       &s->bwd);
}

static void shard_args(const shard_t *s, double scale, sdpa_exec_args_t *a)
{
    const test_tensor_t *t[ROLE_COUNT];
    shard_roles(s, t);
    attention_exec_args(t, s->ws, (float)scale, a);
}

static void shard_close(shard_t *s)
{
    test_tensor_t *t[] = {&s->q, &s->k, &s->v, &s->o, &s->d_o, &s->dq, &s->dk, &s->dv};
    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        tensor_free(&suite_env, t[i]);
    test_free(&suite_env, s->ws);
}

/* Inputs are k / 128 with |k| <= 255 (rng_exact): below 2 in magnitude. */
#define VALUE_BOUND 2.0

/* Compares rank's shard t with the oracle's rows of full (heads heads),
 * within rel and abs; prints the first mismatch. */
static int compare_rows(const ring_case_t *c, int rank, const char *name, const test_tensor_t *t,
                        const double *full, int64_t heads, double rel, double abs)
{
    char what[96];
    snprintf(what, sizeof(what), "%d ranks, rank %d: %s", c->ranks, rank, name);
    double *want = expected_rows(c, rank, full, heads, c->head_size);
    double worst = 0;
    int ok = compare_tensor(what, &t->desc, t->data, want, rel, abs, &worst);
    free(want);
    return ok;
}

static double max_abs(const double *x, int64_t count)
{
    double m = 0;
    for (int64_t i = 0; i < count; i++)
        m = fabs(x[i]) > m ? fabs(x[i]) : m;
    return m;
}

/* Tolerances as test_cp.c derives them: O is a merge of partial results
 * each rounded once to the dtype, with f32 sums; the log-sum-exp takes one
 * log and one exp per merge; each gradient element is a sum of at most 2N
 * partial gradients rounded to the dtype, added in f32. */
static void check_rank(const ring_case_t *c, int rank, const shard_t *s, const double *o,
                       const double *lse, const double *const grads[3])
{
    const int64_t B = c->batch, Hq = c->q_heads, Hkv = c->kv_heads, L = c->local_len,
                  S = L * c->ranks, D = c->head_size;
    const double eps = sdpa_dtype_epsilon(c->dtype), e32 = 0x1.0p-24;
    const double terms = sqrt((double)S) + sqrt((double)D);
    ck_assert_msg(
            compare_rows(c, rank, "O", &s->o, o, Hq, eps, VALUE_BOUND * (eps + 8 * e32 * terms)),
            "%d ranks: rank %d's O differs from the oracle's", c->ranks, rank);

    /* The workspace, f32 [C][B][Hq][L / C]. */
    const int64_t C = c->layout == SDPA_CP_LAYOUT_ZIGZAG ? 2 : 1, chunk = L / C;
    double *rows = expected_rows(c, rank, lse, Hq, 1), *want = doubles(B * Hq * L);
    for (int64_t a = 0; a < C; a++)
        for (int64_t bh = 0; bh < B * Hq; bh++)
            for (int64_t i = 0; i < chunk; i++)
                want[(a * B * Hq + bh) * chunk + i] = rows[bh * L + a * chunk + i];
    sdpa_tensor_desc_t ws = dense_tensor(SDPA_DTYPE_F32, C, B, Hq, chunk);
    double worst = 0;
    int ok = compare_tensor("log-sum-exp", &ws, s->ws, want, 8 * e32 * c->ranks, 32 * e32 * terms,
                            &worst);
    free(rows);
    free(want);
    ck_assert_msg(ok, "%d ranks: rank %d's log-sum-exp differs from the oracle's", c->ranks, rank);

    static const char *const names[3] = {"dQ", "dK", "dV"};
    const test_tensor_t *got[3] = {&s->dq, &s->dk, &s->dv};
    const int64_t heads[3] = {Hq, Hkv, Hkv};
    const double eps_o = c->dtype == SDPA_DTYPE_F32 ? 0 : eps;
    const double grad_terms = sqrt((double)(2 * S + D));
    for (int i = 0; i < 3; i++) {
        double scale = max_abs(grads[i], B * heads[i] * S * D);
        double abs = 8 * scale * (e32 * grad_terms + eps_o) + scale * eps * 2.0 * c->ranks;
        ck_assert_msg(compare_rows(c, rank, names[i], got[i], grads[i], heads[i], eps, abs),
                      "%d ranks: rank %d's %s differs from the oracle's", c->ranks, rank, names[i]);
    }
}

static void run_ring(const ring_case_t *c, uint64_t seed)
{
    const int64_t B = c->batch, Hq = c->q_heads, Hkv = c->kv_heads, S = c->local_len * c->ranks,
                  D = c->head_size;
    attn_case_t full;
    problem_init(&full.desc, SDPA_BACKWARD, B, Hq, Hkv, S, S, D, c->dtype, c->dtype);
    full.desc.mask_kind = c->causal ? SDPA_MASK_CAUSAL_TOP_LEFT : SDPA_MASK_NONE;
    ck_assert_int_eq(case_alloc(&full, seed, NULL), 0);
    oracle_t oracle;
    ck_assert_int_eq(oracle_init(&oracle, &full), 0);
    double *o = doubles(B * Hq * S * D), *lse = doubles(B * Hq * S);
    double *dq = doubles(B * Hq * S * D), *dk = doubles(B * Hkv * S * D),
           *dv = doubles(B * Hkv * S * D);
    oracle_forward(&oracle, o, lse);
    oracle_backward(&oracle, dq, dk, dv, NULL);
    oracle_free(&oracle);

    loop_hub_t hub;
    hub_init(&hub, c->ranks);
    shard_t shards[MAX_RANKS];
    rank_job_t jobs[MAX_RANKS];
    memset(jobs, 0, sizeof(jobs));
    for (int r = 0; r < c->ranks; r++) {
        shard_open(&shards[r], c, r, &full);
        jobs[r].endpoint = (loop_endpoint_t){&hub, r};
        jobs[r].layout = c->layout;
        jobs[r].fwd = &shards[r].fwd;
        jobs[r].bwd = &shards[r].bwd;
        shard_args(&shards[r], full.args.scale, &jobs[r].args);
    }
    run_ranks(jobs, c->ranks);
    for (int r = 0; r < c->ranks; r++) {
        ck_assert_msg(jobs[r].create_status == SDPA_SUCCESS && jobs[r].fwd_status == SDPA_SUCCESS &&
                              jobs[r].bwd_status == SDPA_SUCCESS,
                      "%d ranks: rank %d failed: %s", c->ranks, r, jobs[r].message);
    }
    const double *grads[3] = {dq, dk, dv};
    for (int r = 0; r < c->ranks; r++)
        check_rank(c, r, &shards[r], o, lse, grads);
    ck_assert_int_eq(hub_free(&hub), 0); /* every message was received */
    for (int r = 0; r < c->ranks; r++)
        shard_close(&shards[r]);
    free(o);
    free(lse);
    free(dq);
    free(dk);
    free(dv);
    case_free(&full);
}

/* ------------------------------------------------------------------------- */
/* Tests                                                                     */
/* ------------------------------------------------------------------------- */

/* Two ranks, contiguous shards, no mask, f32. */
START_TEST(test_two_ranks)
{
    static const ring_case_t c = {2, SDPA_CP_LAYOUT_CONTIGUOUS, 0, SDPA_DTYPE_F32, 1, 2, 2, 16, 32};
    run_ring(&c, 31);
}
END_TEST

/* Three ranks, zigzag, causal, f16, grouped-query heads. */
START_TEST(test_three_ranks)
{
    static const ring_case_t c = {3, SDPA_CP_LAYOUT_ZIGZAG, 1, SDPA_DTYPE_F16, 1, 4, 2, 16, 32};
    run_ring(&c, 32);
}
END_TEST

/* A problem every refusal test can pass (never executed). */
static void small_shard(shard_t *s, int ranks, int rank, attn_case_t *full)
{
    static const ring_case_t c = {1, SDPA_CP_LAYOUT_CONTIGUOUS, 0, SDPA_DTYPE_F32, 1, 1, 1, 8, 16};
    ring_case_t with = c;
    with.ranks = ranks;
    problem_init(&full->desc, SDPA_BACKWARD, 1, 1, 1, 8 * ranks, 8 * ranks, 16, SDPA_DTYPE_F32,
                 SDPA_DTYPE_F32);
    ck_assert_int_eq(case_alloc(full, 7, NULL), 0);
    shard_open(s, &with, rank, full);
}

/* A table the library cannot use fails on the calling rank alone, at once,
 * with a message naming what is wrong. */
START_TEST(test_unusable_transport)
{
    attn_case_t full;
    shard_t s;
    small_shard(&s, 2, 0, &full);
    loop_hub_t hub;
    hub_init(&hub, 2);
    loop_endpoint_t e = {&hub, 0};
    struct {
        const char *expect;
        sdpa_status_t status;
    } cases[] = {{"desc->transport is NULL", SDPA_ERROR_INVALID_ARGUMENT},
                 {"test is NULL", SDPA_ERROR_INVALID_ARGUMENT},
                 {"rank 2 of 2 ranks", SDPA_ERROR_INVALID_ARGUMENT},
                 {"struct_version", SDPA_ERROR_INVALID_STRUCT}};
    for (int i = 0; i < 4; i++) {
        sdpa_cp_transport_t t = loop_transport(&e);
        if (i == 1)
            t.test = NULL;
        if (i == 2)
            t.rank = 2;
        if (i == 3)
            t.struct_version = SDPA_CP_TRANSPORT_VERSION + 1;
        sdpa_cp_transport_desc_t d = {.struct_size = sizeof(d),
                                      .struct_version = SDPA_CP_TRANSPORT_DESC_VERSION,
                                      .transport = i == 0 ? NULL : &t,
                                      .backend = suite_env.ze,
                                      .context = suite_env.ze_ctx,
                                      .ze_context = suite_env.context,
                                      .ze_device = suite_env.device,
                                      .problem = &s.fwd};
        sdpa_cp_t *cp = (sdpa_cp_t *)&cp;
        sdpa_status_t status = sdpa_cp_create_with_transport(&d, &cp);
        const char *message = sdpa_cp_last_error();
        ck_assert_msg(status == cases[i].status && cp == NULL &&
                              strstr(message, cases[i].expect) != NULL,
                      "case %d: status %s, message \"%s\"; expected %s and \"%s\"", i,
                      sdpa_status_name(status), message, sdpa_status_name(cases[i].status),
                      cases[i].expect);
        ck_assert(test_last_error_matches(status, message));
    }
    ck_assert_int_eq(hub_free(&hub), 0);
    shard_close(&s);
    case_free(&full);
}
END_TEST

/* A transport whose sends fail: creation fails on both ranks, with the
 * transport's own description of the error, and nothing is left. */
START_TEST(test_failing_transport)
{
    attn_case_t full[2];
    shard_t s[2];
    loop_hub_t hub;
    hub_init(&hub, 2);
    hub.refuse_sends = 1;
    rank_job_t jobs[2];
    memset(jobs, 0, sizeof(jobs));
    for (int r = 0; r < 2; r++) {
        small_shard(&s[r], 2, r, &full[r]);
        jobs[r].endpoint = (loop_endpoint_t){&hub, r};
        jobs[r].fwd = &s[r].fwd;
    }
    run_ranks(jobs, 2);
    for (int r = 0; r < 2; r++) {
        ck_assert_msg(jobs[r].create_status == SDPA_ERROR_DEVICE &&
                              strstr(jobs[r].message, "loopback: sends refused") != NULL,
                      "rank %d: status %s, message \"%s\"", r,
                      sdpa_status_name(jobs[r].create_status), jobs[r].message);
        shard_close(&s[r]);
        case_free(&full[r]);
    }
    hub_free(&hub); /* receives never taken leave no message: sends failed */
}
END_TEST

/* Rank 1 creates its object and never executes: rank 0 gives up after its
 * timeout, names rank 1, and abandons its pending requests through the
 * table. */
START_TEST(test_absent_rank)
{
    static const ring_case_t c = {2, SDPA_CP_LAYOUT_CONTIGUOUS, 0, SDPA_DTYPE_F32, 1, 1, 1, 8, 16};
    attn_case_t full;
    problem_init(&full.desc, SDPA_BACKWARD, 1, 1, 1, 16, 16, 16, SDPA_DTYPE_F32, SDPA_DTYPE_F32);
    ck_assert_int_eq(case_alloc(&full, 9, NULL), 0);
    loop_hub_t hub;
    hub_init(&hub, 2);
    shard_t s[2];
    rank_job_t jobs[2];
    memset(jobs, 0, sizeof(jobs));
    for (int r = 0; r < 2; r++) {
        shard_open(&s[r], &c, r, &full);
        jobs[r].endpoint = (loop_endpoint_t){&hub, r};
        jobs[r].fwd = &s[r].fwd;
        jobs[r].timeout_seconds = 0.5;
        jobs[r].skip_execute = r == 1;
        shard_args(&s[r], full.args.scale, &jobs[r].args);
    }
    run_ranks(jobs, 2);
    ck_assert_msg(jobs[0].fwd_status == SDPA_ERROR_DEVICE && jobs[0].failed_peer == 1 &&
                          strstr(jobs[0].message, "for rank 1") != NULL,
                  "rank 0: status %s, failed peer %d, message \"%s\"",
                  sdpa_status_name(jobs[0].fwd_status), jobs[0].failed_peer, jobs[0].message);
    ck_assert_int_gt(hub.abandoned, 0);
    hub_free(&hub); /* rank 0's start message was never received */
    for (int r = 0; r < 2; r++)
        shard_close(&s[r]);
    case_free(&full);
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_ONCE(test_two_ranks),          TEST_ONCE(test_three_ranks),
            TEST_ONCE(test_unusable_transport), TEST_ONCE(test_failing_transport),
            TEST_ONCE(test_absent_rank),
    };
    return test_env_run_table("context-parallel attention over a loopback transport", 600, tests,
                              TEST_COUNT(tests));
}
