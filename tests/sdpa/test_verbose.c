/* test_verbose.c - SDPA_VERBOSE's lines, parsed from the stderr of this
 * process, which runs at the profile level (3) from its first call:
 *   - the problem field names every descriptor member that changes the
 *     problem: the logical B, Sq and Sk of varlen and paged problems (a
 *     paged decode over 4096 keys in blocks of 16 is sk4096), the packed
 *     totals, the paged cache's geometry, window, softcap, ALiBi, splits,
 *     dropout;
 *   - a refused creation or execution prints a "refused" line with the
 *     status and the message last_error() gives, on ze and on ref;
 *   - an execution on the caller's command list prints a "kernel" line
 *     once the list has run, whose time lies inside the host's time of the
 *     queue's execution and past the "exec" line's (the append alone).
 */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "check_main.h"
#include "llm_case.h"
#include "sdpa.h"
#include "ze_env.h"

static const test_allocator_t shared_allocator = {suite_shared_alloc, suite_shared_release, NULL};

/* --- stderr into a file and back ------------------------------------------- */

static int saved_stderr = -1;
static FILE *capture_file;

static void capture_begin(void)
{
    fflush(stderr);
    capture_file = tmpfile();
    ck_assert_ptr_nonnull(capture_file);
    saved_stderr = dup(STDERR_FILENO);
    ck_assert_int_ge(saved_stderr, 0);
    ck_assert_int_ge(dup2(fileno(capture_file), STDERR_FILENO), 0);
}

/* Restores stderr and returns what was written (malloc'ed), also echoed. */
static char *capture_end(void)
{
    fflush(stderr);
    ck_assert_int_ge(dup2(saved_stderr, STDERR_FILENO), 0);
    close(saved_stderr);
    long size = ftell(capture_file);
    ck_assert_int_ge(size, 0);
    char *text = calloc(1, (size_t)size + 1);
    ck_assert_ptr_nonnull(text);
    rewind(capture_file);
    ck_assert_uint_eq(fread(text, 1, (size_t)size, capture_file), (size_t)size);
    fclose(capture_file);
    fputs(text, stderr);
    return text;
}

/* The n-th (0-based) line of text starting with prefix, copied into line
 * without its newline; 0 if there is none. */
static int find_line(const char *text, const char *prefix, int n, char *line, size_t size)
{
    for (const char *at = text; at && *at; at = strchr(at, '\n') ? strchr(at, '\n') + 1 : NULL) {
        if (strncmp(at, prefix, strlen(prefix)) != 0 || n-- > 0)
            continue;
        size_t length = strcspn(at, "\n");
        ck_assert_uint_lt(length, size);
        memcpy(line, at, length);
        line[length] = '\0';
        return 1;
    }
    return 0;
}

/* Field i (0-based, after "sdpa_verbose,") of line; the last of n fields
 * takes the rest. */
static const char *field(const char *line, int i, int n, char *out, size_t size)
{
    const char *at = line + strlen("sdpa_verbose,");
    for (int k = 0; k < i; k++) {
        at = strchr(at, ',');
        ck_assert_ptr_nonnull(at);
        at++;
    }
    size_t length = i == n - 1 ? strlen(at) : strcspn(at, ",");
    ck_assert_uint_lt(length, size);
    memcpy(out, at, length);
    out[length] = '\0';
    return out;
}

/* --- the problem field ------------------------------------------------------ */

/* primitive_create of desc on ze (or ref), its status in *status and the
 * primitive in *prim; returns what it printed on stderr (to free). */
static char *create_captured(int on_ze, const sdpa_problem_desc_t *desc, sdpa_primitive_t **prim,
                             sdpa_status_t *status)
{
    const sdpa_backend_iface_t *iface = on_ze ? suite_env.ze : suite_env.ref;
    sdpa_context_t *ctx = on_ze ? suite_env.ze_ctx : suite_env.ref_ctx;
    *prim = NULL;
    capture_begin();
    *status = iface->primitive_create(ctx, desc, prim);
    return capture_end();
}

/* Creates spec's problem on ze (or ref) and returns the problem field of its
 * "create" line, asserting that it holds every ':'-separated token wanted. */
static void expect_tokens(const llm_spec_t *spec, int on_ze, const char *const *wanted)
{
    llm_case_t c;
    llm_desc_init(&c, spec);
    const sdpa_backend_iface_t *iface = on_ze ? suite_env.ze : suite_env.ref;
    sdpa_primitive_t *prim;
    sdpa_status_t status;
    char *text = create_captured(on_ze, &c.c.desc, &prim, &status);
    ck_assert_msg(status == SDPA_SUCCESS, "%s: %s", sdpa_status_name(status), iface->last_error());
    iface->primitive_destroy(prim);
    char prefix[64], line[4096], problem[1024];
    snprintf(prefix, sizeof(prefix), "sdpa_verbose,create,%s,", on_ze ? "ze" : "ref");
    ck_assert_msg(find_line(text, prefix, 0, line, sizeof(line)), "no create line in:\n%s", text);
    /* create,<backend>,<device>,<problem>,<modules>,<ms>,<config> */
    field(line, 3, 7, problem, sizeof(problem));
    char padded[1040];
    snprintf(padded, sizeof(padded), ":%s:", problem);
    for (int i = 0; wanted[i] != NULL; i++) {
        char token[128];
        snprintf(token, sizeof(token), ":%s:", wanted[i]);
        ck_assert_msg(strstr(padded, token) != NULL, "problem \"%s\" lacks %s", problem,
                      wanted[i]);
    }
    free(text);
}

/* The case: a paged decode over 4096 keys in blocks of 16 printed
 * sk16, the block size. */
START_TEST(test_paged_decode)
{
    const int64_t sq = 1, sk = 4096;
    llm_spec_t s = llm_spec_of(SDPA_FORWARD_INFERENCE, LLM_PAGED, 1, &sq, &sk, SDPA_DTYPE_F16);
    s.block_size = 16;
    s.spare_blocks = 3;
    llm_case_t c;
    llm_desc_init(&c, &s);
    char blocks[64];
    snprintf(blocks, sizeof(blocks), "paged=bs16.nb%lld.mb256", (long long)c.c.desc.k.dims[0]);
    ck_assert_int_eq(c.c.desc.k.dims[0], 256 + 3);
    const char *wanted[] = {"b1", "sq1", "sk4096", blocks, NULL};
    expect_tokens(&s, 1, wanted);
    expect_tokens(&s, 0, wanted);
}
END_TEST

START_TEST(test_varlen)
{
    const int64_t len_q[3] = {5, 0, 9}, len_k[3] = {7, 3, 12};
    llm_spec_t s = llm_spec_of(SDPA_FORWARD_TRAINING, LLM_VARLEN, 3, len_q, len_k, SDPA_DTYPE_F16);
    llm_case_t c;
    llm_desc_init(&c, &s);
    char totals[64];
    snprintf(totals, sizeof(totals), "varlen=tq%lld.tk%lld", (long long)c.c.desc.q.dims[2],
             (long long)c.c.desc.k.dims[2]);
    ck_assert_int_ge(c.c.desc.q.dims[2], 14);
    const char *wanted[] = {"b3", "sq9", "sk12", totals, NULL};
    expect_tokens(&s, 0, wanted);
}
END_TEST

START_TEST(test_window_softcap_alibi_splits)
{
    const int64_t sq = 1, sk = 100;
    llm_spec_t s = llm_spec_of(SDPA_FORWARD_INFERENCE, LLM_PADDED, 2, &sq, &sk, SDPA_DTYPE_F16);
    s.window = (sdpa_window_desc_t){1, 30, -1};
    s.softcap = 50.0f;
    s.alibi = SDPA_ALIBI_PER_BATCH_HEAD;
    s.num_splits = 4;
    const char *wanted[] = {"window=l30.r-1", "softcap=50", "alibi=bh", "splits=4", NULL};
    expect_tokens(&s, 0, wanted);
    s.alibi = SDPA_ALIBI_PER_HEAD;
    s.num_splits = 0;
    s.softcap = 0.125f;
    const char *per_head[] = {"alibi=h", "softcap=0.125", NULL};
    expect_tokens(&s, 0, per_head);
}
END_TEST

START_TEST(test_dropout)
{
    const int64_t sq = 8, sk = 8;
    llm_spec_t s = llm_spec_of(SDPA_FORWARD_TRAINING, LLM_PADDED, 1, &sq, &sk, SDPA_DTYPE_F16);
    s.dropout = 1;
    const char *wanted[] = {"fwd_train", "dropout=host+offset+mask", NULL};
    expect_tokens(&s, 0, wanted);
}
END_TEST

/* --- refusals ----------------------------------------------------------------- */

static void expect_refused_line(const char *text, const char *backend, const char *call,
                                sdpa_status_t status, const char *message)
{
    char prefix[96], line[4096], got[2048];
    snprintf(prefix, sizeof(prefix), "sdpa_verbose,refused,%s,%s,", backend, call);
    ck_assert_msg(find_line(text, prefix, 0, line, sizeof(line)), "no %s line in:\n%s", prefix,
                  text);
    /* refused,<backend>,<call>,<status>,<message> */
    ck_assert_str_eq(field(line, 3, 5, got, sizeof(got)), sdpa_status_name(status));
    ck_assert_str_eq(field(line, 4, 5, got, sizeof(got)), message);
}

START_TEST(test_refused)
{
    const int64_t sq = 4, sk = 4;
    llm_spec_t s = llm_spec_of(SDPA_FORWARD_INFERENCE, LLM_PADDED, 1, &sq, &sk, SDPA_DTYPE_F16);
    llm_case_t c;
    llm_desc_init(&c, &s);
    c.c.desc.k.dims[1] = 3; /* does not divide Hq = 4 */
    c.c.desc.v.dims[1] = 3;
    for (int on_ze = 0; on_ze < 2; on_ze++) {
        const sdpa_backend_iface_t *iface = on_ze ? suite_env.ze : suite_env.ref;
        sdpa_primitive_t *prim;
        sdpa_status_t status;
        char *text = create_captured(on_ze, &c.c.desc, &prim, &status);
        ck_assert_int_eq(status, SDPA_ERROR_INVALID_ARGUMENT);
        ck_assert_ptr_nonnull(strstr(iface->last_error(), "k.dims[1] = 3"));
        expect_refused_line(text, iface->name, "primitive_create", status, iface->last_error());
        free(text);

        capture_begin();
        status = iface->primitive_execute(NULL, &c.c.args);
        text = capture_end();
        ck_assert_int_eq(status, SDPA_ERROR_INVALID_ARGUMENT);
        expect_refused_line(text, iface->name, "primitive_execute", status, iface->last_error());
        free(text);
    }
    /* A success prints no refused line. */
    llm_desc_init(&c, &s);
    sdpa_primitive_t *prim;
    sdpa_status_t status;
    char *text = create_captured(0, &c.c.desc, &prim, &status);
    ck_assert_int_eq(status, SDPA_SUCCESS);
    suite_env.ref->primitive_destroy(prim);
    ck_assert_ptr_null(strstr(text, "sdpa_verbose,refused,"));
    free(text);
}
END_TEST

/* --- the kernels' time on a caller's list ------------------------------------- */

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

/* The <ms> field of a line exec or kernel line (field 5 of 7). */
static double line_ms(const char *line)
{
    char ms[64];
    return atof(field(line, 5, 7, ms, sizeof(ms)));
}

/* spec's problem in *c, its tensors filled from seed, and its ze primitive. */
static sdpa_primitive_t *ze_case(llm_case_t *c, const llm_spec_t *spec, uint64_t seed)
{
    llm_desc_init(c, spec);
    ck_assert_int_eq(llm_case_alloc(c, seed, &shared_allocator), 0);
    sdpa_primitive_t *prim = NULL;
    ck_assert_int_eq(suite_env.ze->primitive_create(suite_env.ze_ctx, &c->c.desc, &prim),
                     SDPA_SUCCESS);
    return prim;
}

START_TEST(test_kernel_time_on_caller_list)
{
    const int64_t sq = 256, sk = 256;
    llm_spec_t s = llm_spec_of(SDPA_FORWARD_INFERENCE, LLM_PADDED, 1, &sq, &sk, SDPA_DTYPE_F16);
    s.head_size = 64;
    llm_case_t c;
    sdpa_primitive_t *prim = ze_case(&c, &s, 31);

    ze_command_queue_handle_t queue;
    ze_command_list_handle_t list;
    test_env_queue_and_list(&queue, &list);

    /* Two executions appended, then run together: two kernel lines. */
    capture_begin();
    sdpa_exec_args_t a = c.c.args;
    a.command_list = list;
    sdpa_status_t status = suite_env.ze->primitive_execute(prim, &a);
    sdpa_status_t status2 = suite_env.ze->primitive_execute(prim, &a);
    char *appended = capture_end();
    ck_assert_int_eq(status, SDPA_SUCCESS);
    ck_assert_int_eq(status2, SDPA_SUCCESS);
    char line[4096];
    ck_assert_msg(!find_line(appended, "sdpa_verbose,kernel,", 0, line, sizeof(line)),
                  "a kernel line before the list ran: %s", line);
    ck_assert_msg(find_line(appended, "sdpa_verbose,exec,ze,", 1, line, sizeof(line)),
                  "no exec lines:\n%s", appended);
    const double append_ms = line_ms(line);

    ck_assert_int_eq(zeCommandListClose(list), ZE_RESULT_SUCCESS);
    const double start = now_ms();
    ck_assert_int_eq(zeCommandQueueExecuteCommandLists(queue, 1, &list, NULL), ZE_RESULT_SUCCESS);
    ck_assert_int_eq(zeCommandQueueSynchronize(queue, UINT64_MAX), ZE_RESULT_SUCCESS);
    const double wall_ms = now_ms() - start;

    /* Read back at destruction (sdpa.h: the list has run by then). */
    capture_begin();
    suite_env.ze->primitive_destroy(prim);
    char *destroyed = capture_end();
    double sum_ms = 0.0;
    for (int n = 0; n < 2; n++) {
        ck_assert_msg(find_line(destroyed, "sdpa_verbose,kernel,ze,", n, line, sizeof(line)),
                      "kernel line %d missing:\n%s", n, destroyed);
        char list_field[32];
        ck_assert_str_eq(field(line, 4, 7, list_field, sizeof(list_field)), "caller_list");
        const double ms = line_ms(line);
        printf("kernel %d: %.3f ms (append %.3f ms, queue %.3f ms)\n", n, ms, append_ms, wall_ms);
        ck_assert_msg(ms > 0.0, "kernel time %.3f ms", ms);
        sum_ms += ms;
    }
    ck_assert_msg(!find_line(destroyed, "sdpa_verbose,kernel,ze,", 2, line, sizeof(line)),
                  "a third kernel line: %s", line);
    /* Both ran inside the queue's execution (the stamps' resolution and
     * this clock's reading add 0.1 ms at most). */
    ck_assert_msg(sum_ms <= wall_ms + 0.1, "kernels %.3f ms > the queue's %.3f ms", sum_ms,
                  wall_ms);

    free(appended);
    free(destroyed);
    zeCommandListDestroy(list);
    zeCommandQueueDestroy(queue);
    llm_case_free(&c);
}
END_TEST

/* The context's own (synchronous) list: the kernel line comes with the
 * execution. */
START_TEST(test_kernel_time_on_sync_list)
{
    const int64_t sq = 64, sk = 64;
    llm_spec_t s = llm_spec_of(SDPA_FORWARD_INFERENCE, LLM_PADDED, 1, &sq, &sk, SDPA_DTYPE_F16);
    llm_case_t c;
    sdpa_primitive_t *prim = ze_case(&c, &s, 32);
    capture_begin();
    const double start = now_ms();
    sdpa_status_t status = suite_env.ze->primitive_execute(prim, &c.c.args);
    const double wall_ms = now_ms() - start;
    char *text = capture_end();
    ck_assert_int_eq(status, SDPA_SUCCESS);
    char line[4096], list_field[32];
    ck_assert_msg(find_line(text, "sdpa_verbose,kernel,ze,", 0, line, sizeof(line)),
                  "no kernel line:\n%s", text);
    ck_assert_str_eq(field(line, 4, 7, list_field, sizeof(list_field)), "sync_list");
    const double ms = line_ms(line);
    ck_assert_msg(ms > 0.0 && ms <= wall_ms, "kernel %.3f ms, execution %.3f ms", ms, wall_ms);
    suite_env.ze->primitive_destroy(prim);
    free(text);
    llm_case_free(&c);
}
END_TEST

int main(void)
{
    /* Before the first call of either backend: the level is read once. */
    setenv("SDPA_VERBOSE", "profile", 1);
    const test_entry_t tests[] = {
            TEST_ONCE(test_paged_decode),
            TEST_ONCE(test_varlen),
            TEST_ONCE(test_window_softcap_alibi_splits),
            TEST_ONCE(test_dropout),
            TEST_ONCE(test_refused),
            TEST_ONCE(test_kernel_time_on_caller_list),
            TEST_ONCE(test_kernel_time_on_sync_list),
    };
    return test_env_run_table("verbose", 600, tests, TEST_COUNT(tests));
}
