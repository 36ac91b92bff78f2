/*
 * test_disk_cache.c - the persistent module cache's store without a device
 * (plugin/ze/cache/disk_cache.h): the settings the environment gives, entries
 * stored and found, every damaged entry rejected (bad magic, another
 * format version, truncated, padded, a flipped bit, another key under the
 * same name), least-recently-used eviction under the byte cap, debris of
 * dead writers removed, a directory that cannot be created and one that
 * cannot be written (one note each per process, never a failure), SHA-256
 * against FIPS 180-4's examples.
 *
 * Directories are made under the build tree (mkdtemp) and removed.
 */
#define _GNU_SOURCE /* setgroups */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
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
#include "sha256.h"

/* --- SHA-256 ----------------------------------------------------------------------- */

static void expect_digest(const char *message, size_t size, const char *hex)
{
    unsigned char digest[SDPA_SHA256_BYTES];
    sdpa_sha256(message, size, digest);
    char got[2 * SDPA_SHA256_BYTES + 1];
    for (int i = 0; i < SDPA_SHA256_BYTES; i++)
        snprintf(got + 2 * i, 3, "%02x", digest[i]);
    ck_assert_str_eq(got, hex);

    /* The same bytes fed in pieces of every size from 1 to 70. */
    for (size_t piece = 1; piece <= 70; piece++) {
        sdpa_sha256_t h;
        sdpa_sha256_init(&h);
        for (size_t at = 0; at < size; at += piece)
            sdpa_sha256_update(&h, message + at, size - at < piece ? size - at : piece);
        unsigned char again[SDPA_SHA256_BYTES];
        sdpa_sha256_final(&h, again);
        ck_assert_mem_eq(again, digest, SDPA_SHA256_BYTES);
    }
}

START_TEST(sha256_known_answers)
{
    /* FIPS 180-4 examples (NIST CSRC), and the empty message. */
    expect_digest("abc", 3, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect_digest("", 0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    const char *two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    expect_digest(two_blocks, strlen(two_blocks),
                  "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
    char *million = malloc(1000000);
    memset(million, 'a', 1000000);
    unsigned char digest[SDPA_SHA256_BYTES];
    sdpa_sha256(million, 1000000, digest);
    const unsigned char want[4] = {0xcd, 0xc7, 0x6e, 0x5c};
    ck_assert_mem_eq(digest, want, 4);
    free(million);
}
END_TEST

/* --- Settings ------------------------------------------------------------------------ */

static void clear_env(void)
{
    unsetenv("SDPA_CACHE");
    unsetenv("SDPA_CACHE_DIR");
    unsetenv("SDPA_CACHE_MAX_BYTES");
    unsetenv("XDG_CACHE_HOME");
}

START_TEST(settings_from_the_environment)
{
    char *home = getenv("HOME") ? strdup(getenv("HOME")) : NULL;
    sdpa_disk_cache_settings_t s;
    clear_env();
    setenv("HOME", "/home/someone", 1);
    sdpa_disk_cache_settings_from_env(&s);
    ck_assert_int_eq(s.enabled, 1);
    ck_assert_str_eq(s.dir, "/home/someone/.cache/sdpa-ze");
    ck_assert_uint_eq(s.max_bytes, SDPA_DISK_CACHE_DEFAULT_MAX_BYTES);

    setenv("XDG_CACHE_HOME", "/var/cache/me", 1);
    sdpa_disk_cache_settings_from_env(&s);
    ck_assert_str_eq(s.dir, "/var/cache/me/sdpa-ze");
    setenv("XDG_CACHE_HOME", "relative/ignored", 1); /* the XDG spec says so */
    sdpa_disk_cache_settings_from_env(&s);
    ck_assert_str_eq(s.dir, "/home/someone/.cache/sdpa-ze");
    setenv("SDPA_CACHE_DIR", "/tmp/mine", 1);
    sdpa_disk_cache_settings_from_env(&s);
    ck_assert_str_eq(s.dir, "/tmp/mine");
    unsetenv("SDPA_CACHE_DIR");
    unsetenv("XDG_CACHE_HOME");
    unsetenv("HOME");
    sdpa_disk_cache_settings_from_env(&s);
    ck_assert_str_eq(s.dir, "");

    const char *off[] = {"0", "off", "OFF", "no", "false"};
    for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++) {
        setenv("SDPA_CACHE", off[i], 1);
        sdpa_disk_cache_settings_from_env(&s);
        ck_assert_msg(!s.enabled, "SDPA_CACHE=%s left the cache on", off[i]);
    }
    setenv("SDPA_CACHE", "1", 1);
    sdpa_disk_cache_settings_from_env(&s);
    ck_assert_int_eq(s.enabled, 1);

    const struct {
        const char *text;
        uint64_t bytes;
    } sizes[] = {{"12345", 12345},
                 {"64K", 64ull << 10},
                 {"3m", 3ull << 20},
                 {"2G", 2ull << 30},
                 {"0", 0},
                 {"12x", SDPA_DISK_CACHE_DEFAULT_MAX_BYTES},
                 {"-5", SDPA_DISK_CACHE_DEFAULT_MAX_BYTES},
                 {"K", SDPA_DISK_CACHE_DEFAULT_MAX_BYTES},
                 {"99999999999999999999", SDPA_DISK_CACHE_DEFAULT_MAX_BYTES}};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        setenv("SDPA_CACHE_MAX_BYTES", sizes[i].text, 1);
        sdpa_disk_cache_settings_from_env(&s);
        ck_assert_msg(s.max_bytes == sizes[i].bytes, "SDPA_CACHE_MAX_BYTES=%s gave %llu",
                      sizes[i].text, (unsigned long long)s.max_bytes);
    }
    clear_env();
    if (home) {
        setenv("HOME", home, 1);
        free(home);
    }
}
END_TEST

/* --- Entries ------------------------------------------------------------------------- */

static sdpa_disk_cache_t *open_store(const char *dir, uint64_t max_bytes)
{
    sdpa_disk_cache_settings_t s = {.enabled = 1, .max_bytes = max_bytes};
    snprintf(s.dir, sizeof(s.dir), "%s", dir);
    sdpa_disk_cache_t *cache = sdpa_disk_cache_open(&s);
    ck_assert_ptr_nonnull(cache);
    return cache;
}

/* A payload of size bytes derived from seed. */
static unsigned char *payload_of(size_t size, unsigned seed)
{
    unsigned char *p = malloc(size);
    for (size_t i = 0; i < size; i++)
        p[i] = (unsigned char)(seed * 131 + i * 7 + (i >> 8));
    return p;
}

static void expect_hit(sdpa_disk_cache_t *cache, const char *key, size_t size, unsigned seed)
{
    void *got = NULL;
    size_t got_size = 0;
    char why[256] = "";
    sdpa_disk_cache_lookup_t found =
            sdpa_disk_cache_get(cache, key, strlen(key), &got, &got_size, why, sizeof(why));
    ck_assert_msg(found == SDPA_DISK_CACHE_HIT, "%s: lookup %d (%s)", key, (int)found, why);
    unsigned char *want = payload_of(size, seed);
    ck_assert_uint_eq(got_size, size);
    ck_assert_mem_eq(got, want, size);
    free(want);
    free(got);
}

/* Expects key rejected, with a reason containing reason. */
static void expect_rejected(sdpa_disk_cache_t *cache, const char *key, const char *reason)
{
    void *got = NULL;
    size_t got_size = 0;
    char why[256] = "";
    sdpa_disk_cache_lookup_t found =
            sdpa_disk_cache_get(cache, key, strlen(key), &got, &got_size, why, sizeof(why));
    printf("rejected as expected: %s\n", why);
    ck_assert_msg(found == SDPA_DISK_CACHE_REJECTED, "%s: lookup %d, not rejected", key,
                  (int)found);
    ck_assert_ptr_null(got);
    ck_assert_msg(strstr(why, reason) != NULL, "reason \"%s\" does not say \"%s\"", why, reason);
}

static void put(sdpa_disk_cache_t *cache, const char *key, size_t size, unsigned seed)
{
    unsigned char *p = payload_of(size, seed);
    ck_assert_int_eq(sdpa_disk_cache_put(cache, key, strlen(key), p, size), 0);
    free(p);
}

START_TEST(entries_round_trip_and_damage_is_rejected)
{
    char dir[4096];
    cache_dir_make(dir, sizeof(dir), "store");
    sdpa_disk_cache_t *cache = open_store(dir, 1 << 20);

    void *got = NULL;
    size_t got_size = 0;
    ck_assert_int_eq(sdpa_disk_cache_get(cache, "absent", 6, &got, &got_size, NULL, 0),
                     SDPA_DISK_CACHE_ABSENT);
    put(cache, "module A", 5000, 1);
    put(cache, "module B", 70, 2);
    put(cache, "empty", 0, 3);
    expect_hit(cache, "module A", 5000, 1);
    expect_hit(cache, "module B", 70, 2);
    expect_hit(cache, "empty", 0, 3);
    /* Storing a key again replaces its entry. */
    put(cache, "module B", 90, 4);
    expect_hit(cache, "module B", 90, 4);
    ck_assert_int_eq(cache_dir_count(dir, ".zebin"), 3);
    ck_assert_int_eq(cache_dir_count(dir, ".tmp-"), 0);

    char path[8192];
    ck_assert_int_eq(sdpa_disk_cache_entry_path(cache, "module A", 8, path, sizeof(path)), 0);
    size_t size = 0;
    unsigned char *good = cache_file_read(path, &size);
    ck_assert_uint_eq(size, 64 + 8 + 5000);
    unsigned char *bad = malloc(size + 16);

    memcpy(bad, good, size);
    bad[3] ^= 1;
    cache_file_write(path, bad, size);
    expect_rejected(cache, "module A", "bad magic");

    memcpy(bad, good, size);
    bad[8] = SDPA_DISK_CACHE_VERSION + 1;
    cache_file_write(path, bad, size);
    expect_rejected(cache, "module A", "format version");

    cache_file_write(path, good, size - 1);
    expect_rejected(cache, "module A", "truncated");
    cache_file_write(path, good, 40);
    expect_rejected(cache, "module A", "truncated");
    cache_file_write(path, good, 0);
    expect_rejected(cache, "module A", "truncated");

    memcpy(bad, good, size);
    memset(bad + size, 0, 16);
    cache_file_write(path, bad, size + 16);
    expect_rejected(cache, "module A", "padded");

    for (size_t at = 32; at < size; at += size / 7) { /* digest, key, payload */
        memcpy(bad, good, size);
        bad[at] ^= 0x40;
        cache_file_write(path, bad, size);
        expect_rejected(cache, "module A", "checksum");
    }

    /* Another key's entry under this key's name (a hash collision, or a
     * file copied by hand): a whole, valid entry, not ours. */
    ck_assert_int_eq(sdpa_disk_cache_write_entry(path, "module Z", 8, good, 100), 0);
    expect_rejected(cache, "module A", "another key");
    void *key = NULL, *payload = NULL;
    size_t key_size = 0, payload_size = 0;
    ck_assert_int_eq(
            sdpa_disk_cache_read_entry(path, &key, &key_size, &payload, &payload_size, NULL, 0), 0);
    ck_assert_uint_eq(key_size, 8);
    ck_assert_mem_eq(key, "module Z", 8);
    ck_assert_uint_eq(payload_size, 100);
    free(key);
    free(payload);

    /* A store heals it. */
    put(cache, "module A", 5000, 1);
    expect_hit(cache, "module A", 5000, 1);

    free(bad);
    free(good);
    sdpa_disk_cache_close(cache);
    cache_dir_remove(dir);
}
END_TEST

/* --- Eviction ------------------------------------------------------------------------ */

static void set_mtime(sdpa_disk_cache_t *cache, const char *key, time_t when)
{
    char path[8192];
    ck_assert_int_eq(sdpa_disk_cache_entry_path(cache, key, strlen(key), path, sizeof(path)), 0);
    struct timespec times[2] = {{when, 0}, {when, 0}};
    ck_assert_int_eq(utimensat(AT_FDCWD, path, times, 0), 0);
}

static int present(sdpa_disk_cache_t *cache, const char *key)
{
    char path[8192];
    ck_assert_int_eq(sdpa_disk_cache_entry_path(cache, key, strlen(key), path, sizeof(path)), 0);
    return access(path, F_OK) == 0;
}

START_TEST(least_recently_used_entries_go_first)
{
    char dir[4096];
    cache_dir_make(dir, sizeof(dir), "evict");
    /* Entries of 64 + 2 + 1000 bytes: four fit under 4400, five do not. */
    const uint64_t cap = 4400;
    sdpa_disk_cache_t *cache = open_store(dir, cap);
    const char *keys[] = {"k0", "k1", "k2", "k3"};
    time_t now = time(NULL);
    for (int i = 0; i < 4; i++) {
        put(cache, keys[i], 1000, (unsigned)i);
        set_mtime(cache, keys[i], now - 1000 + i); /* k0 oldest */
    }
    ck_assert_int_eq(cache_dir_count(dir, ".zebin"), 4);

    /* A hit refreshes k0: now k1 is the least recently used. */
    expect_hit(cache, "k0", 1000, 0);
    put(cache, "k4", 1000, 4);
    ck_assert(present(cache, "k0"));
    ck_assert(!present(cache, "k1"));
    ck_assert(present(cache, "k2") && present(cache, "k3") && present(cache, "k4"));
    ck_assert_uint_le(cache_dir_bytes(dir, ".zebin"), cap);

    /* A larger entry pushes out as many as it needs, oldest first: 2567
     * bytes leave room for one of the others, the most recently used (k0,
     * hit above, is newer than k4). */
    set_mtime(cache, "k4", now - 500);
    put(cache, "big", 2500, 9);
    ck_assert(!present(cache, "k2") && !present(cache, "k3") && !present(cache, "k4"));
    ck_assert(present(cache, "big") && present(cache, "k0"));
    ck_assert_uint_le(cache_dir_bytes(dir, ".zebin"), cap);

    /* An entry larger than the cap is not stored, and evicts nothing. */
    unsigned char *huge = payload_of(cap, 1);
    ck_assert_int_eq(sdpa_disk_cache_put(cache, "huge", 4, huge, cap), -1);
    free(huge);
    ck_assert(!present(cache, "huge") && present(cache, "big"));

    /* Files that are not entries are left alone; temporary files of a
     * writer that died are removed once stale, kept while fresh. */
    char path[8192];
    snprintf(path, sizeof(path), "%s/README", dir);
    cache_file_write(path, (const unsigned char *)"mine", 4);
    snprintf(path, sizeof(path), "%s/.tmp-dead01", dir);
    cache_file_write(path, (const unsigned char *)"half an entry", 13);
    struct timespec old[2] = {{now - SDPA_DISK_CACHE_STALE_TEMP_SECONDS - 60, 0},
                              {now - SDPA_DISK_CACHE_STALE_TEMP_SECONDS - 60, 0}};
    ck_assert_int_eq(utimensat(AT_FDCWD, path, old, 0), 0);
    snprintf(path, sizeof(path), "%s/.tmp-busy01", dir);
    cache_file_write(path, (const unsigned char *)"being written", 13);
    put(cache, "k5", 10, 5);
    ck_assert_int_eq(cache_dir_count(dir, ".tmp-dead"), 0);
    ck_assert_int_eq(cache_dir_count(dir, ".tmp-busy"), 1);
    ck_assert_int_eq(cache_dir_count(dir, "README"), 1);

    /* A cap of 0 stores nothing. */
    sdpa_disk_cache_close(cache);
    cache = open_store(dir, 0);
    unsigned char one = 1;
    ck_assert_int_eq(sdpa_disk_cache_put(cache, "k6", 2, &one, 1), -1);
    sdpa_disk_cache_close(cache);
    cache_dir_remove(dir);
}
END_TEST

/* --- Directories that cannot be used -------------------------------------------------- */

/* Runs fn in a child whose stderr goes to a file; returns the child's exit
 * status and the notes it printed in notes[size]. */
static int in_child(void (*fn)(const char *dir), const char *dir, int drop_privileges, char *notes,
                    size_t size)
{
    char log[4200];
    snprintf(log, sizeof(log), "%s.stderr", dir);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int fd = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, 2) < 0)
            _exit(90);
        if (drop_privileges && cache_drop_privileges() != 0)
            _exit(91);
        fn(dir);
        _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    FILE *f = fopen(log, "r");
    size_t n = f ? fread(notes, 1, size - 1, f) : 0;
    notes[n] = '\0';
    if (f)
        fclose(f);
    unlink(log);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
}

/* Twice: the second open says nothing more. */
static void open_uncreatable(const char *dir)
{
    for (int i = 0; i < 2; i++) {
        sdpa_disk_cache_settings_t s = {.enabled = 1, .max_bytes = 1 << 20};
        int n = snprintf(s.dir, sizeof(s.dir), "%s/below-a-file/cache", dir);
        if (n < 0 || (size_t)n >= sizeof(s.dir) || sdpa_disk_cache_open(&s) != NULL)
            _exit(1);
    }
}

static void use_read_only(const char *dir)
{
    for (int i = 0; i < 2; i++) {
        sdpa_disk_cache_settings_t s = {.enabled = 1, .max_bytes = 1 << 20};
        snprintf(s.dir, sizeof(s.dir), "%s", dir);
        sdpa_disk_cache_t *cache = sdpa_disk_cache_open(&s);
        if (!cache)
            _exit(2);
        void *got = NULL;
        size_t size = 0;
        if (sdpa_disk_cache_get(cache, "kept", 4, &got, &size, NULL, 0) != SDPA_DISK_CACHE_HIT ||
            size != 300)
            _exit(3);
        free(got);
        unsigned char one = 1;
        if (sdpa_disk_cache_put(cache, "new", 3, &one, 1) != -1)
            _exit(4);
        sdpa_disk_cache_close(cache);
    }
}

static void write_into_full(const char *dir)
{
    /* Two stores fail (the directory vanished under the store): one note. */
    sdpa_disk_cache_settings_t s = {.enabled = 1, .max_bytes = 1 << 20};
    snprintf(s.dir, sizeof(s.dir), "%s", dir);
    sdpa_disk_cache_t *cache = sdpa_disk_cache_open(&s);
    if (!cache)
        _exit(5);
    cache_dir_remove(dir);
    unsigned char one = 1;
    if (sdpa_disk_cache_put(cache, "a", 1, &one, 1) != -1 ||
        sdpa_disk_cache_put(cache, "b", 1, &one, 1) != -1)
        _exit(6);
    sdpa_disk_cache_close(cache);
}

START_TEST(unusable_directories_give_one_note)
{
    char dir[4096], notes[4096];
    cache_dir_make(dir, sizeof(dir), "unusable");
    char file[4200];
    snprintf(file, sizeof(file), "%s/below-a-file", dir);
    cache_file_write(file, (const unsigned char *)"x", 1);
    ck_assert_int_eq(in_child(open_uncreatable, dir, 0, notes, sizeof(notes)), 0);
    printf("uncreatable: %s", notes);
    ck_assert_int_eq(cache_text_count(notes, "sdpa-ze: note: module cache: cannot create"), 1);
    ck_assert_int_eq(cache_text_count(notes, "sdpa-ze: note"), 1);
    unlink(file);

    /* A directory its user cannot write: entries served, none stored. As
     * root (who writes anywhere) the child drops to nobody first. */
    sdpa_disk_cache_t *cache = open_store(dir, 1 << 20);
    put(cache, "kept", 300, 7);
    sdpa_disk_cache_close(cache);
    cache_dir_share_read_only(dir);
    ck_assert_int_eq(in_child(use_read_only, dir, 1, notes, sizeof(notes)), 0);
    printf("read-only: %s", notes);
    ck_assert_int_eq(cache_text_count(notes, "is not writable"), 1);
    ck_assert_int_eq(cache_text_count(notes, "sdpa-ze: note"), 1);
    ck_assert_int_eq(cache_dir_count(dir, ".zebin"), 1);
    chmod(dir, 0700);

    ck_assert_int_eq(in_child(write_into_full, dir, 0, notes, sizeof(notes)), 0);
    printf("write failure: %s", notes);
    ck_assert_int_eq(cache_text_count(notes, "sdpa-ze: note: module cache: cannot create a file"),
                     1);
    ck_assert_int_eq(cache_text_count(notes, "sdpa-ze: note"), 1);

    /* Disabled: nothing opened, no note. */
    sdpa_disk_cache_settings_t off = {.enabled = 0, .max_bytes = 1};
    snprintf(off.dir, sizeof(off.dir), "%s", dir);
    ck_assert_ptr_null(sdpa_disk_cache_open(&off));
}
END_TEST

int main(void)
{
    const test_entry_t tests[] = {
            TEST_ONCE(sha256_known_answers),
            TEST_ONCE(settings_from_the_environment),
            TEST_ONCE(entries_round_trip_and_damage_is_rejected),
            TEST_ONCE(least_recently_used_entries_go_first),
            TEST_ONCE(unusable_directories_give_one_note),
    };
    /* In this process: the tests fork the children they need themselves. */
    setenv("CK_FORK", "no", 1);
    const test_suite_t suite = {.name = "disk_cache"};
    return test_run_table(&suite, tests, TEST_COUNT(tests));
}
