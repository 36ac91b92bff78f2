/*
 * test_hostile_arrays.c - the ze kernels against hostile device arrays
 * (sdpa.h, "Device arrays"): varlen cu_seqlens_q/k and the paged
 * block_table and cache_seqlens with entries that are negative, huge,
 * INT_MAX or INT_MIN, non-monotonic, or past the packed rows, the block
 * table or the cache, on every path that reads them: the portable forward,
 * the decode kernel (1 and 4 query rows), split-KV, the backward, and the
 * same under SDPA_ZE_KERNELS=xe (the fast path refuses these problems and
 * hands them to the portable kernels).
 *
 * Every buffer lies against a PROT_NONE guard (the CPU driver's
 * ZE_CPU_GUARD_PAGES), each case runs with the buffers against the
 * trailing guard and again against the leading one, and each test runs in
 * a process of its own (CK_FORK): a read or write outside a buffer faults
 * and fails that test. Each case then asserts that the inputs are
 * unchanged (no write landed in another buffer, however far), and that the
 * rows of the sequences whose entries are well formed equal the
 * double-precision oracle of tests/abi/llm_case.c. The last tests check
 * the checking mode (SDPA_ZE_CHECK_DEVICE_ARRAYS), which refuses such
 * executions and names the first bad entry.
 */
#define _POSIX_C_SOURCE 200809L /* setenv, mkdtemp, nftw */
#define _XOPEN_SOURCE 700
#include <check.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "elements.h"
#include "llm_case.h"
#include "sdpa.h"
#include "ze_env.h"

/* ------------------------------------------------------------------------- */
/* Guarded buffers                                                           */
/* ------------------------------------------------------------------------- */

/* Shared USM against a guard page: with 4-byte alignment, every f32, f16
 * and int32 buffer here (whose sizes are multiples of 4) ends exactly at
 * the trailing guard, or starts exactly at the leading one. */
static void *guarded_alloc(size_t bytes, void *user)
{
    (void)user;
    ze_device_mem_alloc_desc_t dd = {.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};
    ze_host_mem_alloc_desc_t hd = {.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
    void *p = NULL;
    if (zeMemAllocShared(suite_env.context, &dd, &hd, bytes ? bytes : 4, 4, suite_env.device, &p) !=
        ZE_RESULT_SUCCESS)
        return NULL;
    return p;
}

static void guarded_release(void *pointer, void *user)
{
    (void)user;
    zeMemFree(suite_env.context, pointer);
}

static const test_allocator_t guarded = {guarded_alloc, guarded_release, NULL};

/* The two placements each case runs with. */
static const char *const sides[2] = {"end", "start"};

/* ------------------------------------------------------------------------- */
/* Cases                                                                     */
/* ------------------------------------------------------------------------- */

/* Which array an entry is written to. */
typedef enum hostile_array { CU_Q, CU_K, TABLE, LENS } hostile_array_t;

/* One hostile entry: array[index] = value (TABLE: row 0, column index),
 * and which of the two sequences still have well-formed entries (bit b:
 * sequence b), whose rows are compared with the oracle. */
typedef struct hostile {
    const char *name;
    hostile_array_t array;
    int index;
    int64_t value;
    unsigned good;
} hostile_t;

/* Varlen: two sequences of 8 queries and 8 keys, packed into 19 rows
 * (three owned by no sequence), max_seqlen 8 (the shape, with
 * GQA). */
#define TOTAL 19
static const hostile_t varlen_cases[] = {
        {"cu_seqlens_k[0] = -3", CU_K, 0, -3, 2},
        {"cu_seqlens_k[2] = total + 1", CU_K, 2, TOTAL + 1, 1},
        {"cu_seqlens_k[2] = total + 4000", CU_K, 2, TOTAL + 4000, 1},
        {"cu_seqlens_k[2] = INT_MAX", CU_K, 2, INT_MAX, 1},
        {"cu_seqlens_k[1] = INT_MIN", CU_K, 1, INT_MIN, 0},
        {"cu_seqlens_k[1] = 16 (decreasing, 16 keys > max)", CU_K, 1, 16, 0},
        {"cu_seqlens_q[2] = total + 3", CU_Q, 2, TOTAL + 3, 1},
        {"cu_seqlens_q[0] = -1000", CU_Q, 0, -1000, 2},
        {"cu_seqlens_q[1] = INT_MAX", CU_Q, 1, INT_MAX, 0},
        {"cu_seqlens_q[2] = total (11 rows > max_seqlen_q)", CU_Q, 2, TOTAL, 1},
        {"cu_seqlens_q[1] = -1 (decreasing)", CU_Q, 1, -1, 0},
};
#define N_VARLEN (int)(sizeof(varlen_cases) / sizeof(varlen_cases[0]))

/* Paged: sequences of 40 and 20 keys in blocks of 16, a table of 3
 * columns (48 keys) in rows of 4 (the fourth entry poison, -1), 8 blocks
 * in the cache. */
static const hostile_t paged_cases[] = {
        {"cache_seqlens[0] = 1000", LENS, 0, 1000, 2},
        {"cache_seqlens[0] = INT_MAX", LENS, 0, INT_MAX, 2},
        {"cache_seqlens[0] = 80 (into the next row)", LENS, 0, 80, 2},
        {"cache_seqlens[0] = 49 (past the table)", LENS, 0, 49, 2},
        {"cache_seqlens[0] = -5", LENS, 0, -5, 2},
        {"block_table[0][1] = 2^30", TABLE, 1, 1 << 30, 2},
        {"block_table[0][0] = -1", TABLE, 0, -1, 2},
        {"block_table[0][2] = INT_MIN", TABLE, 2, INT_MIN, 2},
        {"block_table[0][1] = INT_MAX", TABLE, 1, INT_MAX, 2},
        {"block_table[0][0] = num_blocks", TABLE, 0, 8, 2},
};
#define N_PAGED (int)(sizeof(paged_cases) / sizeof(paged_cases[0]))

static llm_spec_t varlen_spec(sdpa_prop_kind_t prop, sdpa_dtype_t dt)
{
    static const int64_t len[2] = {8, 8};
    return llm_spec_of(prop, LLM_VARLEN, 2, len, len, dt);
}

/* sq queries per sequence (1: decode), num_splits > 1: split-KV. */
static llm_spec_t paged_spec(int64_t sq, uint32_t num_splits)
{
    static const int64_t len_k[2] = {40, 20};
    const int64_t len_q[2] = {sq, sq};
    llm_spec_t s = llm_spec_of(SDPA_FORWARD_TRAINING, LLM_PAGED, 2, len_q, len_k, SDPA_DTYPE_F32);
    s.spare_blocks = 3;
    s.num_splits = num_splits;
    s.mask_kind = sq > 1 ? SDPA_MASK_CAUSAL_BOTTOM_RIGHT : SDPA_MASK_NONE;
    return s;
}

static void write_entry(llm_case_t *c, const hostile_t *h)
{
    const sdpa_exec_args_t *a = &c->c.args;
    int32_t *array = h->array == CU_Q    ? (int32_t *)a->cu_seqlens_q
                     : h->array == CU_K  ? (int32_t *)a->cu_seqlens_k
                     : h->array == TABLE ? (int32_t *)a->block_table
                                         : (int32_t *)a->cache_seqlens;
    array[h->index] = (int32_t)h->value;
}

/* ------------------------------------------------------------------------- */
/* Checks                                                                    */
/* ------------------------------------------------------------------------- */

/* Host copies of every buffer the execution must not write. */
typedef struct snapshot {
    void *copy[ATTN_CASE_MAX_BUFFERS];
} snapshot_t;

static int is_output(const llm_case_t *c, const void *buffer)
{
    const sdpa_exec_args_t *a = &c->c.args;
    const int backward = c->c.desc.prop_kind == SDPA_BACKWARD;
    return buffer == a->dst ? !backward
           : buffer == a->workspace
                   ? !backward
                   : buffer == a->diff_q || buffer == a->diff_k || buffer == a->diff_v ||
                             buffer == a->ds || buffer == a->dropout_mask;
}

static void snapshot_take(const llm_case_t *c, snapshot_t *s)
{
    memset(s, 0, sizeof(*s));
    for (int i = 0; i < c->c.buffer_count; i++) {
        if (is_output(c, c->c.buffers[i]))
            continue;
        s->copy[i] = malloc(c->c.buffer_bytes[i]);
        ck_assert_ptr_nonnull(s->copy[i]);
        memcpy(s->copy[i], c->c.buffers[i], c->c.buffer_bytes[i]);
    }
}

/* Every input still as it was: no write landed in one. */
static void snapshot_check_free(const llm_case_t *c, snapshot_t *s, const char *name)
{
    for (int i = 0; i < c->c.buffer_count; i++) {
        if (s->copy[i] == NULL)
            continue;
        ck_assert_msg(memcmp(s->copy[i], c->c.buffers[i], c->c.buffer_bytes[i]) == 0,
                      "%s: input buffer %d (%zu bytes) was written", name, i, c->c.buffer_bytes[i]);
        free(s->copy[i]);
    }
}

/* The tolerance of a device result: its dtype's rounding, and f32
 * arithmetic over the row's magnitude (as test_llm.c allows); a backward in
 * f16 reads O rounded to f16 (2^13 units of 2^-24, four terms). */
static double tolerance_units(const llm_spec_t *s)
{
    return s->prop == SDPA_BACKWARD && s->qdt != SDPA_DTYPE_F32 ? 4.0 * 8192.0 : 256.0;
}

static double rounding(sdpa_dtype_t dt)
{
    return dt == SDPA_DTYPE_F16    ? ldexp(1.0, -11)
           : dt == SDPA_DTYPE_BF16 ? ldexp(1.0, -8)
                                   : ldexp(1.0, -24);
}

/* Compares rows [row0, row0 + rows) of every head of tensor t (batch index
 * i0) at data with the oracle's want (dense over t's dims). */
static void compare_rows(const char *what, const char *name, const llm_spec_t *s,
                         const sdpa_tensor_desc_t *t, const void *data, const double *want,
                         int64_t i0, int64_t row0, int64_t rows)
{
    const int64_t *n = t->dims;
    double magnitude = 0;
    for (int64_t h = 0; h < n[1]; h++)
        for (int64_t i = row0; i < row0 + rows; i++)
            for (int64_t d = 0; d < n[3]; d++) {
                const double w = want[((i0 * n[1] + h) * n[2] + i) * n[3] + d];
                if (isfinite(w))
                    magnitude = fmax(magnitude, fabs(w));
            }
    for (int64_t h = 0; h < n[1]; h++)
        for (int64_t i = row0; i < row0 + rows; i++)
            for (int64_t d = 0; d < n[3]; d++) {
                const double w = want[((i0 * n[1] + h) * n[2] + i) * n[3] + d];
                const double got = tensor_get(t, data, i0, h, i, d);
                const double tol = rounding(t->dtype) * fabs(w) +
                                   tolerance_units(s) * ldexp(1.0, -24) * magnitude + 1e-12;
                ck_assert_msg(fabs(got - w) <= tol || (isnan(w) && isnan(got)),
                              "%s: %s[%lld,%lld,%lld,%lld] = %.9g, expected %.9g (+- %g)", name,
                              what, (long long)i0, (long long)h, (long long)i, (long long)d, got, w,
                              tol);
            }
}

/* The outputs of the well-formed sequences (bits of good) against e. */
static void compare_good(const llm_case_t *c, const llm_expected_t *e, unsigned good,
                         const char *name)
{
    const llm_spec_t *s = &c->spec;
    const sdpa_problem_desc_t *p = &c->c.desc;
    const sdpa_exec_args_t *a = &c->c.args;
    for (int64_t b = 0; b < s->batch; b++) {
        if (!(good >> b & 1))
            continue;
        const int varlen = s->layout == LLM_VARLEN;
        const int64_t i0 = varlen ? 0 : b;
        const int64_t q0 = varlen ? c->q_start[b] : 0, k0 = varlen ? c->k_start[b] : 0;
        if (s->prop != SDPA_BACKWARD) {
            compare_rows("O", name, s, &p->dst, a->dst, e->o, i0, q0, s->len_q[b]);
            continue;
        }
        compare_rows("dQ", name, s, &p->diff_q, a->diff_q, e->dq, i0, q0, s->len_q[b]);
        compare_rows("dK", name, s, &p->diff_k, a->diff_k, e->dk, i0, k0, s->len_k[b]);
        compare_rows("dV", name, s, &p->diff_v, a->diff_v, e->dv, i0, k0, s->len_k[b]);
    }
}

/* ------------------------------------------------------------------------- */
/* Running                                                                   */
/* ------------------------------------------------------------------------- */

/* A backward reads O and the log-sum-exp: the ref forward's on the
 * well-formed arrays. */
static void forward_on_ref(llm_case_t *c)
{
    sdpa_problem_desc_t f = llm_training_forward(c);
    sdpa_status_t status = test_run_once(suite_env.ref, suite_env.ref_ctx, &f, &c->c.args);
    ck_assert_msg(status == SDPA_SUCCESS, "ref forward: %s", suite_env.ref->last_error());
}

/* Runs spec with hostile entry h on ze, the buffers against each guard in
 * turn: the execution succeeds, writes no input, and the well-formed
 * sequences' rows are right. */
static void run_hostile(const llm_spec_t *spec, const hostile_t *h, uint64_t seed)
{
    for (int side = 0; side < 2; side++) {
        char name[160];
        snprintf(name, sizeof(name), "%s (buffers against the %s guard)", h->name, sides[side]);
        setenv("ZE_CPU_GUARD_PAGES", sides[side], 1);
        llm_case_t c;
        llm_desc_init(&c, spec);
        ck_assert_int_eq(llm_case_alloc(&c, seed, &guarded), 0);
        if (spec->prop == SDPA_BACKWARD)
            forward_on_ref(&c);
        llm_expected_t e;
        ck_assert_int_eq(llm_expect(&c, &e), 0);
        write_entry(&c, h);
        snapshot_t snap;
        snapshot_take(&c, &snap);
        sdpa_status_t status = test_run_once(suite_env.ze, suite_env.ze_ctx, &c.c.desc, &c.c.args);
        ck_assert_msg(status == SDPA_SUCCESS, "%s: %s: %s", name, sdpa_status_name(status),
                      suite_env.ze->last_error());
        snapshot_check_free(&c, &snap, name);
        compare_good(&c, &e, h->good, name);
        llm_expected_free(&e);
        llm_case_free(&c);
        unsetenv("ZE_CPU_GUARD_PAGES");
    }
}

/* Opens the environment in the test's own process, and closes it (the
 * sanitizers' leak check runs as each test's process exits). */
static void open_env(void)
{
    test_env_fixture();
}

static void close_env(void)
{
    test_env_close(&suite_env);
}

/* One loop test per path, not one table of paths run by one or two loop
 * tests: run that way (tried twice), LeakSanitizer's tracer crashes with
 * signal 11 at the exit of some of the runs, every time, in the sanitizer
 * build (make check-sanitize), though each run is its own process. */

/* Varlen forward, training (the log-sum-exp too), f32, portable. */
START_TEST(test_varlen_forward)
{
    llm_spec_t s = varlen_spec(SDPA_FORWARD_TRAINING, SDPA_DTYPE_F32);
    s.mask_kind = _i % 2 ? SDPA_MASK_CAUSAL_BOTTOM_RIGHT : SDPA_MASK_NONE;
    run_hostile(&s, &varlen_cases[_i], 100 + (uint64_t)_i);
}
END_TEST

/* The same in f16 with the kernel set of the fast path, emulated. */
START_TEST(test_varlen_forward_xe)
{
    setenv("SDPA_ZE_KERNELS", "xe", 1);
    test_env_fixture();
    llm_spec_t s = varlen_spec(SDPA_FORWARD_INFERENCE, SDPA_DTYPE_F16);
    run_hostile(&s, &varlen_cases[_i], 200 + (uint64_t)_i);
}
END_TEST

/* Varlen backward (dQ through the f32 scratch and the postprocess, dK,
 * dV), f32. */
START_TEST(test_varlen_backward)
{
    llm_spec_t s = varlen_spec(SDPA_BACKWARD, SDPA_DTYPE_F32);
    s.mask_kind = _i % 2 ? SDPA_MASK_CAUSAL_BOTTOM_RIGHT : SDPA_MASK_NONE;
    run_hostile(&s, &varlen_cases[_i], 300 + (uint64_t)_i);
}
END_TEST

/* Paged, one query per sequence: the decode kernel unsplit
 * (SDPA_ZE_DECODE=1; by default only split-KV runs it) and the portable
 * forward. */
START_TEST(test_paged_decode)
{
    setenv("SDPA_ZE_DECODE", "1", 1);
    test_env_fixture();
    llm_spec_t s = paged_spec(1, 0);
    run_hostile(&s, &paged_cases[_i], 400 + (uint64_t)_i);
}
END_TEST

/* Paged, 4 query rows (chunked prefill): the portable forward
 * (SDPA_ZE_DECODE=0), and the decode kernel unsplit (=1). */
START_TEST(test_paged_rows)
{
    setenv("SDPA_ZE_DECODE", "0", 1);
    test_env_fixture();
    llm_spec_t s = paged_spec(4, 0);
    run_hostile(&s, &paged_cases[_i], 500 + (uint64_t)_i);
}
END_TEST

START_TEST(test_paged_rows_decode)
{
    setenv("SDPA_ZE_DECODE", "1", 1);
    test_env_fixture();
    llm_spec_t s = paged_spec(4, 0);
    run_hostile(&s, &paged_cases[_i], 550 + (uint64_t)_i);
}
END_TEST

/* Split-KV decode: three splits and their merge. */
START_TEST(test_paged_split)
{
    llm_spec_t s = paged_spec(1, 3);
    run_hostile(&s, &paged_cases[_i], 600 + (uint64_t)_i);
}
END_TEST

/* The same problem as test_paged_decode on the portable forward (the
 * default for an unsplit decode). */
START_TEST(test_paged_decode_portable)
{
    llm_spec_t s = paged_spec(1, 0);
    run_hostile(&s, &paged_cases[_i], 650 + (uint64_t)_i);
}
END_TEST

/* Paged with the fast path's kernel set (emulated): served by the portable
 * kernels. */
START_TEST(test_paged_xe)
{
    setenv("SDPA_ZE_KERNELS", "xe", 1);
    test_env_fixture();
    llm_spec_t s = paged_spec(4, 0);
    run_hostile(&s, &paged_cases[_i], 700 + (uint64_t)_i);
}
END_TEST

/* ------------------------------------------------------------------------- */
/* The checking mode                                                         */
/* ------------------------------------------------------------------------- */

/* Under SDPA_ZE_CHECK_DEVICE_ARRAYS, spec with entry h is refused with
 * SDPA_ERROR_INVALID_ARGUMENT and a message holding `expect`, before
 * anything is written. */
static void expect_refused(const llm_spec_t *spec, const hostile_t *h, const char *expect)
{
    llm_case_t c;
    llm_desc_init(&c, spec);
    ck_assert_int_eq(llm_case_alloc(&c, 900, &guarded), 0);
    if (spec->prop == SDPA_BACKWARD)
        forward_on_ref(&c);
    write_entry(&c, h);
    const sdpa_exec_args_t *a = &c.c.args;
    void *out = spec->prop == SDPA_BACKWARD ? a->diff_q : a->dst;
    const size_t out_bytes =
            tensor_bytes(spec->prop == SDPA_BACKWARD ? &c.c.desc.diff_q : &c.c.desc.dst);
    sdpa_status_t status = test_run_once(suite_env.ze, suite_env.ze_ctx, &c.c.desc, a);
    ck_assert_msg(status == SDPA_ERROR_INVALID_ARGUMENT, "%s: %s: %s", h->name,
                  sdpa_status_name(status), suite_env.ze->last_error());
    const char *why = suite_env.ze->last_error();
    ck_assert_msg(strstr(why, expect) != NULL, "%s: \"%s\" does not say \"%s\"", h->name, why,
                  expect);
    for (size_t n = 0; n < out_bytes; n++)
        ck_assert_msg(((const unsigned char *)out)[n] == 0xff, "%s: output byte %zu written",
                      h->name, n);
    llm_case_free(&c);
}

START_TEST(test_check_mode)
{
    setenv("SDPA_ZE_CHECK_DEVICE_ARRAYS", "1", 1);
    test_env_fixture();
    const llm_spec_t fwd = varlen_spec(SDPA_FORWARD_INFERENCE, SDPA_DTYPE_F32);
    const llm_spec_t bwd = varlen_spec(SDPA_BACKWARD, SDPA_DTYPE_F32);
    const llm_spec_t paged = paged_spec(1, 3);
    expect_refused(&fwd, &varlen_cases[0], "args->cu_seqlens_k[0] = -3: must be 0");
    expect_refused(&fwd, &varlen_cases[6], "args->cu_seqlens_q[2] = 22 after 8: sequence 1 has 14");
    expect_refused(&fwd, &varlen_cases[9],
                   "args->cu_seqlens_q[2] = 19 after 8: sequence 1 has 11 rows, outside "
                   "0..varlen.max_seqlen_q = 8");
    expect_refused(&bwd, &varlen_cases[4], "args->cu_seqlens_k[1] = -2147483648 after 0");
    expect_refused(&paged, &paged_cases[0], "args->cache_seqlens[0] = 1000: outside 0..48");
    expect_refused(&paged, &paged_cases[5],
                   "args->block_table[0][1] = 1073741824: not a block of the cache (0..7)");
    expect_refused(&paged, &paged_cases[6], "args->block_table[0][0] = -1");

    /* On a caller's list the arrays are not checked: the kernels clamp. */
    ze_command_list_handle_t list = test_env_sync_list();
    llm_case_t c;
    llm_desc_init(&c, &paged);
    ck_assert_int_eq(llm_case_alloc(&c, 901, &guarded), 0);
    write_entry(&c, &paged_cases[5]);
    c.c.args.command_list = list;
    sdpa_status_t status = test_run_once(suite_env.ze, suite_env.ze_ctx, &c.c.desc, &c.c.args);
    ck_assert_msg(status == SDPA_SUCCESS, "caller's list: %s", suite_env.ze->last_error());
    llm_case_free(&c);
    zeCommandListDestroy(list);
}
END_TEST

/* Well-formed arrays pass the checking mode and give the oracle's result. */
START_TEST(test_check_mode_accepts)
{
    setenv("SDPA_ZE_CHECK_DEVICE_ARRAYS", "1", 1);
    test_env_fixture();
    const llm_spec_t specs[3] = {varlen_spec(SDPA_FORWARD_TRAINING, SDPA_DTYPE_F32),
                                 varlen_spec(SDPA_BACKWARD, SDPA_DTYPE_F32), paged_spec(1, 3)};
    const hostile_t none = {"well formed", CU_Q, 0, 0, 3}; /* cu_seqlens_q[0] = 0 again */
    const hostile_t none_paged = {"well formed", LENS, 0, 40, 3};
    for (int i = 0; i < 3; i++)
        run_hostile(&specs[i], i == 2 ? &none_paged : &none, 950 + (uint64_t)i);
}
END_TEST

/* ------------------------------------------------------------------------- */

/* The persistent module cache in a directory of this run, so that the
 * tests' processes build each module once. */
static char cache_dir[64];

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

int main(void)
{
    snprintf(cache_dir, sizeof(cache_dir), "/tmp/sdpa-hostile-XXXXXX");
    if (mkdtemp(cache_dir) == NULL) {
        perror("mkdtemp");
        return 1;
    }
    setenv("SDPA_CACHE", "1", 1);
    setenv("SDPA_CACHE_DIR", cache_dir, 1);

    const test_entry_t tests[] = {
            TEST_LOOP(test_varlen_forward, N_VARLEN),
            TEST_LOOP(test_varlen_backward, N_VARLEN),
            TEST_LOOP(test_paged_decode_portable, N_PAGED),
            TEST_LOOP(test_paged_split, N_PAGED),
            TEST_ONCE(test_check_mode),
            TEST_ONCE(test_check_mode_accepts),
    };
    /* Tests that set an environment variable before opening theirs. */
    const test_entry_t env_tests[] = {
            TEST_LOOP(test_varlen_forward_xe, N_VARLEN), TEST_LOOP(test_paged_decode, N_PAGED),
            TEST_LOOP(test_paged_rows_decode, N_PAGED),  TEST_LOOP(test_paged_rows, N_PAGED),
            TEST_LOOP(test_paged_xe, N_PAGED),
    };
    Suite *s = suite_create("hostile_arrays");
    TCase *tc = test_add_case(s, "hostile_arrays", 600, tests, TEST_COUNT(tests));
    tcase_add_checked_fixture(tc, open_env, close_env);
    TCase *env_tc = test_add_case(s, "hostile_arrays_env", 600, env_tests, TEST_COUNT(env_tests));
    tcase_add_checked_fixture(env_tc, NULL, close_env);

    setenv("CK_FORK", "yes", 1); /* each test opens its own environment */
    int failed = test_run_suite(s);
    nftw(cache_dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return failed;
}
