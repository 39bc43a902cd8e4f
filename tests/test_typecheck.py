"""Type-check regression cases: typecheck_cases/*.py against their inline expectations.

Each case file is real code with expectations on the line they concern, in mypy's own manner:

    torch.sum(x, n)  # E: torch.sum: parameter "dim" must be static ...  [symscalar-static-required]
    reveal_type(n + 1)  # N: Revealed type is "symscalar.types.DynamicInt"

``E``/``N`` hold with the plugin; they hold without it too, except errors with a
``symscalar-`` code. ``plugin-E``/``plugin-N`` hold with the plugin only, ``plain-E``/
``plain-N`` without it only (what plain mypy reports instead). In a message, ``...`` stands
for any text (``<start>...  [code]`` keeps long messages short). Notes other than
``Revealed type`` are not compared.

``pyright-E: <rule>`` is the Pyright column: each error basedpyright reports on the line, by
its rule (``reportArgumentType``...; its wording differs from mypy's, so only the rule is
compared). Pyright's ``reveal_type`` must agree with the plain-mypy ``N`` expectation (names
unqualified) unless the line says ``pyright-N: <type>``. Regenerate the column after a change
of types.py with ``python tests/test_typecheck.py --update-pyright`` and review the diff.

Without the plugin (plain mypy, and Pyright) the checkers read symscalar's stub package
(``python -m symscalar stubs``: torch's stubs accepting dynamic numbers where the ops do),
as docs/mypy.md recommends; it is generated from the installed torch once per session.

mypy runs once over the folder per mode (no cache), once per pytest session (xdist workers
share the result through a locked file). Files whose first lines say ``# executable`` are also
run: every ``(jitted function, args)`` pair in their ``CALLS`` list is called, and it must
raise ``StaticValueRequiredError``/``DynamicValueError`` (or another ``TypeError``, such as
``~b`` on a ``DynamicBool``), or ``JitOptionError`` from ``jit(static=..., dynamic=...)``,
exactly when mypy (with the plugin) reports an error inside that function (or inside the
helpers listed after the arguments: ``(fn, args, helper...)``). Every jitted function of an
executable file must be in ``CALLS``.
"""

from __future__ import annotations

import collections
import dataclasses
import importlib.util
import inspect
import json
import os
import pathlib
import re
import subprocess
import sys
import tempfile
from typing import Any

import mypy.api
import pytest
import torch

import symscalar
from symscalar import torch_stubs
from symscalar.__main__ import mypy_config
from symscalar._static_params import STATIC_PARAMS
from symscalar.errors import JitOptionError
from tests.mypy_support import session_once, session_root

ROOT = pathlib.Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.mypy  # left out by `make test-fast`
CASES = ROOT / "typecheck_cases"
_MODES = r"(?:plugin-|plain-|pyright-)"
_EXPECT = re.compile(rf"#\s*({_MODES})?([EN]):\s*(.*?)\s*(?=#\s*{_MODES}?[EN]:|$)")
_OUTPUT = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+): (?P<kind>error|note): (?P<message>.*)$")
BASEDPYRIGHT = pathlib.Path(sys.executable).with_name("basedpyright")


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
                if mode == "pyright-":
                    continue
                plugin_only = mode == "plugin-" or (not mode and "[symscalar-" in text)
                if (mode == "plain-" and plugin) or (plugin_only and not plugin):
                    continue
                out.append(Message(path.name, number, kind, text))
    return out


def mypy_stdout(plugin: bool, config_dir: pathlib.Path, stubs: pathlib.Path | None = None) -> str:
    """mypy's report over all case files, in one run without a cache; with ``stubs`` (a
    folder holding ``torch-stubs``) on the path, in a subprocess (mypy finds stub packages
    on the interpreter's path)."""
    config = config_dir / f"mypy-{plugin}.ini"
    config.write_text(mypy_config(plugin=plugin))
    args = [
        "--config-file",
        str(config),
        f"--cache-dir={os.devnull}",
        "--no-error-summary",
        "--hide-error-context",
        "--no-pretty",
        "--show-error-codes",
        *map(str, case_files()),
    ]
    if stubs is not None:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(stubs), str(ROOT)]))
        result = subprocess.run(
            [sys.executable, "-m", "mypy", *args], capture_output=True, text=True, env=env, cwd=ROOT, timeout=1800
        )
        stdout, stderr, status = result.stdout, result.stderr, result.returncode
    else:
        stdout, stderr, status = mypy.api.run(args)
    assert status in (0, 1), f"mypy crashed:\n{stdout}\n{stderr}"
    return stdout


def stubs_folder(factory: pytest.TempPathFactory) -> pathlib.Path:
    """A folder holding ``torch-stubs`` for the installed torch, written once per session."""
    folder = session_root(factory) / "stubs"
    return pathlib.Path(session_once(factory, "torch-stubs", lambda: str(torch_stubs.write(folder).parent)))


def run_mypy(plugin: bool, factory: pytest.TempPathFactory) -> list[Message]:
    """mypy's errors and revealed types over all case files (once per session and mode), with
    symscalar's torch stubs (with the plugin too: they type torch.special, torch.linalg and
    torch.fft, ``Any`` to mypy without them)."""
    name = "mypy-plugin" if plugin else "mypy-plain"
    stubs = stubs_folder(factory)
    return parse_output(session_once(factory, name, lambda: mypy_stdout(plugin, factory.mktemp(name), stubs)))


def parse_output(stdout: str) -> list[Message]:
    out = []
    for line in stdout.splitlines():
        match = _OUTPUT.match(line)
        assert match, f"unexpected mypy output line: {line}"
        kind = "E" if match["kind"] == "error" else "N"
        if kind == "N" and not match["message"].startswith("Revealed type"):
            continue
        out.append(Message(pathlib.Path(match["path"]).name, int(match["line"]), kind, match["message"]))
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
    return run_mypy(True, tmp_path_factory)


def test_cases_with_plugin(plugin_output: list[Message]) -> None:
    problems = compare(expectations(plugin=True), plugin_output)
    assert not problems, "\n".join(problems)


def test_cases_without_plugin(tmp_path_factory: pytest.TempPathFactory) -> None:
    """What plain typing catches, with symscalar's torch stubs: the dynamic classes hide
    __bool__/__int__/__index__, and the stubs reject dynamic numbers in static parameters
    only."""
    problems = compare(expectations(plugin=False), run_mypy(False, tmp_path_factory))
    assert not problems, "\n".join(problems)


def test_no_internal_names_in_messages(plugin_output: list[Message]) -> None:
    """Messages name the public classes (DynamicInt...), never the plugin's NumberProxy."""
    leaked = [str(m) for m in plugin_output if "NumberProxy" in m.text]
    assert not leaked, "\n".join(leaked)


# ---- Pyright (basedpyright): the same cases without any plugin


def pyright_stdout(config_dir: pathlib.Path, stubs: pathlib.Path) -> str:
    """basedpyright's JSON report over all case files (standard mode, this interpreter, with
    ``stubs``, the folder holding ``torch-stubs``, on its path)."""
    config = config_dir / "pyrightconfig.json"
    config.write_text(
        json.dumps(
            {
                "include": [str(CASES)],
                "extraPaths": [str(ROOT)],
                "typeCheckingMode": "standard",
                "pythonVersion": f"{sys.version_info.major}.{sys.version_info.minor}",
            }
        )
    )
    result = subprocess.run(
        [str(BASEDPYRIGHT), "-p", str(config), "--outputjson", "--pythonpath", sys.executable],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(stubs)),
    )
    assert result.returncode in (0, 1), f"basedpyright failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


def pyright_report(
    factory: pytest.TempPathFactory,
) -> tuple[list[tuple[str, int, str]], dict[tuple[str, int], list[str]]]:
    """Pyright's errors as (file, line, rule) and its revealed types by (file, line)."""
    stubs = stubs_folder(factory)
    report = json.loads(session_once(factory, "pyright", lambda: pyright_stdout(factory.mktemp("pyright"), stubs)))
    errors, revealed = [], collections.defaultdict(list)
    for d in report["generalDiagnostics"]:
        where = (pathlib.Path(d["file"]).name, d["range"]["start"]["line"] + 1)
        if d["severity"] == "error":
            errors.append((*where, d.get("rule", "error")))
        elif d["message"].startswith("Type of "):
            revealed[where].append(d["message"].rsplit(" is ", 1)[1].strip('"'))
    return errors, dict(revealed)


def pyright_expectations() -> tuple[list[tuple[str, int, str]], dict[tuple[str, int], list[str]]]:
    """The Pyright column: expected errors by rule, and revealed types (``pyright-N``, else
    the plain-mypy ``N`` expectation with names unqualified)."""
    errors, revealed = [], collections.defaultdict(list)
    for path in case_files():
        for number, line in enumerate(path.read_text().splitlines(), 1):
            found = _EXPECT.findall(line)
            own = [text for mode, kind, text in found if mode == "pyright-" and kind == "N"]
            for mode, kind, text in found:
                if mode == "pyright-" and kind == "E":
                    errors.append((path.name, number, text))
                elif kind == "N" and mode in ("", "plain-") and not own:
                    own.append(unqualified(text.removeprefix("Revealed type is ").strip('"')))
            if own:
                revealed[(path.name, number)] = own
    return errors, dict(revealed)


def unqualified(typ: str) -> str:
    """``symscalar.types.DynamicInt`` -> ``DynamicInt`` (Pyright prints short names)."""
    return re.sub(r"\b(?:[a-z_]\w*\.)+(?=[A-Za-z_])", "", typ)


def test_cases_with_pyright(tmp_path_factory: pytest.TempPathFactory) -> None:
    """basedpyright over the cases reports exactly the Pyright column."""
    errors, revealed = pyright_report(tmp_path_factory)
    want_errors, want_revealed = pyright_expectations()
    missing = collections.Counter(want_errors) - collections.Counter(errors)
    unexpected = collections.Counter(errors) - collections.Counter(want_errors)
    problems = [f"missing:    {f}:{n}: pyright-E: {r}" for f, n, r in sorted(missing.elements())]
    problems += [f"unexpected: {f}:{n}: pyright-E: {r}" for f, n, r in sorted(unexpected.elements())]
    for where in sorted(set(revealed) | set(want_revealed)):
        if revealed.get(where) != want_revealed.get(where):
            problems.append(
                f"revealed:   {where[0]}:{where[1]}: pyright says "
                f"{revealed.get(where)}, expected {want_revealed.get(where)}"
            )
    assert not problems, "\n".join(problems)


def test_pyright_holds_the_core_rule() -> None:
    """A dynamic value in a static parameter is an error to Pyright too, without a plugin:
    every line with a [symscalar-static-required] expectation in the torch and symscalar.ops
    spellings has a Pyright error (only the plugin says why)."""
    errors, _ = pyright_expectations()
    flagged = {(f, n) for f, n, _ in errors}
    lines = [
        (path.name, number)
        for path in case_files()
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "[symscalar-static-required]" in line and "plain-E:" in line
    ]
    assert lines
    silent = [f"{f}:{n}" for f, n in lines if (f, n) not in flagged]
    assert not silent, "plain mypy rejects these, Pyright does not:\n" + "\n".join(silent)


def unannotated_static_parameters() -> list[str]:
    """Static parameters of torch spellings that torch's own source leaves unannotated or
    ``Any`` (Python functions such as ``Tensor.split``, rather than C ones typed by torch's
    stubs): ``Any`` to a checker without the plugin, unless symscalar's stubs annotate them.
    A parameter is matched to the op's by name, else by position (the plugin's rule)."""
    found = []
    for name, (params, static, positional) in sorted(STATIC_PARAMS.items()):
        owner, _, function = name.rpartition(".")
        namespace = {"torch.Tensor": torch.Tensor, "torch": torch, "torch.functional": torch.functional}.get(owner)
        fn = getattr(namespace, function, None)
        if not static or not inspect.isfunction(fn):
            continue  # a C function: typed by torch's stubs
        offset = 1 if owner == "torch.Tensor" else 0
        for index, p in enumerate(list(inspect.signature(fn).parameters.values())[offset:]):
            at = index + offset
            is_static = p.name in static if p.name in params else at < positional and params[at] in static
            if is_static and p.annotation in (inspect.Parameter.empty, Any, "Any"):
                found.append(f"{name}({p.name})")
    return found


def test_unannotated_torch_spellings_are_annotated_by_the_stubs() -> None:
    """Every static parameter torch leaves unannotated is annotated in symscalar's torch stubs
    (``torch_stubs.ANNOTATED``), so plain mypy and Pyright refuse a dynamic value there as the
    run time does (``typecheck_cases/unannotated_torch.py``); and every entry there is still
    needed."""
    found = unannotated_static_parameters()
    assert "torch.Tensor.split(split_size)" in found and "torch.Tensor.unflatten(sizes)" in found
    annotated = {
        f"torch.Tensor.{function}"
        for relative, (owner, signatures) in torch_stubs.ANNOTATED.items()
        if owner == "Tensor"
        for function in signatures
    }
    missing = sorted(f for f in found if f.partition("(")[0] not in annotated)
    assert not missing, f"add these to symscalar.torch_stubs.ANNOTATED: {missing}"
    unneeded = sorted(a for a in annotated if not any(f.startswith(a + "(") for f in found))
    assert not unneeded, f"torch annotates these now: drop them from torch_stubs.ANNOTATED: {unneeded}"


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


def jitted_functions(module: object) -> set[str]:
    """Names of the module's top-level jitted functions (``symscalar.jit`` adds last_trace)."""
    return {
        name
        for name, value in vars(module).items()
        if callable(value)
        and hasattr(value, "last_trace")
        and hasattr(value, "__wrapped__")
        and getattr(value, "__module__", None) == getattr(module, "__name__", None)
    }


def test_every_case_file_with_jit_is_executable() -> None:
    """The agreement check covers every case file that jits a function."""
    missing = [p.name for p in case_files() if "@symscalar.jit" in p.read_text() and p not in executable_cases()]
    assert not missing, f"jitted functions outside the agreement check: {missing}"


@pytest.mark.parametrize("path", executable_cases(), ids=lambda p: p.stem)
def test_runtime_agrees_with_mypy(path: pathlib.Path, plugin_output: list[Message]) -> None:
    module = load(path)
    calls = module.CALLS
    assert calls, f"{path.name} is executable but has no CALLS"
    called = {fn.__name__ for fn, *_ in calls}
    # `# unchecked:` marks a spelling mypy cannot see (torch.special.* is Any to it); such
    # functions are the documented gap (test_mypy_static_params.py), not run here.
    unchecked = {
        name
        for name in jitted_functions(module)
        if "# unchecked:" in inspect.getsource(getattr(module, name).__wrapped__)
    }
    uncalled = jitted_functions(module) - called - unchecked
    assert not uncalled, f"{path.name}: jitted functions not in CALLS: {sorted(uncalled)}"
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
        except (TypeError, JitOptionError) as e:  # StaticValueRequiredError, DynamicValueError, `~b`
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

    def infer(
        x: torch.Tensor, n: symscalar.DynamicInt, s: symscalar.DynamicFloat, b: symscalar.DynamicBool
    ) -> torch.Tensor:
        env = {"i": 3, "f": 0.5, "n": n, "s": s, "b": b}
        for expr, expected in revealed:
            value = eval(expr, {}, env)  # noqa: S307 - the case file's own expressions
            actual = f"{type(value).__module__}.{type(value).__name__}"
            if actual.removeprefix("builtins.") != expected:
                wrong.append(f"{expr}: mypy says {expected}, run time gives {actual}")
        return x

    symscalar.jit(infer)(torch.ones(1), 2, 0.5, True)
    assert not wrong, "\n".join(wrong)


def update_pyright_column() -> None:
    """Rewrite the Pyright column of the case files from a basedpyright run: its errors, and
    ``pyright-N`` where its revealed type differs from the plain-mypy one."""
    with tempfile.TemporaryDirectory() as tmp:
        report = json.loads(pyright_stdout(pathlib.Path(tmp), torch_stubs.write(pathlib.Path(tmp)).parent))
    rules, revealed = collections.defaultdict(list), collections.defaultdict(list)
    for d in report["generalDiagnostics"]:
        where = (pathlib.Path(d["file"]).name, d["range"]["start"]["line"] + 1)
        if d["severity"] == "error":
            rules[where].append(d.get("rule", "error"))
        elif d["message"].startswith("Type of "):
            revealed[where].append(d["message"].rsplit(" is ", 1)[1].strip('"'))
    for path in case_files():
        lines = path.read_text().splitlines()
        for number, line in enumerate(lines, 1):
            line = re.sub(r"\s*#\s*pyright-[EN]:.*?(?=\s*#\s*(?:plugin-|plain-|pyright-)?[EN]:|$)", "", line)
            lines[number - 1] = line
        path.write_text("\n".join(lines) + "\n")
    _, derived = pyright_expectations()
    for path in case_files():
        lines = path.read_text().splitlines()
        for number, line in enumerate(lines, 1):
            where = (path.name, number)
            extra = "".join(f"  # pyright-E: {r}" for r in sorted(rules.get(where, [])))
            if revealed.get(where) and revealed[where] != derived.get(where):
                extra += "".join(f"  # pyright-N: {t}" for t in revealed[where])
            lines[number - 1] = line + extra
        path.write_text("\n".join(lines) + "\n")


def checker_table() -> str:
    """docs/mypy.md's table, from the expectations (which the tests above hold to the tools):
    per case file, the lines where mypy with the plugin reports a misuse, how many of them
    plain mypy and Pyright (no plugin) flag, and the lines they flag that are not misuses."""
    rows = [
        "| case file | errors with the plugin (= run time) | plain mypy flags | Pyright flags | "
        "plain mypy false alarms | Pyright false alarms |",
        "|---|---|---|---|---|---|",
    ]
    totals = [0] * 5
    for path in case_files():
        plugin, plain, pyright = set(), set(), set()
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for mode, kind, text in _EXPECT.findall(line):
                if kind != "E":
                    continue
                if mode in ("", "plugin-"):
                    plugin.add(number)
                if mode == "plain-" or (not mode and "[symscalar-" not in text):
                    plain.add(number)
                if mode == "pyright-":
                    pyright.add(number)
        counts = [len(plugin), len(plain & plugin), len(pyright & plugin), len(plain - plugin), len(pyright - plugin)]
        totals = [t + c for t, c in zip(totals, counts)]
        rows.append(f"| {path.name} | " + " | ".join(map(str, counts)) + " |")
    rows.append("| **all** | " + " | ".join(f"**{t}**" for t in totals) + " |")
    return "\n".join(rows)


if __name__ == "__main__" and sys.argv[1:] == ["--update-pyright"]:
    update_pyright_column()
if __name__ == "__main__" and sys.argv[1:] == ["--table"]:
    print(checker_table())
