"""The generated per-call function: its source for representative signatures is checked
against ``tests/snapshots/dispatch.txt`` (a change to the hot path shows up as a diff in
review), and each generated function runs like eager.

Regenerate the snapshot after an intended change with:

    SYMSCALAR_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest -q tests/test_jit_dispatch.py
"""

from __future__ import annotations

import inspect
import os
import pathlib
from typing import Any

import pytest
import torch

import symscalar
from symscalar import DynamicFloat, DynamicInt, StaticInt
from symscalar._jit.dispatch import dispatch_source
from symscalar._jit.params import param_kinds

SNAPSHOT = pathlib.Path(__file__).parent / "snapshots" / "dispatch.txt"


def readme_benchmark(x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
    return torch.exp(torch.sum(x * s, 0) + 1)


def static_and_tensor(x: torch.Tensor, dim: StaticInt, keepdim: bool = False) -> torch.Tensor:
    return x.sum(dim, keepdim=keepdim)


def unannotated(x, pair, mask=None):
    out = x * pair[0] + pair[1]
    return out if mask is None else out * mask


def optional_dynamic(x: torch.Tensor, scale: DynamicFloat | None = None) -> torch.Tensor:
    return x if scale is None else x * scale


def every_parameter_kind(x: torch.Tensor, /, n: DynamicInt, *rest: torch.Tensor, k: StaticInt = 1, **named: Any):
    out = x * n * k
    for t in rest:
        out = out + t
    for v in named.values():
        out = out + v
    return out


CASES = [readme_benchmark, static_and_tensor, unannotated, optional_dynamic, every_parameter_kind]


def _rendered() -> str:
    parts = []
    for fn in CASES:
        sig = inspect.signature(fn)
        kinds, _, optional = param_kinds(fn, sig, (), ())
        source, _ = dispatch_source(sig, kinds, optional)
        parts.append(f"# ---- {fn.__name__}{sig}\n{source}")
    return "\n".join(parts)


def test_generated_source_matches_the_snapshot():
    rendered = _rendered()
    if os.environ.get("SYMSCALAR_UPDATE_SNAPSHOTS"):
        SNAPSHOT.write_text(rendered)
    expected = SNAPSHOT.read_text()
    assert rendered == expected, (
        "the generated per-call source changed; if intended, regenerate with "
        "SYMSCALAR_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest -q tests/test_jit_dispatch.py"
    )


def test_the_jitted_function_runs_the_snapshot_source():
    f = symscalar.jit(readme_benchmark)
    f(torch.ones(2, 2), 0.5)
    state = f._symscalar_state
    sig = inspect.signature(readme_benchmark)
    assert f.__source__ == dispatch_source(sig, state.kinds, state.optional)[0]


def _calls(fn) -> list[tuple[tuple[Any, ...], dict[str, Any]]]:
    x = torch.randn(3, 4)
    if fn is readme_benchmark:
        return [((x, s), {}) for s in (0.5, 2.0, -1.5, 3)]
    if fn is static_and_tensor:
        return [((x, 0), {}), ((x, 1), {"keepdim": True}), ((x * 2, 0), {}), ((x, 1), {"keepdim": True})]
    if fn is unannotated:
        return [((x, (2.0, x)), {}), ((x + 1, (2.0, x)), {"mask": x > 0}), ((x, (3, x)), {}), ((x, (2.0, x)), {})]
    if fn is optional_dynamic:
        return [((x,), {}), ((x, 2.5), {}), ((x,), {"scale": -1.0}), ((x, None), {})]
    return [
        ((x, 2), {}),
        ((x, 3, x, x), {"k": 2}),
        ((x, 4, x), {"a": x, "b": x * 2}),
        ((x, 5, x, x), {"k": 2}),
    ]


@pytest.mark.parametrize("fn", CASES, ids=lambda f: f.__name__)
def test_each_generated_function_computes_what_eager_computes(fn):
    jitted = symscalar.jit(fn)
    keys = set()
    for args, kwargs in _calls(fn):
        torch.testing.assert_close(jitted(*args, **kwargs), fn(*args, **kwargs))
        keys.add(jitted._symscalar_state.key_and_args(*_bound(fn, args, kwargs))[0])
        torch.testing.assert_close(jitted(*args, **kwargs), fn(*args, **kwargs))  # a hit
    info = jitted.cache_info()
    assert info.misses == len(keys)  # one trace per distinct key, every repeat a hit
    assert info.hits == 2 * len(_calls(fn)) - info.misses


def _bound(fn, args, kwargs) -> tuple[Any, ...]:
    bound = inspect.signature(fn).bind(*args, **kwargs)
    bound.apply_defaults()
    return tuple(bound.arguments[name] if name in bound.arguments else () for name in inspect.signature(fn).parameters)
