"""CNNs over a dynamic batch dim: one ``dynamic_dims`` declaration, one forward and one
backward trace for every batch size, outputs, gradients and running statistics equal to eager.

The vision primitives (convolution, pooling, batch norm and their backwards) keep dim 0 of
their input (``ops/dynamic_shapes.py``); batch norm's unbiased-variance factor ``n / (n - 1)``
is a runtime scalar there. 33x33 images keep the last stage 2x2, so that batch norm in
training mode has more than one value per channel at B=1, as eager requires.
"""

from __future__ import annotations

import copy
from collections.abc import Callable

import pytest
import torch
from torch import nn

import symscalar

torchvision = pytest.importorskip("torchvision")
timm = pytest.importorskip("timm")

# the model and its batch sweep (timm's: a second CNN family, at fewer sizes to keep it short)
_MODELS: dict[str, tuple[Callable[[], nn.Module], tuple[int, ...]]] = {
    "torchvision_resnet18": (lambda: torchvision.models.resnet18(num_classes=10), (1, 2, 3, 8)),
    "timm_resnet10t": (lambda: timm.create_model("resnet10t", num_classes=10), (1, 3)),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(_MODELS))
def test_cnn_batch_sweep_one_program(name: str) -> None:
    torch.manual_seed(0)
    make, batches = _MODELS[name]
    model = make()
    eager = copy.deepcopy(model)
    jitted = symscalar.jit(model, dynamic_dims={"x": ("B",)})
    for batch in batches:
        x = torch.randn(batch, 3, 33, 33)
        out = jitted(x)
        out.sum().backward()
        ref = eager(x)
        ref.sum().backward()
        torch.testing.assert_close(out, ref)
        for (path, p), q in zip(model.named_parameters(), eager.parameters()):
            torch.testing.assert_close(p.grad, q.grad, msg=path)
        for (path, b), c in zip(model.named_buffers(), eager.buffers()):
            torch.testing.assert_close(b, c, msg=path)  # running statistics, batches tracked
    assert jitted.cache_info().misses == 1
    assert "s_B" in str(jitted.last_backward_trace())
    model.eval()
    eager.eval()
    for batch in (1, 2):
        x = torch.randn(batch, 3, 33, 33)
        torch.testing.assert_close(jitted(x), eager(x))
    assert jitted.cache_info().misses == 2  # train and eval: one program each


def test_a_convolution_over_dynamic_spatial_dims_is_one_program() -> None:
    conv = nn.Conv2d(3, 4, 3, stride=2, padding=1).double()
    jitted = symscalar.jit(conv, dynamic_dims={"input": ("B", None, "H", "W")})
    for shape in [(2, 3, 8, 8), (1, 3, 1, 5), (3, 3, 17, 6)]:
        x = torch.randn(shape, dtype=torch.float64)
        assert torch.equal(jitted(x), conv(x))
    assert jitted.cache_info().misses == 1


def test_pooling_over_dynamic_spatial_dims_is_refused_with_the_fix() -> None:
    pool = nn.MaxPool2d(2)
    jitted = symscalar.jit(pool, dynamic_dims={"input": ("B", None, "H", "W")})
    with pytest.raises(symscalar.DynamicValueError, match=r"only the batch dim \(dim 0\) may be dynamic"):
        jitted(torch.randn(2, 3, 8, 8))
