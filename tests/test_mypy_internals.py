"""The mypy internals the plugin uses beyond the public plugin API (listed in the docstring of
symscalar/mypy_plugin.py) exist in the pinned mypy with the shape the plugin relies on. The
behaviour each one enables is covered by typecheck_cases/ (tests/test_typecheck.py); this file
fails first, and by name, when a mypy upgrade moves one of them."""

from __future__ import annotations

import importlib.metadata
import inspect
import pathlib
import re

import mypy.build
import mypy.main
import mypy.util
import tomllib
from mypy.checker import TypeChecker
from mypy.checker_shared import CheckerScope
from mypy.errors import Errors
from mypy.messages import MessageBuilder
from mypy.nodes import Block, MypyFile
from mypy.options import Options
from mypy.plugins.default import DefaultPlugin
from mypy.server.subexpr import get_subexpressions

import symscalar.mypy_plugin as plugin_module

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_mypy_is_the_pinned_version() -> None:
    """The checks below are made against the version the lock and pyproject pin."""
    pinned = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]["mypy"][0]
    low, high = re.findall(r"[<>]=?([\d.]+)", pinned)
    version = tuple(int(p) for p in importlib.metadata.version("mypy").split(".")[:2])
    assert tuple(map(int, low.split(".")[:2])) <= version < tuple(map(int, high.split(".")[:2]))


def test_errors_watchers_is_the_filter_stack() -> None:
    """fail_unfiltered swaps ``Errors._watchers`` (the stack of ``filter_errors`` scopes)."""
    errors = Errors(Options())
    assert errors._watchers == []
    builder = MessageBuilder(errors, {})
    with builder.filter_errors():
        assert len(errors._watchers) == 1
    assert errors._watchers == []


def test_type_checker_members() -> None:
    """context_free_type, ConditionIndex and mypy_dims (the file it reads Dims from) read
    these members of the checker."""
    for name in ("expr_checker", "msg", "local_type_map", "scope", "tree", "path"):
        assert hasattr(TypeChecker, name), name
    assert hasattr(MessageBuilder, "filter_errors")
    assert hasattr(CheckerScope, "current_function")


def test_default_partial_hook() -> None:
    """check_partial hands functools.partial back to mypy's own hook."""
    hook = DefaultPlugin(Options()).get_function_hook(plugin_module.PARTIAL)
    assert callable(hook)


def test_get_subexpressions() -> None:
    """ConditionIndex collects a function's expressions with mypy's own walker."""
    assert list(get_subexpressions(MypyFile([], []))) == []
    assert list(get_subexpressions(Block([]))) == []
    assert "node" in inspect.signature(get_subexpressions).parameters


def test_plugin_docstring_lists_each_internal() -> None:
    """The plugin's docstring names every private mypy use tested here."""
    doc = plugin_module.__doc__ or ""
    for name in (
        "Errors._watchers",
        "expr_checker.accept",
        "local_type_map",
        "filter_errors",
        "scope.current_function()",
        "DefaultPlugin",
        "get_subexpressions",
    ):
        assert name in doc, name


def test_check_command_internals() -> None:
    """``python -m symscalar check`` runs mypy's own option processing and build, adding the
    plugin as a program using mypy does (``build(..., extra_plugins=...)``)."""
    assert "extra_plugins" in inspect.signature(mypy.build.build).parameters
    params = inspect.signature(mypy.main.process_options).parameters
    assert {"stdout", "stderr", "fscache"} <= set(params)
    assert list(inspect.signature(mypy.main.show_messages).parameters)[:4] == ["messages", "f", "formatter", "options"]
    for name in ("format_error", "format_success", "fit_in_terminal"):
        assert hasattr(mypy.util.FancyFormatter, name), name
    assert hasattr(mypy.util, "count_stats")
