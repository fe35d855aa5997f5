"""Data parallelism for training: ``torchrun --nproc_per_node=N -m tkg_indt.cli train ...``.

torchrun sets ``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK`` (and the rendezvous address); with
``WORLD_SIZE > 1`` :meth:`Dist.start` joins the process group (``gloo`` on CPU, ``nccl`` on CUDA,
one GPU per local rank). Every process builds the same model from the same seed (rank 0's
weights are broadcast anyway), draws its own batches (the sampler's stream depends on the rank),
and after each backward pass the gradients are averaged with one all-reduce of a flat buffer, so
the optimizer steps stay identical. Rank 0 alone validates and writes files.
"""
from __future__ import annotations

import dataclasses
import hashlib
import os

import torch
import torch.distributed as tdist


@dataclasses.dataclass
class Dist:
    world: int = 1
    rank: int = 0
    local_rank: int = 0
    device: torch.device = torch.device("cpu")

    @property
    def enabled(self) -> bool:
        return self.world > 1

    @property
    def main(self) -> bool:
        return self.rank == 0

    @classmethod
    def start(cls, device: str = "cpu") -> "Dist":
        """Join the process group when launched by torchrun; otherwise a single process."""
        world = int(os.environ.get("WORLD_SIZE", "1"))
        rank = int(os.environ.get("RANK", "0"))
        local = int(os.environ.get("LOCAL_RANK", "0"))
        dev = torch.device(device)
        if dev.type == "cuda":
            dev = torch.device("cuda", local if world > 1 else (dev.index or 0))
            torch.cuda.set_device(dev)
        if world > 1 and not tdist.is_initialized():
            tdist.init_process_group("nccl" if dev.type == "cuda" else "gloo")
        return cls(world, rank, local, dev)

    def broadcast_parameters(self, model) -> None:
        if self.enabled:
            for tensor in list(model.parameters()) + list(model.buffers()):
                tdist.broadcast(tensor.data, 0)

    def average_gradients(self, model) -> None:
        """All-reduce the mean gradient of every parameter that has one (one flat buffer)."""
        if not self.enabled:
            return
        params = [p for p in model.parameters() if p.requires_grad]
        flat = torch.cat([p.grad.reshape(-1) if p.grad is not None else torch.zeros_like(p).reshape(-1)
                          for p in params])
        tdist.all_reduce(flat)
        flat /= self.world
        offset = 0
        for p in params:
            n = p.numel()
            if p.grad is not None:
                p.grad.copy_(flat[offset:offset + n].view_as(p))
            offset += n

    def mean(self, value: float) -> float:
        if not self.enabled:
            return float(value)
        t = torch.tensor([float(value)], dtype=torch.float64, device=self.device)
        tdist.all_reduce(t)
        return float(t.item()) / self.world

    def barrier(self) -> None:
        if self.enabled:
            tdist.barrier()

    def digests(self, model) -> list[str]:
        """SHA-256 of every process's parameters (rank order); equal digests = processes in sync."""
        h = hashlib.sha256()
        for name, p in sorted(model.state_dict().items()):
            h.update(name.encode())
            h.update(p.detach().to("cpu").contiguous().numpy().tobytes())
        mine = h.hexdigest()
        if not self.enabled:
            return [mine]
        out = [None] * self.world
        tdist.all_gather_object(out, mine)
        return out

    def close(self) -> None:
        if self.enabled and tdist.is_initialized():
            tdist.destroy_process_group()
