"""Write symscalar/_torch_namespaces.py: the signatures of torch.special, torch.linalg and torch.fft.

torch builds those namespaces from C builtins (``logsumexp = _add_docstr(_special.special_logsumexp, ...)``)
of modules that have no stub (``torch._C._special``, ``_linalg``, ``_fft``), so every function there is
``Any`` to every checker and a dynamic value in a static parameter (``torch.special.logsumexp(x, dim=n)``)
goes unseen. torch generates its other stubs from ``native_functions.yaml`` with torchgen
(``tools/pyi/gen_pyi.py``, not shipped); this script does the same for these namespaces, with
torchgen (shipped with torch; it needs PyYAML, which torch does not require, so the result is committed
and ``symscalar.torch_stubs`` reads it without torchgen). Run it after upgrading torch;
``tests/test_torch_stubs.py`` fails when the file is stale.

    python scripts/gen_torch_namespaces.py          # rewrite the file
    python scripts/gen_torch_namespaces.py --check  # exit 1 if stale
"""

from __future__ import annotations

import ast
import pathlib
import sys

import torchgen
from torchgen.api.python import signature
from torchgen.gen import parse_native_yaml

ROOT = pathlib.Path(__file__).resolve().parent.parent
OUT = ROOT / "symscalar" / "_torch_namespaces.py"
# torch module (relative to torch/) -> the torch._C module its functions come from
NAMESPACES = {"special/__init__.py": "_special", "linalg/__init__.py": "_linalg", "fft/__init__.py": "_fft"}
HEADER = '''"""The signatures of torch.special, torch.linalg and torch.fft, as torch's generator writes stubs.

Generated from torch's ``native_functions.yaml`` by ``python scripts/gen_torch_namespaces.py``; do not edit.
``symscalar.torch_stubs`` writes them into the stubs of those modules (``tests/test_torch_stubs.py`` fails
when this file is stale).
"""

# torch module (relative to torch/) -> {function: its signatures (more than one: overloads)}
SIGNATURES: dict[str, dict[str, tuple[str, ...]]] = {
'''


def builtins_of(source: str, c_module: str) -> dict[str, str]:
    """``name = _add_docstr(<c_module>.<builtin>, ...)`` assignments: name -> builtin."""
    out = {}
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        call = node.value
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "_add_docstr":
            first = call.args[0]
            if isinstance(first, ast.Attribute) and isinstance(first.value, ast.Name) and first.value.id == c_module:
                out[node.targets[0].id] = first.attr
    return out


def one_line(text: str, name: str) -> str:
    fn = ast.parse(text).body[0]
    assert isinstance(fn, ast.FunctionDef)
    fn.name = name
    return ast.unparse(fn).replace("\n    ...", " ...")


def signatures() -> dict[str, dict[str, tuple[str, ...]]]:
    native = pathlib.Path(torchgen.__file__).parent / "packaged" / "ATen" / "native"
    parsed = parse_native_yaml(str(native / "native_functions.yaml"), str(native / "tags.yaml"))
    by_name: dict[str, list[object]] = {}
    for f in parsed.native_functions:
        if f.python_module in ("special", "linalg", "fft") and "inplace" not in f.func.kind().name:
            by_name.setdefault(str(f.func.name.name), []).append(f)
    torch_dir = pathlib.Path(torchgen.__file__).parent.parent / "torch"
    out: dict[str, dict[str, tuple[str, ...]]] = {}
    for relative, c_module in NAMESPACES.items():
        table = {}
        for name, builtin in builtins_of((torch_dir / relative).read_text(), c_module).items():
            functional, with_out = [], {}
            for f in by_name.get(builtin, []):
                sig = signature(f, method=False, pyi=True)  # type: ignore[arg-type]
                if f.func.is_out_fn():  # type: ignore[attr-defined]
                    with_out[sig.signature_str_pyi(skip_outputs=True)] = sig.signature_str_pyi(skip_outputs=False)
                else:
                    functional.append(sig.signature_str_pyi(skip_outputs=True))
            # as gen_pyi: a functional signature and its out= variant are one signature with `out=None`
            texts = [with_out.pop(s, s) for s in functional] + list(with_out.values())
            unique = list(dict.fromkeys(one_line(t, name) for t in texts))
            if unique:
                table[name] = tuple(unique)
        out[relative] = table
    return out


def source() -> str:
    lines = [HEADER]
    for relative, table in signatures().items():
        lines.append(f"    {relative!r}: {{\n")
        for name, sigs in table.items():
            lines.append(f"        {name!r}: (\n")
            lines.extend(f"            {s!r},\n" for s in sigs)
            lines.append("        ),\n")
        lines.append("    },\n")
    lines.append("}\n")
    return "".join(lines)


if __name__ == "__main__":
    text = source()
    if sys.argv[1:] == ["--check"]:
        sys.exit(0 if OUT.exists() and OUT.read_text() == text else 1)
    OUT.write_text(text)
    print(f"wrote {OUT}")
