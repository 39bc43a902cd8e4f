"""torch's own OpInfo database (``op_db``) driven through ``symscalar.jit``, entry by entry.

Why a second sweep beside ``opinfo_support`` (thunder's OpInfos, per registered spelling):
that one checks what symscalar registers; this one measures the *op surface* a user meets,
every entry of torch's ``op_db`` whether symscalar has a hand-written op for it or not.

Protocol (per entry): CPU; float32 and, where the entry supports them, int64 and bool; the
first ``FLOAT_SAMPLES`` samples in float32 and ``OTHER_SAMPLES`` in each other dtype. Every
tensor of a sample is an input of the jitted function, every other argument static. Forward:
values, dtypes and shapes equal to eager; backward (float32, where the entry supports
autograd): ``torch.autograd.grad`` of the outputs with one fixed cotangent, equal to eager's
gradients, including which inputs get ``None``.

Each entry gets one outcome: ``passed`` (every sample), ``refused`` (some sample raised a
symscalar error naming why: the first such message, shortened), ``excluded`` (random, CUDA-
or sparse-only, a sparse operand or result, data-dependent output shapes, no runnable sample: a declared reason), or a
failure: ``mismatch`` (a wrong result) or ``internal error`` (any other exception).

Run ``PYTHONPATH=. .venv/bin/python -m conformance.op_db_sweep [--quick] [names]`` for the
table of counts (``--quick``: the test suite's sampling, one sample in float32 and one in an
integer or bool dtype).
"""

from __future__ import annotations

import collections
import dataclasses
import sys
import time
import warnings
from collections.abc import Iterator
from typing import Any

import torch
from torch.testing._internal import common_utils
from torch.utils import _pytree as pytree

import symscalar

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from torch.testing._internal.common_methods_invocations import op_db

__all__ = ["Outcome", "run_entry", "sweep", "entry_id", "FLOAT_SAMPLES", "OTHER_SAMPLES"]

FLOAT_SAMPLES = 2
OTHER_SAMPLES = 1
# Grads of float32 decompositions may round differently from eager's kernels.
_TOLERANCE = {"rtol": 1e-4, "atol": 1e-4}
_SYMSCALAR_REFUSALS = (
    symscalar.UnsupportedOperationError,
    symscalar.DynamicValueError,
    symscalar.StaticValueRequiredError,
)


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What one op_db entry gave: ``kind`` is passed/refused/excluded/mismatch/internal error."""

    entry: str
    kind: str
    detail: str = ""


def entry_id(op: Any) -> str:
    return op.name + (f".{op.variant_test_name}" if op.variant_test_name else "")


def _dtypes(op: Any, quick: bool = False) -> list[torch.dtype]:
    """float32, int64, bool where supported; ``quick``: float32 and one of the others."""
    supported = op.supported_dtypes("cpu")
    dtypes = [d for d in (torch.float32, torch.int64, torch.bool) if d in supported]
    return dtypes[:2] if quick else dtypes


def _samples(op: Any, dtype: torch.dtype, quick: bool = False) -> Iterator[Any]:
    limit = 1 if quick else FLOAT_SAMPLES if dtype is torch.float32 else OTHER_SAMPLES
    grad = dtype is torch.float32 and op.supports_autograd
    count = 0
    for sample in op.sample_inputs("cpu", dtype, requires_grad=grad):
        yield sample
        count += 1
        if count >= limit:
            return


def _is_tensor(v: Any) -> bool:
    return isinstance(v, torch.Tensor)


def _call(op: Any, sample: Any) -> tuple[Any, list[torch.Tensor], Any]:
    """``(run(tensors), tensors, spec)``: the sample as a function of its tensors."""
    tree = (sample.input, tuple(sample.args), dict(sample.kwargs))
    flat, spec = pytree.tree_flatten(tree)
    slots = [i for i, v in enumerate(flat) if _is_tensor(v)]
    tensors = [flat[i] for i in slots]

    method = getattr(op.op, "__name__", "")
    is_method = getattr(torch.Tensor, method, None) is op.op

    def run(ts: Any) -> Any:
        values = list(flat)
        for i, t in zip(slots, ts):
            values[i] = t
        inp, args, kwargs = pytree.tree_unflatten(values, spec)
        if is_method and isinstance(inp, torch.Tensor):  # `x.__radd__(2)` as Python calls it
            return getattr(inp, method)(*args, **kwargs)
        return op.op(inp, *args, **kwargs)

    return run, tensors, spec


def _assert_same(got: Any, expected: Any, where: str) -> None:
    if isinstance(expected, torch.Tensor):
        if not isinstance(got, torch.Tensor):
            raise AssertionError(f"{where}: expected a tensor, got {type(got).__name__}")
        if got.requires_grad != expected.requires_grad:
            raise AssertionError(f"{where}: requires_grad {got.requires_grad}, eager {expected.requires_grad}")
        torch.testing.assert_close(
            got.detach(), expected.detach(), equal_nan=True, msg=lambda m: f"{where}: {m}", **_TOLERANCE
        )
    elif isinstance(expected, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(expected):
            raise AssertionError(f"{where}: expected a sequence of {len(expected)}, got {type(got).__name__}")
        for i, (g, e) in enumerate(zip(got, expected)):
            _assert_same(g, e, f"{where}[{i}]")
    elif got != expected and not (got is None and expected is None):
        raise AssertionError(f"{where}: expected {expected!r}, got {got!r}")


def _grads(outputs: Any, tensors: list[torch.Tensor]) -> list[torch.Tensor | None] | None:
    """Gradients of the outputs (one fixed cotangent each) w.r.t. the tensors that require grad."""
    outs = [o for o in pytree.tree_leaves(outputs) if _is_tensor(o) and o.requires_grad]
    wrt = [t for t in tensors if t.requires_grad]
    if not outs or not wrt:
        return None
    cts = [torch.linspace(-1.0, 1.0, o.numel(), dtype=o.dtype).reshape(o.shape) for o in outs]
    return list(torch.autograd.grad(outs, wrt, cts, allow_unused=True))


def _eager_is_random(run: Any, tensors: list[torch.Tensor]) -> bool:
    with torch.no_grad():
        torch.manual_seed(0)
        a = run(tensors)
        torch.manual_seed(1)
        b = run(tensors)
    try:
        _assert_same(b, a, "")
    except (AssertionError, TypeError, RuntimeError):
        return True
    return False


def _tensor_leaves(value: Any) -> list[torch.Tensor]:
    return [t for t in pytree.tree_leaves(value) if _is_tensor(t)]


# Entries whose result is uninitialized memory: only shapes and dtypes can match eager's.
UNINITIALIZED = frozenset(["empty", "empty_like", "empty_strided", "empty_permuted", "new_empty", "new_empty_strided"])


def _check_sample(op: Any, sample: Any) -> Outcome | None:
    """None when the sample passes; otherwise its outcome."""
    name = entry_id(op)
    run, tensors, _ = _call(op, sample)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = run(tensors)
    except Exception:  # noqa: BLE001 - eager rejects the sample: nothing to compare with
        return Outcome(name, "excluded", "eager rejects the sample")
    if any(t.layout is not torch.strided for t in tensors + _tensor_leaves(expected)):
        return Outcome(name, "excluded", "sparse (a sparse operand or result)")
    if op.name not in UNINITIALIZED and _eager_is_random(run, tensors):  # (uninitialized memory differs too)
        return Outcome(name, "excluded", "random (eager differs between seeds)")
    f = symscalar.jit(run)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = f(tensors)
    except _SYMSCALAR_REFUSALS as e:
        return _refusal(name, e)
    except Exception as e:  # noqa: BLE001 - reported
        return Outcome(name, "internal error", f"{type(e).__name__}: {str(e).splitlines()[0][:160]}")
    if op.name in UNINITIALIZED:
        same = [(g.shape, g.dtype) for g in pytree.tree_leaves(got)] == [
            (e.shape, e.dtype) for e in pytree.tree_leaves(expected)
        ]
        return None if same else Outcome(name, "mismatch", "shape or dtype of uninitialized result")
    try:
        _assert_same(got, expected, "forward")
        try:
            expected_grads = _grads(expected, tensors)
        except Exception:  # noqa: BLE001 - eager's backward rejects this cotangent (linalg.eig): nothing to compare
            expected_grads = None
        if expected_grads is not None:
            try:
                got_grads = _grads(got, tensors)
            except _SYMSCALAR_REFUSALS as e:
                return _refusal(name, e)
            except Exception as e:  # noqa: BLE001 - reported
                return Outcome(name, "internal error", f"backward: {type(e).__name__}: {str(e).splitlines()[0][:140]}")
            _assert_same(got_grads, expected_grads, "grads")
    except AssertionError as e:
        return Outcome(name, "mismatch", str(e).splitlines()[0][:200])
    return None


_DATA_DEPENDENT_MARKERS = ("output's shape depends on", "data-dependent", "depends on tensor values")


def _refusal(name: str, error: Exception) -> Outcome:
    message = str(error).splitlines()[0]
    if any(m in message for m in _DATA_DEPENDENT_MARKERS):
        return Outcome(name, "excluded", "data-dependent output shape")
    if "torch.get_rng_state()" in message:  # OpInfo's wrapper_set_seed around a random op
        return Outcome(name, "excluded", "random (the OpInfo seeds torch's generator around the op)")
    return Outcome(name, "refused", f"{type(error).__name__}: {message[:160]}")


def run_entry(op: Any, quick: bool = False) -> Outcome:
    """The outcome of one op_db entry (see the module docstring); ``quick``: one sample each
    of float32 and one integer or bool dtype (the test suite's budget)."""
    name = entry_id(op)
    dtypes = _dtypes(op, quick)
    if not dtypes:
        reason = "sparse or CUDA-only" if not op.supported_dtypes("cpu") else "no float32/int64/bool support on CPU"
        return Outcome(name, "excluded", reason)
    ran = 0
    first_exclusion: Outcome | None = None
    for dtype in dtypes:
        try:
            samples = list(_samples(op, dtype, quick))
        except Exception as e:  # noqa: BLE001 - the OpInfo cannot build samples here
            first_exclusion = first_exclusion or Outcome(name, "excluded", f"no samples: {type(e).__name__}")
            continue
        for sample in samples:
            outcome = _check_sample(op, sample)
            if outcome is None:
                ran += 1
                continue
            if outcome.kind == "excluded" and outcome.detail == "eager rejects the sample":
                first_exclusion = first_exclusion or outcome
                continue
            return outcome
    if ran == 0:
        return first_exclusion or Outcome(name, "excluded", "no sample")
    return Outcome(name, "passed")


def sweep(ops: list[Any] | None = None, quick: bool = False) -> list[Outcome]:
    """Run every entry (or ``ops``); the global RNG is left as it was.

    torch's ``sample_inputs`` looks for the running ``unittest.TestCase`` with
    ``inspect.stack()``, whose source lookups scan ``sys.modules`` for every frame: in a test
    process that imported transformers, diffusers and timm that was 85% of the sweep (190 of
    220 s). There is no TestCase here, so the answer is None: it is given without the walk."""
    state = torch.random.get_rng_state()
    original = common_utils.extract_test_fn
    common_utils.extract_test_fn = lambda: None
    try:
        return [run_entry(op, quick) for op in (op_db if ops is None else ops)]
    finally:
        common_utils.extract_test_fn = original
        torch.random.set_rng_state(state)


def report(outcomes: list[Outcome]) -> str:
    """Counts by kind, refusal and exclusion reasons by count, and every failure."""
    kinds = collections.Counter(o.kind for o in outcomes)
    counted = len(outcomes) - kinds["excluded"]
    lines = [
        f"op_db entries: {len(outcomes)}; excluded {kinds['excluded']}; of the other {counted}: "
        f"passed {kinds['passed']} ({100 * kinds['passed'] / max(counted, 1):.1f}%), refused {kinds['refused']}, "
        f"mismatch {kinds['mismatch']}, internal error {kinds['internal error']}"
    ]
    for kind in ("excluded", "refused"):
        reasons = collections.Counter(o.detail for o in outcomes if o.kind == kind)
        lines.append(f"{kind} by reason:")
        lines += [f"  {n:4d}  {r}" for r, n in reasons.most_common()]
    for kind in ("mismatch", "internal error"):
        lines += [f"{kind}: {o.entry}: {o.detail}" for o in outcomes if o.kind == kind]
    return "\n".join(lines)


def main() -> None:
    start = time.process_time()
    quick = "--quick" in sys.argv
    names = set(sys.argv[1:]) - {"--quick"}
    ops = [op for op in op_db if not names or op.name in names or entry_id(op) in names]
    outcomes = sweep(ops, quick)
    print(report(outcomes))
    if names:
        for o in outcomes:
            print(o)
    print(f"CPU time: {time.process_time() - start:.1f} s")


if __name__ == "__main__":
    main()
