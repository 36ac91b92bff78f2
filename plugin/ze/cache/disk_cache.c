/* disk_cache.c - the persistent module cache's files: settings, checked
 * reads, atomic writes, least-recently-used eviction (disk_cache.h). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "disk_cache.h"
#include "env_flag.h"
#include "sha256.h"

#define HEADER_BYTES 64
#define BYTE_ORDER_MARK 0x01020304u
#define ENTRY_SUFFIX ".zebin"
#define TEMP_PREFIX ".tmp-"
/* An entry file larger than this is refused unread. */
#define MAX_ENTRY_BYTES (1ull << 32)
/* A file in the directory: the directory, '/', a name of up to 255 bytes. */
#define PATH_BYTES (4096 + 1 + 256)

static const char entry_magic[8] = "SDPAZEC";

struct sdpa_disk_cache {
    char dir[4096];
    uint64_t max_bytes;
    int writable; /* 0 once the directory proved read-only */
};

/* --- Notes: once per process each ---------------------------------------------------- */

static atomic_int noted_no_dir, noted_create, noted_read_only, noted_write, noted_max;

static void note_once(atomic_int *flag, const char *format, ...)
        __attribute__((format(printf, 2, 3)));

static void note_once(atomic_int *flag, const char *format, ...)
{
    if (atomic_exchange(flag, 1))
        return;
    char text[1024];
    va_list ap;
    va_start(ap, format);
    vsnprintf(text, sizeof(text), format, ap);
    va_end(ap);
    fprintf(stderr, "sdpa-ze: note: module cache: %s\n", text);
}

/* --- Settings ---------------------------------------------------------------------------- */

/* Bytes with an optional K, M or G (binary) suffix; -1 if malformed. */
static int parse_bytes(const char *text, uint64_t *out)
{
    char *end = NULL;
    errno = 0;
    if (*text < '0' || *text > '9')
        return -1;
    unsigned long long value = strtoull(text, &end, 10);
    if (errno != 0)
        return -1;
    unsigned shift = 0;
    switch (*end) {
    case 'K':
    case 'k':
        shift = 10;
        end++;
        break;
    case 'M':
    case 'm':
        shift = 20;
        end++;
        break;
    case 'G':
    case 'g':
        shift = 30;
        end++;
        break;
    default:
        break;
    }
    if (*end != '\0' || (shift && value > (UINT64_MAX >> shift)))
        return -1;
    *out = (uint64_t)value << shift;
    return 0;
}

void sdpa_disk_cache_settings_from_env(sdpa_disk_cache_settings_t *out)
{
    memset(out, 0, sizeof(*out));
    out->enabled = sdpa_env_flag("SDPA_CACHE", 1);

    const char *dir = getenv("SDPA_CACHE_DIR");
    const char *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    int n = 0;
    if (dir && *dir)
        n = snprintf(out->dir, sizeof(out->dir), "%s", dir);
    else if (xdg && xdg[0] == '/') /* the XDG spec ignores relative paths */
        n = snprintf(out->dir, sizeof(out->dir), "%s/sdpa-ze", xdg);
    else if (home && *home)
        n = snprintf(out->dir, sizeof(out->dir), "%s/.cache/sdpa-ze", home);
    if (n < 0 || (size_t)n >= sizeof(out->dir))
        out->dir[0] = '\0';

    out->max_bytes = SDPA_DISK_CACHE_DEFAULT_MAX_BYTES;
    const char *max = getenv("SDPA_CACHE_MAX_BYTES");
    if (max && *max && parse_bytes(max, &out->max_bytes) != 0) {
        out->max_bytes = SDPA_DISK_CACHE_DEFAULT_MAX_BYTES;
        note_once(&noted_max,
                  "SDPA_CACHE_MAX_BYTES=\"%s\" is not a byte count (digits, then "
                  "K, M or G or nothing): using %llu",
                  max, (unsigned long long)SDPA_DISK_CACHE_DEFAULT_MAX_BYTES);
    }
}

/* --- Opening ------------------------------------------------------------------------------- */

/* mkdir -p with mode 0700 for what it creates; 0 if dir is a directory. */
static int make_directories(const char *dir)
{
    char path[4096];
    size_t len = strlen(dir);
    if (len == 0 || len >= sizeof(path))
        return -1;
    memcpy(path, dir, len + 1);
    for (size_t i = 1; i <= len; i++) {
        if (path[i] != '/' && path[i] != '\0')
            continue;
        char saved = path[i];
        path[i] = '\0';
        if (mkdir(path, 0700) != 0 && errno != EEXIST)
            return -1;
        path[i] = saved;
    }
    struct stat st;
    if (stat(dir, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

sdpa_disk_cache_t *sdpa_disk_cache_open(const sdpa_disk_cache_settings_t *settings)
{
    if (!settings->enabled)
        return NULL;
    if (settings->dir[0] == '\0') {
        note_once(&noted_no_dir, "no directory (SDPA_CACHE_DIR, XDG_CACHE_HOME and HOME are "
                                 "unset): modules are not cached across processes");
        return NULL;
    }
    if (make_directories(settings->dir) != 0) {
        note_once(&noted_create,
                  "cannot create %s (%s): modules are not cached across "
                  "processes (set SDPA_CACHE_DIR, or SDPA_CACHE=0)",
                  settings->dir, strerror(errno));
        return NULL;
    }
    sdpa_disk_cache_t *cache = calloc(1, sizeof(*cache));
    if (!cache)
        return NULL;
    snprintf(cache->dir, sizeof(cache->dir), "%s", settings->dir);
    cache->max_bytes = settings->max_bytes;
    cache->writable = access(settings->dir, W_OK | X_OK) == 0;
    if (!cache->writable)
        note_once(&noted_read_only,
                  "%s is not writable (%s): its entries are used, new "
                  "modules are not stored",
                  settings->dir, strerror(errno));
    return cache;
}

void sdpa_disk_cache_close(sdpa_disk_cache_t *cache)
{
    free(cache);
}

const char *sdpa_disk_cache_dir(const sdpa_disk_cache_t *cache)
{
    return cache->dir;
}

/* --- Entries -----------------------------------------------------------------------------------
 */

static void entry_digest(const void *key, size_t key_size, const void *payload, size_t payload_size,
                         unsigned char out[SDPA_SHA256_BYTES])
{
    sdpa_sha256_t h;
    sdpa_sha256_init(&h);
    sdpa_sha256_update(&h, key, key_size);
    sdpa_sha256_update(&h, payload, payload_size);
    sdpa_sha256_final(&h, out);
}

static void make_header(unsigned char header[HEADER_BYTES], const void *key, size_t key_size,
                        const void *payload, size_t payload_size)
{
    uint32_t version = SDPA_DISK_CACHE_VERSION, order = BYTE_ORDER_MARK;
    uint64_t k = key_size, p = payload_size;
    memcpy(header, entry_magic, 8);
    memcpy(header + 8, &version, 4);
    memcpy(header + 12, &order, 4);
    memcpy(header + 16, &k, 8);
    memcpy(header + 24, &p, 8);
    entry_digest(key, key_size, payload, payload_size, header + 32);
}

int sdpa_disk_cache_entry_path(const sdpa_disk_cache_t *cache, const void *key, size_t key_size,
                               char *path, size_t path_size)
{
    unsigned char digest[SDPA_SHA256_BYTES];
    sdpa_sha256(key, key_size, digest);
    char hex[2 * SDPA_SHA256_BYTES + 1];
    for (int i = 0; i < SDPA_SHA256_BYTES; i++)
        snprintf(hex + 2 * i, 3, "%02x", digest[i]);
    int n = snprintf(path, path_size, "%s/%s" ENTRY_SUFFIX, cache->dir, hex);
    return n < 0 || (size_t)n >= path_size ? -1 : 0;
}

static int write_all(int fd, const void *data, size_t size)
{
    const char *bytes = data;
    while (size > 0) {
        ssize_t n = write(fd, bytes, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (n == 0)
                errno = EIO;
            return -1;
        }
        bytes += n;
        size -= (size_t)n;
    }
    return 0;
}

static int write_entry_fd(int fd, const void *key, size_t key_size, const void *payload,
                          size_t payload_size)
{
    unsigned char header[HEADER_BYTES];
    make_header(header, key, key_size, payload, payload_size);
    if (write_all(fd, header, sizeof(header)) != 0 || write_all(fd, key, key_size) != 0 ||
        write_all(fd, payload, payload_size) != 0)
        return -1;
    return 0;
}

int sdpa_disk_cache_write_entry(const char *path, const void *key, size_t key_size,
                                const void *payload, size_t payload_size)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0)
        return -1;
    int rc = write_entry_fd(fd, key, key_size, payload, payload_size);
    int saved = errno;
    if (close(fd) != 0 && rc == 0)
        return -1;
    errno = saved;
    return rc;
}

/* Reads the whole file open on fd into a new buffer. */
static int read_all(int fd, unsigned char **out, size_t *size, char *why, size_t why_size)
{
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        snprintf(why, why_size, "not a regular file");
        return -1;
    }
    if ((uint64_t)st.st_size > MAX_ENTRY_BYTES) {
        snprintf(why, why_size, "%lld bytes: too large", (long long)st.st_size);
        return -1;
    }
    size_t total = (size_t)st.st_size;
    unsigned char *bytes = malloc(total ? total : 1);
    if (!bytes) {
        snprintf(why, why_size, "out of host memory for %zu bytes", total);
        return -1;
    }
    size_t got = 0;
    while (got < total) {
        ssize_t n = read(fd, bytes + got, total - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        got += (size_t)n;
    }
    if (got != total) {
        free(bytes);
        snprintf(why, why_size, "short read (%zu of %zu bytes)", got, total);
        return -1;
    }
    *out = bytes;
    *size = total;
    return 0;
}

/* Checks an entry's bytes; on success *key_at, *payload_at point into
 * bytes. */
static int check_entry(const unsigned char *bytes, size_t size, const unsigned char **key_at,
                       uint64_t *key_size, const unsigned char **payload_at, uint64_t *payload_size,
                       char *why, size_t why_size)
{
    if (size < HEADER_BYTES) {
        snprintf(why, why_size, "truncated: %zu bytes, shorter than the header", size);
        return -1;
    }
    uint32_t version, order;
    memcpy(&version, bytes + 8, 4);
    memcpy(&order, bytes + 12, 4);
    memcpy(key_size, bytes + 16, 8);
    memcpy(payload_size, bytes + 24, 8);
    if (memcmp(bytes, entry_magic, 8) != 0) {
        snprintf(why, why_size, "not an sdpa-ze cache entry (bad magic)");
        return -1;
    }
    if (version != SDPA_DISK_CACHE_VERSION || order != BYTE_ORDER_MARK) {
        snprintf(why, why_size, "format version %u (this build reads %u)%s", version,
                 SDPA_DISK_CACHE_VERSION, order != BYTE_ORDER_MARK ? ", another byte order" : "");
        return -1;
    }
    uint64_t body = size - HEADER_BYTES;
    if (*key_size > body || *payload_size != body - *key_size) {
        snprintf(why, why_size,
                 "truncated or padded: %llu key and %llu payload bytes declared, "
                 "%llu present",
                 (unsigned long long)*key_size, (unsigned long long)*payload_size,
                 (unsigned long long)body);
        return -1;
    }
    *key_at = bytes + HEADER_BYTES;
    *payload_at = *key_at + *key_size;
    unsigned char digest[SDPA_SHA256_BYTES];
    entry_digest(*key_at, (size_t)*key_size, *payload_at, (size_t)*payload_size, digest);
    if (memcmp(digest, bytes + 32, SDPA_SHA256_BYTES) != 0) {
        snprintf(why, why_size, "checksum mismatch: corrupted");
        return -1;
    }
    return 0;
}

int sdpa_disk_cache_read_entry(const char *path, void **key, size_t *key_size, void **payload,
                               size_t *payload_size, char *why, size_t why_size)
{
    char ignored[8];
    if (!why) {
        why = ignored;
        why_size = sizeof(ignored);
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(why, why_size, "%s", strerror(errno));
        return -1;
    }
    unsigned char *bytes = NULL;
    size_t size = 0;
    int rc = read_all(fd, &bytes, &size, why, why_size);
    close(fd);
    if (rc != 0)
        return -1;
    const unsigned char *key_at, *payload_at;
    uint64_t k, p;
    if (check_entry(bytes, size, &key_at, &k, &payload_at, &p, why, why_size) != 0) {
        free(bytes);
        return -1;
    }
    *key = malloc(k ? (size_t)k : 1);
    *payload = malloc(p ? (size_t)p : 1);
    if (!*key || !*payload) {
        free(*key);
        free(*payload);
        free(bytes);
        snprintf(why, why_size, "out of host memory");
        return -1;
    }
    memcpy(*key, key_at, (size_t)k);
    memcpy(*payload, payload_at, (size_t)p);
    *key_size = (size_t)k;
    *payload_size = (size_t)p;
    free(bytes);
    return 0;
}

sdpa_disk_cache_lookup_t sdpa_disk_cache_get(sdpa_disk_cache_t *cache, const void *key,
                                             size_t key_size, void **payload, size_t *payload_size,
                                             char *why, size_t why_size)
{
    char ignored[8];
    if (!why) {
        why = ignored;
        why_size = sizeof(ignored);
    }
    why[0] = '\0';
    char path[PATH_BYTES];
    if (sdpa_disk_cache_entry_path(cache, key, key_size, path, sizeof(path)) != 0) {
        snprintf(why, why_size, "the entry's path is too long");
        return SDPA_DISK_CACHE_REJECTED;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT)
            return SDPA_DISK_CACHE_ABSENT;
        snprintf(why, why_size, "cannot open: %s", strerror(errno));
        return SDPA_DISK_CACHE_REJECTED;
    }
    unsigned char *bytes = NULL;
    size_t size = 0;
    if (read_all(fd, &bytes, &size, why, why_size) != 0) {
        close(fd);
        return SDPA_DISK_CACHE_REJECTED;
    }
    const unsigned char *key_at, *payload_at;
    uint64_t k, p;
    if (check_entry(bytes, size, &key_at, &k, &payload_at, &p, why, why_size) != 0 ||
        (k != key_size || memcmp(key_at, key, key_size) != 0)) {
        if (why[0] == '\0')
            snprintf(why, why_size, "another key under the same name");
        free(bytes);
        close(fd);
        return SDPA_DISK_CACHE_REJECTED;
    }
    /* Least recently used means least recently hit: refresh the mtime
     * (best effort: a read-only store keeps its times). */
    futimens(fd, NULL);
    close(fd);
    memmove(bytes, payload_at, (size_t)p);
    *payload = bytes;
    *payload_size = (size_t)p;
    return SDPA_DISK_CACHE_HIT;
}

/* --- Eviction ------------------------------------------------------------------------------ */

typedef struct entry_file {
    char name[256]; /* a d_name */
    uint64_t bytes;
    struct timespec used;
} entry_file_t;

static int older_first(const void *a, const void *b)
{
    const entry_file_t *x = a, *y = b;
    if (x->used.tv_sec != y->used.tv_sec)
        return x->used.tv_sec < y->used.tv_sec ? -1 : 1;
    if (x->used.tv_nsec != y->used.tv_nsec)
        return x->used.tv_nsec < y->used.tv_nsec ? -1 : 1;
    return strcmp(x->name, y->name);
}

static int is_entry_name(const char *name)
{
    size_t len = strlen(name);
    return len == 2 * SDPA_SHA256_BYTES + strlen(ENTRY_SUFFIX) &&
           strspn(name, "0123456789abcdef") == 2 * SDPA_SHA256_BYTES &&
           strcmp(name + 2 * SDPA_SHA256_BYTES, ENTRY_SUFFIX) == 0;
}

/* Removes least recently used entries until the entries fit max_bytes, and
 * temporary files of writers that died. Other processes may remove the
 * same files meanwhile: a file already gone is fine. */
static void evict(sdpa_disk_cache_t *cache)
{
    DIR *dir = opendir(cache->dir);
    if (!dir)
        return;
    entry_file_t *files = NULL;
    size_t count = 0, capacity = 0;
    uint64_t total = 0;
    time_t now = time(NULL);
    char path[PATH_BYTES];
    for (struct dirent *d; (d = readdir(dir)) != NULL;) {
        int entry = is_entry_name(d->d_name);
        int temp = strncmp(d->d_name, TEMP_PREFIX, strlen(TEMP_PREFIX)) == 0;
        if (!entry && !temp)
            continue;
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", cache->dir, d->d_name);
        if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (temp) {
            if (now - st.st_mtime > SDPA_DISK_CACHE_STALE_TEMP_SECONDS)
                unlink(path);
            continue;
        }
        if (count == capacity) {
            size_t grown_capacity = capacity ? 2 * capacity : 64;
            entry_file_t *grown = realloc(files, grown_capacity * sizeof(*files));
            if (!grown)
                break;
            files = grown;
            capacity = grown_capacity;
        }
        snprintf(files[count].name, sizeof(files[count].name), "%s", d->d_name);
        files[count].bytes = (uint64_t)st.st_size;
        files[count].used = st.st_mtim;
        total += (uint64_t)st.st_size;
        count++;
    }
    closedir(dir);
    if (total > cache->max_bytes) {
        qsort(files, count, sizeof(*files), older_first);
        for (size_t i = 0; i < count && total > cache->max_bytes; i++) {
            snprintf(path, sizeof(path), "%s/%s", cache->dir, files[i].name);
            if (unlink(path) == 0 || errno == ENOENT)
                total -= files[i].bytes;
        }
    }
    free(files);
}

/* --- Storing ------------------------------------------------------------------------------- */

static void stop_writing(sdpa_disk_cache_t *cache, const char *what)
{
    cache->writable = 0;
    note_once(&noted_write, "cannot %s in %s (%s): new modules are not stored", what, cache->dir,
              strerror(errno));
}

int sdpa_disk_cache_put(sdpa_disk_cache_t *cache, const void *key, size_t key_size,
                        const void *payload, size_t payload_size)
{
    if (!cache->writable)
        return -1;
    if ((uint64_t)HEADER_BYTES + key_size + payload_size > cache->max_bytes)
        return -1;
    char path[PATH_BYTES], temp[PATH_BYTES];
    if (sdpa_disk_cache_entry_path(cache, key, key_size, path, sizeof(path)) != 0)
        return -1;
    snprintf(temp, sizeof(temp), "%s/" TEMP_PREFIX "XXXXXX", cache->dir);
    int fd = mkstemp(temp);
    if (fd < 0) {
        stop_writing(cache, "create a file");
        return -1;
    }
    fcntl(fd, F_SETFD, FD_CLOEXEC);
    int rc = write_entry_fd(fd, key, key_size, payload, payload_size);
    if (close(fd) != 0)
        rc = -1;
    if (rc != 0) {
        int saved = errno;
        unlink(temp);
        errno = saved;
        stop_writing(cache, "write an entry");
        return -1;
    }
    /* The rename is the commit: readers see the old file or the new one. */
    if (rename(temp, path) != 0) {
        int saved = errno;
        unlink(temp);
        errno = saved;
        stop_writing(cache, "rename an entry");
        return -1;
    }
    evict(cache);
    return 0;
}
