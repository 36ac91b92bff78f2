/* xe_config_rules.c - the rules both directions' fast-path configurations
 * follow. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "config_env.h"
#include "error.h"
#include "spirv_variants.h"
#include "xe_config_rules.h"

sdpa_status_t sdpa_xe_config_breaks(const char *source, const char *config_text, const char *rule,
                                    const char *details_format, ...)
{
    char details[256];
    va_list ap;
    va_start(ap, details_format);
    vsnprintf(details, sizeof(details), details_format, ap);
    va_end(ap);
    return sdpa_fail(SDPA_ERROR_INVALID_CONFIG, "%s %s breaks the fast path's rule %s: %s", source,
                     config_text, rule, details);
}

sdpa_status_t sdpa_xe_check_values(const int *values, int count, const char *source,
                                   const char *config_text)
{
    for (int i = 0; i < count; i++)
        if (values[i] < 1 || values[i] > SDPA_CONFIG_VALUE_MAX)
            return sdpa_xe_config_breaks(source, config_text, "every value is in 1..1024",
                                         "value %d is %d", i + 1, values[i]);
    return SDPA_SUCCESS;
}

sdpa_status_t sdpa_xe_check_launch(const char *kernel_source, const sdpa_spirv_fields_t *fields,
                                   uint32_t sg, int64_t subgroups, const char *grid,
                                   int64_t slm_bytes, const sdpa_device_info_t *device,
                                   const char *source, const char *config_text)
{
    if (!sdpa_spirv_variant_name(kernel_source, fields, 0, (int)sg))
        return sdpa_xe_config_breaks(
                source, config_text, "the tile is a built variant",
                "no row of spirv/abi/variants.def builds %s with k%d, d%d%s%s%s for sub-groups "
                "of %" PRIu32,
                kernel_source, fields->keys, fields->dsub,
                fields->switches & SDPA_SPIRV_FIELD_CVT ? ", cvt" : "",
                fields->switches & SDPA_SPIRV_FIELD_EMU ? ", emu" : "",
                fields->switches & SDPA_SPIRV_FIELD_FADD ? ", fadd" : "", sg);
    if (!device)
        return SDPA_SUCCESS;
    if ((int64_t)sg * subgroups > device->max_group_size ||
        subgroups > device->max_group_size_xyz[1]) {
        char rule[80];
        snprintf(rule, sizeof(rule), "sub-group * %s <= work-group limit", grid);
        return sdpa_xe_config_breaks(source, config_text, rule,
                                     "%" PRIu32 " * %" PRId64 " work-items on %s (at most %" PRIu32
                                     ")",
                                     sg, subgroups, device->name, device->max_group_size);
    }
    if (slm_bytes > (int64_t)device->slm_bytes)
        return sdpa_xe_config_breaks(source, config_text, "local memory <= the device's",
                                     "%" PRId64 " > %" PRIu64 " bytes on %s", slm_bytes,
                                     device->slm_bytes, device->name);
    return SDPA_SUCCESS;
}
