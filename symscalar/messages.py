"""The wording of the static/dynamic rule and its two fixes, in one place.

The same rule is enforced twice, by the tracer at run time (``StaticValueRequiredError``,
``DynamicValueError``) and by the mypy plugin at type-check time (``symscalar-static-required``,
``symscalar-concretization``, ``symscalar-dynamic-condition``); each message is built here so
both read the same, word for word (``tests/test_messages.py`` compares them). The runtime
puts each fix on its own line; mypy reports one line, so the plugin asks for ``one_line``:
the same sentences joined by ``;``. Torch-free and mypy-free: the plugin imports it.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = [
    "DECLARE_STATIC",
    "KEEP_DYNAMIC",
    "ONLY_AT_RUN_TIME",
    "SPECIALIZE",
    "concretization",
    "dynamic_condition",
    "static_required",
    "two_fixes",
]

# Why a dynamic value cannot be used where a Python value is needed.
ONLY_AT_RUN_TIME = "only known when the compiled program runs"
# The two fixes of the rule, in this order everywhere.
DECLARE_STATIC = (
    "declare the value static where it enters the jitted function (annotate it "
    "StaticInt/StaticFloat/StaticBool, or jit(fn, static=[...])): each new value compiles a new program"
)
SPECIALIZE = "or pass symscalar.specialize(value): the program is guarded on its current value"
# What to do instead where the value should stay dynamic.
KEEP_DYNAMIC = (
    "to keep it dynamic, compute with symscalar/torch ops instead: torch.where(...) instead of `if`, "
    "symscalar.check(cond, msg) for a runtime check"
)


def two_fixes(*, keep_dynamic: bool = False, one_line: bool = False) -> str:
    """The two fixes (and, with ``keep_dynamic``, the way to keep the value dynamic), to follow
    a sentence that ends without its full stop."""
    if one_line:
        return f"; {DECLARE_STATIC}; {SPECIALIZE}" + (f"; {KEEP_DYNAMIC}" if keep_dynamic else "")
    text = f".\nFix it in one of two ways:\n  - {DECLARE_STATIC};\n  - {SPECIALIZE}."
    if keep_dynamic:
        text += f"\n{KEEP_DYNAMIC[0].upper()}{KEEP_DYNAMIC[1:]}."
    return text


def static_required(op: str, params: Sequence[str], value: str, *, one_line: bool = False) -> str:
    """A dynamic ``value`` (described: its name, type and, at run time, origin) passed to the
    static parameters ``params`` of ``op``."""
    names = ", ".join(f'"{p}"' for p in dict.fromkeys(params))
    which = "parameter" if len(set(params)) == 1 else "parameters"
    return f"{op}: {which} {names} must be static (a compile-time constant) but got dynamic value {value}" + two_fixes(
        one_line=one_line
    )


def concretization(what: str, value: str, *, one_line: bool = False) -> str:
    """``what`` (``bool()``, ``int()``, ``match``...) needs the Python value of the dynamic
    ``value`` (described: ``dynamic value "n" (DynamicInt)``)."""
    return f"{what} needs the Python value of {value}, which is {ONLY_AT_RUN_TIME}" + two_fixes(
        keep_dynamic=True, one_line=one_line
    )


def dynamic_condition(expr: str, *, one_line: bool = False) -> str:
    """A ``DynamicBool`` expression ``expr`` (its source text) used as a condition."""
    return f'Dynamic value used as a condition: "{expr}" is a DynamicBool, whose value is {ONLY_AT_RUN_TIME}' + (
        two_fixes(keep_dynamic=True, one_line=one_line)
    )
