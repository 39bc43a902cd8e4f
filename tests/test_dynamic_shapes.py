"""Declared dynamic dims: one program for every size, checked against eager torch.

``jit(f, dynamic_dims=...)`` and ``Annotated[torch.Tensor, Dims(...)]`` declare dims dynamic;
their sizes are symbols in the trace, the call is checked against the declaration
(``ShapeContractError``), comparisons of sizes are decided by the declared ranges or raise,
and a size never silently becomes a constant (``test_no_silent_specialization``).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Annotated

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from torch import nn

import symscalar
from symscalar import Dim, Dims, DynamicInt, DynamicValueError, ShapeContractError


class Block(nn.Module):
    """A nanoGPT block: causal mask from T, attention, layer_norm, MLP."""

    def __init__(self, n_embd: int = 16, n_head: int = 2, block_size: int = 64) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(n_embd)
        self.ln_2 = nn.LayerNorm(n_embd)
        self.c_attn = nn.Linear(n_embd, 3 * n_embd)
        self.c_proj = nn.Linear(n_embd, n_embd)
        self.c_fc = nn.Linear(n_embd, 4 * n_embd)
        self.mlp_proj = nn.Linear(4 * n_embd, n_embd)
        self.n_head = n_head
        self.block_size = block_size
        self.register_buffer("bias", torch.tril(torch.ones(block_size, block_size)).view(1, 1, block_size, block_size))

    def attention(self, x: torch.Tensor) -> torch.Tensor:
        B, T, C = x.size()
        q, k, v = self.c_attn(x).split(C, dim=2)
        q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(B, T, C)
        return self.c_proj(y)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        T = x.shape[1]
        assert T <= self.block_size  # decided by the declared range: no guard
        x = x + self.attention(self.ln_1(x))
        causal = torch.tril(torch.ones(T, T, dtype=x.dtype))  # a mask built from T
        weights = causal / causal.sum(-1, keepdim=True)
        return x + weights @ self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x))))


def _grads_match(jitted, eager, module, x, dtype):
    x1 = x.clone().requires_grad_()
    x2 = x.clone().requires_grad_()
    y1, y2 = jitted(x1), eager(x2)
    torch.testing.assert_close(y1, y2)
    ct = torch.randn_like(y2)
    g1 = torch.autograd.grad(y1, [x1, *module.parameters()], ct)
    g2 = torch.autograd.grad(y2, [x2, *module.parameters()], ct)
    for a, b in zip(g1, g2):
        torch.testing.assert_close(a, b)


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_nanogpt_block_one_trace_for_every_batch_and_length(dtype):
    torch.manual_seed(0)
    block = Block().to(dtype)
    jitted = symscalar.jit(block, dynamic_dims={"x": (Dim("B", max=64), Dim("T", max=64))})
    for B in (1, 2, 3, 8):
        for T in (1, 7, 64):
            _grads_match(jitted, block, block, torch.randn(B, T, 16, dtype=dtype), dtype)
    assert jitted.cache_info().misses == 1
    source = str(jitted.last_trace())
    assert "s_B = " in source and "s_T = " in source and "f32[s_B, s_T, 16]" in source.replace("f64", "f32")
    assert "s_T" in str(jitted.last_backward_trace())


def test_sizes_are_symbols_in_normal_form_printed_and_deduplicated():
    def f(x):
        B, T, C = x.shape
        y = x.reshape(B * T, C)
        z = x.view(T * B, C)  # the same size: one symbol
        return (y + z) * (T * 64)

    jf = symscalar.jit(f, dynamic_dims={"x": ("B", "T")})
    for B, T in [(2, 3), (1, 5), (4, 1)]:
        x = torch.randn(B, T, 4)
        torch.testing.assert_close(jf(x), f(x))
    assert jf.cache_info().misses == 1
    source = str(jf.last_trace())
    assert "shape=(s_B * s_T, 4)" in source
    assert source.count("size=s_B * s_T)") == 1
    assert "size=s_T * 64)" in source


def test_size_symbol_is_a_dynamic_int_and_len_refuses():
    seen = []

    def f(x):
        seen.append(x.shape[0])
        seen.append(x.size(1))
        seen.append(x.numel())
        seen.append(x.shape.numel())
        return x * 2

    jf = symscalar.jit(f, dynamic_dims={"x": ("B", "T")})
    jf(torch.ones(2, 3))
    assert all(isinstance(s, DynamicInt) for s in seen)
    with pytest.raises(DynamicValueError, match=r"len\(\).*x.shape\[0\]"):
        symscalar.jit(lambda x: x * len(x), dynamic_dims={"x": ("B",)})(torch.ones(2))


def test_comparisons_decided_by_ranges_are_plain_bools():
    def f(x):
        T = x.shape[0]
        big = T > 4096  # max=4096: always False
        pos = T >= 1  # min=1: always True
        assert isinstance(big, bool) and isinstance(pos, bool)
        return x * 2 if pos and not big else x

    jf = symscalar.jit(f, dynamic_dims={"x": (Dim("T", min=1, max=4096),)})
    for n in (1, 9, 4096):
        torch.testing.assert_close(jf(torch.ones(n)), torch.ones(n) * 2)
    assert jf.cache_info().misses == 1


def test_undecided_comparison_that_pins_raises_with_the_fixes():
    """An undecided comparison is a size guard (tests/test_size_guards.py); one that leaves the
    dim a single value is refused, with the fixes."""
    jf = symscalar.jit(lambda x: x * 2 if x.shape[0] == 10 else x, dynamic_dims={"x": ("T",)})
    with pytest.raises(DynamicValueError, match=r"(?s)s_T == 10.*declare a range.*specialize=True.*static"):
        jf(torch.ones(10))


def test_annotation_form():
    @symscalar.jit
    def f(x: Annotated[torch.Tensor, Dims("B", Dim("T", max=32), 4)], y: Annotated[torch.Tensor, Dims("T")]):
        return x * y[None, :, None]

    for B, T in [(1, 1), (3, 7), (2, 32)]:
        x, y = torch.randn(B, T, 4), torch.randn(T)
        torch.testing.assert_close(f(x, y), x * y[None, :, None])
    assert f.cache_info().misses == 1
    with pytest.raises(ShapeContractError, match=r"parameter 'x' dim 2 is 5, but its Dims declare 4"):
        f(torch.randn(1, 2, 5), torch.randn(2))
    with pytest.raises(ShapeContractError, match=r"outside its declared range \[1, 32\]"):
        f(torch.randn(1, 33, 4), torch.randn(33))


def test_shape_contract_errors_name_parameter_dim_and_values():
    jf = symscalar.jit(lambda x, m: x * m, dynamic_dims={"x": ("B", Dim("T", max=8)), "m": {1: "T"}})
    jf(torch.ones(2, 3), torch.ones(1, 3))
    with pytest.raises(ShapeContractError, match=r"dim T must be one size.*'x' dim 1 is 3.*'m' dim 1 is 4"):
        jf(torch.ones(2, 3), torch.ones(1, 4))
    with pytest.raises(ShapeContractError, match=r"'x' dim 1 \(T\) is 9, outside its declared range \[1, 8\]"):
        jf(torch.ones(2, 9), torch.ones(1, 9))
    with pytest.raises(ShapeContractError, match=r"'x' has shape \(2,\) \(1 dims\).*declares 2"):
        jf(torch.ones(2), torch.ones(1, 3))
    with pytest.raises(ShapeContractError, match=r"'x' dim 0 \(B\) is 0"):
        jf(torch.ones(0, 3), torch.ones(1, 3))
    assert jf.cache_info().misses == 1  # a violation never retraces


@pytest.mark.parametrize(
    "dynamic_dims, error, match",
    [
        ({"y": ("B",)}, ValueError, r"'y' is not a parameter"),
        ({"x": "B"}, TypeError, r"a tuple over the leading dims"),
        ({"x": (None, None)}, ValueError, r"no dim is declared dynamic"),
        ({"x": ("B", "B")}, ValueError, r"appears twice in one tensor"),
        ({"x": (Dim("B", max=4),), "z": (Dim("B", max=8),)}, ValueError, r"two ranges"),
        ({"x": {-1: "B"}}, ValueError, r"non-negative int"),
        ({"x": (3.5,)}, TypeError, r"a name, a symscalar.Dim, an int or None"),
        (["x"], TypeError, r"expected a dict"),
    ],
)
def test_bad_declarations_are_refused(dynamic_dims, error, match):
    with pytest.raises(error, match=match):
        symscalar.jit(lambda x, z=None: x, dynamic_dims=dynamic_dims)


@pytest.mark.parametrize(
    "kwargs, match",
    [
        ({"name": "1T"}, "identifier"),
        ({"name": "T", "min": -1}, "min must be an int >= 0"),
        ({"name": "T", "min": 4, "max": 2}, "max must be None or an int >= min"),
    ],
)
def test_bad_dims_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Dim(**kwargs)


def test_a_backend_of_another_kind_refuses_dynamic_dims():
    # nvFuser and Inductor lower dynamic dims (tests/test_nvfuser_dynamic_shapes.py,
    # tests/test_inductor_backend.py; Inductor's first call runs the torch program)
    f = symscalar.jit(lambda x: x * 2, dynamic_dims={"x": ("B",)}, backend="inductor")
    x = torch.randn(3, 2)
    assert torch.equal(f(x), x * 2)

    class Mine:
        name = "mine"

        def compile_trace(self, trace, render_outputs=None):
            raise AssertionError("never compiled")

        def for_entry(self):
            return self

    with pytest.raises(ValueError, match="supported by the torch, nvfuser and inductor backends only"):
        symscalar.jit(lambda x: x, dynamic_dims={"x": ("B",)}, backend=Mine())


def test_auto_backend_with_dynamic_dims_is_the_torch_backend():
    f = symscalar.jit(lambda x: x * 2, dynamic_dims={"x": ("B",)})
    for b in (3, 1, 5):
        x = torch.randn(b, 4)
        torch.testing.assert_close(f(x), x * 2, rtol=0, atol=0)
    assert f.cache_info().misses == 1


def test_non_size_dynamic_value_in_a_size_slot_is_refused():
    def f(x, n: DynamicInt):
        return x.view(n, -1)

    with pytest.raises(symscalar.StaticValueRequiredError, match="must be static"):
        symscalar.jit(f, dynamic_dims={"x": ("B",)})(torch.ones(4, 2), 2)


def test_structure_stays_static():
    with pytest.raises(symscalar.SymscalarError, match="s_T"):
        symscalar.jit(lambda x: x.sum(x.shape[1]), dynamic_dims={"x": (None, "T")})(torch.ones(2, 1))
    with pytest.raises(DynamicValueError, match="number of pieces"):
        symscalar.jit(lambda x: x.split(2, dim=1), dynamic_dims={"x": (None, "T")})(torch.ones(2, 4))
    with pytest.raises(DynamicValueError, match="number of pieces"):
        symscalar.jit(lambda x: x.unbind(0), dynamic_dims={"x": ("B",)})(torch.ones(2, 4))


# Every way of specializing a declared dim: each raises or is a size guard listed in explain()
# (the only guard-free answers are the ones the declared range decides, tested above).
SPECIALIZATIONS = [
    ("branch", lambda x: x if x.shape[0] == 3 else -x),
    ("int()", lambda x: x * int(x.shape[0])),
    ("range()", lambda x: sum(x for _ in range(x.shape[0]))),
    ("index", lambda x: x * [1, 2, 3, 4][x.shape[0]]),
    ("specialize", lambda x: x * symscalar.specialize(x.shape[0])),
    ("hash", lambda x: x * {2: 1.0}.get(x.shape[0], 2.0)),
    ("str", lambda x: x * len(str(x.shape[0]))),
    ("squeeze", lambda x: x.squeeze()),
    ("split count", lambda x: torch.cat(x.chunk(2, 0))),
    ("meets a static size", lambda x: x + torch.ones(3)),
    ("undecided slice", lambda x: x[:2]),
    ("float()", lambda x: x * float(x.shape[0])),
]


@pytest.mark.parametrize("name, fn", SPECIALIZATIONS, ids=[n for n, _ in SPECIALIZATIONS])
def test_no_silent_specialization(name, fn):
    jf = symscalar.jit(fn, dynamic_dims={"x": ("N",)})
    try:
        out = jf(torch.ones(3))
    except symscalar.SymscalarError:
        assert jf.cache_info().entries == 0
        return
    torch.testing.assert_close(out, fn(torch.ones(3)))
    info = jf.cache_info()
    assert info.guards >= 1 and info.guards == len(jf.explain().guards), name
    assert "guard s_N" in str(jf.explain())


def test_grad_of_mean_and_expand_takes_sizes_from_the_backward_inputs():
    def f(x, b):
        return (x.mean(1, keepdim=True) * b.expand(x.shape[0], -1)).sum() / x.numel()

    jf = symscalar.jit(f, dynamic_dims={"x": ("B", "T")})
    for B, T in [(1, 1), (3, 5), (2, 8)]:
        x = torch.randn(B, T, dtype=torch.float64, requires_grad=True)
        b = torch.randn(1, 1, dtype=torch.float64, requires_grad=True)
        gx, gb = torch.autograd.grad(jf(x, b), [x, b])
        ex, eb = torch.autograd.grad(f(x, b), [x, b])
        torch.testing.assert_close(gx, ex)
        torch.testing.assert_close(gb, eb)
    assert jf.cache_info().misses == 1
    backward = jf.last_backward_trace()
    symscalar.check_trace(backward)
    assert "s_B = " in str(backward) and "s_T = " in str(backward)


@pytest.mark.slow
def test_gradcheck_with_dynamic_dims():
    jf = symscalar.jit(lambda x: torch.softmax(x * x.shape[1], -1).cumsum(0), dynamic_dims={"x": ("B", "T")})
    for shape in [(1, 3), (4, 2)]:
        x = torch.randn(*shape, dtype=torch.float64, requires_grad=True)
        assert torch.autograd.gradcheck(jf, (x,))
    assert jf.cache_info().misses == 1


def test_without_dynamic_dims_shapes_stay_static():
    jf = symscalar.jit(lambda x: x * x.shape[0])
    jf(torch.ones(2))
    jf(torch.ones(3))
    assert jf.cache_info().misses == 2
    assert "sym_size" not in str(jf.last_trace())


def _model(x, w, pos):
    B, T, C = x.shape
    h = x + pos[:T]  # a static table sliced by T
    h = torch.tanh(h.reshape(-1, C) @ w).reshape(B, T, -1)
    h = F.pad(h, (0, 0, 1, 0))[:, :-1]  # shift right by one along T
    mask = torch.arange(T)[None, :] <= torch.arange(T)[:, None]
    scores = (h @ h.transpose(1, 2)).masked_fill(~mask, -1e9).softmax(-1)
    return (scores @ h).mean(1) + h[:, -1]


@pytest.mark.slow
@settings(max_examples=12, deadline=None)
@given(sizes=st.lists(st.tuples(st.integers(1, 6), st.integers(1, 12)), min_size=1, max_size=4))
def test_random_sizes_match_eager_with_one_trace(sizes):
    torch.manual_seed(1)
    w = torch.randn(4, 4, dtype=torch.float64)
    pos = torch.randn(12, 4, dtype=torch.float64)
    jf = symscalar.jit(_model, dynamic_dims={"x": ("B", Dim("T", max=12))})
    for B, T in sizes:
        x = torch.randn(B, T, 4, dtype=torch.float64)
        torch.testing.assert_close(jf(x, w, pos), _model(x, w, pos))
    assert jf.cache_info().misses == 1


def test_check_trace_refuses_a_size_in_a_static_slot():
    jf = symscalar.jit(lambda x: x.sum(1).reshape(x.shape[0], 1), dynamic_dims={"x": ("B", "T")})
    jf(torch.ones(2, 3))
    trace = jf.last_trace()
    symscalar.check_trace(trace)  # sizes in reshape's shape: a size slot
    (reduce,) = [e for e in trace.eqns if e.prim.name == "sum"]
    size = trace.inputs[0].shape[1]
    bad = dataclasses.replace(reduce, params={**reduce.params, "dims": (size,)})
    broken = dataclasses.replace(trace, eqns=tuple(bad if e is reduce else e for e in trace.eqns))
    with pytest.raises(symscalar.StaticValueRequiredError, match=r"'dims' holds the dynamic size \(s_T,\)"):
        symscalar.check_trace(broken)


@pytest.mark.slow
def test_litgpt_gpt_one_trace_over_batch_and_length():
    litgpt = pytest.importorskip("litgpt.model")
    config = pytest.importorskip("litgpt.config").Config(
        block_size=32, vocab_size=64, padded_vocab_size=64, n_layer=2, n_head=2, n_embd=16, bias=True
    )
    torch.manual_seed(0)
    model = litgpt.GPT(config).double()
    jitted = symscalar.jit(model, dynamic_dims={"idx": ("B", Dim("T", max=32))})
    for B, T in [(2, 7), (1, 1), (3, 32)]:
        idx = torch.randint(0, 64, (B, T))
        out, ref = jitted(idx), model(idx)
        torch.testing.assert_close(out, ref)
        ct = torch.randn_like(ref)
        for a, b in zip(
            torch.autograd.grad(out, list(model.parameters()), ct),
            torch.autograd.grad(ref, list(model.parameters()), ct),
        ):
            torch.testing.assert_close(a, b)
    assert jitted.cache_info().misses == 1


def test_an_opaque_torch_call_on_a_dynamic_dim_is_refused_not_specialized():
    # torch.diag_embed has no hand-written op and no shape rule: its opaque call knows its result's
    # shape for one call's sizes only, so a program with declared dims must refuse it rather than
    # bake the sizes (logcumsumexp has a rule now: ops/dynamic_shapes.py)
    f = symscalar.jit(lambda x: torch.diag_embed(x), dynamic_dims={"x": ("B", "T")})
    with pytest.raises(symscalar.UnsupportedOperationError, match="declared dynamic dims"):
        f(torch.randn(2, 5))
    g = symscalar.jit(lambda x: torch.diag_embed(x), dynamic_dims={"x": ("B", None)})
    with pytest.raises(symscalar.UnsupportedOperationError, match="declared dynamic dims"):
        g(torch.randn(2, 5))
