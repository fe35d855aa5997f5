"""grate.ops reference path: rotary encoding, message variants, PNA, masks, input checks, fallback."""
import functools
import importlib
import math
import warnings

import pytest
import torch

from grate.ops import frequencies, propagate, rotate
from grate.ops.propagate import MESSAGES
from _cases import propagate_case

propagate_mod = importlib.import_module("grate.ops.propagate")
AGGS = ("sum", "pna")


random_case = functools.partial(propagate_case, N=12, B=3, d=8, E=40, R2=6, T=9, dtype=torch.float64, tau_extra=3)


def run(case, message, aggregate, impl="reference", **kw):
    return propagate(case["x"], case["boundary"], case["rel"], case["edge_index"], case["edge_type"],
                     case["edge_time"], case["query_time"], case["query_state"], message, aggregate,
                     impl=impl, **kw)


def rotation_matrix(dt, d):
    """Explicit block-diagonal R(dt) (d x d) from the paper's 2x2 blocks."""
    R = torch.zeros(d, d, dtype=torch.float64)
    for k in range(d // 2):
        th = 10000.0 ** (-2 * k / d) * dt
        R[2 * k:2 * k + 2, 2 * k:2 * k + 2] = torch.tensor(
            [[math.cos(th), -math.sin(th)], [math.sin(th), math.cos(th)]], dtype=torch.float64)
    return R


def test_frequencies():
    w = frequencies(8, dtype=torch.float64)
    assert torch.allclose(w, torch.tensor([1.0, 10000 ** -0.25, 10000 ** -0.5, 10000 ** -0.75],
                                          dtype=torch.float64))
    with pytest.raises(ValueError, match="even"):
        frequencies(7)


def test_rotate_properties():
    g = torch.Generator().manual_seed(1)
    x = torch.randn(5, 16, generator=g, dtype=torch.float64)
    assert torch.allclose(rotate(x, 13) @ torch.eye(16, dtype=torch.float64), x @ rotation_matrix(13, 16).T)
    assert torch.allclose(rotate(x, 0), x)
    assert torch.allclose(rotate(rotate(x, 3), 4), rotate(x, 7))
    assert torch.allclose(rotate(x, 5).norm(dim=-1), x.norm(dim=-1))
    assert torch.allclose(rotate(rotate(x, 9), -9), x)
    dt = torch.tensor([0, 1, 2, 3, 400])
    per_row = torch.stack([rotate(x[i], int(dt[i])) for i in range(5)])
    assert torch.allclose(rotate(x, dt), per_row)


def manual_message(case, e, b, message):
    """The message of edge e for query b, written out from the paper's equations."""
    u, r = int(case["edge_index"][0, e]), int(case["edge_type"][e])
    d = case["x"].shape[-1]
    m = case["x"][u, b] * case["rel"][b, r]
    dt = int(case["query_time"][b] - case["edge_time"][e])
    if message == "distmult":
        return m
    if message == "sincos":
        th = [10000.0 ** (-2 * k / d) * dt for k in range(d // 2)]
        s = torch.tensor([f(t) for t in th for f in (math.cos, math.sin)], dtype=m.dtype)
        return m * s
    m = rotation_matrix(dt, d).to(m.dtype) @ m
    if message == "rotation":
        return m
    q = case["query_state"][b]  # Q = h_s + r_q (grate) or r_q (relgate), given by the caller
    return torch.sigmoid(q @ m / math.sqrt(d)) * m


def pna_manual(case, msgs_per_node, deg_override=None):
    """(N, B, 12d) PNA written out per node from lists of messages (tiny graphs only)."""
    N, B, d = case["x"].shape
    feats, degs = [], []
    for v in range(N):
        row = []
        for b in range(B):
            ms = torch.stack([case["boundary"][v, b]] + msgs_per_node[v][b])
            mean, sq = ms.mean(0), (ms * ms).mean(0)
            std = (sq - mean * mean).clamp(min=1e-6).sqrt()
            row.append(torch.stack([mean, ms.max(0).values, ms.min(0).values, std], -1).flatten())
            degs.append(len(ms))
        feats.append(torch.stack(row))
    feats = torch.stack(feats)  # (N, B, 4d)
    deg = torch.tensor(degs, dtype=torch.float64).view(N, B)
    logd = deg.log()
    scale = logd / logd.mean(0, keepdim=True)
    scal = torch.stack([torch.ones_like(scale), scale, 1 / scale.clamp(min=1e-2)], -1)  # (N, B, 3)
    return (feats.unsqueeze(-1) * scal.unsqueeze(-2)).flatten(-2)


@pytest.mark.parametrize("message", MESSAGES)
@pytest.mark.parametrize("masked", [False, True])
def test_against_manual_equations(message, masked):
    case = random_case(N=6, B=2, d=4, E=14, seed=3)
    E = case["edge_type"].numel()
    mask = (torch.rand(2, E, generator=torch.Generator().manual_seed(5)) > 0.4) if masked else None
    N, B, d = case["x"].shape
    msgs = [[[] for _ in range(B)] for _ in range(N)]
    for e in range(E):
        for b in range(B):
            if mask is None or mask[b, e]:
                msgs[int(case["edge_index"][1, e])][b].append(manual_message(case, e, b, message))
    expect_sum = torch.stack([torch.stack([case["boundary"][v, b] + sum(msgs[v][b], torch.zeros(d, dtype=torch.float64))
                                           for b in range(B)]) for v in range(N)])
    assert torch.allclose(run(case, message, "sum", edge_mask=mask), expect_sum, atol=1e-12)
    assert torch.allclose(run(case, message, "pna", edge_mask=mask), pna_manual(case, msgs), atol=1e-10)


@pytest.mark.parametrize("message", MESSAGES)
@pytest.mark.parametrize("aggregate", AGGS)
def test_time_shift_invariance(message, aggregate):
    case = random_case(seed=7)
    shifted = dict(case, edge_time=case["edge_time"] + 1000, query_time=case["query_time"] + 1000)
    assert torch.allclose(run(case, message, aggregate), run(shifted, message, aggregate), atol=1e-9)


def test_zero_gap_reduces_to_static():
    case = random_case(seed=2)
    case["edge_time"] = torch.full_like(case["edge_time"], 4)
    case["query_time"] = torch.full_like(case["query_time"], 4)
    assert torch.allclose(run(case, "rotation", "sum"), run(case, "distmult", "sum"))
    # sincos at dt = 0 keeps the even channels (cos 0 = 1) and zeroes the odd ones (sin 0 = 0)
    out = run(case, "sincos", "sum") - case["boundary"]
    assert torch.allclose(out[..., 1::2], torch.zeros_like(out[..., 1::2]))


@pytest.mark.parametrize("message", MESSAGES)
def test_mask_equals_removing_edges(message):
    case = random_case(seed=11)
    E = case["edge_type"].numel()
    mask = torch.rand(3, E, generator=torch.Generator().manual_seed(0)) > 0.5
    both = run(case, message, "sum", edge_mask=mask)
    full = run(case, message, "pna", edge_mask=mask)
    for b in range(3):
        keep = mask[b]
        sub = dict(case, x=case["x"][:, b:b + 1], boundary=case["boundary"][:, b:b + 1],
                   rel=case["rel"][b:b + 1], edge_index=case["edge_index"][:, keep],
                   edge_type=case["edge_type"][keep], edge_time=case["edge_time"][keep],
                   query_time=case["query_time"][b:b + 1], query_state=case["query_state"][b:b + 1])
        assert torch.allclose(both[:, b], run(sub, message, "sum")[:, 0])
        assert torch.allclose(full[:, b], run(sub, message, "pna")[:, 0])
    all_true = torch.ones(3, E, dtype=torch.bool)
    assert torch.allclose(run(case, message, "pna", edge_mask=all_true), run(case, message, "pna"))


def test_degree_scale_override_and_shapes():
    case = random_case(seed=4)
    N, B, d = case["x"].shape
    ones = torch.ones(N, 3, dtype=torch.float64)
    out = run(case, "grate", "pna", degree_scale=ones)
    assert out.shape == (N, B, 12 * d)
    feats = out.view(N, B, d, 4, 3)
    assert torch.allclose(feats[..., 0], feats[..., 1]) and torch.allclose(feats[..., 0], feats[..., 2])
    assert run(case, "grate", "sum").shape == (N, B, d)


def test_gated_variants_differ_and_gate_uses_query():
    case = random_case(seed=8)
    a = run(case, "grate", "sum")
    b = run(dict(case, query_state=case["query_state"] * 3), "grate", "sum")
    assert not torch.allclose(a, b)
    # non-gated variants ignore query_state (may be None)
    assert torch.allclose(run(dict(case, query_state=None), "rotation", "sum"), run(case, "rotation", "sum"))


def test_gradients_flow_to_all_inputs():
    case = random_case(seed=9)
    leaves = {k: case[k].clone().requires_grad_() for k in ("x", "boundary", "rel", "query_state")}
    out = run(dict(case, **leaves), "grate", "pna")
    out.square().sum().backward()
    for k, t in leaves.items():
        assert t.grad is not None and t.grad.abs().sum() > 0, k


@pytest.mark.parametrize("bad, match", [
    (dict(message="transe"), "message="),
    (dict(aggregate="mean"), "aggregate="),
    (dict(impl="gpu"), "impl="),
    (dict(query_state=None), "needs query_state"),
    (dict(edge_type=torch.zeros(3, dtype=torch.long)), "edge_type must be"),
    (dict(query_time=torch.zeros(5, dtype=torch.long)), "query_time must be"),
    (dict(edge_mask=torch.ones(3, 5, dtype=torch.bool)), "edge_mask must be"),
    (dict(rel=torch.zeros(2, 6, 8, dtype=torch.float64)), "rel must be"),
    (dict(edge_index=torch.tensor([[0], [99]])), "edge_index"),
])
def test_input_errors_name_the_parameter(bad, match):
    case = random_case(E=1, seed=1)
    kw = dict(case, message="grate", aggregate="sum", impl="reference")
    kw.update(bad)
    if "edge_index" in bad:
        kw["edge_type"], kw["edge_time"] = kw["edge_type"][:1], kw["edge_time"][:1]
    with pytest.raises(ValueError, match=match):
        propagate(**kw)


def test_auto_falls_back_with_one_warning(monkeypatch):
    """With the kernel unavailable, impl='auto' warns once and returns the reference result."""
    from grate.ops import fused
    monkeypatch.setenv("GRATE_OPS_DISABLE_FUSED", "1")
    monkeypatch.setattr(fused, "_state", {})
    monkeypatch.setattr(propagate_mod, "_WARNED", set())
    case = random_case(seed=6, dtype=torch.float32)
    with pytest.warns(RuntimeWarning, match="fused kernel unavailable.*GRATE_OPS_DISABLE_FUSED"):
        out = run(case, "grate", "sum", impl="auto")
    assert torch.equal(out, run(case, "grate", "sum"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run(case, "grate", "sum", impl="auto")  # no second warning
    with pytest.raises(RuntimeError, match="unavailable"):
        run(case, "grate", "sum", impl="fused")


def test_missing_compiler_is_reported(monkeypatch):
    from grate.ops import fused
    monkeypatch.delenv("GRATE_OPS_DISABLE_FUSED", raising=False)
    monkeypatch.setenv("CXX", "no-such-c++-compiler")
    monkeypatch.setattr(fused, "_state", {})
    assert fused.kernel() is None and not fused.available()
    assert "no C++ compiler" in fused.why()
