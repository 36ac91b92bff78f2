/* test_invalid.c - the invalid-problem table against the ref backend (and,
 * once it exists, any other backend: one more invalid_table_tcase line). */
#include <check.h>
#include <stdlib.h>

#include "check_main.h"
#include "invalid_table.h"

int main(void)
{
    static const invalid_env_t ref_env = {
            .context_desc = {.struct_size = sizeof(sdpa_context_desc_t),
                             .struct_version = SDPA_CONTEXT_DESC_VERSION},
            .allocator = NULL,
    };
    Suite *s = suite_create("invalid");
    suite_add_tcase(s, invalid_table_tcase("ref", &ref_env));
    return test_run_suite(s);
}
