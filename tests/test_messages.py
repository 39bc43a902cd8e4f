"""The static/dynamic rule reads the same at run time and at type-check time: the tracer's
errors and the mypy plugin's are built by ``symscalar.messages``, word for word; only the
layout (one fix per line at run time, one line in mypy) and the value's description (its
origin is known only at run time) differ."""

from __future__ import annotations

import re

import pytest
import torch

import symscalar
from symscalar import DynamicBool, DynamicInt, messages, mypy_plugin


def clauses(message: str) -> list[str]:
    """The message's sentences and fixes, whatever the layout: split at line breaks, list
    bullets and ``;``, with the first letter lowercased and final stops dropped."""
    parts = re.split(r"\n(?:Fix it in one of two ways:\n)?(?:  - )?|; ", message)
    out = []
    for part in parts:
        part = part.rstrip(".;")
        out.append(part[:1].lower() + part[1:])
    return out


def origin(message: str, start: str) -> str:
    """The value's description in a runtime message: ``start`` up to its closing parenthesis
    (the function's name is its qualified name)."""
    match = re.search(re.escape(start) + r"[^)]*\)", message)
    assert match, message
    return match[0]


def raised(fn: object, *args: object) -> str:
    with pytest.raises((symscalar.StaticValueRequiredError, symscalar.DynamicValueError)) as info:
        fn(*args)  # type: ignore[operator]
    return str(info.value)


def test_static_required_reads_the_same_in_the_tracer_and_the_plugin() -> None:
    @symscalar.jit
    def f(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
        return torch.sum(x, n)  # type: ignore[call-overload]

    runtime = raised(f, torch.ones(2, 3), 1)
    plugin = mypy_plugin.static_message("torch.sum", ["dim"], ['"n" (DynamicInt)'])
    # the value: its name in the trace and its origin at run time, its source text for mypy
    runtime_value = origin(runtime, "s0 (DynamicInt, parameter 'n' of ")
    assert "\n  - " in runtime and "\n" not in plugin  # the layouts differ, not the words
    assert clauses(runtime.replace(runtime_value, "VALUE")) == clauses(plugin.replace('"n" (DynamicInt)', "VALUE"))
    assert clauses(runtime)[0].startswith('torch.sum: parameter "dim" must be static (a compile-time constant)')
    assert clauses(runtime)[1:] == [messages.DECLARE_STATIC, messages.SPECIALIZE]


def test_concretization_reads_the_same_in_the_tracer_and_the_plugin() -> None:
    @symscalar.jit
    def f(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
        return x * int(n)

    runtime = raised(f, torch.ones(2), 3)
    runtime_value = "dynamic value " + origin(runtime, "s0 (DynamicInt, parameter 'n' of ")
    plugin_value = 'dynamic value "n" (DynamicInt)'
    # the runtime adds what the call was for; the rest is the plugin's text
    runtime_what = "int(), to turn it into a Python int,"
    assert runtime.startswith(f"{runtime_what} needs the Python value of {runtime_value}")
    plugin = mypy_plugin.concretization_message("int()", plugin_value)
    assert clauses(runtime.replace(runtime_what, "int()").replace(runtime_value, plugin_value)) == clauses(plugin)
    assert clauses(plugin)[1:] == [messages.DECLARE_STATIC, messages.SPECIALIZE, messages.KEEP_DYNAMIC]


def test_every_fix_the_runtime_gives_is_worded_once() -> None:
    """The other runtime spellings of the rule (a condition on a DynamicBool, a primitive's
    static parameter) end with the same fixes."""

    @symscalar.jit
    def branch(x: torch.Tensor, b: DynamicBool) -> torch.Tensor:
        return x if b else -x

    assert clauses(raised(branch, torch.ones(2), True))[-3:] == [
        messages.DECLARE_STATIC,
        messages.SPECIALIZE,
        messages.KEEP_DYNAMIC,
    ]
    condition = messages.dynamic_condition("b", one_line=True)
    assert clauses(condition)[-3:] == [messages.DECLARE_STATIC, messages.SPECIALIZE, messages.KEEP_DYNAMIC]
    assert messages.static_required("op", ["a", "b", "a"], "v").startswith('op: parameters "a", "b" must be static')


def test_messages_is_torch_free() -> None:
    """The plugin imports it in a process that may not have torch."""
    source = messages.__loader__.get_source(messages.__name__)  # type: ignore[union-attr]
    assert source is not None
    imported = re.findall(r"^(?:from|import) (\S+)", source, re.MULTILINE)
    assert set(imported) <= {"__future__", "collections.abc"}, imported
