"""grate.ops accelerated paths (fused C++ kernel, chunked) against the reference: values and gradients.

The fused tests build the kernel on first use (about a minute, cached afterwards; see
grate/ops/fused.py) and are skipped, with the reason, when it cannot be built.
"""
import functools
import itertools

import pytest
import torch

from grate.ops import propagate
from grate.ops.propagate import MESSAGES
from _cases import propagate_case

AGGS = ("sum", "pna")
LEAVES = ("x", "boundary", "rel", "query_state")


@pytest.fixture(scope="module")
def fused_kernel():
    from grate.ops import fused
    if fused.kernel() is None:
        pytest.skip(f"fused kernel unavailable: {fused.why()}")
    return fused


random_case = functools.partial(propagate_case, N=40, B=3, d=8, E=200, R2=10, T=15, dtype=torch.float32, tau_extra=5)


def forward_backward(case, message, aggregate, impl, edge_mask=None, seed=1):
    """Output and gradients of sum(out * w) w.r.t. x, boundary, rel, query_state."""
    leaves = {k: case[k].clone().requires_grad_() for k in LEAVES}
    c = dict(case, **leaves)
    out = propagate(c["x"], c["boundary"], c["rel"], c["edge_index"], c["edge_type"], c["edge_time"],
                    c["query_time"], c["query_state"], message, aggregate, edge_mask=edge_mask, impl=impl)
    w = torch.randn(out.shape, generator=torch.Generator().manual_seed(seed)).to(out.dtype)
    (out * w).sum().backward()
    grads = {k: (t.grad if t.grad is not None else torch.zeros_like(t)) for k, t in leaves.items()}
    return out.detach(), grads


def assert_close(ref, got, rtol, atol_scale):
    out_r, g_r = ref
    out_g, g_g = got
    torch.testing.assert_close(out_g, out_r, rtol=rtol, atol=atol_scale * out_r.abs().max().item())
    for k in LEAVES:
        torch.testing.assert_close(g_g[k], g_r[k], rtol=rtol, atol=atol_scale * (g_r[k].abs().max().item() + 1e-30),
                                   msg=lambda m, k=k: f"grad {k}: {m}")


CASES = list(itertools.product(MESSAGES, AGGS, [False, True]))


def mask_for(case, masked, seed=3):
    if not masked:
        return None
    B, E = case["x"].shape[1], case["edge_type"].numel()
    return torch.rand(B, E, generator=torch.Generator().manual_seed(seed)) > 0.35


def to64(case):
    return {k: (v.double() if v.is_floating_point() else v) for k, v in case.items()}


def check_fused(case, message, aggregate, mask=None):
    """Fused float32 output and gradients agree with the reference.

    PNA's std = sqrt(E[m^2] - E[m]^2) (NBFNet's formula) loses float32 digits where the variance
    is small, so two float32 summation orders can differ by more than 1e-4 there. For PNA both are
    judged against the float64 reference: the fused path must be about as accurate as the
    reference (and close to it)."""
    ref = forward_backward(case, message, aggregate, "reference", mask)
    got = forward_backward(case, message, aggregate, "fused", mask)
    if aggregate == "sum" or case["x"].dtype == torch.float64:
        assert_close(ref, got, rtol=1e-4, atol_scale=1e-5)
        return
    truth = forward_backward(to64(case), message, aggregate, "reference", mask)
    assert_close(ref, got, rtol=1e-2, atol_scale=1e-3)
    pairs = [("out", ref[0], got[0], truth[0])] + [(k, ref[1][k], got[1][k], truth[1][k]) for k in LEAVES]
    for name, a, b, t in pairs:
        err_ref = (a.double() - t).abs().max().item()
        err_fused = (b.double() - t).abs().max().item()
        assert err_fused <= 3 * err_ref + 2e-5 * t.abs().max().item(), (name, err_fused, err_ref)


@pytest.mark.parametrize("message, aggregate, masked", CASES)
def test_fused_matches_reference_float32(fused_kernel, message, aggregate, masked):
    case = random_case(d=32, seed=CASES.index((message, aggregate, masked)))
    check_fused(case, message, aggregate, mask_for(case, masked))


@pytest.mark.parametrize("message, aggregate, masked", CASES)
def test_fused_matches_reference_float64(fused_kernel, message, aggregate, masked):
    case = random_case(d=6, seed=5, dtype=torch.float64)  # runtime-width code path
    mask = mask_for(case, masked)
    ref = forward_backward(case, message, aggregate, "reference", mask)
    got = forward_backward(case, message, aggregate, "fused", mask)
    assert_close(ref, got, rtol=1e-9, atol_scale=1e-11)


@pytest.mark.parametrize("d", [2, 10, 64])
def test_fused_widths(fused_kernel, d):
    case = random_case(d=d, seed=d)
    for aggregate in AGGS:
        check_fused(case, "grate", aggregate)


def test_fused_gradcheck(fused_kernel):
    """The kernel's backward is the derivative of its forward (finite differences, float64)."""
    case = random_case(N=7, B=2, d=4, E=20, R2=3, seed=2, dtype=torch.float64)
    mask = mask_for(case, True, seed=4)
    for message, aggregate in (("grate", "pna"), ("sincos", "sum")):
        def f(x, boundary, rel, qs):
            return propagate(x, boundary, rel, case["edge_index"], case["edge_type"], case["edge_time"],
                             case["query_time"], qs, message, aggregate, edge_mask=mask, impl="fused")
        inputs = tuple(case[k].clone().requires_grad_() for k in LEAVES)
        assert torch.autograd.gradcheck(f, inputs, eps=1e-6, atol=1e-6)


def test_fused_several_threads(fused_kernel):
    """A graph large enough for one work piece per thread (per-piece grad buffers, balancing)."""
    old = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        case = random_case(N=800, B=2, d=32, E=6000, R2=20, seed=21)
        mask = mask_for(case, True)
        for aggregate in AGGS:
            check_fused(case, "grate", aggregate, mask)
    finally:
        torch.set_num_threads(old)


def test_fused_edge_cases(fused_kernel):
    # isolated nodes, self-loops, duplicate edges, an empty graph
    case = random_case(N=10, E=6, seed=8)
    case["edge_index"] = torch.tensor([[0, 0, 3, 3, 5, 5], [0, 1, 1, 1, 5, 2]])
    for aggregate in AGGS:
        check_fused(case, "grate", aggregate)
    empty = dict(case, edge_index=torch.zeros(2, 0, dtype=torch.long),
                 edge_type=torch.zeros(0, dtype=torch.long), edge_time=torch.zeros(0, dtype=torch.long))
    for aggregate in AGGS:
        check_fused(empty, "grate", aggregate)


def test_fused_all_edges_masked_for_one_query(fused_kernel):
    case = random_case(seed=12)
    mask = torch.ones(3, case["edge_type"].numel(), dtype=torch.bool)
    mask[1] = False
    for aggregate in AGGS:
        check_fused(case, "grate", aggregate, mask)


def test_fused_deterministic_and_graph_cache(fused_kernel):
    case = random_case(seed=13)
    a = forward_backward(case, "grate", "pna", "fused")
    b = forward_backward(case, "grate", "pna", "fused")
    assert torch.equal(a[0], b[0]) and all(torch.equal(a[1][k], b[1][k]) for k in LEAVES)
    # editing the graph in place must not reuse the cached CSR
    case["edge_index"][1].copy_(torch.flip(case["edge_index"][1], [0]))
    check_fused(case, "grate", "sum")


def test_fused_noncontiguous_and_partial_grads(fused_kernel):
    case = random_case(seed=14)
    x_t = case["x"].transpose(0, 1).contiguous().transpose(0, 1)  # same values, other strides
    assert not x_t.is_contiguous()
    out_ref = propagate(case["x"], case["boundary"], case["rel"], case["edge_index"], case["edge_type"],
                        case["edge_time"], case["query_time"], case["query_state"], "grate", "sum",
                        impl="reference")
    rel = case["rel"].clone().requires_grad_()  # only rel requires grad
    out = propagate(x_t, case["boundary"], rel, case["edge_index"], case["edge_type"], case["edge_time"],
                    case["query_time"], case["query_state"], "grate", "sum", impl="fused")
    torch.testing.assert_close(out, out_ref, rtol=1e-5, atol=1e-5)
    out.sum().backward()
    assert rel.grad is not None and rel.grad.abs().sum() > 0


def test_auto_uses_fused_on_cpu(fused_kernel, monkeypatch):
    calls = []
    real = fused_kernel.propagate_fused
    monkeypatch.setattr(fused_kernel, "propagate_fused", lambda *a: calls.append(1) or real(*a))
    case = random_case(seed=15)
    forward_backward(case, "grate", "sum", "auto")
    assert calls


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_fused_pna_ties_split_like_reference(fused_kernel, dtype):
    """First-layer-like states (zero except the query heads) give many equal (zero) messages;
    the max/min gradient is split among the ties as in the reference (torch scatter_reduce)."""
    case = random_case(N=30, E=150, d=32, seed=16, dtype=dtype)
    heads = torch.tensor([3, 7, 7])
    state = torch.zeros_like(case["x"])
    state[heads, torch.arange(3)] = case["rel"][torch.arange(3), torch.tensor([1, 2, 3])]
    case["x"], case["boundary"] = state.clone(), state.clone()
    ref = forward_backward(case, "grate", "pna", "reference")
    got = forward_backward(case, "grate", "pna", "fused")
    assert_close(ref, got, rtol=1e-5 if dtype == torch.float32 else 1e-10, atol_scale=1e-6)


def test_graph_cache_compares_attributes_by_value(fused_kernel):
    from grate.ops.fused import graph_csr
    case = random_case(seed=17)
    ei, et, tt = case["edge_index"], case["edge_type"], case["edge_time"]
    a = graph_csr(ei, et, tt, 40)
    assert graph_csr(ei, et.clone(), tt.clone(), 40) is a  # same values, new tensors: reused
    assert graph_csr(ei, et, tt + 1, 40) is not a  # other times: rebuilt
    assert graph_csr(ei.clone(), et, tt, 40) is not a  # another edge_index object: its own entry
