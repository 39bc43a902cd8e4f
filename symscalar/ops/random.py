"""Random ops: ``rand``, ``randn``, ``randint``, ``multinomial``, ``bernoulli``, ``dropout``, drawn
from the program's RNG seed.

A random op run while tracing would sample once and bake that sample into the program. Here
each random op is an equation of the trace that reads the program's **RNG seed**, a dynamic
``int`` input which ``symscalar.jit`` draws from torch's default generator on every call
(so ``torch.manual_seed`` makes runs reproducible and every call gets fresh samples), and a
static **offset**, the op's position among the random ops of the trace (so two dropouts of one
call draw independent masks). Like Philox's (seed, offset) counter, the pair names a stream:
the torch lowering seeds a ``torch.Generator`` from it, the nvFuser lowering passes both to
``fd.ops.uniform``/``fd.ops.normal``. The backward never re-samples: a vjp reads the forward's
mask as a saved value. The streams are not eager torch's: the same seed gives other numbers
than eager ``torch.rand`` (and the torch and nvFuser backends differ from each other).

Integer samples (``Tensor.random_``, ``torch.randint``, ``randint_like``) and ``multinomial``
run torch's own samplers with the stream's generator: eager's distribution exactly, and
eager's checks of their arguments (run at trace time on a throwaway generator where the
arguments are static; a dynamic bound is checked by torch when the program runs). nvFuser has
no lowering for them: they are torch steps between fusions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from symscalar.ops.define import (
    FloatLike,
    Primitive,
    StaticBool,
    StaticInt,
    StaticShape,
    Tensor,
    TensorVar,
    TraceBuilder,
    UnsupportedOperationError,
    check,
    current_tracer,
    defop,
    implements,
    is_static,
    maybe_in_place,
    register_nvfuser,
)
from symscalar.ops.factories import factory_options, full
from symscalar.ops.shape import shape_arg
from symscalar.types import IntLike

__all__ = ["rand", "randn", "rand_like", "randn_like", "bernoulli", "dropout", "randint", "multinomial"]

# splitmix64's increment: spreads consecutive offsets over the seed space.
_GOLDEN = 0x9E3779B97F4A7C15
_SEED_BOUND = 2**63 - 1


def draw_seed() -> int:
    """A fresh RNG seed from torch's default (CPU) generator: seeded by ``torch.manual_seed``,
    advanced by every draw. jit calls it once per call of a program with random ops."""
    return int(torch.randint(_SEED_BOUND, (), dtype=torch.int64))


def _generator(seed: int, offset: int, device: torch.device) -> torch.Generator:
    """The torch generator of stream ``(seed, offset)`` on ``device``."""
    generator = torch.Generator(device=device)
    generator.manual_seed((seed + offset * _GOLDEN) % _SEED_BOUND)
    return generator


def _random_meta(
    seed: Any, *, shape: tuple[int, ...], dtype: torch.dtype, device: torch.device, offset: int
) -> TensorVar:
    if not dtype.is_floating_point:
        raise RuntimeError(f"random sampling needs a floating dtype, got {dtype}")
    return TensorVar(tuple(shape), dtype, torch.device(device))


def _seed_and_offset() -> tuple[Any, int]:
    """The current trace's RNG seed and a fresh offset; outside a trace, a fresh seed."""
    tracer = current_tracer.get()
    if isinstance(tracer, TraceBuilder):
        return tracer.rng_state()
    return draw_seed(), 0


# ---- uniform (U[0, 1)) and normal (N(0, 1)): samples of a static shape from the stream
# (seed, offset); the seed is a runtime input of the program
def _sampling_primitive(name: str, sample: Callable[..., Tensor]) -> Primitive[Tensor]:
    """The primitive drawing ``sample``'s distribution (``torch.rand``, ``torch.randn``), lowered
    to nvFuser's op of the same name (``fd.ops.uniform``, ``fd.ops.normal``)."""

    def impl(seed: int, *, shape: tuple[int, ...], dtype: torch.dtype, device: torch.device, offset: int) -> Tensor:
        return sample(shape, dtype=dtype, device=device, generator=_generator(seed, offset, device))

    def lower(fd: Any, seed: Any, *, shape: Any, dtype: Any, device: Any, offset: int) -> Any:
        return getattr(fd.ops, name)(
            fd.define_scalar(0.0),
            fd.define_scalar(1.0),
            shape,
            rng_seed=seed,
            rng_offset=fd.define_scalar(offset),
            dtype=dtype,
        )

    prim: Primitive[Tensor] = Primitive(name, impl, _random_meta, size_params=("shape",))
    register_nvfuser(prim, lower)
    return prim


uniform_p = _sampling_primitive("uniform", torch.rand)
normal_p = _sampling_primitive("normal", torch.randn)
# Neither has a vjp: their only operand is the integer seed, which has no gradient.


def _sample(prim: Primitive[Tensor], shape: tuple[int, ...], dtype: torch.dtype | None, device: Any) -> Tensor:
    seed, offset = _seed_and_offset()
    device = torch.device(device) if device is not None else torch.device("cpu")
    return prim.bind(seed, shape=tuple(shape), dtype=dtype or torch.get_default_dtype(), device=device, offset=offset)


@defop
def rand(shape: StaticShape, *, dtype: torch.dtype | None = None, device: torch.device | str | None = None) -> Tensor:
    """Samples of U[0, 1) from the program's RNG stream (fresh on every call)."""
    return _sample(uniform_p, tuple(shape), dtype, device)


@defop
def randn(shape: StaticShape, *, dtype: torch.dtype | None = None, device: torch.device | str | None = None) -> Tensor:
    """Samples of N(0, 1) from the program's RNG stream (fresh on every call)."""
    return _sample(normal_p, tuple(shape), dtype, device)


@defop
def rand_like(x: Tensor, *, dtype: torch.dtype | None = None) -> Tensor:
    """``rand`` with the shape, device and (by default) dtype of ``x``."""
    return rand(tuple(x.shape), dtype=dtype or x.dtype, device=x.device)


@defop
def randn_like(x: Tensor, *, dtype: torch.dtype | None = None) -> Tensor:
    """``randn`` with the shape, device and (by default) dtype of ``x``."""
    return randn(tuple(x.shape), dtype=dtype or x.dtype, device=x.device)


@defop
def bernoulli(x: Tensor, p: FloatLike | None = None) -> Tensor:
    """1 with probability ``x`` (elementwise), or ``p`` (which may be dynamic) if given."""
    u = rand_like(x, dtype=x.dtype if x.dtype.is_floating_point else torch.float32)
    return (u < (x if p is None else p)).to(x.dtype)


@defop
def dropout(x: Tensor, p: FloatLike = 0.5, training: StaticBool = True) -> Tensor:
    """Zero each element with probability ``p`` (which may be dynamic) and scale the rest by
    ``1 / (1 - p)``, as ``F.dropout``; the identity when not training. The mask is computed
    in ``x``'s dtype as eager's (``bernoulli(1 - p) / (1 - p)``), and for ``p == 1`` it is
    all zeros (no division by zero). A static ``p == 0`` is the identity too, as in eager
    (which returns ``x`` itself and draws nothing): no mask is sampled, multiplied or saved
    for the backward, and the call does not advance torch's generator."""
    if is_static(p):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    else:
        check((p >= 0.0) & (p <= 1.0), "dropout probability has to be between 0 and 1")
    if not training or (is_static(p) and p == 0.0):
        return x
    keep = 1 - p
    keep_t = full((), keep, dtype=x.dtype, device=x.device)
    scale = torch.where(keep_t > 0, 1 / keep_t, 0.0)
    mask = (rand_like(x) < keep).to(x.dtype) * scale
    return x * mask


# ---- integers (`random_`, `randint`) and `multinomial`: torch's samplers on the stream's generator
def _random_int_impl(
    seed: int, *bounds: Any, shape: tuple[int, ...], dtype: torch.dtype, device: torch.device, offset: int, form: str
) -> Tensor:
    out = torch.empty(shape, dtype=dtype, device=device)
    return out.random_(*_bounds(form, bounds), generator=_generator(seed, offset, device))


def _bounds(form: str, bounds: tuple[Any, ...]) -> tuple[Any, ...]:
    """``random_``'s arguments for ``form``: "" (none), "to", "from" (``to=None``), "from_to"."""
    return (bounds[0], None) if form == "from" else tuple(bounds)


def _random_int_meta(
    seed: Any, *bounds: Any, shape: tuple[int, ...], dtype: torch.dtype, device: torch.device, offset: int, form: str
) -> TensorVar:
    return TensorVar(tuple(shape), dtype, torch.device(device))


random_int_p: Primitive[Tensor] = Primitive("random_int", _random_int_impl, _random_int_meta, size_params=("shape",))


def _multinomial_impl(seed: int, probs: Tensor, *, num_samples: int, replacement: bool, offset: int) -> Tensor:
    generator = _generator(seed, offset, probs.device)
    return torch.multinomial(probs, num_samples, replacement, generator=generator)


def _multinomial_meta(seed: Any, probs: TensorVar, *, num_samples: int, replacement: bool, offset: int) -> TensorVar:
    return TensorVar((*probs.shape[:-1], num_samples), torch.int64, probs.device)


multinomial_p: Primitive[Tensor] = Primitive("multinomial", _multinomial_impl, _multinomial_meta)
# Neither has a vjp: integer samples have no gradient.


def _checked_eagerly(run: Callable[[torch.Generator], Any]) -> None:
    """Run eager's argument checks of a sampler on a tiny tensor and a throwaway generator
    (torch's meta kernels of the samplers check nothing; the global generator is not touched)."""
    with torch._C.DisableTorchFunction():  # type: ignore[no-untyped-call]  # eagerly: not traced (the tracer records random ops)
        run(torch.Generator().manual_seed(0))


@defop
def randint(
    low: IntLike,
    high: IntLike | None,
    shape: StaticShape,
    *,
    dtype: torch.dtype | None = None,
    device: torch.device | str | None = None,
) -> Tensor:
    """Integers uniform on ``[low, high)`` (either may be dynamic) of a static shape, from the
    program's RNG stream (fresh on every call); ``high=None``: ``Tensor.random_(low)``'s range up
    to the dtype's largest integer. ``dtype`` defaults to int64 (torch's)."""
    dtype = dtype or torch.int64
    return _random_ints(tuple(shape), dtype, device, "from" if high is None else "from_to", (low, high))


def _random_ints(shape: tuple[Any, ...], dtype: torch.dtype, device: Any, form: str, bounds: tuple[Any, ...]) -> Tensor:
    bounds = bounds[: {"": 0, "to": 1, "from": 1, "from_to": 2}[form]]
    if all(is_static(b) for b in bounds):
        _checked_eagerly(lambda g: torch.empty(1, dtype=dtype).random_(*_bounds(form, bounds), generator=g))
    seed, offset = _seed_and_offset()
    device = torch.device(device) if device is not None else torch.device("cpu")
    return random_int_p.bind(seed, *bounds, shape=shape, dtype=dtype, device=device, offset=offset, form=form)


@defop
def multinomial(input: Tensor, num_samples: StaticInt, replacement: StaticBool = False) -> Tensor:
    """``num_samples`` category indices per row of the probabilities ``input`` (1-d or 2-d),
    with or without replacement, from the program's RNG stream; int64 (torch's sampler: eager's
    distribution, and eager's checks of the probabilities when the program runs)."""
    if input.ndim not in (1, 2):
        raise RuntimeError(f"prob_dist must be 1 or 2 dim, got {input.ndim}")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: {input.dtype}")
    categories = input.shape[-1]
    if isinstance(categories, int):
        _checked_eagerly(lambda g: torch.multinomial(torch.ones(categories), num_samples, replacement, generator=g))
    seed, offset = _seed_and_offset()
    return multinomial_p.bind(seed, input, num_samples=num_samples, replacement=replacement, offset=offset)


# ---- torch spellings
def _no_generator(op: str, generator: Any) -> None:
    if generator is not None:
        raise UnsupportedOperationError(
            f"{op}(..., generator=...) inside a jitted function is not supported: a generator's "
            "state is not an input of the program. Omit it: samples then come from the "
            "program's RNG seed, drawn from torch's default generator on every call."
        )


def _torch_sample(name: str, op: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """The handler of ``torch.rand``/``torch.randn`` (sizes as varargs or one sequence)."""

    def handler(
        *size: StaticInt | StaticShape,
        generator: Any = None,
        dtype: torch.dtype | None = None,
        device: Any = None,
        layout: Any = None,
        requires_grad: bool = False,
        pin_memory: bool = False,
        **keywords: Any,
    ) -> Tensor:
        _no_generator(name, generator)
        factory_options(name, layout, requires_grad, pin_memory)
        return op(shape_arg(name, "size", size, keywords), dtype=dtype, device=device)

    return handler


implements(torch.rand)(_torch_sample("torch.rand", rand))
implements(torch.randn)(_torch_sample("torch.randn", randn))


def _torch_sample_like(name: str, op: Callable[..., Tensor]) -> Callable[..., Tensor]:
    """The handler of ``torch.rand_like``/``torch.randn_like``: ``input``'s shape, and its dtype
    and device unless given."""

    def handler(
        input: Tensor,
        *,
        dtype: torch.dtype | None = None,
        layout: Any = None,
        device: Any = None,
        requires_grad: bool = False,
        memory_format: Any = None,
        generator: Any = None,
    ) -> Tensor:
        _no_generator(name, generator)
        factory_options(name, layout, requires_grad, False, memory_format)
        device = torch.device(device) if device is not None else input.device
        return op(tuple(input.shape), dtype=dtype or input.dtype, device=device)

    return handler


implements(torch.rand_like)(_torch_sample_like("torch.rand_like", rand))
implements(torch.randn_like)(_torch_sample_like("torch.randn_like", randn))


@implements(torch.bernoulli, torch.Tensor.bernoulli)
def _torch_bernoulli(input: Tensor, p: FloatLike | None = None, *, generator: Any = None) -> Tensor:
    _no_generator("torch.bernoulli", generator)
    return bernoulli(input, p)


@implements(F.dropout)
def _torch_f_dropout(
    input: Tensor, p: FloatLike = 0.5, training: StaticBool = True, inplace: StaticBool = False
) -> Tensor:
    inplace = inplace and training and not (is_static(p) and p == 0.0)  # p == 0 leaves `input` as it is
    return maybe_in_place(
        "torch.nn.functional.dropout(..., inplace=True)", input, inplace, lambda x: dropout(x, p, training)
    )


# ---- in-place random fills: `x.bernoulli_(p)`, `x.uniform_(a, b)`, `x.normal_(m, s)`,
# `x.exponential_(l)`, drawn from the program's RNG seed like every random op here, and traced
# as in-place updates (``maybe_in_place``: every reference to `x` sees the new values, refused
# where an alias would not). timm's drop_path and torchvision's StochasticDepth fill
# `x.new_empty(shape).bernoulli_(keep)`.
def _fill(
    name: str, input: Tensor, generator: Any, sample: Callable[[Tensor], Tensor], floating_only: bool = True
) -> Tensor:
    _no_generator(name, generator)
    if floating_only and not input.dtype.is_floating_point:
        raise UnsupportedOperationError(
            f"{name} on a {input.dtype} tensor inside a jitted function is not supported: symscalar "
            "samples floating tensors only. Fill a floating tensor and convert it (.to(dtype))."
        )
    return maybe_in_place(name, input, True, lambda x: sample(x).to(x.dtype))


@implements(torch.Tensor.bernoulli_)
def _tensor_bernoulli_(input: Tensor, p: FloatLike | Tensor = 0.5, *, generator: Any = None) -> Tensor:
    def sample(x: Tensor) -> Tensor:  # 0/1 of any dtype, drawn in a floating one (as torch.bernoulli)
        return rand_like(x, dtype=x.dtype if x.dtype.is_floating_point else torch.float32) < p

    return _fill("torch.Tensor.bernoulli_", input, generator, sample, floating_only=False)


@implements(torch.Tensor.uniform_)
def _tensor_uniform_(
    input: Tensor, low: FloatLike = 0.0, high: FloatLike = 1.0, /, *, generator: Any = None, **keywords: FloatLike
) -> Tensor:
    # torch's keywords are `from` and `to`, which Python cannot name as parameters
    unknown = sorted(set(keywords) - {"from", "to"})
    if unknown:
        raise TypeError(f"uniform_() got an unexpected keyword argument {unknown[0]!r}; its bounds are from= and to=")
    low, high = keywords.get("from", low), keywords.get("to", high)
    return _fill("torch.Tensor.uniform_", input, generator, lambda x: rand_like(x) * (high - low) + low)


@implements(torch.Tensor.normal_)
def _tensor_normal_(input: Tensor, mean: FloatLike = 0.0, std: FloatLike = 1.0, *, generator: Any = None) -> Tensor:
    return _fill("torch.Tensor.normal_", input, generator, lambda x: randn_like(x) * std + mean)


@implements(torch.Tensor.exponential_)
def _tensor_exponential_(input: Tensor, lambd: FloatLike = 1.0, *, generator: Any = None) -> Tensor:
    # inverse CDF: -log(1 - U) / lambd, U in [0, 1)
    return _fill("torch.Tensor.exponential_", input, generator, lambda x: -torch.log1p(-rand_like(x)) / lambd)


# `random_(to)` and `random_(from, None)` differ: an omitted `to` is this, not None
_NO_STOP: Any = object()


@implements(torch.Tensor.random_)
def _tensor_random_(
    input: Tensor,
    start: IntLike | None = None,
    stop: IntLike | None = _NO_STOP,
    /,
    *,
    generator: Any = None,
    **keywords: IntLike | None,
) -> Tensor:
    # torch's forms: random_(), random_(to), random_(from, to), random_(from, None); keywords from=, to=
    unknown = sorted(set(keywords) - {"from", "to"})
    if unknown:
        raise TypeError(f"random_() got an unexpected keyword argument {unknown[0]!r}; its bounds are from= and to=")
    form: str
    values: tuple[Any, ...]
    if stop is _NO_STOP and start is not None and not keywords:
        form, values = "to", (start,)
    else:
        low = keywords.get("from", start)
        high = keywords.get("to", None if stop is _NO_STOP else stop)
        if low is None and high is None:
            form, values = "", ()
        elif high is None:
            form, values = "from", (low,)
        else:
            form, values = "from_to", (0 if low is None else low, high)

    def sample(x: Tensor) -> Tensor:
        return _random_ints(tuple(x.shape), x.dtype, x.device, form, values)

    return _fill("torch.Tensor.random_", input, generator, sample, floating_only=False)


def _randint_arguments(name: str, args: tuple[Any, ...], keywords: dict[str, Any]) -> tuple[Any, Any, Any]:
    """``(low, high, rest)`` of torch's ``randint(high, ...)`` / ``randint(low, high, ...)``."""
    low, high = keywords.pop("low", None), keywords.pop("high", None)
    rest = list(args)
    if high is None:
        if not rest:
            raise TypeError(f"{name}() missing required argument 'high'")
        if len(rest) >= 2 and not isinstance(rest[1], (tuple, list, torch.Size)) and low is None:
            low = rest.pop(0)
        high = rest.pop(0)
    return 0 if low is None else low, high, rest


@implements(torch.randint)
def _torch_randint(
    *args: Any,
    generator: Any = None,
    dtype: torch.dtype | None = None,
    device: Any = None,
    layout: Any = None,
    requires_grad: bool = False,
    pin_memory: bool = False,
    **keywords: Any,
) -> Tensor:
    _no_generator("torch.randint", generator)
    factory_options("torch.randint", layout, requires_grad, pin_memory)
    low, high, rest = _randint_arguments("randint", args, keywords)
    size = keywords.pop("size", None)
    if keywords or len(rest) + (size is not None) != 1:
        raise TypeError("randint() takes randint(high, size) or randint(low, high, size) and factory keywords")
    shape = shape_arg("torch.randint", "size", tuple(rest) if size is None else (size,), {})
    return randint(low, high, shape, dtype=dtype, device=device)


@implements(torch.randint_like)
def _torch_randint_like(
    input: Tensor,
    *args: Any,
    generator: Any = None,
    dtype: torch.dtype | None = None,
    layout: Any = None,
    device: Any = None,
    requires_grad: bool = False,
    memory_format: Any = None,
    **keywords: Any,
) -> Tensor:
    _no_generator("torch.randint_like", generator)
    factory_options("torch.randint_like", layout, requires_grad, False, memory_format)
    low, high, rest = _randint_arguments("randint_like", args, keywords)
    if rest or keywords:
        raise TypeError("randint_like() takes randint_like(input, high) or randint_like(input, low, high)")
    device = torch.device(device) if device is not None else input.device
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype, device=device)


@implements(torch.multinomial, torch.Tensor.multinomial)
def _torch_multinomial(
    input: Tensor, num_samples: StaticInt, replacement: StaticBool = False, *, generator: Any = None
) -> Tensor:
    _no_generator("torch.multinomial", generator)
    return multinomial(input, num_samples, replacement)
