/*
 * disk_cache.h - the persistent module cache's store: one file per entry in
 * a directory, each entry a key (the bytes that identify a module) and a
 * payload (its native binary). Nothing here knows Level Zero; the module
 * cache (module_cache.c) decides what a key holds.
 *
 * It never hurts:
 *   - an entry is written to a temporary file in the directory and renamed
 *     over its name, so a reader sees a whole entry or none, and processes
 *     storing the same key at once each rename a whole file (the last one
 *     wins; they are the same module);
 *   - an entry is used only if its header, its size, its key (compared
 *     byte for byte) and its SHA-256 checksum are right: a truncated,
 *     corrupted, foreign or other-version file is a miss, and the next
 *     store replaces it;
 *   - a directory that cannot be created or written means no new entries
 *     and one note on stderr per process, never an error;
 *   - the files together stay under a byte cap: after each store the
 *     least recently used entries go (a hit refreshes an entry's mtime).
 *
 * Entry file format, "<64 hex digits of SHA-256(key)>.zebin":
 *   bytes  0..7   magic "SDPAZEC\0"
 *          8..11  format version (SDPA_DISK_CACHE_VERSION), little-endian
 *         12..15  0x01020304 (byte order)
 *         16..23  key bytes K
 *         24..31  payload bytes P
 *         32..63  SHA-256 of the key and payload bytes
 *         64..    the key, then the payload
 */
#ifndef SDPA_ZE_DISK_CACHE_H
#define SDPA_ZE_DISK_CACHE_H

#include <stddef.h>
#include <stdint.h>

/* The entry format; entries of another version are never loaded. */
#define SDPA_DISK_CACHE_VERSION 1u

/* SDPA_CACHE_MAX_BYTES when unset. */
#define SDPA_DISK_CACHE_DEFAULT_MAX_BYTES (1024ull * 1024 * 1024)

/* Temporary files this old (seconds) are debris of a writer that died:
 * eviction removes them. */
#define SDPA_DISK_CACHE_STALE_TEMP_SECONDS 600

typedef struct sdpa_disk_cache sdpa_disk_cache_t;

/* What the environment asks for. */
typedef struct sdpa_disk_cache_settings {
    int enabled;        /* SDPA_CACHE is not 0 (nor off, no, false) */
    char dir[4096];     /* "" when no directory could be determined */
    uint64_t max_bytes; /* SDPA_CACHE_MAX_BYTES */
} sdpa_disk_cache_settings_t;

/* Reads SDPA_CACHE, SDPA_CACHE_DIR (default $XDG_CACHE_HOME/sdpa-ze, else
 * $HOME/.cache/sdpa-ze) and SDPA_CACHE_MAX_BYTES (bytes, with an optional
 * K, M or G suffix for KiB, MiB, GiB; a malformed value gets a note and the
 * default). */
void sdpa_disk_cache_settings_from_env(sdpa_disk_cache_settings_t *out);

/* Opens the store described by settings, creating its directory (mode
 * 0700) if needed. Returns NULL when disabled, or when there is no
 * directory and none can be made (after one note per process); a directory
 * that exists but cannot be written is opened read-only: its entries are
 * served, nothing is stored (one note). The caller closes it. */
sdpa_disk_cache_t *sdpa_disk_cache_open(const sdpa_disk_cache_settings_t *settings);

/* Frees the handle (the files stay). NULL is ignored. */
void sdpa_disk_cache_close(sdpa_disk_cache_t *cache);

/* The directory, for messages. */
const char *sdpa_disk_cache_dir(const sdpa_disk_cache_t *cache);

/* What a lookup found. */
typedef enum sdpa_disk_cache_lookup {
    SDPA_DISK_CACHE_HIT = 0,
    SDPA_DISK_CACHE_ABSENT = 1,   /* no entry of that name */
    SDPA_DISK_CACHE_REJECTED = 2, /* an entry that failed a check: not loaded */
} sdpa_disk_cache_lookup_t;

/* Looks key up. On a hit stores in *payload a new buffer (the caller frees
 * it) of *payload_size bytes and refreshes the entry's mtime. On a
 * rejection writes the reason into why[why_size] (why may be NULL). */
sdpa_disk_cache_lookup_t sdpa_disk_cache_get(sdpa_disk_cache_t *cache, const void *key,
                                             size_t key_size, void **payload, size_t *payload_size,
                                             char *why, size_t why_size);

/* Stores payload under key, atomically, then evicts least recently used
 * entries until the files fit the cap. A payload larger than the cap is
 * not stored. Returns 0 if the entry was stored, -1 if not (read-only
 * store, too large, a write failure: the first failure to write prints one
 * note per process and makes the store read-only). */
int sdpa_disk_cache_put(sdpa_disk_cache_t *cache, const void *key, size_t key_size,
                        const void *payload, size_t payload_size);

/* The entry file's path for key, in path[path_size]; -1 if it does not
 * fit. For tests and messages. */
int sdpa_disk_cache_entry_path(const sdpa_disk_cache_t *cache, const void *key, size_t key_size,
                               char *path, size_t path_size);

/* Writes an entry file at path directly (not atomic, no eviction): for
 * tests that craft entries. Returns 0 or -1 with errno set. */
int sdpa_disk_cache_write_entry(const char *path, const void *key, size_t key_size,
                                const void *payload, size_t payload_size);

/* Reads and checks the entry file at path (any key): on success, new
 * buffers in *key and *payload (the caller frees both) and returns 0;
 * otherwise -1 with the reason in why. For tests. */
int sdpa_disk_cache_read_entry(const char *path, void **key, size_t *key_size, void **payload,
                               size_t *payload_size, char *why, size_t why_size);

#endif /* SDPA_ZE_DISK_CACHE_H */
