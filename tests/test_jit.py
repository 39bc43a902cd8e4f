"""symscalar.jit: static/dynamic parameters, caching, guards, errors, outputs, autograd."""

import functools
import subprocess
import sys
import typing

import pytest
import torch

import symscalar
from symscalar import (
    DynamicBool,
    DynamicFloat,
    DynamicInt,
    NumberLike,
    StaticInt,
    StaticValueRequiredError,
    UnsupportedOperationError,
)


def test_new_dynamic_value_is_a_hit_with_the_right_result():
    @symscalar.jit
    def f(x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
        return torch.exp(x * s)

    x = torch.randn(4, 4)
    for s in (0.5, 1.5, -3.0, 0.0, 7, 2):
        torch.testing.assert_close(f(x, s), torch.exp(x * s))
    # an int is its own entry: it promotes like an int (see test_keys.py)
    assert f.cache_info() == symscalar.CacheInfo(hits=4, misses=2, entries=2)


def test_new_static_value_is_a_miss_with_the_right_result():
    @symscalar.jit
    def f(x: torch.Tensor, d: StaticInt, k: int) -> torch.Tensor:
        return torch.sum(x, d) * k

    x = torch.randn(3, 4)
    for d, k in ((0, 2), (1, 2), (0, 3), (1, 2), (-1, 2)):
        torch.testing.assert_close(f(x, d, k), torch.sum(x, d) * k)
    assert f.cache_info() == symscalar.CacheInfo(hits=1, misses=4, entries=4)


# retraces on purpose (filtered here, the xdist controller need not import symscalar to show it)
@pytest.mark.filterwarnings("ignore::symscalar.explain.UnannotatedNumberWarning")
def test_unannotated_numbers_are_static_and_types_matter():
    @symscalar.jit
    def f(x, k):
        return x * k

    x = torch.arange(4)
    assert f(x, 2).dtype == torch.int64
    assert f(x, 2.0).dtype == torch.float32  # 2 and 2.0 are different static values
    assert f(x, True).dtype == torch.int64
    assert f.cache_info().misses == 3


def test_tensor_metadata_is_in_the_key():
    @symscalar.jit
    def f(x: torch.Tensor) -> torch.Tensor:
        return x + 1

    f(torch.ones(2))
    f(torch.ones(3))
    f(torch.ones(3, dtype=torch.float64))
    f(torch.ones(3))
    assert f.cache_info() == symscalar.CacheInfo(hits=1, misses=3, entries=3)


def test_specialize_guards_the_entry():
    @symscalar.jit
    def f(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
        return torch.sum(x, symscalar.specialize(n % 2))

    x = torch.randn(3, 4)
    torch.testing.assert_close(f(x, 2), x.sum(0))
    torch.testing.assert_close(f(x, 4), x.sum(0))  # same guard value: hit
    torch.testing.assert_close(f(x, 3), x.sum(1))  # guard fails: a new entry
    torch.testing.assert_close(f(x, 5), x.sum(1))
    torch.testing.assert_close(f(x, 6), x.sum(0))
    assert f.cache_info() == symscalar.CacheInfo(hits=3, misses=2, entries=2)


@pytest.mark.parametrize(
    "body",
    [
        lambda x, n: symscalar.ops.sum(x, n),
        lambda x, n: symscalar.ops.sum(x, (0, n)),
        lambda x, n: torch.sum(x, n),
        lambda x, n: x.sum(n),
        lambda x, n: x.sum(dim=n),
        lambda x, n: x.sum(0, keepdim=n > 0),
        lambda x, n: x.reshape(n, 2),
    ],
)
def test_dynamic_value_in_static_parameter_raises(body):
    f = symscalar.jit(body, dynamic=["n"])
    with pytest.raises(StaticValueRequiredError) as info:
        f(torch.ones(2, 2), 1)
    message = str(info.value)
    assert "must be static" in message
    assert "parameter 'n' of <lambda>" in message
    assert "specialize" in message


def test_static_and_dynamic_overrides():
    def f(x, a, b):
        return x * a + b

    g = symscalar.jit(f, dynamic=["a", 2])
    x = torch.ones(2)
    for a, b in ((1.0, 2.0), (3.0, 4.0)):
        torch.testing.assert_close(g(x, a, b), x * a + b)
    assert g.cache_info().misses == 1
    h = symscalar.jit(lambda x, n: x * n, static=["n"])
    h(x, 1)
    h(x, 2)
    assert h.cache_info().misses == 2
    with pytest.raises(ValueError, match="not a parameter"):
        symscalar.jit(f, static=["nope"])
    with pytest.raises(ValueError, match="both static and dynamic"):
        symscalar.jit(f, static=["a"], dynamic=["a"])


@pytest.mark.parametrize(
    ("option", "annotation", "meaning"),
    [
        ("static", DynamicInt, "dynamic"),
        ("static", symscalar.IntLike, "dynamic"),
        ("static", "int | DynamicInt", "dynamic"),
        ("static", "DynamicFloat | None", "dynamic"),
        ("static", torch.Tensor, "a tensor"),
        ("dynamic", int, "static"),
        ("dynamic", symscalar.StaticInt, "static"),
        ("dynamic", "int | None", "static"),
        ("dynamic", torch.Tensor, "a tensor"),
    ],
)
def test_an_option_that_contradicts_the_annotation_is_refused(option, annotation, meaning):
    """One rule with the mypy plugin: the annotation decides; static=/dynamic= only decide for
    parameters whose annotation does not, and contradicting one is an error at jit() time."""

    def f(x: torch.Tensor, k):
        return x * 2

    f.__annotations__["k"] = annotation
    with pytest.raises(
        symscalar.errors.JitOptionError,
        match=rf"parameter 'k' is annotated .*makes it {meaning}; the annotation decides.*remove 'k' from {option}=",
    ):
        symscalar.jit(f, **{option: ["k"]})


def test_options_decide_where_the_annotation_does_not():
    """Unannotated, Any, object or an unbounded TypeVar: the option applies; an option that
    agrees with the annotation is allowed (and changes nothing)."""
    unbounded = typing.TypeVar("unbounded")
    x = torch.ones(3)
    for annotation in (None, typing.Any, object, unbounded):

        def f(x: torch.Tensor, k):
            return x.sum(k)

        if annotation is not None:
            f.__annotations__["k"] = annotation
        g = symscalar.jit(f, static=["k"])
        torch.testing.assert_close(g(x, 0), x.sum(0))
        h = symscalar.jit(f, dynamic=["k"])
        with pytest.raises(symscalar.StaticValueRequiredError):
            h(x, 0)

    def agree(x: torch.Tensor, n: DynamicInt, d: symscalar.StaticInt):
        return x * n + d

    g = symscalar.jit(agree, dynamic=["n"], static=["d"])
    g(x, 1, 2)
    g(x, 3, 2)
    assert g.cache_info().misses == 1


def test_a_typevar_annotation_is_read_by_its_bound():
    bounded = typing.TypeVar("bounded", bound=symscalar.IntLike)

    @symscalar.jit
    def f(x: torch.Tensor, k: bounded) -> torch.Tensor:  # type: ignore[valid-type]
        return x * k

    x = torch.ones(3)
    f(x, 1)
    f(x, 2)
    assert f.cache_info().misses == 1  # dynamic, as IntLike: one program for both values
    with pytest.raises(symscalar.errors.JitOptionError, match="annotated bounded"):
        symscalar.jit(f.__wrapped__, static=["k"])


def test_bad_arguments_get_clear_errors():
    @symscalar.jit
    def f(x: torch.Tensor, n: DynamicInt, s: DynamicFloat) -> torch.Tensor:
        return x * n * s

    with pytest.raises(TypeError, match=r"parameter 'x' of .*f is annotated torch\.Tensor but got float"):
        f(1.0, 1, 1.0)
    with pytest.raises(TypeError, match=r"parameter 'n' of .*f is DynamicInt but got float"):
        f(torch.ones(1), 1.5, 1.0)
    with pytest.raises(TypeError, match="a tensor is not a number"):
        f(torch.ones(1), 1, torch.tensor(1.0))
    with pytest.raises(TypeError, match="missing"):
        f(torch.ones(1), 1)
    static_shape = symscalar.jit(lambda x, shape: x.reshape(shape), static=["shape"])
    assert static_shape(torch.ones(4), [2, 2]).shape == (2, 2)  # a list is keyed by its items
    with pytest.raises(TypeError, match="hashable"):
        static_shape(torch.ones(4), {2})
    auto = symscalar.jit(lambda x, shape: x.reshape(shape))  # unannotated containers are fine
    assert auto(torch.ones(4), [2, 2]).shape == (2, 2)


def test_defaults_keywords_and_keyword_only():
    @symscalar.jit
    def f(x: torch.Tensor, s: DynamicFloat = 2.0, *, d: StaticInt = 0) -> torch.Tensor:
        return torch.sum(x * s, d)

    x = torch.randn(2, 3)
    torch.testing.assert_close(f(x), torch.sum(x * 2.0, 0))
    torch.testing.assert_close(f(x, s=3.0, d=1), torch.sum(x * 3.0, 1))
    torch.testing.assert_close(f(s=0.5, x=x), torch.sum(x * 0.5, 0))
    assert f.cache_info().misses == 2


def test_int_passed_to_dynamic_float_keeps_int_semantics():
    @symscalar.jit
    def f(x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
        return x * s

    x = torch.arange(3, dtype=torch.int8)
    assert f(x, 200).dtype == torch.int8  # as eager: int8 * 200 wraps to int8
    torch.testing.assert_close(f(x, 200), x * 200)
    torch.testing.assert_close(f(x, 2.5), x * 2.5)
    assert f.cache_info().misses == 2


def test_output_structures_and_scalar_outputs():
    @symscalar.jit
    def f(x: torch.Tensor, n: DynamicInt, s: NumberLike):
        return {"y": x * s, "pair": (n + 1, x.sum()), "static": 3, "none": None}

    x = torch.randn(3)
    for n, s in ((1, 2.0), (5, -1.0)):
        out = f(x, n, s)
        assert set(out) == {"y", "pair", "static", "none"}
        torch.testing.assert_close(out["y"], x * s)
        assert out["pair"][0] == n + 1 and type(out["pair"][0]) is int
        torch.testing.assert_close(out["pair"][1], x.sum())
        assert out["static"] == 3 and out["none"] is None
    assert f.cache_info().misses == 1


def test_captured_tensors_are_read_by_reference():
    w = torch.ones(3)

    @symscalar.jit
    def f(x: torch.Tensor) -> torch.Tensor:
        return x * w

    x = torch.randn(3)
    torch.testing.assert_close(f(x), x)
    w.mul_(2)
    torch.testing.assert_close(f(x), x * 2)
    assert f.cache_info().misses == 1


def test_runtime_check_runs_on_every_call():
    @symscalar.jit
    def f(x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
        symscalar.check(s > 0, "s must be positive")
        return x * s

    f(torch.ones(1), 1.0)
    with pytest.raises(symscalar.CheckFailedError, match="s must be positive"):
        f(torch.ones(1), -1.0)
    assert "prims.check" in str(f.last_trace())


def test_a_failed_runtime_check_names_the_users_line() -> None:
    """The location is recorded while tracing; the check fails on a later call (a cache hit),
    and an op's own check (dropout's p) names the user's call of the op, not torch's frames."""

    def fn(x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
        symscalar.check(s > 0, "s must be positive")
        return x * s

    f, check_line = symscalar.jit(fn), fn.__code__.co_firstlineno + 1
    f(torch.ones(1), 1.0)
    with pytest.raises(symscalar.CheckFailedError) as info:
        f(torch.ones(1), -1.0)
    assert f.cache_info().misses == 1
    assert str(info.value) == f"s must be positive (symscalar.check at {__file__}:{check_line})"

    def gn(x: torch.Tensor, p: DynamicFloat) -> torch.Tensor:
        return torch.nn.functional.dropout(x, p)

    g, dropout_line = symscalar.jit(gn), gn.__code__.co_firstlineno + 1
    g(torch.ones(4), 0.5)
    with pytest.raises(symscalar.CheckFailedError, match="between 0 and 1") as info:
        g(torch.ones(4), 1.5)
    assert str(info.value).endswith(f"(symscalar.check at {__file__}:{dropout_line})")


def test_dynamic_bool_and_where_free_selection():
    @symscalar.jit
    def f(x: torch.Tensor, flag: DynamicBool, s: DynamicFloat):
        return x * s, flag & (s > 1.0)

    y, b = f(torch.ones(2), True, 2.0)
    assert b is True
    torch.testing.assert_close(y, torch.full((2,), 2.0))
    y, b = f(torch.ones(2), True, 0.5)
    assert b is False
    torch.testing.assert_close(y, torch.full((2,), 0.5))
    assert f.cache_info().misses == 1


def test_unsupported_torch_function_is_refused_not_run():
    """A torch function with no hand-written op and no meta kernel (so no opaque torch call
    either) is refused, never run eagerly at trace time."""

    @symscalar.jit
    def f(x: torch.Tensor) -> torch.Tensor:
        return torch.cov(x)

    with pytest.raises(UnsupportedOperationError, match=r"torch.cov on traced values is not supported") as info:
        f(torch.ones(3, 4))
    assert "not run eagerly" in str(info.value)


def test_tracing_never_touches_tensor_data():
    @symscalar.jit
    def f(x: torch.Tensor) -> torch.Tensor:
        return x.exp()

    with pytest.raises(symscalar.DynamicValueError, match="values are not known"):
        symscalar.jit(lambda x: x.sum().item())(torch.ones(2))
    f(torch.ones(2))


def test_grad_mode_and_requires_grad():
    @symscalar.jit
    def f(x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
        return (x * s).exp().sum()

    x = torch.randn(4, requires_grad=True)
    with torch.no_grad():
        y = f(x, 2.0)
    assert not y.requires_grad
    y = f(x, 2.0)
    assert y.requires_grad
    (g,) = torch.autograd.grad(y, x)
    torch.testing.assert_close(g, 2.0 * torch.exp(x.detach() * 2.0))
    f(x.detach(), 2.0)
    # grad mode and requires_grad are both part of the key
    assert f.cache_info().misses == 3


def test_last_trace_follows_the_last_call():
    @symscalar.jit
    def f(x: torch.Tensor, d: StaticInt) -> torch.Tensor:
        return x.sum(d)

    x = torch.ones(2, 3)
    f(x, 0)
    first = f.last_trace()
    f(x, 1)
    assert f.last_trace() is not first
    f(x, 0)
    assert f.last_trace() is first
    f.cache_clear()
    assert f.last_trace() is None and f.cache_info().entries == 0


@pytest.mark.slow
def test_import_is_lazy_about_nvfuser_and_thunder():
    code = "import sys, symscalar; print(any(m.startswith(('nvfuser', 'thunder')) for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_static_float_key_distinguishes_signed_zero_and_finds_nan():
    @symscalar.jit
    def f(x: torch.Tensor, z: float) -> torch.Tensor:
        return 1 / (x * z)

    x = torch.ones(1)
    assert f(x, 0.0).item() == float("inf")
    assert f(x, -0.0).item() == float("-inf")
    f(x, float("nan"))
    f(x, float("nan"))
    g = symscalar.jit(lambda x, z: 1 / (x * z))  # unannotated: the auto key
    assert g(x, 0.0).item() == float("inf") and g(x, -0.0).item() == float("-inf")
    assert f.cache_info().misses == 3


def test_function_names_cannot_collide_with_generated_names():
    def _prim_mul(x: torch.Tensor) -> torch.Tensor:
        return x * 2

    def _ss_dispatch(x: torch.Tensor) -> torch.Tensor:
        return x * 3

    torch.testing.assert_close(symscalar.jit(_prim_mul)(torch.ones(2)), torch.full((2,), 2.0))
    torch.testing.assert_close(symscalar.jit(_ss_dispatch)(torch.ones(2)), torch.full((2,), 3.0))

    def torch_(x: torch.Tensor) -> torch.Tensor:
        return x.to(torch.float64)

    torch_.__name__ = "torch"
    assert symscalar.jit(torch_)(torch.ones(2)).dtype == torch.float64


@pytest.mark.parametrize(
    "body",
    [
        lambda x: x + torch.randperm(3),
        lambda x: torch.poisson(x),
        lambda x: torch.nn.functional.dropout1d(x.reshape(1, 3, 1), 0.5),
    ],
)
def test_random_ops_are_refused_not_baked(body):
    # rand/randn/randint/multinomial/bernoulli/dropout draw from the program's RNG seed
    # (tests/test_random.py, tests/test_random_sampling.py); the others are refused rather than
    # sampled once at trace time
    with pytest.raises(UnsupportedOperationError, match="bake"):
        symscalar.jit(body)(torch.ones(3))


def test_dropout_in_eval_mode_is_the_identity():
    f = symscalar.jit(lambda x: torch.nn.functional.dropout(x, 0.5, training=False) * 2)
    torch.testing.assert_close(f(torch.ones(3)), torch.full((3,), 2.0))


def test_static_factories_and_eager_constants_inside_a_trace():
    f = symscalar.jit(lambda x: x + torch.zeros(3) + torch.tensor([1.0, 2.0, 3.0]))
    torch.testing.assert_close(f(torch.ones(3)), torch.tensor([2.0, 3.0, 4.0]))


def test_returning_a_shape():
    f = symscalar.jit(lambda x: (x.shape, x.size(), x * 2))
    shape, size, y = f(torch.ones(2, 3))
    assert type(shape) is torch.Size and shape == (2, 3) and size == torch.Size([2, 3])
    torch.testing.assert_close(y, torch.full((2, 3), 2.0))
    g = symscalar.jit(lambda x: (x * 2, x.shape))
    out, shape = g(torch.ones(2, 3, requires_grad=True))
    assert type(shape) is torch.Size and out.requires_grad


def test_modules_methods_and_partials():
    m = torch.nn.Linear(3, 2)
    f = symscalar.jit(m)
    x = torch.randn(4, 3)
    out = f(x)
    torch.testing.assert_close(out, m(x))
    out.sum().backward()  # the module's parameters are captured by reference, grads flow
    assert m.weight.grad is not None
    torch.testing.assert_close(m.weight.grad, torch.ones(4, 2).T @ x)

    class Scaler:
        def __init__(self) -> None:
            self.w = torch.ones(3)

        def apply(self, x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
            return x * self.w * s

    g = symscalar.jit(Scaler().apply)
    torch.testing.assert_close(g(torch.ones(3), 2.0), torch.full((3,), 2.0))
    g(torch.ones(3), 3.0)
    assert g.cache_info().misses == 1
    p = symscalar.jit(functools.partial(lambda x, k: x * k, k=2))
    torch.testing.assert_close(p(torch.ones(2)), torch.full((2,), 2.0))


def test_a_call_whose_trace_raises_is_neither_a_hit_nor_a_miss():
    f = symscalar.jit(lambda x, n: x.sum(n), dynamic=["n"])
    for _ in range(2):
        with pytest.raises(symscalar.StaticValueRequiredError):
            f(torch.ones(2, 2), 1)
    assert f.cache_info() == symscalar.CacheInfo(hits=0, misses=0, entries=0, evictions=0)
    g = symscalar.jit(lambda x: x * 2)
    g(torch.ones(2))
    g(torch.ones(2))
    assert (g.cache_info().hits, g.cache_info().misses) == (1, 1)
