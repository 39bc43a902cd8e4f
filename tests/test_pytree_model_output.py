"""transformers' ModelOutput goes in and out of jit as eager gives it, and a module's
forward(input_ids, attention_mask=None, **kwargs) written the way transformers models write
theirs is jitted as called and trains like eager.

Marked slow (left out by `make test-fast`) because importing transformers costs each test
worker about a second; the other pytree cases are in tests/test_pytree_io.py."""

import pytest
import torch
from transformers.modeling_outputs import CausalLMOutput

import symscalar
from tests.test_pytree_io import assert_same_tree

pytestmark = pytest.mark.slow  # imports transformers: left out by `make test-fast`


def test_model_output_comes_back_as_the_same_model_output():
    def fn(x, labels=None):
        logits = x * 2
        loss = None if labels is None else ((logits - labels) ** 2).mean()
        return CausalLMOutput(loss=loss, logits=logits)

    f = symscalar.jit(fn)
    x = torch.randn(2, 3, requires_grad=True)
    for labels in (None, torch.zeros(2, 3)):
        out, ref = f(x, labels), fn(x, labels)
        assert_same_tree(out, ref)
        assert list(out.keys()) == list(ref.keys())
        assert len(out.to_tuple()) == len(ref.to_tuple())
        torch.testing.assert_close(out["logits"], ref[0] if labels is None else ref[1])
    torch.testing.assert_close(torch.autograd.grad(out.loss, x)[0], torch.autograd.grad(ref.loss, x)[0])


class TinyLM(torch.nn.Module):
    """A forward written the way transformers models write theirs."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = torch.nn.Linear(8, 8)
        self.head = torch.nn.Linear(8, 5)

    def forward(self, inputs_embeds, attention_mask=None, labels=None, return_dict=None, **kwargs):
        h = torch.tanh(self.proj(inputs_embeds))
        if attention_mask is not None:
            h = h * attention_mask[..., None]
        if kwargs.get("output_scale") is not None:
            h = h * kwargs["output_scale"]
        logits = self.head(h)
        loss = None
        if labels is not None:
            loss = ((logits - labels) ** 2).mean()
        if return_dict is False:
            return (loss, logits) if loss is not None else (logits,)
        return CausalLMOutput(loss=loss, logits=logits)


def test_module_forward_with_kwargs_trains_like_eager():
    torch.manual_seed(0)
    eager = TinyLM().double()
    jitted_module = TinyLM().double()
    jitted_module.load_state_dict(eager.state_dict())
    jm = symscalar.jit(jitted_module)
    opt = torch.optim.SGD(eager.parameters(), lr=0.1)
    jopt = torch.optim.SGD(jm.parameters(), lr=0.1)
    calls = [
        {"attention_mask": torch.ones(2, 4, dtype=torch.float64)},
        {"labels": torch.randn(2, 4, 5, dtype=torch.float64)},
        {"labels": torch.randn(2, 4, 5, dtype=torch.float64), "output_scale": 0.5},
        {"labels": torch.randn(2, 4, 5, dtype=torch.float64), "output_scale": 0.5},
        {"labels": torch.randn(2, 4, 5, dtype=torch.float64), "return_dict": False},
        {"labels": torch.randn(2, 4, 5, dtype=torch.float64), "attention_mask": torch.ones(2, 4, dtype=torch.float64)},
    ]
    for kwargs in calls:
        x = torch.randn(2, 4, 8, dtype=torch.float64)
        out, ref = jm(x, **kwargs), eager(x, **kwargs)
        assert_same_tree(out, ref)
        loss, ref_loss = (out[0], ref[0]) if "labels" in kwargs else (out.logits.sum(), ref.logits.sum())
        for o in (opt, jopt):
            o.zero_grad()
        loss.backward()
        ref_loss.backward()
        for (name, p), q in zip(jitted_module.named_parameters(), eager.parameters()):
            torch.testing.assert_close(p.grad, q.grad, msg=name)
        opt.step()
        jopt.step()
    # keyword names given are part of the key; the repeated call is a hit
    assert jm.cache_info() == symscalar.CacheInfo(hits=1, misses=5, entries=5)
