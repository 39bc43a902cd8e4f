"""mypy wall time with and without the symscalar plugin, cold cache, on the same corpus.

The corpus is the project source, the examples and the type-check cases. Each configuration
runs in a fresh ``python -m mypy`` process (plugin loading included) with no cache; the best
of ``--repeat`` runs is reported. Target: with the plugin at most 1.15x the time without.

``--conditions`` measures instead how the condition check scales: one function with N
dynamic comparisons in ``if`` statements (N = 500, 1000, 2000), torch not analyzed. The
plugin indexes a function's conditions once, so its extra time grows linearly with N (it
rescanned the function per comparison before: quadratic, +15 s at N = 2000).

    python benchmarks/mypy_plugin.py [--repeat N] [--conditions]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

from symscalar.__main__ import mypy_config

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ["symscalar", "examples", "typecheck_cases"]


def mypy_seconds(plugin: bool, repeat: int) -> tuple[float, int]:
    """Best wall time of ``repeat`` cold runs, and the number of lines mypy printed."""
    with tempfile.TemporaryDirectory() as tmp:
        config = pathlib.Path(tmp, "mypy.ini")
        config.write_text(mypy_config(plugin=plugin))
        best = float("inf")
        lines = 0
        for _ in range(repeat):
            start = time.perf_counter()
            result = subprocess.run(
                [sys.executable, "-m", "mypy", "--config-file", str(config), f"--cache-dir={os.devnull}", *CORPUS],
                cwd=ROOT,
                capture_output=True,
                text=True,
                env=dict(os.environ, PYTHONPATH=str(ROOT)),
            )
            best = min(best, time.perf_counter() - start)
            if result.returncode not in (0, 1):
                raise RuntimeError(f"mypy failed:\n{result.stdout}\n{result.stderr}")
            lines = len(result.stdout.splitlines())
    return best, lines


SKIP_TORCH = "[mypy-torch.*]\nfollow_imports = skip\nfollow_imports_for_stubs = True\n"


def conditions_module(count: int) -> str:
    """A function with ``count`` comparisons of a dynamic value, each an ``if`` condition
    (every one an error: the plugin does the whole check each time)."""
    body = "".join(f"    if n > {i}:\n        total = total + {i}\n" for i in range(count))
    return (
        "from symscalar import DynamicInt\n\n\n"
        f"def many(n: DynamicInt) -> DynamicInt:\n    total = n\n{body}    return total\n"
    )


def conditions_seconds(plugin: bool, count: int, repeat: int) -> tuple[float, int]:
    """Best cold mypy time over the generated module, and its number of error lines."""
    with tempfile.TemporaryDirectory() as tmp:
        config = pathlib.Path(tmp, "mypy.ini")
        config.write_text(mypy_config(plugin=plugin) + SKIP_TORCH)
        module = pathlib.Path(tmp, "many.py")
        module.write_text(conditions_module(count))
        best, lines = float("inf"), 0
        for _ in range(repeat):
            start = time.perf_counter()
            result = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "mypy",
                    "--config-file",
                    str(config),
                    f"--cache-dir={os.devnull}",
                    "--no-error-summary",
                    str(module),
                ],
                cwd=ROOT,
                capture_output=True,
                text=True,
                env=dict(os.environ, PYTHONPATH=str(ROOT)),
            )
            best = min(best, time.perf_counter() - start)
            if result.returncode not in (0, 1):
                raise RuntimeError(f"mypy failed:\n{result.stdout}\n{result.stderr}")
            lines = len(result.stdout.splitlines())
    return best, lines


def conditions_table(repeat: int) -> None:
    """Print how the plugin's extra time scales with the number of conditions."""
    print(f"mypy, cold cache, one function with N dynamic `if` comparisons (best of {repeat})")
    print(f"{'N':>6} {'plain s':>8} {'plugin s':>9} {'extra s':>8} {'extra ms/cond':>14} {'errors':>7}")
    for count in (500, 1000, 2000):
        plain, _ = conditions_seconds(False, count, repeat)
        with_plugin, errors = conditions_seconds(True, count, repeat)
        extra = with_plugin - plain
        print(f"{count:>6} {plain:>8.2f} {with_plugin:>9.2f} {extra:>8.2f} {1000 * extra / count:>14.2f} {errors:>7}")


def main() -> None:
    """Measure both configurations and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="runs per configuration")
    parser.add_argument("--conditions", action="store_true", help="measure the condition check's scaling instead")
    args = parser.parse_args()
    if args.conditions:
        conditions_table(args.repeat)
        return
    without, lines_without = mypy_seconds(False, args.repeat)
    with_plugin, lines_with = mypy_seconds(True, args.repeat)
    print(f"mypy, cold cache, corpus: {' '.join(CORPUS)} (best of {args.repeat})")
    print(f"{'configuration':<16} {'wall s':>8} {'ratio':>7} {'output lines':>13}")
    print(f"{'without plugin':<16} {without:>8.2f} {1.0:>7.2f} {lines_without:>13}")
    print(f"{'with plugin':<16} {with_plugin:>8.2f} {with_plugin / without:>7.2f} {lines_with:>13}")
    print(f"target: ratio <= 1.15 -> {'met' if with_plugin / without <= 1.15 else 'NOT met'}")


if __name__ == "__main__":
    main()
