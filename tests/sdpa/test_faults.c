/*
 * test_faults.c - every Level Zero call the ze backend issues, made to fail
 * once, in forward and backward: a clear status, no leak, and a context that
 * still computes correctly afterwards.
 *
 * The CPU driver's extension (drivers/ze_cpu/zex_cpu.h) counts every Level
 * Zero call and fails the nth call of a function on demand. Each scenario
 * below runs once to learn which calls it makes (per function, how many),
 * then once per call with exactly that call failing:
 *   - the call fails with ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, and the
 *     first call of each function also with ZE_RESULT_ERROR_DEVICE_LOST;
 *   - the scenario then either fails with the status that result maps to
 *     (SDPA_ERROR_OUT_OF_DEVICE_MEMORY, SDPA_ERROR_DEVICE) and a message
 *     naming the function, or succeeds with correct results (a failure the
 *     backend may absorb: a build log it cannot free);
 *   - every object the backend created it destroys (kernels, modules, memory,
 *     command lists: counted over all windows until the contexts are
 *     destroyed, a failed create excepted), and host memory is left to
 *     LeakSanitizer in the sanitizer build;
 *   - afterwards the same context computes the right results again, on a
 *     new list and on its default list.
 * Scenarios: forward and backward (atomic GQA, deterministic GQA) on a
 * context whose modules are built (create, execute on a new list, destroy);
 * a context's creation and destruction; a fresh context building a forward
 * module; a fresh context loading it from the persistent module cache, and
 * one storing it there; and a backward module build that fails.
 *
 * Needs the CPU driver: on another driver (SDPA_ZE_DRIVER=system) the
 * extension is missing and the program reports a skip (exit 77).
 */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "small_problem.h"
#include "zex_cpu.h"

/* ------------------------------------------------------------------------- */
/* The driver's extension                                                    */
/* ------------------------------------------------------------------------- */

static zex_cpu_fault_inject_fn inject;
static zex_cpu_call_counts_fn call_counts;
static uint32_t functions;
static const char **function_names;

/* Per function: calls so far. */
typedef struct counts {
    uint64_t *calls;
} counts_t;

static int open_extension(void)
{
    if (zeDriverGetExtensionFunctionAddress(suite_env.driver, ZEX_CPU_FAULT_INJECT_NAME,
                                            (void **)&inject) != ZE_RESULT_SUCCESS ||
        zeDriverGetExtensionFunctionAddress(suite_env.driver, ZEX_CPU_CALL_COUNTS_NAME,
                                            (void **)&call_counts) != ZE_RESULT_SUCCESS ||
        !inject || !call_counts)
        return -1;
    if (call_counts(&functions, NULL, NULL) != ZE_RESULT_SUCCESS || functions == 0)
        return -1;
    function_names = calloc(functions, sizeof(*function_names));
    uint32_t n = functions;
    if (!function_names || call_counts(&n, function_names, NULL) != ZE_RESULT_SUCCESS)
        return -1;
    return 0;
}

static void counts_take(counts_t *c)
{
    c->calls = calloc(functions, sizeof(uint64_t));
    ck_assert_ptr_nonnull(c->calls);
    uint32_t n = functions;
    ck_assert_int_eq(call_counts(&n, NULL, c->calls), ZE_RESULT_SUCCESS);
}

static int function_index(const char *name)
{
    for (uint32_t i = 0; i < functions; i++)
        if (strcmp(function_names[i], name) == 0)
            return (int)i;
    ck_abort_msg("the driver has no %s", name);
    return -1;
}

/* ------------------------------------------------------------------------- */
/* Leak ledger                                                               */
/* ------------------------------------------------------------------------- */

/* Objects created and destroyed through the backend, by kind. */
enum { KERNELS, MODULES, MEMORY, LISTS, KINDS };
static const char *const kind_names[KINDS] = {"kernels", "modules", "allocations", "command lists"};
static const char *const creators[KINDS][3] = {
        {"zeKernelCreate"},
        {"zeModuleCreate"},
        {"zeMemAllocDevice", "zeMemAllocHost", "zeMemAllocShared"},
        {"zeCommandListCreate", "zeCommandListCreateImmediate"},
};
static const char *const destroyers[KINDS] = {"zeKernelDestroy", "zeModuleDestroy", "zeMemFree",
                                              "zeCommandListDestroy"};
static int64_t ledger[KINDS]; /* created - destroyed, over the windows */

static int kind_creates(int kind, const char *name)
{
    for (int i = 0; i < 3 && creators[kind][i]; i++)
        if (strcmp(creators[kind][i], name) == 0)
            return 1;
    return 0;
}

/* Adds a window's calls (after - before) to the ledger; a create that was
 * made to fail created nothing. (A destroy made to fail leaks in the driver,
 * not in the backend, which did call it: it counts as a destroy.) */
static void ledger_add(const counts_t *before, const counts_t *after, const char *failed_create)
{
    for (int kind = 0; kind < KINDS; kind++) {
        for (uint32_t i = 0; i < functions; i++) {
            int64_t n = (int64_t)(after->calls[i] - before->calls[i]);
            if (kind_creates(kind, function_names[i]))
                ledger[kind] += n;
            if (strcmp(function_names[i], destroyers[kind]) == 0)
                ledger[kind] -= n;
        }
        if (failed_create && kind_creates(kind, failed_create))
            ledger[kind]--;
    }
}

/* ------------------------------------------------------------------------- */
/* Problems and their expected results                                       */
/* ------------------------------------------------------------------------- */

typedef struct problem {
    const char *name;
    small_problem_t sp;
    test_tensor_t out[SMALL_OUTPUTS];
} problem_t;

/* f16 forward (causal), or f16 backward with GQA (atomic or deterministic):
 * scratch, fills, conversions and, deterministic, the dQ pass. */
static void problem_open(problem_t *pr, const char *name, int backward, int deterministic)
{
    pr->name = name;
    sdpa_problem_desc_t p;
    memset(&p, 0, sizeof(p));
    p.struct_size = sizeof(p);
    p.struct_version = SDPA_PROBLEM_DESC_VERSION;
    p.prop_kind = backward ? SDPA_BACKWARD : SDPA_FORWARD_INFERENCE;
    p.q = p.dst = small_dense(SDPA_DTYPE_F16, 1, 4, 19, 32);
    p.k = p.v = small_dense(SDPA_DTYPE_F16, 1, 2, 23, 32);
    p.scale_kind = SDPA_SCALE_HOST;
    p.mask_kind = backward ? SDPA_MASK_NONE : SDPA_MASK_CAUSAL_BOTTOM_RIGHT;
    if (backward) {
        p.diff_dst = p.diff_q = p.q;
        p.diff_k = p.diff_v = p.k;
        p.deterministic = (uint32_t)deterministic;
    }
    small_problem_open(&pr->sp, &p, 99 + (uint64_t)backward + 2 * (uint64_t)deterministic);
    small_outputs_alloc(&pr->sp, pr->out);
}

static void problem_close(problem_t *pr)
{
    small_outputs_free(&pr->sp, pr->out);
    small_problem_close(&pr->sp);
}

/* f16 results of f32 sums over at most 23 keys of values in [-1, 1]: a few
 * f16 units at magnitudes up to ~8. */
static int outputs_correct(const problem_t *pr, char *why, size_t why_size)
{
    return small_outputs_match_ref(&pr->sp, pr->out, 1e-2, 2.0, why, why_size);
}

/* ------------------------------------------------------------------------- */
/* The persistent module cache, on for a while                               */
/* ------------------------------------------------------------------------- */

/* SDPA_CACHE_DIR as the run environment set it (the build tree's). */
static char cache_base[4096];

/* Turns the cache on in a new directory under SDPA_CACHE_DIR: the contexts
 * created until disk_cache_off use it. */
static void disk_cache_on(char *dir, size_t size)
{
    const char *base = getenv("SDPA_CACHE_DIR");
    ck_assert_msg(base != NULL, "SDPA_CACHE_DIR is unset: run through make check");
    snprintf(cache_base, sizeof(cache_base), "%s", base);
    mkdir(cache_base, 0700);
    snprintf(dir, size, "%s/faults.XXXXXX", cache_base);
    ck_assert_ptr_nonnull(mkdtemp(dir));
    setenv("SDPA_CACHE", "1", 1);
    setenv("SDPA_CACHE_DIR", dir, 1);
}

static int disk_cache_entries(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += strstr(e->d_name, ".zebin") != NULL;
    closedir(d);
    return n;
}

/* Removes dir and its files, and turns the cache off again. */
static void disk_cache_off(const char *dir)
{
    DIR *d = opendir(dir);
    char path[8192];
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        unlink(path);
    }
    if (d)
        closedir(d);
    rmdir(dir);
    rmdir(cache_base); /* when empty */
    setenv("SDPA_CACHE_DIR", cache_base, 1);
    setenv("SDPA_CACHE", "0", 1);
}

/* ------------------------------------------------------------------------- */
/* Scenarios                                                                 */
/* ------------------------------------------------------------------------- */

typedef struct scenario scenario_t;
struct scenario {
    const char *name;
    problem_t *problem;      /* NULL: context only */
    sdpa_context_t *context; /* the long-lived context, NULL: a fresh one */
    int execute;
    /* Per run, outside the window: a new immediate list (a new list gets a
     * new scratch, so scratch allocation is among the calls). */
    ze_command_list_handle_t list;
};

/* Lists made for runs live until the end: a context keeps state per list
 * handle, and a destroyed list's address could come back. */
static ze_command_list_handle_t lists[4096];
static int lists_made;

static ze_command_list_handle_t run_list(void)
{
    ck_assert_int_lt(lists_made, (int)(sizeof(lists) / sizeof(lists[0])));
    return lists[lists_made++] = test_env_sync_list();
}

/* The window: what the backend does, and the first failure's status. */
static sdpa_status_t scenario_window(const scenario_t *s, char *message, size_t message_size)
{
    const sdpa_backend_iface_t *ze = suite_env.ze;
    sdpa_context_t *ctx = s->context;
    sdpa_status_t status = SDPA_SUCCESS;
    message[0] = '\0';
    if (!ctx) {
        const sdpa_context_desc_t desc = test_env_context_desc(&suite_env);
        status = ze->context_create(&desc, &ctx);
        if (status != SDPA_SUCCESS) {
            snprintf(message, message_size, "%s", ze->last_error());
            return status;
        }
    }
    if (s->problem) {
        sdpa_primitive_t *prim = NULL;
        status = ze->primitive_create(ctx, &s->problem->sp.p, &prim);
        if (status == SDPA_SUCCESS && s->execute) {
            sdpa_exec_args_t a;
            small_problem_args(&s->problem->sp, s->problem->out, &a);
            a.command_list = s->list;
            status = ze->primitive_execute(prim, &a);
        }
        if (status != SDPA_SUCCESS)
            snprintf(message, message_size, "%s", ze->last_error());
        ze->primitive_destroy(prim);
    }
    if (!s->context)
        ze->context_destroy(ctx);
    return status;
}

/* Runs s once with function's nth call failing with result (function NULL:
 * no fault), and checks status, message and results. Returns 1 if the
 * fault fired. */
static int scenario_run(scenario_t *s, const char *function, uint32_t nth, ze_result_t result,
                        counts_t *calls_out)
{
    if (s->problem)
        small_outputs_poison(&s->problem->sp, s->problem->out);
    s->list = s->execute ? run_list() : NULL;
    counts_t before, after;
    counts_take(&before);
    if (function)
        ck_assert_int_eq(inject(function, nth, result), ZE_RESULT_SUCCESS);
    char message[1024];
    sdpa_status_t status = scenario_window(s, message, sizeof(message));
    ck_assert_int_eq(inject(NULL, 0, ZE_RESULT_SUCCESS), ZE_RESULT_SUCCESS);
    counts_take(&after);

    int fired = 0;
    if (function) {
        int f = function_index(function);
        fired = after.calls[f] - before.calls[f] >= nth;
    }
    ledger_add(&before, &after, fired ? function : NULL);
    if (calls_out) {
        for (uint32_t i = 0; i < functions; i++)
            after.calls[i] -= before.calls[i];
        *calls_out = after;
    } else {
        free(after.calls);
    }
    free(before.calls);

    const char *what = function ? function : "no fault";
    if (status != SDPA_SUCCESS) {
        ck_assert_msg(fired, "%s: %s #%u: failed without the fault firing: %s", s->name, what, nth,
                      message);
        sdpa_status_t want = result == ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY
                                     ? SDPA_ERROR_OUT_OF_DEVICE_MEMORY
                                     : SDPA_ERROR_DEVICE;
        ck_assert_msg(status == want, "%s: %s #%u failing: status %s, expected %s (%s)", s->name,
                      what, nth, sdpa_status_name(status), sdpa_status_name(want), message);
        ck_assert_msg(strstr(message, function) != NULL,
                      "%s: %s #%u failing: the message does not name it: %s", s->name, what, nth,
                      message);
    } else if (s->problem && s->execute) {
        char why[256];
        ck_assert_msg(outputs_correct(s->problem, why, sizeof(why)),
                      "%s: %s #%u failing: reported success with wrong results: %s", s->name, what,
                      nth, why);
    }
    return fired;
}

typedef struct tally {
    int runs;
} tally_t;

/* Learns s's calls, then fails each of them in turn (only the functions
 * not in skip, whose calls another scenario already failed). Every call of
 * a function fails once with OUT_OF_DEVICE_MEMORY; the first also with
 * DEVICE_LOST. */
static void scenario_inject_all(scenario_t *s, const counts_t *skip, counts_t *seen, tally_t *t)
{
    counts_t calls;
    scenario_run(s, NULL, 0, ZE_RESULT_SUCCESS, &calls);
    int runs = 0, functions_hit = 0, calls_failed = 0;
    for (uint32_t f = 0; f < functions; f++) {
        if (calls.calls[f] == 0 || (skip && skip->calls[f]))
            continue;
        functions_hit++;
        calls_failed += (int)calls.calls[f];
        for (uint32_t nth = 1; nth <= calls.calls[f]; nth++) {
            const ze_result_t results[2] = {ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY,
                                            ZE_RESULT_ERROR_DEVICE_LOST};
            for (int r = 0; r < (nth == 1 ? 2 : 1); r++) {
                ck_assert_msg(scenario_run(s, function_names[f], nth, results[r], NULL),
                              "%s: %s #%u did not fire", s->name, function_names[f], nth);
                runs++;
            }
        }
        if (seen)
            seen->calls[f] += calls.calls[f];
    }
    /* And the context still computes. */
    scenario_run(s, NULL, 0, ZE_RESULT_SUCCESS, NULL);
    printf("faults: %-46s %3d calls to %2d functions, %3d runs with one failing\n", s->name,
           calls_failed, functions_hit, runs);
    t->runs += runs;
    free(calls.calls);
}

/* ------------------------------------------------------------------------- */
/* The test                                                                  */
/* ------------------------------------------------------------------------- */

static int extension_ok;

START_TEST(every_call_fails_once)
{
    problem_t fwd, bwd_atomic, bwd_det;
    problem_open(&fwd, "forward", 0, 0);
    problem_open(&bwd_atomic, "backward", 1, 0);
    problem_open(&bwd_det, "backward deterministic", 1, 1);
    tally_t tally = {0};

    /* A long-lived context whose modules are built (outside any window:
     * the first runs of each problem build them). */
    sdpa_context_t *ctx = NULL;
    const sdpa_context_desc_t desc = test_env_context_desc(&suite_env);
    counts_t before, after;
    counts_take(&before);
    ck_assert_int_eq(suite_env.ze->context_create(&desc, &ctx), SDPA_SUCCESS);
    scenario_t warm[3] = {{"warm forward", &fwd, ctx, 1, NULL},
                          {"warm backward", &bwd_atomic, ctx, 1, NULL},
                          {"warm backward deterministic", &bwd_det, ctx, 1, NULL}};
    counts_take(&after);
    ledger_add(&before, &after, NULL);
    free(before.calls);
    free(after.calls);
    for (int i = 0; i < 3; i++)
        scenario_run(&warm[i], NULL, 0, ZE_RESULT_SUCCESS, NULL);

    /* Functions whose every call has been failed, so that later scenarios
     * (which build modules, slowly) fail only the new ones. */
    counts_t seen;
    seen.calls = calloc(functions, sizeof(uint64_t));
    scenario_t steady[3] = {
            {"forward: create, execute, destroy", &fwd, ctx, 1, NULL},
            {"backward atomic: create, execute, destroy", &bwd_atomic, ctx, 1, NULL},
            {"backward deterministic: create, execute, destroy", &bwd_det, ctx, 1, NULL}};
    for (int i = 0; i < 3; i++)
        scenario_inject_all(&steady[i], NULL, &seen, &tally);

    scenario_t context_only = {"context: create, destroy", NULL, NULL, 0, NULL};
    scenario_inject_all(&context_only, &seen, &seen, &tally);
    scenario_t fresh = {"fresh context: build forward module, execute", &fwd, NULL, 1, NULL};
    scenario_inject_all(&fresh, &seen, &seen, &tally);

    /* The persistent module cache (doc/module-cache.md): every call of a
     * fresh context that loads its forward module from disk (the device's
     * identity, the native zeModuleCreate: absorbed, the module is built
     * instead), and each zeModuleGetNativeBinary call of one that builds
     * and stores it (absorbed: nothing stored). */
    char disk[4200];
    disk_cache_on(disk, sizeof(disk));
    scenario_t from_disk = {"fresh context: forward module from the disk cache", &fwd, NULL, 1,
                            NULL};
    scenario_run(&from_disk, NULL, 0, ZE_RESULT_SUCCESS, NULL); /* stores it */
    ck_assert_int_eq(disk_cache_entries(disk), 1);
    scenario_inject_all(&from_disk, NULL, &seen, &tally);
    disk_cache_off(disk);
    scenario_t to_disk = {"fresh context: forward module built, stored", &fwd, NULL, 1, NULL};
    for (uint32_t nth = 1; nth <= 2; nth++) {
        disk_cache_on(disk, sizeof(disk));
        ck_assert(scenario_run(&to_disk, "zeModuleGetNativeBinary", nth,
                               ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, NULL));
        ck_assert_int_eq(disk_cache_entries(disk), 0);
        tally.runs++;
        disk_cache_off(disk);
    }
    printf("faults: the persistent cache's calls absorbed: loads and stores never fail a "
           "creation\n");

    /* A backward module build that fails (building one takes seconds:
     * only its first call). */
    scenario_t bwd_build = {"fresh context: backward module build", &bwd_atomic, NULL, 0, NULL};
    ck_assert(scenario_run(&bwd_build, "zeModuleCreate", 1, ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY,
                           NULL));
    tally.runs++;

    /* The long-lived context still computes, on its default list too. */
    for (int i = 0; i < 3; i++) {
        scenario_t again = steady[i];
        again.execute = 1;
        scenario_run(&again, NULL, 0, ZE_RESULT_SUCCESS, NULL);
        problem_t *pr = steady[i].problem;
        counts_take(&before);
        sdpa_primitive_t *prim = NULL;
        ck_assert_int_eq(suite_env.ze->primitive_create(ctx, &pr->sp.p, &prim), SDPA_SUCCESS);
        sdpa_exec_args_t a;
        small_outputs_poison(&pr->sp, pr->out);
        small_problem_args(&pr->sp, pr->out, &a);
        ck_assert_int_eq(suite_env.ze->primitive_execute(prim, &a), SDPA_SUCCESS);
        char why[256];
        ck_assert_msg(outputs_correct(pr, why, sizeof(why)), "%s on the default list: %s", pr->name,
                      why);
        suite_env.ze->primitive_destroy(prim);
        counts_take(&after);
        ledger_add(&before, &after, NULL);
        free(before.calls);
        free(after.calls);
    }

    /* Everything created through the backend is destroyed with its context. */
    counts_take(&before);
    suite_env.ze->context_destroy(ctx);
    counts_take(&after);
    ledger_add(&before, &after, NULL);
    free(before.calls);
    free(after.calls);
    for (int kind = 0; kind < KINDS; kind++)
        ck_assert_msg(ledger[kind] == 0, "%lld %s created through the backend were not destroyed",
                      (long long)ledger[kind], kind_names[kind]);
    printf("faults: %d runs with one Level Zero call failing, every one a clean status or a "
           "correct result; nothing leaked\n",
           tally.runs);

    for (int i = 0; i < lists_made; i++)
        zeCommandListDestroy(lists[i]);
    free(seen.calls);
    problem_close(&fwd);
    problem_close(&bwd_atomic);
    problem_close(&bwd_det);
}
END_TEST

int main(void)
{
    if (test_env_open_suite() != 0)
        return EXIT_FAILURE;
    extension_ok = open_extension() == 0;
    if (!extension_ok) {
        printf("SKIP: the Level Zero driver has no %s (only the CPU driver has): no fault "
               "injection\n",
               ZEX_CPU_FAULT_INJECT_NAME);
        test_env_close(&suite_env);
        return 77;
    }
    const test_entry_t tests[] = {TEST_ONCE(every_call_fails_once)};
    Suite *s = suite_create("faults");
    test_add_case(s, "faults", 1800, tests, TEST_COUNT(tests));
    int status = test_env_run_suite(s);
    free(function_names);
    return status;
}
