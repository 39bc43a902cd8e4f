# executable
"""Names used before their definition: the semantic analyzer defers these and analyzes the
module again; the plugin's checks hold on the second pass."""

import torch

import symscalar
from symscalar import DynamicInt, ops


@symscalar.jit
def sum_later(x: torch.Tensor, n: "LaterDynamic") -> torch.Tensor:
    return ops.sum(x, n)  # E: symscalar.ops.sum: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: Argument 2 to "sum" has incompatible type "DynamicInt"; expected "int | tuple[int, ...] | list[int] | None"  [arg-type]


@symscalar.jit
def scale_later(x: torch.Tensor, n: "LaterDynamic") -> torch.Tensor:
    return ops.mul(x, n) + Config.dim


class Model:
    def forward(self, x: torch.Tensor, n: "LaterDynamic") -> torch.Tensor:
        return x.sum(Config.dim) + torch.sum(x, n)  # E: torch.sum: parameter "dim" must be static (a compile-time constant) but got dynamic value "n" (DynamicInt)...  [symscalar-static-required]  # plain-E: No overload variant of "sum" matches argument types "Tensor", "DynamicInt"  [call-overload]


class Base:
    dim: int = 1


class Config(Base):
    pass


LaterDynamic = DynamicInt
X = torch.ones(2, 3)
CALLS = [
    (sum_later, (X, 1)),
    (scale_later, (X, 2)),
]
