#!/bin/sh
# run-tests.sh - the sdpa_ze package's tests as `make check` runs them:
# installs the package with pip into a fresh virtual environment under the
# build directory (from a copy of the sources: pip writes next to them, and
# make distcheck's source tree is read-only), then runs pytest against the
# installed copy, which finds libsdpa through SDPA_LIBRARY.
#
# Environment (python/Makefile.am sets it): SDPA_PYTHON (empty: skip),
# srcdir, SDPA_BUILD_DIR, SDPA_LIBRARY, SDPA_ABI_LAYOUT, SDPA_PACKAGE_VERSION,
# plus the run environment of the C tests (the Level Zero driver, plugins).
set -eu

if [ -z "${SDPA_PYTHON:-}" ]; then
    echo "SKIP: configure found no Python with numpy, pytest and venv" \
        "(apt-get install python3-numpy python3-pytest python3-venv, then rerun configure)"
    exit 77
fi
src=$(cd "${srcdir:-.}" && pwd)
work=$SDPA_BUILD_DIR/test-venv
rm -rf "$work"
mkdir -p "$work/src"
cp -R "$src/pyproject.toml" "$src/README.md" "$src/sdpa_ze" "$work/src/"
chmod -R u+w "$work/src"  # distcheck's sources are read-only, and so would the copy be
# configure's record of where sdpa-ze is (beside the sources in an in-tree
# build, in the build tree in a VPATH one).
cp "$SDPA_BUILD_DIR/sdpa_ze/_config.py" "$work/src/sdpa_ze/"
# --system-site-packages: numpy and pytest from the system; offline install.
"$SDPA_PYTHON" -m venv --system-site-packages "$work/venv"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-index \
    --no-deps --no-build-isolation "$work/src"

cd "$work"  # not the source tree: the tests must import the installed copy
PYTHONDONTWRITEBYTECODE=1
export PYTHONDONTWRITEBYTECODE
"$work/venv/bin/python" -c '
import sys, sdpa_ze
where = sdpa_ze.__file__
assert where.startswith(sys.prefix), "sdpa_ze imported from %s, not the venv" % where
print("sdpa_ze %s from %s" % (sdpa_ze.__version__, where))'
exec "$work/venv/bin/python" -m pytest -p no:cacheprovider -q -rs "$src/tests"
