# executable
"""Dynamic values in the static parameters of the vision ops (convolution, pooling, batch
norm, padding), of the random factories (`shape`/`size`, `training`), and of `repeat`/
`unflatten`, in the symscalar.ops, torch, torch.nn.functional and method spellings.

Each function passes a dynamic value to exactly one static parameter: mypy (with the plugin)
flags that line, and under symscalar.jit the call raises StaticValueRequiredError. Where the
plugin does not see the op (F.conv1d/2d/3d, F.max_pool2d's `return_indices`: see the comments
there) mypy still flags the line, with torch's stubs' own error, and the call still raises.
torch.rand/randn take the size as one tuple here: `torch.rand(n, 2)` is flagged by the plugin
but fails in torch's argument parser (TypeError) before symscalar sees it."""

from typing import Any

import torch
import torch.nn.functional as F

import symscalar
from symscalar import DynamicBool, DynamicInt, ops


@symscalar.jit
def ops_avg_pool2d_kernel_size(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return ops.avg_pool2d(x, n)  # E: symscalar.ops.avg_pool2d: parameter "kernel_size" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "avg_pool2d" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_avg_pool2d_stride(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return ops.avg_pool2d(x, 2, stride=n)  # E: symscalar.ops.avg_pool2d: parameter "stride" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "stride" to "avg_pool2d" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int] | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_avg_pool2d_padding(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return ops.avg_pool2d(x, 2, padding=n)  # E: symscalar.ops.avg_pool2d: parameter "padding" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "padding" to "avg_pool2d" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_avg_pool2d_ceil_mode(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return ops.avg_pool2d(x, 2, ceil_mode=b)  # E: symscalar.ops.avg_pool2d: parameter "ceil_mode" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument "ceil_mode" to "avg_pool2d" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_avg_pool2d_count_include_pad(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return ops.avg_pool2d(x, 2, count_include_pad=b)  # E: symscalar.ops.avg_pool2d: parameter "count_include_pad" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument "count_include_pad" to "avg_pool2d" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_avg_pool2d_divisor_override(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return ops.avg_pool2d(x, 2, divisor_override=n)  # E: symscalar.ops.avg_pool2d: parameter "divisor_override" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "divisor_override" to "avg_pool2d" has incompatible type "DynamicInt"; expected "int | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_avg_pool2d_kernel_size(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.avg_pool2d(x, n)  # E: torch.nn.functional.avg_pool2d: parameter "kernel_size" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "avg_pool2d" has incompatible type "DynamicInt"; expected "int | Size | list[int] | tuple[int, ...]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_avg_pool2d_stride(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.avg_pool2d(x, 2, stride=n)  # E: torch.nn.functional.avg_pool2d: parameter "stride" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "stride" to "avg_pool2d" has incompatible type "DynamicInt"; expected "int | Size | list[int] | tuple[int, ...] | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_avg_pool2d_padding(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.avg_pool2d(x, 2, padding=n)  # E: torch.nn.functional.avg_pool2d: parameter "padding" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "padding" to "avg_pool2d" has incompatible type "DynamicInt"; expected "int | Size | list[int] | tuple[int, ...]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_avg_pool2d_ceil_mode(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.avg_pool2d(x, 2, ceil_mode=b)  # E: torch.nn.functional.avg_pool2d: parameter "ceil_mode" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument "ceil_mode" to "avg_pool2d" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_avg_pool2d_count_include_pad(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.avg_pool2d(x, 2, count_include_pad=b)  # E: torch.nn.functional.avg_pool2d: parameter "count_include_pad" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument "count_include_pad" to "avg_pool2d" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_avg_pool2d_divisor_override(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.avg_pool2d(x, 2, divisor_override=n)  # E: torch.nn.functional.avg_pool2d: parameter "divisor_override" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "divisor_override" to "avg_pool2d" has incompatible type "DynamicInt"; expected "int | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_max_pool2d_kernel_size(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return ops.max_pool2d(x, n)  # E: symscalar.ops.max_pool2d: parameter "kernel_size" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "max_pool2d" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_max_pool2d_stride(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return ops.max_pool2d(x, 2, stride=n)  # E: symscalar.ops.max_pool2d: parameter "stride" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "stride" to "max_pool2d" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int] | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_max_pool2d_padding(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return ops.max_pool2d(x, 2, padding=n)  # E: symscalar.ops.max_pool2d: parameter "padding" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "padding" to "max_pool2d" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_max_pool2d_dilation(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return ops.max_pool2d(x, 2, dilation=n)  # E: symscalar.ops.max_pool2d: parameter "dilation" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "dilation" to "max_pool2d" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_max_pool2d_ceil_mode(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return ops.max_pool2d(x, 2, ceil_mode=b)  # E: symscalar.ops.max_pool2d: parameter "ceil_mode" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument "ceil_mode" to "max_pool2d" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_max_pool2d_return_indices(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return ops.max_pool2d(x, 2, return_indices=b)  # E: symscalar.ops.max_pool2d: parameter "return_indices" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument "return_indices" to "max_pool2d" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_max_pool2d_kernel_size(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.max_pool2d(x, n)  # E: torch.nn.functional.max_pool2d: parameter "kernel_size" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "max_pool2d" matches argument types "Tensor", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType


@symscalar.jit
def F_max_pool2d_stride(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.max_pool2d(x, 2, stride=n)  # E: torch.nn.functional.max_pool2d: parameter "stride" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "max_pool2d" matches argument types "Tensor", "int", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType


@symscalar.jit
def F_max_pool2d_padding(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.max_pool2d(x, 2, padding=n)  # E: torch.nn.functional.max_pool2d: parameter "padding" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "max_pool2d" matches argument types "Tensor", "int", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType


@symscalar.jit
def F_max_pool2d_dilation(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.max_pool2d(x, 2, dilation=n)  # E: torch.nn.functional.max_pool2d: parameter "dilation" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "max_pool2d" matches argument types "Tensor", "int", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType


@symscalar.jit
def F_max_pool2d_ceil_mode(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.max_pool2d(x, 2, ceil_mode=b)  # E: torch.nn.functional.max_pool2d: parameter "ceil_mode" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: No overload variant of "max_pool2d" matches argument types "Tensor", "int", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType


# torch's stub overloads max_pool2d on Literal return_indices: no overload takes a
# DynamicBool, so mypy reports call-overload here, not the plugin's static-required error (at
# run time torch's wrapper branches on the flag: DynamicValueError).
@symscalar.jit
def F_max_pool2d_return_indices(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.max_pool2d(x, 2, return_indices=b)  # unchecked: torch.nn.functional.max_pool2d: parameter "return_indices": torch's stub overloads max_pool2d on Literal[True]/Literal[False], so no overload matches and mypy calls no plugin hook (mypy still rejects the line; the runtime raises DynamicValueError)  # E: No overload variant of "max_pool2d" matches argument types "Tensor", "int", "DynamicBool"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def F_max_pool2d_with_indices_kernel_size(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.max_pool2d_with_indices(x, (n, 2))  # E: torch.nn.functional.max_pool2d_with_indices: parameter "kernel_size" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "max_pool2d_with_indices" has incompatible type "tuple[DynamicInt, int]"; expected "Size | list[int] | tuple[int, ...]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_max_pool2d_with_indices_stride(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.max_pool2d_with_indices(x, (2, 2), stride=(n, 2))  # E: torch.nn.functional.max_pool2d_with_indices: parameter "stride" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "stride" to "max_pool2d_with_indices" has incompatible type "tuple[DynamicInt, int]"; expected "Size | list[int] | tuple[int, ...] | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_max_pool2d_with_indices_padding(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.max_pool2d_with_indices(x, (2, 2), padding=(n, 0))  # E: torch.nn.functional.max_pool2d_with_indices: parameter "padding" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "padding" to "max_pool2d_with_indices" has incompatible type "tuple[DynamicInt, int]"; expected "Size | list[int] | tuple[int, ...]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_max_pool2d_with_indices_dilation(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.max_pool2d_with_indices(x, (2, 2), dilation=(n, 1))  # E: torch.nn.functional.max_pool2d_with_indices: parameter "dilation" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "dilation" to "max_pool2d_with_indices" has incompatible type "tuple[DynamicInt, int]"; expected "Size | list[int] | tuple[int, ...]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_max_pool2d_with_indices_ceil_mode(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.max_pool2d_with_indices(x, (2, 2), ceil_mode=b)  # E: torch.nn.functional.max_pool2d_with_indices: parameter "ceil_mode" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument "ceil_mode" to "max_pool2d_with_indices" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_max_pool2d_with_indices_return_indices(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.max_pool2d_with_indices(x, (2, 2), return_indices=b)  # E: torch.nn.functional.max_pool2d_with_indices: parameter "return_indices" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument "return_indices" to "max_pool2d_with_indices" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_max_pool2d_kernel_size(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return torch.max_pool2d(x, n)  # E: torch.max_pool2d: parameter "kernel_size" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "max_pool2d" has incompatible type "DynamicInt"; expected "int | Size | list[int] | tuple[int, ...]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_max_pool2d_stride(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return torch.max_pool2d(x, 2, stride=n)  # E: torch.max_pool2d: parameter "stride" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "stride" to "max_pool2d" has incompatible type "DynamicInt"; expected "int | Size | list[int] | tuple[int, ...]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_max_pool2d_padding(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return torch.max_pool2d(x, 2, padding=n)  # E: torch.max_pool2d: parameter "padding" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "padding" to "max_pool2d" has incompatible type "DynamicInt"; expected "int | Size | list[int] | tuple[int, ...]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_max_pool2d_dilation(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return torch.max_pool2d(x, 2, dilation=n)  # E: torch.max_pool2d: parameter "dilation" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "dilation" to "max_pool2d" has incompatible type "DynamicInt"; expected "int | Size | list[int] | tuple[int, ...]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_max_pool2d_ceil_mode(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return torch.max_pool2d(x, 2, ceil_mode=b)  # E: torch.max_pool2d: parameter "ceil_mode" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument "ceil_mode" to "max_pool2d" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_convolution_stride(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return ops.convolution(x, w, None, stride=n)  # E: symscalar.ops.convolution: parameter "stride" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "stride" to "convolution" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_convolution_padding(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return ops.convolution(x, w, None, padding=n)  # E: symscalar.ops.convolution: parameter "padding" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "padding" to "convolution" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_convolution_dilation(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return ops.convolution(x, w, None, dilation=n)  # E: symscalar.ops.convolution: parameter "dilation" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "dilation" to "convolution" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_convolution_groups(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return ops.convolution(x, w, None, groups=n)  # E: symscalar.ops.convolution: parameter "groups" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "groups" to "convolution" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


# torch's stubs overload conv1d/conv2d/conv3d (int or str padding), and the plugin does not
# widen them: mypy reports call-overload on a dynamic value, not static-required.
@symscalar.jit
def F_conv1d_stride(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.conv1d(x.flatten(2), w[..., 0], None, stride=n)  # unchecked: torch.nn.functional.conv1d: parameter "stride": torch's stubs define F.conv1d as torch.conv1d, which the op table does not list, so the plugin hook never sees the call (mypy still rejects the line)  # E: No overload variant of "conv1d" matches argument types "Tensor", "Tensor", "None", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def F_conv1d_padding(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.conv1d(x.flatten(2), w[..., 0], None, padding=n)  # unchecked: torch.nn.functional.conv1d: parameter "padding": torch's stubs define F.conv1d as torch.conv1d, which the op table does not list, so the plugin hook never sees the call (mypy still rejects the line)  # E: No overload variant of "conv1d" matches argument types "Tensor", "Tensor", "None", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def F_conv1d_dilation(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.conv1d(x.flatten(2), w[..., 0], None, dilation=n)  # unchecked: torch.nn.functional.conv1d: parameter "dilation": torch's stubs define F.conv1d as torch.conv1d, which the op table does not list, so the plugin hook never sees the call (mypy still rejects the line)  # E: No overload variant of "conv1d" matches argument types "Tensor", "Tensor", "None", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def F_conv1d_groups(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.conv1d(x.flatten(2), w[..., 0], None, groups=n)  # unchecked: torch.nn.functional.conv1d: parameter "groups": torch's stubs define F.conv1d as torch.conv1d, which the op table does not list, so the plugin hook never sees the call (mypy still rejects the line)  # E: No overload variant of "conv1d" matches argument types "Tensor", "Tensor", "None", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def F_conv2d_stride(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.conv2d(x, w, None, stride=n)  # unchecked: torch.nn.functional.conv2d: parameter "stride": torch's stubs define F.conv2d as torch.conv2d, which the op table does not list, so the plugin hook never sees the call (mypy still rejects the line)  # E: No overload variant of "conv2d" matches argument types "Tensor", "Tensor", "None", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def F_conv2d_padding(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.conv2d(x, w, None, padding=n)  # unchecked: torch.nn.functional.conv2d: parameter "padding": torch's stubs define F.conv2d as torch.conv2d, which the op table does not list, so the plugin hook never sees the call (mypy still rejects the line)  # E: No overload variant of "conv2d" matches argument types "Tensor", "Tensor", "None", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def F_conv2d_dilation(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.conv2d(x, w, None, dilation=n)  # unchecked: torch.nn.functional.conv2d: parameter "dilation": torch's stubs define F.conv2d as torch.conv2d, which the op table does not list, so the plugin hook never sees the call (mypy still rejects the line)  # E: No overload variant of "conv2d" matches argument types "Tensor", "Tensor", "None", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def F_conv2d_groups(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.conv2d(x, w, None, groups=n)  # unchecked: torch.nn.functional.conv2d: parameter "groups": torch's stubs define F.conv2d as torch.conv2d, which the op table does not list, so the plugin hook never sees the call (mypy still rejects the line)  # E: No overload variant of "conv2d" matches argument types "Tensor", "Tensor", "None", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def F_conv3d_stride(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.conv3d(x.unsqueeze(2), w.unsqueeze(2), None, stride=n)  # unchecked: torch.nn.functional.conv3d: parameter "stride": torch's stubs define F.conv3d as torch.conv3d, which the op table does not list, so the plugin hook never sees the call (mypy still rejects the line)  # E: No overload variant of "conv3d" matches argument types "Tensor", "Tensor", "None", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def F_conv3d_padding(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.conv3d(x.unsqueeze(2), w.unsqueeze(2), None, padding=n)  # unchecked: torch.nn.functional.conv3d: parameter "padding": torch's stubs define F.conv3d as torch.conv3d, which the op table does not list, so the plugin hook never sees the call (mypy still rejects the line)  # E: No overload variant of "conv3d" matches argument types "Tensor", "Tensor", "None", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def F_conv3d_dilation(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.conv3d(x.unsqueeze(2), w.unsqueeze(2), None, dilation=n)  # unchecked: torch.nn.functional.conv3d: parameter "dilation": torch's stubs define F.conv3d as torch.conv3d, which the op table does not list, so the plugin hook never sees the call (mypy still rejects the line)  # E: No overload variant of "conv3d" matches argument types "Tensor", "Tensor", "None", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def F_conv3d_groups(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.conv3d(x.unsqueeze(2), w.unsqueeze(2), None, groups=n)  # unchecked: torch.nn.functional.conv3d: parameter "groups": torch's stubs define F.conv3d as torch.conv3d, which the op table does not list, so the plugin hook never sees the call (mypy still rejects the line)  # E: No overload variant of "conv3d" matches argument types "Tensor", "Tensor", "None", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def ops_batch_norm_training(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return ops.batch_norm(x, None, None, training=b)  # E: symscalar.ops.batch_norm: parameter "training" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument "training" to "batch_norm" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_batch_norm_training(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.batch_norm(x, None, None, training=b)  # E: torch.nn.functional.batch_norm: parameter "training" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument "training" to "batch_norm" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_dropout_training(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return ops.dropout(x, 0.5, b)  # E: symscalar.ops.dropout: parameter "training" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 3 to "dropout" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_rand_shape(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return ops.rand((n, 2))  # E: symscalar.ops.rand: parameter "shape" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "rand" has incompatible type "tuple[DynamicInt, int]"; expected "tuple[int, ...] | list[int]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_randn_shape(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return ops.randn((n, 2))  # E: symscalar.ops.randn: parameter "shape" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "randn" has incompatible type "tuple[DynamicInt, int]"; expected "tuple[int, ...] | list[int]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_rand_size(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return torch.rand((n, 2))  # E: torch.rand: parameter "size" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "rand" has incompatible type "tuple[DynamicInt, int]"; expected "Sequence[int | SymInt]"  [arg-type]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_randn_size(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return torch.randn((n, 2))  # E: torch.randn: parameter "size" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "randn" has incompatible type "tuple[DynamicInt, int]"; expected "Sequence[int | SymInt]"  [arg-type]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def ops_randint_shape(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return ops.randint(0, 5, (n, 2))  # E: symscalar.ops.randint: parameter "shape" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 3 to "randint" has incompatible type "tuple[DynamicInt, int]"; expected "tuple[int, ...] | list[int]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_multinomial_num_samples(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return ops.multinomial(x[0, 0], n)  # E: symscalar.ops.multinomial: parameter "num_samples" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "multinomial" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_multinomial_replacement(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return ops.multinomial(x[0, 0], 2, b)  # E: symscalar.ops.multinomial: parameter "replacement" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 3 to "multinomial" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_multinomial_num_samples(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return torch.multinomial(x[0, 0], n)  # E: torch.multinomial: parameter "num_samples" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "multinomial" has incompatible type "DynamicInt"; expected "int | SymInt"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_multinomial_replacement(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return torch.multinomial(x[0, 0], 2, b)  # E: torch.multinomial: parameter "replacement" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 3 to "multinomial" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def method_multinomial_num_samples(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return x[0, 0].multinomial(n)  # E: torch.Tensor.multinomial: parameter "num_samples" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "multinomial" of "TensorBase" has incompatible type "DynamicInt"; expected "int | SymInt"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def method_multinomial_replacement(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return x[0, 0].multinomial(2, b)  # E: torch.Tensor.multinomial: parameter "replacement" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 2 to "multinomial" of "TensorBase" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType

@symscalar.jit
def method_repeat_repeats(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return x.repeat(n, 1, 1, 1)  # E: torch.Tensor.repeat: parameter "repeats" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "repeat" of "TensorBase" matches argument types "DynamicInt", "int", "int", "int"  [call-overload]  # pyright-E: reportArgumentType


@symscalar.jit
def method_unflatten_dim(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return x.unflatten(n, (2, 2))  # E: torch.Tensor.unflatten: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "unflatten" of "Tensor" has incompatible type "DynamicInt"; expected "int | str"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def method_unflatten_sizes(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return x.unflatten(3, (n, 4))  # E: torch.Tensor.unflatten: parameter "sizes" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "unflatten" of "Tensor" has incompatible type "tuple[DynamicInt, int]"; expected "Sequence[int | SymInt] | Sequence[tuple[str, int]]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_unflatten_dim(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return torch.unflatten(x, n, (2, 2))  # E: torch.unflatten: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "unflatten" matches argument types "Tensor", "DynamicInt", "tuple[int, int]"  [call-overload]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_unflatten_sizes(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return torch.unflatten(x, 3, (n, 4))  # E: torch.unflatten: parameter "sizes" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 3 to "unflatten" has incompatible type "tuple[DynamicInt, int]"; expected "Sequence[int | SymInt]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_pad_pad(x: torch.Tensor, w: torch.Tensor, n: DynamicInt, b: DynamicBool) -> Any:
    return F.pad(x, (n, 1))  # E: torch.nn.functional.pad: parameter "pad" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "pad" has incompatible type "tuple[DynamicInt, int]"; expected "Sequence[int]"  [arg-type]  # pyright-E: reportArgumentType


X = torch.ones(1, 2, 4, 4)
W = torch.ones(2, 2, 1, 1)
CALLS = [
    (ops_avg_pool2d_kernel_size, (X, W, 1, True)),
    (ops_avg_pool2d_stride, (X, W, 1, True)),
    (ops_avg_pool2d_padding, (X, W, 1, True)),
    (ops_avg_pool2d_ceil_mode, (X, W, 1, True)),
    (ops_avg_pool2d_count_include_pad, (X, W, 1, True)),
    (ops_avg_pool2d_divisor_override, (X, W, 1, True)),
    (F_avg_pool2d_kernel_size, (X, W, 1, True)),
    (F_avg_pool2d_stride, (X, W, 1, True)),
    (F_avg_pool2d_padding, (X, W, 1, True)),
    (F_avg_pool2d_ceil_mode, (X, W, 1, True)),
    (F_avg_pool2d_count_include_pad, (X, W, 1, True)),
    (F_avg_pool2d_divisor_override, (X, W, 1, True)),
    (ops_max_pool2d_kernel_size, (X, W, 1, True)),
    (ops_max_pool2d_stride, (X, W, 1, True)),
    (ops_max_pool2d_padding, (X, W, 1, True)),
    (ops_max_pool2d_dilation, (X, W, 1, True)),
    (ops_max_pool2d_ceil_mode, (X, W, 1, True)),
    (ops_max_pool2d_return_indices, (X, W, 1, True)),
    (F_max_pool2d_kernel_size, (X, W, 1, True)),
    (F_max_pool2d_stride, (X, W, 1, True)),
    (F_max_pool2d_padding, (X, W, 1, True)),
    (F_max_pool2d_dilation, (X, W, 1, True)),
    (F_max_pool2d_ceil_mode, (X, W, 1, True)),
    (F_max_pool2d_return_indices, (X, W, 1, True)),
    (F_max_pool2d_with_indices_kernel_size, (X, W, 1, True)),
    (F_max_pool2d_with_indices_stride, (X, W, 1, True)),
    (F_max_pool2d_with_indices_padding, (X, W, 1, True)),
    (F_max_pool2d_with_indices_dilation, (X, W, 1, True)),
    (F_max_pool2d_with_indices_ceil_mode, (X, W, 1, True)),
    (F_max_pool2d_with_indices_return_indices, (X, W, 1, True)),
    (torch_max_pool2d_kernel_size, (X, W, 1, True)),
    (torch_max_pool2d_stride, (X, W, 1, True)),
    (torch_max_pool2d_padding, (X, W, 1, True)),
    (torch_max_pool2d_dilation, (X, W, 1, True)),
    (torch_max_pool2d_ceil_mode, (X, W, 1, True)),
    (ops_convolution_stride, (X, W, 1, True)),
    (ops_convolution_padding, (X, W, 1, True)),
    (ops_convolution_dilation, (X, W, 1, True)),
    (ops_convolution_groups, (X, W, 1, True)),
    (F_conv1d_stride, (X, W, 1, True)),
    (F_conv1d_padding, (X, W, 1, True)),
    (F_conv1d_dilation, (X, W, 1, True)),
    (F_conv1d_groups, (X, W, 1, True)),
    (F_conv2d_stride, (X, W, 1, True)),
    (F_conv2d_padding, (X, W, 1, True)),
    (F_conv2d_dilation, (X, W, 1, True)),
    (F_conv2d_groups, (X, W, 1, True)),
    (F_conv3d_stride, (X, W, 1, True)),
    (F_conv3d_padding, (X, W, 1, True)),
    (F_conv3d_dilation, (X, W, 1, True)),
    (F_conv3d_groups, (X, W, 1, True)),
    (ops_batch_norm_training, (X, W, 1, True)),
    (F_batch_norm_training, (X, W, 1, True)),
    (ops_dropout_training, (X, W, 1, True)),
    (ops_rand_shape, (X, W, 1, True)),
    (ops_randn_shape, (X, W, 1, True)),
    (torch_rand_size, (X, W, 1, True)),
    (torch_randn_size, (X, W, 1, True)),
    (ops_randint_shape, (X, W, 1, True)),
    (ops_multinomial_num_samples, (X, W, 1, True)),
    (ops_multinomial_replacement, (X, W, 1, True)),
    (torch_multinomial_num_samples, (X, W, 1, True)),
    (torch_multinomial_replacement, (X, W, 1, True)),
    (method_multinomial_num_samples, (X, W, 1, True)),
    (method_multinomial_replacement, (X, W, 1, True)),
    (method_repeat_repeats, (X, W, 1, True)),
    (method_unflatten_dim, (X, W, 1, True)),
    (method_unflatten_sizes, (X, W, 1, True)),
    (torch_unflatten_dim, (X, W, 1, True)),
    (torch_unflatten_sizes, (X, W, 1, True)),
    (F_pad_pad, (X, W, 1, True)),
]
