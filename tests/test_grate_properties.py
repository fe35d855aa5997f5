"""Properties of GRATE and its base models that must hold for any weights (small random graphs)."""
import numpy as np
import pytest
import torch

from grate import MESSAGES, ModelConfig, TemporalGraph, build_model, count_parameters
from grate.ops import propagate, rotate
from _cases import random_facts as _random_facts

N, R, F = 24, 3, 90


pytestmark = pytest.mark.usefixtures("one_thread")


def random_facts(seed=0, n=F, num_entities=N, num_relations=R, t_max=12):
    return _random_facts(seed, n, num_entities, num_relations, t_max)


def make(model="ultra", message="grate", aggregate="sum", dim=8, seed=0):
    torch.manual_seed(seed)
    return build_model(ModelConfig(model=model, dim=dim, aggregate=aggregate, message=message,
                                   relation_layers=2 if model == "ultra" else 3,
                                   entity_layers=(2,) if model == "ultra" else (1, 2))).double().eval()


QUERIES = torch.tensor([[0, 1, 6], [5, R + 2, 9], [11, 0, 3], [3, R, 12]])


def rel_err(a, b):
    a, b = a.detach(), b.detach()
    return float((a - b).abs().max() / b.abs().max().clamp(min=1e-12))


# ---------------------------------------------------------------------- parameter counts
@pytest.mark.parametrize("d", [32, 64])
@pytest.mark.parametrize("aggregate", ["sum", "pna"])
@pytest.mark.parametrize("model", ["ultra", "trix"])
def test_parameter_counts_equal_closed_forms(model, aggregate, d):
    closed = {("ultra", "sum"): 40 * d * d + 76 * d + 1, ("ultra", "pna"): 172 * d * d + 76 * d + 1,
              ("trix", "sum"): 82 * d * d + 99 * d + 2, ("trix", "pna"): 280 * d * d + 99 * d + 2}
    config = ModelConfig(model=model, dim=d, aggregate=aggregate, message="distmult")
    built = sum(p.numel() for p in build_model(config).parameters())
    assert built == closed[model, aggregate] == count_parameters(config)


def test_published_counts():
    published = {("ultra", 64, "sum"): 168_705, ("ultra", 32, "pna"): 178_561, ("ultra", 32, "sum"): 43_393,
                 ("trix", 32, "sum"): 87_138, ("trix", 64, "sum"): 342_210, ("trix", 32, "pna"): 289_890}
    for (model, d, agg), n in published.items():
        config = ModelConfig(model=model, dim=d, aggregate=agg)
        assert sum(p.numel() for p in build_model(config).parameters()) == n


@pytest.mark.parametrize("model", ["ultra", "trix"])
def test_every_message_variant_has_the_base_parameter_count(model):
    base = build_model(ModelConfig(model=model, dim=32, message="distmult"))
    shapes = {k: v.shape for k, v in base.state_dict().items()}
    for message in MESSAGES:
        m = build_model(ModelConfig(model=model, dim=32, message=message))
        assert {k: v.shape for k, v in m.state_dict().items()} == shapes


# ---------------------------------------------------------------------- rotation
def test_rotation_preserves_norm_and_composes():
    x = torch.randn(50, 16, dtype=torch.float64)
    a = torch.randint(-500, 500, (50,))
    b = torch.randint(-500, 500, (50,))
    ra = rotate(x, a)
    assert torch.allclose(ra.norm(dim=-1), x.norm(dim=-1), atol=1e-12)
    assert torch.allclose(rotate(ra, b), rotate(x, a + b), atol=1e-9)
    assert torch.equal(rotate(x, torch.zeros(50, dtype=torch.long)), x)
    assert not torch.allclose(ra, x)  # a non-zero gap does rotate


def _chain(x, dt, message):
    """One edge 0 -> 1 with relation all-ones and zero boundary: returns the message at node 1."""
    d = x.shape[-1]
    xs = torch.zeros(2, 1, d, dtype=x.dtype)
    xs[0, 0] = x
    rel = torch.ones(1, 1, d, dtype=x.dtype)
    out = propagate(xs, torch.zeros_like(xs), rel, torch.tensor([[0], [1]]), torch.tensor([0]),
                    torch.tensor([0]), torch.tensor([dt]), None, message, "sum")
    return out[1, 0]


def test_rotation_message_through_propagate():
    x = torch.randn(16, dtype=torch.float64)
    assert torch.allclose(_chain(x, 7, "rotation").norm(), x.norm())
    assert torch.allclose(_chain(_chain(x, 7, "rotation"), 30, "rotation"), _chain(x, 37, "rotation"))
    assert torch.allclose(_chain(x, 0, "rotation"), _chain(x, 0, "distmult"))


@pytest.mark.parametrize("model", ["ultra", "trix"])
def test_zero_gap_makes_rotation_the_identity(model):
    facts = random_facts(1)
    facts[:, 3] = 5
    graph = TemporalGraph(facts, N, R)
    q = QUERIES.clone()
    q[:, 2] = 5
    rot, base = make(model, "rotation"), make(model, "distmult")
    assert torch.allclose(rot(graph, q), base(graph, q), rtol=1e-12, atol=1e-12)
    q[:, 2] = 9  # non-zero gaps: the two differ
    assert not torch.allclose(rot(graph, q), base(graph, q), rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------- time shift
@pytest.mark.parametrize("forecasting", [False, True])
@pytest.mark.parametrize("message", MESSAGES)
@pytest.mark.parametrize("model", ["ultra", "trix"])
def test_time_shift_leaves_scores_unchanged(model, message, forecasting):
    facts = random_facts(2)
    shifted = facts.copy()
    shifted[:, 3] += 1_000
    model_ = make(model, message)
    a = model_(TemporalGraph(facts, N, R, forecasting=forecasting), QUERIES)
    q = QUERIES.clone()
    q[:, 2] += 1_000
    b = model_(TemporalGraph(shifted, N, R, forecasting=forecasting), q)
    assert rel_err(b, a) <= 1e-5


@pytest.mark.parametrize("model", ["ultra", "trix"])
def test_time_shift_pna_and_window(model):
    facts = random_facts(3)
    model_ = make(model, "grate", "pna")
    a = model_(TemporalGraph(facts, N, R, window=4), QUERIES)
    facts[:, 3] -= 77
    q = QUERIES.clone()
    q[:, 2] -= 77
    assert rel_err(model_(TemporalGraph(facts, N, R, window=4), q), a) <= 1e-5


@pytest.mark.parametrize("model", ["ultra", "trix"])
def test_edge_times_matter_for_grate(model):
    """The temporal message does see time: moving one edge's timestamp changes scores."""
    facts = random_facts(4)
    model_ = make(model, "grate")
    a = model_(TemporalGraph(facts, N, R), QUERIES)
    facts[np.isin(facts[:, 0], QUERIES[:, 0].numpy()), 3] += 3
    assert rel_err(model_(TemporalGraph(facts, N, R), QUERIES), a) > 1e-4


# ---------------------------------------------------------------------- permutations
@pytest.mark.parametrize("aggregate", ["sum", "pna"])
@pytest.mark.parametrize("model", ["ultra", "trix"])
def test_permuting_entity_and_relation_ids_permutes_scores(model, aggregate):
    rng = np.random.default_rng(5)
    facts = random_facts(5)
    pe, pr = rng.permutation(N), rng.permutation(R)
    pr2 = np.concatenate([pr, pr + R])  # inverse relation r + R follows r
    perm_facts = np.stack([pe[facts[:, 0]], pr[facts[:, 1]], pe[facts[:, 2]], facts[:, 3]], 1)
    perm_facts = perm_facts[rng.permutation(len(facts))]  # fact order does not matter either
    q = QUERIES.numpy()
    perm_q = torch.as_tensor(np.stack([pe[q[:, 0]], pr2[q[:, 1]], q[:, 2]], 1))
    model_ = make(model, "grate", aggregate)
    a = model_(TemporalGraph(facts, N, R), QUERIES)
    b = model_(TemporalGraph(perm_facts, N, R), perm_q)
    assert rel_err(b[:, torch.as_tensor(pe)], a) <= 1e-9


# ---------------------------------------------------------------------- batch independence
@pytest.mark.parametrize("forecasting", [False, True])
@pytest.mark.parametrize("aggregate", ["sum", "pna"])
@pytest.mark.parametrize("model", ["ultra", "trix"])
def test_scores_do_not_depend_on_other_queries(model, aggregate, forecasting):
    graph = TemporalGraph(random_facts(6), N, R, forecasting=forecasting)
    model_ = make(model, "grate", aggregate)
    together = model_(graph, QUERIES)
    for i in range(len(QUERIES)):
        alone = model_(graph, QUERIES[i:i + 1])
        assert rel_err(alone[0], together[i]) <= 1e-12
    # also under training-time removal of each query's own fact
    remove = torch.tensor([[0, 1, 4, 6], [5, R + 2, 7, 9], [11, 0, 2, 3], [3, R, 1, 12]])
    together = model_(graph, QUERIES, remove=remove)
    alone = model_(graph, QUERIES[1:2], remove=remove[1:2])
    assert rel_err(alone[0], together[1]) <= 1e-12


# ---------------------------------------------------------------------- forecasting
@pytest.mark.parametrize("message", ["grate", "distmult"])
@pytest.mark.parametrize("model", ["ultra", "trix"])
def test_future_edges_do_not_influence_forecasts(model, message):
    facts = random_facts(7)
    q = QUERIES.clone()
    q[:, 2] = 6
    future = random_facts(8, n=60)
    future[:, 3] = 6 + future[:, 3] % 5  # times 6..10, all at or after tau
    model_ = make(model, message)
    a = model_(TemporalGraph(facts[facts[:, 3] < 6], N, R, forecasting=True), q)
    b = model_(TemporalGraph(np.concatenate([facts, future]), N, R, forecasting=True), q)
    assert torch.equal(a, b)
    c = model_(TemporalGraph(np.concatenate([facts, future]), N, R, forecasting=False), q)
    assert not torch.allclose(a, c)  # in interpolation mode the same edges are seen


# ---------------------------------------------------------------------- one GRATE layer by hand
@pytest.mark.parametrize("message", ["grate", "rotation+relgate", "rotation", "sincos"])
def test_entity_layer_matches_the_paper_formula(message):
    """Alg. 1 written out edge by edge for 3 edges: m = h_u * r_uv, R(tau - t) m, gate on Q."""
    from grate.layers import EntityLayer

    torch.manual_seed(0)
    d, B = 6, 2
    facts = np.array([[0, 0, 1, 3], [1, 1, 2, 8], [2, 0, 0, 5]])
    snap = TemporalGraph(facts, 3, 2).at()
    layer = EntityLayer(d, "sum", message).double()
    h = torch.randn(3, B, d, dtype=torch.float64)
    boundary = torch.randn(3, B, d, dtype=torch.float64)
    relations = torch.randn(B, 4, d, dtype=torch.float64)
    queries = torch.tensor([[0, 1, 10], [2, 3, 4]])
    got = layer(h, boundary, relations, snap, queries, impl="reference")
    rel = layer.project(relations)
    agg = boundary.clone()
    for (u, v), typ, t in zip(snap.edge_index.t().tolist(), snap.edge_type.tolist(), snap.edge_time.tolist()):
        for b, (s, r, tau) in enumerate(queries.tolist()):
            m = h[u, b] * rel[b, typ]
            if message == "sincos":
                theta = (tau - t) * 10000.0 ** (-2.0 * torch.arange(d // 2, dtype=torch.float64) / d)
                m = m * torch.stack([theta.cos(), theta.sin()], -1).flatten()
            else:
                m = rotate(m, tau - t)
            if message == "grate":
                m = torch.sigmoid((h[s, b] + rel[b, r]) @ m / d ** 0.5) * m
            elif message == "rotation+relgate":
                m = torch.sigmoid(rel[b, r] @ m / d ** 0.5) * m
            agg[v, b] += m
    expected = layer.update(h, agg)
    assert torch.allclose(got, expected, rtol=1e-10, atol=1e-12)
