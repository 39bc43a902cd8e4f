"""Grad-mode context managers inside a jitted function are traced with eager's semantics:
what is computed with grad disabled carries no gradient (a ``stop_gradient`` in the trace),
outputs computed that way do not require grad, and ``requires_grad`` read while tracing is
eager's answer. Every case runs eager and jitted side by side over several calls, with the
call-time grad mode changing between calls, and compares values, ``requires_grad`` and every
gradient including ``None``-ness, in float32 and float64."""

import pytest
import torch

import symscalar

DTYPES = [torch.float32, torch.float64]


def inner_no_grad(x, w):
    with torch.no_grad():
        scale = (x * w).sum()
    return x * w * scale


def inner_set_grad_enabled(x, w):
    with torch.set_grad_enabled(False):
        mean = (x * w).mean(0, keepdim=True)
    return (x - mean) * w


def inner_inference_mode(x, w):
    with torch.inference_mode():
        return x * w


def all_under_no_grad(x, w):
    with torch.no_grad():
        return (x * w).exp()


def enable_grad_inside_no_grad(x, w):
    with torch.no_grad():
        a = x * 2
        with torch.enable_grad():
            b = a * w
    return a + b


def detach_inside(x, w):
    return x.detach() * w + x * w.detach() * 0.5


def branch_on_requires_grad(x, w):
    # code that asks requires_grad (e.g. to skip work) must see eager's answer
    y = x * w
    return y * 2 if y.requires_grad else y * 3


def grad_mode_read(x, w):
    with torch.no_grad():
        factor = 2.0 if torch.is_grad_enabled() else 5.0
    return x * w * factor


FUNCTIONS = {
    f.__name__: f
    for f in (
        inner_no_grad,
        inner_set_grad_enabled,
        inner_inference_mode,
        all_under_no_grad,
        enable_grad_inside_no_grad,
        detach_inside,
        branch_on_requires_grad,
        grad_mode_read,
    )
}


def _inputs(dtype, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(3, 4, dtype=dtype, generator=g)
    w = torch.randn(4, dtype=dtype, generator=g)
    return x, w


def _run(fn, x, w, grad_mode):
    xe, we = x.clone().requires_grad_(True), w.clone().requires_grad_(True)
    with torch.set_grad_enabled(grad_mode):
        out = fn(xe, we)
    grads = None
    if out.requires_grad:
        out.sum().backward()
        grads = (xe.grad, we.grad)
    return out, grads


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_grad_mode_inside_matches_eager_across_calls(name, dtype):
    fn = FUNCTIONS[name]
    jitted = symscalar.jit(fn)
    # grad mode at call time changes between calls: training, validation, training...
    for step, grad_mode in enumerate([True, True, False, True, False]):
        x, w = _inputs(dtype, step)
        out_e, grads_e = _run(fn, x, w, grad_mode)
        out_j, grads_j = _run(jitted, x, w, grad_mode)
        where = f"call {step} (grad mode {grad_mode})"
        torch.testing.assert_close(out_j, out_e, msg=where)
        assert out_j.requires_grad == out_e.requires_grad, where
        assert (grads_e is None) == (grads_j is None), where
        if grads_e is not None:
            for ge, gj in zip(grads_e, grads_j):
                assert (ge is None) == (gj is None), where
                if ge is not None:
                    torch.testing.assert_close(gj, ge, msg=where)


def test_no_grad_region_is_a_stop_gradient_in_the_trace():
    jitted = symscalar.jit(inner_no_grad)
    x, w = _inputs(torch.float32, 0)
    jitted(x.requires_grad_(True), w)
    names = [eqn.prim.name for eqn in jitted.last_trace().eqns]
    assert "stop_gradient" in names
