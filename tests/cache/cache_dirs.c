/* cache_dirs.c - directories for the cache tests (cache_dirs.h). */
#define _GNU_SOURCE /* setgroups */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/capability.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cache_dirs.h"
#include "disk_cache.h"

#ifndef CACHE_TEST_ROOT
#error "CACHE_TEST_ROOT must name a directory in the build tree"
#endif

void cache_dir_make(char *out, size_t size, const char *what)
{
    ck_assert_msg(mkdir(CACHE_TEST_ROOT, 0755) == 0 || errno == EEXIST, "mkdir %s: %s",
                  CACHE_TEST_ROOT, strerror(errno));
    chmod(CACHE_TEST_ROOT, 0755);
    int n = snprintf(out, size, "%s/%s.XXXXXX", CACHE_TEST_ROOT, what);
    ck_assert(n > 0 && (size_t)n < size);
    ck_assert_msg(mkdtemp(out) != NULL, "mkdtemp %s: %s", out, strerror(errno));
    chmod(out, 0755);
}

void cache_dir_remove(const char *dir)
{
    chmod(dir, 0700);
    DIR *d = opendir(dir);
    if (!d)
        return;
    char path[8192];
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
    rmdir(CACHE_TEST_ROOT); /* when it is empty */
}

static uint64_t scan(const char *dir, const char *pattern, int want_bytes)
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "opendir %s: %s", dir, strerror(errno));
    uint64_t count = 0, bytes = 0;
    char path[8192];
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strstr(e->d_name, pattern) == NULL)
            continue;
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        if (stat(path, &st) == 0) {
            count++;
            bytes += (uint64_t)st.st_size;
        }
    }
    closedir(d);
    return want_bytes ? bytes : count;
}

int cache_dir_count(const char *dir, const char *pattern)
{
    return (int)scan(dir, pattern, 0);
}

uint64_t cache_dir_bytes(const char *dir, const char *pattern)
{
    return scan(dir, pattern, 1);
}

int cache_dir_find_entry(const char *dir, const char *text, char *out, size_t size)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int found = -1;
    for (struct dirent *e; found < 0 && (e = readdir(d)) != NULL;) {
        if (strstr(e->d_name, ".zebin") == NULL)
            continue;
        snprintf(out, size, "%s/%s", dir, e->d_name);
        void *key = NULL, *payload = NULL;
        size_t key_size = 0, payload_size = 0;
        if (sdpa_disk_cache_read_entry(out, &key, &key_size, &payload, &payload_size, NULL, 0) != 0)
            continue;
        if (memmem(key, key_size, text, strlen(text)) != NULL)
            found = 0;
        free(key);
        free(payload);
    }
    closedir(d);
    return found;
}

unsigned char *cache_file_read(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot read %s: %s", path, strerror(errno));
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    rewind(f);
    ck_assert_int_ge(n, 0);
    unsigned char *bytes = malloc((size_t)n + 1);
    ck_assert_ptr_nonnull(bytes);
    ck_assert_uint_eq(fread(bytes, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    bytes[n] = '\0';
    *size = (size_t)n;
    return bytes;
}

void cache_file_write(const char *path, const void *bytes, size_t size)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "cannot write %s: %s", path, strerror(errno));
    ck_assert_uint_eq(fwrite(bytes, 1, size, f), size);
    ck_assert_int_eq(fclose(f), 0);
}

int cache_text_count(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; (p = strstr(p, what)) != NULL; p += strlen(what))
        n++;
    return n;
}

void cache_dir_share_read_only(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_ptr_nonnull(d);
    char path[8192];
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        chmod(path, 0444);
    }
    closedir(d);
    ck_assert_int_eq(chmod(dir, 0555), 0);
}

/* Drops, for this process and what it executes, the capabilities that let
 * root ignore permission bits (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH,
 * CAP_FOWNER): from the bounding set, so that execve cannot give them back,
 * and from the effective, permitted and inheritable sets. Returns 0 or -1. */
static int drop_permission_overrides(void)
{
    static const int caps[] = {CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, CAP_FOWNER};
    struct __user_cap_header_struct header = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
    struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
    if (syscall(SYS_capget, &header, data) != 0)
        return -1;
    for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++) {
        if (prctl(PR_CAPBSET_DROP, caps[i], 0, 0, 0) != 0)
            return -1;
        const unsigned int bit = 1u << (caps[i] % 32), word = (unsigned int)caps[i] / 32;
        data[word].effective &= ~bit;
        data[word].permitted &= ~bit;
        data[word].inheritable &= ~bit;
    }
    return syscall(SYS_capset, &header, data) == 0 ? 0 : -1;
}

int cache_drop_privileges(void)
{
    if (geteuid() != 0)
        return 0;
    /* Stay root (the build tree may be reachable by root only, e.g. under a
     * 0700 temporary directory) but without the power to override
     * permissions; where capabilities cannot be changed, become nobody. */
    if (drop_permission_overrides() == 0)
        return 0;
    if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0)
        return -1;
    return 0;
}
