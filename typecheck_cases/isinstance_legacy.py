"""Legacy number checks: isinstance(v, int/float/numbers.Number) is False for a dynamic number."""

import numbers

import symscalar
from symscalar import DynamicInt, FloatLike, IntLike, NumberClasses, NumberLike


def scale_of(v: NumberLike) -> float:
    if isinstance(v, int):  # E: isinstance("v", int) is False for a dynamic number: "v" may be bool | int | float | symscalar.types.DynamicBool | symscalar.types.DynamicInt | symscalar.types.DynamicFloat, and DynamicInt/DynamicFloat/DynamicBool are not int/float/numbers.Number...  [symscalar-number-isinstance]
        return 1.0
    return 2.0


def is_float(v: FloatLike) -> bool:
    return isinstance(v, float)  # E: isinstance("v", float) is False for a dynamic number: "v" may be float | int | symscalar.types.DynamicFloat | symscalar.types.DynamicInt, and DynamicInt/DynamicFloat/DynamicBool are not int/float/numbers.Number...  [symscalar-number-isinstance]


def is_number(v: IntLike) -> bool:
    return isinstance(v, numbers.Number)  # E: isinstance("v", numbers.Number) is False for a dynamic number: "v" may be int | symscalar.types.DynamicInt, and DynamicInt/DynamicFloat/DynamicBool are not int/float/numbers.Number...  [symscalar-number-isinstance]


def is_any_number(v: NumberLike) -> bool:
    return isinstance(v, (int, float))  # E: isinstance("v", (int, float)) is False for a dynamic number: "v" may be bool | int | float | symscalar.types.DynamicBool | symscalar.types.DynamicInt | symscalar.types.DynamicFloat, and DynamicInt/DynamicFloat/DynamicBool are not int/float/numbers.Number...  [symscalar-number-isinstance]


def is_int_union(v: DynamicInt | int) -> bool:
    return isinstance(v, int | bool)  # E: isinstance("v", (int, bool)) is False for a dynamic number: "v" may be symscalar.types.DynamicInt | int, and DynamicInt/DynamicFloat/DynamicBool are not int/float/numbers.Number...  [symscalar-number-isinstance]


def fixed_static(v: NumberLike) -> bool:
    return symscalar.is_static(v)


def fixed_classes(v: NumberLike) -> bool:
    return isinstance(v, NumberClasses)


def fixed_dynamic(v: NumberLike) -> bool:
    return symscalar.is_dynamic(v) or isinstance(v, symscalar.NumberProxy)


def fixed_static_then_int(v: NumberLike) -> bool:
    # is_static narrows (TypeIs): afterwards isinstance(v, int) is a plain Python check.
    return symscalar.is_static(v) and isinstance(v, int) and v == 1


def narrowed(v: NumberLike) -> None:
    if symscalar.is_dynamic(v):
        reveal_type(v)  # N: Revealed type is "symscalar.types.DynamicBool | symscalar.types.DynamicInt | symscalar.types.DynamicFloat"
    else:
        reveal_type(v)  # N: Revealed type is "int | float"  # pyright-N: bool | int | float


def plain_python(v: int | str) -> bool:
    return isinstance(v, int)


def static_only(v: float) -> bool:
    return isinstance(v, (int, float))
