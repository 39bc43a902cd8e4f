#!/usr/bin/env bash
# Create (or reuse) the project's virtual environment and make .venv this checkout's view of it.
#
# The environment lives in a cache folder named after the hash of requirements.lock and
# .python-version, so fresh clones on the same machine (CI included) reuse it, and a change
# of the lock builds a new one. Override the folder with SYMSCALAR_VENV_CACHE.
#
# .venv is a small environment of this checkout's own, over the shared one: a .pth file adds
# the shared site-packages (and its .pth files), another adds this checkout, which is what an
# editable install (`pip install -e .`) writes. So `.venv/bin/python`, `.venv/bin/mypy` (which
# loads symscalar.mypy_plugin) and `.venv/bin/basedpyright` import this checkout's symscalar
# from any folder. An editable install into the shared environment would instead point every
# checkout on the machine at whichever installed last. Console scripts are copied with their
# first line pointing at .venv/bin/python.
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

overlay=.venv
marker="$overlay/.symscalar-overlay"
checkout=$(pwd -P)
if [ -L "$overlay" ]; then
    rm "$overlay"  # the former layout: a link to the shared environment
elif [ -e "$overlay" ] && [ ! -f "$marker" ]; then
    echo "bootstrap: .venv exists and was not made by this script; remove it and rerun" >&2
    exit 1
fi
if [ ! -f "$marker" ] || [ "$(cat "$marker")" != "$venv $checkout" ]; then
    rm -rf "$overlay"
    "$venv/bin/python" -m venv --without-pip "$overlay"
    site=$("$overlay/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
    shared=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
    echo "import site; site.addsitedir('$shared')" > "$site/_symscalar_shared.pth"
    echo "$checkout" > "$site/symscalar_checkout.pth"
    for script in "$venv"/bin/*; do
        name=$(basename "$script")
        target="$overlay/bin/$name"
        [ -e "$target" ] && continue  # python, activate: the overlay's own
        if head -c 512 "$script" | head -n 1 | grep -Eq '^#!.*/bin/python[0-9.]*$'; then
            { echo "#!$checkout/$overlay/bin/python"; tail -n +2 "$script"; } > "$target"
            chmod +x "$target"
        else
            ln -s "$(readlink -f "$script")" "$target"
        fi
    done
    echo "$venv $checkout" > "$marker"
fi
