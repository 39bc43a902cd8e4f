"""``@jit`` on a method: one jitted function per instance, dying with the instance.

A function jitted in a class body is not jitted once for all instances with ``self`` in the
key: that would keep every instance (and its parameters) alive in the cache forever, and it
would read ``self``'s tensors as captured constants, so a replaced attribute (``self.w =
new``) would go unseen. Instead ``JitMethod`` is a descriptor: ``obj.method`` gives the jitted
bound method of that instance (``jit(types.MethodType(fn, obj))``: ``self`` is a root of the
state guard, its tensors and submodules are read by path on every call), stored in the
instance's ``__dict__``. It refers to the instance only through that cycle, so the garbage
collector frees instance, cache and programs together; a copy of the instance (``copy``,
``deepcopy``, ``pickle``) gets a fresh one.
"""

from __future__ import annotations

import functools
import inspect
import types
import weakref
from collections.abc import Callable, Mapping
from typing import Any, TypeGuard

from symscalar._jit.cache import CacheInfo
from symscalar._jit.function import Limits, jit_function
from symscalar._jit.params import qualname
from symscalar.backend import Backend
from symscalar.explain import Explanation
from symscalar.types import current_tracer

__all__ = ["JitMethod", "defined_in_class"]


def defined_in_class(fn: Any) -> TypeGuard[types.FunctionType]:
    """Whether ``fn`` is a plain function defined in a class body (``C.f``, not ``g.<locals>.f``)
    taking at least one positional parameter (``self``)."""
    if not isinstance(fn, types.FunctionType):
        return False
    parts = fn.__qualname__.split(".")
    if len(parts) < 2 or parts[-2] == "<locals>":
        return False
    params = list(inspect.signature(fn).parameters.values())
    return bool(params) and params[0].kind in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD)


class _Bound:
    """What an instance's ``__dict__`` holds: its jitted bound method, and (weakly) the
    instance it belongs to. Copies of an instance must not share it: ``copy.copy`` keeps the
    object (the owner check fails), ``deepcopy`` and ``pickle`` drop it."""

    __slots__ = ("owner", "jitted")

    def __init__(self, owner: Any, jitted: Callable[..., Any]) -> None:
        self.owner = weakref.ref(owner)
        self.jitted = jitted

    def __deepcopy__(self, memo: dict[int, Any]) -> None:
        return None

    def __reduce__(self) -> tuple[Callable[[], None], tuple[()]]:
        return _nothing, ()


def _nothing() -> None:
    return None


class JitMethod:
    """The descriptor ``jit`` returns for a function defined in a class body."""

    def __init__(
        self,
        fn: types.FunctionType,
        static: Any,
        dynamic: Any,
        backend: str | Backend,
        limits: Limits,
        frame_locals: Mapping[str, Any] | None,
    ) -> None:
        functools.update_wrapper(self, fn)
        self.fn = fn
        names = list(inspect.signature(fn).parameters)
        # bound, ``self`` is gone: positions and names refer to the parameters after it
        self.static = _without_self(static, names)
        self.dynamic = _without_self(dynamic, names)
        self.backend = backend
        self.limits = limits
        self.frame_locals = dict(frame_locals or {})
        self.attribute = f"__symscalar_jit_{fn.__name__}"
        self.bound: weakref.WeakSet[Any] = weakref.WeakSet()  # every instance's jitted method

    def __set_name__(self, owner: type, name: str) -> None:
        self.attribute = f"__symscalar_jit_{name}"

    def __get__(self, obj: Any, objtype: type | None = None) -> Any:
        if obj is None:
            return self
        try:
            found = obj.__dict__.get(self.attribute)
        except AttributeError:
            raise TypeError(
                f"@symscalar.jit on {qualname(self.fn)} needs instances with a __dict__ to keep "
                f"one compiled cache per instance, but {type(obj).__name__} has none (__slots__). "
                "Add '__dict__' to its __slots__, or leave the method undecorated and jit the "
                f"bound method of each instance: symscalar.jit(obj.{self.fn.__name__})."
            ) from None
        if found is not None and found.owner() is obj:
            return found.jitted
        jitted = self._bind(obj)
        if current_tracer.get() is not None:  # while tracing, obj's attributes are watched
            return jitted
        if isinstance(obj, type):  # under @classmethod: the class's namespace is read-only
            setattr(obj, self.attribute, _Bound(obj, jitted))
        else:
            obj.__dict__[self.attribute] = _Bound(obj, jitted)
        return jitted

    def _bind(self, obj: Any) -> Any:
        jitted = jit_function(
            types.MethodType(self.fn, obj), self.static, self.dynamic, self.backend, self.limits, self.frame_locals
        )
        functools.update_wrapper(jitted, self.fn)
        self.bound.add(jitted)
        return jitted

    def __call__(self, obj: Any, *args: Any, **kwargs: Any) -> Any:
        """``C.method(obj, ...)``: the call of ``obj``'s jitted method."""
        return self.__get__(obj, type(obj))(*args, **kwargs)

    # -- inspection over the living instances (``obj.method`` inspects one instance) ----------

    def cache_info(self) -> CacheInfo:
        infos = [jitted.cache_info() for jitted in list(self.bound)]
        return CacheInfo(*(sum(field) for field in zip(*infos))) if infos else CacheInfo(0, 0, 0, 0)

    def cache_clear(self) -> None:
        for jitted in list(self.bound):
            jitted.cache_clear()

    def explain(self) -> Explanation:
        return Explanation(miss for jitted in list(self.bound) for miss in jitted.explain())

    def _per_instance(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError(
            f"{qualname(self.fn)} is jitted per instance: ask the instance, "
            f"e.g. obj.{self.fn.__name__}.last_trace() or obj.{self.fn.__name__}.would_trace(...)"
        )

    last_trace = last_backward_trace = last_fusion = would_trace = _per_instance


def _without_self(items: Any, names: list[str]) -> list[Any]:
    """``static=``/``dynamic=`` of the function, for the bound method: positions shift by one,
    ``self`` (name or position 0) is dropped."""
    items = [items] if isinstance(items, (str, int)) else list(items or ())
    out: list[Any] = []
    for item in items:
        if isinstance(item, int) and not isinstance(item, bool):
            index = item + len(names) if item < 0 else item
            if index == 0:
                continue
            out.append(names[index] if 0 < index < len(names) else item)
        elif item != names[0]:
            out.append(item)
    return out
