"""Every op symscalar supports, driven through ``symscalar.jit`` with thunder's OpInfo samples.

Registry-wide: the parametrization is ``symscalar.TORCH_FUNCTIONS`` itself, so a newly
registered torch spelling is covered automatically (and fails loudly if no sample reaches it).

- ``test_conformance``: each sample runs eagerly and inside ``symscalar.jit`` (tensors as jit
  inputs, numbers static), then again with the numbers that sit in dynamic-capable parameters
  passed as DynamicInt/DynamicFloat parameters; results must match torch eager exactly in
  dtype and shape and closely in value. Skips are counted by reason (declared out-of-scope
  features only) and printed by ``test_summary``.
- ``test_dynamic_parameter``: for each parameter that accepts dynamic numbers, three values,
  one trace, each result equal to eager.
- ``test_static_parameter``: for each static parameter, a dynamic value raises
  ``StaticValueRequiredError`` at trace time, naming the parameter.
- ``test_op_not_in_library``: every OpInfo op outside the registry raises
  ``UnsupportedOperationError`` on traced tensors (it never runs eagerly).
- ``test_ops_table_up_to_date``: docs/ops_table.md matches the registry, and README.md links to
  it rather than carrying a copy that could go stale.
"""

from __future__ import annotations

import collections
import importlib.util
import inspect
import pathlib
from typing import Any

import pytest
import torch

import symscalar
from conformance import opinfo_support as support
from conformance.opinfo_support import Call, Dyn, Skip
from symscalar.trace import ScalarVar

# Samples with a single element reduced with correction=1 warn in eager and in the trace alike.
pytestmark = [
    pytest.mark.opinfo,
    pytest.mark.filterwarnings("ignore:.*degrees of freedom is <= 0:UserWarning"),
]

ROOT = pathlib.Path(__file__).resolve().parent.parent
SPELLINGS = support.registered_spellings()

# spelling name -> Counter of outcomes ("passed", "passed (dynamic scalars)", "skipped: why")
RESULTS: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
# Samples torch eager rejects but symscalar runs (not a failure: listed in the report).
PERMISSIVE: list[str] = []


def _name(func: Any) -> str:
    return support.spelling_name(func)


def assert_same(got: Any, expected: Any, where: str) -> None:
    """Same structure, dtypes and shapes; values equal (integers) or close (floats)."""
    if isinstance(expected, torch.Tensor):
        assert isinstance(got, torch.Tensor), f"{where}: expected a tensor, got {type(got).__name__}"
        # float32 decompositions (var, softmax...) may round differently from eager's kernels
        tol = {"rtol": 1e-5, "atol": 1e-5} if expected.dtype in (torch.float32, torch.float16) else {}
        torch.testing.assert_close(got, expected, equal_nan=True, msg=lambda m: f"{where}: {m}", **tol)
    elif isinstance(expected, (tuple, list)):
        assert isinstance(got, (tuple, list)) and len(got) == len(expected), (
            f"{where}: expected a sequence of {len(expected)}, got {got!r}"
        )
        for i, (g, e) in enumerate(zip(got, expected)):
            assert_same(g, e, f"{where}[{i}]")
    else:
        assert got == expected, f"{where}: expected {expected!r}, got {got!r}"


def assert_conforms(func: Any, got: Any, expected: Any, where: str) -> None:
    """``assert_same``, or for a random or uninitialized result only its metadata."""
    if _name(func) in support.RANDOM_SPELLINGS | support.UNINITIALIZED_SPELLINGS:
        support.assert_same_metadata(got, expected, where)
    else:
        assert_same(got, expected, where)


def _describe(call: Call) -> str:
    def short(v: Any) -> str:
        if isinstance(v, torch.Tensor):
            return f"T{list(v.shape)}:{str(v.dtype).removeprefix('torch.')}"
        if isinstance(v, (tuple, list)):
            inner = ", ".join(short(x) for x in v)
            return f"({inner})" if isinstance(v, tuple) else f"[{inner}]"
        return repr(v)

    args = [short(a) for a in call.args] + [f"{k}={short(v)}" for k, v in call.kwargs.items()]
    return f"{_name(call.func)}({', '.join(args)}) from {call.source}"


def _run_jitted(call: Call, args: Any, kwargs: Any, values: list[Any]) -> tuple[Any, Any]:
    if values:
        f, tensors = support.jitted(call.func, args, kwargs, len(values))
        got = f(tensors, *values)
    else:
        f, got = support.run_static(call)
    info = f.cache_info()
    assert info.misses == 1 and f.last_trace() is not None, f"not traced: {info}"
    return f, got


def _check_call(call: Call, outcomes: collections.Counter[str], failures: list[str]) -> None:
    where = _describe(call)
    try:
        expected = call.run()
    except Exception as eager_error:  # noqa: BLE001 - torch rejects this spelling of the sample
        try:
            _run_jitted(call, call.args, call.kwargs, [])
        except Exception:  # noqa: BLE001 - both reject: consistent
            outcomes["skipped: torch eager rejects the sample for this spelling (jit too)"] += 1
            return
        outcomes["skipped: torch eager rejects the sample, symscalar accepts it"] += 1
        PERMISSIVE.append(f"{where}: torch eager raises {eager_error!r}")
        return
    try:
        _, got = _run_jitted(call, call.args, call.kwargs, [])
    except symscalar.UnsupportedOperationError as e:
        outcomes[f"skipped: declared unsupported ({str(e).splitlines()[0][:90]})"] += 1
        return
    except Exception as e:  # noqa: BLE001 - reported as a mismatch
        failures.append(f"{where}: eager gives {_summary(expected)}, jit raises {e!r}")
        return
    try:
        assert_conforms(call.func, got, expected, where)
    except AssertionError as e:
        failures.append(f"static scalars: {e}")
        return
    direct = not any(isinstance(v, torch.Tensor) for v in support.leaves((call.args, call.kwargs)))
    outcomes["passed (no traced operand: handler called directly)" if direct else "passed"] += 1

    dynamic = support.dynamic_positions(call)
    if dynamic is None:
        return
    args, kwargs, values = dynamic
    try:
        f, got = _run_jitted(call, args, kwargs, values)
        trace = f.last_trace()
        n_scalars = sum(isinstance(v, ScalarVar) for v in trace.inputs)
        n_scalars -= any(
            e.prim.name in ("uniform", "normal", "random_int", "multinomial") for e in trace.eqns
        )  # the RNG seed
        assert n_scalars == len(values), f"{n_scalars} dynamic inputs in the trace, expected {len(values)}"
        assert_conforms(call.func, got, expected, where)
    except Exception as e:  # noqa: BLE001 - reported as a mismatch
        failures.append(f"dynamic scalars {values}: {where}: {e!r}")
        return
    outcomes["passed (dynamic scalars)"] += 1


def _summary(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return f"tensor{list(value.shape)} {value.dtype}"
    if isinstance(value, (tuple, list)):
        return "(" + ", ".join(_summary(v) for v in value) + ")"
    return repr(value)


@pytest.mark.parametrize("func", SPELLINGS, ids=_name)
def test_conformance(func: Any) -> None:
    outcomes = RESULTS[_name(func)]
    failures: list[str] = []
    for item in support.calls_for(func):
        if isinstance(item, Skip):
            outcomes[f"skipped: {item.reason}"] += 1
        else:
            _check_call(item, outcomes, failures)
    assert not failures, f"{len(failures)} mismatches:\n" + "\n".join(failures)
    passed = sum(n for k, n in outcomes.items() if k.startswith("passed"))
    refused = sum(n for k, n in outcomes.items() if k.startswith("skipped: declared unsupported"))
    if passed == 0 and refused > 0:
        return  # every valid sample refused with a clear error: x[i] = v into an argument (setitem)
    assert passed > 0, (
        f"no OpInfo sample exercised {_name(func)} (outcomes: {dict(outcomes)}); map an OpInfo "
        "to it, or add samples, in conformance/opinfo_support.py (OPINFO_CALLS, STEM_ALIASES, HAND_SAMPLES)"
    )


# ----------------------------------------------------------------------------------------
# The dynamic-scalar contract, per parameter

DYNAMIC_CASES = [(f, p) for f in SPELLINGS for p in support.dynamic_params(f)]
STATIC_CASES = [(f, p) for f in SPELLINGS for p in support.static_params(f)]


def _case_id(case: Any) -> str:
    return f"{_name(case[0])}-{case[1]}" if isinstance(case, tuple) else str(case)


def _probe_values(base: Any, hint: str) -> list[list[Any]]:
    """Candidate triples of values for a dynamic parameter, the sample's own value first."""
    if isinstance(base, bool):
        return [[base, not base, base]]
    if isinstance(base, int):
        return [[base, base + 1, base + 3]]
    if isinstance(base, float):
        return [[base, base + 0.75, base - 1.5]]
    ints, floats = [2, 3, 5], [1.5, 2.25, -0.5]
    if hint == "IntLike":
        return [ints]
    if hint == "BoolLike":
        return [[True, False, True]]
    return [floats, ints]


def _substituted(call: Call, param: str) -> list[tuple[tuple[Any, ...], dict[str, Any], list[Any]]]:
    """Templates of ``call`` with ``param`` replaced by Dyn(0), each with three values."""
    bound = support.bind_call(call)
    if bound is None:
        return []
    base = bound.arguments.get(param, bound.signature.parameters[param].default)
    args, kwargs = support.substitute(call, {param: Dyn(0)})  # type: ignore[misc]
    hint = support.dynamic_params(call.func)[param]
    return [(args, kwargs, values) for values in _probe_values(base, hint)]


def _eager(func: Any, args: Any, kwargs: Any, value: Any) -> Any:
    a, k = support.fill((args, kwargs), (), (value,))
    return support.invoke(func, a, k)


@pytest.mark.parametrize("case", DYNAMIC_CASES, ids=_case_id)
def test_dynamic_parameter(case: tuple[Any, str]) -> None:
    func, param = case
    for call in support.calls_for(func):
        if not isinstance(call, Call):
            continue
        for args, kwargs, values in _substituted(call, param):
            try:
                expected = [_eager(func, args, kwargs, v) for v in values]
            except Exception:  # noqa: BLE001, S112 - torch rejects a number here for this sample
                continue
            f, tensors = support.jitted(func, args, kwargs, 1)
            try:
                got = [f(tensors, value) for value in values]
            except symscalar.UnsupportedOperationError:
                continue  # a sample symscalar refuses with a clear error (test_conformance)
            for value, want, out in zip(values, expected, got):
                assert_conforms(func, out, want, f"{_describe(call)} with {param}={value!r}")
            info = f.cache_info()
            assert (info.misses, info.hits) == (1, 2), (
                f"{_name(func)}: three values of dynamic {param!r} must share one trace, got {info}"
            )
            return
    pytest.skip(f"no sample of {_name(func)} where torch eager accepts a number for {param!r}")


def _dynamic_version(value: Any) -> tuple[Any, Any]:
    """A template with one Dyn(0) inside ``value``, and the number to pass for it."""
    if isinstance(value, (bool, int, float)):
        return Dyn(0), value
    if value is inspect.Parameter.empty:
        return (Dyn(0),), 0
    if isinstance(value, (tuple, list, torch.Size)) and len(value) > 0 and isinstance(value[0], int):
        return (Dyn(0), *value[1:]), value[0]
    return Dyn(0), 0


@pytest.mark.parametrize("case", STATIC_CASES, ids=_case_id)
def test_static_parameter(case: tuple[Any, str]) -> None:
    func, param = case
    errors = []
    for call in support.calls_for(func):
        if not isinstance(call, Call):
            continue
        bound = support.bind_call(call)
        if bound is None:
            continue
        try:
            call.run()
        except Exception:  # noqa: BLE001, S112 - want a sample that is valid apart from the dynamic value
            continue
        sig_param = bound.signature.parameters[param]
        template, value = _dynamic_version(bound.arguments.get(param, sig_param.default))
        if sig_param.kind is inspect.Parameter.VAR_POSITIONAL and not isinstance(template, tuple):
            template = (template,)
        args, kwargs = support.substitute(call, {param: template})  # type: ignore[misc]
        for other in support.EXCLUSIVE_PARAMS.get(param, ()):
            kwargs.pop(other, None)
        f, tensors = support.jitted(func, args, kwargs, 1)
        try:
            f(tensors, value)
        except symscalar.StaticValueRequiredError as e:
            assert param in str(e), f"the error does not name the parameter {param!r}: {e}"
            return
        except symscalar.DynamicValueError:
            if param in support.BRANCHED_IN_PYTHON:
                return
            raise
        except Exception as e:  # noqa: BLE001 - e.g. torch's parser rejects this combination
            errors.append(f"{_describe(call)}: {e!r}"[:300])
            continue
        pytest.fail(f"{_name(func)}: a dynamic {param!r} was accepted ({_describe(call)})")
    pytest.fail(
        f"no sample of {_name(func)} raised StaticValueRequiredError for a dynamic {param!r}; "
        "errors: " + "; ".join(errors[:3])
        if errors
        else f"no valid sample of {_name(func)}"
    )


# ----------------------------------------------------------------------------------------
# The generated op table, and the per-op report


def _load_generator() -> Any:
    spec = importlib.util.spec_from_file_location("gen_op_table", ROOT / "scripts" / "gen_op_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ops_table_up_to_date() -> None:
    gen = _load_generator()
    table = gen.render_table()
    current = (ROOT / "docs" / "ops_table.md").read_text()
    assert current == table, "docs/ops_table.md is stale: run `PYTHONPATH=. .venv/bin/python scripts/gen_op_table.py`"
    readme = (ROOT / "README.md").read_text()
    assert "](docs/ops_table.md)" in readme, "README.md should link to docs/ops_table.md"
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("|---")]
    copied = [line for line in rows if line in readme.splitlines()]
    assert not copied, f"README.md carries {len(copied)} rows of the op table (link docs/ops_table.md instead)"


NOT_YET = sorted(
    {t for info in support.opinfos() if (t := support.opinfo_callable(info)) is not None} - set(SPELLINGS),
    key=_name,
)


@pytest.mark.parametrize("func", NOT_YET, ids=_name)
def test_op_not_in_library(func: Any) -> None:
    """An OpInfo op symscalar does not register: on a traced tensor it raises
    UnsupportedOperationError, or DynamicValueError where it needs tensor data (never runs
    eagerly, never fails obscurely), unless the tensor
    proxy answers it from static metadata (``Tensor.size``), which must then match eager."""
    for call in support.calls_for(func):
        if not isinstance(call, Call):
            continue
        if not any(isinstance(v, torch.Tensor) for v in support.leaves((call.args, call.kwargs))):
            continue  # torch runs a call without tensors before symscalar could see it
        try:
            expected = call.run()
        except Exception:  # noqa: BLE001, S112 - want a sample torch accepts
            continue
        f, tensors = support.jitted(func, call.args, call.kwargs)
        try:
            got = f(tensors)
        except (symscalar.UnsupportedOperationError, symscalar.DynamicValueError):
            return  # DynamicValueError: data-dependent (Tensor.item), declared out of scope
        except Exception as e:  # noqa: BLE001 - the failure to report
            pytest.fail(f"{_describe(call)}: expected UnsupportedOperationError, got {e!r}")
        assert_same(got, expected, _describe(call))
        return
    pytest.skip(f"no sample of {_name(func)} with a tensor operand that torch eager accepts")


def test_unsupported_spelling_raises() -> None:
    """An op outside the registry that the opaque torch call cannot run either (no meta kernel)
    raises UnsupportedOperationError; it never runs eagerly."""
    assert torch.cov not in symscalar.TORCH_FUNCTIONS
    f, tensors = support.jitted(torch.cov, (torch.ones(3, 4),), {})
    with pytest.raises(symscalar.UnsupportedOperationError, match=r"not run eagerly|was not run"):
        f(tensors)


@pytest.fixture(scope="module", autouse=True)
def report(request: pytest.FixtureRequest) -> Any:
    """After this module's tests: per-op counts (passed, passed with dynamic scalars, skipped
    by reason) and the OpInfos whose op symscalar does not support yet."""
    yield
    not_yet = sorted(
        info.name
        for info in support.opinfos()
        if (target := support.opinfo_callable(info)) is None or target not in symscalar.TORCH_FUNCTIONS
    )
    lines = ["", "OpInfo conformance (samples per torch spelling):"]
    totals: collections.Counter[str] = collections.Counter()
    for name in sorted(RESULTS):
        counts = RESULTS[name]
        totals.update({k.split(" (")[0] if k.startswith("skipped: declared") else k: v for k, v in counts.items()})
        lines.append(f"  {name:36s} " + ", ".join(f"{k}: {v}" for k, v in sorted(counts.items())))
    lines.append("  totals: " + ", ".join(f"{k}: {v}" for k, v in sorted(totals.items())))
    lines.append(f"  skipped: op not in symscalar yet: {len(not_yet)} OpInfos ({', '.join(not_yet)})")
    if PERMISSIVE:
        lines.append("  torch eager rejects, symscalar accepts:")
        lines += [f"    {p}" for p in PERMISSIVE]
    reporter = request.config.pluginmanager.get_plugin("terminalreporter")
    capture = request.config.pluginmanager.get_plugin("capturemanager")
    if reporter is not None and capture is not None and RESULTS:
        with capture.global_and_fixture_disabled():
            for line in lines:
                reporter.write_line(line)
