# executable
"""Dynamic values in the static parameters of composites (normalized shapes, attention and
dropout flags, `inplace`, `round(decimals=...)`), in the symscalar.ops and torch spellings.

Each function passes a dynamic value to exactly one static parameter: mypy (with the plugin)
flags that line, and under symscalar.jit the call raises StaticValueRequiredError; except
`F_dropout_p`: dropout's probability may be dynamic, so it type-checks and runs."""

import torch
import torch.nn.functional as F

import symscalar
from symscalar import DynamicBool, DynamicFloat, DynamicInt, ops



@symscalar.jit
def ops_layer_norm_normalized_shape(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.layer_norm(x, (n,))  # E: symscalar.ops.layer_norm: parameter "normalized_shape" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "layer_norm" has incompatible type "tuple[DynamicInt]"; expected "tuple[int, ...] | list[int]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_rms_norm_normalized_shape(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.rms_norm(x, [n])  # E: symscalar.ops.rms_norm: parameter "normalized_shape" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: List item 0 has incompatible type "DynamicInt"; expected "int"  [list-item]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_scaled_dot_product_attention_dropout_p(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.scaled_dot_product_attention(x, x, x, dropout_p=f)  # E: symscalar.ops.scaled_dot_product_attention: parameter "dropout_p" must be static (a compile-time constant) but got dynamic value "f" (DynamicFloat)...  [symscalar-static-required]  # plain-E: Argument "dropout_p" to "scaled_dot_product_attention" has incompatible type "DynamicFloat"; expected "float"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_scaled_dot_product_attention_is_causal(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.scaled_dot_product_attention(x, x, x, is_causal=b)  # E: symscalar.ops.scaled_dot_product_attention: parameter "is_causal" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument "is_causal" to "scaled_dot_product_attention" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_scaled_dot_product_attention_enable_gqa(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.scaled_dot_product_attention(x, x, x, enable_gqa=b)  # E: symscalar.ops.scaled_dot_product_attention: parameter "enable_gqa" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument "enable_gqa" to "scaled_dot_product_attention" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_weight_norm_dim(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch._weight_norm(x, x, n)  # E: torch._weight_norm: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 3 to "_weight_norm" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType  # pyright-E: reportPrivateImportUsage


@symscalar.jit
def F_layer_norm_normalized_shape(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return F.layer_norm(x, (n,))  # E: torch.nn.functional.layer_norm: parameter "normalized_shape" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "layer_norm" has incompatible type "tuple[DynamicInt]"; expected "Sequence[int]"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_rms_norm_normalized_shape(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return F.rms_norm(x, [n])  # E: torch.nn.functional.rms_norm: parameter "normalized_shape" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: List item 0 has incompatible type "DynamicInt"; expected "int"  [list-item]  # pyright-E: reportArgumentType


@symscalar.jit
def F_scaled_dot_product_attention_dropout_p(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return F.scaled_dot_product_attention(x, x, x, dropout_p=f)  # E: torch.nn.functional.scaled_dot_product_attention: parameter "dropout_p" must be static (a compile-time constant) but got dynamic value "f" (DynamicFloat)...  [symscalar-static-required]  # plain-E: Argument "dropout_p" to "scaled_dot_product_attention" has incompatible type "DynamicFloat"; expected "float"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_scaled_dot_product_attention_is_causal(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return F.scaled_dot_product_attention(x, x, x, is_causal=b)  # E: torch.nn.functional.scaled_dot_product_attention: parameter "is_causal" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument "is_causal" to "scaled_dot_product_attention" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_scaled_dot_product_attention_enable_gqa(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return F.scaled_dot_product_attention(x, x, x, enable_gqa=b)  # E: torch.nn.functional.scaled_dot_product_attention: parameter "enable_gqa" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument "enable_gqa" to "scaled_dot_product_attention" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_dropout_p(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    # dropout's `p` may be dynamic (the mask is drawn at run time): no error, and it runs
    return F.dropout(x, f)


@symscalar.jit
def F_dropout_training(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return F.dropout(x, 0.0, b)  # E: torch.nn.functional.dropout: parameter "training" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 3 to "dropout" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_dropout_inplace(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return F.dropout(x, 0.0, False, b)  # E: torch.nn.functional.dropout: parameter "inplace" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 4 to "dropout" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_relu_inplace(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return F.relu(x, b)  # E: torch.nn.functional.relu: parameter "inplace" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 2 to "relu" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_silu_inplace(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return F.silu(x, inplace=b)  # E: torch.nn.functional.silu: parameter "inplace" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument "inplace" to "silu" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_round_decimals(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.round(x, decimals=n)  # E: symscalar.ops.round: parameter "decimals" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "decimals" to "round" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def torch_round_decimals(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.round(x, decimals=n)  # E: torch.round: parameter "decimals" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "round" matches argument types "Tensor", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType


@symscalar.jit
def special_round_decimals(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return torch.special.round(x, decimals=n)  # E: torch.special.round: parameter "decimals" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument "decimals" to "round" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def method_round_decimals(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return x.round(decimals=n)  # E: torch.Tensor.round: parameter "decimals" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "round" of "TensorBase" matches argument type "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType


X = torch.ones(2, 3, 4)
# The torch.special spellings (typed Any by torch's stubs, see above) are not called: mypy
# cannot flag them, while the jit does raise StaticValueRequiredError.
@symscalar.jit
def F_hardswish_inplace(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return F.hardswish(x, b)  # E: torch.nn.functional.hardswish: parameter "inplace" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 2 to "hardswish" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_hardsigmoid_inplace(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return F.hardsigmoid(x, b)  # E: torch.nn.functional.hardsigmoid: parameter "inplace" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 2 to "hardsigmoid" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_relu6_inplace(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return F.relu6(x, b)  # E: torch.nn.functional.relu6: parameter "inplace" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument 2 to "relu6" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_hardtanh_min_val(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return F.hardtanh(x, f)  # E: torch.nn.functional.hardtanh: parameter "min_val" must be static (a compile-time constant) but got dynamic value "f" (DynamicFloat)...  [symscalar-static-required]  # plain-E: Argument 2 to "hardtanh" has incompatible type "DynamicFloat"; expected "float"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_hardtanh_max_val(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return F.hardtanh(x, -1.0, f)  # E: torch.nn.functional.hardtanh: parameter "max_val" must be static (a compile-time constant) but got dynamic value "f" (DynamicFloat)...  [symscalar-static-required]  # plain-E: Argument 3 to "hardtanh" has incompatible type "DynamicFloat"; expected "float"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_hardtanh_inplace(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return F.hardtanh(x, inplace=b)  # E: torch.nn.functional.hardtanh: parameter "inplace" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument "inplace" to "hardtanh" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_leaky_relu_negative_slope(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return F.leaky_relu(x, f)  # E: torch.nn.functional.leaky_relu: parameter "negative_slope" must be static (a compile-time constant) but got dynamic value "f" (DynamicFloat)...  [symscalar-static-required]  # plain-E: Argument 2 to "leaky_relu" has incompatible type "DynamicFloat"; expected "float"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_leaky_relu_inplace(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return F.leaky_relu(x, inplace=b)  # E: torch.nn.functional.leaky_relu: parameter "inplace" must be static (a compile-time constant) but got dynamic value "b" (DynamicBool)...  [symscalar-static-required]  # plain-E: Argument "inplace" to "leaky_relu" has incompatible type "DynamicBool"; expected "bool"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def F_group_norm_num_groups(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return F.group_norm(x, n)  # E: torch.nn.functional.group_norm: parameter "num_groups" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "group_norm" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_hardtanh_min_val(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.hardtanh(x, f)  # E: symscalar.ops.hardtanh: parameter "min_val" must be static (a compile-time constant) but got dynamic value "f" (DynamicFloat)...  [symscalar-static-required]  # plain-E: Argument 2 to "hardtanh" has incompatible type "DynamicFloat"; expected "float"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_hardtanh_max_val(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.hardtanh(x, -1.0, f)  # E: symscalar.ops.hardtanh: parameter "max_val" must be static (a compile-time constant) but got dynamic value "f" (DynamicFloat)...  [symscalar-static-required]  # plain-E: Argument 3 to "hardtanh" has incompatible type "DynamicFloat"; expected "float"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_leaky_relu_negative_slope(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.leaky_relu(x, f)  # E: symscalar.ops.leaky_relu: parameter "negative_slope" must be static (a compile-time constant) but got dynamic value "f" (DynamicFloat)...  [symscalar-static-required]  # plain-E: Argument 2 to "leaky_relu" has incompatible type "DynamicFloat"; expected "float"  [arg-type]  # pyright-E: reportArgumentType


@symscalar.jit
def ops_group_norm_num_groups(x: torch.Tensor, n: DynamicInt, b: DynamicBool, f: DynamicFloat) -> torch.Tensor:
    return ops.group_norm(x, n)  # E: symscalar.ops.group_norm: parameter "num_groups" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "group_norm" has incompatible type "DynamicInt"; expected "int"  [arg-type]  # pyright-E: reportArgumentType



CALLS = [
    (special_round_decimals, (X, 1, True, 0.5)),
    (ops_layer_norm_normalized_shape, (X, 1, True, 0.5)),
    (ops_rms_norm_normalized_shape, (X, 1, True, 0.5)),
    (ops_scaled_dot_product_attention_dropout_p, (X, 1, True, 0.5)),
    (ops_scaled_dot_product_attention_is_causal, (X, 1, True, 0.5)),
    (ops_scaled_dot_product_attention_enable_gqa, (X, 1, True, 0.5)),
    (torch_weight_norm_dim, (X, 1, True, 0.5)),
    (F_layer_norm_normalized_shape, (X, 1, True, 0.5)),
    (F_rms_norm_normalized_shape, (X, 1, True, 0.5)),
    (F_scaled_dot_product_attention_dropout_p, (X, 1, True, 0.5)),
    (F_scaled_dot_product_attention_is_causal, (X, 1, True, 0.5)),
    (F_scaled_dot_product_attention_enable_gqa, (X, 1, True, 0.5)),
    (F_dropout_p, (X, 1, True, 0.5)),
    (F_dropout_training, (X, 1, True, 0.5)),
    (F_dropout_inplace, (X, 1, True, 0.5)),
    (F_relu_inplace, (X, 1, True, 0.5)),
    (F_silu_inplace, (X, 1, True, 0.5)),
    (ops_round_decimals, (X, 1, True, 0.5)),
    (torch_round_decimals, (X, 1, True, 0.5)),
    (method_round_decimals, (X, 1, True, 0.5)),
    (F_hardswish_inplace, (X, 1, True, 0.5)),
    (F_hardsigmoid_inplace, (X, 1, True, 0.5)),
    (F_relu6_inplace, (X, 1, True, 0.5)),
    (F_hardtanh_min_val, (X, 1, True, 0.5)),
    (F_hardtanh_max_val, (X, 1, True, 0.5)),
    (F_hardtanh_inplace, (X, 1, True, 0.5)),
    (F_leaky_relu_negative_slope, (X, 1, True, 0.5)),
    (F_leaky_relu_inplace, (X, 1, True, 0.5)),
    (F_group_norm_num_groups, (X, 1, True, 0.5)),
    (ops_hardtanh_min_val, (X, 1, True, 0.5)),
    (ops_hardtanh_max_val, (X, 1, True, 0.5)),
    (ops_leaky_relu_negative_slope, (X, 1, True, 0.5)),
    (ops_group_norm_num_groups, (X, 1, True, 0.5)),
]
