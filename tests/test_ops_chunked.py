"""grate.ops chunked path (plain PyTorch, memory-bounded): equal to the reference, ties included."""
import functools
import itertools

import pytest
import torch

from grate.ops import propagate
from grate.ops.chunked import propagate_chunked
from grate.ops.propagate import MESSAGES
from _cases import propagate_case

LEAVES = ("x", "boundary", "rel", "query_state")


pytestmark = pytest.mark.usefixtures("one_thread")  # tiny tensors: parallel index_add_ only adds wake-up cost


random_case = functools.partial(propagate_case, N=30, B=3, d=8, E=150, R2=7, T=12, dtype=torch.float64, tau_extra=4)


def forward_backward(fn, case, message, aggregate, mask):
    leaves = {k: case[k].clone().requires_grad_() for k in LEAVES}
    c = dict(case, **leaves)
    out = fn(c["x"], c["boundary"], c["rel"], c["edge_index"], c["edge_type"], c["edge_time"],
             c["query_time"], c["query_state"], message, aggregate, mask)
    w = torch.randn(out.shape, generator=torch.Generator().manual_seed(1)).to(out.dtype)
    (out * w).sum().backward()
    return [out.detach()] + [leaves[k].grad if leaves[k].grad is not None else torch.zeros_like(leaves[k])
                             for k in LEAVES]


def reference(*a):
    return propagate(*a[:10], edge_mask=a[10], impl="reference")


def chunked(*a):
    return propagate_chunked(*a[:10], edge_mask=a[10], chunk_elements=40 * 3 * 8)  # 40 edges a chunk


@pytest.mark.parametrize("message, aggregate, masked",
                         list(itertools.product(MESSAGES, ("sum", "pna"), (False, True))))
def test_chunked_matches_reference(message, aggregate, masked):
    case = random_case(seed=len(message) + masked)
    mask = (torch.rand(3, 150, generator=torch.Generator().manual_seed(2)) > 0.4) if masked else None
    for a, b in zip(forward_backward(reference, case, message, aggregate, mask),
                    forward_backward(chunked, case, message, aggregate, mask)):
        torch.testing.assert_close(b, a, rtol=1e-10, atol=1e-10)


def test_chunked_pna_ties_split_like_reference():
    """Zero states give many equal messages: max/min gradients are split among ties."""
    case = random_case(seed=3)
    case["x"][:15] = 0
    case["boundary"][::2] = 0
    for a, b in zip(forward_backward(reference, case, "grate", "pna", None),
                    forward_backward(chunked, case, "grate", "pna", None)):
        torch.testing.assert_close(b, a, rtol=1e-10, atol=1e-10)


def test_impl_chunked_through_propagate():
    case = random_case(seed=4, dtype=torch.float32)
    args = [case[k] for k in ("x", "boundary", "rel", "edge_index", "edge_type", "edge_time",
                              "query_time", "query_state")]
    torch.testing.assert_close(propagate(*args, "grate", "pna", impl="chunked"),
                               propagate(*args, "grate", "pna", impl="reference"))
