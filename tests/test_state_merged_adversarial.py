"""Adversarial cases where in-place cache updates (``symscalar/_jit/state_updates.py``, torch
backend without grad) meet the out-of-place path (with grad, other backends) and the write-back
(``symscalar/_jit/mutable.py``): each against eager, tensor for tensor, or refused where the
program cannot leave what eager leaves. Found by the adversarial pass over the merged code."""

from __future__ import annotations

import pytest
import torch

import symscalar
from symscalar._jit.mutable import register_state_class


class _Layer:
    """A static cache layer, hand-written: two tensors updated in place at a position."""

    def __init__(self) -> None:
        self.keys = torch.zeros(1, 2, 6, 4)
        self.values = torch.zeros(1, 2, 6, 4)

    def update(self, position: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        self.keys.index_copy_(2, position, k)
        self.values.index_copy_(2, position, 2 * k)
        return self.keys, self.values


register_state_class(_Layer, "Pass the layer's tensors as arguments.")


def _same(eager: _Layer, jitted: _Layer) -> None:
    torch.testing.assert_close(jitted.keys, eager.keys, rtol=0, atol=0)
    torch.testing.assert_close(jitted.values, eager.values, rtol=0, atol=0)


def _return_a_view(layer: _Layer, position: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    keys, _ = layer.update(position, k)
    return keys[:, :, :3]


def test_a_returned_view_of_an_updated_state_tensor_sees_the_next_update_or_is_refused() -> None:
    """Eager returns a view of the caller's keys, which sees the next call's update. Without grad
    the program updates the caller's keys in place and its view is of them too; with grad it
    updates a copy, whose view would silently keep this call's values: refused, before the
    call changed anything."""
    g = torch.Generator().manual_seed(0)
    steps = [(torch.tensor([i]), torch.randn(1, 2, 1, 4, generator=g)) for i in range(3)]
    eager, layer = _Layer(), _Layer()
    jitted = symscalar.jit(_return_a_view)
    with torch.no_grad():
        expected = [_return_a_view(eager, *step) for step in steps]
        got = [jitted(layer, *step) for step in steps]
    for e, j in zip(expected, got):  # read after all the calls: each view sees every update
        torch.testing.assert_close(j, e, rtol=0, atol=0)
    _same(eager, layer)
    layer = _Layer()
    k = steps[0][1].clone().requires_grad_()
    with pytest.raises(symscalar.UnsupportedOperationError, match=r"returns a view .*\.clone\(\)"):
        symscalar.jit(_return_a_view)(layer, steps[0][0], k)
    _same(_Layer(), layer)  # refused before the call changed anything


def _update_then_fail(layer: _Layer, position: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    layer.update(position, k)
    return k.sum() + layer.keys[0, 0, position + 10].sum()  # out of range: raises after the update


def test_a_call_raising_after_an_update_leaves_eager_cache_or_says_it_does_not() -> None:
    """Without grad both updates run in place: the op raising after them raises eager's error and
    leaves eager's cache. With grad the updates are written back after the program ran, so the
    cache is not eager's: the error says so instead of letting code that catches it go on."""
    position = torch.tensor([1])
    k = torch.randn(1, 2, 1, 4)
    eager, layer = _Layer(), _Layer()
    with torch.no_grad():
        with pytest.raises(IndexError):
            _update_then_fail(eager, position, k)
        with pytest.raises(IndexError):
            symscalar.jit(_update_then_fail)(layer, position, k)
    _same(eager, layer)
    with pytest.raises(symscalar.UnsupportedOperationError, match=r"raised IndexError.*reset\(\)"):
        symscalar.jit(_update_then_fail)(_Layer(), position, k.clone().requires_grad_())


class _Listed:
    """A cache holding its layers' tensors in a list."""

    def __init__(self, tensors: list[torch.Tensor]) -> None:
        self.tensors = tensors


register_state_class(_Listed, "Pass the tensors as arguments.")


def _update_both(cache: _Listed, position: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    cache.tensors[0].index_copy_(2, position, k)
    cache.tensors[1].index_copy_(2, position, 3 * k)
    return cache.tensors[0].sum() + cache.tensors[1].sum()


@pytest.mark.parametrize("grad", [False, True])
def test_one_tensor_twice_in_a_state_list_is_refused_with_or_without_grad(grad: bool) -> None:
    """Eager's second update overwrites the first through the shared tensor (the sum reads it
    twice); the program updates a stand-in for each item: refused in place (no grad) and written
    back (grad) alike, not only for tensors held by attributes."""
    position, k = torch.tensor([0]), torch.randn(1, 2, 1, 4, requires_grad=grad)
    t = torch.zeros(1, 2, 6, 4)
    fresh = torch.zeros(1, 2, 6, 4)
    with torch.set_grad_enabled(grad):
        # two tensors of their own: eager's result and cache
        expected = _update_both(_Listed([torch.zeros(1, 2, 6, 4), torch.zeros(1, 2, 6, 4)]), position, k)
        jitted = symscalar.jit(_update_both)
        torch.testing.assert_close(
            jitted(_Listed([torch.zeros(1, 2, 6, 4), torch.zeros(1, 2, 6, 4)]), position, k), expected
        )
        with pytest.raises(symscalar.UnsupportedOperationError, match=r"share memory"):
            jitted(_Listed([t, t]), position, k)
    torch.testing.assert_close(t, fresh, rtol=0, atol=0)  # refused before anything was written


class _Counting(torch.nn.Module):
    """A module counting its calls in a buffer, then indexing with its argument."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("calls", torch.zeros(()))

    def forward(self, x: torch.Tensor, index: torch.Tensor) -> torch.Tensor:
        self.calls.add_(1)
        return x[index]


def test_a_call_raising_after_a_buffer_update_says_the_buffer_is_not_eager() -> None:
    """Eager's failing call has counted itself; the program's buffer write is replayed after it
    ran, so the buffer keeps the old count: the error says so. A passing call counts as eager."""
    eager, module = _Counting(), _Counting()
    jitted = symscalar.jit(module)
    torch.testing.assert_close(jitted(torch.arange(3.0), torch.tensor(1)), eager(torch.arange(3.0), torch.tensor(1)))
    torch.testing.assert_close(module.calls, eager.calls)
    with pytest.raises(IndexError):
        eager(torch.arange(3.0), torch.tensor(7))
    with pytest.raises(symscalar.UnsupportedOperationError, match=r"raised IndexError.*module's state"):
        jitted(torch.arange(3.0), torch.tensor(7))


class _Counted:
    """A layer whose keys are updated in place (run so) and whose counter is written back."""

    def __init__(self) -> None:
        self.keys = torch.zeros(1, 2, 6, 4)
        self.count = torch.zeros((), dtype=torch.long)


register_state_class(_Counted, "Pass the tensors as arguments.")


def _update_and_read(layer: _Counted, position: torch.Tensor, k: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    layer.keys.index_copy_(2, position, k)
    layer.count.add_(1)
    return other.sum()


def test_a_call_refused_for_shared_memory_changes_no_cache_tensor() -> None:
    """The counter passed again as an argument: refused (eager would read the count through the
    argument) before the program updated the keys in place, not after: the refused call leaves
    the cache as it was, not half updated."""
    layer = _Counted()
    jitted = symscalar.jit(_update_and_read)
    with torch.no_grad():
        jitted(layer, torch.tensor([0]), torch.ones(1, 2, 1, 4), torch.ones(3))
        keys, count = layer.keys.clone(), layer.count.clone()
        with pytest.raises(symscalar.UnsupportedOperationError, match="share memory"):
            jitted(layer, torch.tensor([1]), torch.full((1, 2, 1, 4), 2.0), layer.count)
    torch.testing.assert_close(layer.keys, keys, rtol=0, atol=0)
    torch.testing.assert_close(layer.count, count, rtol=0, atol=0)


_HELD: dict[str, _Layer] = {}


def _update_then_read_held(layer: _Layer, position: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    layer.update(position, k)
    return _HELD["layer"].keys.sum()  # the same layer, reached through a global too


@pytest.mark.parametrize("grad", [False, True])
def test_a_state_tensor_also_read_from_outside_is_refused_with_or_without_grad(grad: bool) -> None:
    """Eager reads the update through the global; the program reads the captured tensor, not the
    argument's stand-in. Refused in place (no grad) and written back (grad: the sum of the old
    keys, silently, before) alike, before anything changed."""
    layer = _Layer()
    _HELD["layer"] = layer
    k = torch.ones(1, 2, 1, 4, requires_grad=grad)
    with torch.set_grad_enabled(grad):
        with pytest.raises(symscalar.UnsupportedOperationError, match="share memory"):
            symscalar.jit(_update_then_read_held)(layer, torch.tensor([0]), k)
    _same(_Layer(), layer)
    eager = _Layer()
    _HELD["layer"] = eager
    with torch.set_grad_enabled(grad):
        assert _update_then_read_held(eager, torch.tensor([0]), k).item() == 8.0  # what it refuses to get wrong
