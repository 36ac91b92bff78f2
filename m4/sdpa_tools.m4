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

# SDPA_CHECK_PYTHON
# -----------------
# The Python that runs the sdpa_ze package's tests (python/): the first of
# $PYTHON, python3 and /usr/bin/python3 that imports numpy, pytest and venv
# (with ensurepip). Sets SDPA_PYTHON, empty when there is none: `make check`
# then skips those tests and says what to install.
AC_DEFUN([SDPA_CHECK_PYTHON], [
    AC_ARG_VAR([PYTHON], [Python 3 with numpy, pytest and venv for the Python package's tests])
    AC_MSG_CHECKING([for a Python with numpy, pytest and venv])
    SDPA_PYTHON=
    for sdpa_candidate in ${PYTHON:-python3 /usr/bin/python3}; do
        AS_IF(["$sdpa_candidate" -c 'import numpy, pytest, venv, ensurepip' >/dev/null 2>&1], [
            SDPA_PYTHON=`command -v "$sdpa_candidate"`
            break
        ])
    done
    AC_MSG_RESULT([${SDPA_PYTHON:-none (apt-get install python3-numpy python3-pytest python3-venv)}])
    AC_SUBST([SDPA_PYTHON])
])
