"""torch's OpInfo database (``op_db``) through ``symscalar.jit``: the op surface a user meets.

Every entry must be equal to eager (forward values, dtypes, shapes, requires_grad; gradients
for differentiable ones) or refused with a symscalar error naming why, or excluded for a
declared reason (random, data-dependent output shapes, sparse/CUDA-only, a sparse operand or
result, no runnable sample);
the counts and every reason are printed (``conformance/op_db_sweep.py`` has the protocol). The
known differences from eager are listed below with their reason: a new one fails the test, and
so does an entry listed here that now passes (the list must stay true).

Sampling (the suite's budget): one float32 sample and one integer or bool sample per entry,
about 52 s of CPU (plus 11 s to import op_db); ``python -m conformance.op_db_sweep`` runs the fuller protocol.
"""

from __future__ import annotations

import collections

import pytest

conformance = pytest.importorskip("conformance.op_db_sweep", reason="torch's OpInfo database needs expecttest")

pytestmark = [pytest.mark.opinfo, pytest.mark.slow]

# Entries that differ from eager, and why. None of them is a wrong value.
KNOWN_DIFFERENCES: dict[str, str] = {}
# At least this share of the entries that are not excluded pass (measured: see docs/coverage.md).
MIN_PASSED = 0.95


def test_op_db_entries_equal_eager_or_refused(capsys: pytest.CaptureFixture[str]) -> None:
    outcomes = conformance.sweep(quick=True)
    with capsys.disabled():
        print("\n" + conformance.report(outcomes))
    failures = {o.entry: o for o in outcomes if o.kind in ("mismatch", "internal error")}
    unexpected = [f"{o.entry}: {o.kind}: {o.detail}" for e, o in failures.items() if e not in KNOWN_DIFFERENCES]
    assert not unexpected, "new differences from eager:\n" + "\n".join(unexpected)
    internal = [e for e, o in failures.items() if o.kind == "internal error"]
    assert not internal, f"internal errors: {internal}"
    kinds = collections.Counter(o.kind for o in outcomes)
    counted = len(outcomes) - kinds["excluded"]
    assert kinds["passed"] >= MIN_PASSED * counted, f"{kinds['passed']} of {counted} passed"
    fixed = [e for e in KNOWN_DIFFERENCES if e in {o.entry for o in outcomes if o.kind == "passed"}]
    assert not fixed, f"listed as differing from eager but now passing (remove them): {fixed}"
