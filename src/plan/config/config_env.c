/* config_env.c - strict parsing of the configuration overrides. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_env.h"
#include "error.h"

/* Longest part of a value quoted in a message. */
#define QUOTE_MAX 120

static int is_space(char c)
{
    return c == ' ' || c == '\t';
}

/* A copy of text fit to quote: non-printable bytes become '?', long values
 * are cut with "...". */
static void quote(const char *text, char *buf, size_t size)
{
    size_t n = 0;
    for (; text[n] && n + 4 < size && n < QUOTE_MAX; n++) {
        unsigned char c = (unsigned char)text[n];
        buf[n] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    buf[n] = '\0';
    if (text[n])
        strcpy(buf + n, "...");
}

/* Reads one item, text[begin..end) with surrounding spaces allowed, as an
 * optionally signed decimal integer. Returns 0 if it is not one; otherwise
 * stores it in *value, saturated to +-(SDPA_CONFIG_VALUE_MAX + 1) so that an
 * overflowing item still reads as out of range. */
static int parse_item(const char *text, size_t begin, size_t end, long *value)
{
    while (begin < end && is_space(text[begin]))
        begin++;
    while (end > begin && is_space(text[end - 1]))
        end--;
    int negative = 0;
    if (begin < end && (text[begin] == '-' || text[begin] == '+'))
        negative = text[begin++] == '-';
    if (begin == end)
        return 0;
    long v = 0;
    for (size_t i = begin; i < end; i++) {
        if (text[i] < '0' || text[i] > '9')
            return 0;
        if (v <= SDPA_CONFIG_VALUE_MAX)
            v = v * 10 + (text[i] - '0');
    }
    if (v > SDPA_CONFIG_VALUE_MAX)
        v = SDPA_CONFIG_VALUE_MAX + 1;
    *value = negative ? -v : v;
    return 1;
}

sdpa_status_t sdpa_config_parse_ints(const char *name, const char *text, const char *format,
                                     int *values, int count)
{
    int parsed[SDPA_BWD_CONFIG_INTS > SDPA_FWD_CONFIG_INTS ? SDPA_BWD_CONFIG_INTS
                                                           : SDPA_FWD_CONFIG_INTS];
    if (count < 1 || count > (int)(sizeof(parsed) / sizeof(parsed[0])))
        return sdpa_fail(SDPA_ERROR_INVALID_ARGUMENT, "count = %d: cannot parse %s", count, name);
    char quoted[QUOTE_MAX + 8];
    quote(text, quoted, sizeof(quoted));
#define CONFIG_FAIL(why_format, ...)                                                               \
    sdpa_fail(SDPA_ERROR_INVALID_CONFIG,                                                           \
              "%s = \"%s\": " why_format                                                           \
              "; expected %d integers in 1..%d separated by commas: %s",                           \
              name, quoted, __VA_ARGS__, count, SDPA_CONFIG_VALUE_MAX, format)

    int items = 1;
    for (const char *p = text; *p; p++)
        items += *p == ',';
    if (items != count)
        return CONFIG_FAIL("it has %d item%s", items, items == 1 ? "" : "s");

    size_t begin = 0;
    for (int i = 0; i < count; i++) {
        size_t end = begin;
        while (text[end] && text[end] != ',')
            end++;
        char raw[QUOTE_MAX + 1], item[QUOTE_MAX + 8];
        size_t len = end - begin < QUOTE_MAX ? end - begin : QUOTE_MAX;
        memcpy(raw, text + begin, len);
        raw[len] = '\0';
        quote(raw, item, sizeof(item));
        long v;
        if (!parse_item(text, begin, end, &v))
            return CONFIG_FAIL("item %d (\"%s\") is not a decimal integer", i + 1, item);
        if (v < 1)
            return CONFIG_FAIL("item %d (\"%s\") is not positive", i + 1, item);
        if (v > SDPA_CONFIG_VALUE_MAX)
            return CONFIG_FAIL("item %d (\"%s\") is larger than %d", i + 1, item,
                               SDPA_CONFIG_VALUE_MAX);
        parsed[i] = (int)v;
        begin = end + 1;
    }
#undef CONFIG_FAIL
    memcpy(values, parsed, (size_t)count * sizeof(int));
    return SDPA_SUCCESS;
}

sdpa_status_t sdpa_fwd_config_from_env(int quantized, sdpa_fwd_config_t *out, int *found,
                                       const char **name)
{
    const char *var = quantized ? "QUANTIZED_SDPA_CONFIG" : "SDPA_CONFIG";
    if (name)
        *name = var;
    *found = 0;
    const char *text = getenv(var);
    if (!text || !*text)
        return SDPA_SUCCESS;
    int values[SDPA_FWD_CONFIG_INTS];
    sdpa_status_t status =
            sdpa_config_parse_ints(var, text, SDPA_FWD_CONFIG_FORMAT, values, SDPA_FWD_CONFIG_INTS);
    if (status != SDPA_SUCCESS)
        return status;
    sdpa_fwd_config_from_ints(values, out);
    *found = 1;
    return SDPA_SUCCESS;
}

sdpa_status_t sdpa_bwd_config_from_env(sdpa_bwd_config_t *out, int *found)
{
    *found = 0;
    const char *text = getenv("BWD_SDPA_CONFIG");
    if (!text || !*text)
        return SDPA_SUCCESS;
    int values[SDPA_BWD_CONFIG_INTS];
    sdpa_status_t status = sdpa_config_parse_ints("BWD_SDPA_CONFIG", text, SDPA_BWD_CONFIG_FORMAT,
                                                  values, SDPA_BWD_CONFIG_INTS);
    if (status != SDPA_SUCCESS)
        return status;
    sdpa_bwd_config_from_ints(values, out);
    *found = 1;
    return SDPA_SUCCESS;
}
