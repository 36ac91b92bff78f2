# sdpa_tools.m4 - find the build's external tools and say how to install what is missing.

# SDPA_REQUIRE_PROG(VARIABLE, PROGRAMS, DEBIAN-PACKAGE, PURPOSE)
# -----------------------------------------------------------
# Looks for the first of PROGRAMS on PATH (or takes VARIABLE from the
# environment) and stops configure with the Debian package to install when
# none is found.
AC_DEFUN([SDPA_REQUIRE_PROG], [
    AC_ARG_VAR([$1], [$4])
    AC_PATH_PROGS([$1], [$2])
    AS_IF([test -z "$$1"], [
        AC_MSG_ERROR([cannot find $2 ($4).
    Install it with: apt-get install $3
    or point configure at it with $1=/path/to/tool])
    ])
])

# SDPA_REQUIRE_PKG(VARIABLE-PREFIX, MODULE, DEBIAN-PACKAGE, PURPOSE)
# ------------------------------------------------------------------
# pkg-config check that names the package to install on failure.
AC_DEFUN([SDPA_REQUIRE_PKG], [
    PKG_CHECK_MODULES([$1], [$2], [], [
        AC_MSG_ERROR([pkg-config cannot find $2 ($4).
    Install it with: apt-get install $3])
    ])
])
