"""symscalar's log events (symscalar/logs.py): a DEBUG event with its time for each phase of a
miss on the logger of its concern, a progress line for a long first call, ``SYMSCALAR_LOGS``
and ``set_logs`` validated like ``TORCH_LOGS``."""

from __future__ import annotations

import logging
import os
import re
import subprocess
import sys
import time

import pytest
import torch

import symscalar
from symscalar import DynamicFloat, logs


def f(x: torch.Tensor, s: DynamicFloat) -> torch.Tensor:
    return torch.softmax(x * s, 0).sum()


def _softmax_sum() -> symscalar.JitFunction:
    return symscalar.jit(f)  # a fresh cache; named f in messages and traces


def test_each_phase_of_a_miss_is_a_debug_event_with_its_time(caplog: pytest.LogCaptureFixture) -> None:
    jf = _softmax_sum()
    x = torch.ones(3, requires_grad=True)
    with caplog.at_level(logging.DEBUG, logger="symscalar"):
        jf(x, 2.0).backward()
        during_miss = len(caplog.records)
        jf(x, 3.0).backward()  # a cache hit logs nothing
    assert len(caplog.records) == during_miss
    events = [(r.name, r.levelno, r.getMessage()) for r in caplog.records]
    by_logger: dict[str, list[str]] = {}
    for name, level, message in events:
        if level == logging.DEBUG:
            by_logger.setdefault(name, []).append(message)
    forward, backward = jf.last_trace(), jf.last_backward_trace()
    assert backward is not None
    ms = r"\d+\.\d\d ms"
    traced = by_logger["symscalar.trace"][0]
    assert re.fullmatch(rf"f: tracing the function: {ms}, {len(forward.eqns)} equations", traced)
    assert re.fullmatch(rf"f: checking the trace: {ms}", by_logger["symscalar.trace"][1])
    (built,) = by_logger["symscalar.grad"]
    assert re.fullmatch(rf"f: building the backward trace: {ms}, {len(backward.eqns)} equations, \d+ saved .*", built)
    compiled = by_logger["symscalar.backend"]
    assert re.fullmatch(rf"f: compiling the forward for the torch backend: {ms}, \d+ equations", compiled[0])
    assert re.fullmatch(rf"f_backward: compiling the backward for the torch backend: {ms}, \d+ equations", compiled[1])
    assert re.fullmatch(r"f trace #1: traced and compiled in \d+\.\d ms", by_logger["symscalar.jit"][0])
    # the retrace record (INFO) comes after the miss's events, as before
    assert events[-1][:2] == ("symscalar.jit", logging.INFO) and events[-1][2].startswith("f trace #1: first call")


def test_a_long_first_call_reports_progress_while_it_runs(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The progress line comes from a timer while one phase is still running (here: tracing,
    held until the line is there), then at each later phase and at the end."""
    monkeypatch.setattr(logs, "PROGRESS_AFTER_S", 0.05)

    def reported() -> bool:
        return any("still running" in r.getMessage() for r in caplog.records)

    @symscalar.jit
    def slow(x: torch.Tensor) -> torch.Tensor:
        deadline = time.monotonic() + 60
        while not reported() and time.monotonic() < deadline:
            time.sleep(0.01)  # tracing runs once: this is the long phase of the first call
        return x.exp()

    with caplog.at_level(logging.INFO, logger="symscalar.jit"):
        slow(torch.ones(2, requires_grad=True))
        slow(torch.ones(2, requires_grad=True))  # a hit: no progress
    progress = [r.getMessage() for r in caplog.records if getattr(r, "symscalar_artifact", "") == "progress"]
    assert re.fullmatch(r".*slow trace #1: still running after \d+\.\d s: tracing the function \(slow\)", progress[0])
    assert "slow trace #1: checking the trace (slow) (" in progress[1], progress
    assert any("slow trace #1: building the backward trace (slow) (" in p for p in progress), progress
    assert any("compiling the backward for the torch backend (slow_backward)" in p for p in progress), progress
    assert re.fullmatch(r".*slow trace #1: done in \d+\.\d s", progress[-1])
    assert len([p for p in progress if "done in" in p]) == 1


def test_a_quick_first_call_reports_no_progress(caplog: pytest.LogCaptureFixture) -> None:
    jf = _softmax_sum()
    with caplog.at_level(logging.INFO, logger="symscalar.jit"):
        jf(torch.ones(3), 1.0)
    assert not [r for r in caplog.records if getattr(r, "symscalar_artifact", "") == "progress"]


def test_set_logs_shows_what_it_names(capsys: pytest.CaptureFixture[str]) -> None:
    jf = _softmax_sum()
    try:
        symscalar.set_logs("+trace,retraces")
        jf(torch.ones(3), 1.0)
        lines = capsys.readouterr().err.splitlines()
        assert lines[0].startswith("[symscalar] f: tracing the function: ")
        assert lines[-1].startswith("[symscalar] f trace #1: first call")
        assert not [line for line in lines if "compiling" in line or "traced and compiled" in line]  # backend, +jit
        symscalar.set_logs("")
        jf(torch.ones(4), 1.0)
        assert capsys.readouterr().err == ""
    finally:
        symscalar.set_logs("")
    assert logs.jit_log.level == logging.NOTSET and not logs.root_log.handlers


@pytest.mark.parametrize("spec", ["bogus", "jit,bogus", "+retraces", "*jit"])
def test_set_logs_rejects_an_unknown_setting_listing_the_valid_ones(spec: str) -> None:
    with pytest.raises(symscalar.ConfigurationError) as info:
        symscalar.set_logs(spec)
    message = str(info.value)
    assert message.startswith("SYMSCALAR_LOGS: unknown setting ")
    for valid in ("jit (+jit, -jit)", "trace", "grad", "backend", "all", "retraces", "progress"):
        assert valid in message


@pytest.mark.slow
def test_symscalar_logs_bogus_fails_at_import() -> None:
    env = {**os.environ, "SYMSCALAR_LOGS": "bogus", "PYTHONPATH": os.getcwd()}
    command = [sys.executable, "-c", "import symscalar"]
    out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 1
    assert "symscalar.errors.ConfigurationError: SYMSCALAR_LOGS: unknown setting 'bogus'. Valid settings" in out.stderr
