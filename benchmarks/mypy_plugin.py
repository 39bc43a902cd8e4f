"""mypy wall time with and without the symscalar plugin, cold cache, on the same corpus.

The corpus is the project source, the examples and the type-check cases. Each configuration
runs in a fresh ``python -m mypy`` process (plugin loading included) with no cache; the best
of ``--repeat`` runs is reported. Target: with the plugin at most 1.15x the time without.

    python benchmarks/mypy_plugin.py [--repeat N]
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
                [sys.executable, "-m", "mypy", "--config-file", str(config),
                 f"--cache-dir={os.devnull}", *CORPUS],
                cwd=ROOT, capture_output=True, text=True,
                env=dict(os.environ, PYTHONPATH=str(ROOT)),
            )
            best = min(best, time.perf_counter() - start)
            if result.returncode not in (0, 1):
                raise RuntimeError(f"mypy failed:\n{result.stdout}\n{result.stderr}")
            lines = len(result.stdout.splitlines())
    return best, lines


def main() -> None:
    """Measure both configurations and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="runs per configuration")
    args = parser.parse_args()
    without, lines_without = mypy_seconds(False, args.repeat)
    with_plugin, lines_with = mypy_seconds(True, args.repeat)
    print(f"mypy, cold cache, corpus: {' '.join(CORPUS)} (best of {args.repeat})")
    print(f"{'configuration':<16} {'wall s':>8} {'ratio':>7} {'output lines':>13}")
    print(f"{'without plugin':<16} {without:>8.2f} {1.0:>7.2f} {lines_without:>13}")
    print(f"{'with plugin':<16} {with_plugin:>8.2f} {with_plugin / without:>7.2f} {lines_with:>13}")
    print(f"target: ratio <= 1.15 -> {'met' if with_plugin / without <= 1.15 else 'NOT met'}")


if __name__ == "__main__":
    main()
