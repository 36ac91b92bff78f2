/* name_table.c - settings given by name (name_table.h). */
#include <string.h>

#include "name_table.h"

int sdpa_name_index(const char *text, const char *const *names, size_t count)
{
    if (text == NULL || text[0] == '\0')
        return 0;
    for (size_t i = 0; i < count; i++)
        if (strcmp(text, names[i]) == 0)
            return (int)i;
    return -1;
}
