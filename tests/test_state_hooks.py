"""Hooks: the jitted module's own forward pre-hooks and forward hooks run eagerly around the
compiled program on every call (a pre-hook may replace the arguments, a forward hook the
output), registered before or after the first call, removed later; hooks on submodules,
backward hooks and global module hooks are refused with an error naming the hook and module."""

from __future__ import annotations

import pytest
import torch
from state_support import Twin, inputs
from torch import nn
from torch.nn.modules import module as nn_module

import symscalar
from symscalar.errors import UnsupportedOperationError

DTYPES = [torch.float32, torch.float64]


def mlp() -> nn.Module:
    return nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))


def scale_input(module, args):
    return (args[0] * 3,)


def shift_output(module, args, out):
    return out + 1


def kwargs_pre_hook(module, args, kwargs):
    return (args[0].flip(0),), kwargs


@pytest.mark.parametrize("dtype", DTYPES)
def test_top_level_hooks_run_on_every_call(dtype):
    twin = Twin(mlp, dtype)
    x = inputs(5, 3, dtype=dtype, requires_grad=True)
    seen: list[int] = []
    twin.call(x)
    handles = []
    for hook, kind in ((scale_input, "pre"), (shift_output, "post"), (kwargs_pre_hook, "pre-kw")):
        for m in (twin.eager, twin.module):
            if kind == "pre":
                handles.append(m.register_forward_pre_hook(hook))
            elif kind == "pre-kw":
                handles.append(m.register_forward_pre_hook(hook, with_kwargs=True))
            else:
                handles.append(m.register_forward_hook(hook))
        for _ in range(2):
            twin.call(x)
            twin.step()
    counter = lambda m, a, o: seen.append(1)  # noqa: E731 - a hook with a side effect
    twin.module.register_forward_hook(counter)
    twin.eager.register_forward_hook(counter)
    twin.call(x)
    assert len(seen) == 2  # ran once for eager, once for the jitted module
    for h in handles:
        h.remove()
    twin.call(x)
    assert twin.jitted.cache_info().misses == 1  # hooks never change the program


def test_hooks_registered_before_the_first_call():
    twin = Twin(mlp)
    twin.both(lambda m: m.register_forward_pre_hook(scale_input))
    twin.both(lambda m: m.register_forward_hook(shift_output))
    for _ in range(2):
        twin.call(inputs(5, 3))


def test_submodule_hooks_are_refused_at_trace_time_and_later():
    m = mlp()
    h = m[0].register_forward_hook(shift_output)
    f = symscalar.jit(m)
    with pytest.raises(UnsupportedOperationError, match=r"submodule Linear '0'.*shift_output"):
        f(inputs(5, 3))
    h.remove()
    f(inputs(5, 3))
    m[2].register_forward_pre_hook(scale_input)
    with pytest.raises(UnsupportedOperationError, match=r"submodule Linear '2'.*scale_input"):
        f(inputs(5, 3))


def test_a_function_calling_a_hooked_module_is_refused():
    m = mlp()
    f = symscalar.jit(lambda x: m(x).sum())
    f(inputs(5, 3))
    m.register_forward_hook(shift_output)
    with pytest.raises(UnsupportedOperationError, match="shift_output"):
        f(inputs(5, 3))


def test_backward_hooks_are_refused():
    m = mlp()
    m.register_full_backward_hook(lambda mod, gi, go: None)
    with pytest.raises(UnsupportedOperationError, match="backward hook"):
        symscalar.jit(m)(inputs(5, 3))


def test_global_module_hooks_are_refused():
    m = mlp()
    f = symscalar.jit(m)
    f(inputs(5, 3))
    handle = nn_module.register_module_forward_hook(shift_output)
    try:
        with pytest.raises(UnsupportedOperationError, match=r"register_module_forward_hook.*shift_output"):
            f(inputs(5, 3))
    finally:
        handle.remove()
    f(inputs(5, 3))


def test_unrelated_hooks_cost_a_recheck_not_an_error():
    m = mlp()
    f = symscalar.jit(m)
    x = inputs(5, 3)
    f(x)
    t = torch.ones(2, requires_grad=True)
    t.register_hook(lambda g: g)  # moves the hook epoch
    torch.testing.assert_close(f(x), m(x))
    assert f.cache_info().misses == 1


def test_hooks_on_the_jitted_wrapper_and_keyword_arguments():
    class Keywords(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(3, 2)

        def forward(self, x: torch.Tensor, *, scale: torch.Tensor) -> torch.Tensor:
            return self.lin(x) * scale

    def double_scale(module, args, kwargs):
        return args, {**kwargs, "scale": kwargs["scale"] * 2}

    torch.manual_seed(0)
    m = Keywords()
    eager = Keywords()
    eager.load_state_dict(m.state_dict())
    jitted = symscalar.jit(m)
    for mod in (m, eager):
        mod.register_forward_pre_hook(double_scale, with_kwargs=True)
    jitted.register_forward_hook(shift_output)  # on the wrapper jit(module) returns
    eager.register_forward_hook(shift_output)
    for _ in range(2):
        x, s = inputs(4, 3), inputs(2)
        torch.testing.assert_close(jitted(x, scale=s), eager(x, scale=s))
