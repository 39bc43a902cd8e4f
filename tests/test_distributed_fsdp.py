"""symscalar.jit with FSDP2 (``torch.distributed.fsdp.fully_shard``; issue 22), gloo on
127.0.0.1 with 2 processes, each rank its own batch, 3 SGD steps compared with eager FSDP
(loss, every gradient, every parameter after the step):

- the root sharded and jitted, ``symscalar.jit(fully_shard(model))``: FSDP's root hooks run
  eagerly around the program on every call;
- the blocks jitted inside a per-block sharded model, ``block.forward = symscalar.jit(block.forward)``
  or ``model[i] = symscalar.jit(block)``, then ``fully_shard`` of each block and of the root;
- ``symscalar.jit(model)`` of a per-block sharded model: refused, naming fully_shard and both fixes.
"""

from __future__ import annotations

import datetime
import os
import traceback
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.fsdp import fully_shard

import symscalar
from symscalar.errors import UnsupportedOperationError
from tests.distributed_support import run_ranks

WORLD = 2
STEPS = 3


def _model() -> nn.Sequential:
    torch.manual_seed(0)
    block = lambda: nn.Sequential(nn.Linear(6, 6), nn.LayerNorm(6), nn.GELU())  # noqa: E731
    return nn.Sequential(nn.Linear(4, 6), block(), block(), nn.Linear(6, 2))


def _shard_blocks(model: nn.Sequential, prepare: Callable[[nn.Module], nn.Module] = lambda b: b) -> nn.Module:
    for i in (1, 2):
        model[i] = prepare(model[i])
        fully_shard(model[i])
    fully_shard(model)
    return model


def _jit_forward(block: nn.Module) -> nn.Module:
    block.forward = symscalar.jit(block.forward)
    return block


def _train(model: Any, rank: int) -> list[Any]:
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    seen: list[Any] = []
    for step in range(STEPS):
        g = torch.Generator().manual_seed(100 * step + rank)  # each rank its own batch
        x, y = torch.randn(3, 4, generator=g), torch.randn(3, 2, generator=g)
        opt.zero_grad(set_to_none=True)
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        grads = [None if p.grad is None else p.grad.full_tensor() for p in model.parameters()]
        opt.step()
        seen.append((loss.detach(), grads, [p.full_tensor() for p in model.parameters()]))
    return seen


def _compare(label: str, got: list[Any], expected: list[Any]) -> None:
    for step, ((loss_g, grads_g, params_g), (loss_e, grads_e, params_e)) in enumerate(zip(got, expected, strict=True)):
        torch.testing.assert_close(loss_g, loss_e, msg=f"{label} step {step} loss")
        for i, (a, b) in enumerate(zip(grads_g, grads_e, strict=True)):
            assert (a is None) == (b is None), f"{label} step {step} grad {i}"
            torch.testing.assert_close(a, b, msg=f"{label} step {step} grad {i}")
        for i, (a, b) in enumerate(zip(params_g, params_e, strict=True)):
            torch.testing.assert_close(a, b, msg=f"{label} step {step} param {i}")


def _worker(rank: int, port: int, errors: Any) -> None:
    try:
        os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
        dist.init_process_group("gloo", rank=rank, world_size=WORLD, timeout=datetime.timedelta(seconds=60))
        torch.set_num_threads(1)

        root_eager = _train(fully_shard(_model()), rank)
        root_jitted = symscalar.jit(fully_shard(_model()))
        _compare("jit(fully_shard(model))", _train(root_jitted, rank), root_eager)
        assert root_jitted.cache_info().misses == 1  # no retrace per step

        blocks_eager = _train(_shard_blocks(_model()), rank)
        model = _shard_blocks(_model(), _jit_forward)
        _compare("block.forward = jit(block.forward)", _train(model, rank), blocks_eager)
        assert [model[i].forward.cache_info().misses for i in (1, 2)] == [1, 1]
        model = _shard_blocks(_model(), symscalar.jit)
        _compare("model[i] = jit(block)", _train(model, rank), blocks_eager)
        assert [model[i].cache_info().misses for i in (1, 2)] == [1, 1]

        try:
            symscalar.jit(_shard_blocks(_model()))(torch.randn(3, 4))
        except UnsupportedOperationError as e:
            assert "fully_shard" in str(e) and "block.forward = symscalar.jit(block.forward)" in str(e), e
        else:
            raise AssertionError("jit(model) of a per-block fully_shard'ed model was not refused")
        dist.barrier()
        dist.destroy_process_group()
    except BaseException:
        errors.put(f"rank {rank}: {traceback.format_exc()}")
        raise


@pytest.mark.slow
@pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(), reason="needs torch.distributed gloo")
def test_fsdp2_compositions_train_like_eager_fsdp_or_are_refused() -> None:
    run_ranks(_worker, WORLD)
