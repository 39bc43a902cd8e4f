"""The op library: ``symscalar.ops.sum(x, dim)``, ``symscalar.ops.mul(x, s)``...

Importing this package registers every primitive and every torch spelling it implements.
Each family module lists its user-facing ops in ``__all__``.
"""

from symscalar.ops import (  # noqa: F401 - importing a family registers its ops
    attention,
    checks,
    composites,
    conv,
    dynamic_shapes,
    elementwise,
    factories,
    indexing,
    join,
    losses,
    nn,
    norms,
    random,
    reductions,
    scan,
    shape,
)
from symscalar.ops.composites import *  # noqa: F403
from symscalar.ops.conv import *  # noqa: F403
from symscalar.ops.elementwise import *  # noqa: F403
from symscalar.ops.factories import *  # noqa: F403
from symscalar.ops.indexing import *  # noqa: F403
from symscalar.ops.join import *  # noqa: F403
from symscalar.ops.losses import *  # noqa: F403
from symscalar.ops.nn import *  # noqa: F403
from symscalar.ops.norms import *  # noqa: F403
from symscalar.ops.random import *  # noqa: F403
from symscalar.ops.reductions import *  # noqa: F403
from symscalar.ops.shape import *  # noqa: F403

__all__ = [
    *elementwise.__all__,
    *reductions.__all__,
    *shape.__all__,
    *join.__all__,
    *factories.__all__,
    *composites.__all__,
    *norms.__all__,
    *indexing.__all__,
    *nn.__all__,
    *random.__all__,
    *conv.__all__,
    *losses.__all__,
]
