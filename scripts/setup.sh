#!/usr/bin/env bash
# Create a virtualenv (default .venv; VENV=DIR for another) and install evo-core and the brain
# plugins from this checkout. Needs only Python 3.11 to 3.13 with venv and pip, and the
# package registry.
#
# Which Python: the one named by PYTHON=... (a command, a path, or a version such as 3.13,
# looked for as below), else the newest of 3.13,
# 3.12, 3.11 found as pythonX.Y on PATH or installed by pyenv (even when not pyenv's active
# version), else python3. It says which. Python 3.13 adds procgen (evo/Procgen-v0, the procgen extra); every other extra
# installs on all three. An existing venv keeps its Python (delete it to change it); its
# packages are brought to the lock.
#
# EXTRAS=... replaces the extras installed (default: everything the tests cover).
#
# Which versions: by default the locked ones, requirements/lock-pyX.Y.txt for the venv's Python
# (every dependency pinned; scripts/lock.sh makes them), so that a seed gives the same run to the
# last bit wherever the same lock runs on the same Python. LOCK=none installs the newest versions
# pyproject.toml allows instead (what a new lock is made from); LOCK=FILE installs under another
# constraints file (absolute, or from the checkout's root). The venv remembers which, in
# $VENV/evo-lock, for tests/project/test_stack.py.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-.venv}"
EXTRAS="${EXTRAS:-test,render,dask,pandas,all,jax,onnx}"

version_of() {  # "3.12" for a Python command, nothing if it does not run
  "$1" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true
}

candidates() {  # pythonX.Y on PATH, then pyenv's installs of X.Y, for each X.Y given; python3
  local root="${PYENV_ROOT:-$HOME/.pyenv}" minor found
  for minor in "$@"; do
    echo "python$minor"
    for found in $(ls -d "$root"/versions/"$minor".*/bin/python"$minor" 2>/dev/null | sort -rV); do
      echo "$found"
    done
  done
  echo python3
}

suitable() {  # whether version $1 is one evo supports (3.11 to 3.13)
  case "$1" in 3.11|3.12|3.13) return 0 ;; *) return 1 ;; esac
}

find_python() {  # the first suitable candidate for the versions given, or nothing
  local candidate
  for candidate in $(candidates "$@"); do
    if suitable "$(version_of "$candidate")"; then
      echo "$candidate"
      return
    fi
  done
}

if [[ "${PYTHON:-}" =~ ^3\.[0-9]+$ ]]; then
  python="$(find_python "$PYTHON")"
  version="$(version_of "${python:-false}")"
  if [ "$version" != "$PYTHON" ]; then
    echo "setup: no Python $PYTHON found (python$PYTHON on PATH or pyenv's versions; evo" \
         "needs 3.11 to 3.13); install it, or name it with PYTHON=/path/to/python" >&2
    exit 2
  fi
  why="version named by PYTHON"
elif [ -n "${PYTHON:-}" ]; then
  python="$PYTHON"
  version="$(version_of "$python")"
  if ! suitable "$version"; then
    echo "setup: PYTHON=$python is ${version:-not a working Python}; evo needs Python 3.11 to 3.13" >&2
    exit 2
  fi
  why="named by PYTHON"
else
  python="$(find_python 3.13 3.12 3.11)"
  version="$(version_of "${python:-false}")"
  if [ -z "$python" ]; then
    echo "setup: no Python 3.11 to 3.13 found (pythonX.Y on PATH, pyenv's versions," \
         "python3); install one, or name it with PYTHON=/path/to/python" >&2
    exit 2
  fi
  why="the newest suitable one found"
fi

if [ -x "$VENV/bin/python" ]; then
  echo "setup: keeping $VENV (Python $(version_of "$VENV/bin/python")); delete it to use" \
       "$python (Python $version, $why)"
else
  echo "setup: using $python (Python $version, $why) for $VENV"
  "$python" -m venv "$VENV"
fi
venv_version="$(version_of "$VENV/bin/python")"
case "${LOCK:-}" in
  none) lock=() ; lock_file=none ;;
  "") lock_file="requirements/lock-py${venv_version}.txt" ;;
  *) lock_file="$LOCK" ;;
esac
if [ "$lock_file" != none ]; then
  if [ ! -f "$lock_file" ]; then
    echo "setup: no lock file $lock_file for Python $venv_version; make one with" \
         "scripts/lock.sh, or install the newest allowed versions with LOCK=none" >&2
    exit 2
  fi
  echo "setup: installing the versions locked in $lock_file (LOCK=none: the newest allowed)"
  lock=(--constraint "$lock_file")
else
  echo "setup: installing the newest versions pyproject.toml allows (LOCK=none), not a lock"
fi
"$VENV/bin/python" -m pip install --quiet --upgrade pip
plugins=()
for dir in plugins/*/; do
  [ -f "$dir/pyproject.toml" ] && plugins+=(-e "$dir")
done
# every environment extra too, so that the tests cover Box2D, MuJoCo and Atari (and procgen on
# Python 3.13: the extra's marker skips it below); and the jax extra (jax, gymnax; evo-jax itself
# is one of the plugins above) with brax (evo-jax[brax]) for evo-jax's brax/... test
more=()
case ",$EXTRAS," in *,jax,*) more+=("brax>=0.12") ;; esac
"$VENV/bin/python" -m pip install --quiet "${lock[@]}" -e ".[$EXTRAS]" "${plugins[@]}" \
  "${more[@]}"
echo "$lock_file" > "$VENV/evo-lock"
