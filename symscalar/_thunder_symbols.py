"""The mapping from lightning-thunder's symbols onto symscalar's static-parameter table.

``symscalar.thunder_lint`` reads thunder's traces with it; the table itself is plain data, so it
imports neither thunder nor torch (like ``_static_params``, which it refers to).
"""

from __future__ import annotations

from dataclasses import dataclass

from symscalar._static_params import STATIC_PARAMS

__all__ = ["THUNDER_SYMBOLS", "SIZE_LIKE", "Contract", "contract_of"]

# Thunder symbols whose contract is an entry of STATIC_PARAMS under another name, or whose
# parameters thunder names differently: symbol -> (STATIC_PARAMS key, {symscalar parameter:
# thunder parameter, or None where thunder's signature has no such parameter}). Every other
# thunder symbol whose id is a STATIC_PARAMS key ("torch.sum", "torch.Tensor.expand") maps to that
# entry with the same parameter names. tests/test_thunder_lint.py checks every parameter resolves
# and prints which of thunder.torch's symbols that take dims are covered.
THUNDER_SYMBOLS: dict[str, tuple[str, dict[str, str | None]]] = {
    # thunder.torch, named as thunder names them
    "torch.full": ("torch.full", {"size": "shape"}),
    "torch.ones": ("torch.ones", {"size": "shape"}),
    "torch.zeros": ("torch.zeros", {"size": "shape"}),
    "torch.rand": ("torch.rand", {"size": "shape"}),
    "torch.randn": ("torch.randn", {"size": "shape"}),
    "torch.Tensor.expand": ("torch.Tensor.expand", {"size": "shape"}),
    "torch.Tensor.view": ("torch.Tensor.view", {"size": "shape"}),
    "torch.std": ("torch.std", {"unbiased": None}),
    "torch.var": ("torch.var", {"unbiased": None}),
    "torch.var_mean": ("torch.var_mean", {"unbiased": None}),
    "torch.gather": ("torch.gather", {"sparse_grad": None}),
    "torch.split": ("torch.functional.split", {"split_size_or_sections": "size_or_sections"}),
    "torch.layer_norm": ("torch.nn.functional.layer_norm", {}),
    "torch.rms_norm": ("torch.nn.functional.rms_norm", {}),
    "torch.convolution": ("symscalar.ops.convolution", {}),
    # in-place variants share the out-of-place contract
    "torch.Tensor.cumsum_": ("torch.cumsum", {}),
    "torch.Tensor.index_add_": ("torch.index_add", {}),
    "torch.Tensor.scatter_": ("torch.scatter", {}),
    "torch.Tensor.scatter_add_": ("torch.scatter_add", {}),
    "torch.Tensor.tril_": ("torch.tril", {}),
    "torch.Tensor.triu_": ("torch.triu", {}),
    # thunder symbols with the contract of a close symscalar op
    "log_softmax_backward": ("torch.log_softmax", {}),  # the grad transform's own symbol
    "torch.nn.functional.softmin": ("torch.softmax", {}),
    "torch.nn.functional.max_pool1d": ("torch.nn.functional.max_pool2d", {}),
    "torch.nn.functional.max_pool3d": ("torch.nn.functional.max_pool2d", {}),
    "torch.nn.functional.avg_pool1d": ("torch.nn.functional.avg_pool2d", {}),
    "torch.nn.functional.avg_pool3d": ("torch.nn.functional.avg_pool2d", {}),
    # thunder.core.prims: what the decompositions and the grad transform emit
    "prims.sum": ("symscalar.ops.sum", {"dim": "dims", "keepdim": None}),
    "prims.prod": ("symscalar.ops.prod", {"dim": "dims", "keepdim": None}),
    "prims.amax": ("symscalar.ops.amax", {"dim": "dims", "keepdim": None}),
    "prims.amin": ("symscalar.ops.amin", {"dim": "dims", "keepdim": None}),
    "prims.var": ("symscalar.ops.var", {"dim": "dims", "keepdim": None}),
    "prims.var_mean": ("symscalar.ops.var_mean", {"dim": "dims", "keepdim": None}),
    "prims.std": ("symscalar.ops.std", {"dim": "dims", "keepdim": None}),
    "prims.argmax": ("symscalar.ops.argmax", {"keepdim": None}),
    "prims.argmin": ("symscalar.ops.argmin", {"keepdim": None}),
    "prims.broadcast_in_dim": ("symscalar.ops.broadcast_in_dim", {"broadcast_dims": "broadcast_dimensions"}),
    "prims.transpose": ("torch.permute", {"dims": "permutation"}),
    "prims.squeeze": ("torch.squeeze", {"dim": "dims"}),
    "prims.cat": ("torch.cat", {}),
    "prims.reshape": ("torch.reshape", {}),
    "prims.view": ("torch.reshape", {}),
    "prims.flip": ("torch.flip", {}),
    "prims.take": ("torch.index_select", {}),
    "prims.take_along_axis": ("torch.take_along_dim", {}),
    "prims.gather": ("torch.gather", {"sparse_grad": None}),
    "prims.index_add": ("torch.index_add", {}),
    "prims.scatter": ("torch.scatter", {}),
    "prims.scatter_add": ("torch.scatter_add", {}),
    "prims.topk": ("torch.topk", {}),
    "prims.sort": ("torch.sort", {"stable": None}),
    "prims.convolution": ("symscalar.ops.convolution", {}),
}

# Static parameters that are sizes rather than structure (DESIGN.md, "Dynamic shapes"): thunder's
# symbolic-values mode carries tensor sizes through them by design, so a NumberProxy there is a
# finding only when it comes from a number argument, never when it is (arithmetic on) a tensor's size.
SIZE_LIKE = frozenset(
    {"shape", "size", "sizes", "normalized_shape", "output_size", "split_size_or_sections", "split_sizes"}
    | {"repeats", "start", "end", "step", "length", "index", "k", "shifts", "pad", "num_classes"}
)


@dataclass(frozen=True)
class Contract:
    """What symscalar requires of one thunder symbol's arguments."""

    key: str  # the STATIC_PARAMS entry, e.g. "torch.sum"
    static: tuple[tuple[str, str], ...]  # (symscalar parameter, thunder parameter) for each static one thunder has
    absent: tuple[str, ...] = ()  # symscalar's static parameters thunder's signature lacks


def contract_of(name: str) -> Contract | None:
    """The contract of the thunder symbol called ``name`` (see ``symbol_name``), or None if
    symscalar's table has no entry for it."""
    key, renames = THUNDER_SYMBOLS.get(name, (name, {}))
    entry = STATIC_PARAMS.get(key)
    if entry is None:
        return None
    static: list[tuple[str, str]] = []
    absent: list[str] = []
    for param in entry[1]:
        argument = renames.get(param, param)
        if argument is None:
            absent.append(param)
        else:
            static.append((param, argument))
    return Contract(key, tuple(static), tuple(absent))
