#!/usr/bin/env bash
# Create .venv (if missing) and install evo-core and the brain plugins from this checkout.
# Needs only Python >= 3.11 with venv and pip, and the package registry.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
plugins=()
for dir in plugins/*/; do
  [ -f "$dir/pyproject.toml" ] && plugins+=(-e "$dir")
done
# every environment extra too, so that the tests cover Box2D, MuJoCo and Atari; and the jax extra
# (jax, gymnax; evo-jax itself is one of the plugins above) and brax, for evo-jax's tests
.venv/bin/python -m pip install --quiet -e ".[test,render,dask,pandas,all,jax]" "${plugins[@]}" \
  "brax>=0.12"  # evo-jax[brax], for the brax/... test
