"""Python state a trace read, function defaults, wrapper signatures, tracebacks and refused
compositions (issue 22): each side by side with eager over several calls with the state
changing between them, comparing values, dtypes and every gradient (None-ness included)."""

from __future__ import annotations

import copy
import functools
import traceback
import types

import pytest
import torch
from torch import nn
from torch.utils.checkpoint import checkpoint

import symscalar
from symscalar import DynamicInt
from symscalar.errors import StaticValueRequiredError, UnsupportedOperationError


def assert_same(mine: torch.Tensor, eager: torch.Tensor) -> None:
    assert mine.dtype == eager.dtype
    torch.testing.assert_close(mine, eager)


def assert_same_grads(mine: nn.Module, eager: nn.Module) -> None:
    for (name, a), (_, b) in zip(mine.named_parameters(), eager.named_parameters()):
        assert (a.grad is None) == (b.grad is None), name
        if a.grad is not None:
            torch.testing.assert_close(a.grad, b.grad, msg=name)


def side_by_side(model: nn.Module, steps: list, call=lambda m, x: m(x)) -> symscalar.jit:
    """Run ``steps`` (each: change the state of a model, then the input) on the model and a
    copy; the copy through jit. Values, dtypes and gradients must match at every step."""
    eager, mine = model, copy.deepcopy(model)
    jitted = symscalar.jit(lambda x: call(mine, x))
    for step, (change, x) in enumerate(steps):
        change(eager)
        change(mine)
        out_e, out_m = call(eager, x), jitted(x)
        assert_same(out_m, out_e)
        eager.zero_grad(set_to_none=True)
        mine.zero_grad(set_to_none=True)
        out_e.sum().backward()
        out_m.sum().backward()
        assert_same_grads(mine, eager), step
    return jitted


class KVCache(nn.Module):
    """A generation loop's cache: None until the first call, then grown with torch.cat."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Linear(4, 4)
        self.k: torch.Tensor | None = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        k = self.proj(x).detach()
        self.k = k if self.k is None else torch.cat([self.k, k])
        return self.proj(x) * self.k.sum(0)


def test_an_attribute_none_when_traced_and_a_tensor_later_kv_cache() -> None:
    torch.manual_seed(0)
    eager = KVCache()
    mine = copy.deepcopy(eager)
    jitted = symscalar.jit(mine)
    for step in range(4):
        x = torch.randn(1, 4)
        out_e, out_m = eager(x), jitted(x)
        assert_same(out_m, out_e)
        assert mine.k is not None and eager.k is not None
        assert mine.k.shape == eager.k.shape == (step + 1, 4)
        out_e.sum().backward()
        out_m.sum().backward()
        assert_same_grads(mine, eager)


class Masked(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.mask: torch.Tensor | None = None
        self.scale = 2.0
        self.drop = nn.Dropout(0.0)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.lin(x) * self.scale
        if self.mask is not None:
            y = y.masked_fill(self.mask, 0.0)
        return self.drop(y)


def _set(**values):
    def change(model: nn.Module) -> None:
        for path, value in values.items():
            *owner, name = path.split("__")
            target = model
            for part in owner:
                target = getattr(target, part)
            setattr(target, name, value)

    return change


def test_module_attributes_changed_between_calls_retrace() -> None:
    torch.manual_seed(0)
    x = torch.randn(3, 4)
    keep = _set()
    jitted = side_by_side(
        Masked(),
        [
            (keep, x),
            (_set(mask=torch.tensor([True, False, True, False])), x),  # None -> a tensor
            (_set(scale=3.0), x),  # a float
            (_set(scale=3), x),  # the same number, another type: int promotion differs
            (_set(drop__p=1.0), x),  # a submodule's float (dropout p: all zeros in eager)
            (_set(mask=None, drop__p=0.0, scale=2.0), x),  # back to the first program
        ],
    )
    assert jitted.cache_info().misses == 5  # the last call found the first entry


def test_argument_object_attribute_changed_between_calls() -> None:
    torch.manual_seed(0)
    lin = nn.Linear(4, 4)
    lin_e = copy.deepcopy(lin)

    class Config:
        def __init__(self) -> None:
            self.temperature = 1.0
            self.greedy = False

    for cfg in (Config(), types.SimpleNamespace(temperature=1.0, greedy=False)):

        def sample(model: nn.Module, x: torch.Tensor, cfg) -> torch.Tensor:
            logits = model(x) / cfg.temperature
            return logits.argmax(-1).to(logits.dtype) if cfg.greedy else logits.softmax(-1)

        jitted = symscalar.jit(sample)
        x = torch.randn(2, 4)
        for temperature, greedy in [(1.0, False), (0.5, False), (0.5, True), (1.0, False)]:
            cfg.temperature, cfg.greedy = temperature, greedy
            assert_same(jitted(lin, x, cfg), sample(lin_e, x, cfg))


_SCALE = 2.0


def test_a_global_number_changed_between_calls() -> None:
    global _SCALE

    def f(x: torch.Tensor) -> torch.Tensor:
        return x * _SCALE

    jitted = symscalar.jit(f)
    x = torch.randn(3)
    try:
        for value in (2.0, 5.0, -0.0, 0.0):
            _SCALE = value
            assert_same(jitted(x), f(x))
            assert torch.equal(torch.signbit(jitted(x)), torch.signbit(f(x)))
    finally:
        _SCALE = 2.0


def test_module_overriding_call_is_refused() -> None:
    class Scaled(nn.Linear):
        def __call__(self, x: torch.Tensor) -> torch.Tensor:
            return super().__call__(x) * 2

    with pytest.raises(UnsupportedOperationError, match=r"overrides __call__.*Fix: move"):
        symscalar.jit(Scaled(2, 2))


_ONES = torch.ones(3)


def test_replaced_function_defaults_are_seen() -> None:
    def f(x: torch.Tensor, w: torch.Tensor = _ONES, *, shift: float = 0.0) -> torch.Tensor:
        return x * w + shift

    jitted = symscalar.jit(f)
    x = torch.randn(3, requires_grad=True)
    for defaults, kwdefaults in [
        ((torch.ones(3),), {"shift": 0.0}),
        ((torch.full((3,), 2.0, requires_grad=True),), {"shift": 0.0}),
        ((torch.full((3,), 2.0, dtype=torch.float64),), {"shift": 1.5}),
    ]:
        f.__defaults__, f.__kwdefaults__ = defaults, kwdefaults
        out_m, out_e = jitted(x), f(x)
        assert_same(out_m, out_e)
        (g_m,) = torch.autograd.grad(out_m.sum(), x)
        (g_e,) = torch.autograd.grad(out_e.sum(), x)
        assert_same(g_m, g_e)
    assert not jitted.would_trace(x)


def test_a_wraps_wrapper_with_its_own_signature_is_bound_with_it() -> None:
    def inner(x: torch.Tensor) -> torch.Tensor:
        return x.sin()

    @functools.wraps(inner)
    def scaled(x: torch.Tensor, scale: float = 2.0) -> torch.Tensor:
        return inner(x) * scale

    @functools.wraps(inner)
    def passthrough(*args, **kwargs):
        return inner(*args, **kwargs) + 1

    x = torch.randn(3)
    jitted = symscalar.jit(scaled)
    for kwargs in ({}, {"scale": 3.0}):
        assert_same(jitted(x, **kwargs), scaled(x, **kwargs))
    assert_same(symscalar.jit(passthrough)(x), passthrough(x))
    assert list(symscalar.jit(passthrough).__signature__.parameters) == ["x"]


def test_trace_time_errors_carry_no_internal_context_nor_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    @symscalar.jit
    def f(x: torch.Tensor, d: DynamicInt) -> torch.Tensor:
        return x.sum(d)

    for full in (False, True):
        if full:
            monkeypatch.setenv("SYMSCALAR_TRACEBACK", "full")
        with pytest.raises(StaticValueRequiredError) as info:
            f(torch.ones(2, 2), 1)
        error = info.value
        assert error.__context__ is None and error.__cause__ is None
        files = [frame.filename for frame in traceback.extract_tb(error.__traceback__)]
        internal = [name for name in files if "/symscalar/" in name]
        assert bool(internal) is full, files
        if not full:  # the user's line that failed is the last frame; between it and the user's
            # call only generated code (the per-call dispatcher), each frame with its source line
            assert files[0] == files[-1] == __file__
            assert files[1:-1] and all(n.startswith("<symscalar dispatch of") for n in files[1:-1]), files
            assert all(frame.line for frame in traceback.extract_tb(error.__traceback__)), files


def test_torch_compile_over_a_jitted_function_graph_breaks_cleanly() -> None:
    jitted = symscalar.jit(lambda x: torch.sin(x) * 2)

    def user(x: torch.Tensor) -> torch.Tensor:
        return jitted(x + 1).cos()

    compiled = torch.compile(user, backend="eager")
    x = torch.randn(3)
    for _ in range(2):
        assert_same(compiled(x), (torch.sin(x + 1) * 2).cos())
    assert jitted.cache_info().misses == 1


def test_jit_of_compiled_or_scripted_callables_is_refused() -> None:
    def f(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    with pytest.raises(UnsupportedOperationError, match=r"torch\.compile"):
        symscalar.jit(torch.compile(f, backend="eager"))
    with pytest.warns(DeprecationWarning), pytest.raises(UnsupportedOperationError, match="TorchScript"):
        symscalar.jit(torch.jit.script(f))


@pytest.mark.parametrize(
    "keywords",
    [{"use_reentrant": False}, {"use_reentrant": True}, {"use_reentrant": False, "preserve_rng_state": False}],
)
def test_checkpoint_inside_a_jitted_function_is_traced_through(keywords) -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 4), nn.Tanh(), nn.Dropout(0.0), nn.Linear(4, 4))

    def loss(m: nn.Module, x: torch.Tensor) -> torch.Tensor:
        return checkpoint(m, x, **keywords).pow(2).sum()

    steps = [(lambda m: None, torch.randn(2, 4, requires_grad=True)) for _ in range(2)]
    side_by_side(model, steps, call=loss)
    if keywords.get("use_reentrant") is not False:  # inputs without grad: no gradient at all
        jitted = symscalar.jit(lambda x: loss(model, x))
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad"):
            eager = loss(model, torch.ones(2, 4))
        assert eager.requires_grad is False and jitted(torch.ones(2, 4)).requires_grad is False


@pytest.mark.parametrize("transform", ["grad", "jacrev", "vmap"])
def test_torch_func_transforms_over_a_jitted_function_are_refused(transform: str) -> None:
    jitted = symscalar.jit(lambda x: (x.sin() * 2).sum())
    transformed = getattr(torch.func, transform)(jitted)
    with pytest.raises(UnsupportedOperationError, match=r"torch\.func transform"):
        transformed(torch.randn(3))
