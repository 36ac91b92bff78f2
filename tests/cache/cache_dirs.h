/*
 * cache_dirs.h - directories for the persistent module cache's tests: made
 * under the build tree (CACHE_TEST_ROOT, from the Makefile), never under the
 * user's home, and removed by the tests (and by `make clean`).
 */
#ifndef SDPA_TEST_CACHE_DIRS_H
#define SDPA_TEST_CACHE_DIRS_H

#include <stddef.h>
#include <stdint.h>

/* A new empty directory CACHE_TEST_ROOT/<what>.XXXXXX in out[size], mode
 * 0755 like its parents (so that a process running as nobody can reach
 * it). Aborts the test on failure. */
void cache_dir_make(char *out, size_t size, const char *what);

/* Removes dir and the files in it (no subdirectories). */
void cache_dir_remove(const char *dir);

/* How many names in dir contain pattern, and their total bytes. */
int cache_dir_count(const char *dir, const char *pattern);
uint64_t cache_dir_bytes(const char *dir, const char *pattern);

/* The path of the one entry file ("*.zebin") in dir whose key contains
 * text (a variant name such as "sdpa_fwd"), in out[size]; -1 if none. */
int cache_dir_find_entry(const char *dir, const char *text, char *out, size_t size);

/* The whole file at path, in a new buffer (one byte more, for a NUL) of
 * *size bytes; aborts the test if it cannot be read. */
unsigned char *cache_file_read(const char *path, size_t *size);

/* Writes size bytes at path (created or truncated); aborts the test on
 * failure. */
void cache_file_write(const char *path, const void *bytes, size_t size);

/* How many times what occurs in text. */
int cache_text_count(const char *text, const char *what);

/* Makes dir readable and unwritable by everyone: files 0444, dir 0555. */
void cache_dir_share_read_only(const char *dir);

/* In a child process about to test a read-only directory: root writes
 * anywhere, so as root drop the capabilities that override permission
 * bits (or, where that is not allowed, become nobody, 65534); otherwise do
 * nothing. Returns 0, or -1 if neither worked. */
int cache_drop_privileges(void);

#endif /* SDPA_TEST_CACHE_DIRS_H */
