"""The plugin gives the same answers however mypy runs: cold, with a warm cache, with
parallel workers (``-n 2``) and under the daemon (``dmypy``), which reuse processes and
cached trees; whatever else is in the build or the cache (plain torch code checked alone, or
next to symscalar code, in either order). Also: its error codes switch off with
``--disable-error-code``, and ``python -m symscalar check`` keeps a project's configuration.

To stay fast most runs skip analyzing torch (``follow_imports = skip``): the corpus is
case files whose symscalar checks do not depend on torch's stubs. The build-order test needs
torch's stubs; it analyzes torch once and copies that cache.
"""

from __future__ import annotations

import os
import pathlib
import shutil
import subprocess
import sys

import mypy.api
import pytest

from symscalar.__main__ import mypy_config
from tests.mypy_support import session_once

ROOT = pathlib.Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.mypy  # left out by `make test-fast`
CORPUS = [
    str(ROOT / "typecheck_cases" / name)
    for name in ("static_ops.py", "concretization.py", "isinstance_legacy.py", "arithmetic.py")
]
SKIP_TORCH = "[mypy-torch.*]\nfollow_imports = skip\nfollow_imports_for_stubs = True\n"
FLAGS = ["--no-error-summary", "--hide-error-context", "--no-pretty"]


def run(config: pathlib.Path, *args: str) -> str:
    stdout, stderr, status = mypy.api.run(["--config-file", str(config), *FLAGS, *args, *CORPUS])
    assert status == 1 and not stderr, stdout + stderr
    return stdout


@pytest.fixture(scope="module")
def config(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    path = tmp_path_factory.mktemp("mypy") / "mypy.ini"
    path.write_text(mypy_config() + SKIP_TORCH)
    return path


@pytest.fixture(scope="module")
def cold(config: pathlib.Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    out = session_once(tmp_path_factory, "mypy-modes-cold", lambda: run(config, f"--cache-dir={os.devnull}"))
    for code in (
        "symscalar-static-required",
        "symscalar-dynamic-condition",
        "symscalar-number-isinstance",
        "truthy-bool",
    ):
        assert f"[{code}]" in out, f"the corpus should exercise [{code}]:\n{out}"
    return out


def test_warm_cache(config: pathlib.Path, cold: str, tmp_path: pathlib.Path) -> None:
    cache = tmp_path / "cache"
    assert run(config, f"--cache-dir={cache}") == cold
    assert any(cache.rglob("*.db")), "the first run should have filled the cache"
    assert run(config, f"--cache-dir={cache}") == cold


def test_parallel_workers(config: pathlib.Path, cold: str, tmp_path: pathlib.Path) -> None:
    """Same messages; workers finish files in their own order. Run in a process of its own
    (and session): mypy's worker shutdown must not signal the test runner."""
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(config),
            *FLAGS,
            f"--cache-dir={tmp_path / 'cache'}",
            "-n",
            "2",
            *CORPUS,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        start_new_session=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert result.returncode == 1 and not result.stderr, result.stdout + result.stderr
    assert sorted(result.stdout.splitlines()) == sorted(cold.splitlines())


def test_daemon(config: pathlib.Path, cold: str, tmp_path: pathlib.Path) -> None:
    dmypy = [sys.executable, "-m", "mypy.dmypy", "--status-file", str(tmp_path / "dmypy.json")]

    def call(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*dmypy, *args],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
            start_new_session=True,
        )

    started = call("start", "--", "--config-file", str(config), *FLAGS)
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        # One check per daemon: with this corpus a second `dmypy check` in the same daemon
        # spins in mypy 2.4.1, with and without the plugin (see docs/mypy.md).
        result = call("check", *CORPUS)
        assert result.stdout == cold, result.stdout + result.stderr
    finally:
        call("stop")


def test_error_codes_switch_off(config: pathlib.Path, cold: str) -> None:
    out = run(
        config,
        f"--cache-dir={os.devnull}",
        "--disable-error-code=symscalar-static-required",
        "--disable-error-code=symscalar-dynamic-condition",
    )
    assert "[symscalar-static-required]" not in out
    assert "[symscalar-dynamic-condition]" not in out
    assert "[symscalar-number-isinstance]" in out
    kept = [
        line
        for line in cold.splitlines()
        if "[symscalar-static-required]" not in line and "[symscalar-dynamic-condition]" not in line
    ]
    assert out.splitlines() == kept


# ---- the build around a file does not change its messages

SYMSCALAR_CODE = """\
import torch

import symscalar
from symscalar import DynamicInt


@symscalar.jit
def f(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return torch.sum(x, n)
"""
# Plain torch code (transformers rt_detr and smolvlm): static comprehensions in parameters
# the plugin widens, and a genuine error whose notes list the (widened) signature.
TORCH_CODE = """\
import torch


def split(idx: torch.Tensor, num_ground_truths: list[int], groups: int) -> tuple[torch.Tensor, ...]:
    return torch.split(idx, [n * groups for n in num_ground_truths])


def ones(pixel_values: torch.Tensor) -> torch.Tensor:
    return torch.ones(size=[pixel_values.shape[i] for i in (0, 2, 3)])


def wrong(x: torch.Tensor) -> torch.Tensor:
    return x.sum("0", 1.5)
"""


def mypy_lines(config: pathlib.Path, cache: str, *files: pathlib.Path) -> list[str]:
    stdout, stderr, status = mypy.api.run(
        ["--config-file", str(config), *FLAGS, f"--cache-dir={cache}", *map(str, files)]
    )
    assert status in (0, 1) and not stderr, stdout + stderr
    return stdout.splitlines()


def by_file(lines: list[str]) -> dict[str, list[str]]:
    """Each file's messages in order (mypy reports files in the order it checks them, which a
    cache changes)."""
    out: dict[str, list[str]] = {}
    for line in lines:
        out.setdefault(line.split(":", 1)[0], []).append(line)
    return out


def test_messages_do_not_depend_on_build_or_cache(tmp_path: pathlib.Path) -> None:
    """A cold run of both files; then, over one cache each, the symscalar file first and then
    both, and the torch file first and then both: the same messages every time, none on the
    comprehensions, and no internal class names in the notes."""
    config = tmp_path / "mypy.ini"
    config.write_text(mypy_config())
    a, b = tmp_path / "uses_symscalar.py", tmp_path / "plain_torch.py"
    a.write_text(SYMSCALAR_CODE)
    b.write_text(TORCH_CODE)
    warm = tmp_path / "torch-cache"
    (tmp_path / "only_torch.py").write_text("import torch\n")
    mypy_lines(config, str(warm), tmp_path / "only_torch.py")
    cold = mypy_lines(config, os.devnull, a, b)
    assert [line for line in cold if "plain_torch.py:" in line and ": error:" in line] == [
        line for line in cold if "plain_torch.py:13:" in line and ": error:" in line
    ], cold
    assert any("uses_symscalar.py:9:" in line and "[symscalar-static-required]" in line for line in cold)
    assert not [line for line in cold if "NumberProxy" in line], cold
    for first in (a, b):
        cache = tmp_path / f"cache-{first.stem}"
        shutil.copytree(warm, cache)
        alone = mypy_lines(config, str(cache), first)
        assert by_file(alone) == {str(first): by_file(cold)[str(first)]}, first
        assert by_file(mypy_lines(config, str(cache), a, b)) == by_file(cold), first


# ---- python -m symscalar check keeps the project's configuration


def test_check_reads_the_project_config(tmp_path: pathlib.Path) -> None:
    """``check`` finds the project's pyproject.toml from the current folder, keeps its
    ``disable_error_code`` and its per-module sections, and adds the plugin."""
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / ".git").mkdir()
    (project / "pyproject.toml").write_text(
        '[tool.mypy]\ndisable_error_code = ["symscalar-static-required"]\n'
        '[[tool.mypy.overrides]]\nmodule = ["torch", "torch.*"]\n'
        'follow_imports = "skip"\nfollow_imports_for_stubs = true\n'
    )
    (project / "src" / "user.py").write_text(
        "from typing import Any\n\nfrom symscalar import DynamicInt, ops\n\n\n"
        "def f(x: Any, n: DynamicInt) -> Any:\n"
        "    if n > 0:\n        return ops.sum(x, n)\n    return x\n"
    )
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "symscalar",
            "check",
            "--mypy-arg=--no-error-summary",
            "--mypy-arg=--cache-dir=" + os.devnull,
            "src",
        ],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    lines = result.stdout.splitlines()
    assert result.returncode == 1, result.stdout + result.stderr
    assert any("user.py:7:" in line and "[symscalar-dynamic-condition]" in line for line in lines), lines
    assert not any("[symscalar-static-required]" in line for line in lines), lines
    assert all("user.py:" in line for line in lines), lines
