# executable
"""Names used before their definition: the semantic analyzer defers these and analyzes the
module again; the plugin's checks hold on the second pass. (The annotations that jit reads
are not forward references: jit resolves them when it decorates.)"""

import torch

import symscalar
from symscalar import DynamicInt, ops


def sum_over(x: torch.Tensor, n: "LaterDynamic") -> torch.Tensor:
    return ops.sum(x, n)  # E: symscalar.ops.sum: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "sum" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int] | None"  [arg-type]  # pyright-E: reportArgumentType


def scale_by(x: torch.Tensor, n: "LaterDynamic") -> torch.Tensor:
    return ops.mul(x, n) + Config.dim


class Model:
    def forward(self, x: torch.Tensor, n: "LaterDynamic") -> torch.Tensor:
        return x.sum(Config.dim) + torch.sum(x, n)  # E: torch.sum: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "sum" matches argument types "Tensor", "DynamicInt"  [call-overload]  # pyright-E: reportArgumentType  # pyright-E: reportCallIssue


@symscalar.jit
def sum_later(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return sum_over(x, n)


@symscalar.jit
def scale_later(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return scale_by(x, n)


@symscalar.jit
def model_later(x: torch.Tensor, n: DynamicInt) -> torch.Tensor:
    return Model().forward(x, n)


class Base:
    dim: int = 1


class Config(Base):
    pass


LaterDynamic = DynamicInt
X = torch.ones(2, 3)
# (jitted function, arguments, the helpers it calls whose lines count as its own)
CALLS = [
    (sum_later, (X, 1), sum_over),
    (scale_later, (X, 2), scale_by),
    (model_later, (X, 1), Model.forward),
]
