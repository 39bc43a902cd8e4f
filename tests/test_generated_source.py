"""Generated code debugs like code: a traceback through a generated program or dispatcher shows
the generated line (``symscalar.generated.exec_generated`` registers the source with linecache)."""

from __future__ import annotations

import gc
import inspect
import itertools
import linecache
import sys
import threading
import traceback
import types

import pytest
import torch
from torch import Tensor

import symscalar
from symscalar import DynamicFloat, generated
from symscalar.errors import CheckFailedError
from symscalar.generated import called_from_symscalar, exec_generated


def test_exec_generated_names_each_version_and_registers_its_lines() -> None:
    namespace: dict[str, object] = {}
    first = exec_generated("def g(x):\n    return x + 1\n", "program g", namespace)
    first_g = namespace["g"]  # the lines stay registered while a function defined from them lives
    second = exec_generated("def g(x):\n    return x / 0\n", "program g", namespace)
    assert first.startswith("<symscalar program g#") and first.endswith(">")
    assert first != second
    assert linecache.getline(first, 2).strip() == "return x + 1"
    assert linecache.getline(second, 2).strip() == "return x / 0"
    linecache.checkcache()  # no file behind the name: the entry must survive the check
    assert linecache.getline(second, 2).strip() == "return x / 0"
    g = namespace["g"]
    assert inspect.getsource(g) == "def g(x):\n    return x / 0\n"  # type: ignore[arg-type]
    with pytest.raises(ZeroDivisionError) as info:
        g(1)  # type: ignore[operator]
    frames = traceback.extract_tb(info.value.__traceback__)
    assert (frames[-1].filename, frames[-1].line) == (second, "return x / 0")
    del first_g, g, frames, info
    namespace.clear()
    gc.collect()
    assert first not in linecache.cache and second not in linecache.cache  # bounded: gone with them


def test_traceback_through_a_jitted_program_shows_the_generated_lines() -> None:
    @symscalar.jit
    def f(x: Tensor, s: DynamicFloat) -> Tensor:
        symscalar.check(s > 0, "s must be positive")
        return x * s

    x = torch.ones(3)
    torch.testing.assert_close(f(x, 2.0), x * 2.0)
    with pytest.raises(CheckFailedError) as info:
        f(x, -1.0)
    frames = traceback.extract_tb(info.value.__traceback__)
    generated = [fr for fr in frames if fr.filename.startswith("<symscalar ")]
    by_kind = {fr.filename.split(" ")[1]: fr for fr in generated}
    # the dispatcher, and the program line that runs the failed check, each with its source line
    assert {"dispatch", "program"} <= set(by_kind), [fr.filename for fr in generated]
    for fr in generated:
        assert fr.line, fr.filename
        assert fr.line == linecache.getline(fr.filename, fr.lineno).strip()
    assert "check(s1, message='s must be positive', where=" in by_kind["program"].line
    assert by_kind["program"].name == "f"


def test_one_answer_to_whose_frame_this_is() -> None:
    """symscalar's modules are its own code; generated code counts only where asked (a
    warning's stack level skips it, isinstance's answer does not)."""
    namespace: dict[str, object] = {"sys": sys}
    exec_generated("def frame():\n    return sys._getframe(0)\n", "program frame", namespace)
    generated = namespace["frame"]()  # type: ignore[operator]
    assert not called_from_symscalar(generated)
    assert called_from_symscalar(generated, generated=True)
    assert not called_from_symscalar(sys._getframe(0), generated=True)  # this test is user code
    assert called_from_symscalar(generated_module_frame())


def generated_module_frame() -> types.FrameType:
    """A frame whose globals are a symscalar module's (``__name__`` ``symscalar.*``)."""
    frames: list[types.FrameType] = []
    namespace: dict[str, object] = {"__name__": "symscalar.example", "frames": frames, "sys": sys}
    exec("frames.append(sys._getframe(0))", namespace)  # noqa: S102 - a stand-in module's frame
    return frames[0]


def test_code_freed_by_the_collector_while_generating_does_not_deadlock(monkeypatch: pytest.MonkeyPatch) -> None:
    # a generated function in a reference cycle dies when an allocation inside exec_generated
    # triggers the collector: its finalizer runs right there, in the same thread
    class CollectingCounter:
        def __init__(self) -> None:
            self.numbers = itertools.count(10**6)

        def __next__(self) -> int:
            gc.collect()  # as an allocation may, at the worst moment
            return next(self.numbers)

    monkeypatch.setattr(generated, "_counter", CollectingCounter())
    monkeypatch.setattr(generated, "_free", {})

    def churn() -> None:
        for i in range(3):
            namespace: dict[str, object] = {}
            exec_generated(f"def g(x):\n    return x + {i}\n", "program g", namespace)
            namespace["self"] = namespace  # a cycle: only the collector frees it
            generated._free.clear()  # so the next call takes a new number (and collects)

    worker = threading.Thread(target=churn, daemon=True)
    worker.start()
    worker.join(timeout=60)
    assert not worker.is_alive(), "exec_generated deadlocked in a finalizer"
