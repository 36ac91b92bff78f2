/*
 * test_module_cache.c - the persistent module cache across processes, on
 * the device: each case starts cache_client processes (which check their
 * results against ref) with SDPA_CACHE* set and reads their counters,
 * their stderr and the cache directory.
 *   - a miss stores, the next process hits (forward and backward), with
 *     least-recently-used eviction under SDPA_CACHE_MAX_BYTES, SDPA_CACHE=0
 *     touching nothing, and SDPA_VERBOSE's lines checked field by field;
 *   - four processes building the same module at once leave one whole
 *     entry and no temporary file;
 *   - a corrupted, truncated or other-version entry, and one the driver
 *     refuses, are rebuilt and replaced, never loaded;
 *   - a read-only directory serves its entries and stores nothing, a
 *     directory that cannot be created means no cache; one note each.
 * Directories are made under the build tree and removed.
 */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cache_dirs.h"
#include "check_main.h"
#include "disk_cache.h"

#ifndef CACHE_CLIENT
#error "CACHE_CLIENT must name the cache_client program"
#endif

#define MAX_CLIENTS 4
#define MAX_ENV 4

typedef struct client {
    /* In */
    const char *dir;          /* SDPA_CACHE_DIR */
    const char *env[MAX_ENV]; /* more NAME=VALUE settings */
    const char *args[4];      /* primitives: "fwd", "bwd", ... */
    int as_nobody;            /* drop root privileges (read-only tests) */
    /* Out */
    int status;
    int has_counters;
    unsigned long long built, hits, misses;
    char *out, *err;
    pid_t pid;
    char out_path[4200], err_path[4200];
} client_t;

static char *read_text(const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return strdup("");
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    char *text = malloc((size_t)n + 1);
    size_t got = fread(text, 1, (size_t)n, f);
    text[got] = '\0';
    fclose(f);
    return text;
}

static void client_start(client_t *c, int index)
{
    snprintf(c->out_path, sizeof(c->out_path), "%s/client%d.%d.out", CACHE_TEST_ROOT, index,
             (int)getpid());
    snprintf(c->err_path, sizeof(c->err_path), "%s/client%d.%d.err", CACHE_TEST_ROOT, index,
             (int)getpid());
    fflush(NULL);
    c->pid = fork();
    ck_assert_int_ge(c->pid, 0);
    if (c->pid != 0)
        return;
    int out = open(c->out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(c->err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0 || err < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0)
        _exit(120);
    setenv("SDPA_CACHE", "1", 1);
    setenv("SDPA_CACHE_DIR", c->dir, 1);
    unsetenv("SDPA_CACHE_MAX_BYTES");
    unsetenv("SDPA_VERBOSE");
    unsetenv("CK_RUN_SUITE"); /* the test's selection is not the client's */
    unsetenv("CK_RUN_CASE");
    for (int i = 0; i < MAX_ENV && c->env[i]; i++)
        putenv((char *)c->env[i]);
    if (c->as_nobody && cache_drop_privileges() != 0)
        _exit(121);
    char *argv[6] = {(char *)CACHE_CLIENT};
    for (int i = 0; i < 4 && c->args[i]; i++)
        argv[i + 1] = (char *)c->args[i];
    execv(CACHE_CLIENT, argv);
    _exit(122);
}

static void client_finish(client_t *c)
{
    int status = 0;
    ck_assert_int_eq(waitpid(c->pid, &status, 0), c->pid);
    c->status = WIFEXITED(status) ? WEXITSTATUS(status) : 200 + WTERMSIG(status);
    c->out = read_text(c->out_path);
    c->err = read_text(c->err_path);
    unlink(c->out_path);
    unlink(c->err_path);
    const char *line = strstr(c->out, "counters ");
    c->has_counters = line && sscanf(line, "counters built=%llu hits=%llu misses=%llu", &c->built,
                                     &c->hits, &c->misses) == 3;
    ck_assert_msg(c->status == 0 && c->has_counters, "cache_client %s %s in %s exited %d:\n%s\n%s",
                  c->args[0], c->args[1] ? c->args[1] : "", c->dir, c->status, c->out, c->err);
    printf("client %s%s%s: built %llu, hits %llu, misses %llu\n", c->args[0], c->args[1] ? " " : "",
           c->args[1] ? c->args[1] : "", c->built, c->hits, c->misses);
}

static void client_free(client_t *c)
{
    free(c->out);
    free(c->err);
}

/* Runs the clients at once and waits for all. */
static void run_clients(client_t *c, int n)
{
    for (int i = 0; i < n; i++)
        client_start(&c[i], i);
    for (int i = 0; i < n; i++)
        client_finish(&c[i]);
}

static void run_client(client_t *c)
{
    run_clients(c, 1);
}

static void expect_counts(const client_t *c, unsigned long long built, unsigned long long hits,
                          unsigned long long misses)
{
    ck_assert_msg(c->built == built && c->hits == hits && c->misses == misses,
                  "%s: built %llu hits %llu misses %llu, expected %llu %llu %llu\n%s", c->args[0],
                  c->built, c->hits, c->misses, built, hits, misses, c->err);
}

/* A directory holding the forward and backward entries that
 * hit_and_miss_across_processes stored, for the cases after it. */
static char warm_dir[4096];

/* The forward entry of warm_dir: its path, and its name within a dir. */
static void warm_forward_entry(char *path, size_t size)
{
    ck_assert_msg(cache_dir_find_entry(warm_dir, "sdpa_fwd", path, size) == 0,
                  "no forward entry in %s (did hit_and_miss_across_processes pass?)", warm_dir);
}

/* A new directory (named after what) holding a copy of the warm forward
 * entry, whose path goes in entry. */
static void dir_with_warm_entry(char *dir, size_t dir_size, const char *what, char *entry,
                                size_t entry_size)
{
    char good[4300];
    warm_forward_entry(good, sizeof(good));
    cache_dir_make(dir, dir_size, what);
    const char *slash = strrchr(good, '/');
    snprintf(entry, entry_size, "%s/%s", dir, slash + 1);
    size_t size = 0;
    unsigned char *bytes = cache_file_read(good, &size);
    cache_file_write(entry, bytes, size);
    free(bytes);
}

/* --- SDPA_VERBOSE's lines ---------------------------------------------------------------- */

/* Splits line (after "sdpa_verbose,") into at most n fields: the last takes
 * the rest. Returns the count. */
static int split(char *line, char **fields, int n)
{
    int count = 0;
    char *p = line;
    while (count < n - 1) {
        char *comma = strchr(p, ',');
        if (!comma)
            break;
        *comma = '\0';
        fields[count++] = p;
        p = comma + 1;
    }
    fields[count++] = p;
    return count;
}

static int is_number(const char *text)
{
    char *end = NULL;
    double value = strtod(text, &end);
    return end != text && *end == '\0' && value >= 0;
}

/* What one stderr of client ["fwd", "bwd"] at SDPA_VERBOSE=level said. */
typedef struct trace {
    /* In: how the ze creation lines must start. */
    const char *fwd_modules, *bwd_modules;
    /* Out: lines seen. */
    int info, context, creates, execs, module_events, scratch;
    int fwd_hit, bwd_miss, bwd_build, bwd_store;
} trace_t;

static const char *const fwd_problem =
        "fwd_inf:b1:hq4:hkv2:sq37:sk50:d32:qkvo=f16.f16.f16.f16:mask=causal_br:scale=host";
static const char *const bwd_problem =
        "bwd:b1:hq4:hkv2:sq29:sk41:d32:qkvo=f16.f16.f16.f16:mask=none:scale=host";
/* The backward case's O and log-sum-exp come from a ref training forward. */
static const char *const bwd_forward_problem =
        "fwd_train:b1:hq4:hkv2:sq29:sk41:d32:qkvo=f16.f16.f16.f16:mask=none:scale=host";

static void check_problem_field(const char *problem, int ze)
{
    ck_assert_msg(strchr(problem, ' ') == NULL && strchr(problem, ',') == NULL,
                  "problem \"%s\" has a space or a comma", problem);
    ck_assert_msg(strcmp(problem, fwd_problem) == 0 || strcmp(problem, bwd_problem) == 0 ||
                          (!ze && strcmp(problem, bwd_forward_problem) == 0),
                  "problem \"%s\" is none of the client's problems (%s, %s)", problem, fwd_problem,
                  bwd_problem);
}

/* Fields per kind of line: only the last may hold commas. */
static int fields_of(const char *line)
{
    static const struct {
        const char *kind;
        int fields;
    } kinds[] = {{"info,", 3},    {"create,", 7}, {"exec,", 7},
                 {"context,", 4}, {"module,", 5}, {"scratch,", 5}};
    for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
        if (strncmp(line, kinds[i].kind, strlen(kinds[i].kind)) == 0)
            return kinds[i].fields;
    ck_abort_msg("unknown verbose line: sdpa_verbose,%s", line);
    return 0;
}

static void check_line(char *line, int level, trace_t *t)
{
    char *f[8];
    int want = fields_of(line);
    int n = split(line, f, want);
    ck_assert_msg(n == want, "a %s line with %d fields, not %d", f[0], n, want);
    ck_assert_msg(n >= 2, "a verbose line with one field: %s", line);
    if (strcmp(f[0], "info") == 0) {
        ck_assert_msg(strncmp(f[1], "sdpa-ze ", 8) == 0, "info: %s", f[1]);
        char level_field[32];
        snprintf(level_field, sizeof(level_field), "SDPA_VERBOSE=%d", level);
        ck_assert_str_eq(f[2], level_field);
        t->info++;
    } else if (strcmp(f[0], "create") == 0 || strcmp(f[0], "exec") == 0) {
        int create = f[0][0] == 'c';
        int ze = strcmp(f[1], "ze") == 0;
        ck_assert_msg(ze || strcmp(f[1], "ref") == 0, "backend \"%s\"", f[1]);
        ck_assert_msg(*f[2] != '\0', "empty device");
        check_problem_field(f[3], ze);
        int backward = f[3][0] == 'b';
        ck_assert_msg(is_number(f[5]), "time \"%s\"", f[5]);
        char config_prefix[16];
        snprintf(config_prefix, sizeof(config_prefix), "%s%s d", ze ? "" : "ref ",
                 backward ? "bwd" : "fwd");
        ck_assert_msg(strncmp(f[6], config_prefix, strlen(config_prefix)) == 0,
                      "config \"%s\" does not start with \"%s\"", f[6], config_prefix);
        /* Module lookups of the creation (the backward's later kernels
         * reuse the module its first one made: any reused count). */
        const char *modules = backward ? t->bwd_modules : t->fwd_modules;
        if (create && ze)
            ck_assert_msg(strncmp(f[4], modules, strlen(modules)) == 0,
                          "%s creation: \"%s\", expected \"%s...\"", backward ? "bwd" : "fwd", f[4],
                          modules);
        else if (create)
            ck_assert_str_eq(f[4], "built=0 cache_hit=0 cache_miss=0 reused=0");
        else
            ck_assert_str_eq(f[4], ze ? "sync_list" : "host");
        create ? t->creates++ : t->execs++;
    } else if (strcmp(f[0], "context") == 0) {
        ck_assert_str_eq(f[1], "ze");
        ck_assert_msg(strncmp(f[3], "module cache in ", 16) == 0, "context: %s", f[3]);
        t->context++;
    } else if (strcmp(f[0], "module") == 0) {
        ck_assert_msg(strncmp(f[2], "sdpa_fwd.", 9) == 0 || strncmp(f[2], "sdpa_bwd_", 9) == 0,
                      "variant \"%s\"", f[2]);
        ck_assert_msg(is_number(f[3]), "time \"%s\"", f[3]);
        int fwd = f[2][5] == 'f';
        if (strcmp(f[1], "cache_hit") == 0 && fwd)
            t->fwd_hit++;
        else if (strcmp(f[1], "cache_miss") == 0 && !fwd && strcmp(f[4], "absent") == 0)
            t->bwd_miss++;
        else if (strcmp(f[1], "build") == 0 && !fwd)
            t->bwd_build++;
        else if (strcmp(f[1], "cache_store") == 0 && !fwd && strstr(f[4], " bytes in "))
            t->bwd_store++;
        else
            ck_abort_msg("unexpected module line: %s,%s,%s,%s", f[1], f[2], f[3], f[4]);
        t->module_events++;
    } else if (strcmp(f[0], "scratch") == 0) {
        ck_assert_str_eq(f[1], "alloc");
        ck_assert_msg(is_number(f[2]) && atof(f[2]) > 0, "bytes \"%s\"", f[2]);
        ck_assert_msg(is_number(f[3]), "time \"%s\"", f[3]);
        t->scratch++;
    }
}

static trace_t check_trace(const char *err, int level, const char *fwd_modules,
                           const char *bwd_modules)
{
    trace_t t;
    memset(&t, 0, sizeof(t));
    t.fwd_modules = fwd_modules;
    t.bwd_modules = bwd_modules;
    char *copy = strdup(err);
    for (char *line = strtok(copy, "\n"); line; line = strtok(NULL, "\n")) {
        if (strncmp(line, "sdpa_verbose,", 13) != 0)
            continue;
        check_line(line + 13, level, &t);
    }
    free(copy);
    return t;
}

/* --- Cases ---------------------------------------------------------------------------------- */

START_TEST(hit_and_miss_across_processes)
{
    cache_dir_make(warm_dir, sizeof(warm_dir), "warm");

    /* Three old entries of someone else's modules, oldest first. */
    const size_t fake_bytes = 120000;
    char fakes[3][4300];
    unsigned char *junk = calloc(1, fake_bytes);
    time_t now = time(NULL);
    for (int i = 0; i < 3; i++) {
        snprintf(fakes[i], sizeof(fakes[i]), "%s/%064d.zebin", warm_dir, i);
        cache_file_write(fakes[i], junk, fake_bytes);
        struct timespec when[2] = {{now - 3000 + 1000 * i, 0}, {now - 3000 + 1000 * i, 0}};
        ck_assert_int_eq(utimensat(AT_FDCWD, fakes[i], when, 0), 0);
    }
    free(junk);

    /* A miss: built, stored, and the oldest entries evicted to fit the cap. */
    /* The cap holds the forward entry (~110 KB on the CPU device) and some,
     * not all, of the fakes. */
    const uint64_t cap = 400000;
    client_t a = {.dir = warm_dir, .env = {"SDPA_CACHE_MAX_BYTES=400000"}, .args = {"fwd"}};
    run_client(&a);
    expect_counts(&a, 1, 0, 1);
    char entry[4300];
    warm_forward_entry(entry, sizeof(entry));
    struct stat st;
    ck_assert_int_eq(stat(entry, &st), 0);
    uint64_t total = (uint64_t)st.st_size;
    for (int i = 2; i >= 0; i--) { /* the newest fakes that fit stay */
        int stays = total + fake_bytes <= cap;
        if (stays)
            total += fake_bytes;
        ck_assert_msg(stays == (access(fakes[i], F_OK) == 0),
                      "fake entry %d (of 3, oldest first) %s, entry %lld bytes, cap %llu", i,
                      stays ? "was evicted" : "was kept", (long long)st.st_size,
                      (unsigned long long)cap);
    }
    ck_assert_uint_le(cache_dir_bytes(warm_dir, ".zebin"), cap);
    printf("eviction: a %lld-byte forward entry under a %llu-byte cap: %d of 3 older entries "
           "kept\n",
           (long long)st.st_size, (unsigned long long)cap, cache_dir_count(warm_dir, ".zebin") - 1);
    for (int i = 0; i < 3; i++)
        unlink(fakes[i]);

    /* Another process: the forward module from the cache, the backward
     * built; SDPA_VERBOSE=2 says so, line by line. */
    client_t b = {.dir = warm_dir, .env = {"SDPA_VERBOSE=2"}, .args = {"fwd", "bwd"}};
    run_client(&b);
    expect_counts(&b, 2, 1, 2); /* the backward's main and pre/post modules */
    trace_t t = check_trace(b.err, 2, "built=0 cache_hit=1 cache_miss=0 reused=0",
                            "built=2 cache_hit=0 cache_miss=2 reused=");
    ck_assert_int_eq(t.info, 2); /* one per backend plugin */
    ck_assert_int_eq(t.context, 1);
    ck_assert_int_eq(t.creates, 5); /* fwd, bwd on ze and on ref; ref's training forward */
    ck_assert_int_ge(t.execs, 5);
    ck_assert_int_eq(t.fwd_hit, 1);
    ck_assert_int_eq(t.bwd_miss, 2);
    ck_assert_int_eq(t.bwd_build, 2);
    ck_assert_int_eq(t.bwd_store, 2);
    ck_assert_int_ge(t.scratch, 1);
    ck_assert_int_eq(cache_dir_count(warm_dir, ".zebin"), 3);

    /* A third: both from the cache; SDPA_VERBOSE=1 has no module lines. */
    client_t c = {.dir = warm_dir, .env = {"SDPA_VERBOSE=1"}, .args = {"fwd", "bwd"}};
    run_client(&c);
    expect_counts(&c, 0, 3, 0);
    t = check_trace(c.err, 1, "built=0 cache_hit=1 cache_miss=0 reused=0",
                    "built=0 cache_hit=2 cache_miss=0 reused=");
    ck_assert_int_eq(t.module_events + t.scratch + t.context, 0);
    ck_assert_int_eq(t.creates, 5);

    /* Without SDPA_VERBOSE, nothing at all on stderr. */
    client_t d = {.dir = warm_dir, .args = {"fwd"}};
    run_client(&d);
    expect_counts(&d, 0, 1, 0);
    ck_assert_msg(d.err[0] == '\0', "stderr without SDPA_VERBOSE: %s", d.err);

    /* SDPA_CACHE=0: built, no lookup, the directory untouched. */
    struct stat before;
    ck_assert_int_eq(stat(entry, &before), 0);
    client_t e = {.dir = warm_dir, .env = {"SDPA_CACHE=0"}, .args = {"fwd"}};
    run_client(&e);
    expect_counts(&e, 1, 0, 0);
    ck_assert_int_eq(stat(entry, &st), 0);
    ck_assert(st.st_mtim.tv_sec == before.st_mtim.tv_sec &&
              st.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
    ck_assert_int_eq(cache_dir_count(warm_dir, ".zebin"), 3);
    ck_assert_int_eq(cache_dir_count(warm_dir, ".tmp-"), 0);

    client_t *all[] = {&a, &b, &c, &d, &e};
    for (int i = 0; i < 5; i++)
        client_free(all[i]);
}
END_TEST

START_TEST(concurrent_writers_leave_one_whole_entry)
{
    char dir[4096];
    cache_dir_make(dir, sizeof(dir), "concurrent");
    client_t c[MAX_CLIENTS];
    memset(c, 0, sizeof(c));
    for (int i = 0; i < MAX_CLIENTS; i++) {
        c[i].dir = dir;
        c[i].args[0] = "fwd";
    }
    run_clients(c, MAX_CLIENTS);
    unsigned long long built = 0;
    for (int i = 0; i < MAX_CLIENTS; i++) {
        ck_assert_uint_eq(c[i].built + c[i].hits, 1); /* each made its one module */
        built += c[i].built;
        client_free(&c[i]);
    }
    printf("%d processes at once: %llu built the module, %llu loaded another's\n", MAX_CLIENTS,
           built, MAX_CLIENTS - built);
    ck_assert_int_eq(cache_dir_count(dir, ".zebin"), 1);
    ck_assert_int_eq(cache_dir_count(dir, ".tmp-"), 0);
    char entry[4300];
    ck_assert_int_eq(cache_dir_find_entry(dir, "sdpa_fwd", entry, sizeof(entry)), 0);

    client_t after = {.dir = dir, .args = {"fwd"}};
    run_client(&after);
    expect_counts(&after, 0, 1, 0);
    client_free(&after);
    cache_dir_remove(dir);
}
END_TEST

/* Writes the warm forward entry, damaged by damage, into a new directory,
 * runs a client there (SDPA_VERBOSE=2), and checks it rebuilt the module,
 * said why, and replaced the entry with a whole one. */
static void expect_rebuilt(const char *what, void (*damage)(const char *path), const char *why)
{
    char dir[4096], path[8704];
    dir_with_warm_entry(dir, sizeof(dir), "damaged", path, sizeof(path));
    damage(path);
    size_t damaged_size = 0;
    unsigned char *damaged = cache_file_read(path, &damaged_size);

    client_t c = {.dir = dir, .env = {"SDPA_VERBOSE=2"}, .args = {"fwd"}};
    run_client(&c);
    expect_counts(&c, 1, 0, 1);
    ck_assert_msg(strstr(c.err, why) != NULL, "%s: stderr does not say \"%s\":\n%s", what, why,
                  c.err);
    void *key = NULL, *payload = NULL;
    size_t key_size = 0, payload_size = 0;
    char reason[256] = "";
    ck_assert_msg(sdpa_disk_cache_read_entry(path, &key, &key_size, &payload, &payload_size, reason,
                                             sizeof(reason)) == 0,
                  "%s: the entry was not replaced by a whole one: %s", what, reason);
    size_t now_size = 0;
    unsigned char *now = cache_file_read(path, &now_size);
    ck_assert_msg(now_size != damaged_size || memcmp(now, damaged, now_size) != 0,
                  "%s: the damaged entry is still there", what);
    printf("%s: rebuilt and replaced (\"%s\")\n", what, why);
    free(now);
    free(key);
    free(payload);
    free(damaged);
    client_free(&c);
    cache_dir_remove(dir);
}

static void flip_payload_byte(const char *path)
{
    size_t size = 0;
    unsigned char *bytes = cache_file_read(path, &size);
    bytes[size - size / 3] ^= 0x08;
    cache_file_write(path, bytes, size);
    free(bytes);
}

static void truncate_half(const char *path)
{
    ck_assert_int_eq(truncate(path, 1000), 0);
}

static void next_version(const char *path)
{
    size_t size = 0;
    unsigned char *bytes = cache_file_read(path, &size);
    bytes[8] = SDPA_DISK_CACHE_VERSION + 1; /* the format version (disk_cache.h) */
    cache_file_write(path, bytes, size);
    free(bytes);
}

/* A whole, checksummed entry whose payload - the driver's native binary -
 * is broken: the store passes it, the driver refuses it. */
static void break_native_binary(const char *path)
{
    void *key = NULL, *payload = NULL;
    size_t key_size = 0, payload_size = 0;
    ck_assert_int_eq(
            sdpa_disk_cache_read_entry(path, &key, &key_size, &payload, &payload_size, NULL, 0), 0);
    ((unsigned char *)payload)[payload_size / 2] ^= 0x08;
    ck_assert_int_eq(sdpa_disk_cache_write_entry(path, key, key_size, payload, payload_size), 0);
    free(key);
    free(payload);
}

START_TEST(damaged_entries_are_rebuilt)
{
    expect_rebuilt("a flipped bit", flip_payload_byte, "checksum mismatch");
    expect_rebuilt("truncated", truncate_half, "truncated");
    expect_rebuilt("another format version", next_version, "format version");
    expect_rebuilt("a native binary the driver refuses", break_native_binary,
                   "the driver refused the native binary");
}
END_TEST

START_TEST(unwritable_directories_are_not_errors)
{
    char dir[4096], path[8704];

    /* Read-only with the entry: a hit, nothing stored, one note. */
    dir_with_warm_entry(dir, sizeof(dir), "readonly", path, sizeof(path));
    cache_dir_share_read_only(dir);
    client_t a = {.dir = dir, .args = {"fwd"}, .as_nobody = 1};
    run_client(&a);
    expect_counts(&a, 0, 1, 0);
    ck_assert_int_eq(cache_text_count(a.err, "sdpa-ze: note: module cache:"), 1);
    ck_assert_int_eq(cache_text_count(a.err, "is not writable"), 1);
    client_free(&a);
    cache_dir_remove(dir);

    /* Read-only and empty: built, nothing stored, one note. */
    cache_dir_make(dir, sizeof(dir), "readonly");
    cache_dir_share_read_only(dir);
    client_t b = {.dir = dir, .args = {"fwd"}, .as_nobody = 1};
    run_client(&b);
    expect_counts(&b, 1, 0, 1);
    ck_assert_int_eq(cache_text_count(b.err, "sdpa-ze: note: module cache:"), 1);
    ck_assert_int_eq(cache_dir_count(dir, ".zebin") + cache_dir_count(dir, ".tmp-"), 0);
    printf("read-only directory: %s", b.err);
    client_free(&b);
    cache_dir_remove(dir);

    /* A directory that cannot be created: no cache, one note. */
    cache_dir_make(dir, sizeof(dir), "uncreatable");
    snprintf(path, sizeof(path), "%s/a-file", dir);
    cache_file_write(path, (const unsigned char *)"x", 1);
    snprintf(path, sizeof(path), "%s/a-file/cache", dir);
    client_t c = {.dir = path, .args = {"fwd"}};
    run_client(&c);
    expect_counts(&c, 1, 0, 0);
    ck_assert_int_eq(cache_text_count(c.err, "sdpa-ze: note: module cache: cannot create"), 1);
    ck_assert_int_eq(cache_text_count(c.err, "sdpa-ze: note"), 1);
    printf("uncreatable directory: %s", c.err);
    client_free(&c);
    cache_dir_remove(dir);
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_ONCE(hit_and_miss_across_processes),
            TEST_ONCE(concurrent_writers_leave_one_whole_entry),
            TEST_ONCE(damaged_entries_are_rebuilt),
            TEST_ONCE(unwritable_directories_are_not_errors),
    };
    /* In this process: the tests share warm_dir, removed here. */
    setenv("CK_FORK", "no", 1);
    const test_suite_t suite = {.name = "module_cache", .timeout = 1200};
    int failed = test_run_table(&suite, tests, TEST_COUNT(tests));
    if (warm_dir[0])
        cache_dir_remove(warm_dir);
    return failed;
}
