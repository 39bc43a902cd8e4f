#!/usr/bin/env bash
# Create (or reuse) the project's virtual environment and point .venv at it.
#
# The environment lives in a cache folder named after the hash of requirements.lock and
# .python-version, so fresh clones on the same machine (CI included) reuse it, and a change
# of the lock builds a new one. Override the folder with SYMSCALAR_VENV_CACHE.
set -euo pipefail
cd "$(dirname "$0")/.."

want=$(cat .python-version)
find_python() {
    local candidates=()
    if command -v pyenv >/dev/null 2>&1; then
        candidates+=("$(pyenv root)/versions/$want/bin/python")
    fi
    candidates+=("$HOME/.pyenv/versions/$want/bin/python" "python${want%.*}" python3)
    for py in "${candidates[@]}"; do
        if command -v "$py" >/dev/null 2>&1 && \
           [ "$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" = "${want%.*}" ]; then
            command -v "$py"
            return 0
        fi
    done
    echo "bootstrap: Python ${want%.*} not found (tried pyenv $want, python${want%.*}, python3)." >&2
    echo "bootstrap: install it, e.g. 'pyenv install $want'." >&2
    return 1
}

hash=$(cat requirements.lock .python-version | sha256sum | cut -c1-16)
cache_root=${SYMSCALAR_VENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/symscalar/venvs}
venv="$cache_root/$hash"

if [ ! -f "$venv/.complete" ]; then
    python=$(find_python)
    echo "bootstrap: creating $venv with $python (first time for this lock; torch is ~3 GB)"
    rm -rf "$venv"
    mkdir -p "$cache_root"
    "$python" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --upgrade pip
    "$venv/bin/python" -m pip install --quiet -r requirements.lock
    touch "$venv/.complete"
fi

if [ -L .venv ] || [ ! -e .venv ]; then
    ln -sfn "$venv" .venv
elif [ "$(readlink -f .venv)" != "$(readlink -f "$venv")" ]; then
    echo "bootstrap: .venv exists and is not a link to $venv; remove it and rerun" >&2
    exit 1
fi
