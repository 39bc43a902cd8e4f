"""``symscalar.jit``: trace once per static configuration, run many times.

A jitted function's parameters are tensors, static values or dynamic values, decided by their
annotations (``StaticInt``/``int`` static, ``DynamicInt``/``DynamicFloat``/``NumberLike``
dynamic, ``torch.Tensor`` tensors; unannotated numbers are static) or, for parameters whose
annotation does not decide, by ``jit(fn, static=[...], dynamic=[...])``. The cache key holds the static values (type and
value, through any pytree), the tensor metadata (shape, dtype, device, requires_grad) and the
Python type of each dynamic value (it decides torch's type promotion); dynamic values are
inputs of the compiled program, so a new dynamic value of the same type is a cache hit.
``specialize(d)`` adds a guard ``d == value`` to the entry being traced.

This module is the public API; the machinery lives in ``symscalar/_jit/`` by concern:
``params`` (parameter kinds), ``tree`` (the one pytree of inputs, outputs and keys),
``arguments``, ``outputs``, ``cache``, ``compile`` (a miss traced into an entry),
``dispatch`` (the generated per-call function) and ``function`` (a jitted function's state).
Backends are chosen through ``symscalar.backend``'s registry.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
import sys
import typing
from collections.abc import Callable
from typing import Any, Concatenate, Generic, ParamSpec, Protocol, TypeVar

import torch

from symscalar import inductor_backend, nvfuser_backend, torch_backend  # noqa: F401 - each registers its backend
from symscalar._jit.cache import CacheInfo
from symscalar._jit.function import INSPECTION, Limits, jit_function
from symscalar._jit.method import JitMethod, defined_in_class
from symscalar._jit.params import qualname
from symscalar.backend import Backend
from symscalar.explain import Explanation, WouldTrace
from symscalar.integrations import hf_branches, hf_caches
from symscalar.state.hooks import RAW_CALL
from symscalar.trace import Trace
from symscalar.tracer import check_tensor_class

__all__ = ["jit", "JitFunction", "JitModule", "CacheInfo", "grad", "value_and_grad"]

P = ParamSpec("P")
R = TypeVar("R", covariant=True)
Q = ParamSpec("Q")
S = TypeVar("S")
T = TypeVar("T")
M = TypeVar("M", bound=torch.nn.Module)
# mypy reads MYPY as True (as it reads TYPE_CHECKING), Pyright and Python as False: jit's
# overload for module methods is Pyright's only (below).
MYPY = False


class JitFunction(Protocol, Generic[P, R]):
    """What ``symscalar.jit`` returns: the function, plus inspection methods."""

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R: ...
    def last_trace(self) -> Trace | None: ...
    def last_backward_trace(self) -> Trace | None: ...
    def cache_info(self) -> CacheInfo: ...
    def cache_clear(self) -> None: ...
    def last_fusion(self) -> list[Any]: ...
    def explain(self) -> Explanation: ...
    def would_trace(self, *args: P.args, **kwargs: P.kwargs) -> WouldTrace: ...

    # A jitted method binds like a function (``JitMethod`` is a descriptor): ``m.forward(x)``
    # passes ``self``, and ``@jit`` on ``Module.forward`` overrides it as a method.
    @typing.overload
    def __get__(self, instance: None, owner: type[Any] | None = None, /) -> JitFunction[P, R]: ...
    @typing.overload
    def __get__(
        self: JitFunction[Concatenate[S, Q], T], instance: S, owner: type[Any] | None = None, /
    ) -> Callable[Q, T]: ...


class _JitDecorator(Protocol):
    """Pyright's type of ``jit(...)`` without a function: a module method stays a function
    (see ``MYPY``), any other callable becomes a ``JitFunction``."""

    @typing.overload
    def __call__(self, fn: Callable[Concatenate[M, P], R], /) -> Callable[Concatenate[M, P], R]: ...
    @typing.overload
    def __call__(self, fn: Callable[P, R], /) -> JitFunction[P, R]: ...


@typing.overload
def jit(
    fn: torch.nn.Module,
    *,
    static: Any = ...,
    dynamic: Any = ...,
    dynamic_dims: Any = ...,
    backend: str | Backend = ...,
    max_traces: int | None = ...,
    on_limit: str | None = ...,
    retrace: bool = ...,
    max_entries: int | None = ...,
) -> JitModule: ...


if not MYPY:  # Pyright's only (see MYPY)

    @typing.overload
    def jit(
        fn: Callable[Concatenate[M, P], R],
        *,
        static: Any = ...,
        dynamic: Any = ...,
        dynamic_dims: Any = ...,
        backend: str | Backend = ...,
        max_traces: int | None = ...,
        on_limit: str | None = ...,
        retrace: bool = ...,
        max_entries: int | None = ...,
    ) -> Callable[Concatenate[M, P], R]: ...
    @typing.overload
    def jit(
        fn: None = None,
        *,
        static: Any = ...,
        dynamic: Any = ...,
        dynamic_dims: Any = ...,
        backend: str | Backend = ...,
        max_traces: int | None = ...,
        on_limit: str | None = ...,
        retrace: bool = ...,
        max_entries: int | None = ...,
    ) -> _JitDecorator: ...


@typing.overload
def jit(
    fn: Callable[P, R],
    *,
    static: Any = ...,
    dynamic: Any = ...,
    dynamic_dims: Any = ...,
    backend: str | Backend = ...,
    max_traces: int | None = ...,
    on_limit: str | None = ...,
    retrace: bool = ...,
    max_entries: int | None = ...,
) -> JitFunction[P, R]: ...
@typing.overload
def jit(
    fn: None = None,
    *,
    static: Any = ...,
    dynamic: Any = ...,
    dynamic_dims: Any = ...,
    backend: str | Backend = ...,
    max_traces: int | None = ...,
    on_limit: str | None = ...,
    retrace: bool = ...,
    max_entries: int | None = ...,
) -> Callable[[Callable[P, R]], JitFunction[P, R]]: ...
def jit(
    fn: Callable[..., Any] | None = None,
    *,
    static: Any = (),
    dynamic: Any = (),
    dynamic_dims: Any = None,
    backend: str | Backend = "auto",
    max_traces: int | None = None,
    on_limit: str | None = None,
    retrace: bool = True,
    max_entries: int | None = None,
) -> Any:
    """Compile ``fn`` by tracing it; static values are baked in, dynamic values are inputs.

    Args:
        fn: the function, a method, a ``staticmethod``/``classmethod`` or a module.
            Parameters annotated ``torch.Tensor`` are tensors; ``DynamicInt``,
            ``DynamicFloat``, ``DynamicBool``, ``IntLike``, ``FloatLike`` or ``NumberLike``
            make a number dynamic (traced as the exact Python type passed: an int for a
            ``DynamicFloat`` is an int, in its own entry); ``StaticInt``, ``int``, ``float``
            make it static (its type and value are the key). Unannotated arguments, and each
            value of ``*args``/``**kwargs``, are pytrees: their tensors are traced and the rest
            is static.
        static: parameter names (or positions) to treat as static. The annotation decides
            (mypy and the plugin read it too): the option applies to parameters without one
            (or annotated ``Any``/``object``), and one that contradicts the annotation
            (``static=`` on a ``DynamicInt``/``IntLike``/tensor parameter) raises
            ``symscalar.errors.JitOptionError`` here.
        dynamic: parameter names (or positions) to treat as dynamic numbers, by the same rule
            (``dynamic=`` on an ``int``/``StaticInt``/tensor parameter raises).
        dynamic_dims: the dynamic dims of tensor parameters (every other dim is static), e.g.
            ``{"x": ("B", "T", None)}`` (over the leading dims) or ``{"x": {1: "T"}}``; names
            may be ``symscalar.Dim("T", min=1, max=4096)``; the same name twice means equal
            sizes. A tensor nested in an argument is declared by its pytree path:
            ``{"past_key_values.layers.*.keys": (None, None, "S")}``,
            ``{"batch['pixel_values']": ("B",)}``. One program then serves every size (see
            docs/dynamic_shapes.md).
        backend: ``"auto"``, ``"torch"``, ``"nvfuser"`` or ``"inductor"`` (see
            docs/inductor.md), or a backend object such as
            ``symscalar.inductor_backend.InductorBackend(compile_after=0)`` to configure one.
        max_traces: how many traces before ``on_limit`` applies (default
            ``symscalar.config.max_traces``, 8).
        on_limit: ``"warn"`` (once) or ``"error"`` (``RetraceError``) when the function traces
            more than ``max_traces`` times (default ``symscalar.config.on_limit``).
        retrace: ``False`` makes every miss (the first call too) raise ``RetraceError`` with
            the reason, like calling it inside ``symscalar.no_retrace()``.
        max_entries: how many compiled entries to keep; beyond that the least recently used
            is evicted and counted in ``cache_info().evictions`` (default
            ``symscalar.config.max_entries``, 256).

    Returns:
        A function with ``fn``'s signature and ``last_trace()``, ``last_backward_trace()``,
        ``cache_info()``, ``cache_clear()``, ``last_fusion()`` (the nvFuser
        FusionDefinitions of the last call; empty with the torch backend), ``explain()``
        (every trace and why it happened) and ``would_trace(*args, **kwargs)`` (whether a
        call would trace, and why, without tracing or running it); for a module, a
        ``JitModule`` with the same methods. Called while another jitted function traces,
        it is inlined into that trace.

    Example:
        >>> @symscalar.jit
        ... def f(x: torch.Tensor, scale: DynamicFloat, dim: StaticInt) -> torch.Tensor:
        ...     return torch.sum(x * scale, dim)
        >>> f(torch.ones(2, 3), 0.5, 1)   # traces
        >>> f(torch.ones(2, 3), 2.0, 1)   # cache hit: scale is a runtime input
    """
    limits = Limits(max_traces, on_limit, retrace, max_entries)
    options = {"static": static, "dynamic": dynamic, "backend": backend, **dataclasses.asdict(limits)}
    if dynamic_dims is not None:
        options["dynamic_dims"] = dynamic_dims
    if fn is None:
        return functools.partial(jit, **options)
    _register_library_state()
    hf_branches.prepare(fn)
    if isinstance(fn, torch.nn.Module):
        return JitModule(fn, **options)
    # the frame that applied jit: local names an annotation may refer to (see params.py)
    frame_locals = sys._getframe(1).f_locals
    if isinstance(fn, (staticmethod, classmethod)):
        # jit the function; the descriptor keeps binding it as the class body asked
        return type(fn)(_jit_plain(fn.__func__, static, dynamic, backend, limits, frame_locals, dynamic_dims))
    if defined_in_class(fn):  # a method: one cache per instance, held weakly (see method.py)
        if dynamic_dims is not None:
            raise TypeError("jit(method, dynamic_dims=...) is not supported yet; jit a function or a module")
        return JitMethod(fn, static, dynamic, backend, limits, frame_locals)
    if not callable(fn):
        raise TypeError(f"jit() takes a function or a torch.nn.Module, got {type(fn).__name__}")
    return _jit_plain(fn, static, dynamic, backend, limits, frame_locals, dynamic_dims)


def _register_library_state() -> None:
    """Register the state classes of the libraries already loaded (transformers' KV caches):
    a model's forward can only receive them once its library is imported; and the library
    functions whose eager branch is traced (``integrations/hf_branches.py``)."""
    cache_utils = sys.modules.get("transformers.cache_utils")
    if cache_utils is not None:
        hf_caches.register(cache_utils)
        hf_branches.register()


def _jit_plain(
    fn: Callable[..., Any],
    static: Any,
    dynamic: Any,
    backend: str | Backend,
    limits: Limits,
    frame_locals: Any,
    dynamic_dims: Any = None,
) -> Any:
    dispatch = jit_function(fn, static, dynamic, backend, limits, frame_locals, dynamic_dims)
    functools.update_wrapper(dispatch, fn)
    return dispatch


class JitModule(torch.nn.Module):
    """What ``jit(module)`` returns: a module that calls the jitted ``module(...)``.

    Being a module, it has the original's parameters (under ``_orig_mod``, as
    ``torch.compile``'s wrapper does), follows ``train()``/``eval()``/``to()``, and
    ``copy.deepcopy``/``pickle`` give a fresh jitted copy of a copy of the module (a jitted
    function's cache refers to the original module's tensors, so it is never shared).
    Attributes it does not have are read from the original module.
    """

    def __init__(
        self,
        module: torch.nn.Module,
        static: Any = (),
        dynamic: Any = (),
        backend: str | Backend = "auto",
        dynamic_dims: Any = None,
        **limits: Any,
    ) -> None:
        super().__init__()
        self._orig_mod = module
        self._jit_options = {"static": static, "dynamic": dynamic, "backend": backend, **limits}
        if dynamic_dims is not None:
            self._jit_options["dynamic_dims"] = dynamic_dims
        self.__dict__["_jitted"] = jit_function(
            module, static, dynamic, backend, Limits(**limits), dynamic_dims=dynamic_dims
        )

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        token = RAW_CALL.set((self._orig_mod, args, kwargs))  # for the module's own hooks
        try:
            return self._jitted(*args, **kwargs)
        finally:
            RAW_CALL.reset(token)

    @property
    def __signature__(self) -> inspect.Signature:
        return self._jitted.__signature__  # type: ignore[no-any-return]

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name in ("_orig_mod", "_modules", "_jitted"):
                raise
            return getattr(self._orig_mod, name)

    def __getstate__(self) -> dict[str, Any]:
        state = self.__dict__.copy()
        del state["_jitted"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        super().__setstate__(state)  # type: ignore[no-untyped-call]
        options = dict(self._jit_options)
        limits = Limits(**{f.name: options.pop(f.name) for f in dataclasses.fields(Limits) if f.name in options})
        self.__dict__["_jitted"] = jit_function(self._orig_mod, **options, limits=limits)

    def last_trace(self) -> Trace | None:
        return self._jitted.last_trace()  # type: ignore[no-any-return]

    def last_backward_trace(self) -> Trace | None:
        return self._jitted.last_backward_trace()  # type: ignore[no-any-return]

    def cache_info(self) -> CacheInfo:
        return self._jitted.cache_info()  # type: ignore[no-any-return]

    def cache_clear(self) -> None:
        self._jitted.cache_clear()

    def last_fusion(self) -> list[Any]:
        return self._jitted.last_fusion()  # type: ignore[no-any-return]

    def explain(self) -> Explanation:
        return self._jitted.explain()  # type: ignore[no-any-return]

    def would_trace(self, *args: Any, **kwargs: Any) -> WouldTrace:
        return self._jitted.would_trace(*args, **kwargs)  # type: ignore[no-any-return]


def value_and_grad(
    fn: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    **jit_options: Any,
) -> Callable[..., tuple[torch.Tensor, Any]]:
    """Like ``jax.value_and_grad``: a function returning ``(fn(*args), gradients)``.

    ``fn`` is jitted (``jit_options`` are passed to ``jit``) and must return a tensor with
    one element. The gradients are with respect to the tensor arguments at ``argnums`` (an
    int gives one gradient, a tuple a tuple); they are computed by the backward trace of the
    jitted function, so dynamic values change without a retrace. The result has the jitted
    function's inspection methods (``last_trace()``, ``last_backward_trace()``,
    ``last_fusion()``, ``cache_info()``, ``explain()``, ``would_trace(...)``...).

    Example:
        >>> loss_and_grad = symscalar.value_and_grad(loss, argnums=(0, 1))
        >>> loss_value, (gw, gb) = loss_and_grad(w, b, x, lr)
    """
    jitted = jit(fn, **jit_options)
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)

    def prepare(args: tuple[Any, ...]) -> tuple[list[Any], list[torch.Tensor]]:
        """The arguments the jitted function gets: those at ``argnums`` detached and requiring
        grad (the gradients' inputs)."""
        args_list = list(args)
        inputs = []
        for i in nums:
            if not -len(args_list) <= i < len(args_list):
                raise TypeError(f"argnums={argnums} but {qualname(fn)} got {len(args_list)} positional arguments")
            value = args_list[i]
            if not isinstance(value, torch.Tensor) or not value.dtype.is_floating_point:
                raise TypeError(
                    f"argument {i} of {qualname(fn)} must be a floating-point tensor to take "
                    f"its gradient, got {type(value).__name__}"
                    + (f" of dtype {value.dtype}" if isinstance(value, torch.Tensor) else "")
                )
            args_list[i] = _grad_leaf(value, f"argument {i} of {qualname(fn)}")
            inputs.append(args_list[i])
        return args_list, inputs

    def value_and_grad_fn(*args: Any, **kwargs: Any) -> tuple[torch.Tensor, Any]:
        args_list, inputs = prepare(args)
        with torch.enable_grad():
            out = jitted(*args_list, **kwargs)
        if not isinstance(out, torch.Tensor) or out.numel() != 1:
            shape = tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__
            raise TypeError(
                f"{qualname(fn)} must return a tensor with one element to take a gradient; "
                f"got {shape}. Reduce it (e.g. .sum()) first."
            )
        grads = torch.autograd.grad(out, inputs, allow_unused=True)
        grads = tuple(torch.zeros_like(t) if g is None else g for g, t in zip(grads, inputs))
        return out.detach(), grads[0] if isinstance(argnums, int) else grads

    def would_trace(*args: Any, **kwargs: Any) -> WouldTrace:
        with torch.enable_grad():
            return jitted.would_trace(*prepare(args)[0], **kwargs)

    functools.update_wrapper(value_and_grad_fn, fn)
    _share_inspection(value_and_grad_fn, jitted)
    value_and_grad_fn.would_trace = would_trace  # type: ignore[attr-defined]
    return value_and_grad_fn


def _grad_leaf(value: torch.Tensor, where: str) -> torch.Tensor:
    """``value`` detached and requiring grad, of its own class and with its Python attributes:
    ``fn`` sees a ``Parameter`` as a ``Parameter`` (``isinstance`` branches, ``value_and_grad``'s
    value as ``fn(*args)``'s) and ``jit`` refuses reads of the attributes as for ``fn(*args)``;
    ``detach()`` would give a bare plain tensor. A class that overrides torch calls is refused
    here as ``jit`` refuses it (``detach()`` would silently drop it too)."""
    check_tensor_class(value, where)
    leaf = value.detach().requires_grad_(True)
    if type(value) is not torch.Tensor:  # a Parameter (subclass)
        leaf = torch.Tensor._make_subclass(type(value), leaf, True)
    leaf.__dict__.update(value.__dict__)
    return leaf


def grad(
    fn: Callable[..., Any],
    argnums: int | tuple[int, ...] = 0,
    **jit_options: Any,
) -> Callable[..., Any]:
    """Like ``jax.grad``: a function returning the gradients of ``fn``'s one-element result
    with respect to the tensor arguments at ``argnums``. See ``value_and_grad``."""
    inner = value_and_grad(fn, argnums, **jit_options)

    def grad_fn(*args: Any, **kwargs: Any) -> Any:
        return inner(*args, **kwargs)[1]

    functools.update_wrapper(grad_fn, fn)
    _share_inspection(grad_fn, inner)
    return grad_fn


def _share_inspection(target: Any, source: Any) -> None:
    """Give ``target`` the inspection methods of ``source`` (a jitted function)."""
    for name in INSPECTION:
        setattr(target, name, getattr(source, name))
