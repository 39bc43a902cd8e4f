"""The library is its own first user: ``mypy --strict`` with the symscalar plugin passes on
``symscalar/`` (issue 6). One cold run (no cache), with the project's ``[tool.mypy]``."""

from __future__ import annotations

import os
import pathlib

import mypy.api
import pytest
import tomllib

ROOT = pathlib.Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.mypy  # left out by `make test-fast`
PYPROJECT = ROOT / "pyproject.toml"


def test_config_enables_the_plugin() -> None:
    config = tomllib.loads(PYPROJECT.read_text())["tool"]["mypy"]
    assert "symscalar.mypy_plugin" in config["plugins"]
    assert "truthy-bool" in config["enable_error_code"]


def test_library_passes_mypy_strict_with_plugin(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    stdout, stderr, status = mypy.api.run(
        [
            "--strict",
            "--config-file",
            str(PYPROJECT),
            f"--cache-dir={os.devnull}",
            "--no-pretty",
            "--show-error-codes",
            "symscalar",
        ]
    )
    assert status == 0, f"mypy --strict reports errors on symscalar/:\n{stdout}{stderr}"
    assert "no issues found" in stdout, stdout
