"""symscalar.lint_thunder on lightning-thunder 0.2.6's own traces: the seed reproductions under
``cache="symbolic values"`` (a dynamic dim reaching softmax / sum / mean / unsqueeze / transpose /
cat, with grad) are flagged with the right symbol and argument, and each flagged baking really
gives a wrong result or a crash on the next call; the same programs with static dims under
``cache="constant values"`` give no finding; the mapping onto symscalar's static-parameter table
covers thunder.torch's symbols that take dims (the coverage is printed).

thunder is imported by fixtures, not at the top: importing it costs seconds (tests/conftest.py).
"""

from __future__ import annotations

import inspect
import pathlib
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
import torch

from symscalar._static_params import STATIC_PARAMS

pytestmark = pytest.mark.slow  # thunder.jit compiles for a second or so per function


@pytest.fixture(scope="module")
def thunder() -> Any:
    return pytest.importorskip("thunder", reason="lightning-thunder is an optional dependency")


@pytest.fixture(scope="module")
def lint(thunder: Any) -> Any:
    return pytest.importorskip("symscalar.thunder_lint")


def T(*shape: int) -> torch.Tensor:  # noqa: N802 - reads like the math it tests
    return torch.rand(*shape, dtype=torch.float64) + 0.5


@dataclass
class Seed:
    name: str
    fn: Callable[..., torch.Tensor]
    first: tuple[Any, ...]  # the call whose traces are linted
    second: tuple[Any, ...]  # the same structure with other dims: thunder reuses the first trace
    # (trace, kind, symbol, argument, names) of every finding, in report order
    expected: set[tuple[str, str, str, str, tuple[str, ...]]]
    wrong_on_second_call: bool  # the flagged baking really breaks the cache hit


SEEDS = [
    Seed(
        "softmax",
        lambda a, d: torch.softmax(a, d),
        (T(4, 4), 1),
        (T(4, 4), 0),
        {
            ("computation", "proxy", "torch.softmax", "dim", ("d",)),
            # the grad transform's backward reduction: its axes hold the NumberProxy d
            ("computation", "proxy", "torch.sum", "dim", ("d",)),
            ("backward", "proxy", "torch.sum", "dim", ("d",)),
        },
        False,  # the torch executor accepts a runtime dim; nvFuser's reduction axes do not
    ),
    Seed(
        "sum",
        lambda a, d: a.sum(d),
        (T(4, 4), 1),
        (T(4, 4), 0),
        {
            ("computation", "proxy", "torch.sum", "dim", ("d",)),
            ("backward", "baked", "torch.unsqueeze", "dim", ("d",)),
        },
        True,  # a wrong gradient: the backward unsqueezes at the first call's d
    ),
    Seed(
        "mean",
        lambda a, d: a.mean(d),
        (T(4, 4), 1),
        (T(4, 4), 0),
        {
            ("computation", "proxy", "torch.mean", "dim", ("d",)),
            ("computation", "proxy", "prims.sum", "dims", ("d",)),
            ("computation", "proxy", "torch.sum", "dim", ("d",)),
            ("backward", "baked", "torch.unsqueeze", "dim", ("d",)),
        },
        True,
    ),
    Seed(
        "unsqueeze",
        lambda a, d: a.unsqueeze(d) * 2,
        (T(4, 4), 1),
        (T(4, 4), 0),
        {
            ("computation", "proxy", "torch.unsqueeze", "dim", ("d",)),
            # after the grad transform the forward itself has d folded in: a wrong forward result
            ("computation", "baked", "torch.unsqueeze", "dim", ("d",)),
            ("computation", "baked", "torch.sum", "dim", ("d",)),
            ("backward", "baked", "torch.sum", "dim", ("d",)),
        },
        True,
    ),
    Seed(
        "transpose",
        lambda a, d0, d1: a.transpose(d0, d1) * 2,
        (T(3, 3, 3), 0, 1),
        (T(3, 3, 3), 1, 2),
        {
            ("computation", "proxy", "torch.transpose", "dim0", ("d0",)),
            ("computation", "proxy", "torch.transpose", "dim1", ("d1",)),
            ("computation", "proxy", "prims.transpose", "permutation", ("d1", "d0")),
            ("computation", "baked", "prims.transpose", "permutation", ("d1", "d0")),
            ("computation", "proxy", "torch.permute", "dims", ("d1", "d0")),
            ("backward", "baked", "torch.permute", "dims", ("d1", "d0")),
        },
        True,  # the forward permutation (d1, d0, 2) baked its 2: duplicate dims on the next call
    ),
    Seed(
        "cat",
        lambda a, b, d: torch.cat([a, b], d),
        (T(3, 3), T(3, 3), 0),
        (T(3, 3), T(3, 3), 1),
        {
            ("computation", "proxy", "torch.cat", "dim", ("d",)),
            ("computation", "proxy", "prims.cat", "dim", ("d",)),
        },
        True,  # the backward slices along the first call's d (not visible as a literal dim)
    ),
]


def run_with_grad(jf: Callable[..., torch.Tensor], args: tuple[Any, ...]) -> tuple[torch.Tensor, ...]:
    """Forward and the gradients of every tensor argument for a fixed cotangent."""
    tensors = [a.detach().clone().requires_grad_() if isinstance(a, torch.Tensor) else a for a in args]
    out = jf(*tensors)
    cotangent = torch.linspace(0.5, 2.0, out.numel(), dtype=out.dtype).reshape(out.shape)
    grads = torch.autograd.grad(out, [a for a in tensors if isinstance(a, torch.Tensor)], cotangent)
    return (out.detach(), *grads)


def summary(report: Any) -> set[tuple[str, str, str, str, tuple[str, ...]]]:
    return {(f.trace, f.kind, f.symbol, f.argument, f.names) for f in report}


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: s.name)
def test_seed_reproduction_is_flagged(thunder: Any, lint: Any, seed: Seed) -> None:
    jf = thunder.jit(seed.fn, cache="symbolic values")
    first = run_with_grad(jf, seed.first)
    for got, want in zip(first, run_with_grad(seed.fn, seed.first)):
        torch.testing.assert_close(got, want)  # the first call is right: the trace is for it
    report = lint.lint_thunder(jf)
    print(report)
    assert summary(report) == seed.expected
    for finding in report:
        assert finding.symbol in str(finding) and finding.argument in str(finding)
        assert all(name in finding.origin or name in finding.value for name in finding.names)
    # the finding is real: the next call with other dims hits the cache and goes wrong
    try:
        second = run_with_grad(jf, seed.second)
        expected = run_with_grad(seed.fn, seed.second)
        wrong = any(g.shape != w.shape or not torch.allclose(g, w) for g, w in zip(second, expected))
    except RuntimeError:
        wrong = True
    assert thunder.cache_misses(jf) == 1
    assert wrong == seed.wrong_on_second_call


@pytest.mark.parametrize("seed", SEEDS, ids=lambda s: s.name)
def test_static_dims_under_constant_values_are_clean(thunder: Any, lint: Any, seed: Seed) -> None:
    jf = thunder.jit(seed.fn, cache="constant values")
    run_with_grad(jf, seed.first)
    report = lint.lint_thunder(jf)
    assert report.ok, str(report)
    assert report.traces.keys() == {"prologue", "computation", "backward"}


def test_a_dynamic_number_equal_to_a_literal_dim_is_not_baking(thunder: Any, lint: Any) -> None:
    # n is 1 like the literal dim, but n only scales: it never reaches a static argument
    jf = thunder.jit(lambda a, n: a.sum(1) * n, cache="symbolic values")
    run_with_grad(jf, (T(3, 4), 1))
    assert lint.lint_thunder(jf).ok


def test_a_literal_is_matched_with_arguments_of_its_role(thunder: Any, lint: Any) -> None:
    # d and c are both 1; only d reaches a dim, so the backward's unsqueeze(t, 1) is d's value
    jf = thunder.jit(lambda a, d, c: a.var(d, correction=c), cache="symbolic values")
    run_with_grad(jf, (T(4, 3), 1, 1))
    found = summary(lint.lint_thunder(jf))
    assert ("computation", "proxy", "torch.var", "correction", ("c",)) in found
    assert {f for f in found if f[0] == "backward"} == {
        ("backward", "proxy", "torch.sum", "dim", ("d",)),  # var's backward reduces over d again
        ("backward", "baked", "torch.unsqueeze", "dim", ("d",)),
    }


def test_a_pinned_argument_under_symbolic_values(thunder: Any, lint: Any) -> None:
    # `d > 0` makes thunder pin d; the forward's torch.sum(a, d) and the backward's unsqueeze(t, 1)
    # are then guarded by the prologue: no proxy or baked finding, only the pin
    fn = lambda a, d: a.sum(d) if d > 0 else a.sum(0)  # noqa: E731 - a one-line program under test
    jf = thunder.jit(fn, cache="symbolic values")
    run_with_grad(jf, (T(3, 4), 1))
    (finding,) = lint.lint_thunder(jf)
    assert isinstance(finding, lint.PinnedArgument)
    assert (finding.trace, finding.names, finding.value) == ("prologue", ("d",), "1")
    other = (T(3, 4), 0)
    for got, want in zip(run_with_grad(jf, other), run_with_grad(fn, other)):
        torch.testing.assert_close(got, want)  # guarded: the new d retraces instead of reusing 1
    assert thunder.cache_misses(jf) == 2  # what the finding says: every new value retraces
    constant = thunder.jit(fn, cache="constant values")
    run_with_grad(constant, (T(3, 4), 1))
    assert lint.lint_thunder(constant).ok  # pinning is what constant values promises


def test_a_dynamic_number_in_a_size_is_flagged_but_a_tensor_size_is_not(thunder: Any, lint: Any) -> None:
    jf = thunder.jit(lambda a, n: a.reshape(n, -1), cache="symbolic values")
    run_with_grad(jf, (T(4, 3), 2))
    report = lint.lint_thunder(jf)
    assert {(f.trace, f.symbol, f.argument, f.names[0]) for f in report} == {
        ("computation", "torch.reshape", "shape", "n"),
        ("computation", "prims.reshape", "shape", "n"),
    }
    (prim,) = [f for f in report if f.symbol == "prims.reshape"]
    computed = prim.names[1]  # the -1 resolved: 12 // n, a size computed from n
    assert f"{computed}: prims.sub of i0, i1, n" in prim.origin
    # the backward's reshape to a's own (symbolic) sizes is thunder's dynamic-shape mechanism
    assert not [f for f in report if f.trace == "backward"]


def test_lints_a_trace_or_a_list_of_traces(thunder: Any, lint: Any) -> None:
    jf = thunder.jit(lambda a, d: torch.softmax(a, d), cache="symbolic values")
    run_with_grad(jf, (T(3, 4), 1))
    (backward,) = thunder.last_backward_traces(jf)
    alone = lint.lint_thunder(backward)
    assert summary(alone) == {("backward", "proxy", "torch.sum", "dim", ("d",))}
    assert alone.traces == {"backward": 1}
    listed = lint.lint_thunder([thunder.last_traces(jf)[-1], backward])
    assert {(f.trace, f.symbol) for f in listed} == {("computation", "torch.softmax"), ("backward", "torch.sum")}
    printed = str(listed)
    assert "- computation 0: torch.softmax(dim=d) holds the NumberProxy d, input d of the computation" in printed
    assert re.search(r"\n    t\d+ = torch.softmax\(a, d\)\n", printed)


def test_refuses_what_it_cannot_lint(thunder: Any, lint: Any) -> None:
    with pytest.raises(TypeError, match="has not run yet"):
        lint.lint_thunder(thunder.jit(lambda a: a + 1))
    with pytest.raises(TypeError, match=r"takes a function returned by thunder\.jit.*not int"):
        lint.lint_thunder(42)


def thunder_dim_symbols(thunder: Any) -> dict[str, list[str]]:
    """thunder.torch's symbols that take a dimension, with their parameters."""
    ltorch = pytest.importorskip("thunder.torch")
    symbol_class = pytest.importorskip("thunder.core.symbol").Symbol
    dims = {"dim", "dims", "dim0", "dim1", "dim2", "start_dim", "end_dim", "source", "destination", "correction"}
    found: dict[str, list[str]] = {}
    for obj in vars(ltorch).values():
        if isinstance(obj, symbol_class) and isinstance(obj.id, str):
            params = list(inspect.signature(obj.meta).parameters)
            if dims & set(params):
                found[obj.id] = params
    return found


def test_mapping_covers_thunder_torch_symbols_that_take_dims(thunder: Any, lint: Any) -> None:
    symbols = thunder_dim_symbols(thunder)
    covered = {name for name in symbols if lint.contract_of(name) is not None}
    for name in sorted(covered):
        contract = lint.contract_of(name)
        missing = [argument for _, argument in contract.static if argument not in symbols[name]]
        assert not missing, f"{name}: {contract.key}'s static {missing} are not parameters of thunder's {name}"
    print(f"\nthunder.torch symbols that take dims: {len(covered)}/{len(symbols)} mapped onto STATIC_PARAMS")
    print("not mapped (symscalar has no such op):", ", ".join(sorted(set(symbols) - covered)))
    must = {"torch.sum", "torch.mean", "torch.softmax", "torch.log_softmax", "torch.amax", "torch.var", "torch.std"}
    must |= {"torch.permute", "torch.transpose", "torch.squeeze", "torch.unsqueeze", "torch.cat", "torch.stack"}
    must |= {"torch.flatten", "torch.cumsum", "torch.gather", "torch.topk", "torch.sort", "log_softmax_backward"}
    assert must <= covered
    assert len(covered) >= 0.75 * len(symbols)


def test_every_mapping_entry_names_real_parameters(thunder: Any, lint: Any) -> None:
    prims = pytest.importorskip("thunder.core.prims")
    ltorch = pytest.importorskip("thunder.torch")
    symbol_class = pytest.importorskip("thunder.core.symbol").Symbol
    by_name = {
        lint.symbol_name(obj): obj
        for module in (ltorch, prims)
        for obj in vars(module).values()
        if isinstance(obj, symbol_class)
    }
    for name, (key, renames) in lint.THUNDER_SYMBOLS.items():
        assert key in STATIC_PARAMS, f"{name} maps to {key}, which is not in STATIC_PARAMS"
        assert set(renames) <= set(STATIC_PARAMS[key][1]), f"{name}: renames a parameter {key} does not have static"
        assert name in by_name, f"{name} is not a symbol of thunder.torch or thunder.core.prims"
        params = set(inspect.signature(by_name[name].meta).parameters)
        contract = lint.contract_of(name)
        assert {argument for _, argument in contract.static} <= params, name
        assert not set(contract.absent) & params, f"{name} has {contract.absent}: map them instead"


SCRIPT = """
import torch
import thunder


def runs():  # runs jitted code and returns nothing: every function jitted meanwhile is linted
    jf = thunder.jit(lambda a, d: a.sum(d), cache="symbolic values")
    jf(torch.rand(3, 4, requires_grad=True), 1).sum().backward()


def returns():  # returns the jitted function
    jf = thunder.jit(lambda a: a.sum(1), cache="symbolic values")
    jf(torch.rand(3, 4, requires_grad=True)).sum().backward()
    return jf


def jits_nothing():
    return None


def returns_a_tensor():
    return torch.ones(2)
"""


def test_command_line(thunder: Any, lint: Any, tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    main = pytest.importorskip("symscalar.__main__").main
    script = tmp_path / "program.py"
    script.write_text(SCRIPT)
    assert main(["lint-thunder", f"{script}::runs"]) == 1
    out = capsys.readouterr().out
    assert "torch.sum" in out and "torch.unsqueeze" in out and "baked" in out
    assert main(["lint-thunder", f"{script}::returns"]) == 0
    assert "0 finding(s)" in capsys.readouterr().out
    assert main(["lint-thunder", f"{script}::jits_nothing"]) == 2
    assert main(["lint-thunder", f"{script}::returns_a_tensor"]) == 2
    assert "returned Tensor, not a thunder-jitted function that has run" in capsys.readouterr().err
    assert main(["lint-thunder", f"{script}::absent"]) == 2
    assert main(["lint-thunder", str(script)]) == 2
    assert "SCRIPT.py::FUNCTION" in capsys.readouterr().err


def test_symscalar_does_not_import_thunder_and_says_what_is_missing() -> None:
    code = textwrap.dedent(
        """
        import sys
        import symscalar
        assert "thunder" not in sys.modules, "import symscalar imported thunder"
        sys.modules["thunder"] = None  # as if lightning-thunder were not installed
        try:
            symscalar.lint_thunder(None)
        except symscalar.errors.MissingDependencyError as error:
            print(error)
        """
    )
    root = pathlib.Path(__file__).parent.parent
    out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "pip install symscalar[thunder]" in out.stdout
