#!/usr/bin/env bash
# Install symscalar as a user would and use it: build the sdist and the wheel, install the
# wheel into a fresh virtual environment with only its declared dependencies, then run the
# README tour, an example from the sdist and `python -m symscalar check` on a small project
# there. The repository's own environment has everything installed (numpy, thunder, ...), so
# an undeclared import or a file missing from the wheel passes every other test.
#
# Offline and quick: the fresh environment gets torch (and mypy, for the `mypy` extra) from the
# cached environment of scripts/bootstrap.sh, as symlinks to exactly the files of those
# distributions and of what they require (a .pth file adds that folder), so pip sees them
# installed and installs the wheel with --no-index: a dependency the wheel declares but the
# links lack fails the install, a module it imports but does not declare fails the import.
# (`pip install torch==2.10.0` into a fresh venv took 4 min 34 s here, downloading ~4 GB.)
#
# Usage: scripts/check_wheel.sh   (after `make setup`; CI runs it from .ci/run)
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd -P)

marker=.venv/.symscalar-overlay
if [ ! -f "$marker" ]; then
    echo "check_wheel: run 'make setup' first" >&2
    exit 1
fi
shared=$(cut -d' ' -f1 "$marker")
python="$shared/bin/python"

work=$(mktemp -d "${TMPDIR:-/tmp}/symscalar-wheel.XXXXXX")
trap 'rm -rf "$work"' EXIT
step() { printf 'check_wheel [%3ss]: %s\n' "$SECONDS" "$*"; }

# -- build, from a copy of the tree, so that no build/ or *.egg-info lands in the checkout --
step "building the sdist and the wheel"
mkdir -p "$work/src" "$work/dist"
git ls-files -co --exclude-standard -z | tar --null -T - -cf - | tar -xf - -C "$work/src"
(cd "$work/src" && "$python" -c "from setuptools import build_meta as b; b.build_sdist('$work/dist')" >/dev/null)
"$python" -m pip wheel --quiet --no-deps --no-build-isolation -w "$work/dist" "$work/src"
wheel=$(ls "$work"/dist/symscalar-*.whl)
sdist=$(ls "$work"/dist/symscalar-*.tar.gz)
step "built $(basename "$wheel") and $(basename "$sdist")"
"$python" - "$wheel" "$sdist" <<'EOF'
import sys, tarfile, zipfile
wheel, sdist = sys.argv[1:]
names = zipfile.ZipFile(wheel).namelist()
assert "symscalar/py.typed" in names, "the wheel lacks py.typed"
assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), "the wheel lacks LICENSE"
assert not [n for n in names if n.startswith(("tests/", "examples/", "benchmarks/"))], "the wheel carries non-package files"
members = {m.split("/", 1)[1] for m in tarfile.open(sdist).getnames() if "/" in m}
for wanted in ("LICENSE", "CHANGELOG.md", "README.md", "examples/quickstart.py", "docs/guide.md", "mkdocs.yml", "pyproject.toml"):
    assert wanted in members, f"the sdist lacks {wanted}"
EOF

# -- a fresh environment: the base interpreter, no site-packages of the cached one --------
step "creating a fresh virtual environment"
base_python=$("$python" -c 'import sys; print(sys._base_executable)')
"$base_python" -m venv "$work/venv"
venv_python="$work/venv/bin/python"
site=$("$venv_python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
# The links and mypy's cache of torch's stubs are kept beside the cached environment (their
# paths must not change between runs for mypy's cache to hold): a second run checks in seconds.
keep="$(dirname "$shared")/../wheel-check/$(basename "$shared")"
linked="$keep/linked"
if [ ! -f "$keep/.complete" ]; then
rm -rf "$keep"
mkdir -p "$linked"
"$python" - "$linked" torch mypy <<'EOF'
# Link the files of these distributions and of what they require (markers evaluated, extras
# left out) from this environment into the target folder, top-level entry by entry.
import importlib.metadata as md
import os
import sys
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

target, *wanted = sys.argv[1:]
seen, todo = set(), list(wanted)
while todo:
    name = canonicalize_name(todo.pop())
    if name in seen:
        continue
    seen.add(name)
    dist = md.distribution(name)
    base = str(dist.locate_file(""))
    for file in dist.files or []:
        top = file.parts[0]
        if top == ".." or top == "__pycache__":
            continue
        source, link = os.path.join(base, top), os.path.join(target, top)
        if not os.path.lexists(link):
            os.symlink(source, link)
    for req in map(Requirement, dist.requires or []):
        if req.marker is None or req.marker.evaluate({**default_environment(), "extra": ""}):
            todo.append(req.name)
print(f"check_wheel: linked {len(seen)} distributions ({', '.join(sorted(wanted))} and what they require)")
EOF
touch "$keep/.complete"
fi
echo "$linked" > "$site/_symscalar_linked_dependencies.pth"

step "installing the wheel with --no-index (its dependencies must already be there)"
"$venv_python" -m pip install --quiet --no-index --disable-pip-version-check "${wheel}[mypy]"
"$venv_python" -m pip check --disable-pip-version-check

# -- use it, from a folder outside the checkout -------------------------------------------
run_dir="$work/user"
mkdir -p "$run_dir"
cd "$run_dir"
export PYTHONPATH="" PYTHONNOUSERSITE=1
step "import symscalar: version and location"
"$venv_python" - "$repo" <<'EOF'
import sys, tomllib, pathlib
import symscalar
repo = pathlib.Path(sys.argv[1])
assert symscalar.__file__.startswith(sys.prefix), f"symscalar came from {symscalar.__file__}, not the venv"
version = tomllib.loads((repo / "pyproject.toml").read_text())["project"]["version"]
assert symscalar.__version__ == version, (symscalar.__version__, version)
for absent in ("numpy", "thunder", "transformers"):
    try:
        __import__(absent)
    except ImportError:
        continue
    raise AssertionError(f"{absent} is importable in the fresh environment: it is not clean")
print(f"check_wheel: symscalar {symscalar.__version__} from {symscalar.__file__}; no numpy, thunder, transformers")
EOF

step "the README tour"
"$venv_python" - "$repo/README.md" <<'EOF'
import sys
readme = open(sys.argv[1]).read()
tour = readme.split("```python\n", 1)[1].split("```", 1)[0]
exec(compile(tour, "README.md tour", "exec"), {})
EOF

step "examples/quickstart.py from the sdist"
tar -xzf "$sdist" -C "$work"
"$venv_python" "$work"/symscalar-*/examples/quickstart.py > "$work/quickstart.out"
tail -n 3 "$work/quickstart.out"

step "python -m symscalar check on a small project"
mkdir -p "$work/project"
cat > "$work/project/pyproject.toml" <<'EOF'
[project]
name = "user-project"
version = "0.0.1"
EOF
cat > "$work/project/model.py" <<'EOF'
from typing import Any

from symscalar import DynamicFloat, DynamicInt, StaticInt, ops


def good(x: Any, scale: DynamicFloat, dim: StaticInt) -> Any:
    return ops.sum(x * scale, dim)


def bad(x: Any, n: DynamicInt) -> Any:
    if n > 0:
        return ops.sum(x, n)
    return x
EOF
cd "$work/project"
set +e
MYPY_CACHE_DIR="$keep/mypy-cache" "$venv_python" -m symscalar check model.py > "$work/check.out" 2>&1
status=$?
set -e
cat "$work/check.out"
if [ "$status" -ne 1 ] || ! grep -q 'model.py:11: .*\[symscalar-dynamic-condition\]' "$work/check.out" \
    || ! grep -q 'model.py:12: .*\[symscalar-static-required\]' "$work/check.out" \
    || grep -q 'model.py:[0-7]:' "$work/check.out"; then
    echo "check_wheel: python -m symscalar check did not report exactly the two errors of bad()" >&2
    exit 1
fi
step "ok"
