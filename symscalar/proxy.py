"""The traced tensor: ``TensorProxy`` answers every attribute of ``torch.Tensor`` while tracing.

Static metadata (shape, dtype, device) it answers truthfully; torch methods and operators it
records through the tracer's frontend table; anything whose answer depends on values, storage
or autograd state a trace cannot know raises a named error.
"""

from __future__ import annotations

import inspect
import math
import sys
import types as pytypes
import typing
from collections.abc import Callable
from typing import Any, Protocol

import torch

from symscalar import size_ops, sizes
from symscalar.compiling import answer_isinstance_for
from symscalar.errors import DynamicValueError, TraceCheckError, UnsupportedOperationError
from symscalar.frontend import TORCH_FUNCTIONS
from symscalar.generated import called_from_symscalar
from symscalar.trace import TensorVar
from symscalar.types import Traced, Tracer

__all__ = [
    "PYTHON_OBJECT_NAMES",
    "TensorProxy",
    "TensorTracer",
]

# ----------------------------------------------------------------------------------------
# The tensor proxy
#
# A TensorProxy answers every public attribute of torch.Tensor (the table below is generated
# from dir(torch.Tensor), so a new torch attribute is never left to a default): static
# metadata truthfully, torch methods through the frontend table, and anything whose answer
# depends on values, storage or autograd state the trace cannot know with a named error.
#
# TensorProxy is not a torch.Tensor subclass, and does not fake __class__: faking it makes
# torch's C++ argument parser take the proxy for a real tensor when it matches a Scalar
# parameter: torch.where(c, proxy, 1.0) and torch.full((2,), proxy) crash the interpreter
# (measured on torch 2.10). User and library code still gets eager's answer from
# isinstance(proxy, torch.Tensor) and torch.is_tensor(proxy): True, through the isinstance
# wrapper installed while a trace runs (symscalar/compiling.py); symscalar's own modules get
# the builtin's answer (False), which is how they tell a proxy from a real tensor.


def _forward(name: str) -> Callable[..., Any]:
    func = getattr(torch.Tensor, name)

    def method(self: TensorProxy, *args: Any, **kwargs: Any) -> Any:
        return self._tracer.torch_function(func, (self, *args), kwargs)

    method.__name__ = name
    method._forwarded = True  # type: ignore[attr-defined]
    return method


def _inplace_error(name: str, proxy: TensorProxy | None, detail: str = "") -> UnsupportedOperationError:
    what = f" on {proxy._describe()}{detail}" if proxy is not None else ""
    return UnsupportedOperationError(
        f"{name}{what}: symscalar traces an in-place operation only on a value computed in "
        "the function that is not a view and of which no view was taken, or on a buffer read "
        "from outside before any op reads it (eager would also update every alias of the "
        "tensor: views taken earlier, the tensor a view was taken of, the caller's tensor). "
        "Write the out-of-place form and use its result: `y = y + 1` instead of `y += 1` or "
        "`y.add_(1)`, `y = torch.where(mask, value, y)` instead of `y[mask] = value`, "
        "`F.relu(x)` instead of `F.relu(x, inplace=True)`."
    )


def _values_error(proxy: TensorProxy, what: str) -> DynamicValueError:
    return DynamicValueError(
        f"{what} of traced tensor {proxy._describe()}: a tensor's values are not known while "
        "tracing, so the result would be baked into the compiled program. Keep the value a "
        "tensor (torch.where(...) instead of `if`, symscalar.check(...) for a runtime check), "
        "or pass the number as an argument of the jitted function."
    )


def _unknowable(proxy: TensorProxy, name: str, why: str) -> UnsupportedOperationError:
    return UnsupportedOperationError(
        f"torch.Tensor.{name} of traced tensor {proxy._describe()} is not available while tracing: {why}"
    )


# Attributes whose answer depends on memory layout, storage or autograd history that a trace
# does not have, with the reason given in the error.
_LAYOUT = (
    "the memory layout of traced values is chosen by the backend. "
    "Call .contiguous() if the code needs contiguous memory."
)
_STORAGE = "traced values have no storage while tracing."
_REFUSED = {
    "stride": _LAYOUT,
    "is_contiguous": _LAYOUT,
    "storage_offset": _LAYOUT,
    "dim_order": _LAYOUT,
    "is_non_overlapping_and_dense": _LAYOUT,
    "data_ptr": _STORAGE,
    "storage": _STORAGE,
    "untyped_storage": _STORAGE,
    "is_shared": _STORAGE,
    "is_pinned": _STORAGE,
    "is_set_to": _STORAGE,
    "is_inference": "whether a value is an inference tensor depends on the caller's tensors.",
    "backward": "call .backward() on the result of the jitted function, outside it.",
    "register_hook": (
        "hooks on traced values are not supported; register them on the jitted function's inputs or outputs."
    ),
    "register_post_accumulate_grad_hook": (
        "hooks on traced values are not supported; register them on the parameters outside the jitted function."
    ),
    "retain_grad": (
        "gradients of intermediate values of a jitted function are not kept; "
        "return the value and call retain_grad() on it."
    ),
    "grad_dtype": "gradient settings of traced values are not traced.",
    "__array__": "a traced tensor has no values to convert to numpy.",
    "__array_wrap__": "a traced tensor has no values to convert to numpy.",
    "__dlpack__": _STORAGE,
    "__dlpack_device__": _STORAGE,
    "__dlpack_c_exchange_api__": _STORAGE,
    "__deepcopy__": "traced values cannot be copied or pickled; they exist only while tracing.",
    "__reduce__": "traced values cannot be copied or pickled; they exist only while tracing.",
    "__reduce_ex__": "traced values cannot be copied or pickled; they exist only while tracing.",
    "__getstate__": "traced values cannot be copied or pickled; they exist only while tracing.",
    "__setstate__": "traced values cannot be copied or pickled; they exist only while tracing.",
}

_INPLACE_DUNDERS = (
    "__iadd__ __isub__ __imul__ __itruediv__ __ifloordiv__ __imod__ __ipow__ __imatmul__ "
    "__iand__ __ior__ __ixor__ __ilshift__ __irshift__ __idiv__ __setitem__ __delitem__"
).split()

_FORWARDED_DUNDERS = (
    "__add__ __radd__ __sub__ __rsub__ __mul__ __rmul__ __truediv__ __rtruediv__ __div__ "
    "__rdiv__ __floordiv__ __rfloordiv__ __mod__ __rmod__ __pow__ __rpow__ __matmul__ "
    "__rmatmul__ __neg__ __pos__ __abs__ __invert__ __and__ __rand__ __or__ __ror__ __xor__ "
    "__rxor__ __lshift__ __rlshift__ __rshift__ __rrshift__ __lt__ __le__ __gt__ __ge__ "
    "__eq__ __ne__ __getitem__ __reversed__"
).split()

# Names of torch.Tensor that are Python object machinery rather than tensor attributes: a
# proxy answers them as any Python object does.
PYTHON_OBJECT_NAMES = frozenset(
    "__class__ __delattr__ __dict__ __dir__ __doc__ __getattribute__ __init__ __init_subclass__ "
    "__module__ __new__ __setattr__ __sizeof__ __subclasshook__ __weakref__ __annotations__ "
    "__torch_function__ __torch_dispatch__ __hash__ __repr__".split()
)


def _inplace_method(name: str) -> Callable[..., Any]:
    """A proxy's in-place method: traced when it can be (``inplace.InPlaceWrites.update_method``),
    refused otherwise."""
    func = getattr(torch.Tensor, name)

    def method(self: TensorProxy, *args: Any, **kwargs: Any) -> Any:
        # an in-place method with a handler of its own (ops/random.py's fills) decides itself
        if func not in TORCH_FUNCTIONS and self._tracer._inplace_target(func, (self, *args)) is None:
            raise _inplace_error(f"torch.Tensor.{name}", self)
        return self._tracer.torch_function(func, (self, *args), kwargs)

    method.__name__ = name
    return method


def _raise_inplace(name: str) -> Callable[..., Any]:
    def method(self: TensorProxy, *args: Any, **kwargs: Any) -> Any:
        raise _inplace_error(f"torch.Tensor.{name}", self)

    method.__name__ = name
    return method


def _raise_refused(name: str) -> Callable[..., Any]:
    def method(self: TensorProxy, *args: Any, **kwargs: Any) -> Any:
        raise _unknowable(self, name, _REFUSED[name])

    method.__name__ = name
    return method


def _raise_values(name: str, what: str) -> Callable[..., Any]:
    def method(self: TensorProxy, *args: Any, **kwargs: Any) -> Any:
        raise _values_error(self, what)

    method.__name__ = name
    return method


_DEVICE_FLAGS = {f"is_{t}": t for t in "cpu cuda xpu mps ipu xla maia mtia vulkan hpu".split()}
_FALSE_FLAGS = "is_meta is_sparse is_sparse_csr is_nested is_quantized is_mkldnn".split()


# Ways to decide ``bool()`` of a traced tensor without its value: each returns the branch to
# trace (recording a runtime check) or None. Filled by ops/checks.py (``register_bool_check``).
_BOOL_CHECKS: list[Callable[[TensorProxy, Any], bool | None]] = []


def register_bool_check(assume: Callable[[TensorProxy, Any], bool | None]) -> None:
    """Let ``assume(proxy, frame)`` decide ``bool(proxy)`` asked for by ``frame``."""
    _BOOL_CHECKS.append(assume)


class _GradFlags(Protocol):
    """What a ``TensorProxy`` needs of its tracer's grad regions (``grad_regions.GradRegions``)."""

    leaves: set[TensorVar]

    def set_requires_grad(self, var: TensorVar, value: Any, *, computed: bool, attribute: bool) -> bool: ...


class TensorTracer(Tracer, Protocol):
    """What a ``TensorProxy`` needs of the tracer that created it (``tracer.TraceBuilder``)."""

    requires_grad: dict[TensorVar, bool]

    @property
    def grad(self) -> _GradFlags: ...

    captured: dict[int, tuple[TensorVar, torch.Tensor]]
    absent_attributes: dict[TensorVar, set[str]]

    def capture(self, tensor: torch.Tensor) -> TensorProxy: ...

    def update_in_place(self, name: str, target: Any, compute: Callable[[TensorProxy], Any]) -> Any: ...

    def _inplace_target(self, func: Any, args: tuple[Any, ...]) -> TensorProxy | None: ...


# Whether dynamic dims were ever declared (see ``sizes.enabled``): the proxies' fast path.
SIZES_ON = sizes.enabled()


class TensorProxy(Traced):
    """Stands for a tensor while tracing. Shapes, dtype and device are static; torch
    functions, methods and operators are recorded through the frontend table. The class is
    long because it answers, one property or method each, every attribute of ``torch.Tensor``
    it does not forward (metadata, autograd state, views, the refusals of value reads)."""

    __slots__ = ("_kind", "_class", "_attributes")
    _tracer: TensorTracer
    _var: TensorVar

    def __init__(
        self, tracer: TensorTracer, var: TensorVar, kind: str = "computed", tensor_class: type = torch.Tensor
    ) -> None:
        self._tracer = tracer
        self._var = var
        self._kind = kind  # "input" (an argument), "captured" (read from outside) or "computed"
        # the class isinstance answers for (compiling.py): an argument's own (a Parameter)
        self._class = tensor_class
        # the Python attributes set on the argument's tensor object (`p._no_weight_decay = True`,
        # nn.Buffer's `_is_buffer`): read on the proxy, they raise (see __getattr__)
        self._attributes: dict[str, str] = {}  # name -> the argument's description

    def __repr__(self) -> str:
        return f"TensorProxy({self._name}: {self._var.type_str()})"

    def _describe(self) -> str:
        return f"{self._name} ({self._var.type_str()}, {self._kind})"

    __hash__ = object.__hash__  # torch.Tensor hashes by identity too

    @classmethod
    def _outside_trace(cls) -> Exception:
        return TraceCheckError("a traced tensor was used outside its trace")

    # -- static metadata -------------------------------------------------------------------
    @property
    def shape(self) -> torch.Size:
        if SIZES_ON[0] and sizes.is_symbolic_shape(self._var.shape):
            # dynamic dims: user code gets size symbols, symscalar's own code the normal forms
            if called_from_symscalar(sys._getframe(1)):
                return typing.cast(torch.Size, self._var.shape)
            return typing.cast(torch.Size, size_ops.user_shape(self))
        return torch.Size(self._var.shape)

    @property
    def dtype(self) -> torch.dtype:
        return self._var.dtype

    @property
    def device(self) -> torch.device:
        return self._var.device

    @property
    def ndim(self) -> int:
        return self._var.ndim

    @property
    def layout(self) -> torch.layout:
        return torch.strided

    @property
    def itemsize(self) -> int:
        return self._var.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.numel() * self._var.dtype.itemsize

    @property
    def names(self) -> tuple[None, ...]:
        return (None,) * self._var.ndim

    @property
    def name(self) -> None:
        return None

    @property
    def volatile(self) -> bool:
        return False

    @property
    def _has_symbolic_sizes_strides(self) -> bool:
        return False

    __array_priority__ = 1000

    def __getattr__(self, name: str) -> Any:
        if name in _DEVICE_FLAGS:
            return self._var.device.type == _DEVICE_FLAGS[name]
        if name in _FALSE_FLAGS:
            return False  # traced values are dense, strided, unquantized tensors
        kind = _METHOD_KINDS.get(name)
        if kind == "method":
            return pytypes.MethodType(_FORWARDS[name], self)
        if kind == "inplace":
            return pytypes.MethodType(_inplace_method(name), self)
        if name in _REFUSED:
            raise _unknowable(self, name, _REFUSED[name])
        if name in self._attributes:  # getattr(x, name, default)/hasattr would silently say "absent"
            raise UnsupportedOperationError(
                f"{self._attributes[name]} ({self._describe()}) has {name!r}, a Python attribute set on "
                "its tensor object, which a traced tensor does not carry (getattr(x, name, default), hasattr and "
                "isinstance(x, nn.Buffer) would silently take the other answer than eager). Pass its value "
                "as an argument of its own (static where it picks a code path), or read it outside the "
                "jitted function."
            )
        if self._kind == "input" and not called_from_symscalar(sys._getframe(1)):
            self._tracer.absent_attributes.setdefault(self._var, set()).add(name)
        if name.startswith("_"):
            raise AttributeError(
                f"'TensorProxy' (a traced torch.Tensor) has no attribute {name!r}: private "
                "tensor internals do not exist while tracing"
            )
        if hasattr(torch.Tensor, name):
            raise UnsupportedOperationError(f"torch.Tensor.{name} is not available on a traced tensor")
        raise AttributeError(f"'TensorProxy' (a traced torch.Tensor) has no attribute {name!r}")

    def dim(self) -> int:
        return self._var.ndim

    def ndimension(self) -> int:
        return self._var.ndim

    def size(self, dim: int | None = None) -> Any:
        if SIZES_ON[0] and sizes.is_symbolic_shape(self._var.shape):
            shape = self._var.shape if called_from_symscalar(sys._getframe(1)) else size_ops.user_shape(self)
            return shape if dim is None else shape[dim]
        if dim is None:
            return self.shape
        return self._var.shape[dim]

    def numel(self) -> int:
        if SIZES_ON[0] and sizes.is_symbolic_shape(self._var.shape):
            numel = math.prod(self._var.shape)
            return numel if called_from_symscalar(sys._getframe(1)) else size_ops.size_proxy(self._tracer, numel)
        return math.prod(self._var.shape)

    nelement = numel

    def is_floating_point(self) -> bool:
        return self._var.dtype.is_floating_point

    def is_complex(self) -> bool:
        return self._var.dtype.is_complex

    def is_signed(self) -> bool:
        return self._var.dtype.is_signed

    def element_size(self) -> int:
        return self._var.dtype.itemsize

    def get_device(self) -> int:
        device = self._var.device
        return -1 if device.type == "cpu" else (device.index or 0)

    def is_same_size(self, other: Any) -> bool:
        return tuple(self.shape) == tuple(other.shape)

    def has_names(self) -> bool:
        return False

    def is_conj(self) -> bool:
        if self._var.dtype.is_complex:
            raise _unknowable(
                self, "is_conj", "whether a complex input is a conjugate view depends on the caller's tensor."
            )
        return False

    def is_neg(self) -> bool:
        if self._var.dtype.is_complex:
            raise _unknowable(
                self, "is_neg", "whether a complex input is a negative view depends on the caller's tensor."
            )
        return False

    def __len__(self) -> int:
        if not self._var.shape:
            raise TypeError("len() of a 0-d tensor")
        if isinstance(self._var.shape[0], sizes.Size):
            raise size_ops.len_error(self)
        return self._var.shape[0]

    def __iter__(self) -> Any:
        if not self._var.shape:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self._tracer.torch_function(torch.Tensor.unbind, (self, 0), {}))

    # -- autograd state --------------------------------------------------------------------
    def _requires_grad(self) -> bool:
        return self._tracer.requires_grad.get(self._var, False)

    def _set_requires_grad(self, value: bool) -> None:
        self._set_requires_grad_flag(value, attribute=True)

    def _set_requires_grad_flag(self, value: Any, attribute: bool) -> None:
        """``requires_grad_(value)`` / ``.requires_grad = value``: a computed value becomes a
        leaf as in eager (``GradRegions.set_requires_grad``); a tensor of the caller's is refused."""
        if not self._tracer.grad.set_requires_grad(
            self._var, value, computed=self._kind == "computed", attribute=attribute
        ):
            name = "torch.Tensor.requires_grad = ..." if attribute else "torch.Tensor.requires_grad_"
            raise _inplace_error(name, self)

    requires_grad = property(_requires_grad, _set_requires_grad)

    @property
    def is_leaf(self) -> bool:
        if not self.requires_grad:
            return True  # as in eager: a tensor that does not require grad is a leaf
        if self._kind == "computed":
            return self._var in self._tracer.grad.leaves  # made a leaf by requires_grad_()
        if self._kind == "captured":
            return self._captured().is_leaf
        raise _unknowable(
            self,
            "is_leaf",
            "whether an input that requires grad is a leaf depends on the caller's tensor, "
            "which the cache key does not hold.",
        )

    @property
    def grad_fn(self) -> Any:
        if not self.requires_grad or (self._kind == "captured" and self._captured().grad_fn is None):
            return None
        if self._kind == "computed" and self._var in self._tracer.grad.leaves:
            return None
        raise _unknowable(
            self,
            "grad_fn",
            "autograd nodes do not exist while tracing; the jitted function's outputs get one when it runs.",
        )

    @property
    def output_nr(self) -> int:
        if not self.requires_grad:
            return 0
        if self._kind == "captured":
            return self._captured().output_nr
        raise _unknowable(self, "output_nr", "autograd nodes do not exist while tracing.")

    @property
    def retains_grad(self) -> bool:
        if self._kind == "captured":
            return self._captured().retains_grad
        if self._kind == "computed" or not self.requires_grad:
            return False
        raise _unknowable(self, "retains_grad", "it depends on the caller's tensor.")

    @property
    def grad(self) -> Any:
        if self._kind == "computed":
            return None  # eager: only leaves accumulate .grad
        raise _unknowable(
            self,
            "grad",
            "it is the gradient accumulated outside the jitted function, whose value the compiled "
            "program cannot read. Pass it as an argument instead.",
        )

    @property
    def data(self) -> Any:
        raise _unknowable(
            self,
            "data",
            "`.data` is an alias of the storage that autograd does not track, and writes through it "
            "would bypass the trace. Use .detach() for the value without a gradient.",
        )

    @property
    def real(self) -> Any:
        if not self._var.dtype.is_complex:
            return self  # eager returns the tensor itself
        return self._tracer.torch_function(torch.real, (self,), {})

    @property
    def imag(self) -> Any:
        if not self._var.dtype.is_complex:
            raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
        return self._tracer.torch_function(torch.imag, (self,), {})

    def _captured(self) -> torch.Tensor:
        return next(t for var, t in self._tracer.captured.values() if var is self._var)

    # -- values: not known while tracing ---------------------------------------------------
    def __bool__(self) -> bool:
        for assume in _BOOL_CHECKS:  # `if cond: raise` / `assert cond`: a runtime check (ops/checks.py)
            branch = assume(self, sys._getframe(1))
            if branch is not None:
                return branch
        raise _values_error(self, "bool()")

    __nonzero__ = __bool__
    __int__ = _raise_values("__int__", "int()")
    __long__ = _raise_values("__long__", "int()")
    __float__ = _raise_values("__float__", "float()")
    __complex__ = _raise_values("__complex__", "complex()")
    __index__ = _raise_values("__index__", "__index__() (use as an index or a size)")
    __contains__ = _raise_values("__contains__", "`in`")
    __str__ = _raise_values("__str__", "str()")
    __format__ = _raise_values("__format__", "format() / an f-string")
    item = _raise_values("item", ".item()")
    tolist = _raise_values("tolist", ".tolist()")
    numpy = _raise_values("numpy", ".numpy()")

    # -- views -----------------------------------------------------------------------------
    @property
    def T(self) -> Any:  # noqa: N802 - torch's name
        return self._tracer.torch_function(torch.Tensor.permute, (self, *reversed(range(self.ndim))), {})

    @property
    def mT(self) -> Any:  # noqa: N802 - torch's name
        return self._tracer.torch_function(torch.Tensor.transpose, (self, -2, -1), {})

    @property
    def H(self) -> Any:  # noqa: N802 - torch's name
        if self.ndim > 2:
            raise RuntimeError("tensor.H is only supported on matrices (2-D tensors).")
        t = self.T
        return t if not self._var.dtype.is_complex else self._tracer.torch_function(torch.Tensor.conj, (t,), {})

    @property
    def mH(self) -> Any:  # noqa: N802 - torch's name
        t = self.mT
        return t if not self._var.dtype.is_complex else self._tracer.torch_function(torch.Tensor.conj, (t,), {})

    for _attr in _FORWARDED_DUNDERS:
        locals()[_attr] = _forward(_attr)
    for _attr in _INPLACE_DUNDERS:
        locals()[_attr] = _raise_inplace(_attr)
    # x[i] = v: traced where an in-place update can be (ops/indexing.py)
    locals()["__setitem__"] = _forward("__setitem__")
    # x += y is x.add_(y): traced where an in-place method can be
    for _attr, _method in (("__iadd__", "add_"), ("__isub__", "sub_"), ("__imul__", "mul_"), ("__itruediv__", "div_")):
        locals()[_attr] = _inplace_method(_method)
    for _attr in [n for n in _REFUSED if n.startswith("__")]:
        _refuse = _raise_refused(_attr)
        locals()[_attr] = _refuse if callable(getattr(torch.Tensor, _attr)) else property(_refuse)
    del _refuse
    del _attr


def _method_kinds() -> dict[str, str]:
    """Every public method of torch.Tensor that TensorProxy does not define itself: in-place
    (refused) or a torch method traced through the frontend table."""
    kinds = {}
    for name in dir(torch.Tensor):
        if name.startswith("_") or name in TensorProxy.__dict__ or name in _REFUSED:
            continue
        if not callable(inspect.getattr_static(torch.Tensor, name)):
            continue
        kinds[name] = "inplace" if name.endswith("_") else "method"
    return kinds


_METHOD_KINDS = _method_kinds()
_FORWARDS = {name: _forward(name) for name, kind in _METHOD_KINDS.items() if kind == "method"}
answer_isinstance_for(TensorProxy)  # isinstance(proxy, torch.Tensor) in user code: compiling.py
