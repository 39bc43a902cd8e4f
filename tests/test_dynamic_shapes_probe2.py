"""Dynamic dims, second probe: code a user writes over a dynamic batch and sequence length, run
side by side with eager at sizes that include 1 (B in 1, 2, 3, 8; T in 1, 2, 7, 64, 257), with
outputs and every gradient equal to eager's bit for bit (float32 and float64) and one program.

Also the ops this probe added shape rules for: ``topk`` (k static or a size), ``Tensor.unfold``
and ``torch.arange`` with a float step next to a size; and the class of silent difference it
found: a vjp that divided the cotangent by a dynamic count where eager multiplies by a factor it
computes in double (var/std over a dynamic dim, 1 ulp off).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F

import symscalar
from symscalar import Dim, sizes
from symscalar.errors import UnsupportedOperationError

SIZES = [(2, 7), (1, 1), (3, 64), (8, 257), (1, 2)]
DTYPES = [torch.float32, torch.float64]
C = 4
DIMS = {"x": ("B", "T")}


def _same(got: torch.Tensor, want: torch.Tensor, what: str) -> None:
    assert (got.shape, got.dtype) == (want.shape, want.dtype), (what, got.shape, want.shape)
    assert torch.equal(got.nan_to_num(), want.nan_to_num()), (what, (got - want).abs().max())
    assert torch.equal(got.isnan(), want.isnan()), what


def run_side_by_side(
    fn: Callable[..., torch.Tensor],
    dtype: torch.dtype,
    sizes: list[tuple[int, int]] = SIZES,
    dynamic_dims: Any = None,
    make: Callable[..., tuple[torch.Tensor, ...]] | None = None,
) -> Any:
    """Every call's output and gradients equal eager's bit for bit; returns the jitted function."""
    jitted = symscalar.jit(fn, dynamic_dims=dynamic_dims or DIMS)
    for b, t in sizes:
        torch.manual_seed(b * 1000 + t)
        args = make(b, t, dtype) if make else (torch.randn(b, t, C, dtype=dtype),)
        mine = [a.clone().requires_grad_(a.is_floating_point()) for a in args]
        theirs = [a.clone().requires_grad_(a.is_floating_point()) for a in args]
        want, got = fn(*theirs), jitted(*mine)
        _same(got, want, f"output at B={b}, T={t}")
        cotangent = torch.randn_like(want)
        (want * cotangent).sum().backward()
        (got * cotangent).sum().backward()
        for i, (g, w) in enumerate(zip(mine, theirs)):
            if w.grad is not None:
                _same(g.grad, w.grad, f"grad of input {i} at B={b}, T={t}")
    return jitted


# ---- topk, unfold, arange with a float step on dynamic dims


TOPK = {
    "k=1 along T": lambda x: x.topk(1, dim=1).values * 2,
    "k static along the static dim": lambda x: x.topk(2, dim=-1, largest=False)[0],
    "k = T // 2 + 1 along T": lambda x: x.topk(x.shape[1] // 2 + 1, dim=1)[0],
    "k = T, torch.topk": lambda x: torch.topk(x, x.shape[1], dim=1, sorted=True).values,
    "k = B along T (a guard B <= T)": lambda x: x.topk(x.shape[0], dim=1)[0],
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(TOPK))
def test_topk_on_dynamic_dims(name: str, dtype: torch.dtype) -> None:
    f = run_side_by_side(TOPK[name], dtype)
    assert f.cache_info().misses == 1


def test_topk_k_above_a_dynamic_size_is_guarded_and_raises_as_eager() -> None:
    f = run_side_by_side(lambda x: x.topk(3, dim=1)[0], torch.float64, [(2, 7), (3, 64), (1, 3)])
    assert f.cache_info().guards == 1  # s_T >= 3: at T = 2 the guard fails and the retrace raises
    with pytest.raises(RuntimeError, match="topk"):
        f(torch.randn(2, 2, C))


UNFOLD = [(1, 1, 1), (1, 2, 1), (1, 3, 2), (1, 4, 3), (2, 2, 1), (-2, 3, 1)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("args", UNFOLD, ids=str)
def test_tensor_unfold_on_dynamic_dims(args: tuple[int, int, int], dtype: torch.dtype) -> None:
    sizes = [(b, t) for b, t in SIZES if (b, t, C)[args[0] % 3] >= args[1]]  # (eager raises at the others)
    f = run_side_by_side(lambda x: x.unfold(*args) * 1.5, dtype, sizes)
    assert f.cache_info().misses == 1


def test_unfold_of_unfold_reduced_as_eager() -> None:
    """Eager's view and strides (a reduction over the windows adds in eager's order)."""
    f = run_side_by_side(lambda x: x.unfold(1, 2, 1).unfold(1, 2, 2).sum((-1, -2)), torch.float32, [(2, 7), (3, 64)])
    assert f.cache_info().misses == 1


def test_unfold_wider_than_the_dim_raises_as_eager() -> None:
    f = symscalar.jit(lambda x: x.unfold(1, 3, 1), dynamic_dims=DIMS)
    f(torch.randn(2, 5, C))
    with pytest.raises(RuntimeError, match="maximum size for tensor at dimension 1"):
        f(torch.randn(2, 2, C))
    [guard] = f.explain().guards
    assert "unfold" in guard.asked_by


ARANGE = {
    0.5: lambda x: torch.arange(0, x.shape[1], 0.5, dtype=x.dtype)[None, :, None] + x.repeat_interleave(2, 1),
    0.25: lambda x: x.sum((1, 2), keepdim=True) * torch.arange(1, 2 * x.shape[1] + 1, 0.25, dtype=x.dtype).mean(),
    1.5: lambda x: x.mean(1, keepdim=True) * torch.arange(0, x.shape[1], 1.5, dtype=x.dtype).sum(),
    0.375: lambda x: x * torch.arange(0, x.shape[1] * 3, 0.375).sum().to(x.dtype),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("step", list(ARANGE))
def test_arange_with_a_float_step_to_a_size(step: float, dtype: torch.dtype) -> None:
    f = run_side_by_side(ARANGE[step], dtype)
    assert f.cache_info().misses == 1
    assert f.cache_info().guards <= 1  # (end - start) * b < 2**53 where no max decides it


def test_arange_with_a_float_step_and_a_declared_max_needs_no_guard() -> None:
    f = run_side_by_side(ARANGE[0.5], torch.float64, dynamic_dims={"x": ("B", Dim("T", max=4096))})
    assert (f.cache_info().misses, f.cache_info().guards) == (1, 0)


def test_arange_with_a_step_that_is_no_binary_fraction_is_refused_clearly() -> None:
    f = symscalar.jit(lambda x: x.sum(-1) + torch.arange(0, x.shape[1], 0.1)[: x.shape[1]], dynamic_dims=DIMS)
    with pytest.raises(UnsupportedOperationError, match=r"arange\(0, s_T, 0.1\).*not a short binary fraction"):
        f(torch.randn(2, 7, C))


# ---- var/std over a dynamic dim: eager's (2 / dof) * grad, inf at dof == 0


VAR = {
    "var": lambda x: x.var(1),
    "var population": lambda x: x.var(1, unbiased=False),
    "std": lambda x: x.std(1),
    "var_mean": lambda x: torch.var_mean(x, (0, 1))[0],
    "std over B, T": lambda x: x.std((0, 1), keepdim=True) * x,
}


@pytest.mark.filterwarnings("ignore:.*degrees of freedom")
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(VAR))
def test_var_std_gradients_over_dynamic_dims_are_eagers_bits(name: str, dtype: torch.dtype) -> None:
    f = run_side_by_side(VAR[name], dtype)  # T = 1: dof 0 (inf, nan as eager)
    assert f.cache_info().misses == 1


# ---- what a user writes over (B, T): bit for bit, one program


def _causal_attention(x: torch.Tensor) -> torch.Tensor:
    T = x.shape[1]
    mask = torch.tril(torch.ones(T, T, dtype=torch.bool))
    scores = x @ x.transpose(1, 2)
    return scores.masked_fill(~mask, float("-inf")).softmax(-1) @ x


def _masked_mean(x: torch.Tensor) -> torch.Tensor:
    T = x.shape[1]
    lengths = torch.arange(x.shape[0]) % T + 1
    mask = (torch.arange(T)[None, :] < lengths[:, None]).to(x.dtype)
    return (x * mask[..., None]).sum(1) / mask.sum(1, keepdim=True)


def _reversed_gather(x: torch.Tensor) -> torch.Tensor:
    T = x.shape[1]
    index = (torch.arange(T) * 3 % T).view(1, T, 1).expand(x.shape[0], T, C)
    return x.gather(1, index) + x[:, torch.arange(T).flip(0)]


def _scatter_reversed(x: torch.Tensor) -> torch.Tensor:
    T = x.shape[1]
    index = (T - 1 - torch.arange(T)).view(1, T, 1).expand(x.shape[0], T, C)
    return torch.zeros_like(x).scatter_add(1, index, x * 2)


def _positions(x: torch.Tensor) -> torch.Tensor:
    T = x.shape[1]
    return F.layer_norm(x + torch.arange(T, dtype=x.dtype).view(1, T, 1) / T, (C,)).sum(1) / math.sqrt(C)


def _pad_to_a_multiple(x: torch.Tensor) -> torch.Tensor:
    B, T = x.shape[0], x.shape[1]
    return F.pad(x, (0, 0, 0, (8 - T % 8) % 8)).view(B, -1, 8, C).sum(2)


def _pad_by_a_remainder(x: torch.Tensor) -> torch.Tensor:
    return F.pad(x, (0, 0, 0, -x.shape[1] % 4)).reshape(x.shape[0], -1, 4 * C)


USER = {
    "causal mask from T": _causal_attention,
    "attention is_causal": lambda x: F.scaled_dot_product_attention(
        x[:, None], x[:, None] * 0.5, x[:, None], is_causal=True
    )[:, 0],
    "masked mean over lengths": _masked_mean,
    "chunk the features": lambda x: x.chunk(2, dim=-1)[0] * x.chunk(2, dim=-1)[1].sigmoid(),
    "reshape with -1 and B * T": lambda x: (
        x.reshape(-1, C).mul(2).view(x.shape[0], x.shape[1] * C).reshape(x.shape[0], -1, 2)
    ),
    "unsqueeze / squeeze of static dims": lambda x: x.unsqueeze(1).mul(3).squeeze(1).unsqueeze(-1).squeeze(-1),
    "expand a mean over T": lambda x: x * x.mean(1, keepdim=True).expand(-1, x.shape[1], -1) + x.mean(1, keepdim=True),
    "mean over dynamic dims (1/numel)": lambda x: x.mean(1) * x.mean((0, 1)),
    "numel and shape[0] as scalars": lambda x: x / x.numel() + x.sum() / x.shape[0],
    "cumsum over T / arange": lambda x: x.cumsum(1) / torch.arange(1, x.shape[1] + 1, dtype=x.dtype)[:, None],
    "gather / index with arange(T)": _reversed_gather,
    "scatter_add with arange(T)": _scatter_reversed,
    "repeat_interleave along T": lambda x: x.repeat_interleave(2, dim=1).sum(-1),
    "einsum over T, S": lambda x: torch.einsum("btc,bsc->bts", x, x).tanh(),
    "halves of T": lambda x: x[:, x.shape[1] // 2 :].sum(1) - x[:, : x.shape[1] - x.shape[1] // 2].sum(1),
    "positions / T into layer_norm": _positions,
    "stack along a new dim and flatten": lambda x: torch.stack([x, x * 2], dim=2).flatten(1, 2),
    "cat a static row and cumsum": lambda x: torch.cat([x, x[:, :1] * 0 + 1], dim=1).cumsum(1),
    "linspace(0, 1, T) and eye(T) (eager's factories)": lambda x: (
        torch.eye(x.shape[1], dtype=x.dtype) @ x * torch.linspace(0, 1, x.shape[1], dtype=x.dtype)[:, None]
    ),
    "new_zeros / new_ones of (B, T)": lambda x: (
        x + x.new_zeros(x.shape[0], x.shape[1], C) + x.new_ones((x.shape[0], x.shape[1], 1)) * x.shape[1]
    ),
    "pad T to a multiple of 8, view (B, -1, 8, C)": _pad_to_a_multiple,
    "pad T by -T % 4, reshape (B, -1, 4 * C)": _pad_by_a_remainder,
    "sliding windows (unfold) mean": lambda x: x.unfold(1, 1, 1).mean(-1) + x.topk(1, dim=1).values,
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(USER))
def test_user_code_over_dynamic_dims(name: str, dtype: torch.dtype) -> None:
    f = run_side_by_side(USER[name], dtype)
    assert (f.cache_info().misses, f.cache_info().guards) == (1, 0)


def _pair(b: int, t: int, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(b, t, C, dtype=dtype), torch.randint(0, C, (b, t))


LOSSES = {
    "cross_entropy over B * T": lambda x, y: F.cross_entropy(x.flatten(0, 1), y.flatten()),
    "cross_entropy ignore_index": lambda x, y: F.cross_entropy(x.flatten(0, 1), y.flatten(), ignore_index=0),
    "cross_entropy label_smoothing, class dim 1": lambda x, y: F.cross_entropy(
        x.transpose(1, 2), y, label_smoothing=0.2
    ),
    "nll_loss of log_softmax": lambda x, y: F.nll_loss(x.log_softmax(-1).flatten(0, 1), y.flatten()),
    "soft targets": lambda x, y: F.cross_entropy(x.transpose(1, 2), x.detach().softmax(-1).transpose(1, 2)),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(LOSSES))
def test_losses_over_dynamic_dims(name: str, dtype: torch.dtype) -> None:
    f = run_side_by_side(LOSSES[name], dtype, dynamic_dims={"x": ("B", "T"), "y": ("B", "T")}, make=_pair)
    assert f.cache_info().misses == 1


# ---- attention's kernel choice by value: eager takes its CPU flash kernel where the mask's dims
# equal the scores' (or are 1) and q, k, v agree at this call, whatever the dims are named


def _tril_mask_attention(x: torch.Tensor) -> torch.Tensor:
    T = x.shape[1]
    mask = torch.ones(T, T, dtype=torch.bool).tril()
    q = x.unsqueeze(1)
    return F.scaled_dot_product_attention(q, q * 0.5, q, attn_mask=mask).squeeze(1)


@pytest.mark.parametrize("dtype", DTYPES)
def test_attention_with_a_mask_built_from_a_dynamic_size(dtype: torch.dtype) -> None:
    f = run_side_by_side(_tril_mask_attention, dtype)
    assert (f.cache_info().misses, f.cache_info().guards) == (1, 0)


def _cross_attention(x: torch.Tensor, y: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return F.scaled_dot_product_attention(x[:, None], y[:, None], y[:, None], attn_mask=mask)[:, 0]


def _cross_inputs(b: int, t: int, dtype: torch.dtype) -> tuple[torch.Tensor, ...]:
    s = t % 5 + 2
    mask = torch.rand(t, s) > 0.3
    mask[:, 0] = True
    return torch.randn(b, t, C, dtype=dtype), torch.randn(b, s, C, dtype=dtype), mask


@pytest.mark.parametrize("dtype", DTYPES)
def test_cross_attention_over_dims_of_other_names_equal_at_the_call(dtype: torch.dtype) -> None:
    """Batch ``B`` of the queries and ``B2`` of the keys, a mask of its own ``(T2, S2)``: equal
    at each call, so eager's flash kernel, under the guards that say so."""
    dims = {"x": ("B", "T"), "y": ("B2", "S"), "mask": ("T2", "S2")}
    f = run_side_by_side(_cross_attention, dtype, dynamic_dims=dims, make=_cross_inputs)
    assert f.cache_info().misses == 1
    assert sorted(g.condition() for g in f.explain().guards) == ["s_B == s_B2", "s_S == s_S2", "s_T == s_T2"]


# ---- eager's own kernels as opaque calls with a shape rule (ops/dynamic_shapes.py)


def _two(b: int, t: int, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
    return torch.randn(b, t, C, dtype=dtype), torch.randn(b, t, C, dtype=dtype)


def _meshes(x: torch.Tensor) -> torch.Tensor:
    B, T = x.shape[0], x.shape[1]
    i, j = torch.meshgrid(torch.arange(B), torch.arange(T), indexing="ij")
    u, v = torch.meshgrid(torch.arange(T), torch.arange(B), indexing="xy")
    return x * (i + j * 2 + u - v).to(x.dtype)[..., None]


OPAQUE = {
    "mse_loss": lambda x, y: F.mse_loss(x, y),
    "mse_loss sum": lambda x, y: F.mse_loss(x, y, reduction="sum"),
    "mse_loss none": lambda x, y: F.mse_loss(x, y, reduction="none"),
    "l1_loss": lambda x, y: F.l1_loss(x, y),
    "smooth_l1_loss": lambda x, y: F.smooth_l1_loss(x, y, beta=0.5),
    "huber_loss none": lambda x, y: F.huber_loss(x, y, reduction="none"),
    "binary_cross_entropy": lambda x, y: F.binary_cross_entropy(x.sigmoid(), y.detach().sigmoid()),
    "bce with logits": lambda x, y: F.binary_cross_entropy_with_logits(x, y.detach().sigmoid()),
    "kl_div batchmean": lambda x, y: F.kl_div(x.log_softmax(-1), y.softmax(-1), reduction="batchmean"),
    "normalize over T": lambda x, y: F.normalize(x, dim=1) + y,
    "tile and repeat": lambda x, y: x.tile((1, 2, 1)) + y.repeat(1, 2, 1),
    "vector_norm, Tensor.norm over T": lambda x, y: torch.linalg.vector_norm(x, dim=1) + y.norm(dim=(0, 1)),
    "cosine_similarity": lambda x, y: F.cosine_similarity(x, y, dim=-1),
    "pairwise_distance": lambda x, y: F.pairwise_distance(x, y, keepdim=True),
    "poisson_nll_loss": lambda x, y: F.poisson_nll_loss(x, y.detach().exp()),
    "meshgrid ij and xy of arange(T), arange(B)": lambda x, y: _meshes(x) + y,
    "glu along a static dim": lambda x, y: F.glu(x, -1) * y[..., :2],
    "cummax / cummin / logcumsumexp": lambda x, y: x.cummax(1).values + torch.cummin(y, 1)[0] + x.logcumsumexp(1),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(OPAQUE))
def test_eager_kernels_on_dynamic_dims(name: str, dtype: torch.dtype) -> None:
    f = run_side_by_side(OPAQUE[name], dtype, dynamic_dims={"x": ("B", "T"), "y": ("B", "T")}, make=_two)
    assert (f.cache_info().misses, f.cache_info().guards) == (1, 0)


def test_a_pointwise_loss_of_two_shapes_is_refused_clearly() -> None:
    f = symscalar.jit(lambda x, y: F.mse_loss(x, y, reduction="none"), dynamic_dims={"x": ("B", "T"), "y": ("B", "S")})
    with pytest.raises(UnsupportedOperationError, match=r"mse_loss.*one shape for both"):
        f(torch.randn(2, 7, C), torch.randn(2, 1, C))  # (eager broadcasts S = 1)


# ---- convolution and 1-d pooling over a dynamic length


def _w(dtype: torch.dtype, k: int) -> torch.Tensor:
    return torch.linspace(-1, 1, 3 * C * k, dtype=dtype).view(3, C, k)


SEQUENCE_CNN = {
    "F.unfold k3 padding 1 stride 2 over (T, C)": lambda x: F.unfold(x[:, None], 3, padding=1, stride=2),
    "F.unfold (3, 2) dilation 2 padding 2": lambda x: F.unfold(x[:, None], (3, 2), dilation=2, padding=2),
    "interpolate to size 2 * T, linear": lambda x: F.interpolate(x.transpose(1, 2), size=2 * x.shape[1], mode="linear"),
    "interpolate to size T + 3, nearest": lambda x: F.interpolate(x.transpose(1, 2), size=x.shape[1] + 3),
    "interpolate bilinear to (2 * T, 8)": lambda x: F.interpolate(x[:, None], (2 * x.shape[1], 8), mode="bilinear"),
    "conv1d k3 padding 1": lambda x: F.conv1d(x.transpose(1, 2), _w(x.dtype, 3), padding=1),
    "conv1d k4 padding same (asymmetric)": lambda x: F.conv1d(x.transpose(1, 2), _w(x.dtype, 4), padding="same"),
    "conv1d k2 dilation 2 padding 1 stride 3, bias": lambda x: F.conv1d(
        x.transpose(1, 2), _w(x.dtype, 2), torch.ones(3, dtype=x.dtype), padding=1, dilation=2, stride=3
    ),
    "conv2d over (T, C)": lambda x: F.conv2d(x.unsqueeze(1), _w(x.dtype, 3)[:1, :2].reshape(1, 1, 2, 3), padding=1),
    "max_pool1d 3 stride 2 padding 1": lambda x: F.max_pool1d(x.transpose(1, 2), 3, 2, 1),
    "max_pool1d with indices": lambda x: F.max_pool1d(x.transpose(1, 2), 1, return_indices=True)[0],
    "avg_pool1d 1": lambda x: F.avg_pool1d(x.transpose(1, 2), 1),
    "adaptive_avg_pool1d to 1": lambda x: F.adaptive_avg_pool1d(x.transpose(1, 2), 1).squeeze(-1),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(SEQUENCE_CNN))
def test_convolution_and_pooling_over_a_dynamic_length(name: str, dtype: torch.dtype) -> None:
    f = run_side_by_side(SEQUENCE_CNN[name], dtype)
    assert (f.cache_info().misses, f.cache_info().guards) == (1, 0)


def test_a_kernel_longer_than_a_dynamic_length_is_guarded_and_raises_as_eager() -> None:
    f = run_side_by_side(lambda x: F.conv1d(x.transpose(1, 2), _w(x.dtype, 5)), torch.float64, [(2, 7), (3, 64)])
    [guard] = f.explain().guards
    assert guard.condition() == "s_T >= 5"
    with pytest.raises(RuntimeError, match="Kernel size can't be greater than actual input size"):
        f(torch.randn(2, 3, C, dtype=torch.float64))


def test_pooling_with_ceil_mode_over_a_dynamic_length_is_refused_clearly() -> None:
    f = symscalar.jit(lambda x: F.max_pool1d(x.transpose(1, 2), 2, ceil_mode=True), dynamic_dims=DIMS)
    with pytest.raises(UnsupportedOperationError, match="ceil_mode=True over a dynamic dim"):
        f(torch.randn(2, 7, C))


# ---- the normal form: remainders are ``a - c * (a // c)``, multiples of c leave a quotient


def test_remainders_and_quotients_normalize_and_agree_with_python() -> None:
    t = sizes.Symbol("T", 1, None, 5)
    T = sizes.Size.of(t)
    assert (T + 8 * 3) // 8 == T // 8 + 3 and (T + 9) // 8 == (T + 1) // 8 + 1
    assert (T + (8 - T % 8) % 8) % 8 == 0 and (T + (-T) % 8) % 8 == 0  # padded to a multiple of 8
    assert sizes.decide("ge", T % 8, 0) and sizes.decide("le", T % 8, 7) and sizes.decide("lt", (-T) % 3, 3)
    forms = [T % 8, (-T) % 8, (8 - T % 8) % 8, (T + 9) // 8, (9 * T + 3) // 8, (T - 3) % 2, (T * T + 1) % 4]
    for value in range(1, 40):
        python = [value % 8, -value % 8, (8 - value % 8) % 8, (value + 9) // 8, (9 * value + 3) // 8]
        python += [(value - 3) % 2, (value * value + 1) % 4]
        assert [sizes.evaluate(f, {t: value}) for f in forms] == python
        assert [eval(repr(f), {"s_T": value}) for f in forms] == python  # noqa: S307 - the printed form


# ---- modules over (B, T): recurrent layers (eager's kernels) and batch norm over a length


class _Recurrent(torch.nn.Module):
    def __init__(self, layer: torch.nn.Module) -> None:
        super().__init__()
        self.layer = layer

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out, state = self.layer(x)
        last = state[0] if isinstance(state, tuple) else state
        return out.sum(-1, keepdim=True) * x + last.sum(0)[:, None, :1]


class _SequenceCNN(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = torch.nn.Conv1d(C, C, 3, padding=1)
        self.norm = torch.nn.BatchNorm1d(C)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(F.gelu(self.conv(x.transpose(1, 2)))).transpose(1, 2)


MODULES = {
    "GRU, 2 layers, bidirectional": lambda: _Recurrent(torch.nn.GRU(C, 3, 2, batch_first=True, bidirectional=True)),
    "LSTM": lambda: _Recurrent(torch.nn.LSTM(C, 5, batch_first=True)),
    "RNN tanh": lambda: _Recurrent(torch.nn.RNN(C, 2, batch_first=True)),
    "Conv1d, GELU, BatchNorm1d over T (training)": _SequenceCNN,
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", list(MODULES))
def test_modules_over_dynamic_dims(name: str, dtype: torch.dtype) -> None:
    torch.manual_seed(0)
    eager = MODULES[name]().to(dtype)
    mine = MODULES[name]().to(dtype)
    mine.load_state_dict(eager.state_dict())
    jitted = symscalar.jit(mine, dynamic_dims=DIMS)
    for b, t in [(2, 7), (3, 64), (1, 2), (8, 33)]:
        x = torch.randn(b, t, C, dtype=dtype)
        mx, ex = x.clone().requires_grad_(), x.clone().requires_grad_()
        got, want = jitted(mx), eager(ex)
        _same(got, want, f"output at {(b, t)}")
        cotangent = torch.randn_like(want)
        (got * cotangent).sum().backward()
        (want * cotangent).sum().backward()
        _same(mx.grad, ex.grad, f"input grad at {(b, t)}")
        for (key, p), q in zip(eager.named_parameters(), mine.parameters()):
            _same(q.grad, p.grad, f"grad of {key} at {(b, t)}")
        for (key, s), r in zip(eager.state_dict().items(), mine.state_dict().values()):
            assert torch.equal(r, s), key  # running statistics
        eager.zero_grad()
        mine.zero_grad()
    assert jitted.cache_info().misses == 1


@pytest.mark.parametrize("grad", [True, False])
def test_lstm_at_batch_1_takes_eagers_kernel_in_eagers_grad_mode(grad: bool) -> None:
    """Eager's CPU ``torch.lstm`` takes another kernel under ``no_grad`` (1 ulp apart at batch 1);
    a program's forward runs without grad mode, so the opaque call restores eager's."""
    torch.manual_seed(0)
    lstm = torch.nn.LSTM(C, 5, batch_first=True)
    jitted = symscalar.jit(lambda x: lstm(x)[0])
    x = torch.randn(1, 7, C)
    with torch.set_grad_enabled(grad):
        assert torch.equal(jitted(x), lstm(x)[0])


def test_glu_along_a_dynamic_dim_is_refused_clearly() -> None:
    f = symscalar.jit(lambda x: F.glu(x, 1), dynamic_dims=DIMS)
    with pytest.raises(UnsupportedOperationError, match="glu along the dynamic dim 1"):
        f(torch.randn(2, 6, C))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("scale", [2.0, 1.5, 0.5])
def test_interpolate_by_a_binary_fraction_scale(scale: float, dtype: torch.dtype) -> None:
    sizes = [(b, t) for b, t in SIZES if t * scale >= 1]  # (eager raises for an empty output)
    f = run_side_by_side(lambda x: F.interpolate(x.transpose(1, 2), scale_factor=scale, mode="linear"), dtype, sizes)
    assert (f.cache_info().misses, f.cache_info().guards) == (1, 1)  # s_T * a < 2**53: no max declared


def test_interpolate_by_a_scale_that_is_no_binary_fraction_is_refused_clearly() -> None:
    f = symscalar.jit(lambda x: F.interpolate(x.transpose(1, 2), scale_factor=0.3), dynamic_dims=DIMS)
    with pytest.raises(UnsupportedOperationError, match="not a positive short binary fraction"):
        f(torch.randn(2, 10, C))
