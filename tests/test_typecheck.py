"""Type-check regression cases: typecheck_cases/*.py against their inline expectations.

Each case file is real code with expectations on the line they concern, in mypy's own manner:

    torch.sum(x, n)  # E: torch.sum: parameter "dim" must be static ...  [symscalar-static-required]
    reveal_type(n + 1)  # N: Revealed type is "symscalar.types.DynamicInt"

``E``/``N`` hold with the plugin; they hold without it too, except errors with a
``symscalar-`` code. ``plugin-E``/``plugin-N`` hold with the plugin only, ``plain-E``/
``plain-N`` without it only (what plain typing, e.g. Pyright, reports instead). In a message,
``...`` stands for any text (``<start>...  [code]`` keeps long messages short). Notes other than ``Revealed type`` are not compared.

mypy runs once over the folder per mode (no cache). Files whose first lines say
``# executable`` are also run: every ``(jitted function, args)`` pair in their ``CALLS`` list
is called, and it must raise ``StaticValueRequiredError``/``DynamicValueError`` exactly when
mypy (with the plugin) reports an error inside that function (or inside the helpers listed
after the arguments: ``(fn, args, helper...)``).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import inspect
import os
import pathlib
import re

import mypy.api
import pytest
import torch

import symscalar
from symscalar.__main__ import mypy_config

CASES = pathlib.Path(__file__).resolve().parent.parent / "typecheck_cases"
_EXPECT = re.compile(r"#\s*(plugin-|plain-)?([EN]):\s*(.*?)\s*(?=#\s*(?:plugin-|plain-)?[EN]:|$)")
_OUTPUT = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+): (?P<kind>error|note): (?P<message>.*)$")


@dataclasses.dataclass(frozen=True)
class Message:
    path: str  # file name inside typecheck_cases/
    line: int
    kind: str  # "E" or "N"
    text: str  # message with its "  [code]" suffix for errors

    def matches(self, other: Message) -> bool:
        if (self.path, self.line, self.kind) != (other.path, other.line, other.kind):
            return False
        if self.text == other.text:
            return True
        pattern = ".*".join(map(re.escape, self.text.split("...")))
        return "..." in self.text and re.fullmatch(pattern, other.text) is not None

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.kind}: {self.text}"


def case_files() -> list[pathlib.Path]:
    return sorted(CASES.glob("*.py"))


def expectations(plugin: bool) -> list[Message]:
    """The messages the case files expect, with or without the plugin."""
    out = []
    for path in case_files():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for mode, kind, text in _EXPECT.findall(line):
                plugin_only = mode == "plugin-" or (not mode and "[symscalar-" in text)
                if (mode == "plain-" and plugin) or (plugin_only and not plugin):
                    continue
                out.append(Message(path.name, number, kind, text))
    return out


def run_mypy(plugin: bool, tmp_path: pathlib.Path) -> list[Message]:
    """mypy's errors and revealed types over all case files, in one run without a cache."""
    config = tmp_path / f"mypy-{plugin}.ini"
    config.write_text(mypy_config(plugin=plugin))
    stdout, stderr, status = mypy.api.run([
        "--config-file", str(config), f"--cache-dir={os.devnull}", "--no-error-summary",
        "--hide-error-context", "--no-pretty", "--show-error-codes",
        *map(str, case_files()),
    ])
    assert status in (0, 1), f"mypy crashed:\n{stdout}\n{stderr}"
    return parse_output(stdout)


def parse_output(stdout: str) -> list[Message]:
    out = []
    for line in stdout.splitlines():
        match = _OUTPUT.match(line)
        assert match, f"unexpected mypy output line: {line}"
        kind = "E" if match["kind"] == "error" else "N"
        if kind == "N" and not match["message"].startswith("Revealed type"):
            continue
        out.append(Message(pathlib.Path(match["path"]).name, int(match["line"]), kind,
                           match["message"]))
    return out


def compare(expected: list[Message], actual: list[Message]) -> list[str]:
    problems = []
    for e in expected:
        if not any(e.matches(a) for a in actual):
            problems.append(f"missing:    {e}")
    for a in actual:
        if not any(e.matches(a) for e in expected):
            problems.append(f"unexpected: {a}")
    return problems


@pytest.fixture(scope="module")
def plugin_output(tmp_path_factory: pytest.TempPathFactory) -> list[Message]:
    return run_mypy(True, tmp_path_factory.mktemp("mypy"))


def test_cases_with_plugin(plugin_output: list[Message]) -> None:
    problems = compare(expectations(plugin=True), plugin_output)
    assert not problems, "\n".join(problems)


def test_cases_without_plugin(tmp_path: pathlib.Path) -> None:
    """What plain typing catches: the dynamic classes hide __bool__/__int__/__index__, and
    torch's stubs reject dynamic numbers everywhere (also where the op allows them)."""
    problems = compare(expectations(plugin=False), run_mypy(False, tmp_path))
    assert not problems, "\n".join(problems)


def test_enough_cases() -> None:
    expected = expectations(plugin=True)
    clean = [p for p in case_files() if p.name.startswith("clean_")]
    assert len(expected) >= 60, len(expected)
    assert clean, "a case file of code that must type-check cleanly"


# ---- static and runtime agree


def executable_cases() -> list[pathlib.Path]:
    return [p for p in case_files() if "# executable" in p.read_text().splitlines()[:3]]


def load(path: pathlib.Path) -> object:
    spec = importlib.util.spec_from_file_location(f"typecheck_cases.{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("path", executable_cases(), ids=lambda p: p.stem)
def test_runtime_agrees_with_mypy(path: pathlib.Path, plugin_output: list[Message]) -> None:
    module = load(path)
    calls = getattr(module, "CALLS")
    assert calls, f"{path.name} is executable but has no CALLS"
    errors = {m.line for m in plugin_output if m.path == path.name and m.kind == "E"}
    disagreements = []
    for fn, args, *helpers in calls:
        own: set[int] = set()
        for function in (fn, *helpers):
            lines, first = inspect.getsourcelines(function)
            own.update(range(first, first + len(lines)))
        flagged = sorted(errors & own)
        try:
            fn(*args)
            raised = None
        except (symscalar.StaticValueRequiredError, symscalar.DynamicValueError) as e:
            raised = e
        if bool(flagged) != (raised is not None):
            disagreements.append(
                f"{fn.__name__}: mypy flags lines {flagged or 'none'}, at run time "
                f"{type(raised).__name__ + ': ' + str(raised).splitlines()[0] if raised else 'no error'}"
            )
    assert not disagreements, "\n".join(disagreements)


_REVEALED = re.compile(r'^\s*reveal_type\((.*)\)\s*#\s*(?:plugin-)?N: Revealed type is "([\w.]+)"')


def test_revealed_arithmetic_types_hold_at_run_time() -> None:
    """Each ``reveal_type(expr)`` of typecheck_cases/arithmetic.py (the plugin's answer),
    evaluated while tracing ``infer``'s parameters, gives a value of the revealed class."""
    lines = (CASES / "arithmetic.py").read_text().splitlines()
    revealed = [m.groups() for m in map(_REVEALED.match, lines) if m]
    assert len(revealed) >= 40, len(revealed)
    wrong: list[str] = []

    def infer(x: torch.Tensor, n: symscalar.DynamicInt, s: symscalar.DynamicFloat,
              b: symscalar.DynamicBool) -> torch.Tensor:
        env = {"i": 3, "f": 0.5, "n": n, "s": s, "b": b}
        for expr, expected in revealed:
            value = eval(expr, {}, env)
            actual = f"{type(value).__module__}.{type(value).__name__}"
            if actual.removeprefix("builtins.") != expected:
                wrong.append(f"{expr}: mypy says {expected}, run time gives {actual}")
        return x

    symscalar.jit(infer)(torch.ones(1), 2, 0.5, True)
    assert not wrong, "\n".join(wrong)
