"""The ``python -m symscalar`` command line.

``python -m symscalar check [PATH...]`` type-checks code with mypy, the project's own mypy
configuration (found as mypy finds it: mypy.ini, .mypy.ini, pyproject.toml, setup.cfg), the
symscalar plugin and the flags it relies on (see docs/mypy.md). ``python -m symscalar export-static-params`` regenerates
``symscalar/_static_params.py``, the static/dynamic table of every op that the plugin reads.
``python -m symscalar stubs`` installs ``torch-stubs``, torch's stubs with dynamic numbers
accepted where the ops take them, for plain mypy and Pyright (``symscalar.torch_stubs``).
``python -m symscalar lint-thunder script.py::fn`` checks lightning-thunder's traces against that
table (see docs/thunder_lint.md).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import pathlib
import sys
from collections.abc import Sequence
from typing import Any

from symscalar import torch_stubs
from symscalar.errors import MissingDependencyError

__all__ = [
    "main",
    "check",
    "lint_thunder",
    "static_params_source",
    "mypy_config",
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


def check(paths: Sequence[str], extra: Sequence[str] = (), config: pathlib.Path | None = None) -> int:
    """Run mypy with the plugin over ``paths``; print its report; return its exit status.

    mypy reads the project's configuration itself, unchanged (``config``, else the file mypy
    finds from the current directory), so its relative paths, ``exclude`` lists, per-module
    sections and ``disable_error_code`` mean what they mean to mypy, and its messages name the
    project's own files. The plugin is added as a program using mypy adds one
    (``mypy.build.build(..., extra_plugins=...)``), unless the configuration lists it already;
    ``truthy-bool`` is enabled unless the configuration disables it. Neither imports torch.
    """
    mypy_main = importlib.import_module("mypy.main")
    mypy_build = importlib.import_module("mypy.build")
    mypy_errors = importlib.import_module("mypy.errors")
    mypy_util = importlib.import_module("mypy.util")
    error_codes = importlib.import_module("mypy.errorcodes").error_codes
    fscache = importlib.import_module("mypy.fscache").FileSystemCache()
    args = [*(["--config-file", str(config)] if config is not None else []), *extra, *paths]
    stdout, stderr = sys.stdout, sys.stderr
    sources, options = mypy_main.process_options(args, stdout=stdout, stderr=stderr, fscache=fscache)
    plugins = []
    if RECOMMENDED["plugins"] not in options.plugins:
        plugins.append(importlib.import_module(RECOMMENDED["plugins"]).SymscalarPlugin(options))
    for code in _split(RECOMMENDED["enable_error_code"]):
        if code not in options.disable_error_code:
            options.enabled_error_codes.add(error_codes[code])
    formatter = mypy_util.FancyFormatter(stdout, stderr, options.hide_error_codes, hide_success=bool(options.output))
    messages: list[str] = []

    def flush_errors(filename: str | None, new_messages: list[str], serious: bool) -> None:
        if options.pretty:
            new_messages = formatter.fit_in_terminal(new_messages)
        messages.extend(new_messages)
        mypy_main.show_messages(new_messages, stderr if serious else stdout, formatter, options)

    blockers = False
    try:
        mypy_build.build(sources, options, None, flush_errors, fscache, stdout, stderr, extra_plugins=plugins)
    except mypy_errors.CompileError:
        blockers = True
    n_errors, n_notes, n_files = mypy_util.count_stats(messages)
    if options.error_summary:
        if n_errors:
            stdout.write(formatter.format_error(n_errors, n_files, len(sources), blockers=blockers) + "\n")
        elif not messages or n_notes == len(messages):
            stdout.write(formatter.format_success(len(sources), options.color_output) + "\n")
    stdout.flush()
    if not messages or n_notes == len(messages):
        return 0
    return 2 if blockers else 1


def _split(value: str) -> list[str]:
    return [item.strip() for item in value.replace("\n", ",").split(",") if item.strip()]


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


def write_stubs(out: pathlib.Path | None, check_only: bool) -> int:
    """``python -m symscalar stubs``: write (or with ``check_only`` verify) the stub package."""
    folder = out if out is not None else torch_stubs.default_folder()
    if check_only:
        stale = torch_stubs.stale(folder)
        if stale:
            where = folder / torch_stubs.PACKAGE
            print(f"{where} is stale or missing ({len(stale)} files): run `python -m symscalar stubs`")
        return int(bool(stale))
    print(f"wrote {torch_stubs.write(folder)}")
    return 0


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
    stubs = commands.add_parser(
        "stubs", help="write torch-stubs: torch's stubs taking dynamic numbers where the ops do (plain mypy, Pyright)"
    )
    stubs.add_argument(
        "--out", type=pathlib.Path, default=None, help="the folder to write torch-stubs into (default: site-packages)"
    )
    stubs.add_argument("--check", action="store_true", help="exit 1 if the stubs there are missing or stale")
    lint = commands.add_parser(
        "lint-thunder", help="check the lightning-thunder traces SCRIPT.py::FUNCTION leaves (exit 1 on findings)"
    )
    lint.add_argument(
        "target", metavar="SCRIPT.py::FUNCTION", help="a function taking no arguments (docs/thunder_lint.md)"
    )
    args = parser.parse_args(argv)
    if args.command == "lint-thunder":
        return lint_thunder(args.target)
    if args.command == "check":
        return check(args.paths, args.mypy_arg, args.config_file)
    if args.command == "stubs":
        return write_stubs(args.out, args.check)
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
