"""The opaque torch call (symscalar/ops/opaque.py): torch functions without a hand-written op.

Each op is checked against torch eager (values, dtypes, shapes, requires_grad) and against
torch.autograd (gradcheck and gradgradcheck in float64: the vjp is torch's own derivative run
as a second opaque call, and its vjp a third). The contract (static ``int``/``bool``
parameters, dynamic ``float``/``Scalar`` ones unless the result's shape depends on them) and
the refusals (random, in-place, data-dependent shapes, non-tensor results, aliasing) are each
checked with the error they must raise.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F

import symscalar
from symscalar import DynamicFloat, DynamicInt, nvfuser_backend
from symscalar.trace import python_source
from tests.test_nvfuser_lowerings import run_through_lowerings

# (name, function of float64 tensors, input shapes): each is an op with no hand-written primitive
CASES: list[tuple[str, Callable[..., Any], tuple[tuple[int, ...], ...]]] = [
    ("diff", lambda x: torch.diff(x, dim=0), ((4, 3),)),
    ("diff_n2_prepend", lambda x, p: torch.diff(x, n=2, dim=1, prepend=p), ((3, 4), (3, 2))),
    ("interpolate_nearest", lambda x: F.interpolate(x, scale_factor=2, mode="nearest"), ((1, 2, 3, 3),)),
    ("interpolate_bilinear", lambda x: F.interpolate(x, size=(5, 4), mode="bilinear"), ((1, 2, 3, 3),)),
    ("upsample_module", lambda x: torch.nn.Upsample(scale_factor=2.0)(x), ((1, 1, 2, 3),)),
    ("conv_transpose2d", lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1), ((1, 2, 4, 4), (2, 3, 3, 3))),
    ("elu", lambda x: F.elu(x, alpha=0.7), ((3, 4),)),
    ("softplus", lambda x: F.softplus(x, beta=2.0, threshold=5.0), ((3, 4),)),
    ("mish", lambda x: F.mish(x), ((3, 4),)),
    ("instance_norm", lambda x: F.instance_norm(x), ((2, 3, 5),)),
    ("vector_norm", lambda x: torch.linalg.vector_norm(x, ord=3, dim=1), ((3, 4),)),
    ("norm", lambda x: torch.norm(x, p=2, dim=0), ((3, 4),)),
    ("pad_reflect", lambda x: F.pad(x, (2, 1), mode="reflect"), ((2, 3, 4),)),
    ("pad_replicate", lambda x: F.pad(x, (1, 2, 2, 0), mode="replicate"), ((1, 2, 3, 4),)),
    ("pad_circular", lambda x: F.pad(x, (1, 2), mode="circular"), ((2, 3, 4),)),
    ("logaddexp", lambda x, y: torch.logaddexp(x, y), ((3, 4), (3, 4))),
    ("cumprod", lambda x: torch.cumprod(x, 1), ((3, 4),)),
    ("movedim_then_method", lambda x: x.movedim(0, 1).cosh(), ((3, 4),)),
    ("max_with_indices", lambda x: torch.cummax(x, 1).values, ((3, 4),)),
]
IDS = [c[0] for c in CASES]


def _inputs(shapes: tuple[tuple[int, ...], ...], seed: int = 0) -> list[torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    return [torch.rand(s, generator=g, dtype=torch.float64).add_(0.5).requires_grad_(True) for s in shapes]


@pytest.mark.parametrize(("name", "fn", "shapes"), CASES, ids=IDS)
def test_forward_and_grads_equal_eager(name: str, fn: Callable[..., Any], shapes: Any) -> None:
    xs = _inputs(shapes)
    jitted = symscalar.jit(fn)
    got, expected = jitted(*xs), fn(*xs)
    assert (got.shape, got.dtype, got.requires_grad) == (expected.shape, expected.dtype, expected.requires_grad)
    torch.testing.assert_close(got, expected)
    ct = torch.linspace(-1, 1, expected.numel(), dtype=expected.dtype).reshape(expected.shape)
    torch.testing.assert_close(torch.autograd.grad(got, xs, ct), torch.autograd.grad(expected, xs, ct))
    assert any(e.prim.name in ("torch_call", "torch_view_call") for e in jitted.last_trace().eqns)


@pytest.mark.slow
@pytest.mark.parametrize(("name", "fn", "shapes"), CASES, ids=IDS)
def test_gradcheck_and_gradgradcheck(name: str, fn: Callable[..., Any], shapes: Any) -> None:
    xs = _inputs(shapes, seed=1)
    jitted = symscalar.jit(fn)
    assert torch.autograd.gradcheck(jitted, xs)
    assert torch.autograd.gradgradcheck(jitted, xs)


def test_printed_trace_runs() -> None:
    """The forward and backward traces print as Python that runs and gives eager's values."""
    fn = lambda x: F.pad(torch.diff(x, dim=1), (1, 1), mode="reflect").sin()  # noqa: E731
    x = _inputs(((3, 5),))[0]
    jitted = symscalar.jit(fn)
    y = jitted(x)
    for trace, args in ((jitted.last_trace(), (x.detach(),)),):
        namespace: dict[str, Any] = {}
        exec(python_source(trace), namespace)  # noqa: S102 - the printed trace
        (out,) = namespace[trace.name](*args)
        torch.testing.assert_close(out, y.detach())
    backward = jitted.last_backward_trace()
    assert "call=('vjp', ('call', 'torch.nn.functional.pad'" in python_source(backward)
    compile(python_source(backward), "<backward>", "exec")


def test_double_backward_is_an_opaque_call_of_the_vjp() -> None:
    x = _inputs(((4, 3),))[0]
    jitted = symscalar.jit(lambda x: torch.diff(x, dim=0).pow(3))
    (g,) = torch.autograd.grad(jitted(x).sum(), x, create_graph=True)
    (gg,) = torch.autograd.grad(g.sum(), x)
    (ge,) = torch.autograd.grad(torch.diff(x, dim=0).pow(3).sum(), x, create_graph=True)
    torch.testing.assert_close(gg, torch.autograd.grad(ge.sum(), x)[0])


# ----------------------------------------------------------------------------------------
# The contract: schema types decide static/dynamic


def test_int_parameter_is_static() -> None:
    f = symscalar.jit(lambda x, n: torch.diff(x, n=n), dynamic=["n"])
    with pytest.raises(symscalar.StaticValueRequiredError, match=r'torch.diff: parameter "n" must be static'):
        f(torch.ones(5), 2)


def test_float_parameter_is_dynamic() -> None:
    def fn(x: torch.Tensor, alpha: DynamicFloat) -> torch.Tensor:
        return F.elu(x, alpha=alpha)

    f = symscalar.jit(fn)
    x = torch.linspace(-3, 3, 7)
    for alpha in (0.5, 1.5, 2.25):
        torch.testing.assert_close(f(x, alpha), F.elu(x, alpha=alpha))
    assert (f.cache_info().misses, f.cache_info().hits) == (1, 2)


def test_scalar_parameter_is_dynamic() -> None:
    def fn(x: torch.Tensor, s: DynamicInt) -> torch.Tensor:
        return torch.xlogy(x, s)

    f = symscalar.jit(fn)
    x = torch.rand(4) + 0.1
    for s in (2, 3, 7):
        torch.testing.assert_close(f(x, s), torch.xlogy(x, s))
    assert f.cache_info().misses == 1


def test_dynamic_float_that_sets_the_shape_must_be_static() -> None:
    def fn(x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
        return F.interpolate(x, scale_factor=s)

    with pytest.raises(symscalar.StaticValueRequiredError, match=r"scale_factor.*shape or dtype of the result depends"):
        symscalar.jit(fn)(torch.ones(1, 1, 4), 2.0)


# ----------------------------------------------------------------------------------------
# Refusals


def test_random_op_is_refused() -> None:
    # (multinomial, randint, random_ draw from the program's RNG: tests/test_random_sampling.py)
    f = symscalar.jit(lambda x: torch.rrelu(x, training=True))
    with pytest.raises(symscalar.UnsupportedOperationError, match="draws random numbers"):
        f(torch.ones(2, 4))


def test_inplace_write_into_an_operand_is_refused() -> None:
    f = symscalar.jit(lambda x: F.elu(x * 1, inplace=True))
    with pytest.raises(symscalar.UnsupportedOperationError, match="writes into one of its operands"):
        f(torch.ones(3))


def test_running_statistics_written_in_place_are_refused() -> None:
    mean, var = torch.zeros(3), torch.ones(3)
    f = symscalar.jit(lambda x: F.instance_norm(x, mean, var))
    with pytest.raises(symscalar.UnsupportedOperationError, match="writes into one of its operands"):
        f(torch.randn(2, 3, 4))
    assert torch.equal(mean, torch.zeros(3))


def test_data_dependent_shape_is_refused() -> None:
    f = symscalar.jit(lambda x: torch.unique(x, dim=0))
    with pytest.raises(symscalar.UnsupportedOperationError, match="output's shape depends on"):
        f(torch.tensor([1, 0, 2]))
    g = symscalar.jit(lambda x: torch.combinations(x))  # no meta kernel: refused, never run eagerly
    with pytest.raises(symscalar.UnsupportedOperationError, match="not run eagerly"):
        g(torch.ones(3))


def test_python_branch_on_values_is_refused() -> None:
    """``F.gaussian_nll_loss`` checks ``torch.any(var < 0)`` in Python: a trace cannot."""
    f = symscalar.jit(lambda x, t, v: F.gaussian_nll_loss(x, t, v))
    with pytest.raises(symscalar.UnsupportedOperationError, match="reads tensor values while tracing"):
        f(torch.ones(3), torch.zeros(3), torch.ones(3))


def test_non_tensor_result_is_refused() -> None:
    f = symscalar.jit(lambda x: torch.is_nonzero(x))
    with pytest.raises(symscalar.UnsupportedOperationError, match="Python bool computed from tensor values"):
        f(torch.ones(()))


def test_view_result_is_not_updated_in_place() -> None:
    """``diagonal`` returns a view: it is a ``torch_view_call`` (may alias), so an in-place
    update of it is refused rather than missing the base tensor as a functional trace would."""

    def fn(x: torch.Tensor) -> torch.Tensor:
        y = x * 1
        d = y.diagonal()
        d.add_(1)
        return y

    with pytest.raises(symscalar.UnsupportedOperationError, match="in-place"):
        symscalar.jit(fn)(torch.ones(3, 3))
    g = symscalar.jit(lambda x: x.diagonal() * 2)
    x = torch.randn(3, 3)
    torch.testing.assert_close(g(x), x.diagonal() * 2)
    assert g.last_trace().eqns[0].prim.name == "torch_view_call"


def test_unprintable_argument_is_refused() -> None:
    distance = torch.nn.PairwiseDistance()
    f = symscalar.jit(lambda a, p, n: F.triplet_margin_with_distance_loss(a, p, n, distance_function=distance))
    with pytest.raises(symscalar.UnsupportedOperationError, match="neither a tensor, a number"):
        f(torch.ones(2, 3), torch.zeros(2, 3), torch.ones(2, 3))


def test_constant_result_is_a_fresh_tensor_per_call() -> None:
    """A function that builds a tensor from Python values alone returns it, freshly built on
    every call as in eager (writing into one result does not change the next)."""
    f = symscalar.jit(lambda x: (x + 1, torch.arange(4), torch.zeros(2, 3)))
    x = torch.ones(2)
    first = f(x)
    assert torch.equal(first[1], torch.arange(4)) and torch.equal(first[2], torch.zeros(2, 3))
    first[2].fill_(7)
    second = f(x)
    assert torch.equal(second[2], torch.zeros(2, 3)) and second[2] is not first[2]


def test_tensor_to_flags_and_memory_format() -> None:
    x = torch.randn(2, 3)
    f = symscalar.jit(
        lambda x: (x.to(torch.float64, True), x.to(x.dtype, copy=True), x.float(memory_format=torch.preserve_format))
    )
    a, b, c = f(x)
    assert a.dtype == torch.float64 and torch.equal(b, x) and b is not x and torch.equal(c, x)


def test_nvfuser_plan_breaks_the_fusion_at_the_opaque_call() -> None:
    """No nvFuser lowering: the opaque call is a torch step between fusions (built without a
    GPU, and evaluated with torch ops read for nvFuser's)."""
    f = symscalar.jit(lambda x: (torch.diff(x.exp(), dim=0) * 2).sin())
    x = torch.randn(4, 3)
    y = f(x)
    trace = f.last_trace()
    assert not nvfuser_backend.is_fusible(next(e for e in trace.eqns if e.prim.name == "torch_call"))
    nvfuser_backend.lower(trace, [x])
    torch.testing.assert_close(run_through_lowerings(trace, [x])[0], y)


def test_under_autocast_results_have_eager_dtypes() -> None:
    """symscalar's autocast casts the operands of autocast's ops (conv_transpose2d) before the
    opaque call, so its result has eager's dtype; an op whose dtype autocast would change
    otherwise is refused (``_check_autocast``)."""
    x, w = torch.randn(1, 2, 4, 4), torch.randn(2, 3, 3, 3)
    f = symscalar.jit(lambda x, w: F.conv_transpose2d(x, w))
    g = symscalar.jit(lambda x: torch.diff(x, dim=0))
    with torch.autocast("cpu", dtype=torch.bfloat16):
        got, expected = f(x, w), F.conv_transpose2d(x, w)
        assert got.dtype == expected.dtype == torch.bfloat16
        torch.testing.assert_close(got, expected)
        torch.testing.assert_close(g(x), torch.diff(x, dim=0))
