"""Generate the supported-op table from symscalar's registry.

The table is derived, never written by hand: the torch spellings and the static/dynamic
parameters come from ``symscalar.frontend.TORCH_FUNCTIONS`` / ``OPS`` and the handlers'
annotations; the primitives an op lowers to (and whether they have a vjp and an nvFuser
lowering) come from tracing the op on its OpInfo samples (``conformance/opinfo_support.py``).
``tests/test_opinfo_conformance.py`` checks that docs/ops_table.md is up to date, and that
README.md links to it instead of carrying a copy (a copy would go stale).

Usage:
    PYTHONPATH=. .venv/bin/python scripts/gen_op_table.py            # write docs/ops_table.md
    PYTHONPATH=. .venv/bin/python scripts/gen_op_table.py --check    # exit 1 if stale
"""

from __future__ import annotations

import argparse
import inspect
import pathlib
import sys
import typing
from collections.abc import Mapping
from typing import Any

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import symscalar  # noqa: E402 - after the path set-up above
from conformance import opinfo_support as support  # noqa: E402
from symscalar.frontend import OPS, TORCH_FUNCTIONS  # noqa: E402
from symscalar.nvfuser_lowering import NVFUSER_LOWERINGS  # noqa: E402
from symscalar.trace import PRIMITIVES, VJPS  # noqa: E402

TABLE_PATH = ROOT / "docs" / "ops_table.md"

_SHORT_PREFIXES = (("torch.nn.functional.", "F."), ("torch.Tensor.", "Tensor."))


def short_name(name: str) -> str:
    """``torch.Tensor.add`` -> ``Tensor.add``; ``torch.nn.functional.softmax`` -> ``F.softmax``."""
    for long, short in _SHORT_PREFIXES:
        if name.startswith(long):
            return short + name[len(long) :]
    return name


def _groups() -> list[list[Any]]:
    """Torch spellings that share one handler, each group sorted, groups sorted by op name."""
    by_handler: dict[int, list[Any]] = {}
    for func in support.registered_spellings():
        # one checked wrapper per spelling; spellings of one op share the function it wraps
        by_handler.setdefault(id(inspect.unwrap(TORCH_FUNCTIONS[func])), []).append(func)
    groups = [sorted(g, key=_spelling_order) for g in by_handler.values()]
    return sorted(groups, key=lambda g: (_op_name(g), support.spelling_name(g[0])))


def _spelling_order(func: Any) -> tuple[int, str]:
    name = support.spelling_name(func)
    rank = 0 if name.count(".") == 1 else 2 if "__" in name else 1
    return rank, name


def _op_name(group: list[Any]) -> str:
    """The op's name: the spelling that names a ``symscalar.ops`` function, else the first."""
    stems = [support.op_stem(support.spelling_name(f)) for f in group]
    return next((s for s in stems if hasattr(symscalar.ops, s)), stems[0])


def _parameters(func: Any) -> str:
    handler = inspect.unwrap(TORCH_FUNCTIONS[func])
    static = set(OPS[support.spelling_name(func)].static)
    parts: list[str] = []
    star_done = False
    for p in inspect.signature(handler).parameters.values():
        if p.kind is p.VAR_KEYWORD:
            continue
        if p.kind is p.KEYWORD_ONLY and not star_done:
            parts.append("\\*")
            star_done = True
        text = f"\\*{p.name}" if p.kind is p.VAR_POSITIONAL else p.name
        star_done = star_done or p.kind is p.VAR_POSITIONAL
        parts.append(f"**{text}**" if p.name in static else text)
    return ", ".join(parts)


def _primitives(group: list[Any]) -> set[str] | str:
    """Primitives in the traces of the group's passing OpInfo samples, or why there are none:
    ``"refused"`` (every sample raised UnsupportedOperationError) or ``"?"`` (none traced)."""
    found: set[str] = set()
    traced = refused = False
    for func in group:
        for call in support.calls_for(func):
            if not isinstance(call, support.Call):
                continue
            try:
                f, _ = support.run_static(call)
            except symscalar.UnsupportedOperationError:
                refused = True
                continue
            except Exception:  # noqa: BLE001, S112 - the conformance test reports failures
                continue
            traced = True
            found.update(eqn.prim.name for eqn in f.last_trace().eqns)
    if traced:
        return found
    return "refused" if refused else "?"


def _has(prims: set[str] | str, table: Mapping[Any, Any]) -> str:
    if isinstance(prims, str):
        return "—" if prims == "refused" else prims
    if not prims:
        return "n/a"
    missing = sorted(p for p in prims if PRIMITIVES[p] not in table)
    if not missing:
        return "yes"
    if len(missing) == len(prims):
        return "no"
    return "partial (no " + ", ".join(missing) + ")"


def _dynamic_column(func: Any) -> str:
    params = support.dynamic_params(func)
    return ", ".join(f"{name}: {hint}" for name, hint in params.items()) or "—"


def _user_ops() -> list[str]:
    rows = []
    for name in sorted(n for n in OPS if n.startswith("symscalar.ops.")):
        fn = getattr(symscalar.ops, name.rsplit(".", 1)[-1], None)
        if fn is None:
            continue
        hints = typing.get_type_hints(inspect.unwrap(fn))
        static = set(OPS[name].static)
        params = ", ".join(f"**{p}**" if p in static else p for p in OPS[name].params)
        dynamic = ", ".join(
            f"{p}: {support.hint_name(hints[p])}"
            for p in OPS[name].params
            if p in hints and p not in static and support.accepts_dynamic(hints[p])
        )
        rows.append(f"| `{name.removeprefix('symscalar.')}` | {params} | {dynamic or '—'} |")
    return rows


def render_table() -> str:
    """The markdown table of every supported op (the content of docs/ops_table.md)."""
    lines = [
        "<!-- Generated by scripts/gen_op_table.py from symscalar's registry; do not edit. -->",
        "",
        "### Torch functions symscalar traces",
        "",
        "Parameters in **bold** are static: a dynamic value there raises "
        "`StaticValueRequiredError` at trace time. *Dynamic-capable* parameters accept "
        "`DynamicInt`/`DynamicFloat`/`DynamicBool` values, which stay runtime inputs of the "
        "compiled program. *Primitives* are those seen when tracing the op on its OpInfo "
        "samples; *vjp* and *nvFuser* say whether they all have a reverse-mode rule and an "
        "nvFuser lowering (*?*: no sample traced; see tests/test_opinfo_conformance.py).",
        "",
        "| op | torch spellings | parameters | dynamic-capable | primitives | vjp | nvFuser |",
        "|---|---|---|---|---|---|---|",
    ]
    for group in _groups():
        spellings = ", ".join(f"`{short_name(support.spelling_name(f))}`" for f in group)
        prims = _primitives(group)
        if prims == "refused":
            prim_text = "raises UnsupportedOperationError"
        elif isinstance(prims, str):
            prim_text = prims
        else:
            prim_text = ", ".join(sorted(prims)) or "— (no-op)"
        lines.append(
            f"| {_op_name(group)} | {spellings} | {_parameters(group[0])} | "
            f"{_dynamic_column(group[0])} | {prim_text} | {_has(prims, VJPS)} | "
            f"{_has(prims, NVFUSER_LOWERINGS)} |"
        )
    lines += [
        "",
        "### `symscalar.ops`",
        "",
        "| op | parameters | dynamic-capable |",
        "|---|---|---|",
        *_user_ops(),
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Write docs/ops_table.md (or, with --check, say whether it is stale)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/ops_table.md is stale")
    options = parser.parse_args(argv)
    table = render_table()
    if options.check:
        stale = not TABLE_PATH.exists() or TABLE_PATH.read_text() != table
        print("docs/ops_table.md is stale" if stale else "docs/ops_table.md is up to date")
        return 1 if stale else 0
    TABLE_PATH.write_text(table)
    print(f"wrote {TABLE_PATH.relative_to(ROOT)} ({len(_groups())} ops)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
