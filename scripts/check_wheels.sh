#!/usr/bin/env bash
# Every distribution (evo-core and each plugins/*) built as a wheel, and those wheels alone
# installed into a fresh virtualenv make the evo of this checkout: CI runs this after the suite.
#
# From a copy of the working tree as a clone holds it (tracked files and untracked ones git
# does not ignore: no build folder or egg-info of an editable install is seen, nothing is
# written into the checkout), each distribution is built as `python -m build` builds it, an
# sdist and then the wheel from the unpacked sdist (a file missing from the sdist fails the
# build), by one build virtualenv holding `build` and the distributions' `[build-system]
# requires`. A fresh virtualenv then installs the wheels, their dependencies coming from the
# package registry at the versions of the lock for its Python (requirements/lock-pyX.Y.txt),
# and `--find-links` the wheels' folder, so no distribution of evo comes from anywhere else.
# Its `evo list-brains` (and list-optimizers, -handlers, -trackers, -wrappers, -vectorizers)
# must list exactly what the checkout's virtualenv lists from this checkout's distributions,
# each loaded without error; and it trains two generations. Everything is made in a temporary
# folder, removed at the end.
#
# VENV=DIR names the checkout's virtualenv (default .venv, made by scripts/setup.sh): its Python
# builds and makes the fresh virtualenv, and its `evo` is the reference.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-.venv}"
python="$VENV/bin/python"
version="$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
lock="requirements/lock-py$version.txt"
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
pip_quiet=(--quiet --disable-pip-version-check)

# the distributions: the root's and every plugin folder's pyproject.toml
folders=(.)
for dir in plugins/*/; do
  [ -f "$dir/pyproject.toml" ] && folders+=("${dir%/}")
done

mkdir "$scratch/tree"
git ls-files -z --cached --others --exclude-standard \
  | tar --null --files-from=- --ignore-failed-read -cf - | tar -xf - -C "$scratch/tree"

requires="$("$python" - "$scratch/tree" "${folders[@]}" <<'EOF'
import sys, tomllib
from pathlib import Path
root = Path(sys.argv[1])
found = set()
for folder in sys.argv[2:]:
    with open(root / folder / "pyproject.toml", "rb") as handle:
        found.update(tomllib.load(handle)["build-system"]["requires"])
print("\n".join(sorted(found)))
EOF
)"
"$python" -m venv "$scratch/build-env"
mapfile -t requirements <<< "$requires"
"$scratch/build-env/bin/python" -m pip install "${pip_quiet[@]}" build "${requirements[@]}"
for folder in "${folders[@]}"; do
  "$scratch/build-env/bin/python" -m build --no-isolation --outdir "$scratch/dist" \
    "$scratch/tree/$folder" > "$scratch/build.log" 2>&1 || {
      cat "$scratch/build.log" >&2; echo "check_wheels: $folder does not build" >&2; exit 1; }
done
wheels=("$scratch"/dist/*.whl)
if [ "${#wheels[@]}" -ne "${#folders[@]}" ]; then
  echo "check_wheels: ${#folders[@]} distributions gave ${#wheels[@]} wheels" >&2
  exit 1
fi
echo "check_wheels: built ${#wheels[@]} wheels: $(cd "$scratch/dist" && echo *.whl)"

"$python" -m venv "$scratch/fresh"
constraint=()
[ -f "$lock" ] && constraint=(--constraint "$lock")
"$scratch/fresh/bin/python" -m pip install "${pip_quiet[@]}" "${constraint[@]}" \
  --find-links "$scratch/dist" "${wheels[@]}"

# the listings of both, from the fresh virtualenv's folder so that nothing of the checkout
# is importable there
for kind in brains optimizers handlers trackers wrappers vectorizers; do
  "$VENV/bin/evo" "list-$kind" --json > "$scratch/checkout-$kind.json"
  (cd "$scratch" && fresh/bin/evo "list-$kind" --json > "$scratch/fresh-$kind.json")
done
"$python" - "$scratch" "${folders[@]}" <<'EOF'
import json, sys, tomllib
from pathlib import Path
scratch = Path(sys.argv[1])
ours = set()
for folder in sys.argv[2:]:
    with open(Path(folder) / "pyproject.toml", "rb") as handle:
        ours.add(tomllib.load(handle)["project"]["name"])
failed = False
for kind in ("brains", "optimizers", "handlers", "trackers", "wrappers", "vectorizers"):
    def rows(side: str) -> set[tuple[str, str, str, str]]:
        listed = json.loads((scratch / f"{side}-{kind}.json").read_text())
        return {(row["name"], row["distribution"], row["version"], row["status"])
                for row in listed if row["distribution"] in ours}
    checkout, fresh = rows("checkout"), rows("fresh")
    broken = sorted(row for row in fresh if row[3] != "ok")
    if fresh != checkout or broken or not fresh:
        failed = True
        print(f"check_wheels: evo list-{kind} from the wheels differs from the checkout's: "
              f"missing {sorted(checkout - fresh)}, extra {sorted(fresh - checkout)}, "
              f"not ok {broken}", file=sys.stderr)
    else:
        print(f"check_wheels: list-{kind}: {', '.join(sorted(row[0] for row in fresh))}")
sys.exit(1 if failed else 0)
EOF

cat > "$scratch/c.toml" <<'EOF'
environment = "CartPole-v1"
generations = 2
[brain]
type = "ctrnn"
[optimizer]
type = "cma-es"
population_size = 6
EOF
(cd "$scratch" && fresh/bin/evo train c.toml --quiet --out run > /dev/null)
[ -f "$scratch/run/fitness.png" ] || { echo "check_wheels: the trained run has no fitness.png" >&2; exit 1; }
echo "check_wheels: the wheels alone install, list what the checkout lists, and train"
