"""The ``python -m symscalar`` command line.

``python -m symscalar check PATH...`` type-checks code with mypy, the symscalar plugin and the
flags it relies on (see docs/mypy.md). ``python -m symscalar export-static-params`` regenerates
``symscalar/_static_params.py``, the static/dynamic table of every op that the plugin reads.
"""

from __future__ import annotations

import argparse
import importlib
import pathlib
import sys
import tempfile
from collections.abc import Sequence

__all__ = ["main", "check", "static_params_source", "mypy_config", "RECOMMENDED"]

# The mypy settings `check` uses (and docs/mypy.md recommends): the plugin, and mypy's
# truthy-bool, which flags `if d:` / `not d` / `d and ...` on a dynamic value.
RECOMMENDED = {
    "plugins": "symscalar.mypy_plugin",
    "enable_error_code": "truthy-bool",
}

STATIC_PARAMS_PATH = pathlib.Path(__file__).with_name("_static_params.py")

_HEADER = '''"""The static/dynamic contract of every op, for the mypy plugin (which must not import torch).

Generated from ``symscalar.tracing.OPS`` by ``python -m symscalar export-static-params``; do not
edit. ``tests/test_mypy_static_params.py`` fails when this file is stale.
"""

# op name -> (parameter names in order, the static ones, how many can be passed positionally)
STATIC_PARAMS: dict[str, tuple[tuple[str, ...], tuple[str, ...], int]] = '''


def static_params_source() -> str:
    """The text of ``symscalar/_static_params.py`` for the ops registered now."""
    importlib.import_module("symscalar.ops")
    tracing = importlib.import_module("symscalar.tracing")
    table = {
        name: (sig.params, sig.static, sig.positional)
        for name, sig in sorted(tracing.OPS.items())
    }
    lines = [f"    {name!r}: {entry!r}," for name, entry in table.items()]
    return _HEADER + "{\n" + "\n".join(lines) + "\n}\n"


def mypy_config(plugin: bool = True, **extra: str) -> str:
    """A mypy ini config with the recommended settings (without the plugin if not
    ``plugin``: what plain typing, e.g. Pyright, already catches) plus ``extra``."""
    settings = dict(RECOMMENDED, **extra)
    if not plugin:
        del settings["plugins"]
    return "[mypy]\n" + "".join(f"{key} = {value}\n" for key, value in settings.items())


def check(paths: Sequence[str], extra: Sequence[str] = ()) -> int:
    """Run mypy with the plugin over ``paths``; print its report; return its exit status.

    mypy takes plugins from a config file only, so the recommended settings are written to a
    temporary one (a project's own ``[tool.mypy]`` is not read: pass ``--mypy-arg`` flags).
    """
    api = importlib.import_module("mypy.api")
    with tempfile.TemporaryDirectory() as tmp:
        config = pathlib.Path(tmp, "mypy.ini")
        config.write_text(mypy_config())
        stdout, stderr, status = api.run(["--config-file", str(config), *extra, *paths])
    sys.stdout.write(stdout)
    sys.stderr.write(stderr)
    return int(status)


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m symscalar``."""
    parser = argparse.ArgumentParser(prog="python -m symscalar", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    check_cmd = commands.add_parser(
        "check", help="type-check PATHs with mypy and the symscalar plugin"
    )
    check_cmd.add_argument("paths", nargs="+", metavar="PATH")
    check_cmd.add_argument(
        "--mypy-arg", action="append", default=[], metavar="ARG",
        help="an extra argument for mypy, e.g. --mypy-arg=--strict (repeatable)",
    )
    export = commands.add_parser(
        "export-static-params", help="regenerate symscalar/_static_params.py from the op registry"
    )
    export.add_argument(
        "--check", action="store_true", help="exit 1 if the file is stale instead of writing it"
    )
    args = parser.parse_args(argv)
    if args.command == "check":
        return check(args.paths, args.mypy_arg)
    text = static_params_source()
    if args.check:
        stale = not STATIC_PARAMS_PATH.exists() or STATIC_PARAMS_PATH.read_text() != text
        if stale:
            print(f"{STATIC_PARAMS_PATH} is stale: run `python -m symscalar export-static-params`")
        return int(stale)
    STATIC_PARAMS_PATH.write_text(text)
    print(f"wrote {STATIC_PARAMS_PATH} ({text.count(': ((')} ops)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
