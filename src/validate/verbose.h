/*
 * verbose.h - SDPA_VERBOSE, the diagnostic trace on stderr (like oneDNN's
 * ONEDNN_VERBOSE): 1 prints one line per primitive creation and execution
 * and one per refused call (oneDNN's "check"), 2 adds module builds,
 * persistent-cache hits, misses and stores, scratch allocations and each
 * context's cache directory, 3 (or "profile") adds the device time of each
 * execution's kernels, from Level Zero timestamps written around them on
 * the list they were appended to. Unset or 0: nothing, and the cost of one
 * load and compare per call (the variable is read once per process).
 *
 * Every line is "sdpa_verbose," followed by comma-separated fields; only
 * the last field of a line may contain commas or spaces (a configuration
 * string, a path, a reason), so a reader splits on the first n commas. The
 * lines (sdpa.h documents them for users):
 *
 *   sdpa_verbose,info,<package and version>,SDPA_VERBOSE=<level>
 *   sdpa_verbose,create,<backend>,<device>,<problem>,<modules>,<ms>,<config>
 *   sdpa_verbose,exec,<backend>,<device>,<problem>,<list>,<ms>,<config>
 *   sdpa_verbose,refused,<backend>,<call>,<status>,<message>
 *   sdpa_verbose,kernel,<backend>,<device>,<problem>,<list>,<ms>,<config>  (3)
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

/* The level that adds the kernels' device time ("kernel" lines). */
#define SDPA_VERBOSE_PROFILE 3

/* The level SDPA_VERBOSE asked for (0 to 3, "profile" is 3; a malformed
 * value is 0, larger values are 3). Read on the first call, then a cached
 * load. */
int sdpa_verbose_level(void);

/* At level 1 and above, a "refused" line for a call (e.g.
 * "primitive_create") of backend that returned status, with the message
 * it set; nothing for SDPA_SUCCESS. Returns status. */
sdpa_status_t sdpa_verbose_refusal(const char *backend, const char *call, sdpa_status_t status);

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
