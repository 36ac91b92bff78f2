/* config_choose.c - override, table, fallback: the configuration to run. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "config_choose.h"
#include "config_env.h"
#include "error.h"
#include "spirv_variants.h"

/* The SPIR-V variants' head-size buckets (ascending) are spirv_variants.h's. */
int sdpa_head_size_max(void)
{
    return sdpa_spirv_head_size_buckets[sdpa_spirv_head_size_bucket_count - 1];
}

int sdpa_head_size_bucket(int64_t head_size)
{
    if (head_size < 1)
        return 0;
    for (size_t i = 0; i < sdpa_spirv_head_size_bucket_count; i++)
        if (head_size <= sdpa_spirv_head_size_buckets[i])
            return sdpa_spirv_head_size_buckets[i];
    return 0;
}

/* Describes a table row as the source of a configuration. */
static void describe_row(const sdpa_config_criteria_t *criteria, int is_fallback, char *buf,
                         size_t size)
{
    char what[80];
    if (is_fallback)
        snprintf(what, sizeof(what), "h%d", criteria->head_size);
    else
        sdpa_config_criteria_format(criteria, what, sizeof(what));
    snprintf(buf, size, "%s: %s", is_fallback ? "fallback" : "table", what);
}

/* The last check's failure, reported as the device's inability. */
static sdpa_status_t as_unsupported(sdpa_status_t status)
{
    if (status != SDPA_ERROR_INVALID_CONFIG)
        return status;
    char message[1024];
    snprintf(message, sizeof(message), "%s", sdpa_error_message());
    return sdpa_fail(SDPA_ERROR_UNSUPPORTED, "%s", message);
}

/* The refusal when no row at all matches: a head size above the largest
 * bucket of the device's tables (512 on the CPU, 256 on GPUs). */
static sdpa_status_t no_configuration(const sdpa_config_query_t *query,
                                      const sdpa_kernel_target_t *target)
{
    return sdpa_fail(SDPA_ERROR_UNSUPPORTED,
                     "head size %lld: no configuration serves it on \"%s\" (%s), whose local "
                     "memory is %llu KiB",
                     (long long)query->head_size, target->device->name,
                     sdpa_device_class_name(target->device->device_class),
                     (unsigned long long)(target->device->slm_bytes / 1024));
}

static void set_source(sdpa_config_source_t *source, const char *text, int from_env,
                       int skipped_rows)
{
    if (!source)
        return;
    snprintf(source->text, sizeof(source->text), "%s", text);
    source->from_env = from_env;
    source->skipped_rows = skipped_rows;
}

/* What differs between choosing a forward and a backward configuration. */
typedef struct direction {
    /* The table and the fallback table (sdpa_config_candidates_of). */
    const void *rows;
    size_t row_count;
    sdpa_status_t (*check)(const void *config, const sdpa_kernel_target_t *target,
                           const char *what);
    const void *fallbacks;
    size_t fallback_count, row_size;
    size_t config_offset, config_size; /* the configuration in a row */
} direction_t;

/* The direction_t of dir (fwd or bwd): its tables, check and row layout. */
#define DIRECTION(dir)                                                                             \
    {                                                                                              \
        sdpa_##dir##_config_table, sdpa_##dir##_config_table_size, check_##dir,                    \
                sdpa_##dir##_config_fallbacks, sdpa_##dir##_config_fallbacks_size,                 \
                sizeof(sdpa_##dir##_config_row_t), offsetof(sdpa_##dir##_config_row_t, config),    \
                sizeof(sdpa_##dir##_config_t)                                                      \
    }

static sdpa_status_t check_fwd(const void *config, const sdpa_kernel_target_t *target,
                               const char *what)
{
    return sdpa_fwd_config_check(config, target, what);
}

static sdpa_status_t check_bwd(const void *config, const sdpa_kernel_target_t *target,
                               const char *what)
{
    return sdpa_bwd_config_check(config, target, what);
}

/* The override env_config (read from variable var; NULL if none is set),
 * else the first candidate row the checks accept on target, copied to out.
 * Only the fallback's failure is reported (the other rows are named
 * cheaply), as SDPA_ERROR_UNSUPPORTED: when not even the fallback fits, the
 * device, not the problem, is at fault. */
static sdpa_status_t choose(const direction_t *d, const sdpa_config_query_t *query,
                            const sdpa_kernel_target_t *target, const void *env_config,
                            const char *var, void *out, sdpa_config_source_t *source)
{
    if (env_config) {
        sdpa_status_t status = d->check(env_config, target, var);
        if (status == SDPA_SUCCESS) {
            memcpy(out, env_config, d->config_size);
            set_source(source, var, 1, 0);
        }
        return status;
    }
    const sdpa_config_criteria_t *rows[SDPA_CONFIG_MAX_CANDIDATES];
    size_t n = sdpa_config_candidates_of(d->rows, d->row_count, d->fallbacks, d->fallback_count,
                                         d->row_size, query, rows, SDPA_CONFIG_MAX_CANDIDATES);
    if (n > SDPA_CONFIG_MAX_CANDIDATES)
        n = SDPA_CONFIG_MAX_CANDIDATES;
    const char *fallbacks = d->fallbacks;
    sdpa_status_t status = no_configuration(query, target);
    for (size_t i = 0; i < n; i++) {
        const char *row = (const char *)rows[i];
        int is_fallback = row >= fallbacks && row < fallbacks + d->fallback_count * d->row_size;
        char what[96] = "table row";
        if (is_fallback)
            describe_row(rows[i], is_fallback, what, sizeof(what));
        status = d->check(row + d->config_offset, target, what);
        if (status == SDPA_SUCCESS) {
            describe_row(rows[i], is_fallback, what, sizeof(what));
            memcpy(out, row + d->config_offset, d->config_size);
            set_source(source, what, 0, (int)i);
            return SDPA_SUCCESS;
        }
    }
    return as_unsupported(status);
}

sdpa_status_t sdpa_fwd_config_choose(const sdpa_config_query_t *query, int quantized,
                                     const sdpa_kernel_target_t *target, sdpa_fwd_config_t *out,
                                     sdpa_config_source_t *source)
{
    const direction_t fwd = DIRECTION(fwd);
    sdpa_fwd_config_t config;
    int found;
    const char *var;
    sdpa_status_t status = sdpa_fwd_config_from_env(quantized, &config, &found, &var);
    if (status != SDPA_SUCCESS)
        return status;
    return choose(&fwd, query, target, found ? &config : NULL, var, out, source);
}

sdpa_status_t sdpa_bwd_config_choose(const sdpa_config_query_t *query,
                                     const sdpa_kernel_target_t *target, sdpa_bwd_config_t *out,
                                     sdpa_config_source_t *source)
{
    const direction_t bwd = DIRECTION(bwd);
    sdpa_bwd_config_t config;
    int found;
    sdpa_status_t status = sdpa_bwd_config_from_env(&config, &found);
    if (status != SDPA_SUCCESS)
        return status;
    return choose(&bwd, query, target, found ? &config : NULL, "BWD_SDPA_CONFIG", out, source);
}
