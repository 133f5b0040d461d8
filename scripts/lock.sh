#!/usr/bin/env bash
# Make requirements/lock-pyX.Y.txt anew for each claimed Python (3.11, 3.12 and 3.13; PYTHONS="3.13"
# for fewer): a fresh virtualenv made by scripts/setup.sh with LOCK=none (the newest versions
# pyproject.toml allows, with setup.sh's default extras), frozen with `pip freeze`. evo-core and
# the plugins are this checkout's (editable) and in no lock; nor are pip and setuptools.
#
# A lock is what scripts/setup.sh installs by default, so a new one changes every developer's
# and CI's numbers in their last bits: run .ci/run on it, and measure the documented tables
# again (docs/benchmarks.md) or say in their captions which stack they were measured on.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHONS="${PYTHONS:-3.11 3.12 3.13}"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
mkdir -p requirements
for version in $PYTHONS; do
  venv="$scratch/venv-$version"
  VENV="$venv" PYTHON="$version" LOCK=none bash scripts/setup.sh
  lock="requirements/lock-py$version.txt"
  made_on="$("$venv/bin/python" -c 'import platform as p
print(p.python_version(), p.machine(), p.system())')"
  {
    echo "# The versions scripts/setup.sh installs on Python $version by default (LOCK=none: the"
    echo "# newest allowed instead). Made by scripts/lock.sh with pip freeze on Python $made_on,"
    echo "# $(date -u +%Y-%m-%d)."
    "$venv/bin/python" -m pip freeze --exclude-editable
  } > "$lock.new"
  mv "$lock.new" "$lock"
  echo "lock: wrote $lock ($(grep -c '==' "$lock") packages)"
done
