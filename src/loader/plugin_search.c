/* plugin_search.c - from a backend name to a dlopen()ed library. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "error.h"
#include "loader.h"

#ifndef SDPA_DEFAULT_PLUGIN_DIR
#define SDPA_DEFAULT_PLUGIN_DIR ""
#endif

/* Longest short name accepted; libsdpa_<name>.so must fit a path. */
#define SDPA_BACKEND_NAME_MAX 64

/* Every place tried and why it failed, for the one message the caller gets. */
typedef struct attempt_log {
    char text[3072];
    size_t length;
} attempt_log_t;

static void log_attempt(attempt_log_t *log, const char *what)
{
    int n = snprintf(log->text + log->length, sizeof(log->text) - log->length, "%s%s",
                     log->length > 0 ? "; " : "", what);
    if (n > 0)
        log->length += (size_t)n < sizeof(log->text) - log->length
                               ? (size_t)n
                               : sizeof(log->text) - log->length - 1;
}

static int is_valid_short_name(const char *name)
{
    size_t length = strlen(name);
    if (length == 0 || length > SDPA_BACKEND_NAME_MAX)
        return 0;
    for (const char *c = name; *c; c++) {
        int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
                 *c == '_' || *c == '-';
        if (!ok)
            return 0;
    }
    return 1;
}

/* dlopens path; on failure appends dlerror() (which names the path) to log. */
static void *try_dlopen(const char *path, attempt_log_t *log)
{
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *why = dlerror();
        log_attempt(log, why ? why : path);
    }
    return library;
}

/* dir/file, or NULL if dir is unset or empty. */
static void *try_directory(const char *dir, const char *file, attempt_log_t *log)
{
    if (dir == NULL || dir[0] == '\0')
        return NULL;
    char path[4096];
    int n = snprintf(path, sizeof(path), "%s%s%s", dir, dir[strlen(dir) - 1] == '/' ? "" : "/",
                     file);
    if (n < 0 || (size_t)n >= sizeof(path)) {
        log_attempt(log, "a plugin directory path is too long");
        return NULL;
    }
    return try_dlopen(path, log);
}

sdpa_status_t sdpa_loader_dlopen(const char *name, void **library)
{
    attempt_log_t log = {.length = 0};
    log.text[0] = '\0';
    *library = NULL;

    if (strchr(name, '/') != NULL) {
        *library = try_dlopen(name, &log);
        if (*library == NULL)
            return sdpa_fail(SDPA_ERROR_BACKEND_NOT_FOUND, "cannot load backend \"%s\": %s", name,
                             log.text);
        return SDPA_SUCCESS;
    }
    if (!is_valid_short_name(name))
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT,
                         "backend name \"%s\": a short name is 1..%d characters of "
                         "[A-Za-z0-9_-] (or give a path containing '/')",
                         name, SDPA_BACKEND_NAME_MAX);

    char file[SDPA_BACKEND_NAME_MAX + 16];
    snprintf(file, sizeof(file), "libsdpa_%s.so", name);
    *library = try_directory(getenv("SDPA_PLUGIN_DIR"), file, &log);
    if (*library == NULL)
        *library = try_directory(SDPA_DEFAULT_PLUGIN_DIR, file, &log);
    if (*library == NULL)
        *library = try_dlopen(file, &log); /* the dynamic linker's search path */
    if (*library == NULL)
        return sdpa_fail(SDPA_ERROR_BACKEND_NOT_FOUND,
                         "backend \"%s\" not found: no loadable %s in $SDPA_PLUGIN_DIR, %s or the "
                         "dynamic linker's path; tried: %s",
                         name, file,
                         SDPA_DEFAULT_PLUGIN_DIR[0] ? SDPA_DEFAULT_PLUGIN_DIR : "(no default dir)",
                         log.text);
    return SDPA_SUCCESS;
}
