/*
 * fuzz_libfuzzer.c - fuzz.h's failure report for the libFuzzer builds (`make
 * fuzz`): print and abort; libFuzzer then saves the input as crash-<sha1>.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "fuzz.h"

void fuzz_fail(const char *format, ...)
{
    va_list ap;
    va_start(ap, format);
    fprintf(stderr, "oracle failure: ");
    vfprintf(stderr, format, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    abort();
}
