"""The per-call function of a jitted function, generated with the user's signature.

It builds the cache key inline (tensor metadata, static values by type and value, the exact
type of each dynamic value, the ambient torch state), looks it up, and calls the entry found;
everything else (validation with clear errors, tracing, compiling) happens on a miss.
``dispatch_source`` is a pure function of the signature and the parameter kinds, so its output
is checked against ``tests/snapshots/dispatch.txt`` (see ``tests/test_jit_dispatch.py``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Collection, Mapping
from typing import Any

import torch
from torch.utils.hooks import RemovableHandle

from symscalar import autocast
from symscalar._jit import tree
from symscalar._jit.cache import MISS
from symscalar._jit.params import Kind
from symscalar.generated import exec_generated
from symscalar.types import current_tracer

__all__ = ["dispatch_source", "dispatch_namespace", "generate_dispatch"]


def _torch_function_modes() -> tuple[Any, ...]:
    """Active torch function modes (``with torch.device(...)``, ``set_default_device``...):
    they change what factory calls create while tracing."""
    return tuple(
        (type(m), getattr(m, "device", None))
        for m in torch.overrides._get_current_function_mode_stack()  # type: ignore[no-untyped-call]
    )


# Ambient torch state that changes what a program computes, in every key: grad mode (True;
# False; 2 under inference_mode), the default dtype, active torch function modes (a default
# device), autocast (False, one C call, unless it is on). Each is one C call on the hot path.
_AMBIENT_NAMESPACE: dict[str, Any] = {
    "_ss_grad_enabled": torch.is_grad_enabled,
    "_ss_inference": torch.is_inference_mode_enabled,
    "_ss_default_dtype": torch.get_default_dtype,
    "_ss_n_modes": torch._C._len_torch_function_stack,
    "_ss_modes": _torch_function_modes,
    "_ss_autocast": autocast.autocast_state,
    "_ss_autocast_any": torch._C._is_any_autocast_enabled,
}
_AMBIENT_KEY = [
    "_ss_grad_enabled() or (_ss_inference() and 2)",
    "_ss_default_dtype()",
    "_ss_n_modes() and _ss_modes()",
    "(_ss_autocast_any() and _ss_autocast())",
]


def dispatch_namespace(state: Any) -> dict[str, Any]:
    """The globals of the generated code that do not depend on the signature. Every global
    starts with ``_ss_`` so that no parameter name of the user's function (even ``type`` or
    ``float``) can shadow it."""
    return {
        "_ss_cache": state.cache.table,
        "_ss_used": state.cache.table.move_to_end,
        "_ss_miss": state.miss,
        "_ss_MISS": MISS,
        "_ss_state": state,
        "_ss_next_call": state.calls.__next__,
        "_ss_auto_key": tree.auto_key,
        "_ss_static_key": tree.static_key,
        "_ss_Tensor": torch.Tensor,
        "_ss_type": type,
        "_ss_int": int,
        "_ss_tracer": current_tracer.get,
        "_ss_inline": state.inline,
        "_ss_EMPTY": ((), ()),
        **_AMBIENT_NAMESPACE,
        "_ss_hooks": RemovableHandle,
        "_ss_hooks_seen": -1,
    }


def dispatch_source(
    sig: inspect.Signature,
    kinds: Mapping[str, Kind],
    optional: Collection[str],
    contract: Any = None,
    defaults_of: Any = None,
    renames: Mapping[str, str] = {},
) -> tuple[str, dict[str, Any]]:
    """The source of ``_ss_dispatch`` (hook check, then ``_ss_inner``), ``_ss_inner`` (key,
    lookup, call) and ``_ss_key_and_args`` (the key and program inputs, for the miss path),
    and the globals it needs besides ``dispatch_namespace``'s (defaults, ``*args`` keys).

    The key of a tensor is its metadata and class, of a static value its type and value
    (``tree.tree_key``), of a dynamic value its exact Python type: an int passed for a
    ``DynamicFloat`` promotes like an int in torch (int8 tensor * 200 is int8), so it gets its
    own entry, traced with an int; a type the miss path rejects never gets an entry.
    The tensors with declared dynamic dims (``contract``, a ``dims.ShapeContract``) key by
    ``contract.key``: their rank and static dims, the call checked against the declaration.

    ``defaults_of``: the function whose ``__defaults__``/``__kwdefaults__`` hold the defaults;
    they are read on every call that omits the argument (so replacing them is seen, as in
    eager), instead of the values the signature had when the code was generated.

    ``renames``: old keyword -> parameter, the renaming a wrapper does before the call
    (``function.keyword_renames``): a call that omits the parameter and passes the old keyword
    binds its value to the parameter, as the wrapper would.
    """
    for param in sig.parameters:
        if param.startswith("_ss_"):
            raise ValueError(f"symscalar.jit: parameter names must not start with _ss_ ({param!r})")
    namespace: dict[str, Any] = {}
    params, defaults = _signature_source(sig, namespace, defaults_of, renames)
    prep, key, call, all_args = [], [], [], []
    declared = set(contract.names) if contract is not None else set()
    nested = contract.nested_names if contract is not None else []
    flat = nested and contract.flat_key is not None  # optional tensors only: optional_dims.py
    if flat:
        namespace["_ss_flat"] = contract.flat_key
        position = list(sig.parameters).index
        outs = "".join(f"_ss_k{position(n)}, _ss_a{position(n)}, " for n in nested)
        prep.append(f"_ss_top, {outs}= _ss_flat({', '.join([*contract.names, *nested])})")
        key.append("_ss_top")
    elif nested:  # paths inside arguments: one walk keys and checks them and the declared tensors
        namespace["_ss_nested"] = contract.nested_key
        tops, values = "".join(f"{n}, " for n in contract.names), "".join(f"{n}, " for n in nested)
        prep.append(f"_ss_top, _ss_nk = _ss_nested(({tops}), ({values}))")
        key.append("_ss_top")
    elif declared:
        namespace["_ss_contract"] = contract.key
        key.append(f"_ss_contract({', '.join(contract.names)})")
    for i, (param, p) in enumerate(sig.parameters.items()):
        all_args.append(param)
        kind = kinds[param]
        if param in nested:  # unannotated (checked when the contract was made)
            prep += [] if flat else [f"_ss_k{i}, _ss_a{i} = _ss_nk[{nested.index(param)}]"]
            key.append(f"_ss_k{i}")
            call.append(f"*_ss_a{i}")
        elif p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            make = tree.var_positional_key if p.kind is p.VAR_POSITIONAL else tree.var_keyword_key
            namespace[f"_ss_var{i}"] = make(kind)
            prep.append(f"_ss_k{i}, _ss_a{i} = _ss_var{i}({param}) if {param} else _ss_EMPTY")
            key.append(f"_ss_k{i}")
            call.append(f"*_ss_a{i}")
        elif kind is Kind.TENSOR:
            key += [] if param in declared else [f"{param}.shape"]
            key += [
                f"{param}.dtype",
                f"{param}.device",
                f"{param}.requires_grad",
                f"_ss_type({param})",
            ]
            call.append(param)
        elif kind is Kind.STATIC:
            key += [f"_ss_type({param})", f"{param} if _ss_type({param}) is _ss_int else _ss_static_key({param})"]
        elif kind is Kind.AUTO:
            prep += [
                f"if _ss_type({param}) is _ss_Tensor:",
                f"    _ss_k{i} = ({param}.shape, {param}.dtype, {param}.device, {param}.requires_grad)",
                f"    _ss_a{i} = ({param},)",
                "else:",
                f"    _ss_k{i}, _ss_a{i} = _ss_auto_key({param})",
            ]
            key.append(f"_ss_k{i}")
            call.append(f"*_ss_a{i}")
        elif param in optional:  # `DynamicFloat | None`: None is static, no program input
            prep += [
                f"if {param} is None:",
                f"    _ss_k{i}, _ss_a{i} = None, ()",
                "else:",
                f"    _ss_k{i}, _ss_a{i} = _ss_type({param}), ({param},)",
            ]
            key.append(f"_ss_k{i}")
            call.append(f"*_ss_a{i}")
        else:  # dynamic: the exact type is the key, the value is an input
            key.append(f"_ss_type({param})")
            call.append(param)
    key += _AMBIENT_KEY
    key_src = "(" + "".join(f"{k}, " for k in key) + ")"
    args_src = "(" + "".join(f"{a}, " for a in all_args) + ")"
    prep_src = "".join(f"\n        {line}" for line in prep)
    defaults_src = "".join(f"\n    {line}" for line in defaults)
    # the miss path is called outside the except block: its errors carry no KeyError context
    body = f"""
    _ss_next_call()
    try:{prep_src}
        _ss_key = {key_src}
        _ss_entry = _ss_cache[_ss_key]
    except (KeyError, AttributeError, TypeError):
        _ss_entry = None
    if _ss_entry is None:
        return _ss_miss({args_src})
    if _ss_entry is not _ss_state.last:  # else its key is the most recently used already
        _ss_used(_ss_key)  # least recently used first: evicted beyond max_entries
        _ss_state.last = _ss_entry
    _ss_out = _ss_entry({", ".join(call)})
    if _ss_out is _ss_MISS:
        return _ss_miss({args_src})
    return _ss_out
"""
    # Hooks: every register_*hook takes a new RemovableHandle id, so one comparison per call
    # tells whether the hooks of the traced modules must be looked at again.
    source = f"""
def _ss_dispatch({", ".join(params)}):{defaults_src}
    if _ss_tracer() is not None:
        return _ss_inline({args_src})
    if _ss_hooks.next_id != _ss_hooks_seen:
        return _ss_state.hooked_call({args_src})
{body}
def _ss_inner({", ".join(params)}):{defaults_src}
{body}
def _ss_key_and_args({", ".join(all_args)}):{prep_src.replace(chr(10) + "    ", chr(10))}
    return {key_src}, ({"".join(f"{c}, " for c in call)})
"""
    return source, namespace


def _signature_source(
    sig: inspect.Signature, namespace: dict[str, Any], defaults_of: Any, renames: Mapping[str, str] = {}
) -> tuple[list[str], list[str]]:
    """The parameter list of the generated functions (the user's, defaults as globals) and the
    lines that read the live defaults of ``defaults_of`` for omitted arguments (or the value
    of an old keyword renamed to the parameter, see ``dispatch_source``)."""
    params: list[str] = []
    live = _live_defaults(sig, defaults_of)
    lines: list[str] = []
    var_keyword = next((n for n, p in sig.parameters.items() if p.kind is p.VAR_KEYWORD), None)
    renamed = {
        new: old
        for old, new in renames.items()
        if var_keyword is not None
        and old not in sig.parameters
        and new in sig.parameters
        and sig.parameters[new].kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
        and sig.parameters[new].default is not inspect.Parameter.empty
    }
    if renamed:
        namespace["_ss_UNSET"] = _DEFAULT
    if live:
        namespace["_ss_fn"] = defaults_of
        namespace["_ss_DEFAULT"] = _DEFAULT
    seen_kw_only = False
    items = list(sig.parameters.items())
    for i, (name, p) in enumerate(items):
        if p.kind is p.KEYWORD_ONLY and not seen_kw_only:
            params.append("*")
            seen_kw_only = True
        text = ("*" if p.kind is p.VAR_POSITIONAL else "**" if p.kind is p.VAR_KEYWORD else "") + name
        if p.kind is p.VAR_POSITIONAL:
            seen_kw_only = True
        if name in renamed:
            old = renamed[name]
            namespace[f"_ss_d{i}"] = p.default
            text += "=_ss_UNSET"
            default = f"_ss_fn.{live[name]}" if name in live else f"_ss_d{i}"
            lines.append(f"if {name} is _ss_UNSET:")
            lines.append(f"    {name} = {var_keyword}.pop({old!r}) if {old!r} in {var_keyword} else {default}")
        elif name in live:
            text += "=_ss_DEFAULT"
            lines.append(f"if {name} is _ss_DEFAULT:")
            lines.append(f"    {name} = _ss_fn.{live[name]}")
        elif p.default is not p.empty:
            namespace[f"_ss_d{i}"] = p.default
            text += f"=_ss_d{i}"
        params.append(text)
        if p.kind is p.POSITIONAL_ONLY and (i + 1 == len(items) or items[i + 1][1].kind is not p.POSITIONAL_ONLY):
            params.append("/")
    return params, lines


class _Default:
    """The generated functions' default for a parameter whose default is read live."""

    def __repr__(self) -> str:
        return "<default>"


_DEFAULT = _Default()


def _live_defaults(sig: inspect.Signature, fn: Any) -> dict[str, str]:
    """For each parameter of ``sig`` whose default is held by ``fn.__defaults__`` (counted from
    the end, so a bound method's ``self`` does not matter) or ``fn.__kwdefaults__``, the
    expression reading it from ``fn``. Empty when ``fn`` is not a plain function or its
    defaults are not the signature's (a ``functools.partial``, a custom ``__signature__``)."""
    if fn is None:
        return {}
    defaults = getattr(fn, "__defaults__", None) or ()
    kwdefaults = getattr(fn, "__kwdefaults__", None) or {}
    positional = [p for p in sig.parameters.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    live: dict[str, str] = {}
    for i, p in enumerate(positional):
        back = i - len(positional)
        if p.default is not p.empty:
            if -back > len(defaults) or defaults[back] is not p.default:
                return {}
            live[p.name] = f"__defaults__[{back}]"
    for p in sig.parameters.values():
        if p.kind is p.KEYWORD_ONLY and p.default is not p.empty:
            if kwdefaults.get(p.name, _DEFAULT) is not p.default:
                return {}
            live[p.name] = f"__kwdefaults__[{p.name!r}]"
    return live


def generate_dispatch(label: str, state: Any) -> Callable[..., Any]:
    """Compile the per-call function of ``state`` (a ``function.FunctionState``); set its
    ``inner``, ``key_and_args`` and ``namespace`` (the hook epoch seen lives there)."""
    source, extra = dispatch_source(
        state.sig, state.kinds, state.optional, state.contract, state.defaults_of, state.renames
    )
    namespace = {**dispatch_namespace(state), **extra}
    exec_generated(source, f"dispatch of {label}", namespace)
    state.namespace = namespace
    state.key_and_args = namespace["_ss_key_and_args"]
    state.inner = namespace["_ss_inner"]
    dispatch: Callable[..., Any] = namespace["_ss_dispatch"]
    dispatch.__source__ = source  # type: ignore[attr-defined]
    return dispatch
