"""The plugin's op table: generated from the registry, fresh, covered by cases, cheap to load."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import pytest

import symscalar.ops  # noqa: F401 - registers every op
from symscalar.__main__ import STATIC_PARAMS_PATH, static_params_source
from symscalar._static_params import STATIC_PARAMS
from symscalar.frontend import OPS

ROOT = pathlib.Path(__file__).resolve().parent.parent
CASES = ROOT / "typecheck_cases"


def test_static_params_are_fresh() -> None:
    assert STATIC_PARAMS_PATH.read_text() == static_params_source(), (
        "symscalar/_static_params.py is stale: run `python -m symscalar export-static-params`"
    )


def test_static_params_match_registry() -> None:
    assert set(STATIC_PARAMS) == set(OPS)
    for name, (params, static, positional) in STATIC_PARAMS.items():
        assert (params, static, positional) == (OPS[name].params, OPS[name].static, OPS[name].positional), name


@pytest.mark.slow
def test_export_check_command() -> None:
    """`export-static-params --check` is what CI runs; it agrees the file is fresh."""
    fresh = subprocess.run(
        [sys.executable, "-m", "symscalar", "export-static-params", "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert fresh.returncode == 0, fresh.stdout + fresh.stderr


def test_every_static_parameter_has_a_case() -> None:
    """Each static parameter of each op spelling is exercised by an expected
    [symscalar-static-required] error in typecheck_cases/, or by a line marked
    ``# unchecked: OP: parameter "P": <why mypy cannot see the call>`` (spellings that
    torch's stubs type as Any, on which mypy calls no plugin hook)."""
    text = "\n".join(p.read_text() for p in CASES.glob("*.py"))
    flagged = set(re.findall(r'# E: ([\w.]+): parameter "(\w+)"[^\n]*\[symscalar-static-required\]', text))
    unchecked = set(re.findall(r'# unchecked: ([\w.]+): parameter "(\w+)": \S', text))
    # mypy calls no plugin hook on these (each line says why; mypy still rejects them):
    # F.conv*d are torch.conv*d in the stubs; F.max_pool2d is overloaded on Literal
    # return_indices (torch.special.* is typed by symscalar's torch stubs)
    unhookable = {
        "torch.nn.functional.conv1d",
        "torch.nn.functional.conv2d",
        "torch.nn.functional.conv3d",
        "torch.nn.functional.max_pool2d",
    }
    assert all(name in unhookable for name, _ in unchecked), unchecked
    flagged |= unchecked
    missing = [
        f"{name}({param})"
        for name, (_, static, _) in STATIC_PARAMS.items()
        for param in static
        if (name, param) not in flagged
    ]
    assert not missing, f"no typecheck case flags these static parameters: {missing}"


def test_plugin_does_not_import_torch() -> None:
    """mypy loads the plugin in its own process: start-up must stay cheap."""
    code = (
        "import sys, mypy.plugin, symscalar.mypy_plugin as p; "
        "assert 'torch' not in sys.modules, 'torch imported'; "
        "print(p.plugin('2.4').__name__)"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "SymscalarPlugin"


def test_cache_keyed_on_op_table() -> None:
    """mypy rechecks cached modules when the plugin's version or op table changes."""
    code = (
        "import mypy.plugin, symscalar.mypy_plugin as p; "
        "from symscalar._static_params import STATIC_PARAMS as t; "
        "assert p.SymscalarPlugin.report_config_data(None, None) == p.config_data(t); "
        "changed = dict(t, **{'torch.sum': (('input', 'dim'), (), 2)}); "
        "assert p.config_data(changed)['ops'] != p.config_data(t)['ops']"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
