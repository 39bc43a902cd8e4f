"""What a traced function reads and writes outside its arguments, kept honest on every call.

A function traced by ``symscalar.jit`` may read tensors it was not passed (a module's
parameters and buffers, a closed-over or global tensor), may depend on modules (their
``training`` flag, their hooks), and may write state (``self.avg = 0.9 * self.avg + ...``).
A cache entry is valid only while what its trace assumed still holds, so this module

- finds, for every captured tensor, a *path* from the jitted callable (``self._modules['fc']
  ._parameters['weight']``, a closure cell, a global) and generates the entry's per-call
  *state guard*: it reads each captured tensor by path (a replaced parameter is seen), checks
  its shape, dtype, device and requires_grad against the trace, checks the identity and
  ``training`` flag of every module the trace depends on, and answers "miss" (retrace) when
  anything differs — never a stale value;
- watches tracing: it snapshots the state reachable from the callable, records the modules
  called, refuses hooks it cannot honour, turns an attribute assignment of a traced tensor
  into a *write-back* (an extra program output assigned after every call) and restores the
  snapshot, so tracing itself has no side effect and no ``TensorProxy`` is left anywhere;
- writes the state back after every call with eager's semantics.
"""

from __future__ import annotations

import dataclasses
import functools
import types as pytypes
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch.nn.modules import module as nn_module
from torch.utils.hooks import RemovableHandle

from symscalar.errors import UnsupportedOperationError
from symscalar.tracing import TensorProxy, TraceBuilder
from symscalar.types import current_tracer

__all__ = ["Roots", "TraceWatch", "make_entry", "HookWatch", "hook_epoch"]

_MISSING = object()
# A path step: (where, name); rendered by _STEP into source reading it from the previous value.
_STEP = {
    "module": "._modules[{!r}]",
    "param": "._parameters[{!r}]",
    "buffer": "._buffers[{!r}]",
    "attr": ".__dict__[{!r}]",
    "item": "[{!r}]",
}


def hook_epoch() -> int:
    """A number that changes whenever any hook is registered anywhere in torch (every
    ``register_*hook`` returns a ``RemovableHandle``, which takes the next id): jit compares it
    on every call and re-checks the hooks of the modules it traced only when it moved."""
    return RemovableHandle.next_id


# ----------------------------------------------------------------------------------------
# Roots and paths


@dataclasses.dataclass(frozen=True)
class Root:
    """Where a path starts: an object the jitted callable holds."""

    source: str  # expression reading the root's current value in generated code
    binding: Any  # the object bound to the name used in ``source``
    label: str  # for messages: "the jitted module", "closure variable 'w'", "global 'model'"
    kind: str  # "const" (the binding itself), "cell" (its contents), "global" (binding[name])
    name: str = ""  # the global's name

    def read(self) -> Any:
        """The root's current value; KeyError/ValueError for a deleted global, empty cell."""
        if self.kind == "cell":
            return self.binding.cell_contents
        return self.binding[self.name] if self.kind == "global" else self.binding


@dataclasses.dataclass(frozen=True)
class Path:
    """How to reach a tensor or module from a root, one step at a time."""

    root: int
    steps: tuple[tuple[str, Any], ...]  # (where, name or key)

    def child(self, where: str, name: Any) -> Path:
        return Path(self.root, self.steps + ((where, name),))


class Roots:
    """The roots of a jitted callable: the module itself (``jit(module)``), a bound method's
    ``self``, a partial's arguments, the function's closure cells and the globals it names."""

    def __init__(self, fn: Any) -> None:
        self.roots: list[Root] = []
        self._add(fn, "the jitted callable")

    def _add(self, fn: Any, label: str) -> None:
        if isinstance(fn, torch.nn.Module):
            self._const(fn, label)
            fn = getattr(type(fn), "forward", None)  # the globals forward reads
        if isinstance(fn, pytypes.MethodType):
            self._const(fn.__self__, f"{type(fn.__self__).__name__} (self of {fn.__func__.__qualname__})")
            fn = fn.__func__
        if isinstance(fn, functools.partial):
            for i, a in enumerate(fn.args):
                self._const(a, f"argument {i} of the partial")
            for k, a in fn.keywords.items():
                self._const(a, f"keyword {k!r} of the partial")
            self._add(fn.func, label)
            return
        code = getattr(fn, "__code__", None)
        if code is None:
            return
        for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
            self.roots.append(Root(f"_ss_o{len(self.roots)}.cell_contents", cell,
                                   f"closure variable {name!r}", "cell"))
        globals_ = getattr(fn, "__globals__", {})
        for name in sorted(_global_names(code)):
            if name in globals_:
                self.roots.append(Root(f"_ss_o{len(self.roots)}[{name!r}]", globals_,
                                       f"global {name!r}", "global", name))

    def _const(self, obj: Any, label: str) -> None:
        self.roots.append(Root(f"_ss_o{len(self.roots)}", obj, label, "const"))

    def values(self) -> Iterator[tuple[int, Any]]:
        for i, root in enumerate(self.roots):
            try:
                yield i, root.read()
            except (KeyError, ValueError):  # a deleted global, an empty cell
                continue

    def walk(self) -> tuple[dict[int, tuple[torch.Tensor, Path]], dict[int, tuple[torch.nn.Module, Path]], list[Any]]:
        """Every tensor and module reachable from the roots, each with its shortest path, and
        the plain objects (a bound method's ``self``) whose attributes the function may write."""
        tensors: dict[int, tuple[torch.Tensor, Path]] = {}
        modules: dict[int, tuple[torch.nn.Module, Path]] = {}
        objects: list[Any] = []
        queue: list[tuple[Any, Path]] = []
        for i, value in self.values():
            path = Path(i, ())
            if isinstance(value, (torch.Tensor, torch.nn.Module)):
                queue.append((value, path))
            elif isinstance(value, (list, tuple, dict)):  # a list of layers, a dict of weights
                items = value.items() if isinstance(value, dict) else enumerate(value)
                queue += [(v, path.child("item", k)) for k, v in items
                          if isinstance(v, (torch.Tensor, torch.nn.Module)) and isinstance(k, (int, str))]
            elif self.roots[i].kind == "const" and _is_plain_object(value):
                objects.append(value)
                for name, attr in vars(value).items():
                    if isinstance(attr, (torch.Tensor, torch.nn.Module)):
                        queue.append((attr, path.child("attr", name)))
        for value, path in queue:  # breadth first: the queue grows while it is read
            if isinstance(value, torch.Tensor):
                tensors.setdefault(id(value), (value, path))
                continue
            if id(value) in modules:
                continue
            modules[id(value)] = (value, path)
            for where, table in (("param", value._parameters), ("buffer", value._buffers), ("module", value._modules)):
                for name, item in table.items():
                    if item is not None:
                        queue.append((item, path.child(where, name)))
            for name, attr in vars(value).items():
                if isinstance(attr, torch.Tensor) and not name.startswith("_"):
                    queue.append((attr, path.child("attr", name)))
        return tensors, modules, objects


def _is_plain_object(value: Any) -> bool:
    """An instance whose attributes a bound method reads (not a class, module or function)."""
    return hasattr(value, "__dict__") and not isinstance(
        value, (type, pytypes.ModuleType, pytypes.FunctionType, pytypes.BuiltinFunctionType)
    )


def _global_names(code: pytypes.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, pytypes.CodeType):
            names |= _global_names(const)
    return names


# ----------------------------------------------------------------------------------------
# Watching a trace: snapshot, hooks, writes, restore


@dataclasses.dataclass
class AttributeWrite:
    """``owner.name = value`` done by the traced function with a traced tensor: replayed after
    every call with ``setattr`` (eager's semantics: a buffer stays a buffer)."""

    owner: Any
    name: str
    value: TensorProxy


def describe_module(module: torch.nn.Module, names: dict[int, str]) -> str:
    name = names.get(id(module))
    return f"{type(module).__name__} {name!r}" if name else type(module).__name__


def hook_names(hooks: dict[int, Any]) -> str:
    return ", ".join(getattr(h, "__qualname__", repr(h)) for h in hooks.values())


_MODULE_HOOKS = ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks")
_GLOBAL_HOOKS = {
    "register_module_forward_pre_hook": "_global_forward_pre_hooks",
    "register_module_forward_hook": "_global_forward_hooks",
    "register_module_full_backward_pre_hook": "_global_backward_pre_hooks",
    "register_module_full_backward_hook": "_global_backward_hooks",
}


def refused_hooks(module: torch.nn.Module, top: torch.nn.Module | None, names: dict[int, str]) -> str | None:
    """Why ``module``'s hooks cannot be honoured, or None. The jitted module's own forward
    (pre-)hooks run eagerly around the compiled program; every other hook would run once, at
    trace time, on traced values."""
    for attr in _MODULE_HOOKS:
        hooks = getattr(module, attr)
        if not hooks or (module is top and attr in ("_forward_pre_hooks", "_forward_hooks")):
            continue
        kind = attr.strip("_").replace("_hooks", " hook").replace("_", " ")
        where = "the jitted module" if module is top else f"submodule {describe_module(module, names)}"
        return (
            f"{where} has a {kind} ({hook_names(hooks)}); symscalar.jit runs the forward "
            "(pre-)hooks of the jitted module itself around the program on every call, but cannot "
            "honour hooks of submodules or backward hooks: they would run once, while tracing, on "
            "traced values. Fix: remove the hook (handle.remove()), or call the hooked module "
            "outside the jitted function."
        )
    for register, attr in _GLOBAL_HOOKS.items():
        hooks = {k: h for k, h in getattr(nn_module, attr).items() if not isinstance(h, _Recorder)}
        if hooks:
            return (
                f"a global module hook is registered with torch.nn.modules.module.{register} "
                f"({hook_names(hooks)}); it would run once, while tracing, on traced values. Fix: "
                "remove it while calling jitted functions that call modules."
            )
    return None


class _Recorder:
    """A global forward pre-hook installed while tracing: it records every module the traced
    function calls and refuses, at once, a module whose hooks cannot be honoured."""

    def __init__(self, watch: TraceWatch) -> None:
        self.watch = watch

    def __call__(self, module: torch.nn.Module, args: Any) -> None:
        if current_tracer.get() is not self.watch.builder:
            return  # another thread, or an eager call
        self.watch.called(module)


class TraceWatch:
    """Context manager around tracing: snapshot reachable state, record called modules, turn
    writes of traced tensors into ``AttributeWrite``s, restore the snapshot, refuse what cannot
    be honoured."""

    def __init__(self, roots: Roots, builder: TraceBuilder, top: torch.nn.Module | None) -> None:
        self.roots = roots
        self.builder = builder
        self.top = top
        self.tensors, self.modules, self.objects = roots.walk()
        self.names = _module_names(self.modules)
        self.used_modules: dict[int, torch.nn.Module] = {}
        self.writes: list[AttributeWrite] = []
        self._saved: dict[int, tuple[Any, list[tuple[dict[str, Any], dict[str, Any]]]]] = {}
        self._cells = [(r.binding, r.source) for r in roots.roots if r.source.endswith(".cell_contents")]
        self._cell_values = [c.cell_contents if _cell_full(c) else _MISSING for c, _ in self._cells]
        self._tensor_meta = {i: _meta(t) + (t._version,) for i, (t, _) in self.tensors.items()}
        self._handle: RemovableHandle | None = None
        self._containers: list[tuple[Any, Any]] = []

    # snapshot -------------------------------------------------------------------------------

    def _save(self, obj: Any) -> None:
        if id(obj) in self._saved:
            return
        tables = [vars(obj)]
        if isinstance(obj, torch.nn.Module):
            tables += [obj._parameters, obj._buffers, obj._modules]
        self._saved[id(obj)] = (obj, [(t, dict(t)) for t in tables])
        own = {id(t) for t in tables}
        for value in vars(obj).values():  # containers the function may fill (a list cache)
            if isinstance(value, (list, dict)) and id(value) not in own:
                self._containers.append((value, value.copy()))

    def called(self, module: torch.nn.Module) -> None:
        self._save(module)
        self.used_modules[id(module)] = module
        reason = refused_hooks(module, self.top, self.names)
        if reason:
            raise UnsupportedOperationError(reason)

    def __enter__(self) -> TraceWatch:
        for module, _ in self.modules.values():
            self._save(module)
        for obj in self.objects:
            self._save(obj)
        if self.top is not None:
            self.called(self.top)
        self._handle = nn_module.register_module_forward_pre_hook(_Recorder(self))
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        assert self._handle is not None
        self._handle.remove()
        problems = self._restore()
        if exc_type is None and problems:
            raise UnsupportedOperationError(problems[0])

    # restore ---------------------------------------------------------------------------------

    def _restore(self) -> list[str]:
        """Put back every attribute the traced function changed; collect the writes of traced
        tensors and the problems (writes that cannot be replayed)."""
        problems: list[str] = []
        writes: dict[tuple[int, str], AttributeWrite] = {}
        for obj, tables in self._saved.values():
            owner = self._owner_name(obj)
            own_tables = {id(t) for t, _ in tables}
            for table, saved in tables:
                for name in set(table) | set(saved):
                    new, old = table.get(name, _MISSING), saved.get(name, _MISSING)
                    if new is old:
                        if id(new) not in own_tables:
                            problems += _proxies_inside(new, f"{owner}.{name}")
                        continue
                    if new is _MISSING:
                        table[name] = old
                        problems.append(
                            f"the traced function deleted {owner}.{name}; symscalar.jit runs the "
                            "function's Python once, so the deletion would not happen on later "
                            "calls. Fix: delete it outside the jitted function."
                        )
                        continue
                    if isinstance(new, TensorProxy) and new._tracer is self.builder:
                        writes[(id(obj), name)] = AttributeWrite(obj, name, new)
                    elif isinstance(new, (torch.Tensor, torch.nn.Module)) and not isinstance(new, TensorProxy):
                        continue  # built from static values only: the same on every call, kept
                    else:
                        problems.append(_python_write_message(owner, name, old, new))
                    if old is _MISSING:
                        del table[name]
                    else:
                        table[name] = old
        for container, saved_items in self._containers:
            items = container.values() if isinstance(container, dict) else container
            if any(isinstance(v, TensorProxy) for v in items):
                container.clear()
                if isinstance(container, list):
                    container.extend(saved_items)
                else:
                    container.update(saved_items)
        for (cell, source), old in zip(self._cells, self._cell_values):
            new = cell.cell_contents if _cell_full(cell) else _MISSING
            if new is not old:
                cell.cell_contents = old
                label = next(r.label for r in self.roots.roots if r.source == source)
                problems.append(
                    f"the traced function rebinds {label} (nonlocal); symscalar.jit runs the "
                    "function's Python once, so later calls would not rebind it. Fix: return "
                    "the value and assign it outside the jitted function."
                )
        for i, (tensor, path) in self.tensors.items():
            if _meta(tensor) + (tensor._version,) != self._tensor_meta[i]:
                problems.append(
                    f"the traced function changed the tensor {self.path_name(path)} eagerly while "
                    "tracing (an in-place op, .data or requires_grad_ on a tensor read from "
                    "outside): it would happen once, not on every call. Fix: do it outside the "
                    "jitted function, or assign the new value (self.x = ...) so jit replays it."
                )
        self.writes = list(writes.values())
        return problems

    def _owner_name(self, obj: Any) -> str:
        if isinstance(obj, torch.nn.Module):
            return f"{type(obj).__name__}" + (f" {self.names[id(obj)]!r}" if self.names.get(id(obj)) else "")
        return type(obj).__name__

    def path_name(self, path: Path) -> str:
        text = self.roots.roots[path.root].label
        for where, name in path.steps:
            text += f"[{name!r}]" if where == "item" else f".{name}"
        return text


def _proxies_inside(value: Any, where: str) -> list[str]:
    """A container on a module (a list used as a KV cache) that the traced function filled
    with traced tensors: refused, the proxies would outlive the trace."""
    if isinstance(value, (list, dict, tuple)):
        items = value.values() if isinstance(value, dict) else value
        if any(isinstance(v, TensorProxy) for v in items):
            return [
                f"the traced function stored a traced tensor inside {where} (a "
                f"{type(value).__name__}); only direct attribute assignment (self.x = tensor) is "
                "replayed after each call. Fix: assign a tensor attribute or buffer (e.g. "
                "self.cache = torch.cat([self.cache, new])), or return the value."
            ]
    return []


def _python_write_message(owner: str, name: str, old: Any, new: Any) -> str:
    return (
        f"the traced function set {owner}.{name} = {new!r} (was "
        f"{'unset' if old is _MISSING else repr(old)}); symscalar.jit runs the function's Python "
        "once, at trace time, so later calls would not repeat this write. Fix: update Python "
        "state outside the jitted function, or keep the value in a tensor buffer."
    )


def _cell_full(cell: Any) -> bool:
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


def _meta(t: torch.Tensor) -> tuple[Any, ...]:
    return (t.shape, t.dtype, t.device, t.requires_grad)


def _module_names(modules: dict[int, tuple[torch.nn.Module, Path]]) -> dict[int, str]:
    return {i: ".".join(str(name) for _, name in path.steps) for i, (_, path) in modules.items()}


# ----------------------------------------------------------------------------------------
# The per-entry state guard and write-back, as generated code


@dataclasses.dataclass
class StateWrite:
    """One state write replayed after every call with the program's k-th state output."""

    how: str  # "copy": in place into captured tensor number ``target``; "set": setattr
    target: Any  # captured index ("copy") or the owner object ("set")
    name: str  # attribute name ("set")
    detach: bool  # the value depends on nothing that requires grad: store it detached, as eager


@dataclasses.dataclass
class Captured:
    """One captured tensor: read by path when it has one, else held by reference."""

    tensor: torch.Tensor
    path: Path | None


def make_entry(
    run: Callable[..., Any],
    roots: Roots,
    captured: list[Captured],
    modules: list[tuple[torch.nn.Module, Path | None]],
    guard: Callable[..., bool] | None,
    writes: list[StateWrite],
    miss: object,
    label: str,
) -> Callable[..., Any]:
    """Generate the callable stored in the cache: check the state the trace assumed, run the
    program with the captured tensors read now, write state back; ``miss`` when a check fails.

    Args:
        run: the compiled program, called with the call's inputs then the captured tensors.
        captured: in the order of the trace's captured inputs.
        modules: modules whose identity and ``training`` flag the trace depends on.
        guard: ``specialize`` guards over the trace's inputs, or None.
        writes: replayed in order with the run's second result (the state outputs).
    """
    ns: dict[str, Any] = {"_ss_run": run, "_ss_MISS": miss, "_ss_guard": guard,
                          "_ss_copy_into": copy_into, "_ss_setattr": setattr}
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
    if not (lines or checks or guard or writes or names):  # nothing to check: the program itself
        return _unchecked_entry(run)
    body = "\n".join(lines)
    test = " and\n            ".join(checks) or "True"
    extra = "".join(f", {n}" for n in names)
    guard_src = f"    if not _ss_guard(*_ss_a{extra}):\n        return _ss_MISS\n" if guard else ""
    write_src = ""
    if writes:
        write_src = "    _ss_out, _ss_new = _ss_out\n"
        for k, write in enumerate(writes):
            value = f"_ss_new[{k}].detach()" if write.detach else f"_ss_new[{k}]"
            if write.how == "copy":
                write_src += f"    _ss_copy_into({names[write.target]}, {value})\n"
            else:
                ns[f"_ss_W{k}"] = write.target
                write_src += f"    _ss_setattr(_ss_W{k}, {write.name!r}, {value})\n"
    source = f"""
def _ss_entry(*_ss_a):
    try:
{body or "        pass"}
        if not ({test}):
            return _ss_MISS
    except (AttributeError, KeyError, ValueError):
        return _ss_MISS
{guard_src}    _ss_out = _ss_run(*_ss_a{extra})
{write_src}    return _ss_out

def _ss_accepts(*_ss_a):
    try:
{body or "        pass"}
        if not ({test}):
            return False
    except (AttributeError, KeyError, ValueError):
        return False
{guard_src.replace("_ss_MISS", "False")}    return True
"""
    exec(compile(source, f"<symscalar.jit entry of {label}>", "exec"), ns)  # noqa: S102
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


def copy_into(target: torch.Tensor, value: torch.Tensor) -> None:
    """An in-place write to state, replayed after a call: under no_grad unless a gradient can
    flow through it (then eager's semantics: the target joins the graph)."""
    if value.requires_grad and torch.is_grad_enabled():
        target.copy_(value)
        return
    with torch.no_grad():
        target.copy_(value)


# ----------------------------------------------------------------------------------------
# Hooks of the jitted module, run eagerly around the compiled program


def call_with_hooks(module: torch.nn.Module, call: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``module(*args, **kwargs)`` with ``forward`` replaced by ``call`` (the compiled program):
    the module's forward pre-hooks and forward hooks run eagerly, exactly as
    ``torch.nn.Module._call_impl`` runs them (a pre-hook may replace the arguments, a forward
    hook the output)."""
    for hook_id, hook in list(module._forward_pre_hooks.items()):
        if hook_id in module._forward_pre_hooks_with_kwargs:
            result = hook(module, args, kwargs)
            if result is not None:
                if not (isinstance(result, tuple) and len(result) == 2):
                    raise RuntimeError(
                        "forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                        f"but got {result}."
                    )
                args, kwargs = result
        else:
            result = hook(module, args)
            if result is not None:
                args = result if isinstance(result, tuple) else (result,)
    out = call(*args, **kwargs)
    for hook_id, hook in list(module._forward_hooks.items()):
        if hook_id in module._forward_hooks_with_kwargs:
            result = hook(module, args, kwargs, out)
        else:
            result = hook(module, args, out)
        if result is not None:
            out = result
    return out


class HookWatch:
    """The modules a jitted function's traces called, re-checked for hooks whenever the hook
    epoch moves (see ``hook_epoch``)."""

    def __init__(self, top: torch.nn.Module | None) -> None:
        self.top = top
        self.modules: dict[int, torch.nn.Module] = {}
        self.names: dict[int, str] = {}

    def add(self, modules: dict[int, torch.nn.Module], names: dict[int, str]) -> None:
        self.modules.update(modules)
        self.names.update(names)

    def check(self) -> bool:
        """Raise if a traced module now has a hook jit cannot honour; return whether the
        jitted module has forward (pre-)hooks to run around the program."""
        for module in self.modules.values():
            reason = refused_hooks(module, self.top, self.names)
            if reason:
                raise UnsupportedOperationError(reason)
        top = self.top
        return top is not None and bool(top._forward_pre_hooks or top._forward_hooks)
