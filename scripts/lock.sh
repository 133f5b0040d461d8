#!/usr/bin/env bash
# Make requirements/lock-pyX.Y.txt anew for each claimed Python: a fresh virtualenv made by
# scripts/setup.sh, frozen with `pip freeze`. evo-core and the plugins are this checkout's
# (editable) and in no lock; nor are pip and setuptools.
#
# The oldest claimed Python, 3.11, gets the newest versions pyproject.toml allows (LOCK=none,
# with setup.sh's default extras). The newer ones get the newest allowed too, except the numeric
# stack (numpy, pycma, gymnasium, jax, jaxlib: evo_core.results.provenance.NUMERIC_STACK), which
# is pinned to 3.11's: a seed then gives the same run on every claimed Python
# (tests/test_stack.py checks that the locks agree on it). PYTHONS="3.12 3.13" remakes some
# only, taking the numeric stack from the 3.11 lock as it is; list them oldest first.
#
# A lock is what scripts/setup.sh installs by default, so a new one changes every developer's
# and CI's numbers in their last bits: run .ci/run on it, and measure the documented tables
# again (docs/benchmarks.md) or say in their captions which stack they were measured on.
set -euo pipefail
cd "$(dirname "$0")/.."
OLDEST=3.11
PYTHONS="${PYTHONS:-3.11 3.12 3.13}"
NUMERIC="numpy|cma|gymnasium|jax|jaxlib"  # NUMERIC_STACK, as pip freeze spells the names
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir -p requirements
for version in $PYTHONS; do
  venv="$scratch/venv-$version"
  if [ "$version" = "$OLDEST" ]; then
    lock_with=none
  else
    lock_with="$scratch/numeric-stack.txt"
    grep -E "^($NUMERIC)==" "requirements/lock-py$OLDEST.txt" > "$lock_with"
  fi
  VENV="$venv" PYTHON="$version" LOCK="$lock_with" bash scripts/setup.sh
  lock="requirements/lock-py$version.txt"
  made_on="$("$venv/bin/python" -c 'import platform as p
print(p.python_version(), p.machine(), p.system())')"
  {
    echo "# The versions scripts/setup.sh installs on Python $version by default (LOCK=none: the"
    echo "# newest allowed instead). Made by scripts/lock.sh with pip freeze on Python $made_on,"
    echo "# $(date -u +%Y-%m-%d); numpy, cma, gymnasium, jax and jaxlib as on Python $OLDEST."
    "$venv/bin/python" -m pip freeze --exclude-editable
  } > "$lock.new"
  mv "$lock.new" "$lock"
  echo "lock: wrote $lock ($(grep -c '==' "$lock") packages)"
done
