"""The plugin needs mypy and symscalar only: in a virtual environment without torch it loads
and reports (issue 14). The environment is built offline from what is installed here: the files
of mypy and of its dependencies are copied from this environment's site-packages, symscalar is
added as an editable install does it (a .pth file naming this checkout), torch is absent.
"""

from __future__ import annotations

import importlib.metadata
import pathlib
import re
import shutil
import subprocess
import sys
import venv

import pytest

from symscalar.__main__ import mypy_config

ROOT = pathlib.Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.mypy  # left out by `make test-fast`

CODE = """
from typing import Any

from symscalar import DynamicInt, ops


def f(x: Any, n: DynamicInt) -> Any:
    if n > 0:
        return ops.sum(x, n)
    return x
"""


def requirement_names(dist: str) -> set[str]:
    """``dist`` and what it requires to run here (extras left out), recursively."""
    names, todo = set(), [dist]
    while todo:
        name = todo.pop()
        if name in names:
            continue
        names.add(name)
        for req in importlib.metadata.requires(name) or []:
            if "extra ==" in req:
                continue
            marker = req.split(";", 1)[1] if ";" in req else ""
            if 'python_version < "3.11"' in marker and sys.version_info >= (3, 11):
                continue
            if 'python_version >= "3.15"' in marker and sys.version_info < (3, 15):
                continue
            todo.append(re.split(r"[<>=!~ ;\[]", req, maxsplit=1)[0])
    return names


def copy_distribution(name: str, site: pathlib.Path) -> None:
    """Copy an installed distribution's files (as its RECORD lists them) into ``site``."""
    dist = importlib.metadata.distribution(name)
    base = pathlib.Path(str(dist.locate_file("")))
    for file in dist.files or []:
        source = base / file
        if file.parts[0] == ".." or not source.is_file():
            continue  # console scripts live outside site-packages
        target = site / file
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


@pytest.fixture(scope="module")
def torchless(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """A fresh venv with mypy and symscalar only; returns its python."""
    env = tmp_path_factory.mktemp("torchless") / "venv"
    venv.EnvBuilder(with_pip=False).create(env)
    python = env / "bin" / "python"
    site = pathlib.Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    for name in requirement_names("mypy"):
        copy_distribution(name, site)
    (site / "symscalar_checkout.pth").write_text(f"{ROOT}\n")
    return python


def run(python: pathlib.Path, *args: str, cwd: pathlib.Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(python), *args], capture_output=True, text=True, cwd=cwd, timeout=600, env={"PATH": "/usr/bin:/bin"}
    )


def test_environment_has_no_torch(torchless: pathlib.Path, tmp_path: pathlib.Path) -> None:
    result = run(torchless, "-c", "import torch", cwd=tmp_path)
    assert result.returncode != 0 and "No module named 'torch'" in result.stderr


def test_plugin_loads_and_reports_without_torch(torchless: pathlib.Path, tmp_path: pathlib.Path) -> None:
    (tmp_path / "user.py").write_text(CODE)
    (tmp_path / "mypy.ini").write_text(mypy_config())
    # as mypy loads it: mypy.plugin first, so symscalar's package loads lazily
    loaded = run(
        torchless, "-c", "import mypy.plugin, symscalar.mypy_plugin as p; print(p.plugin('2').__name__)", cwd=tmp_path
    )
    assert loaded.stdout.strip() == "SymscalarPlugin", loaded.stderr
    result = run(
        torchless,
        "-m",
        "mypy",
        "--config-file",
        "mypy.ini",
        "--no-error-summary",
        "--cache-dir=/dev/null",
        "user.py",
        cwd=tmp_path,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("user.py:8:") and "[symscalar-dynamic-condition]" in line for line in lines), lines
    assert any(line.startswith("user.py:9:") and "[symscalar-static-required]" in line for line in lines), lines
    assert all(line.startswith("user.py:") for line in lines), lines


LOCAL_PLUGIN = """
from mypy.plugin import Plugin


def mark(ctx):
    ctx.api.fail("the project's own plugin ran", ctx.context)
    return ctx.default_return_type


class LocalPlugin(Plugin):
    def get_function_hook(self, fullname):
        return mark if fullname == "user.marker" else None


def plugin(version):
    return LocalPlugin
"""


def test_check_command_without_torch(torchless: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """``python -m symscalar check`` in a project, where only mypy and symscalar are installed:
    mypy reads the project's pyproject.toml itself, so a TOML ``exclude`` list excludes each of
    its files, a relative plugin path resolves against the config's folder, and a message
    about the configuration names the project's file (no merged copy elsewhere)."""
    project = tmp_path / "project"
    (project / "tools").mkdir(parents=True)
    (project / "src" / "skipped").mkdir(parents=True)
    (project / ".git").mkdir()
    (project / "pyproject.toml").write_text(
        "[tool.mypy]\n"
        'plugins = ["tools/local_plugin.py"]\n'
        'exclude = ["^src/skipped/", "generated\\\\.py$"]\n'
        "unknown_setting = 1\n"
    )
    (project / "tools" / "local_plugin.py").write_text(LOCAL_PLUGIN)
    (project / "src" / "skipped" / "bad.py").write_text('x: int = "excluded by the first pattern"\n')
    (project / "src" / "generated.py").write_text('y: int = "excluded by the second pattern"\n')
    (project / "src" / "user.py").write_text(CODE + "\n\ndef marker() -> None: ...\n\n\nmarker()\n")
    result = run(torchless, "-m", "symscalar", "check", "--mypy-arg=--cache-dir=/dev/null", "src", cwd=project)
    lines = result.stdout.splitlines()
    assert result.returncode == 1, result.stdout + result.stderr
    assert "torch" not in result.stderr, result.stderr
    assert any(line.startswith("src/user.py:8:") and "[symscalar-dynamic-condition]" in line for line in lines), lines
    assert any(line.startswith("src/user.py:9:") and "[symscalar-static-required]" in line for line in lines), lines
    assert any(line.startswith("src/user.py:16:") and "the project's own plugin ran" in line for line in lines), lines
    assert lines[-1] == "Found 3 errors in 1 file (checked 1 source file)", lines  # both others excluded
    assert "pyproject.toml: [mypy]: Unrecognized option: unknown_setting = 1" in result.stderr, result.stderr
    assert "mypy.ini" not in result.stdout + result.stderr
