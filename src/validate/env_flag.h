/*
 * env_flag.h - an environment variable that turns something on or off.
 */
#ifndef SDPA_CORE_ENV_FLAG_H
#define SDPA_CORE_ENV_FLAG_H

/* Whether the environment variable name is on: unset or empty gives
 * unset_value; "0", "off", "no" or "false" (in any case) give 0; any other
 * value gives 1. One reading for every boolean variable (doc/environment.md). */
int sdpa_env_flag(const char *name, int unset_value);

#endif /* SDPA_CORE_ENV_FLAG_H */
