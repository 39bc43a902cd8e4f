# executable
"""Dynamic values in the static parameters of shape ops (dims, sizes, split sections,
indices), in the symscalar.ops, torch and Tensor-method spellings.

Each function passes a dynamic value to exactly one static parameter: mypy (with the plugin)
flags that line, and under symscalar.jit the call raises StaticValueRequiredError."""

import torch

import symscalar
from symscalar import DynamicBool, DynamicFloat, DynamicInt, ops



@symscalar.jit
def ops_broadcast_in_dim_shape(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.broadcast_in_dim(x, (n, 2, 3, 4), (1, 2, 3))  # E: symscalar.ops.broadcast_in_dim: parameter "shape" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "broadcast_in_dim" has incompatible type "tuple[DynamicInt, int, int, int]"; expected "tuple[int, ...] | list[int]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_broadcast_in_dim_broadcast_dims(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.broadcast_in_dim(x, (2, 3, 4), (0, n, 2))  # E: symscalar.ops.broadcast_in_dim: parameter "broadcast_dims" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 3 to "broadcast_in_dim" has incompatible type "tuple[int, DynamicInt, int]"; expected "tuple[int, ...] | list[int]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_cat_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.cat([x, x], n)  # E: symscalar.ops.cat: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "cat" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_concat_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.concat([x, x], n)  # E: torch.concat: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "concat" matches argument types "list[Tensor]", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_concatenate_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.concatenate([x, x], n)  # E: torch.concatenate: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "concatenate" matches argument types "list[Tensor]", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def ops_stack_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.stack([x, x], n)  # E: symscalar.ops.stack: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "stack" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_stack_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.stack([x, x], n)  # E: torch.stack: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "stack" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_chunk_chunks(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.chunk(x, n)[0]  # E: symscalar.ops.chunk: parameter "chunks" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "chunk" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_chunk_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.chunk(x, 2, n)[0]  # E: symscalar.ops.chunk: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 3 to "chunk" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_flatten_start_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.flatten(x, n)  # E: symscalar.ops.flatten: parameter "start_dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "flatten" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_flatten_end_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.flatten(x, 0, n)  # E: symscalar.ops.flatten: parameter "end_dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 3 to "flatten" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_narrow_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.narrow(x, n, 0, 1)  # E: symscalar.ops.narrow: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "narrow" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_narrow_start(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.narrow(x, 0, n, 1)  # E: symscalar.ops.narrow: parameter "start" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 3 to "narrow" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_narrow_length(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.narrow(x, 0, 0, n)  # E: symscalar.ops.narrow: parameter "length" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 4 to "narrow" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_select_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.select(x, n, 0)  # E: symscalar.ops.select: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "select" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_select_index(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.select(x, 0, n)  # E: symscalar.ops.select: parameter "index" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 3 to "select" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_squeeze_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.squeeze(x, n)  # E: symscalar.ops.squeeze: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "squeeze" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int] | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_transpose_dim0(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.transpose(x, n, 1)  # E: symscalar.ops.transpose: parameter "dim0" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "transpose" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_transpose_dim1(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.transpose(x, 0, n)  # E: symscalar.ops.transpose: parameter "dim1" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 3 to "transpose" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_unbind_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.unbind(x, n)[0]  # E: symscalar.ops.unbind: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "unbind" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_unsqueeze_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.unsqueeze(x, n)  # E: symscalar.ops.unsqueeze: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "unsqueeze" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_flip_dims(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.flip(x, (n,))  # E: symscalar.ops.flip: parameter "dims" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "flip" has incompatible type "tuple[DynamicInt]"; expected "tuple[int, ...] | list[int]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_permute_dims(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.permute(x, (n, 0, 2))  # E: symscalar.ops.permute: parameter "dims" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "permute" has incompatible type "tuple[DynamicInt, int, int]"; expected "tuple[int, ...] | list[int]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_chunk_chunks(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.chunk(x, n)[0]  # E: torch.chunk: parameter "chunks" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "chunk" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_chunk_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.chunk(x, 2, n)[0]  # E: torch.chunk: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 3 to "chunk" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_flatten_start_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.flatten(x, n)  # E: torch.flatten: parameter "start_dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "flatten" matches argument types "Tensor", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_flatten_end_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.flatten(x, 0, n)  # E: torch.flatten: parameter "end_dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "flatten" matches argument types "Tensor", "int", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_narrow_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.narrow(x, n, 0, 1)  # E: torch.narrow: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "narrow" matches argument types "Tensor", "DynamicInt", "int", "int"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_narrow_start(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.narrow(x, 0, n, 1)  # E: torch.narrow: parameter "start" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "narrow" matches argument types "Tensor", "int", "DynamicInt", "int"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_narrow_length(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.narrow(x, 0, 0, n)  # E: torch.narrow: parameter "length" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "narrow" matches argument types "Tensor", "int", "int", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_select_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.select(x, n, 0)  # E: torch.select: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "select" matches argument types "Tensor", "DynamicInt", "int"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_select_index(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.select(x, 0, n)  # E: torch.select: parameter "index" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "select" matches argument types "Tensor", "int", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_squeeze_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.squeeze(x, n)  # E: torch.squeeze: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "squeeze" matches argument types "Tensor", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_transpose_dim0(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.transpose(x, n, 1)  # E: torch.transpose: parameter "dim0" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "transpose" matches argument types "Tensor", "DynamicInt", "int"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_transpose_dim1(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.transpose(x, 0, n)  # E: torch.transpose: parameter "dim1" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "transpose" matches argument types "Tensor", "int", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_unbind_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.unbind(x, n)[0]  # E: torch.unbind: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "unbind" matches argument types "Tensor", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def torch_unsqueeze_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.unsqueeze(x, n)  # E: torch.unsqueeze: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "unsqueeze" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_flip_dims(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.flip(x, (n,))  # E: torch.flip: parameter "dims" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "flip" has incompatible type "tuple[DynamicInt]"; expected "Size | list[int] | tuple[int, ...]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_permute_dims(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.permute(x, (n, 0, 2))  # E: torch.permute: parameter "dims" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "permute" has incompatible type "tuple[DynamicInt, int, int]"; expected "Size | list[int] | tuple[int, ...]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_swapaxes_axis0(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.swapaxes(x, n, 1)  # E: torch.swapaxes: parameter "axis0" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "swapaxes" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_swapaxes_axis1(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.swapaxes(x, 0, n)  # E: torch.swapaxes: parameter "axis1" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 3 to "swapaxes" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_swapdims_dim0(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.swapdims(x, n, 1)  # E: torch.swapdims: parameter "dim0" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "swapdims" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_swapdims_dim1(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.swapdims(x, 0, n)  # E: torch.swapdims: parameter "dim1" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 3 to "swapdims" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def method_chunk_chunks(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.chunk(n)[0]  # E: torch.Tensor.chunk: parameter "chunks" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "chunk" of "TensorBase" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def method_chunk_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.chunk(2, n)[0]  # E: torch.Tensor.chunk: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "chunk" of "TensorBase" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def method_flatten_start_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.flatten(n)  # E: torch.Tensor.flatten: parameter "start_dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "flatten" of "TensorBase" matches argument type "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType


@symscalar.jit
def method_flatten_end_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.flatten(0, n)  # E: torch.Tensor.flatten: parameter "end_dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "flatten" of "TensorBase" matches argument types "int", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_narrow_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.narrow(n, 0, 1)  # E: torch.Tensor.narrow: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "narrow" of "TensorBase" matches argument types "DynamicInt", "int", "int"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_narrow_start(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.narrow(0, n, 1)  # E: torch.Tensor.narrow: parameter "start" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "narrow" of "TensorBase" matches argument types "int", "DynamicInt", "int"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_narrow_length(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.narrow(0, 0, n)  # E: torch.Tensor.narrow: parameter "length" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "narrow" of "TensorBase" matches argument types "int", "int", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_select_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.select(n, 0)  # E: torch.Tensor.select: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "select" of "TensorBase" matches argument types "DynamicInt", "int"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_select_index(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.select(0, n)  # E: torch.Tensor.select: parameter "index" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "select" of "TensorBase" matches argument types "int", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_squeeze_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.squeeze(n)  # E: torch.Tensor.squeeze: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "squeeze" of "TensorBase" matches argument type "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_transpose_dim0(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.transpose(n, 1)  # E: torch.Tensor.transpose: parameter "dim0" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "transpose" of "TensorBase" matches argument types "DynamicInt", "int"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_transpose_dim1(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.transpose(0, n)  # E: torch.Tensor.transpose: parameter "dim1" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "transpose" of "TensorBase" matches argument types "int", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_unbind_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.unbind(n)[0]  # E: torch.Tensor.unbind: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "unbind" of "TensorBase" matches argument type "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_unsqueeze_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.unsqueeze(n)  # E: torch.Tensor.unsqueeze: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "unsqueeze" of "TensorBase" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def method_swapaxes_axis0(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.swapaxes(n, 1)  # E: torch.Tensor.swapaxes: parameter "axis0" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "swapaxes" of "TensorBase" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def method_swapaxes_axis1(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.swapaxes(0, n)  # E: torch.Tensor.swapaxes: parameter "axis1" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "swapaxes" of "TensorBase" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def method_swapdims_dim0(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.swapdims(n, 1)  # E: torch.Tensor.swapdims: parameter "dim0" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "swapdims" of "TensorBase" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def method_swapdims_dim1(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.swapdims(0, n)  # E: torch.Tensor.swapdims: parameter "dim1" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "swapdims" of "TensorBase" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def method_flip_dims(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.flip(n)  # E: torch.Tensor.flip: parameter "dims" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "flip" of "TensorBase" matches argument type "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def method_permute_dims(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.permute(n, 0, 2)  # E: torch.Tensor.permute: parameter "dims" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "permute" of "TensorBase" matches argument types "DynamicInt", "int", "int"  [call-overload]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_split_split_size_or_sections(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.split(x, n)[0]  # E: symscalar.ops.split: parameter "split_size_or_sections" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "split" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_split_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.split(x, 1, n)[0]  # E: symscalar.ops.split: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 3 to "split" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_split_split_size_or_sections(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.split(x, n)[0]  # E: torch.functional.split: parameter "split_size_or_sections" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "split" has incompatible type "DynamicInt"; expected "int | list[int]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_split_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.split(x, 1, n)[0]  # E: torch.functional.split: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 3 to "split" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def method_split_split_size_or_sections(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.split(n)[0]  # E: torch.Tensor.split: parameter "split_size_or_sections" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "split" of "Tensor" has incompatible type "DynamicInt"; expected "int | SymInt | Sequence[int | SymInt]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def method_split_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.split(1, n)[0]  # E: torch.Tensor.split: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "split" of "Tensor" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def method_split_with_sizes_split_sizes(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.split_with_sizes([n, 1])[0]  # E: torch.Tensor.split_with_sizes: parameter "split_sizes" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: List item 0 has incompatible type "DynamicInt"; expected "int | SymInt"  [list-item]  # pyright-E: reportArgumentType


@symscalar.jit
def method_split_with_sizes_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.split_with_sizes([1, 1], n)[0]  # E: torch.Tensor.split_with_sizes: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "split_with_sizes" of "TensorBase" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def method_reshape_shape(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.reshape(n, -1)  # E: torch.Tensor.reshape: parameter "shape" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "reshape" of "TensorBase" matches argument types "DynamicInt", "int"  [call-overload]  # pyright-E: reportArgumentType


@symscalar.jit
def method_view_size(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.view(n, -1)  # E: torch.Tensor.view: parameter "size" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "view" of "TensorBase" matches argument types "DynamicInt", "int"  [call-overload]  # pyright-E: reportArgumentType


@symscalar.jit
def method_expand_size(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.expand(n, 2, 3, 4)  # E: torch.Tensor.expand: parameter "size" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "expand" of "TensorBase" matches argument types "DynamicInt", "int", "int", "int"  [call-overload]  # pyright-E: reportArgumentType


X = torch.ones(2, 3, 4)
@symscalar.jit
def torch_roll_shifts(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.roll(x, n, 0)  # E: torch.roll: parameter "shifts" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "roll" has incompatible type "DynamicInt"; expected "int | SymInt | Sequence[int | SymInt]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_roll_dims(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.roll(x, 1, n)  # E: torch.roll: parameter "dims" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 3 to "roll" has incompatible type "DynamicInt"; expected "int | Size | list[int] | tuple[int, ...]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def method_roll_shifts(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.roll(n, 0)  # E: torch.Tensor.roll: parameter "shifts" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 1 to "roll" of "TensorBase" has incompatible type "DynamicInt"; expected "int | SymInt | Sequence[int | SymInt]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def method_roll_dims(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.roll(1, n)  # E: torch.Tensor.roll: parameter "dims" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "roll" of "TensorBase" has incompatible type "DynamicInt"; expected "int | Size | list[int] | tuple[int, ...]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_roll_shifts(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.roll(x, n, 0)  # E: symscalar.ops.roll: parameter "shifts" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "roll" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int] | None"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_roll_dims(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.roll(x, 1, n)  # E: symscalar.ops.roll: parameter "dims" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 3 to "roll" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int] | None"  [arg-type]  # pyright-E: reportArgumentType



CALLS = [
    (ops_broadcast_in_dim_shape, (X, 1, True, 0.5)),
    (ops_broadcast_in_dim_broadcast_dims, (X, 1, True, 0.5)),
    (ops_cat_dim, (X, 1, True, 0.5)),
    (torch_concat_dim, (X, 1, True, 0.5)),
    (torch_concatenate_dim, (X, 1, True, 0.5)),
    (ops_stack_dim, (X, 1, True, 0.5)),
    (torch_stack_dim, (X, 1, True, 0.5)),
    (ops_chunk_chunks, (X, 1, True, 0.5)),
    (ops_chunk_dim, (X, 1, True, 0.5)),
    (ops_flatten_start_dim, (X, 1, True, 0.5)),
    (ops_flatten_end_dim, (X, 1, True, 0.5)),
    (ops_narrow_dim, (X, 1, True, 0.5)),
    (ops_narrow_start, (X, 1, True, 0.5)),
    (ops_narrow_length, (X, 1, True, 0.5)),
    (ops_select_dim, (X, 1, True, 0.5)),
    (ops_select_index, (X, 1, True, 0.5)),
    (ops_squeeze_dim, (X, 1, True, 0.5)),
    (ops_transpose_dim0, (X, 1, True, 0.5)),
    (ops_transpose_dim1, (X, 1, True, 0.5)),
    (ops_unbind_dim, (X, 1, True, 0.5)),
    (ops_unsqueeze_dim, (X, 1, True, 0.5)),
    (ops_flip_dims, (X, 1, True, 0.5)),
    (ops_permute_dims, (X, 1, True, 0.5)),
    (torch_chunk_chunks, (X, 1, True, 0.5)),
    (torch_chunk_dim, (X, 1, True, 0.5)),
    (torch_flatten_start_dim, (X, 1, True, 0.5)),
    (torch_flatten_end_dim, (X, 1, True, 0.5)),
    (torch_narrow_dim, (X, 1, True, 0.5)),
    (torch_narrow_start, (X, 1, True, 0.5)),
    (torch_narrow_length, (X, 1, True, 0.5)),
    (torch_select_dim, (X, 1, True, 0.5)),
    (torch_select_index, (X, 1, True, 0.5)),
    (torch_squeeze_dim, (X, 1, True, 0.5)),
    (torch_transpose_dim0, (X, 1, True, 0.5)),
    (torch_transpose_dim1, (X, 1, True, 0.5)),
    (torch_unbind_dim, (X, 1, True, 0.5)),
    (torch_unsqueeze_dim, (X, 1, True, 0.5)),
    (torch_flip_dims, (X, 1, True, 0.5)),
    (torch_permute_dims, (X, 1, True, 0.5)),
    (torch_swapaxes_axis0, (X, 1, True, 0.5)),
    (torch_swapaxes_axis1, (X, 1, True, 0.5)),
    (torch_swapdims_dim0, (X, 1, True, 0.5)),
    (torch_swapdims_dim1, (X, 1, True, 0.5)),
    (method_chunk_chunks, (X, 1, True, 0.5)),
    (method_chunk_dim, (X, 1, True, 0.5)),
    (method_flatten_start_dim, (X, 1, True, 0.5)),
    (method_flatten_end_dim, (X, 1, True, 0.5)),
    (method_narrow_dim, (X, 1, True, 0.5)),
    (method_narrow_start, (X, 1, True, 0.5)),
    (method_narrow_length, (X, 1, True, 0.5)),
    (method_select_dim, (X, 1, True, 0.5)),
    (method_select_index, (X, 1, True, 0.5)),
    (method_squeeze_dim, (X, 1, True, 0.5)),
    (method_transpose_dim0, (X, 1, True, 0.5)),
    (method_transpose_dim1, (X, 1, True, 0.5)),
    (method_unbind_dim, (X, 1, True, 0.5)),
    (method_unsqueeze_dim, (X, 1, True, 0.5)),
    (method_swapaxes_axis0, (X, 1, True, 0.5)),
    (method_swapaxes_axis1, (X, 1, True, 0.5)),
    (method_swapdims_dim0, (X, 1, True, 0.5)),
    (method_swapdims_dim1, (X, 1, True, 0.5)),
    (method_flip_dims, (X, 1, True, 0.5)),
    (method_permute_dims, (X, 1, True, 0.5)),
    (ops_split_split_size_or_sections, (X, 1, True, 0.5)),
    (ops_split_dim, (X, 1, True, 0.5)),
    (torch_split_split_size_or_sections, (X, 1, True, 0.5)),
    (torch_split_dim, (X, 1, True, 0.5)),
    (method_split_split_size_or_sections, (X, 1, True, 0.5)),
    (method_split_dim, (X, 1, True, 0.5)),
    (method_split_with_sizes_split_sizes, (X, 1, True, 0.5)),
    (method_split_with_sizes_dim, (X, 1, True, 0.5)),
    (method_reshape_shape, (X, 1, True, 0.5)),
    (method_view_size, (X, 1, True, 0.5)),
    (method_expand_size, (X, 1, True, 0.5)),
    (torch_roll_shifts, (X, 1, True, 0.5)),
    (torch_roll_dims, (X, 1, True, 0.5)),
    (method_roll_shifts, (X, 1, True, 0.5)),
    (method_roll_dims, (X, 1, True, 0.5)),
    (ops_roll_shifts, (X, 1, True, 0.5)),
    (ops_roll_dims, (X, 1, True, 0.5)),
]
