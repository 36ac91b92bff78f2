/*
 * verbose.h - SDPA_VERBOSE, the diagnostic trace on stderr (like oneDNN's
 * ONEDNN_VERBOSE): 1 prints one line per primitive creation and execution,
 * 2 adds module builds, persistent-cache hits, misses and stores, scratch
 * allocations and each context's cache directory. Unset or 0: nothing,
 * and the cost of one load and compare per call (the variable is read
 * once per process).
 *
 * Every line is "sdpa_verbose," followed by comma-separated fields; only
 * the last field of a line may contain commas or spaces (a configuration
 * string, a path, a reason), so a reader splits on the first n commas. The
 * lines (sdpa.h documents them for users):
 *
 *   sdpa_verbose,info,<package and version>,SDPA_VERBOSE=<level>
 *   sdpa_verbose,create,<backend>,<device>,<problem>,<modules>,<ms>,<config>
 *   sdpa_verbose,exec,<backend>,<device>,<problem>,<list>,<ms>,<config>
 *   sdpa_verbose,context,<backend>,<device>,<cache>                     (2)
 *   sdpa_verbose,module,<event>,<variant>,<ms>,<detail>                 (2)
 *   sdpa_verbose,scratch,alloc,<bytes>,<ms>,<detail>                    (2)
 *
 * The first line a process prints is the info line.
 */
#ifndef SDPA_CORE_VERBOSE_H
#define SDPA_CORE_VERBOSE_H

#include <stddef.h>

#include "sdpa.h"

/* The level SDPA_VERBOSE asked for (0, 1 or 2; a malformed value is 0,
 * larger values are 2). Read on the first call, then a cached load. */
int sdpa_verbose_level(void);

/* Prints "sdpa_verbose," and the formatted fields as one line on stderr
 * (one write, so lines of concurrent threads do not interleave). */
void sdpa_verbose_print(const char *format, ...) __attribute__((format(printf, 1, 2)));

/* Milliseconds on a monotonic clock, for the <ms> fields. */
double sdpa_verbose_now_ms(void);

/* The compact problem string of a checked problem, e.g.
 * "fwd_inf:b1:hq32:hkv8:sq1024:sk1024:d128:qkvo=f16.f16.f16.f16:mask=causal_tl:scale=host":
 * tokens joined by ':', no commas or spaces (sdpa.h lists the tokens).
 * Returns out. */
char *sdpa_verbose_problem(const sdpa_problem_desc_t *p, char *out, size_t size);

/* Copies text into out[size] with commas, newlines and other control
 * characters turned into spaces, so that a free-form name (a device name)
 * stays one field. Returns out. */
char *sdpa_verbose_field(const char *text, char *out, size_t size);

#endif /* SDPA_CORE_VERBOSE_H */
