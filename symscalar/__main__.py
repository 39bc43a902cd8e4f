"""The ``python -m symscalar`` command line.

``python -m symscalar check [PATH...]`` type-checks code with mypy, the project's own mypy
configuration (found as mypy finds it: mypy.ini, .mypy.ini, pyproject.toml, setup.cfg), the
symscalar plugin and the flags it relies on (see docs/mypy.md). ``python -m symscalar export-static-params`` regenerates
``symscalar/_static_params.py``, the static/dynamic table of every op that the plugin reads.
``python -m symscalar lint-thunder script.py::fn`` checks lightning-thunder's traces against that
table (see docs/thunder_lint.md).
"""

from __future__ import annotations

import argparse
import configparser
import contextlib
import importlib
import importlib.util
import io
import pathlib
import sys
import tempfile
from collections.abc import Mapping, Sequence
from typing import Any

from symscalar.errors import MissingDependencyError

if sys.version_info >= (3, 11):
    import tomllib
else:  # mypy itself depends on tomli before 3.11
    import tomli as tomllib

__all__ = [
    "main",
    "check",
    "lint_thunder",
    "static_params_source",
    "mypy_config",
    "find_mypy_config",
    "project_mypy_config",
    "RECOMMENDED",
]

# The mypy settings `check` uses (and docs/mypy.md recommends): the plugin, and mypy's
# truthy-bool, which flags `if d:` / `not d` / `d and ...` on a dynamic value.
RECOMMENDED = {
    "plugins": "symscalar.mypy_plugin",
    "enable_error_code": "truthy-bool",
}

STATIC_PARAMS_PATH = pathlib.Path(__file__).with_name("_static_params.py")

_HEADER = '''"""The static/dynamic contract of every op, for the mypy plugin (which must not import torch).

Generated from ``symscalar.frontend.OPS`` by ``python -m symscalar export-static-params``; do not
edit. ``tests/test_mypy_static_params.py`` fails when this file is stale.
"""

# op name -> (parameter names in order, the static ones, how many can be passed positionally)
STATIC_PARAMS: dict[str, tuple[tuple[str, ...], tuple[str, ...], int]] = '''


def static_params_source() -> str:
    """The text of ``symscalar/_static_params.py`` for the ops registered now."""
    importlib.import_module("symscalar.ops")
    frontend = importlib.import_module("symscalar.frontend")
    table = {name: (sig.params, sig.static, sig.positional) for name, sig in sorted(frontend.OPS.items())}
    lines = [f"    {name!r}: {entry!r}," for name, entry in table.items()]
    return _HEADER + "{\n" + "\n".join(lines) + "\n}\n"


def mypy_config(plugin: bool = True, **extra: str) -> str:
    """A mypy ini config with the recommended settings (without the plugin if not
    ``plugin``: what plain typing, e.g. Pyright, already catches) plus ``extra``."""
    settings = dict(RECOMMENDED, **extra)
    if not plugin:
        del settings["plugins"]
    return "[mypy]\n" + "".join(f"{key} = {value}\n" for key, value in settings.items())


# Where mypy looks for its configuration, in its order (mypy.config_parser): the first that
# exists (pyproject.toml/setup.cfg only with a mypy section), from the current directory up to
# the repository root.
CONFIG_NAMES = ("mypy.ini", ".mypy.ini", "pyproject.toml", "setup.cfg")


def find_mypy_config(start: pathlib.Path) -> pathlib.Path | None:
    """The mypy configuration file mypy itself would read when run from ``start``."""
    for folder in (start.resolve(), *start.resolve().parents):
        for name in CONFIG_NAMES:
            path = folder / name
            if path.is_file() and read_mypy_sections(path) is not None:
                return path
        if (folder / ".git").exists() or (folder / ".hg").exists():
            return None
    return None


def read_mypy_sections(path: pathlib.Path) -> dict[str, dict[str, str]] | None:
    """The mypy sections of a config file as ini sections (``mypy``, ``mypy-pkg.*``), or None
    if it has none. pyproject's ``[tool.mypy]`` and ``[[tool.mypy.overrides]]`` are turned
    into their ini equivalents (lists comma-separated)."""
    if path.name == "pyproject.toml":
        table = tomllib.loads(path.read_text()).get("tool", {}).get("mypy")
        if table is None:
            return None
        overrides = table.pop("overrides", [])
        sections = {"mypy": _ini_values(table)}
        for override in overrides:
            modules = override.pop("module")
            for module in [modules] if isinstance(modules, str) else modules:
                sections[f"mypy-{module}"] = _ini_values(override)
        return sections
    parser = configparser.RawConfigParser()
    parser.read(path)
    sections = {name: dict(parser[name]) for name in parser.sections() if name == "mypy" or name.startswith("mypy-")}
    if "mypy" not in sections and path.name != "mypy.ini" and path.name != ".mypy.ini":
        return None
    return sections


def _ini_values(table: Mapping[str, Any]) -> dict[str, str]:
    return {key: ", ".join(map(str, value)) if isinstance(value, list) else str(value) for key, value in table.items()}


def _split(value: str) -> list[str]:
    return [item.strip() for item in value.replace("\n", ",").split(",") if item.strip()]


def project_mypy_config(path: pathlib.Path | None) -> str:
    """The project's mypy configuration (ini text) with the symscalar plugin and
    ``truthy-bool`` added; what the project disables stays disabled. ``$MYPY_CONFIG_FILE_DIR``
    is expanded to the project file's folder (the temporary file lives elsewhere)."""
    sections = read_mypy_sections(path) if path is not None else None
    sections = sections or {}
    main = sections.setdefault("mypy", {})
    plugins = _split(main.get("plugins", ""))
    if RECOMMENDED["plugins"] not in plugins:
        plugins.append(RECOMMENDED["plugins"])
    main["plugins"] = ", ".join(plugins)
    enabled = _split(main.get("enable_error_code", ""))
    disabled = _split(main.get("disable_error_code", ""))
    for code in _split(RECOMMENDED["enable_error_code"]):
        if code not in enabled and code not in disabled:
            enabled.append(code)
    main["enable_error_code"] = ", ".join(enabled)
    out = configparser.RawConfigParser()
    for name, values in sections.items():
        out[name] = {
            key: value.replace("$MYPY_CONFIG_FILE_DIR", str(path.parent)) if path else value
            for key, value in values.items()
        }
    text = io.StringIO()
    out.write(text)
    return text.getvalue()


def check(paths: Sequence[str], extra: Sequence[str] = (), config: pathlib.Path | None = None) -> int:
    """Run mypy with the plugin over ``paths``; print its report; return its exit status.

    mypy takes plugins from a config file only, so the project's configuration (``config``,
    else the file mypy would find from the current directory) plus the plugin is written to a
    temporary one; its ``disable_error_code``, per-module sections and flags are kept.
    """
    api = importlib.import_module("mypy.api")
    found = config if config is not None else find_mypy_config(pathlib.Path.cwd())
    with tempfile.TemporaryDirectory() as tmp:
        merged = pathlib.Path(tmp, "mypy.ini")
        merged.write_text(project_mypy_config(found))
        stdout, stderr, status = api.run(["--config-file", str(merged), *extra, *paths])
    sys.stdout.write(stdout)
    sys.stderr.write(stderr)
    return int(status)


def lint_thunder(spec: str) -> int:
    """Run ``fn`` of ``script.py`` (``spec`` is ``script.py::fn``), lint the thunder traces it
    leaves and print the report; return 1 on findings, 0 on none, 2 on a usage error.

    ``fn`` takes no arguments and either returns what ``symscalar.lint_thunder`` takes (a
    function returned by ``thunder.jit`` that has run, a trace, a list of traces, or a list of
    such functions) or returns None after running thunder-jitted code: then every function that
    ``thunder.jit`` returned while the script was imported and ``fn`` ran, and that has run, is linted.
    """
    path, sep, name = spec.rpartition("::")
    script = pathlib.Path(path)
    if not sep or not name or not script.is_file():
        print(f"lint-thunder: expected SCRIPT.py::FUNCTION with an existing script, got {spec!r}", file=sys.stderr)
        return 2
    try:
        lint = importlib.import_module("symscalar.thunder_lint")
    except MissingDependencyError as error:
        print(f"lint-thunder: {error}", file=sys.stderr)
        return 2
    with lint.recording_jits() as jitted, _on_path(script.resolve().parent):
        module_spec = importlib.util.spec_from_file_location(f"_lint_thunder_{script.stem}", script)
        if module_spec is None or module_spec.loader is None:
            print(f"lint-thunder: cannot import {script}", file=sys.stderr)
            return 2
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
        fn = getattr(module, name, None)
        if not callable(fn):
            print(f"lint-thunder: {script} has no function {name!r}", file=sys.stderr)
            return 2
        result = fn()
    if result is None:
        targets = [j for j in jitted if lint.has_run(j)]
    elif isinstance(result, (list, tuple)) and result and all(map(lint.has_run, result)):
        targets = list(result)
    else:
        targets = [result]
    if not targets:
        print(f"lint-thunder: {spec} ran no thunder-jitted function (and returned none)", file=sys.stderr)
        return 2
    if not all(map(lint.lintable, targets)):
        print(
            f"lint-thunder: {spec} returned {type(result).__name__}, not a thunder-jitted function that has run, "
            "a trace, a list of traces or a list of such functions (or None after running jitted code)",
            file=sys.stderr,
        )
        return 2
    reports = [lint.lint_thunder(target) for target in targets]
    print("\n\n".join(map(str, reports)))
    return int(any(len(report) for report in reports))


@contextlib.contextmanager
def _on_path(folder: pathlib.Path) -> Any:
    """The script's folder on sys.path while it is imported, as ``python script.py`` has it."""
    sys.path.insert(0, str(folder))
    try:
        yield
    finally:
        sys.path.remove(str(folder))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m symscalar``."""
    parser = argparse.ArgumentParser(prog="python -m symscalar", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    check_cmd = commands.add_parser("check", help="type-check PATHs with mypy and the symscalar plugin")
    check_cmd.add_argument("paths", nargs="*", metavar="PATH", help="files or folders (default: the config's `files`)")
    check_cmd.add_argument(
        "--config-file",
        type=pathlib.Path,
        default=None,
        help="the mypy config to extend (default: the one mypy finds from here)",
    )
    check_cmd.add_argument(
        "--mypy-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="an extra argument for mypy, e.g. --mypy-arg=--strict (repeatable)",
    )
    export = commands.add_parser(
        "export-static-params", help="regenerate symscalar/_static_params.py from the op registry"
    )
    export.add_argument("--check", action="store_true", help="exit 1 if the file is stale instead of writing it")
    lint = commands.add_parser(
        "lint-thunder", help="check the lightning-thunder traces SCRIPT.py::FUNCTION leaves (exit 1 on findings)"
    )
    lint.add_argument(
        "target", metavar="SCRIPT.py::FUNCTION", help="a function taking no arguments (docs/thunder_lint.md)"
    )
    args = parser.parse_args(argv)
    if args.command == "check":
        return check(args.paths, args.mypy_arg, args.config_file)
    if args.command == "lint-thunder":
        return lint_thunder(args.target)
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
