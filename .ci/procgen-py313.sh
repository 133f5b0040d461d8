#!/usr/bin/env bash
# CI on Python 3.13, the newest Python evo supports and the only one procgen-gym installs on: a
# second virtualenv with the procgen extra and the test tools, then the procgen tests and the
# predecessor's procgen configs migrated and trained for one generation. Small on purpose: the
# whole suite runs on the default Python (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-.venv-3.13}"
rm -rf "$VENV"
VENV="$VENV" PYTHON="${PYTHON313:-3.13}" EXTRAS="test,procgen" bash scripts/setup.sh
"$VENV/bin/python" -m pytest -q -p no:cacheprovider tests/test_procgen.py \
  tests/test_predecessor_migrate.py -k "procgen"
