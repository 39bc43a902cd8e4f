"""Every retrace explained, budgeted and predictable: ``explain()``, the trace budget,
``no_retrace``/``retrace=False``, ``would_trace`` and the LRU bound on entries.

This module uses ``from __future__ import annotations`` on purpose: annotations are strings,
and a local alias of ``DynamicFloat`` must still make a parameter dynamic."""

from __future__ import annotations

import functools
import logging
import os
import subprocess
import sys
import warnings

import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torch.fx.experimental.sym_node import DynamicInt as TorchDynamicInt

import symscalar
from symscalar import DynamicFloat, DynamicInt, StaticInt
from symscalar.explain import TraceLimitWarning, UnannotatedNumberWarning


def reasons(f: object) -> list[str]:
    return [reason for miss in f.explain() for reason in miss.reasons]  # type: ignore[attr-defined]


def test_each_miss_reason_names_what_changed() -> None:
    @symscalar.jit
    def f(x: torch.Tensor, s: DynamicFloat, dim: StaticInt) -> torch.Tensor:
        return (x * s).sum(dim)

    x = torch.randn(4, 3)
    f(x, 0.5, 0)
    f(x, 0.7, 0)  # a hit: s is dynamic
    f(x, 0.5, 1)
    f(torch.randn(8, 3), 0.5, 1)
    f(torch.randn(8, 3, dtype=torch.float64), 0.5, 1)
    f(torch.randn(8, 3, dtype=torch.float64, requires_grad=True), 0.5, 1)
    got = reasons(f)
    assert got[0] == "first call"
    assert got[1].startswith("parameter 'dim' 0 → 1 (static, declared at ")
    assert "annotate" not in got[1]  # declared StaticInt on purpose: no advice to change it
    assert got[2] == "tensor 'x' shape (4, 3) → (8, 3)"
    assert got[3] == "tensor 'x' dtype torch.float32 → torch.float64"
    assert got[4] == "tensor 'x' requires_grad False → True"
    assert len(f.explain()) == f.cache_info().misses == 5
    assert [m.number for m in f.explain()] == [1, 2, 3, 4, 5]
    assert all(m.trace_ms > 0 for m in f.explain())
    assert "f trace #2: parameter 'dim' 0 → 1" in str(f.explain()).splitlines()[1]


# retraces on purpose (filtered here, the xdist controller need not import symscalar to show it)
@pytest.mark.filterwarnings("ignore::symscalar.explain.UnannotatedNumberWarning")
def test_static_values_of_another_type_or_sign_are_named() -> None:
    f = symscalar.jit(lambda x, k: x * k)
    x = torch.ones(2)
    f(x, 200)
    f(x, 200.0)
    f(x, 0.0)
    f(x, -0.0)
    assert reasons(f)[1:] == [r for r in reasons(f)[1:] if "unannotated, so static" in r]
    assert reasons(f)[1].startswith("parameter 'k' 200 → 200.0")
    assert reasons(f)[3].startswith("parameter 'k' 0.0 → -0.0")


def test_guard_failure_is_a_reason() -> None:
    @symscalar.jit
    def f(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
        return x.sum(symscalar.specialize(n))

    x = torch.randn(2, 3)
    f(x, 0)
    f(x, 0)
    f(x, 1)
    assert (
        reasons(f)[1]
        == "guard specialize(parameter 'n' of test_guard_failure_is_a_reason.<locals>.f) == 0 failed: it is 1 now"
    )


def test_misses_are_logged(caplog: pytest.LogCaptureFixture) -> None:
    f = symscalar.jit(lambda x, k: x * k)
    with caplog.at_level(logging.INFO, logger="symscalar.jit"):
        f(torch.ones(2), 1)
        f(torch.ones(2), 2)
    messages = [r.getMessage() for r in caplog.records if r.name == "symscalar.jit"]
    assert messages[0].startswith("test_misses_are_logged.<locals>.<lambda> trace #1: first call")
    assert "<lambda> trace #2: parameter 'k' 1 → 2 (unannotated, so static" in messages[1]


@pytest.mark.slow
def test_symscalar_logs_environment_variable() -> None:
    code = (
        "import torch, symscalar\n"
        "f = symscalar.jit(lambda x, k: x * k)\n"
        "f(torch.ones(2), 1); f(torch.ones(2), 1); f(torch.ones(2), 3)\n"
    )
    env = {**os.environ, "SYMSCALAR_LOGS": "retraces", "PYTHONPATH": os.getcwd()}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300)
    lines = [line for line in out.stderr.splitlines() if line.startswith("[symscalar]")]
    assert len(lines) == 2, out.stderr
    assert "trace #2: parameter 'k' 1 → 3" in lines[1]


def test_trace_budget_warns_once_with_the_cause() -> None:
    f = symscalar.jit(lambda x, lr: x * lr, max_traces=3)
    x = torch.ones(2)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i in range(6):
            f(x, 0.1 * i)
    limit = [w for w in caught if issubclass(w.category, TraceLimitWarning)]
    assert len(limit) == 1
    text = str(limit[0].message)
    assert "has traced 3 times (max_traces=3)" in text
    assert "Most retraces came from parameter 'lr'" in text and "values so far: 0.0, 0.1, 0.2" in text
    assert "annotate it DynamicFloat" in text
    assert f.cache_info().misses == 6  # a warning, not a refusal


def test_trace_budget_error() -> None:
    f = symscalar.jit(lambda x, n: x * n, max_traces=2, on_limit="error")
    x = torch.ones(2)
    f(x, 1)
    f(x, 2)
    f(x, 1)  # a hit is always fine
    with pytest.raises(symscalar.RetraceError, match=r"has traced 2 times \(max_traces=2\).*parameter 'n' 2 → 3"):
        f(x, 3)
    assert f.cache_info().misses == 2


def test_global_config_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(symscalar.config, "max_traces", 1)
    monkeypatch.setattr(symscalar.config, "on_limit", "error")
    f = symscalar.jit(lambda x, n: x * n)
    f(torch.ones(2), 1)
    with pytest.raises(symscalar.RetraceError):
        f(torch.ones(2), 2)
    g = symscalar.jit(lambda x, n: x * n, max_traces=5)  # an option beats the default
    g(torch.ones(2), 1)
    g(torch.ones(2), 2)


def test_bad_options_are_rejected() -> None:
    for options in ({"max_traces": 0}, {"on_limit": "ignore"}, {"max_entries": -1}, {"max_traces": True}):
        with pytest.raises(ValueError, match=next(iter(options))):
            symscalar.jit(lambda x: x, **options)


def test_unannotated_number_warns_once_after_two_retraces() -> None:
    def step(x: torch.Tensor, lr):  # type: ignore[no-untyped-def]
        return x * lr

    f = symscalar.jit(step)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for lr in (0.1, 0.2, 0.3, 0.4):
            f(torch.ones(2), lr)
    found = [w for w in caught if issubclass(w.category, UnannotatedNumberWarning)]
    assert len(found) == 1
    assert "parameter 'lr' has caused 2 retraces (values 0.1, 0.2, 0.3)" in str(found[0].message)
    assert "Annotate it DynamicFloat" in str(found[0].message)
    assert found[0].filename == __file__  # points at the call


def test_no_retrace() -> None:
    f = symscalar.jit(lambda x, k: x * k)
    x = torch.ones(2)
    f(x, 2)
    with symscalar.no_retrace():
        f(x, 2)
        with pytest.raises(
            symscalar.RetraceError, match=r"no_retrace\(\).*tensor 'x' dtype torch.float32 → torch.float64"
        ):
            f(x.double(), 2)
    f(x.double(), 2)  # allowed again outside the block
    assert f.cache_info().misses == 2


def test_retrace_false_refuses_every_miss() -> None:
    f = symscalar.jit(lambda x: x * 2, retrace=False)
    with pytest.raises(symscalar.RetraceError, match=r"retrace=False\): first call"):
        f(torch.ones(2))


def test_would_trace_without_tracing_or_running() -> None:
    calls = []

    def g(x: torch.Tensor, s: DynamicFloat, dim: StaticInt = 0) -> torch.Tensor:
        calls.append(1)
        return (x * s).sum(dim)

    f = symscalar.jit(g)
    x = torch.randn(3, 3)
    first = f.would_trace(x, 0.5)
    assert first and str(first) == "first call"
    f(x, 0.5)
    assert not f.would_trace(x, 2.0)
    assert not f.would_trace(x, s=2.0, dim=0)
    answer = f.would_trace(x, 2.0, dim=1)
    assert answer and answer.reasons[0].startswith("parameter 'dim' 0 → 1")
    assert len(calls) == 1 and f.cache_info().misses == 1
    with pytest.raises(TypeError, match="DynamicFloat"):
        f.would_trace(x, "nope")


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([(2, 3), (3, 3)]), st.sampled_from([0, 1]), st.floats(-2, 2, allow_nan=False)),
        min_size=1,
        max_size=8,
    )
)
def test_would_trace_agrees_with_the_call(calls: list[tuple[tuple[int, int], int, float]]) -> None:
    @symscalar.jit(max_entries=2)
    def f(x: torch.Tensor, s: DynamicFloat, dim: StaticInt) -> torch.Tensor:
        return (x * s).sum(dim)

    for shape, dim, s in calls:
        x = torch.ones(shape)
        predicted = bool(f.would_trace(x, s, dim))
        before = f.cache_info().misses
        f(x, s, dim)
        assert predicted == (f.cache_info().misses > before)


# retraces on purpose (filtered here, the xdist controller need not import symscalar to show it)
@pytest.mark.filterwarnings("ignore::symscalar.explain.UnannotatedNumberWarning")
def test_lru_eviction_bounds_entries() -> None:
    f = symscalar.jit(lambda x, k: x * k, max_entries=3)
    x = torch.ones(2)
    for k in (1, 2, 3, 1, 4, 1, 2):  # 1 is used again before 4 arrives: 2 is evicted, then 3
        f(x, k)
    info = f.cache_info()
    assert (info.hits, info.misses, info.entries, info.evictions) == (2, 5, 3, 2)
    assert "evicted" in reasons(f)[-1]
    f(x, 1)
    assert f.cache_info().hits == 3


# retraces on purpose (filtered here, the xdist controller need not import symscalar to show it)
@pytest.mark.filterwarnings("ignore::symscalar.explain.UnannotatedNumberWarning")
def test_many_static_values_stay_bounded() -> None:
    f = symscalar.jit(lambda x, k: x * k, max_entries=16, max_traces=10_000)
    for k in range(200):
        f(torch.ones(1), k)
    assert f.cache_info().entries == 16 and f.cache_info().evictions == 184


def test_local_alias_under_future_annotations_is_dynamic() -> None:
    Scale = DynamicFloat

    @symscalar.jit
    def f(x: torch.Tensor, s: Scale) -> torch.Tensor:
        return x * s

    for s in (0.5, 1.5, 2.5):
        torch.testing.assert_close(f(torch.ones(2), s), torch.full((2,), s))
    assert f.cache_info().misses == 1


def test_partial_of_an_annotated_function_keeps_its_annotations() -> None:
    def g(x: torch.Tensor, s: DynamicFloat, k: int) -> torch.Tensor:
        return x * s * k

    f = symscalar.jit(functools.partial(g, k=3))
    for s in (0.5, 1.5):
        torch.testing.assert_close(f(torch.ones(2), s), torch.full((2,), 3 * s))
    assert f.cache_info().misses == 1


def test_unresolvable_annotation_is_explained() -> None:
    def g(x: torch.Tensor, s: NotDefinedAnywhere) -> torch.Tensor:  # type: ignore[name-defined] # noqa: F821
        return x * s

    f = symscalar.jit(g)
    f(torch.ones(2), 1.0)
    f(torch.ones(2), 2.0)
    assert "its annotation 'NotDefinedAnywhere' (NameError" in reasons(f)[1]
    assert "could not be resolved, so it is static" in reasons(f)[1]


def test_optional_and_union_of_dynamic_types_are_dynamic() -> None:
    @symscalar.jit
    def f(
        x: torch.Tensor,
        s: DynamicFloat | None = None,
        n: DynamicInt | None = None,
        u: DynamicInt | DynamicFloat = 1,
    ) -> torch.Tensor:
        if s is not None:
            x = x * s
        if n is not None:
            x = x + n
        return x * u

    def eager(x, s=None, n=None, u=1):  # type: ignore[no-untyped-def]
        return ((x * s if s is not None else x) + (n if n is not None else 0)) * u

    x = torch.ones(2, dtype=torch.float64)
    calls = [(), (0.5,), (0.7,), (0.7, 3), (0.9, 4), (None, 4), (None, 5, 2.5), (None, 6, 3.5), (None, 6, 3)]
    for args in calls:
        got, expected = f(x, *args), eager(x, *args)
        assert got.dtype == expected.dtype
        torch.testing.assert_close(got, expected)
    # one entry per pattern of None and Python types; new values of a pattern are hits
    assert f.cache_info().misses == 5 and f.cache_info().hits == 4
    assert "parameter 's' type NoneType → float" in reasons(f)[1]
    with pytest.raises(TypeError, match="DynamicFloat"):
        f(x, "0.5")


def test_torch_dynamic_int_marks_an_unannotated_number_dynamic() -> None:
    f = symscalar.jit(lambda x, n: x * n + n)
    x = torch.ones(2)
    for n in (TorchDynamicInt(4), TorchDynamicInt(5), TorchDynamicInt(-1)):
        torch.testing.assert_close(f(x, n), x * int(n) + int(n))
    assert f.cache_info().misses == 1
    f(x, 4)  # a plain int stays static: its own entry
    assert f.cache_info().misses == 2
