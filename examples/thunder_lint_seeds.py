"""symscalar.lint_thunder on the two lightning-thunder bug classes symscalar was grown from.

Under ``cache="symbolic values"`` (lightning-thunder 0.2.6) a dim passed as an argument is a
NumberProxy: thunder's grad transform puts it into a backward reduction's axes (softmax), or
folds its value into the program without a prologue check (sum), so the next call with another
dim reuses the first one. The same function with ``cache="constant values"`` is clean.

    python examples/thunder_lint_seeds.py
    python -m symscalar lint-thunder examples/thunder_lint_seeds.py::seeds   # exit status 1
    python -m symscalar lint-thunder examples/thunder_lint_seeds.py::clean   # exit status 0
"""

from __future__ import annotations

import warnings
from typing import Any

import torch

import symscalar

warnings.filterwarnings("ignore", message="The 'symbolic values' cache option")


def softmax_dim(a: torch.Tensor, d: int) -> torch.Tensor:
    return torch.softmax(a, d)


def sum_dim(a: torch.Tensor, d: int) -> torch.Tensor:
    return a.sum(d)


def run(cache: str) -> list[Any]:
    """Each function jitted with ``cache`` and run once with grad."""
    import thunder  # noqa: PLC0415 - lightning-thunder is optional; this example needs it

    jitted = []
    for fn in (softmax_dim, sum_dim):
        jf = thunder.jit(fn, cache=cache)
        jf(torch.randn(3, 4, requires_grad=True), 1).sum().backward()
        jitted.append(jf)
    return jitted


def seeds() -> None:
    """For ``python -m symscalar lint-thunder``: runs the jitted functions, returns nothing."""
    run("symbolic values")


def clean() -> list[Any]:
    """For ``python -m symscalar lint-thunder``: returns the jitted functions to lint."""
    return run("constant values")


if __name__ == "__main__":
    softmax_report, sum_report = map(symscalar.lint_thunder, run("symbolic values"))
    print(softmax_report, sum_report, sep="\n\n")
    assert ("backward", "torch.sum", "dim") in {(f.trace, f.symbol, f.argument) for f in softmax_report}
    assert ("backward", "baked", "torch.unsqueeze") in {(f.trace, f.kind, f.symbol) for f in sum_report}
    assert all(symscalar.lint_thunder(jf).ok for jf in run("constant values"))
