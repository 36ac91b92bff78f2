/* env_flag.c - a boolean environment variable. */
#include "env_flag.h"

#include <stdlib.h>
#include <strings.h>

int sdpa_env_flag(const char *name, int unset_value)
{
    const char *value = getenv(name);
    if (value == NULL || value[0] == '\0')
        return unset_value;
    static const char *const off[] = {"0", "off", "no", "false"};
    for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++)
        if (strcasecmp(value, off[i]) == 0)
            return 0;
    return 1;
}
