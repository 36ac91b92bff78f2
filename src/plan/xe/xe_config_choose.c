/* xe_config_choose.c - the fast path's choice of configuration. */
#include <stdio.h>
#include <string.h>

#include "error.h"
#include "xe_config_choose.h"

/* out and *source from a configuration of d that passed its checks. */
static void take(const sdpa_xe_direction_t *d, const void *config, const char *text, int from_env,
                 int skipped_rows, void *out, sdpa_config_source_t *source, int *use)
{
    if (config != out)
        memcpy(out, config, d->config_size);
    snprintf(source->text, sizeof(source->text), "%s", text);
    source->from_env = from_env;
    source->skipped_rows = skipped_rows;
    *use = 1;
}

sdpa_status_t sdpa_xe_config_choose(const sdpa_xe_direction_t *d,
                                    const sdpa_problem_desc_t *problem, const sdpa_shape_t *shape,
                                    const sdpa_device_info_t *device,
                                    const sdpa_xe_target_t *target, void *out,
                                    sdpa_config_source_t *source, int *use)
{
    *use = 0;
    int found = 0;
    const char *var = NULL;
    /* The override is read straight into out: without *use, out is void. */
    sdpa_status_t status = d->from_env(problem, out, &found, &var);
    if (status != SDPA_SUCCESS)
        return status;
    if (found) {
        if (d->check(out, target, device, shape->head_size, var) == SDPA_SUCCESS)
            take(d, out, var, 1, 0, out, source, use);
        sdpa_error_clear();
        return SDPA_SUCCESS;
    }

    sdpa_config_query_t q;
    d->query_for(problem, shape, device, &q);
    q.device_class = target->rows_class;
    q.props &= ~(unsigned)(SDPA_CONFIG_FMA | SDPA_CONFIG_F32);
    const sdpa_config_criteria_t *rows[SDPA_CONFIG_MAX_CANDIDATES];
    size_t n = sdpa_config_candidates_in(d->rows, *d->count, d->row_size, &q, rows,
                                         SDPA_CONFIG_MAX_CANDIDATES);
    if (n > SDPA_CONFIG_MAX_CANDIDATES)
        n = SDPA_CONFIG_MAX_CANDIDATES;
    for (size_t i = 0; i < n; i++) {
        const void *config = (const char *)rows[i] + d->config_offset;
        if (d->check(config, target, device, shape->head_size, "table row") != SDPA_SUCCESS)
            continue;
        char what[80], text[sizeof(source->text)];
        sdpa_config_criteria_format(rows[i], what, sizeof(what));
        snprintf(text, sizeof(text), "xe table: %s", what);
        take(d, config, text, 0, (int)i, out, source, use);
        break;
    }
    sdpa_error_clear();
    return SDPA_SUCCESS;
}
