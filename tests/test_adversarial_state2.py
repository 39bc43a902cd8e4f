"""Adversarial pass over state that changes between calls of a jitted module, the way real
training and fine-tuning code changes it (optimizer steps, adapters merged and rescaled, flags
kept in lists and dicts): eager and jitted side by side over several calls."""

from __future__ import annotations

import copy
import functools
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn

import symscalar
from symscalar._jit import pystate


class _Lora(nn.Module):
    """peft's LoraLayer pattern, hand-written: the merged state is a property over a list
    filled in place, the scaling a dict updated in place."""

    def __init__(self) -> None:
        super().__init__()
        self.base = nn.Linear(4, 4)
        self.a = nn.Parameter(torch.randn(4, 4))
        self.merged_adapters: list[str] = []
        self.scaling = {"default": 2.0}
        self.skip: set[int] = set()

    @property
    def merged(self) -> bool:
        return bool(self.merged_adapters)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.base(x)
        if 0 in self.skip:
            return y
        if self.merged:
            return y
        return y + (x @ self.a) * self.scaling["default"]


class _Outer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inner = _Lora()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner(x)


_ORDER: list[int] = [0, 1]


def _ordered(x: torch.Tensor) -> torch.Tensor:
    return torch.stack([x[i] for i in _ORDER])


def _edits() -> list[tuple[str, object]]:
    def merge(m: _Lora) -> None:
        m.merged_adapters.append("default")

    def unmerge(m: _Lora) -> None:
        m.merged_adapters.clear()

    def rescale(m: _Lora) -> None:
        m.scaling["default"] = 0.5

    def skip(m: _Lora) -> None:
        m.skip.add(0)

    return [("merge", merge), ("unmerge", unmerge), ("rescale", rescale), ("skip", skip)]


@pytest.mark.parametrize("nested", [False, True])
def test_lists_dicts_and_sets_changed_in_place_between_calls_are_seen(nested: bool) -> None:
    """A list, dict or set attribute of a module filled, emptied or updated in place keeps its
    identity: the entry compares its items, so the next call retraces instead of running the
    program traced before (peft's merge_adapter/set_scale were silently stale)."""
    torch.manual_seed(0)
    eager: nn.Module = _Outer() if nested else _Lora()
    mine = copy.deepcopy(eager)
    jitted = symscalar.jit(mine)
    x = torch.randn(3, 4)
    torch.testing.assert_close(jitted(x), eager(x), rtol=0, atol=0)
    for _, edit in _edits():
        for m in (eager, mine):
            edit(m.inner if nested else m)  # type: ignore[operator]
        torch.testing.assert_close(jitted(x), eager(x), rtol=0, atol=0)
    assert jitted.cache_info()[:2] == (1, 4)  # unmerged: the first program again


_SNAPSHOTTED = [
    [1, 2],
    [1, 2.0],
    [1, True],
    [0.0],
    [-0.0],
    [float("nan")],
    (1, [2]),
    [(1, 2)],
    [[1], [2]],
    [[1], [2, 3]],
    {"a": 1},
    {"a": 1.0},
    {"b": 1},
    {"a": 1, "b": 2},
    {"b": 2, "a": 1},
    {"a": [1]},
    {"a": (1,)},
    {1: "a"},
    {1.0: "a"},
    {"a": {"b": None}},
    [set()],
    [{1}],
    [frozenset({1})],
    [torch.Size([2])],
    [(2,)],
    [np.float64(0.5)],
    [0.5],
    [torch.float32],
    [F.relu],
    [functools.partial(F.leaky_relu, negative_slope=0.1)],
    [functools.partial(F.leaky_relu, negative_slope=0.2)],
    [nn.GELU],
    list(range(64)),
    list(range(65)),
    [torch.zeros(1)],
    {"a": torch.zeros(1)},
    [nn.Linear(1, 1)],
    [[1] * 65],
    [],
    {},
    (),
]


def test_a_snapshot_compares_as_its_contents_key() -> None:
    """``same_value`` against a snapshotted list, dict or set walks the value once; it answers
    what comparing the value's contents key answers (types, signed zeros, NaN, order, nesting,
    values that cannot be checked), for every pair of a table of values."""
    for then in _SNAPSHOTTED:
        if not pystate.guardable(then):
            continue
        frozen = pystate.freeze(then)
        assert type(frozen) is pystate.Snapshot or not isinstance(then, (list, dict))
        if type(frozen) is not pystate.Snapshot:
            continue
        for now in _SNAPSHOTTED:
            expected = pystate.guardable(now) and pystate._content_key(now) == frozen.key
            assert pystate.same_value(now, frozen) == expected, (now, then)
        assert pystate.same_value(copy.deepcopy(then), frozen)


def _set_first(items: Any, value: Any) -> None:
    items[next(iter(items)) if isinstance(items, dict) else 0] = value


_PARTIAL = functools.partial(F.leaky_relu, negative_slope=0.1)
_CHANGES_IN_PLACE = [  # (value, a change keeping its identity)
    ([1, 2], lambda v: _set_first(v, 1.0)),
    ([1, 2], lambda v: _set_first(v, True)),
    ([0.0], lambda v: _set_first(v, -0.0)),
    ([1, 2], lambda v: v.reverse()),
    ({"a": 1, "b": 2}, lambda v: v.update(a=v.pop("a"))),  # reordered
    ({"a": [1]}, lambda v: v["a"].append(2)),
    ({"a": ([1], 2)}, lambda v: v["a"][0].append(2)),
    ([{"x": 1}], lambda v: v[0].update(x=1.0)),
    ([{1}], lambda v: v[0].add(2)),
    ({"a": {1}}, lambda v: v["a"].add(2)),
    ((([1],),), lambda v: v[0][0].append(2)),
    ({_PARTIAL}, lambda v: next(iter(v)).keywords.update(negative_slope=0.2)),
    ({(1, _PARTIAL): 1}, lambda v: next(iter(v))[1].keywords.update(negative_slope=0.3)),
    ([_PARTIAL], lambda v: v[0].keywords.update(negative_slope=0.4)),
    ([1, 2], lambda v: _set_first(v, 1)),  # an equal int: the same contents
    ({"a": 1.5}, lambda v: _set_first(v, float("1.5"))),
]


@pytest.mark.parametrize("index", range(len(_CHANGES_IN_PLACE)))
def test_a_snapshot_sees_a_change_in_place(index: int) -> None:
    """The snapshotted value itself changed in place (an item replaced by an equal one of
    another type, reordered, a nested list, set or partial's keywords changed): ``same_value``
    answers what comparing the contents key answers, never the stale identity of the items."""
    value, change = _CHANGES_IN_PLACE[index]
    value = copy.deepcopy(value)
    frozen = pystate.freeze(value)
    assert type(frozen) is pystate.Snapshot and pystate.same_value(value, frozen)
    change(value)
    assert pystate.same_value(value, frozen) == (pystate._content_key(value) == frozen.key)


def test_a_global_list_changed_in_place_is_seen() -> None:
    jitted = symscalar.jit(_ordered)
    x = torch.randn(2, 3)
    torch.testing.assert_close(jitted(x), _ordered(x), rtol=0, atol=0)
    _ORDER.reverse()
    try:
        torch.testing.assert_close(jitted(x), _ordered(x), rtol=0, atol=0)
    finally:
        _ORDER.reverse()
    torch.testing.assert_close(jitted(x), _ordered(x), rtol=0, atol=0)
    assert jitted.cache_info().misses == 2  # back to the first program


def test_peft_merge_unmerge_and_set_scale_follow_eager() -> None:
    peft = pytest.importorskip("peft")

    class Two(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.q = nn.Linear(4, 4)
            self.o = nn.Linear(4, 2)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.o(torch.relu(self.q(x)))

    torch.manual_seed(0)
    config = peft.LoraConfig(r=2, target_modules=["q"], init_lora_weights=False)
    eager = peft.get_peft_model(Two(), config)
    mine = copy.deepcopy(eager)
    jitted = symscalar.jit(mine)
    x = torch.randn(3, 4)

    def same() -> None:
        e, j = eager(x), jitted(x)
        torch.testing.assert_close(j, e)
        assert j.requires_grad == e.requires_grad

    same()
    for m in (eager, mine):
        m.base_model.merge_adapter()
    same()  # merged: the base weight holds the adapter, which must not be added again
    for m in (eager, mine):
        m.base_model.unmerge_adapter()
    same()
    for m in (eager, mine):
        for layer in m.modules():
            if hasattr(layer, "set_scale"):
                layer.set_scale("default", 0.5)
    same()


class _Settings(nn.Module):
    """Settings a user keeps on a module that are neither numbers nor tensors."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.scale = np.float64(1.0)
        self.steps = np.int64(1)
        self.act = F.relu
        self.gate = functools.partial(F.leaky_relu, negative_slope=0.1)
        self.norm_layer: type[nn.Module] = nn.Identity

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.lin(x) * float(self.scale)
        for _ in range(int(self.steps)):
            h = self.act(h) + self.gate(h)
        return self.norm_layer()(h)


@pytest.mark.parametrize(
    "name, value",
    [
        ("scale", np.float64(3.0)),
        ("steps", np.int64(2)),
        ("act", torch.tanh),
        ("act", F.gelu),
        ("gate", functools.partial(F.leaky_relu, negative_slope=0.5)),
        ("norm_layer", nn.Softsign),
    ],
)
def test_numpy_scalars_functions_and_classes_set_between_calls_are_seen(name: str, value: object) -> None:
    """A numpy scalar, a function, a partial or a class stored on the module was read once at
    trace time: setting another one ran the stale program."""
    torch.manual_seed(0)
    m = _Settings()
    jitted = symscalar.jit(m)
    x = torch.randn(2, 4)
    torch.testing.assert_close(jitted(x), m(x), rtol=0, atol=0)
    setattr(m, name, value)
    torch.testing.assert_close(jitted(x), m(x), rtol=0, atol=0)
    assert jitted.cache_info().misses == 2


def test_a_partials_keywords_changed_in_place_are_seen() -> None:
    torch.manual_seed(0)
    m = _Settings()
    jitted = symscalar.jit(m)
    x = torch.randn(2, 4)
    torch.testing.assert_close(jitted(x), m(x), rtol=0, atol=0)
    m.gate.keywords["negative_slope"] = 0.9  # type: ignore[attr-defined]
    torch.testing.assert_close(jitted(x), m(x), rtol=0, atol=0)
    m.gate.keywords["negative_slope"] = 0.1
    torch.testing.assert_close(jitted(x), m(x), rtol=0, atol=0)
    assert jitted.cache_info()[:2] == (1, 2)  # back to the first program
    m.gate = functools.partial(torch.add, other=torch.ones(4))  # a tensor it holds: refused
    with pytest.raises(symscalar.UnsupportedOperationError, match="reads a tensor from outside"):
        jitted(x)


class _Scaled(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x: torch.Tensor, scale: float = 1.0) -> torch.Tensor:
        return self.lin(x) * scale


def _count_args(module: nn.Module, args: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    return (args[0] * (len(args) + 1),)


def _new_kwargs(module: nn.Module, args: tuple[object, ...], kwargs: dict[str, object]) -> tuple[object, object]:
    return args, {**kwargs, "scale": 3.0}


@pytest.mark.parametrize("hook", ["count", "kwargs"])
def test_the_modules_pre_hooks_see_the_arguments_as_passed(hook: str) -> None:
    """The jitted module's forward pre-hooks saw the arguments bound with their defaults
    filled in, ``(x, 1.0)`` for ``m(x)``: a hook reading ``len(args)`` silently computed
    something else, one returning new kwargs raised a TypeError."""
    torch.manual_seed(0)
    m = _Scaled()
    jitted = symscalar.jit(m)
    x = torch.randn(2, 4)
    if hook == "count":
        m.register_forward_pre_hook(_count_args)
    else:
        m.register_forward_pre_hook(_new_kwargs, with_kwargs=True)
    for call in ((x,), (x, 2.0)) if hook == "count" else ((x,),):  # (x, 2.0) + scale=: eager's TypeError
        torch.testing.assert_close(jitted(*call), m(*call), rtol=0, atol=0)
    torch.testing.assert_close(jitted(x, scale=2.0), m(x, scale=2.0), rtol=0, atol=0)
