/*
 * fuzz_config.c - fuzz target: the three configuration overrides,
 * SDPA_CONFIG, QUANTIZED_SDPA_CONFIG (8 integers) and BWD_SDPA_CONFIG (12),
 * through sdpa_config_parse_ints and through the environment.
 *
 * The oracle is an independent reading of config_env.h's grammar: exactly
 * N items separated by commas, each an optionally signed run of decimal
 * digits with spaces or tabs around it, every value in 1..1024; an empty
 * variable is unset. Whatever the text (up to 1 MiB), the parser must agree
 * on accept/refuse and on the values, refuse with SDPA_ERROR_INVALID_CONFIG
 * and a message naming the variable, and never read past the text.
 */
#define _XOPEN_SOURCE 700 /* putenv */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config_env.h"
#include "error.h"
#include "fuzz.h"

/* What the inputs reached. */
static unsigned long long parsed, accepted, longest;

/* Bytes become mostly the characters the grammar is about. */
static char to_char(uint8_t b)
{
    static const char common[] = "01234567890123456789,,,,,   \t++--";
    static const char rare[] = "x.e;/\n\r\x7f\x80\xff";
    if (b < 240)
        return common[b % (sizeof(common) - 1)];
    return rare[b % (sizeof(rare) - 1)];
}

/* A text from the input: raw characters, or n well-formed items with
 * occasional damage (so that acceptance is reached often). */
static char *make_text(fuzz_input_t *in)
{
    uint8_t mode = fuzz_u8(in) % 4;
    size_t rest = in->size - in->pos;
    char *text = malloc(rest * 8 + 256); /* an item takes at most 9 chars */
    if (!text)
        fuzz_fail("out of memory");
    size_t n = 0;
    if (mode < 2) {
        while (in->pos < in->size)
            text[n++] = to_char(fuzz_u8(in));
    } else {
        int items = mode == 2 ? SDPA_FWD_CONFIG_INTS : SDPA_BWD_CONFIG_INTS;
        items += (int)(fuzz_u8(in) % 16 == 0) - (int)(fuzz_u8(in) % 16 == 0);
        for (int i = 0; i < items; i++) {
            uint8_t style = fuzz_u8(in);
            if (style & 1)
                text[n++] = ' ';
            if (style & 2)
                text[n++] = (style & 0x70) == 0x70 ? '-' : '+';
            unsigned value = (fuzz_u8(in) | (unsigned)fuzz_u8(in) << 8) % 1030;
            value += (style & 0x80) == 0; /* 0 sometimes, 1025..1029 rarely */
            n += (size_t)sprintf(text + n, "%u", value);
            if (style & 8)
                text[n++] = '\t';
            if (style == 0xff)
                text[n++] = to_char(fuzz_u8(in));
            if (i + 1 < items)
                text[n++] = ',';
        }
    }
    text[n] = '\0';
    return text;
}

/* The grammar, read independently: 1 and the values if text is N valid items. */
static int oracle(const char *text, int count, int *values)
{
    int items = 0;
    const char *p = text;
    for (;;) {
        const char *end = strchr(p, ',');
        if (!end)
            end = p + strlen(p);
        while (p < end && (*p == ' ' || *p == '\t'))
            p++;
        const char *last = end;
        while (last > p && (last[-1] == ' ' || last[-1] == '\t'))
            last--;
        int negative = 0;
        if (p < last && (*p == '+' || *p == '-'))
            negative = *p++ == '-';
        if (p == last)
            return 0;
        long value = 0;
        for (; p < last; p++) {
            if (*p < '0' || *p > '9')
                return 0;
            if (value <= SDPA_CONFIG_VALUE_MAX)
                value = value * 10 + (*p - '0');
        }
        if (negative || value < 1 || value > SDPA_CONFIG_VALUE_MAX || items == count)
            return 0;
        values[items++] = (int)value;
        if (*end == '\0')
            break;
        p = end + 1;
    }
    return items == count;
}

static void check_refusal(sdpa_status_t status, const char *name, const char *text)
{
    if (status != SDPA_ERROR_INVALID_CONFIG)
        fuzz_fail("%s = \"%.80s\": refused with status %d", name, text, (int)status);
    if (strncmp(sdpa_error_message(), name, strlen(name)) != 0 ||
        strstr(sdpa_error_message(), "expected") == NULL)
        fuzz_fail("%s: message \"%.200s\" does not name the variable and the format", name,
                  sdpa_error_message());
}

/* sdpa_config_parse_ints against the oracle. */
static void check_parse(const char *name, const char *text, int count)
{
    int want[SDPA_BWD_CONFIG_INTS], got[SDPA_BWD_CONFIG_INTS];
    int ok = oracle(text, count, want);
    sdpa_status_t status = sdpa_config_parse_ints(name, text, "format", got, count);
    if (ok != (status == SDPA_SUCCESS))
        fuzz_fail("%s = \"%.200s\" (%zu bytes): parser %s, oracle %s", name, text, strlen(text),
                  status == SDPA_SUCCESS ? "accepts" : "refuses", ok ? "accepts" : "refuses");
    parsed++;
    accepted += ok;
    if (!ok)
        check_refusal(status, name, text);
    else if (memcmp(want, got, (size_t)count * sizeof(int)) != 0)
        fuzz_fail("%s = \"%.200s\": values differ from the oracle's", name, text);
}

/* The same through the environment and the readers the backend calls. */
static void check_env(const char *text)
{
    static const char *const names[3] = {"SDPA_CONFIG", "QUANTIZED_SDPA_CONFIG", "BWD_SDPA_CONFIG"};
    for (int v = 0; v < 3; v++) {
        int count = v == 2 ? SDPA_BWD_CONFIG_INTS : SDPA_FWD_CONFIG_INTS;
        int want[SDPA_BWD_CONFIG_INTS], got[SDPA_BWD_CONFIG_INTS];
        int ok = text[0] == '\0' || oracle(text, count, want);
        /* putenv with our own string: setenv would keep a copy of every
         * value for the life of the process (glibc never frees them). */
        size_t name_length = strlen(names[v]), length = strlen(text);
        char *entry = malloc(name_length + length + 2);
        if (!entry)
            fuzz_fail("out of memory");
        memcpy(entry, names[v], name_length);
        entry[name_length] = '=';
        memcpy(entry + name_length + 1, text, length + 1);
        putenv(entry);
        int found = -1;
        sdpa_status_t status;
        if (v < 2) {
            sdpa_fwd_config_t config;
            const char *name = NULL;
            status = sdpa_fwd_config_from_env(v == 1, &config, &found, &name);
            if (!name || strcmp(name, names[v]) != 0)
                fuzz_fail("%s: the reader names %s", names[v], name ? name : "nothing");
            if (status == SDPA_SUCCESS && found)
                sdpa_fwd_config_to_ints(&config, got);
        } else {
            sdpa_bwd_config_t config;
            status = sdpa_bwd_config_from_env(&config, &found);
            if (status == SDPA_SUCCESS && found)
                sdpa_bwd_config_to_ints(&config, got);
        }
        unsetenv(names[v]);
        free(entry);
        if (ok != (status == SDPA_SUCCESS))
            fuzz_fail("$%s = \"%.200s\": reader %s, oracle %s", names[v], text,
                      status == SDPA_SUCCESS ? "accepts" : "refuses", ok ? "accepts" : "refuses");
        if (!ok)
            check_refusal(status, names[v], text);
        else if (found != (text[0] != '\0'))
            fuzz_fail("$%s = \"%.200s\": found = %d", names[v], text, found);
        else if (found && memcmp(want, got, (size_t)count * sizeof(int)) != 0)
            fuzz_fail("$%s = \"%.200s\": values differ from the oracle's", names[v], text);
    }
}

const char *fuzz_stats(void)
{
    static char text[160];
    snprintf(text, sizeof(text), "%llu values parsed, %llu accepted, longest %llu bytes", parsed,
             accepted, longest);
    return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_input_t in = {data, size, 0};
    char *text = make_text(&in);
    size_t length = strlen(text);
    if (length > longest)
        longest = length;
    check_parse("SDPA_CONFIG", text, SDPA_FWD_CONFIG_INTS);
    check_parse("BWD_SDPA_CONFIG", text, SDPA_BWD_CONFIG_INTS);
    check_env(text);
    free(text);
    return 0;
}
