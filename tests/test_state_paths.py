"""Tensors a traced function reads from outside its arguments are found by *path* wherever
they live, so a rebinding between calls is seen (a retrace or the new tensor read), never a
stale program: helpers' globals and closures, user Python modules (``lib.W``), plain objects,
lists, dicts and tuples, class attributes, ``_``-prefixed attributes, submodules' ``forward``
globals, function defaults and objects passed as static arguments. Every path to a tensor or
module is checked, so untying tied weights or unsharing a submodule retraces. A tensor with no
path is refused at trace time with a message naming it.

Each case runs eager and jitted side by side over several calls, changing the state between
them (a new tensor, new values in place, a new dtype, requires_grad toggled), and compares
values, dtypes, requires_grad and every gradient (``torch.autograd.grad``, None-ness included)."""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from typing import Any

import pytest
import state_paths_lib as lib
import torch
from state_support import Twin, assert_same, assert_same_grad, inputs
from torch import nn

import symscalar
from symscalar import UnsupportedOperationError
from symscalar.state import Roots

DTYPES = [torch.float32, torch.float64]


def fresh(seed: int, dtype: torch.dtype, requires_grad: bool = True) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(3, generator=g, dtype=dtype).requires_grad_(requires_grad)


def compare(
    fn: Callable[..., Any], jitted: Callable[..., Any], args: tuple[Any, ...], leaves: list[torch.Tensor]
) -> None:
    """One call of both; values, dtypes, requires_grad and the gradient of every leaf."""
    expected = fn(*args)
    out = jitted(*args)
    assert_same(out, expected)
    wrt = [t for t in (*leaves, *args) if isinstance(t, torch.Tensor) and t.requires_grad]
    if expected.requires_grad and wrt:
        ct = torch.randn_like(expected)
        want = torch.autograd.grad(expected, wrt, ct, allow_unused=True)
        got = torch.autograd.grad(out, wrt, ct, allow_unused=True)
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same_grad(g, w, f"leaf {i}")


def drive(
    fn: Callable[..., Any],
    set_state: Callable[[torch.Tensor], None],
    dtype: torch.dtype,
    jitted: Callable[..., Any] | None = None,
    extra: tuple[Any, ...] = (),
) -> Callable[..., Any]:
    """Eager and jitted over a sequence of state changes of the tensor ``set_state`` installs."""
    jitted = jitted or symscalar.jit(fn)
    x = inputs(3, dtype=dtype, requires_grad=True)
    steps = [
        fresh(1, dtype),  # the first tensor
        fresh(2, dtype),  # rebound: a new tensor, same metadata
        None,  # new values in place
        fresh(3, dtype, requires_grad=False),  # frozen
        fresh(4, torch.float64 if dtype == torch.float32 else torch.float32),  # another dtype
        fresh(5, dtype),  # back
    ]
    current = steps[0]
    for new in steps:
        if new is None:
            with torch.no_grad():
                current.mul_(-2.0)
        else:
            current = new
            set_state(current)
        compare(fn, jitted, (x, *extra), [current])
    misses = jitted.cache_info().misses
    compare(fn, jitted, (x, *extra), [current])  # nothing changed: a cache hit
    assert jitted.cache_info().misses == misses
    return jitted


# ----------------------------------------------------------------------------------------
# Globals and closures of helper functions, user Python modules, plain global objects

_G = torch.ones(3)
_LIST = [torch.ones(3)]
_DICT = {"w": torch.ones(3)}
_TUPLE_HOLDER = {"pair": (torch.ones(3), torch.ones(3))}


def _helper(x: torch.Tensor) -> torch.Tensor:
    return x * _G


def _calls_helper(x: torch.Tensor) -> torch.Tensor:
    return _helper(x).sin() + 1


def _set_g(t: torch.Tensor) -> None:
    global _G
    _G = t


def _closure_pair() -> tuple[Callable[..., Any], Callable[[torch.Tensor], None]]:
    w = torch.ones(3)

    def helper(x: torch.Tensor) -> torch.Tensor:
        return x * w

    def set_w(t: torch.Tensor) -> None:
        nonlocal w
        w = t

    return helper, set_w


_closure_helper, _set_closure = _closure_pair()


def _calls_closure_helper(x: torch.Tensor) -> torch.Tensor:
    return _closure_helper(x) * 3


def _reads_lib_attribute(x: torch.Tensor) -> torch.Tensor:
    return x * lib.W


def _calls_lib_helper(x: torch.Tensor) -> torch.Tensor:
    return lib.nested_helper(x)


def _reads_lib_object(x: torch.Tensor) -> torch.Tensor:
    return x * lib.HOLDER.inner.w + lib.HOLDER.items[0]


def _reads_containers(x: torch.Tensor) -> torch.Tensor:
    return x * _LIST[0] + _DICT["w"] * _TUPLE_HOLDER["pair"][1]


def _set_lib_w(t: torch.Tensor) -> None:
    lib.W = t


def _set_lib_object(t: torch.Tensor) -> None:
    lib.HOLDER.inner.w = t
    lib.HOLDER.items[0] = (t.detach() * 2).requires_grad_(t.requires_grad)


def _set_containers(t: torch.Tensor) -> None:
    _LIST[0] = t
    _DICT["w"] = (t.detach() + 1).requires_grad_(t.requires_grad)
    _TUPLE_HOLDER["pair"] = (t, t.detach() * 3)


GLOBAL_CASES = {
    "helper's global": (_calls_helper, _set_g),
    "helper's closure cell": (_calls_closure_helper, _set_closure),
    "user module attribute (lib.W)": (_reads_lib_attribute, _set_lib_w),
    "user module helper reading its globals": (_calls_lib_helper, _set_lib_w),
    "nested plain global object and its list": (_reads_lib_object, _set_lib_object),
    "global list, dict and tuple items": (_reads_containers, _set_containers),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("case", GLOBAL_CASES)
def test_tensors_read_through_globals_closures_and_python_modules_are_reread(case: str, dtype: torch.dtype) -> None:
    fn, set_state = GLOBAL_CASES[case]
    drive(fn, set_state, dtype)


# ----------------------------------------------------------------------------------------
# Class attributes, _attributes, containers and plain objects held by modules


class Config:
    def __init__(self) -> None:
        self.shift = torch.zeros(3)


class Base(nn.Module):
    SCALE = torch.ones(3)  # a class attribute of a base class


class Holds(Base):
    OFFSET = torch.zeros(3)

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 3)
        self._private = torch.ones(3)
        self.weights = [torch.ones(3)]
        self.table = {"w": torch.ones(3)}
        self.config = Config()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = self.lin(x) * self.SCALE + type(self).OFFSET
        return h * self._private + self.weights[0] * self.table["w"] + self.config.shift


def _module_setters() -> dict[str, Callable[[nn.Module, torch.Tensor], None]]:
    def cls_attr(m: nn.Module, t: torch.Tensor) -> None:
        type(m).OFFSET = t

    def base_cls_attr(m: nn.Module, t: torch.Tensor) -> None:
        Base.SCALE = t

    def private(m: nn.Module, t: torch.Tensor) -> None:
        m._private = t

    def list_item(m: nn.Module, t: torch.Tensor) -> None:
        m.weights[0] = t

    def dict_item(m: nn.Module, t: torch.Tensor) -> None:
        m.table["w"] = t

    def plain_object(m: nn.Module, t: torch.Tensor) -> None:
        m.config.shift = t

    return {
        "class attribute": cls_attr,
        "base class attribute": base_cls_attr,
        "_private attribute": private,
        "list item": list_item,
        "dict item": dict_item,
        "plain object attribute": plain_object,
    }


MODULE_SETTERS = _module_setters()


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("where", MODULE_SETTERS)
def test_tensors_held_by_modules_outside_parameters_and_buffers_are_reread(where: str, dtype: torch.dtype) -> None:
    saved = (Holds.OFFSET, Base.SCALE)
    try:
        torch.manual_seed(0)
        module = Holds().to(dtype)
        set_state = MODULE_SETTERS[where]
        jitted = symscalar.jit(module)
        drive(module, lambda t: set_state(module, t), dtype, jitted=jitted)
        # the parameters' gradients too, through the module's own backward
        x = inputs(2, 3, dtype=dtype)
        module(x).sum().backward()
        want = [p.grad.clone() for p in module.parameters()]
        module.zero_grad()
        jitted(x).sum().backward()
        for p, w in zip(module.parameters(), want):
            torch.testing.assert_close(p.grad, w)
    finally:
        Holds.OFFSET, Base.SCALE = saved


class ReadsGlobal(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * _G


class Outer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.inner = ReadsGlobal()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.inner(x) + 1


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_submodule_forward_reading_a_global_is_reread(dtype: torch.dtype) -> None:
    drive(Outer(), _set_g, dtype)


class Shared:
    W = torch.ones(3)


class Derived(Shared):
    pass


def _reads_class_attributes(x: torch.Tensor) -> torch.Tensor:
    return x * Shared.W + Derived.W


def _set_class_attribute(t: torch.Tensor) -> None:
    Shared.W = t


@pytest.mark.parametrize("dtype", DTYPES)
def test_class_attributes_read_through_a_global_class_are_reread(dtype: torch.dtype) -> None:
    saved = Shared.W
    try:
        drive(_reads_class_attributes, _set_class_attribute, dtype)
    finally:
        Shared.W = saved


_DEFAULT = torch.ones(3)


def _with_default(x: torch.Tensor, w: torch.Tensor = _DEFAULT) -> torch.Tensor:
    return x * w


def _calls_with_default(x: torch.Tensor) -> torch.Tensor:
    return _with_default(x) + 1


def _set_default(t: torch.Tensor) -> None:
    _with_default.__defaults__ = (t,)


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_helper_default_argument_is_reread(dtype: torch.dtype) -> None:
    drive(_calls_with_default, _set_default, dtype)


class Box:
    """An object passed as an argument: jit keys it by identity, so its tensors are read
    through the argument's path."""

    def __init__(self) -> None:
        self.w = torch.ones(3)


class Slotted:
    __slots__ = ("w",)

    def __init__(self) -> None:
        self.w = torch.ones(3)


_SLOTTED = Slotted()


def _reads_slots(x: torch.Tensor) -> torch.Tensor:
    return x * _SLOTTED.w


def _set_slot(t: torch.Tensor) -> None:
    _SLOTTED.w = t


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_tensor_in_a_slot_of_a_global_object_is_reread(dtype: torch.dtype) -> None:
    drive(_reads_slots, _set_slot, dtype)


def _reads_box(x: torch.Tensor, box: Box) -> torch.Tensor:
    return x * box.w


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_tensor_inside_a_static_argument_is_reread(dtype: torch.dtype) -> None:
    box = Box()

    def set_box(t: torch.Tensor) -> None:
        box.w = t

    drive(_reads_box, set_box, dtype, extra=(box,))


# ----------------------------------------------------------------------------------------
# Aliases: tied weights, shared submodules, a tensor reachable two ways


class Tied(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Linear(4, 4, bias=False)
        self.head = nn.Linear(4, 4, bias=False)
        self.head.weight = self.emb.weight
        self.block = nn.Linear(4, 4)
        self.other = self.block  # a submodule shared by two names

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(torch.tanh(self.other(self.block(self.emb(x)))))


@pytest.mark.parametrize("dtype", DTYPES)
def test_untying_tied_weights_and_unsharing_a_submodule_are_seen(dtype: torch.dtype) -> None:
    twin = Twin(Tied, dtype)
    x = inputs(2, 4, dtype=dtype, requires_grad=True)
    twin.call(x)
    twin.step()
    twin.call(x)

    def untie(m: nn.Module) -> None:
        m.head.weight = nn.Parameter(m.emb.weight.detach().clone() * 0.5)

    twin.both(untie)
    twin.call(x)
    twin.step()
    twin.call(x)

    def unshare(m: nn.Module) -> None:
        m.other = copy.deepcopy(m.block)
        with torch.no_grad():
            m.other.weight.mul_(-1.0)

    twin.both(unshare)
    twin.call(x)
    twin.step()

    def retie(m: nn.Module) -> None:
        m.head.weight = m.emb.weight

    twin.both(retie)
    twin.call(x)
    twin.call(x)


_MODEL = nn.Linear(3, 3)
_W = _MODEL.weight


def _reads_twice(x: torch.Tensor) -> torch.Tensor:
    return _MODEL(x) + x @ _W  # the same parameter through the module and through a global


@pytest.mark.parametrize("dtype", DTYPES)
def test_a_tensor_reached_through_a_module_and_a_global_is_checked_on_both_paths(dtype: torch.dtype) -> None:
    global _MODEL, _W
    saved = _MODEL, _W
    try:
        _MODEL = nn.Linear(3, 3).to(dtype)
        _W = _MODEL.weight
        jitted = symscalar.jit(_reads_twice)
        x = inputs(2, 3, dtype=dtype, requires_grad=True)
        compare(_reads_twice, jitted, (x,), [_MODEL.weight, _MODEL.bias])
        _W = nn.Parameter(_MODEL.weight.detach() * 3)  # the global no longer is the module's
        compare(_reads_twice, jitted, (x,), [_MODEL.weight, _MODEL.bias, _W])
        _W = _MODEL.weight
        compare(_reads_twice, jitted, (x,), [_MODEL.weight, _MODEL.bias])
    finally:
        _MODEL, _W = saved


# ----------------------------------------------------------------------------------------
# Constants and what has no path


@functools.lru_cache
def _cached_mask(n: int) -> torch.Tensor:
    return torch.ones(n, n).triu(1).bool()


def _uses_cached_mask(x: torch.Tensor) -> torch.Tensor:
    return x.masked_fill(_cached_mask(x.shape[-1]), 0.0)


def test_a_constant_a_trace_built_and_a_cache_kept_is_still_a_constant() -> None:
    _cached_mask.cache_clear()
    jitted = symscalar.jit(_uses_cached_mask)
    for dtype in DTYPES:  # the second dtype retraces and reads the mask the first trace cached
        x = inputs(3, 3, dtype=dtype, requires_grad=True)
        out = jitted(x)  # first: the trace builds the mask (from Python values alone)
        assert_same(out, _uses_cached_mask(x))
        compare(_uses_cached_mask, jitted, (x,), [])


@functools.lru_cache
def _cached_weight() -> torch.Tensor:
    return torch.full((3,), 2.0)


def _uses_cached_weight(x: torch.Tensor) -> torch.Tensor:
    return x * _cached_weight()


def test_a_tensor_without_a_path_is_refused_with_its_shape_dtype_op_and_the_fix() -> None:
    _cached_weight.cache_clear()
    _cached_weight()  # filled eagerly: the tensor is no trace's constant and has no path
    with pytest.raises(UnsupportedOperationError) as info:
        symscalar.jit(_uses_cached_weight)(torch.ones(3))
    message = str(info.value)
    for part in (
        "_uses_cached_weight",
        "shape (3,)",
        "torch.float32",
        "torch.Tensor.__mul__",
        "pass it as an argument",
        "parameter/buffer/attribute",
    ):
        assert part in message, (part, message)


def test_the_walk_skips_library_code_and_finds_every_path() -> None:
    model = Tied()
    roots = Roots(model)
    walk = roots.walk()
    weight = model.emb.weight
    assert len(walk.paths[id(weight)]) == 2  # emb.weight and head.weight
    assert len(walk.paths[id(model.block)]) == 2  # block and other
    aliases = walk.aliases([id(weight)])
    assert len(aliases) == 1
    # torch's own functions and modules are not entered: no root comes from torch's code, and
    # the only tensors found are the module's parameters
    assert all(" of torch" not in r.label for r in roots.roots), [r.label for r in roots.roots]
    assert {id(t) for t, _ in walk.tensors.values()} == {id(p) for p in model.parameters()}
