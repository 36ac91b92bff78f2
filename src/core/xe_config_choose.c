/* xe_config_choose.c - the fast path's choice of configuration. */
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "xe_config_choose.h"

void sdpa_xe_config_pick(const void *env_config, int env_found, const char *env_name,
                         const sdpa_xe_config_table_t *table, const sdpa_config_query_t *query,
                         const sdpa_xe_target_t *target, sdpa_xe_config_check_fn check,
                         const void *ctx, void *out, sdpa_config_source_t *source, int *use)
{
    *use = 0;
    if (env_found) {
        if (check(env_config, ctx, env_name) == SDPA_SUCCESS) {
            memcpy(out, env_config, table->config_size);
            snprintf(source->text, sizeof(source->text), "%s", env_name);
            source->from_env = 1;
            source->skipped_rows = 0;
            *use = 1;
        }
        sdpa_error_clear();
        return;
    }

    sdpa_config_query_t q = *query;
    q.device_class = target->rows_class;
    q.props &= ~(unsigned)(SDPA_CONFIG_FMA | SDPA_CONFIG_F32);
    const sdpa_config_criteria_t *rows[SDPA_CONFIG_MAX_CANDIDATES];
    size_t n = sdpa_config_candidates_in(table->rows, table->count, table->row_size, &q, rows,
                                         SDPA_CONFIG_MAX_CANDIDATES);
    if (n > SDPA_CONFIG_MAX_CANDIDATES)
        n = SDPA_CONFIG_MAX_CANDIDATES;
    for (size_t i = 0; i < n; i++) {
        const void *config = (const char *)rows[i] + table->config_offset;
        if (check(config, ctx, "table row") != SDPA_SUCCESS)
            continue;
        char what[80];
        sdpa_config_criteria_format(rows[i], what, sizeof(what));
        snprintf(source->text, sizeof(source->text), "xe table: %s", what);
        source->from_env = 0;
        source->skipped_rows = (int)i;
        memcpy(out, config, table->config_size);
        *use = 1;
        break;
    }
    sdpa_error_clear();
}
