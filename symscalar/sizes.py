"""Symbolic sizes: the normal form of a dynamic dim's size and the decisions it allows.

A tensor dim declared dynamic (``jit(f, dynamic_dims={"x": ("B", "T")})``) has no value while
tracing: its size is a ``Size``, a polynomial with integer coefficients over the declared
dims' symbols (``s_B * s_T``, ``s_T * 64 + 1``) in which ``//`` and ``%`` by a positive
constant that does not divide exactly stay opaque atoms. Two sizes are the same value when
their normal forms are equal; an order between sizes is decided by interval arithmetic over
the declared ranges (``Dim("T", min=1, max=4096)``) or not at all: code that needs an
undecided answer gets ``SizeDecisionError`` (a ``DynamicValueError``) instead of the answer
the trace-time sizes would give, which would be a silent specialization.

Inside a primitive's shape rule a ``Size`` compares equal to an ``int`` never (``==`` is
structural): a dynamic dim never broadcasts and is never treated as a static size, whatever
its value. Each symbolic meta result is also checked against the concrete meta at the
trace-time sizes (``symbolic_meta``).

This module is torch-free and knows tensor variables only by their ``shape``: ``trace``
imports it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from symscalar.errors import DynamicValueError, UnsupportedOperationError
from symscalar.types import Traced, current_tracer

__all__ = [
    "Dim",
    "Dims",
    "Symbol",
    "Size",
    "SizeDecisionError",
    "is_size",
    "is_symbolic_shape",
    "symbols_of",
    "hint",
    "evaluate",
    "decide",
    "may_equal",
    "register_shape_rule",
    "register_symbolic_meta",
    "register_size_params",
    "size_params_of",
    "symbolic_meta",
    "has_symbolic",
    "enabled",
    "enable",
]

_INF = math.inf


class SizeDecisionError(DynamicValueError):
    """A comparison of symbolic sizes that the normal form and the declared ranges do not decide."""


@dataclasses.dataclass(frozen=True)
class Dim:
    """A named dynamic dim with an optional range: ``Dim("T", min=1, max=4096)``.

    The same name in two places of a declaration means the sizes are equal (checked on every
    call). ``min`` defaults to 1 (size 0 is refused unless declared), ``max`` to unbounded.
    ``specialize=True`` allows size guards that pin the dim to one value (``T == 1``): each
    such value is then its own program (see ``symscalar/size_guards.py``).
    """

    name: str
    min: int = 1
    max: int | None = None
    specialize: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name.isidentifier():
            raise ValueError(f"Dim name must be an identifier, got {self.name!r}")
        if type(self.min) is not int or self.min < 0:
            raise ValueError(f"Dim({self.name!r}): min must be an int >= 0, got {self.min!r}")
        if self.max is not None and (type(self.max) is not int or self.max < self.min):
            raise ValueError(f"Dim({self.name!r}): max must be None or an int >= min ({self.min}), got {self.max!r}")
        if type(self.specialize) is not bool:
            raise ValueError(f"Dim({self.name!r}): specialize must be a bool, got {self.specialize!r}")


class Dims:
    """The dims of a tensor parameter in an annotation: ``Annotated[torch.Tensor, Dims("B", "T", 64)]``.

    Each entry, over the leading dims: a name or a ``Dim`` (dynamic; equal names are equal
    sizes), an int (a static size the call must have) or None (static, any size).
    """

    def __init__(self, *entries: str | Dim | int | None) -> None:
        self.entries = entries

    def __repr__(self) -> str:
        return f"Dims({', '.join(map(repr, self.entries))})"


class Symbol:
    """The base symbol of one declared dim in one trace (identity is the symbol)."""

    __slots__ = ("name", "min", "max", "hint", "specialize", "__weakref__")

    def __init__(self, name: str, lo: int, hi: int | None, hint: int, specialize: bool = False) -> None:
        self.name = name  # the declared name: printed as s_<name>
        self.min = lo
        self.max = hi  # None: unbounded
        self.hint = hint  # the size at the call that traced (decides only through a size guard)
        self.specialize = specialize  # size guards may pin it to one value (Dim(specialize=True))

    def __repr__(self) -> str:
        return f"s_{self.name}"

    def interval(self) -> tuple[float, float]:
        return (self.min, _INF if self.max is None else self.max)


# A monomial is a tuple of atoms sorted by their sort key; an atom is a Symbol or an opaque
# floor division / modulus of a Size by a positive int.
@dataclasses.dataclass(frozen=True)
class _Opaque:
    op: str  # "//" or "%"
    arg: Size
    by: int

    def __repr__(self) -> str:
        return f"(({self.arg!r}) {self.op} {self.by})"

    def interval(self) -> tuple[float, float]:
        lo, hi = self.arg.interval()
        if self.op == "//":
            return (_floor_div(lo, self.by), _floor_div(hi, self.by))
        return (0, min(self.by - 1, hi) if lo >= 0 else self.by - 1)


def _at_corner(terms: Any, point: Mapping[Any, float], unbounded: float) -> float:
    """The form's value with each atom at ``point``; ``unbounded`` where a coordinate is
    infinite (the bound on that side is the interval arithmetic's)."""
    if any(math.isinf(v) for v in point.values()):
        return unbounded
    total = 0.0
    for monomial, coeff in terms:
        product = float(coeff)
        for atom in monomial:
            product *= point[atom]
        total += product
    return total


def _floor_div(x: float, by: int) -> float:
    return x if math.isinf(x) else float(math.floor(x / by))


def _mul(x: float, y: float) -> float:
    return 0.0 if x == 0 or y == 0 else x * y


def _interval_mul(a: tuple[float, float], b: tuple[float, float]) -> tuple[float, float]:
    products = [_mul(x, y) for x in a for y in b]
    return (min(products), max(products))


def _atom_key(a: Any) -> str:
    return f"{a!r}#{id(a) if isinstance(a, Symbol) else ''}"


def _monomial_interval(monomial: tuple[Any, ...]) -> tuple[float, float]:
    result = (1.0, 1.0)
    for atom in monomial:
        result = _interval_mul(result, atom.interval())
    return result


class Size:
    """A symbolic size in normal form: ``sum(coeff * prod(atoms))``; hashable, compared
    structurally by ``==``; ordered only where the ranges decide (else ``SizeDecisionError``)."""

    __slots__ = ("terms", "_hash")

    def __init__(self, terms: Mapping[tuple[Any, ...], int]) -> None:
        items = sorted(((m, c) for m, c in terms.items() if c != 0), key=lambda mc: (-len(mc[0]), _mono_key(mc[0])))
        self.terms: tuple[tuple[tuple[Any, ...], int], ...] = tuple(items)
        self._hash = hash(self.terms)

    @classmethod
    def of(cls, symbol: Symbol) -> Size:
        return cls({(symbol,): 1})

    # -- normal form ---------------------------------------------------------------------
    def constant(self) -> int | None:
        """The value when the form has no symbol (then it is no Size at all, see ``_norm``)."""
        if not self.terms:
            return 0
        if len(self.terms) == 1 and self.terms[0][0] == ():
            return self.terms[0][1]
        return None

    def as_dict(self) -> dict[tuple[Any, ...], int]:
        return dict(self.terms)

    def symbol(self) -> Symbol | None:
        """The symbol when the size is exactly one declared dim."""
        if len(self.terms) == 1 and self.terms[0][1] == 1 and len(self.terms[0][0]) == 1:
            atom = self.terms[0][0][0]
            return atom if isinstance(atom, Symbol) else None
        return None

    def interval(self) -> tuple[float, float]:
        """Bounds over the declared ranges: interval arithmetic, narrowed where the form is
        monotone in each atom (``s_B * s_T - s_B`` is >= 0: interval arithmetic alone loses
        that the two terms share ``s_B``)."""
        lo, hi = self._term_interval()
        monotone = self._monotone_interval()
        if monotone is not None:
            lo, hi = max(lo, monotone[0]), min(hi, monotone[1])
        return self._floor_division_interval(lo, hi)

    def _floor_division_interval(self, lo: float, hi: float) -> tuple[float, float]:
        """Narrow ``(lo, hi)`` where a term is ``k * (a // c)``: ``c * (a // c)`` lies in
        ``[a - c + 1, a]`` for every integer ``a``, so ``c * form`` lies between the two forms
        with ``a - c + 1`` and ``a`` in its place, whose own intervals keep that ``a`` shares
        atoms with the rest (``s_T // 2 - s_T`` < 0, ``s_T // 2 + 1 <= s_T``: the opaque
        quotient alone is independent of ``s_T``). The form is an integer: bounds round inward."""
        for monomial, coeff in self.terms:
            if len(monomial) != 1 or not isinstance(monomial[0], _Opaque) or monomial[0].op != "//":
                continue
            quotient, by = monomial[0], monomial[0].by
            rest = _norm({m: k * by for m, k in self.terms if m != monomial})
            ends = [rest + coeff * (quotient.arg - (by - 1)), rest + coeff * quotient.arg]
            bounds = [(float(e), float(e)) if type(e) is int else e.interval() for e in ends]
            low, high = min(b[0] for b in bounds), max(b[1] for b in bounds)
            if not math.isinf(low):
                lo = max(lo, math.ceil(low / by))
            if not math.isinf(high):
                hi = min(hi, math.floor(high / by))
        return lo, hi

    def _term_interval(self) -> tuple[float, float]:
        lo, hi = 0.0, 0.0
        for monomial, coeff in self.terms:
            a, b = _interval_mul(_monomial_interval(monomial), (coeff, coeff))
            lo, hi = lo + a, hi + b
        return lo, hi

    def _monotone_interval(self) -> tuple[float, float] | None:
        """Where the form's partial derivative in every atom has one sign over the ranges (the
        atoms taken as independent, a superset of the real domain), its bounds are its values
        at two corners of the box; None where some derivative changes sign. A corner with an
        infinite coordinate gives no bound on that side."""
        atoms = {a for monomial, _ in self.terms for a in monomial}
        if len(self.terms) < 2 or not atoms:
            return None
        low: dict[Any, float] = {}
        high: dict[Any, float] = {}
        for atom in atoms:
            derivative: dict[tuple[Any, ...], int] = {}
            for monomial, coeff in self.terms:
                k = monomial.count(atom)
                if k:
                    rest = list(monomial)
                    rest.remove(atom)
                    derivative[tuple(rest)] = derivative.get(tuple(rest), 0) + coeff * k
            d_lo, d_hi = Size(derivative)._term_interval()
            a_lo, a_hi = atom.interval()
            if d_lo >= 0:
                low[atom], high[atom] = a_lo, a_hi
            elif d_hi <= 0:
                low[atom], high[atom] = a_hi, a_lo
            else:
                return None
        return (_at_corner(self.terms, low, -_INF), _at_corner(self.terms, high, _INF))

    # -- arithmetic (results in normal form; an int where no symbol is left) -------------
    def __add__(self, other: Any) -> Any:
        o = _as_terms(other)
        if o is None:
            return NotImplemented
        terms = self.as_dict()
        for m, c in o.items():
            terms[m] = terms.get(m, 0) + c
        return _norm(terms)

    __radd__ = __add__

    def __neg__(self) -> Any:
        return _norm({m: -c for m, c in self.terms})

    def __sub__(self, other: Any) -> Any:
        o = _as_terms(other)
        if o is None:
            return NotImplemented
        return self + _norm({m: -c for m, c in o.items()})

    def __rsub__(self, other: Any) -> Any:
        return (-self) + other

    def __mul__(self, other: Any) -> Any:
        o = _as_terms(other)
        if o is None:
            return NotImplemented
        terms: dict[tuple[Any, ...], int] = {}
        for m1, c1 in self.terms:
            for m2, c2 in o.items():
                m = tuple(sorted(m1 + m2, key=_atom_key))
                terms[m] = terms.get(m, 0) + c1 * c2
        return _norm(terms)

    __rmul__ = __mul__

    def _exact_quotient(self, other: Size) -> Any:
        """``self / other`` where ``other`` is one term dividing every term of ``self``
        exactly (``s_B * s_T * 64 / (s_T * 64)``), else None."""
        if len(other.terms) != 1:
            return None
        divisor, by = other.terms[0]
        quotient: dict[tuple[Any, ...], int] = {}
        for monomial, coeff in self.terms:
            rest = list(monomial)
            for atom in divisor:
                if atom not in rest:
                    return None
                rest.remove(atom)
            if coeff % by:
                return None
            quotient[tuple(rest)] = coeff // by
        return _norm(quotient)

    def __floordiv__(self, other: Any) -> Any:
        if isinstance(other, Size):
            quotient = self._exact_quotient(other)
            if quotient is None:
                raise _undecided(f"{self!r} // {other!r}", "a division that is not exact in the normal form")
            return quotient
        c = _positive_constant(other, "//")
        if c == 1:
            return self
        whole, rest = _reduced(self, c)
        if not isinstance(rest, Size):
            return whole + rest // c
        return whole + _norm({(_Opaque("//", rest, c),): 1})

    def __mod__(self, other: Any) -> Any:
        """``a % c`` is ``a - c * (a // c)`` in the normal form (one atom, the quotient), so that
        sums of remainders simplify: ``T + (-T) % 8`` is ``-8 * ((-T) // 8)``, a multiple of 8
        (``x.view(B, -1, 8)`` after padding T to a multiple of 8 traces)."""
        if isinstance(other, Size):
            if self._exact_quotient(other) is None:
                raise _undecided(f"{self!r} % {other!r}", "a modulus that is not exact in the normal form")
            return 0
        c = _positive_constant(other, "%")
        _, rest = _reduced(self, c)
        if not isinstance(rest, Size):
            return rest % c
        return rest - c * (rest // c)

    def __rfloordiv__(self, other: Any) -> Any:
        raise _undecided(f"{other!r} // {self!r}", "a division by a dynamic size")

    def __rmod__(self, other: Any) -> Any:
        raise _undecided(f"{other!r} % {self!r}", "a modulus by a dynamic size")

    # -- comparisons ---------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        return isinstance(other, Size) and self.terms == other.terms

    def __ne__(self, other: object) -> bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return self._hash

    def __lt__(self, other: Any) -> bool:
        return _decided(decide("lt", self, other), self, "<", other)

    def __le__(self, other: Any) -> bool:
        return _decided(decide("le", self, other), self, "<=", other)

    def __gt__(self, other: Any) -> bool:
        return _decided(decide("gt", self, other), self, ">", other)

    def __ge__(self, other: Any) -> bool:
        return _decided(decide("ge", self, other), self, ">=", other)

    def __repr__(self) -> str:
        out = ""
        for i, (monomial, coeff) in enumerate(self.terms):
            magnitude = abs(coeff)
            body = " * ".join(
                [repr(a) for a in monomial] + ([str(magnitude)] if magnitude != 1 or not monomial else [])
            )
            if i == 0:
                out = ("-" if coeff < 0 else "") + body
            else:
                out += (" - " if coeff < 0 else " + ") + body
        return out or "0"

    __str__ = __repr__

    @classmethod
    def __torch_function__(cls, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: Any = None) -> Any:
        """A size as a torch operand inside symscalar's op code (``flat % cols`` in tril):
        recorded by the current tracer, which reads it as its size symbol."""
        tracer = current_tracer.get()
        if tracer is None:
            return NotImplemented
        if not any(isinstance(a, Traced) for a in _flat((args, kwargs))):
            # no traced operand: a size in a static parameter of a plain torch call (the count
            # of torch.chunk(meta, n) in an op's frontend), which the tracer cannot record
            name = getattr(func, "__name__", repr(func))
            raise _undecided(f"{name}(..., {_sizes_in((args, kwargs))}, ...)", "a static parameter (a count, a dim)")
        return tracer.torch_function(func, args, kwargs or {})

    # Python ints are needed: refuse (a silent int() would bake the trace-time size in).
    def __index__(self) -> int:
        raise _undecided(f"int({self!r})", "a Python int (a range(), a list index, a static parameter)")

    __int__ = __index__

    def __bool__(self) -> bool:
        raise _undecided(f"bool({self!r})", "a Python bool")


def _flat(value: Any) -> Iterable[Any]:
    if isinstance(value, (tuple, list)):
        for v in value:
            yield from _flat(v)
    elif isinstance(value, Mapping):
        for v in value.values():
            yield from _flat(v)
    else:
        yield value


def _sizes_in(value: Any) -> str:
    return ", ".join(repr(v) for v in _flat(value) if isinstance(v, Size))


def _mono_key(monomial: tuple[Any, ...]) -> str:
    return ",".join(_atom_key(a) for a in monomial)


def _as_terms(value: Any) -> dict[tuple[Any, ...], int] | None:
    if isinstance(value, Size):
        return value.as_dict()
    if type(value) is int:
        return {(): value}
    return None


def _reduced(size: Size, c: int) -> tuple[Any, Any]:
    """``(q, r)`` with ``size == c * q + r``, q and r integer-valued: the multiples of ``c``
    taken out of the constant (r's constant in ``[0, c)``) and out of each coefficient of
    magnitude ``c`` or more, so that ``(a + c * k) // c == k + a // c`` normalizes."""
    whole: dict[tuple[Any, ...], int] = {}
    rest: dict[tuple[Any, ...], int] = {}
    for monomial, coeff in size.terms:
        if monomial == () or abs(coeff) >= c:
            whole[monomial], rest[monomial] = divmod(coeff, c)
        else:
            rest[monomial] = coeff
    return _norm(whole), _norm(rest)


def _norm(terms: Mapping[tuple[Any, ...], int]) -> Any:
    size = Size(terms)
    constant = size.constant()
    return constant if constant is not None else size


def _positive_constant(value: Any, op: str) -> int:
    if type(value) is int and value > 0:
        return value
    raise _undecided(f"size {op} {value!r}", f"`{op}` by anything but a positive static int")


def _undecided(what: str, needed: str) -> SizeDecisionError:
    return SizeDecisionError(
        f"{what}: a dynamic size cannot be used as {needed} while tracing; its value is only known "
        "when the program runs. Fix it in one of three ways:\n"
        "  - declare a range that decides it (symscalar.Dim(name, min=..., max=...));\n"
        "  - use symscalar.check(cond, msg) for a runtime check, or express the computation with "
        "torch ops;\n"
        "  - or declare the dim static (remove it from dynamic_dims): each size is then its own program."
    )


def is_size(value: Any) -> bool:
    return isinstance(value, Size)


def is_symbolic_shape(shape: Iterable[Any]) -> bool:
    return any(isinstance(s, Size) for s in shape)


def symbols_of(value: Any) -> set[Symbol]:
    """The base symbols a Size (or a nest of tuples/lists/dicts of them) depends on."""
    found: set[Symbol] = set()

    def walk(v: Any) -> None:
        if isinstance(v, Size):
            for monomial, _ in v.terms:
                for atom in monomial:
                    walk(atom)
        elif isinstance(v, Symbol):
            found.add(v)
        elif isinstance(v, _Opaque):
            walk(v.arg)
        elif isinstance(v, (tuple, list)):
            for x in v:
                walk(x)
        elif isinstance(v, Mapping):
            for x in v.values():
                walk(x)

    walk(value)
    return found


def evaluate(value: Any, values: Mapping[Symbol, int]) -> Any:
    """``value`` with every Size replaced by its value under ``values`` (through tuples/lists)."""
    if isinstance(value, Size):
        total = 0
        for monomial, coeff in value.terms:
            product = coeff
            for atom in monomial:
                product *= values[atom] if isinstance(atom, Symbol) else _opaque_value(atom, values)
            total += product
        return total
    if isinstance(value, tuple):
        return tuple(evaluate(v, values) for v in value)
    if isinstance(value, list):
        return [evaluate(v, values) for v in value]
    return value


def _opaque_value(atom: _Opaque, values: Mapping[Symbol, int]) -> int:
    arg: int = evaluate(atom.arg, values)
    return arg // atom.by if atom.op == "//" else arg % atom.by


class _Hints(dict[Symbol, int]):
    def __missing__(self, symbol: Symbol) -> int:
        return symbol.hint


_HINTS = _Hints()


def hint(value: Any) -> Any:
    """``value`` at the trace-time sizes (what the concrete metas run on)."""
    return evaluate(value, _HINTS)


def decide(op: str, a: Any, b: Any) -> bool | None:
    """``a <op> b`` (op: lt, le, gt, ge, eq, ne) for sizes and ints: True/False where the
    normal form and the ranges decide it, None where they do not."""
    difference = a - b  # a Size or an int
    if type(difference) is int:
        lo = hi = float(difference)
    elif isinstance(difference, Size):
        lo, hi = difference.interval()
    else:
        return None
    if op == "eq":
        return True if lo == hi == 0 else False if lo > 0 or hi < 0 else None
    if op == "ne":
        result = decide("eq", a, b)
        return None if result is None else not result
    if op == "lt":
        return True if hi < 0 else False if lo >= 0 else None
    if op == "le":
        return True if hi <= 0 else False if lo > 0 else None
    if op == "gt":
        return True if lo > 0 else False if hi <= 0 else None
    if op == "ge":
        return True if lo >= 0 else False if hi < 0 else None
    raise ValueError(op)


def may_equal(a: Any, b: Any) -> bool:
    """Whether ``a == b`` at some size the declared ranges allow (for ints, ``a == b``): the
    test for an op that special-cases a size (an empty dim: ``0 in shape``), where ``==``
    between a ``Size`` and an int (structural: False) would silently take the general path."""
    if not isinstance(a, Size) and not isinstance(b, Size):
        return bool(a == b)
    return decide("eq", a, b) is not False


def _decided(result: bool | None, a: Any, op: str, b: Any) -> bool:
    if result is None:
        raise _undecided(f"{a!r} {op} {b!r}", "a Python bool (the ranges declared do not decide it)")
    return result


# -- symbolic metas -------------------------------------------------------------------------

# meta function -> rule(*atoms, **params) giving the symbolic output shape (a list of shapes
# for several results). ``small_meta``'s shape rules are found on the meta itself.
_SHAPE_RULES: dict[Any, Callable[..., Any]] = {}
# Whether any dynamic dim was ever declared in this process: until then no meta call looks
# for symbolic shapes (the cost of the feature for code that does not use it is one read).
_ENABLED = [False]


def enabled() -> list[bool]:
    """The one-item list holding whether symbolic shapes are on (read on the metas' path)."""
    return _ENABLED


def enable() -> None:
    """Turn the symbolic-shape path of the metas on (the first dynamic dim declared does)."""
    _ENABLED[0] = True


def register_shape_rule(prim: Any, rule: Callable[..., Any]) -> None:
    """Give ``prim`` (a ``trace.Primitive``) a symbolic shape rule (once)."""
    key = getattr(prim.meta, "__wrapped__", prim.meta)
    if key in _SHAPE_RULES:
        raise ValueError(f"primitive {prim.name} has a symbolic shape rule already")
    _SHAPE_RULES[key] = rule


# meta function -> a full symbolic meta (no concrete meta run), for an op whose concrete meta
# is costly on symbolic inputs (arange's meta tensor path imports torch._dynamo).
_SYMBOLIC_METAS: dict[Any, Callable[..., Any]] = {}


def register_symbolic_meta(prim: Any, meta: Callable[..., Any]) -> None:
    """Give ``prim`` a meta for symbolic inputs that replaces its own (once)."""
    key = getattr(prim.meta, "__wrapped__", prim.meta)
    if key in _SYMBOLIC_METAS:
        raise ValueError(f"primitive {prim.name} has a symbolic meta already")
    _SYMBOLIC_METAS[key] = meta


# meta function -> the static parameters of the primitive that may hold dynamic sizes (its
# size-like slots); check_trace refuses a size anywhere else (a reduction's dims...).
_SIZE_SLOTS: dict[Any, frozenset[str]] = {}


def register_size_params(prim: Any, *names: str) -> None:
    """Declare which static parameters of ``prim`` are size-like (may hold a ``Size``)."""
    key = getattr(prim.meta, "__wrapped__", prim.meta)
    _SIZE_SLOTS[key] = _SIZE_SLOTS.get(key, frozenset()) | frozenset(names)


def size_params_of(prim: Any) -> frozenset[str]:
    return _SIZE_SLOTS.get(getattr(prim.meta, "__wrapped__", prim.meta), frozenset())


def has_symbolic(atoms: tuple[Any, ...], params: Mapping[str, Any]) -> bool:
    for a in atoms:
        shape = getattr(a, "shape", None)
        if type(shape) is tuple and is_symbolic_shape(shape):
            return True
        if isinstance(a, Size):
            return True
    return bool(params) and bool(symbols_of(params))


def _hint_atom(a: Any) -> Any:
    shape = getattr(a, "shape", None)
    if type(shape) is tuple and is_symbolic_shape(shape):
        return dataclasses.replace(a, shape=hint(shape))
    return a


def symbolic_meta(meta: Callable[..., Any], name: str, atoms: tuple[Any, ...], params: dict[str, Any]) -> Any:
    """``meta`` on symbolic shapes: the concrete meta at the trace-time sizes (validation,
    dtype, device), with the shapes of the op's symbolic shape rule, which must agree with the
    concrete shapes at those sizes. An op without a rule refuses dynamic dims."""
    own = _SYMBOLIC_METAS.get(meta)
    if own is not None:
        return own(*atoms, **params)
    rule = _SHAPE_RULES.get(meta) or getattr(meta, "shape_rule", None)
    # the concrete meta first: a call eager refuses at these sizes raises eager's error
    concrete = meta(*[_hint_atom(a) for a in atoms], **{k: hint(v) for k, v in params.items()})
    shapes = _symbolic_shapes(rule, name, atoms, params) if rule is not None else None
    results = concrete if isinstance(concrete, tuple) else (concrete,)
    if not any(type(getattr(r, "shape", None)) is tuple for r in results):
        return concrete  # no tensor result (a scalar, a check): nothing symbolic to give
    if rule is None:
        raise UnsupportedOperationError(
            f"{name} does not support dynamic dims yet (no symbolic shape rule): its inputs have "
            f"dynamic sizes {_shapes(atoms)}. Declare these dims static (leave them out of "
            "dynamic_dims), or compute this part outside the jitted function."
        )
    symbolic: list[Any] = list(shapes) if isinstance(concrete, tuple) else [shapes]  # type: ignore[arg-type]
    out = []
    for result, shape in zip(results, symbolic, strict=True):
        shape = tuple(shape)
        if result is None or not hasattr(result, "shape"):
            out.append(result)
            continue
        if hint(shape) != tuple(result.shape):
            raise UnsupportedOperationError(
                f"{name}: its symbolic shape rule gives {shape} (at the traced sizes "
                f"{hint(shape)}) but the op gives {tuple(result.shape)}; this op's result depends on "
                "a dynamic size in a way symscalar does not track. Declare the dims static."
            )
        out.append(dataclasses.replace(result, shape=shape))
    return tuple(out) if isinstance(concrete, tuple) else out[0]


def _symbolic_shapes(rule: Callable[..., Any], name: str, atoms: tuple[Any, ...], params: dict[str, Any]) -> Any:
    try:
        return rule(*atoms, **params)
    except SizeDecisionError as e:
        raise SizeDecisionError(f"{name} on dynamic sizes {_shapes(atoms)}: {e}") from None
    except DynamicValueError:
        raise  # a size guard that would pin a declared dim (size_guards.py): its own message
    except (RuntimeError, ValueError, IndexError, TypeError) as e:
        raise UnsupportedOperationError(
            f"{name} on dynamic sizes {_shapes(atoms)} (params {params}): {e}. A dynamic dim never "
            "broadcasts and only equals a size it provably equals (the same declared name, or the "
            "same expression of names). Declare the dims involved with the same name, or static."
        ) from None


def _shapes(atoms: tuple[Any, ...]) -> str:
    return ", ".join(str(list(a.shape)) for a in atoms if type(getattr(a, "shape", None)) is tuple)
