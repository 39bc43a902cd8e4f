"""symscalar.jit with torch.distributed (issue 22), gloo on 127.0.0.1 with 2 processes:
``DDP(jit(model))`` trains like eager DDP (gradients all-reduced on every step);
``jit(DDP(model))`` is refused with the fix (DDP's Python forward would run only at trace time)."""

from __future__ import annotations

import copy
import datetime
import os
import traceback
from typing import Any

import pytest
import torch
import torch.distributed as dist
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP  # noqa: N817 - torch's own spelling

import symscalar
from symscalar.errors import UnsupportedOperationError
from tests.distributed_support import run_ranks

WORLD = 2
STEPS = 3


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))


def _worker(rank: int, port: int, errors: Any) -> None:
    try:
        os.environ["MASTER_ADDR"], os.environ["MASTER_PORT"] = "127.0.0.1", str(port)
        dist.init_process_group("gloo", rank=rank, world_size=WORLD, timeout=datetime.timedelta(seconds=60))
        torch.set_num_threads(1)
        base = _model()
        eager = DDP(copy.deepcopy(base))
        mine = DDP(symscalar.jit(copy.deepcopy(base)))
        opt_e = torch.optim.SGD(eager.parameters(), lr=0.1)
        opt_m = torch.optim.SGD(mine.parameters(), lr=0.1)
        for step in range(STEPS):
            g = torch.Generator().manual_seed(100 * step + rank)  # each rank its own batch
            x, y = torch.randn(3, 4, generator=g), torch.randn(3, 2, generator=g)
            for model, opt in ((eager, opt_e), (mine, opt_m)):
                opt.zero_grad(set_to_none=True)
                nn.functional.mse_loss(model(x), y).backward()
            for (name, a), (_, b) in zip(mine.module._orig_mod.named_parameters(), eager.module.named_parameters()):
                assert (a.grad is None) == (b.grad is None), name
                torch.testing.assert_close(a.grad, b.grad, msg=f"rank {rank} step {step} {name}")
            opt_e.step()
            opt_m.step()
        try:
            symscalar.jit(DDP(copy.deepcopy(base)))
        except UnsupportedOperationError as e:
            assert "DistributedDataParallel(symscalar.jit(model))" in str(e)
        else:
            raise AssertionError("jit(DDP(model)) was not refused")
        dist.barrier()
        dist.destroy_process_group()
    except BaseException:
        errors.put(f"rank {rank}: {traceback.format_exc()}")
        raise


@pytest.mark.slow
@pytest.mark.skipif(not dist.is_available() or not dist.is_gloo_available(), reason="needs torch.distributed gloo")
def test_ddp_of_jit_trains_like_eager_ddp_and_jit_of_ddp_is_refused() -> None:
    run_ranks(_worker, WORLD)
