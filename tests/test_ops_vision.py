"""Vision and attention layers against eager: convolution, pooling, batch_norm (with its
running statistics written back), in-place updates of buffers, multi-head attention and the
Transformer layers. Values and every gradient are compared with torch eager and autograd
(float64 exactly or nearly, float32 to rounding), float64 gradients with gradcheck, and the
static/dynamic contract of each parameter."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import symscalar
from symscalar.errors import StaticValueRequiredError, UnsupportedOperationError


def rnd(*shape: int, dtype: torch.dtype = torch.float64, seed: int = 0) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g, dtype=dtype).requires_grad_(True)


def assert_same(fn: Any, *args: torch.Tensor, atol: float = 1e-12, rtol: float = 1e-10) -> None:
    """``symscalar.jit(fn)`` and ``fn``: the same values and the same gradients (None-ness
    included) for every input that requires grad."""
    got = symscalar.jit(fn)(*args)
    want = fn(*args)
    got_t = got if isinstance(got, tuple) else (got,)
    want_t = want if isinstance(want, tuple) else (want,)
    for g, w in zip(got_t, want_t):
        assert g.dtype == w.dtype and g.shape == w.shape
        torch.testing.assert_close(g, w, atol=atol, rtol=rtol)
    inputs = [a for a in args if a.requires_grad]
    loss_g = sum(
        (g.double() * torch.linspace(-1, 1, g.numel(), dtype=torch.float64).reshape(g.shape)).sum()
        for g in got_t
        if g.is_floating_point()
    )
    loss_w = sum(
        (w.double() * torch.linspace(-1, 1, w.numel(), dtype=torch.float64).reshape(w.shape)).sum()
        for w in want_t
        if w.is_floating_point()
    )
    grads_g = torch.autograd.grad(loss_g, inputs, allow_unused=True)
    grads_w = torch.autograd.grad(loss_w, inputs, allow_unused=True)
    for a, b in zip(grads_g, grads_w):
        assert (a is None) == (b is None)
        if a is not None:
            torch.testing.assert_close(a, b, atol=atol, rtol=rtol)


# ---- convolution
CONV2D = [
    {},
    {"stride": 2, "padding": 1},
    {"padding": (1, 2), "dilation": (2, 1)},
    {"groups": 2},
    {"padding": "same"},
    {"padding": "same", "dilation": 2},
    {"padding": "valid", "stride": (1, 2)},
]


@pytest.mark.parametrize("kw", CONV2D)
@pytest.mark.parametrize("dtype", [torch.float64, torch.float32])
def test_conv2d_matches_eager(kw: dict[str, Any], dtype: torch.dtype) -> None:
    x, b = rnd(2, 4, 7, 8, dtype=dtype), rnd(6, dtype=dtype, seed=2)
    w = rnd(6, 4 // kw.get("groups", 1), 3, 3, dtype=dtype, seed=1)
    tol = {} if dtype == torch.float64 else {"atol": 1e-5, "rtol": 1e-5}
    assert_same(lambda x, w, b: F.conv2d(x, w, b, **kw), x, w, b, **tol)
    assert_same(lambda x, w: F.conv2d(x, w, **kw), x, w, **tol)


def test_conv_even_kernel_same_padding_unbatched_1d_3d() -> None:
    x = rnd(3, 9)
    assert_same(lambda x, w: F.conv1d(x, w, padding="same"), x, rnd(2, 3, 4, seed=1))  # unbatched, asymmetric
    assert_same(lambda x, w: F.conv2d(x, w, padding="same"), rnd(1, 2, 5, 6), rnd(3, 2, 2, 4, seed=1))
    assert_same(
        lambda x, w, b: F.conv3d(x, w, b, stride=(1, 2, 1), padding=1),
        rnd(1, 2, 4, 5, 3),
        rnd(3, 2, 3, 3, 3, seed=1),
        rnd(3, seed=2),
    )
    assert_same(lambda x, w: torch.conv1d(x, w, None, 2, 0, 1, 3), rnd(2, 6, 11), rnd(3, 2, 3, seed=1))


@pytest.mark.slow
def test_conv_gradcheck_float64() -> None:
    f = symscalar.jit(lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, groups=2))
    assert torch.autograd.gradcheck(f, (rnd(1, 4, 5, 5), rnd(2, 2, 3, 3, seed=1), rnd(2, seed=2)))
    g = symscalar.jit(lambda x, w: F.conv1d(x, w, padding="same", dilation=2))
    assert torch.autograd.gradcheck(g, (rnd(2, 3, 7), rnd(4, 3, 2, seed=1)))


def test_conv_static_parameters_and_errors() -> None:
    x, w = rnd(1, 2, 5, 5), rnd(3, 2, 3, 3)
    with pytest.raises(StaticValueRequiredError, match="stride"):
        symscalar.jit(lambda x, w, s: F.conv2d(x, w, stride=s), dynamic=["s"])(x, w, 2)
    with pytest.raises(StaticValueRequiredError, match="groups"):
        symscalar.jit(lambda x, w, g: F.conv2d(x, w, groups=g), dynamic=["g"])(x, w, 1)
    for bad in (lambda x, w: F.conv2d(x, w, padding="same", stride=2), lambda x, w: F.conv2d(x, w, padding="full")):
        with pytest.raises(RuntimeError) as eager_error:
            bad(x, w)
        with pytest.raises(RuntimeError, match=str(eager_error.value).replace("(", r"\(").replace(")", r"\)")):
            symscalar.jit(bad)(x, w)
    with pytest.raises(RuntimeError):
        symscalar.jit(lambda x, w: F.conv2d(x, w))(rnd(1, 3, 5, 5), w)  # channel mismatch, as eager


def test_conv_double_backward_is_a_clear_error() -> None:
    x, w = rnd(1, 2, 5, 5), rnd(3, 2, 3, 3)
    out = symscalar.jit(lambda x, w: (F.conv2d(x, w) ** 2).sum())(x, w)
    with pytest.raises(NotImplementedError, match="convolution_backward"):
        (g,) = torch.autograd.grad(out, x, create_graph=True)
        g.sum().backward()


# ---- pooling
POOLS = [
    lambda x: F.max_pool2d(x, 2),
    lambda x: F.max_pool2d(x, 3, stride=2, padding=1, ceil_mode=True),
    lambda x: F.max_pool2d(x, (2, 3), dilation=(2, 1)),
    lambda x: F.max_pool2d(x, 2, return_indices=True),
    lambda x: F.avg_pool2d(x, 2),
    lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False, ceil_mode=True),
    lambda x: F.avg_pool2d(x, 2, divisor_override=3),
    lambda x: F.adaptive_avg_pool2d(x, 1),
    lambda x: F.adaptive_avg_pool2d(x, (3, None)),
    lambda x: F.adaptive_avg_pool2d(x, (4, 5)),
]


@pytest.mark.parametrize("fn", POOLS)
@pytest.mark.slow
def test_pooling_matches_eager_and_gradcheck(fn: Any) -> None:
    x = rnd(2, 3, 7, 9)
    assert_same(fn, x)
    assert_same(fn, rnd(3, 7, 9, dtype=torch.float32), atol=1e-6, rtol=1e-6)  # unbatched
    jitted = symscalar.jit(fn)
    assert torch.autograd.gradcheck(
        lambda x: jitted(x)[0] if isinstance(jitted(x), tuple) else jitted(x), (rnd(1, 2, 5, 6),)
    )


def test_pooling_modules_and_static_kernel() -> None:
    x = rnd(2, 3, 8, 8)
    for module in (nn.MaxPool2d(3, 2, 1), nn.AvgPool2d(2), nn.AdaptiveAvgPool2d((2, 2))):
        assert_same(module, x)
    with pytest.raises(StaticValueRequiredError, match="kernel_size"):
        symscalar.jit(lambda x, k: F.max_pool2d(x, k), dynamic=["k"])(x, 2)


# ---- batch_norm
@pytest.mark.parametrize("training", [False, True])
def test_functional_batch_norm_matches_eager(training: bool) -> None:
    x, w, b = rnd(4, 3, 5), rnd(3, seed=1), rnd(3, seed=2)
    stats = lambda: (torch.linspace(-1, 1, 3, dtype=torch.float64), torch.linspace(0.5, 2, 3, dtype=torch.float64))  # noqa: E731
    m1, v1 = stats()
    m2, v2 = stats()
    out = symscalar.jit(lambda x, w, b: F.batch_norm(x, m1, v1, w, b, training, 0.2, 1e-3))(x, w, b)
    ref = F.batch_norm(x, m2, v2, w, b, training, 0.2, 1e-3)
    torch.testing.assert_close(out, ref)
    torch.testing.assert_close((m1, v1), (m2, v2))
    assert_same(lambda x, w, b: F.batch_norm(x, None, None, w, b, True), x, w, b)
    if not training:
        assert_same(lambda x, w, b: F.batch_norm(x, m2, v2, w, b), x, w, b)


def test_batch_norm_gradcheck_and_dynamic_momentum_eps() -> None:
    f = symscalar.jit(lambda x, w, b: F.batch_norm(x, None, None, w, b, True, 0.1, 1e-5))
    assert torch.autograd.gradcheck(f, (rnd(3, 2, 4), rnd(2, seed=1), rnd(2, seed=2)))
    mean, var = torch.zeros(2, dtype=torch.float64), torch.ones(2, dtype=torch.float64)
    mean_ref, var_ref = mean.clone(), var.clone()
    g = symscalar.jit(lambda x, m, e: F.batch_norm(x, mean, var, None, None, True, m, e), dynamic=["m", "e"])
    x = rnd(5, 2, 3)
    for momentum, eps in ((0.1, 1e-5), (0.5, 1e-2), (0.9, 0.25)):
        out = g(x, momentum, eps)
        ref = F.batch_norm(x, mean_ref, var_ref, None, None, True, momentum, eps)
        torch.testing.assert_close(out, ref)
        torch.testing.assert_close((mean, var), (mean_ref, var_ref))
        assert not mean.requires_grad and not var.requires_grad  # no graph into the statistics
    assert g.cache_info().misses == 1


def test_training_batch_norm_double_backward_is_a_clear_error() -> None:
    """Training batch norm runs torch's backward kernel (eager's gradients to the bit), which has
    no vjp here: a second derivative is refused by name, never computed wrong."""
    x = rnd(4, 2, 3)
    out = symscalar.jit(lambda x: (F.batch_norm(x, None, None, training=True) ** 3).sum())(x)
    with pytest.raises(NotImplementedError, match="batch_norm_backward"):
        (g,) = torch.autograd.grad(out, x, create_graph=True)
        g.sum().backward()


def test_batch_norm_errors_as_eager() -> None:
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        symscalar.jit(lambda x: F.batch_norm(x, None, None, training=True))(rnd(1, 3))
    with pytest.raises(RuntimeError, match="evaluation mode"):
        symscalar.jit(lambda x: F.batch_norm(x, None, None, training=False))(rnd(2, 3))
    with pytest.raises(UnsupportedOperationError, match="running_mean"):
        symscalar.jit(lambda x, m, v: F.batch_norm(x, m, v, training=True))(rnd(2, 3), torch.zeros(3), torch.ones(3))


@pytest.mark.parametrize("module_type", [nn.BatchNorm1d, nn.BatchNorm2d])
def test_batch_norm_module_several_steps_train_and_eval(module_type: type[nn.Module]) -> None:
    torch.manual_seed(0)
    eager = module_type(3, momentum=0.3)
    mine = module_type(3, momentum=0.3)
    mine.load_state_dict(eager.state_dict())
    jitted = symscalar.jit(mine)
    opt_e = torch.optim.SGD(eager.parameters(), lr=0.1)
    opt_m = torch.optim.SGD(mine.parameters(), lr=0.1)
    shape = (4, 3, 5) if module_type is nn.BatchNorm1d else (4, 3, 3, 3)
    for step in range(4):
        if step == 3:
            eager.eval(), mine.eval()
        x = torch.randn(shape) * (step + 1) + step
        out_e, out_m = eager(x), jitted(x)
        torch.testing.assert_close(out_m, out_e, atol=2e-6, rtol=1e-5)
        for opt, out in ((opt_e, out_e), (opt_m, out_m)):
            opt.zero_grad()
            (out * torch.arange(out.numel()).reshape(out.shape)).sum().backward()
            opt.step()
        for (name, a), b in zip(mine.state_dict().items(), eager.state_dict().values()):
            torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5, msg=name)
        torch.testing.assert_close(mine.weight.grad, eager.weight.grad, atol=1e-4, rtol=1e-5)
    assert int(mine.num_batches_tracked) == 3


def test_conv_batch_norm_relu_under_autocast_has_eager_gradients_to_the_bit() -> None:
    """Autocast rounds batch norm's float32 input gradient to bfloat16 for the convolution's
    backward: a float32 ulp of another summation order flips a bfloat16 ulp that the layers
    below amplify, so training batch norm runs eager's kernels and every gradient is eager's."""
    torch.manual_seed(0)
    eager = nn.Sequential(
        nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(inplace=True),
        nn.Conv2d(8, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 6 * 6, 4),
    )  # fmt: skip
    mine = copy.deepcopy(eager)
    x = torch.randn(4, 3, 6, 6) * 2
    for model in (eager, symscalar.jit(mine)):
        with torch.autocast("cpu", torch.bfloat16):
            loss = F.cross_entropy(model(x), torch.arange(4))
        loss.backward()
    for (name, pe), pm in zip(eager.named_parameters(), mine.parameters(), strict=True):
        assert pm.grad is not None and pe.grad is not None
        assert pm.grad.dtype == pe.grad.dtype and torch.equal(pm.grad, pe.grad), name
    for (name, se), sm in zip(eager.state_dict().items(), mine.state_dict().values(), strict=True):
        torch.testing.assert_close(sm, se, msg=name)  # the running statistics, updated alike


def test_batch_norm_momentum_none_is_a_clear_error() -> None:
    bn = nn.BatchNorm1d(3, momentum=None)
    with pytest.raises(Exception, match=r"num_batches_tracked|float|value"):
        symscalar.jit(bn)(torch.randn(4, 3))


# ---- in-place updates
def test_inplace_updates_of_buffers_and_fresh_values() -> None:
    ema = torch.zeros(3)
    ema_ref = torch.zeros(3)

    def step(x: torch.Tensor, buf: torch.Tensor) -> torch.Tensor:
        buf.mul_(0.9).add_(x.mean(0), alpha=0.1)
        y = torch.zeros_like(x).masked_fill_(x > 0, 1.0)
        y += buf
        return y * 2

    f = symscalar.jit(lambda x: step(x, ema))
    for i in range(3):
        x = torch.randn(4, 3) + i
        torch.testing.assert_close(f(x), step(x, ema_ref))
        torch.testing.assert_close(ema, ema_ref)
    assert f.cache_info().misses == 1


def test_inplace_after_a_read_is_refused() -> None:
    def viewed(x: torch.Tensor) -> torch.Tensor:
        y = x * 2
        v = y[0]
        y.add_(1)  # eager: v sees the update
        return v

    # the update itself traces (y's views are computed here); reading the stale view is refused
    with pytest.raises(UnsupportedOperationError, match=r"read after an in-place update \(torch.Tensor.add_\)"):
        symscalar.jit(viewed)(torch.ones(2, 2))
    with pytest.raises(UnsupportedOperationError, match="input"):
        symscalar.jit(lambda x: x.add_(1))(torch.ones(2))


def test_inplace_on_a_view_whose_aliases_are_not_read_again_matches_eager() -> None:
    """EfficientNet's classifier: ``nn.Dropout(inplace=True)`` on ``torch.flatten(pooled, 1)``.
    The update of a view (or of a base with views) traces when every alias is computed in the
    function; the aliases keep their old value in the trace, so reading one later is refused."""

    def flatten_then_relu_(x: torch.Tensor) -> torch.Tensor:
        v = torch.flatten(F.adaptive_avg_pool2d(x * 2 - 1, 1), 1)
        F.relu(v, inplace=True)
        return v * 3

    def chain(x: torch.Tensor) -> torch.Tensor:
        v = (x + 1).view(-1)[2:].unsqueeze(0)
        v.mul_(3)
        return v.exp()

    def base_then_view(x: torch.Tensor) -> torch.Tensor:
        y = x * 2
        v = y.view(-1)
        y.add_(1)
        del v  # the view is never read again
        return y.sum(0)

    for f in (flatten_then_relu_, chain, base_then_view):
        assert_same(f, rnd(2, 3, 4, 4))

    def reads_the_base(x: torch.Tensor) -> torch.Tensor:
        y = x * 2
        y.view(-1).relu_()
        return y + 1

    def returns_the_base(x: torch.Tensor) -> torch.Tensor:
        y = x * 2
        y.view(-1).relu_()
        return y

    def sibling_view(x: torch.Tensor) -> torch.Tensor:
        y = x * 2
        w = y[0]
        y.view(-1).relu_()
        return w.sum()

    for f in (reads_the_base, returns_the_base, sibling_view):
        f(rnd(2, 3))  # eager runs it (reading the updated values)
        with pytest.raises(UnsupportedOperationError, match=r"read after an in-place update \(torch.Tensor.relu_\)"):
            symscalar.jit(f)(rnd(2, 3))
    with pytest.raises(UnsupportedOperationError, match="in-place"):  # the caller's tensor: never
        symscalar.jit(lambda x: x.view(-1).relu_())(torch.ones(2, 2))


# ---- attention
def mha_cases() -> list[tuple[str, dict[str, Any], dict[str, Any]]]:
    return [
        ("plain", {}, {}),
        ("no_weights", {}, {"need_weights": False}),
        ("per_head", {}, {"average_attn_weights": False}),
        ("bias_kv_zero_attn", {"add_bias_kv": True, "add_zero_attn": True}, {}),
        ("kdim_vdim", {"kdim": 5, "vdim": 6}, {}),
        ("no_bias", {"bias": False}, {"need_weights": False}),
    ]


@pytest.mark.parametrize("batch_first", [True, False])
@pytest.mark.parametrize("case", mha_cases(), ids=lambda c: c[0])
def test_multihead_attention_matches_eager(case: tuple[str, dict[str, Any], dict[str, Any]], batch_first: bool) -> None:
    _, ctor, call = case
    torch.manual_seed(0)
    m = nn.MultiheadAttention(8, 2, batch_first=batch_first, dtype=torch.float64, **ctor)
    shape = (2, 5) if batch_first else (5, 2)
    q = rnd(*shape, 8)
    k = rnd(*(2, 4) if batch_first else (4, 2), ctor.get("kdim", 8), seed=1)
    v = rnd(*(2, 4) if batch_first else (4, 2), ctor.get("vdim", 8), seed=2)
    kpm = torch.tensor([[False] * 4, [False, False, True, True]])
    attn_mask = torch.triu(torch.ones(5, 4, dtype=torch.bool), 1)
    assert_same(lambda q, k, v: tuple(o for o in m(q, k, v, **call) if o is not None), q, k, v)
    if "add_zero_attn" not in ctor:
        assert_same(lambda q, k, v: m(q, k, v, key_padding_mask=kpm, attn_mask=attn_mask, **call)[0], q, k, v)


@pytest.mark.slow
def test_multihead_attention_parameter_grads_and_gradcheck() -> None:
    torch.manual_seed(0)
    m = nn.MultiheadAttention(6, 3, batch_first=True, dtype=torch.float64)
    x = rnd(2, 4, 6)
    f = symscalar.jit(lambda x: m(x, x, x)[0])
    out = f(x)
    grads = torch.autograd.grad(out.square().sum(), list(m.parameters()))
    ref = torch.autograd.grad(m(x, x, x)[0].square().sum(), list(m.parameters()))
    for g, r in zip(grads, ref):
        torch.testing.assert_close(g, r)
    assert torch.autograd.gradcheck(f, (x,))


def test_multihead_attention_dropout_is_random_and_eval_is_not() -> None:
    torch.manual_seed(0)
    m = nn.MultiheadAttention(8, 2, dropout=0.5, batch_first=True)
    x = torch.randn(2, 5, 8)
    f = symscalar.jit(lambda x: m(x, x, x)[0])
    assert not torch.equal(f(x), f(x))
    m.eval()
    with torch.no_grad():
        torch.testing.assert_close(symscalar.jit(lambda x: m(x, x, x)[0])(x), m(x, x, x)[0])


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
@pytest.mark.slow
def test_transformer_layers_match_eager(norm_first: bool, activation: str) -> None:
    torch.manual_seed(0)
    kw = {
        "dropout": 0.0,
        "batch_first": True,
        "norm_first": norm_first,
        "activation": activation,
        "dtype": torch.float64,
    }
    enc = nn.TransformerEncoderLayer(8, 2, 16, **kw)
    dec = nn.TransformerDecoderLayer(8, 2, 16, **kw)
    x, mem = rnd(2, 5, 8), rnd(2, 6, 8, seed=1)
    causal = nn.Transformer.generate_square_subsequent_mask(5, dtype=torch.float64)
    kpm = torch.tensor([[False] * 5, [False, False, False, True, True]])
    assert_same(lambda x: enc(x, src_mask=causal, src_key_padding_mask=kpm.double() * -1e9), x)
    assert_same(
        lambda x, mem: dec(x, mem, tgt_mask=causal, tgt_is_causal=True, memory_key_padding_mask=torch.zeros(2, 6)),
        x,
        mem,
    )
    params = list(enc.parameters())
    f = symscalar.jit(lambda x: enc(x, src_mask=causal))
    got = torch.autograd.grad(f(x).sum(), params)
    want = torch.autograd.grad(enc(x, src_mask=causal).sum(), params)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w)
    enc.eval()
    with torch.no_grad():  # eager takes its fused fast path here; tracing the composite one
        got_eval = symscalar.jit(lambda x: enc(x, src_key_padding_mask=kpm))(x.detach())
        torch.testing.assert_close(got_eval, enc(x.detach(), src_key_padding_mask=kpm), atol=1e-12, rtol=1e-10)
