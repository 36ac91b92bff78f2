/* test_loader.c - the front loader libsdpa: choosing, finding, negotiating
 * and refusing backends. */
#include <check.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#include "check_main.h"
#include "checked_iface.h"
#include "sdpa.h"

#ifndef FAKE_PLUGIN_DIR
#error "FAKE_PLUGIN_DIR must name the directory of the fake plugin modules"
#endif

static char fake_path_buffer[4096];

/* Absolute path of fake module libsdpa_fake_<mode>.so. */
static const char *fake_path(const char *mode)
{
    snprintf(fake_path_buffer, sizeof(fake_path_buffer), "%s/libsdpa_fake_%s.so", FAKE_PLUGIN_DIR,
             mode);
    return fake_path_buffer;
}

/* Opens name, expects failure with status and a message containing each
 * of the NULL-terminated needles. */
static void expect_refusal(const char *name, sdpa_status_t status, const char *const needles[])
{
    sdpa_backend_t *backend = (sdpa_backend_t *)&backend; /* must be reset to NULL */
    sdpa_status_t got = sdpa_backend_open(name, &backend);
    const char *message = sdpa_loader_last_error();
    ck_assert_msg(got == status, "open(%s): got %s, expected %s (%s)", name ? name : "NULL",
                  sdpa_status_name(got), sdpa_status_name(status), message);
    ck_assert_ptr_null(backend);
    for (int n = 0; needles[n] != NULL; n++)
        ck_assert_msg(strstr(message, needles[n]) != NULL, "message lacks \"%s\": %s", needles[n],
                      message);
}

/* Opens name, expects success and a table named table_name. */
static void expect_backend(const char *name, const char *table_name)
{
    sdpa_backend_t *backend = NULL;
    sdpa_status_t got = sdpa_backend_open(name, &backend);
    ck_assert_msg(got == SDPA_SUCCESS, "open(%s): %s: %s", name ? name : "NULL",
                  sdpa_status_name(got), sdpa_loader_last_error());
    ck_assert_msg(test_last_error_matches(got, sdpa_loader_last_error()),
                  "open(%s) succeeded, but the loader's message is \"%s\"", name ? name : "NULL",
                  sdpa_loader_last_error());
    const sdpa_backend_iface_t *iface = sdpa_backend_get_iface(backend);
    ck_assert_ptr_nonnull(iface);
    ck_assert_str_eq(iface->name, table_name);
    ck_assert_uint_eq(SDPA_VERSION_MAJOR(iface->abi_version), 1);
    ck_assert_ptr_nonnull(sdpa_backend_path(backend));
    ck_assert_msg(sdpa_backend_path(backend)[0] == '/', "path %s is not absolute",
                  sdpa_backend_path(backend));
    sdpa_backend_close(backend);
}

START_TEST(test_ref_by_name)
{
    sdpa_backend_t *backend = NULL;
    ck_assert_int_eq(sdpa_backend_open("ref", &backend), SDPA_SUCCESS);
    const sdpa_backend_iface_t *iface = sdpa_backend_get_iface(backend);
    ck_assert_str_eq(iface->name, "ref");
    ck_assert_uint_eq(iface->abi_version, SDPA_ABI_VERSION);
    ck_assert_uint_ge(iface->struct_size, sizeof(sdpa_backend_iface_t));
    const char *path = sdpa_backend_path(backend);
    ck_assert_msg(strstr(path, "libsdpa_ref.so") != NULL, "path %s", path);
    /* Found in $SDPA_PLUGIN_DIR, which the test environment points at the build. */
    const char *dir = getenv("SDPA_PLUGIN_DIR");
    if (dir != NULL && dir[0] != '\0')
        ck_assert_msg(strncmp(path, dir, strlen(dir)) == 0, "%s not under %s", path, dir);
    sdpa_backend_close(backend);
}
END_TEST

START_TEST(test_env_selects_ref)
{
    setenv("SDPA_BACKEND", "ref", 1);
    expect_backend(NULL, "ref");
    /* An explicit name wins over the variable. */
    setenv("SDPA_BACKEND", "no-such-backend", 1);
    expect_backend("ref", "ref");
    unsetenv("SDPA_BACKEND");
}
END_TEST

START_TEST(test_path_to_plugin)
{
    expect_backend(fake_path("good"), "fake");
    setenv("SDPA_BACKEND", fake_path("good"), 1);
    expect_backend(NULL, "fake");
    unsetenv("SDPA_BACKEND");
}
END_TEST

START_TEST(test_short_name_in_plugin_dir)
{
    const char *saved = getenv("SDPA_PLUGIN_DIR");
    char *copy = saved ? strdup(saved) : NULL;
    setenv("SDPA_PLUGIN_DIR", FAKE_PLUGIN_DIR, 1);
    expect_backend("fake_good", "fake");
    if (copy) {
        setenv("SDPA_PLUGIN_DIR", copy, 1);
        free(copy);
    } else {
        unsetenv("SDPA_PLUGIN_DIR");
    }
}
END_TEST

/* Last in the search order: the dynamic linker's path. glibc reads
 * LD_LIBRARY_PATH at start-up, so a child process checks it: with
 * SDPA_PLUGIN_DIR empty, "fake_good" is found only through LD_LIBRARY_PATH,
 * and its reported path is the full one. */
static int linker_path_child(void)
{
    sdpa_backend_t *backend = NULL;
    if (sdpa_backend_open("fake_good", &backend) != SDPA_SUCCESS) {
        fprintf(stderr, "child: %s\n", sdpa_loader_last_error());
        return 1;
    }
    const char *path = sdpa_backend_path(backend);
    int ok = strcmp(sdpa_backend_get_iface(backend)->name, "fake") == 0 &&
             strncmp(path, FAKE_PLUGIN_DIR, strlen(FAKE_PLUGIN_DIR)) == 0;
    if (!ok)
        fprintf(stderr, "child: loaded %s\n", path);
    sdpa_backend_close(backend);
    return ok ? 0 : 1;
}

START_TEST(test_linker_path)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
    ck_assert_int_gt(n, 0);
    self[n] = '\0';
    const char *old = getenv("LD_LIBRARY_PATH");
    char *saved_path = old ? strdup(old) : NULL;
    char *saved_dir = getenv("SDPA_PLUGIN_DIR") ? strdup(getenv("SDPA_PLUGIN_DIR")) : NULL;
    char library_path[8192];
    snprintf(library_path, sizeof(library_path), "%s%s%s", FAKE_PLUGIN_DIR, old ? ":" : "",
             old ? old : "");
    setenv("LD_LIBRARY_PATH", library_path, 1);
    setenv("SDPA_PLUGIN_DIR", "", 1);
    char *argv[] = {self, "--linker-path-child", NULL};
    pid_t child;
    ck_assert_int_eq(posix_spawn(&child, self, NULL, NULL, argv, environ), 0);
    int status = 0;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    /* Restore the environment (tests may share a process under CK_FORK=no). */
    if (saved_path)
        setenv("LD_LIBRARY_PATH", saved_path, 1);
    else
        unsetenv("LD_LIBRARY_PATH");
    if (saved_dir)
        setenv("SDPA_PLUGIN_DIR", saved_dir, 1);
    else
        unsetenv("SDPA_PLUGIN_DIR");
    free(saved_path);
    free(saved_dir);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
}
END_TEST

/* Unset (or empty) SDPA_BACKEND means "ze". Until plugin/ze is built the
 * open fails and names libsdpa_ze.so; once it exists it must load. */
START_TEST(test_default_is_ze)
{
    const char *values[] = {NULL, ""};
    for (int t = 0; t < 2; t++) {
        if (values[t] == NULL)
            unsetenv("SDPA_BACKEND");
        else
            setenv("SDPA_BACKEND", values[t], 1);
        const char *dir = getenv("SDPA_PLUGIN_DIR");
        char built[4096] = "";
        if (dir != NULL)
            snprintf(built, sizeof(built), "%s/libsdpa_ze.so", dir);
        int ze_built = built[0] != '\0' && access(built, F_OK) == 0;

        sdpa_backend_t *backend = NULL;
        sdpa_status_t got = sdpa_backend_open(NULL, &backend);
        if (ze_built || got == SDPA_SUCCESS) {
            ck_assert_msg(got == SDPA_SUCCESS, "%s exists but: %s", built,
                          sdpa_loader_last_error());
            ck_assert_str_eq(sdpa_backend_get_iface(backend)->name, "ze");
            sdpa_backend_close(backend);
        } else {
            const char *needles[] = {"libsdpa_ze.so", NULL};
            expect_refusal(NULL, SDPA_ERROR_BACKEND_NOT_FOUND, needles);
        }
    }
    unsetenv("SDPA_BACKEND");
}
END_TEST

START_TEST(test_missing_plugin)
{
    const char *needles[] = {"no-such-backend", "libsdpa_no-such-backend.so", NULL};
    expect_refusal("no-such-backend", SDPA_ERROR_BACKEND_NOT_FOUND, needles);
    /* The message lists $SDPA_PLUGIN_DIR's candidate. */
    const char *dir = getenv("SDPA_PLUGIN_DIR");
    if (dir != NULL && dir[0] != '\0') {
        const char *with_dir[] = {dir, NULL};
        expect_refusal("no-such-backend", SDPA_ERROR_BACKEND_NOT_FOUND, with_dir);
    }
    const char *path_needles[] = {"/nonexistent/dir/libsdpa_x.so", NULL};
    expect_refusal("/nonexistent/dir/libsdpa_x.so", SDPA_ERROR_BACKEND_NOT_FOUND, path_needles);
}
END_TEST

/* libsdpa searches the plugin directory this tree is configured to install
 * to: make passes $(plugindir) as it stands now (SDPA_TEST_PLUGINDIR), so a
 * libsdpa built for an earlier prefix and not rebuilt fails here. */
START_TEST(test_default_dir_is_configured)
{
    const char *configured = getenv("SDPA_TEST_PLUGINDIR");
    ck_assert_msg(configured != NULL && configured[0] == '/',
                  "SDPA_TEST_PLUGINDIR must be the configured plugin directory, got \"%s\"",
                  configured ? configured : "(unset)");
    char needle[4200];
    snprintf(needle, sizeof(needle), "$SDPA_PLUGIN_DIR, %s or the dynamic linker's path",
             configured);
    const char *needles[] = {needle, NULL};
    expect_refusal("no-such-backend", SDPA_ERROR_BACKEND_NOT_FOUND, needles);
}
END_TEST

START_TEST(test_bad_names)
{
    const char *needles[] = {"backend name", NULL};
    expect_refusal("re.f", SDPA_ERROR_INVALID_ARGUMENT, needles);
    expect_refusal("", SDPA_ERROR_INVALID_ARGUMENT, needles);
    expect_refusal("a b", SDPA_ERROR_INVALID_ARGUMENT, needles);
    ck_assert_int_eq(sdpa_backend_open("ref", NULL), SDPA_ERROR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(sdpa_loader_last_error(), "out"));
    expect_backend("ref", "ref"); /* a success after them: the message is "" */
}
END_TEST

/* The fake plugins the loader refuses (abi/fake_backend.c), with the
 * status and the words of each refusal. */
static const struct refused_plugin {
    const char *mode; /* libsdpa_fake_<mode>.so */
    sdpa_status_t status;
    const char *const needles[4]; /* NULL-terminated */
} refused_plugins[] = {
        {"no_entry",
         SDPA_ERROR_SYMBOL_NOT_FOUND,
         {"sdpa_backend_negotiate", "libsdpa_fake_no_entry.so", NULL}},
        {"major2", SDPA_ERROR_ABI_VERSION, {"2.0", "this loader's ABI 1.2", "newer", NULL}},
        /* A backend that claims success with another major is refused too. */
        {"lies_major2", SDPA_ERROR_ABI_VERSION, {"2.0", "this loader's ABI 1.2", "newer", NULL}},
        {"major0", SDPA_ERROR_ABI_VERSION, {"0.9", "this loader's ABI 1.2", "older", NULL}},
        {"truncated", SDPA_ERROR_ABI_VERSION, {"struct_size = 16", NULL}},
        {"null_member", SDPA_ERROR_ABI_VERSION, {"context_create", NULL}},
        /* A 1.1 table must carry the 1.1 members. */
        {"v1_1_no_merge", SDPA_ERROR_ABI_VERSION, {"merge_create", "ABI 1.1 requires it", NULL}},
        /* A 1.2 table must carry primitive_supports. */
        {"v1_2_no_supports",
         SDPA_ERROR_ABI_VERSION,
         {"primitive_supports", "ABI 1.2 requires it", NULL}},
        {"table_mismatch", SDPA_ERROR_ABI_VERSION, {"1.3", "1.0", NULL}},
};

START_TEST(test_refused_plugin)
{
    const struct refused_plugin *r = &refused_plugins[_i];
    expect_refusal(fake_path(r->mode), r->status, r->needles);
}
END_TEST

/* A 1.0 table need not carry the 1.1 members, nor a 1.1 table the 1.2 one. */
START_TEST(test_older_minor_tables)
{
    expect_backend(fake_path("good"), "fake"); /* 1.0, shorter table */
    expect_backend(fake_path("v1_1"), "fake"); /* 1.1, shorter table */
}
END_TEST

START_TEST(test_newer_minor_accepted)
{
    sdpa_backend_t *backend = NULL;
    ck_assert_int_eq(sdpa_backend_open(fake_path("newer_minor"), &backend), SDPA_SUCCESS);
    const sdpa_backend_iface_t *iface = sdpa_backend_get_iface(backend);
    ck_assert_uint_eq(iface->abi_version, SDPA_MAKE_VERSION(1, 7));
    ck_assert_uint_gt(iface->struct_size, sizeof(sdpa_backend_iface_t));
    ck_assert_ptr_nonnull(iface->merge_create);
    sdpa_backend_close(backend);
}
END_TEST

START_TEST(test_names_and_nulls)
{
    ck_assert_str_eq(sdpa_status_name(SDPA_SUCCESS), "SDPA_SUCCESS");
    ck_assert_str_eq(sdpa_status_name(SDPA_ERROR_ABI_VERSION), "SDPA_ERROR_ABI_VERSION");
    ck_assert_str_eq(sdpa_status_name(SDPA_ERROR_INSUFFICIENT_SCRATCH),
                     "SDPA_ERROR_INSUFFICIENT_SCRATCH");
    ck_assert_ptr_nonnull(sdpa_status_name((sdpa_status_t)999));
    ck_assert_ptr_null(sdpa_backend_get_iface(NULL));
    ck_assert_ptr_null(sdpa_backend_path(NULL));
    sdpa_backend_close(NULL);
}
END_TEST

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--linker-path-child") == 0)
        return linker_path_child();
    const test_entry_t tests[] = {
            TEST_ONCE(test_ref_by_name),
            TEST_ONCE(test_env_selects_ref),
            TEST_ONCE(test_path_to_plugin),
            TEST_ONCE(test_short_name_in_plugin_dir),
            TEST_ONCE(test_linker_path),
            TEST_ONCE(test_default_is_ze),
            TEST_ONCE(test_missing_plugin),
            TEST_ONCE(test_default_dir_is_configured),
            TEST_ONCE(test_bad_names),
            TEST_LOOP(test_refused_plugin, (int)TEST_COUNT(refused_plugins)),
            TEST_ONCE(test_older_minor_tables),
            TEST_ONCE(test_newer_minor_accepted),
            TEST_ONCE(test_names_and_nulls),
    };
    const test_suite_t suite = {.name = "loader"};
    return test_run_table(&suite, tests, TEST_COUNT(tests));
}
