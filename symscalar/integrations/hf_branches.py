"""transformers' functions whose eager branch symscalar traces (``compiling.eager_branch_in``).

While tracing, ``torch.compiler.is_compiling()`` answers True so that libraries take their
value-free branches (see ``symscalar/compiling.py``). Where transformers' compile branch is not its
eager computation, the program's numbers were not eager's:

- ``sdpa_attention_forward``: for a one-token decode step with grouped key/value heads and a mask,
  eager packs the query heads of each group into rows (``pack_gqa``: one attention over the
  key/value heads) and torch.compile repeats the key/value heads (``repeat_kv``). Same attention,
  other blocks for the kernel: the logits of every decode step were 1 ulp from eager's. The eager
  branch reads shapes only (``q_length == 1``), so it is traced.

``register()`` reads the modules from ``sys.modules``, so that this module does not import
transformers: ``symscalar.jit`` calls it when transformers is loaded.
"""

from __future__ import annotations

import sys

from symscalar.compiling import eager_branch_in

__all__ = ["register"]

_registered: set[int] = set()


def register() -> None:
    """Register the functions of the transformers modules already imported (idempotent)."""
    sdpa = sys.modules.get("transformers.integrations.sdpa_attention")
    import_utils = sys.modules.get("transformers.utils.import_utils")
    if sdpa is None or import_utils is None or id(sdpa) in _registered:
        return
    function = getattr(sdpa, "sdpa_attention_forward", None)
    forwarders = tuple(
        f for f in (getattr(import_utils, name, None) for name in ("is_torchdynamo_compiling", "is_tracing")) if f
    )
    if callable(function) and forwarders:
        eager_branch_in(function, forwarders=forwarders)
    _registered.add(id(sdpa))
