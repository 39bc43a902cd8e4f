"""``session_once`` (tests/mypy_support.py) runs an expensive checker once per pytest session:
once however many xdist workers ask for it, again in the next session. Checked on a probe
module run by pytest in a subprocess, whose ``compute`` logs each call to a file."""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow  # three pytest sessions in subprocesses

PROBE = """
import os
import pathlib

import pytest

from tests.mypy_support import session_once


@pytest.mark.parametrize("i", range(6))
def test_probe(i: int, tmp_path_factory: pytest.TempPathFactory) -> None:
    log = pathlib.Path(os.environ["PROBE_LOG"])
    worker = os.environ.get("PYTEST_XDIST_WORKER", "-")

    def compute() -> str:
        with log.open("a") as f:
            f.write(f"compute {worker}\\n")
        return "the result"

    assert session_once(tmp_path_factory, "probe", compute) == "the result"
    with log.open("a") as f:
        f.write(f"read {worker}\\n")
"""


def run_probe(tmp_path: pathlib.Path, *args: str, worker: str | None = None) -> list[str]:
    """Run the probe in a pytest session of its own; the log lines it added."""
    (tmp_path / "test_probe.py").write_text(PROBE)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    log = tmp_path / "log"
    before = log.read_text().splitlines() if log.exists() else []
    env = dict(os.environ, PYTHONPATH=str(ROOT), PROBE_LOG=str(log))
    env.pop("PYTEST_XDIST_WORKER", None)
    if worker is not None:
        env["PYTEST_XDIST_WORKER"] = worker  # what a pytest started inside a worker inherits
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(tmp_path),
            "-c",
            str(tmp_path / "pytest.ini"),
            *args,
            str(tmp_path / "test_probe.py"),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "6 passed" in result.stdout, result.stdout
    return log.read_text().splitlines()[len(before) :]


def test_once_per_session(tmp_path: pathlib.Path) -> None:
    """One computation for a session with two workers that both ask; then one in each later
    session, also in sessions started inside an xdist worker (they inherit
    PYTEST_XDIST_WORKER but have a basetemp of their own): nothing is kept across sessions."""
    lines = run_probe(tmp_path, "-n", "2")
    readers = {line.split()[1] for line in lines if line.startswith("read")}
    assert readers == {"gw0", "gw1"}, f"both workers should have asked for the result: {lines}"
    assert len([line for line in lines if line.startswith("compute")]) == 1, lines
    for _ in range(2):
        lines = run_probe(tmp_path, worker="gw0")
        assert [line for line in lines if line.startswith("compute")] == ["compute gw0"], lines
