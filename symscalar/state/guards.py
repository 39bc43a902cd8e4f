"""The per-entry state guard and write-back, as generated code.

``make_entry`` generates the callable a cache entry holds: it reads each captured tensor by its
path, checks the metadata, module identities and flags the trace assumed (a miss, never a stale
value, when anything differs), runs the program and writes the state back with eager's semantics.
"""

from __future__ import annotations

import dataclasses
import functools
import types as pytypes
from collections.abc import Callable, Sequence
from typing import Any

import torch

from symscalar.errors import UnsupportedOperationError
from symscalar.generated import exec_generated
from symscalar.state.paths import _STEP, Captured, Path, Roots

# ----------------------------------------------------------------------------------------
# The per-entry state guard and write-back, as generated code


@dataclasses.dataclass
class StateWrite:
    """One state write replayed after every call with the program's k-th state output."""

    how: str  # "copy": in place into captured tensor ``target``; "set": setattr; "buffer"/"buffer_np": set_buffer
    target: Any  # captured index ("copy") or the owner object ("set", "buffer")
    name: str  # attribute name ("set", "buffer")
    detach: bool  # the value depends on nothing that requires grad: store it detached, as eager


def make_entry(
    run: Callable[..., Any],
    roots: Roots,
    captured: list[Captured],
    modules: list[tuple[torch.nn.Module, Path | None]],
    guard: Callable[..., bool] | None,
    writes: list[StateWrite],
    miss: object,
    label: str,
    aliases: Sequence[tuple[Path, Path]] = (),
    attributes: Sequence[Any] = (),
    root_values: Sequence[tuple[int, Any]] = (),
    same: Callable[[Any, Any], bool] | None = None,
) -> Callable[..., Any]:
    """Generate the callable stored in the cache: check the state the trace assumed, run the
    program with the captured tensors read now, write state back; ``miss`` when a check fails.

    Args:
        run: the compiled program, called with the call's inputs then the captured tensors.
        captured: in the order of the trace's captured inputs.
        modules: modules whose identity and ``training`` flag the trace depends on.
        guard: ``specialize`` guards over the trace's inputs, or None.
        writes: replayed in order with the run's second result (the state outputs).
        aliases: (other path, shortest path) pairs that must still reach one object (tied
            weights, a shared submodule; see ``Walk.aliases``).
        attributes: objects (``obj``, ``path`` or None, ``values``: (name, value) pairs) whose
            ``__dict__`` must still hold those plain values; ``root_values``: (root index,
            value) of globals and cells; compared by identity, then by ``same`` (see
            ``symscalar/_jit/pystate.py``).
    """
    _check_captured_unshared(captured, writes, label)
    ns: dict[str, Any] = {
        "_ss_run": run,
        "_ss_MISS": miss,
        "_ss_guard": guard,
        "_ss_copy_into": copy_into,
        "_ss_unaliased": functools.partial(check_unaliased, label),
        "_ss_setattr": setattr,
        "_ss_set_buffer": set_buffer,
    }
    for i, root in enumerate(roots.roots):
        ns[f"_ss_o{i}"] = root.binding
    lines: list[str] = []
    checks: list[str] = []
    bound: dict[tuple[int, tuple[tuple[str, Any], ...]], str] = {}

    def read(path: Path) -> str:
        """Source of a local holding the value at ``path``, binding prefixes once."""
        key = (path.root, path.steps)
        if key in bound:
            return bound[key]
        if not path.steps:
            source = roots.roots[path.root].source
        else:
            parent = read(Path(path.root, path.steps[:-1]))
            where, name = path.steps[-1]
            source = parent + _STEP[where].format(name)
        local = f"_v{len(bound)}"
        bound[key] = local
        lines.append(f"        {local} = {source}")
        return local

    for j, (module, path) in enumerate(modules):
        ns[f"_ss_M{j}"] = module
        ref = read(path) if path is not None else f"_ss_M{j}"
        if path is not None:
            checks.append(f"{ref} is _ss_M{j}")  # a replaced submodule is a different program
        checks.append(f"{ref}.training is {module.training}")
        # what the module holds: a parameter, buffer or submodule added (Sequential.append,
        # a bias given to Linear(bias=False)) or an empty slot filled (bias None -> Parameter)
        # changes what forward computes even though nothing the trace read changed
        for table in ("_parameters", "_buffers", "_modules"):
            held = getattr(module, table)
            checks.append(f"len({ref}.{table}) == {len(held)}")
            checks.extend(f"{ref}.{table}[{name!r}] is None" for name, v in held.items() if v is None)
    names = []
    for j, cap in enumerate(captured):
        t = cap.tensor
        ns[f"_ss_C{j}"] = t
        ns[f"_ss_S{j}"], ns[f"_ss_D{j}"], ns[f"_ss_V{j}"] = t.shape, t.dtype, t.device
        ref = read(cap.path) if cap.path is not None else f"_ss_C{j}"
        names.append(ref)
        checks.append(
            f"{ref}.dtype is _ss_D{j} and {ref}.requires_grad is {t.requires_grad} and "
            f"{ref}.shape == _ss_S{j} and {ref}.device == _ss_V{j}"
        )
    checks.extend(f"{read(other)} is {read(path)}" for other, path in aliases)
    ns["_ss_same"] = same
    n_values = 0

    def holds(source: str, value: Any) -> str:
        nonlocal n_values
        if value is None or type(value) is bool:
            return f"{source} is {value!r}"
        ns[f"_ss_A{n_values}"] = value
        n_values += 1
        return f"({source} is _ss_A{n_values - 1} or _ss_same({source}, _ss_A{n_values - 1}))"

    for k, held in enumerate(attributes):
        ns[f"_ss_G{k}"] = held.obj
        ref = read(held.path) if held.path is not None else f"_ss_G{k}"
        lines.append(f"        _d{k} = {ref}.__dict__")
        checks.extend(holds(f"_d{k}[{name!r}]", value) for name, value in held.values)
    checks.extend(holds(read(Path(index, ())), value) for index, value in root_values)
    if not (lines or checks or guard or writes or names):  # nothing to check: the program itself
        return _unchecked_entry(run)
    body = "\n".join(lines)
    test = " and\n            ".join(checks) or "True"
    extra = "".join(f", {n}" for n in names)
    guard_src = f"    if not _ss_guard(*_ss_a{extra}):\n        return _ss_MISS\n" if guard else ""
    write_src = ""
    if writes:
        write_src = "    _ss_out, _ss_new = _ss_out\n"
        copied = [names[w.target] for w in writes if w.how == "copy"]
        if copied:  # an argument seeing an in-place write through shared memory: refused
            write_src += f"    _ss_unaliased(_ss_a, ({''.join(f'{n}, ' for n in copied)}))\n"
        for k, write in enumerate(writes):
            value = f"_ss_new[{k}].detach()" if write.detach else f"_ss_new[{k}]"
            if write.how == "copy":
                write_src += f"    _ss_copy_into({names[write.target]}, {value})\n"
            else:
                ns[f"_ss_W{k}"] = write.target
                if write.how == "set":
                    write_src += f"    _ss_setattr(_ss_W{k}, {write.name!r}, {value})\n"
                else:  # a registered buffer, persistent ("buffer") or not ("buffer_np")
                    persistent = write.how == "buffer"
                    write_src += f"    _ss_set_buffer(_ss_W{k}, {write.name!r}, {value}, {persistent})\n"
    source = f"""
def _ss_entry(*_ss_a):
    try:
{body or "        pass"}
        if not ({test}):
            return _ss_MISS
    except (AttributeError, KeyError, IndexError, TypeError, ValueError):
        return _ss_MISS
{guard_src}    _ss_out = _ss_run(*_ss_a{extra})
{write_src}    return _ss_out

def _ss_accepts(*_ss_a):
    try:
{body or "        pass"}
        if not ({test}):
            return False
    except (AttributeError, KeyError, IndexError, TypeError, ValueError):
        return False
{guard_src.replace("_ss_MISS", "False")}    return True
"""
    exec_generated(source, f"entry of {label}", ns)
    entry: Callable[..., Any] = ns["_ss_entry"]
    entry.__source__ = source  # type: ignore[attr-defined]
    # the checks alone, without running the program: for would_trace()
    entry.accepts = ns["_ss_accepts"]  # type: ignore[attr-defined]
    return entry


def _unchecked_entry(run: Callable[..., Any]) -> Callable[..., Any]:
    """An entry whose trace read nothing from outside: the program, with ``accepts`` (always
    true). A wrapper only when ``run`` cannot hold the attribute or is shared."""
    entry = run
    if not isinstance(run, pytypes.FunctionType) or hasattr(run, "accepts"):
        entry = functools.wraps(run)(lambda *args: run(*args))
    entry.accepts = _always  # type: ignore[attr-defined]
    return entry


def _always(*args: Any) -> bool:
    return True


def set_buffer(module: torch.nn.Module, name: str, value: torch.Tensor, persistent: bool) -> None:
    """Replay of ``register_buffer(name, traced value, persistent)`` done by the traced
    function: a buffer again (a plain ``setattr`` would make a new name a plain attribute,
    missing from ``state_dict``), with the persistence it was registered with."""
    module.register_buffer(name, value, persistent=persistent)


def _check_captured_unshared(captured: list[Captured], writes: list[StateWrite], label: str) -> None:
    """Refuse a program that updates a captured tensor in place while it also reads another
    captured tensor sharing its memory (two buffers, one a view of the other): eager's read sees
    the update, the program's (out of place) would not. Checked once, when the entry is made."""
    written = {w.target for w in writes if w.how == "copy"}
    if not written:
        return
    ptrs = {captured[i].tensor.untyped_storage().data_ptr(): i for i in written}
    for j, cap in enumerate(captured):
        storage = cap.tensor.untyped_storage()
        i = ptrs.get(storage.data_ptr())
        if i is not None and i != j and storage.nbytes():
            raise UnsupportedOperationError(
                f"{label} updates a tensor it reads from outside in place ({_captured_name(captured[i])}) and reads "
                f"another that shares its memory ({_captured_name(cap)}, a view of it or of its storage): eager's "
                "read would see the update, the program's would not. Give the two tensors storage of their own "
                "(.clone() one of them), or update and read one tensor."
            )


def _captured_name(cap: Captured) -> str:
    if cap.path is None:
        return "a tensor held by reference"
    return ".".join(str(name) for _, name in cap.path.steps) or "an argument"


def check_unaliased(label: str, args: tuple[Any, ...], targets: tuple[torch.Tensor, ...]) -> None:
    """Refuse a call passing a tensor that shares memory with a captured tensor the program
    updates in place (a buffer, or a view of it, passed as an argument too): eager's update is
    seen through the argument, the program (which updates it out of place) reads it unchanged."""
    written = {t.untyped_storage().data_ptr() for t in targets if t.untyped_storage().nbytes()}
    for i, a in enumerate(args):
        if isinstance(a, torch.Tensor) and a.untyped_storage().data_ptr() in written:
            raise UnsupportedOperationError(
                f"{label}: program input {i} (a tensor argument) shares memory with a tensor the function updates in "
                "place (a buffer or other state it reads from outside, or a view of one): eager's update would be "
                "seen through the argument, the program's would not. Pass a copy (.clone()), or read the state "
                "inside the function instead of passing it."
            )


def copy_into(target: torch.Tensor, value: torch.Tensor) -> None:
    """An in-place write to state, replayed after a call: under no_grad unless a gradient can
    flow through it (then eager's semantics: the target joins the graph)."""
    if value.requires_grad and torch.is_grad_enabled():
        target.copy_(value)
        return
    with torch.no_grad():
        target.copy_(value)
