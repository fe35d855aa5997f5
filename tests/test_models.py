"""GRATE models: configuration, relation graphs, TRIX factorisation, temporal graphs, scoring API."""
import json

import numpy as np
import pytest
import torch

from grate import (MESSAGES, ModelConfig, Scorer, TemporalGraph, build_model, chunk_size, count_parameters,
                   estimate_bytes, parameter_table)
from grate.relation_graph import ROLES, RoleIncidence, role_graph, ultra_relation_graph
from grate.trix import role_aggregate, role_aggregate_edgewise
from tkg_indt.data.timeenc import TimeEncoding
from tkg_indt.data.tkg import TKG
from tkg_indt.errors import ParameterError
from tkg_indt.evaluation import evaluate, single_step, transductive
from _cases import random_facts as _random_facts

N, R = 20, 3


pytestmark = pytest.mark.usefixtures("one_thread")


def random_facts(seed=0, n=80, num_entities=N, num_relations=R, t_max=10):
    return _random_facts(seed, n, num_entities, num_relations, t_max)


def small(model="ultra", message="grate", aggregate="sum", seed=0):
    torch.manual_seed(seed)
    return build_model(ModelConfig(model=model, dim=8, aggregate=aggregate, message=message,
                                   relation_layers=2 if model == "ultra" else 3,
                                   entity_layers=(2,) if model == "ultra" else (1, 2))).double().eval()


# ---------------------------------------------------------------------- configuration
def test_config_defaults_and_json_round_trip(tmp_path):
    c = ModelConfig(model="trix", dim=32, aggregate="pna", message="rotation")
    assert c.relation_layers == 3 and c.entity_layers == (2, 4)
    assert ModelConfig().relation_layers == 6 and ModelConfig().entity_layers == (6,)
    text = c.to_json(tmp_path / "config.json")
    assert json.loads(text)["entity_layers"] == [2, 4]
    assert ModelConfig.from_json(text) == c
    assert ModelConfig.from_json(tmp_path / "config.json") == c
    assert ModelConfig.from_dict(c.to_dict()) == c
    assert build_model(c.to_dict()).config == c and build_model(text).config == c


@pytest.mark.parametrize("bad", [{"model": "nbfnet"}, {"dim": 7}, {"dim": 0}, {"aggregate": "mean"},
                                 {"message": "rope"}, {"model": "trix", "entity_layers": [6]},
                                 {"relation_layers": 0}, {"hidden": 3}])
def test_config_rejects_bad_values(bad):
    with pytest.raises(ParameterError):
        ModelConfig.from_dict(bad)


def test_config_rejects_bad_json(tmp_path):
    with pytest.raises(ParameterError, match="invalid JSON"):
        ModelConfig.from_json("{not json")
    with pytest.raises(ParameterError, match="does not exist"):
        ModelConfig.from_json(tmp_path / "missing.json")


def test_parameter_table_lists_every_configuration():
    table = parameter_table()
    assert len(table.splitlines()) == 2 + 8
    for text in ("43,393", "178,561", "168,705", "87,138", "342,210", "289,890"):
        assert text in table


def test_same_seed_same_model():
    a, b = small("trix", seed=3), small("trix", seed=3)
    graph = TemporalGraph(random_facts(), N, R)
    q = torch.tensor([[0, 1, 4], [2, 4, 7]])
    assert torch.equal(a(graph, q), b(graph, q))


# ---------------------------------------------------------------------- relation graphs
def _brute_incidence(facts, num_relations):
    head, tail = {}, {}
    for h, r, t, _ in facts.tolist():
        for e, rel, side in ((h, r, head), (t, r, tail), (t, r + num_relations, head), (h, r + num_relations, tail)):
            side.setdefault(e, set()).add(rel)
    return head, tail


def test_ultra_relation_graph_matches_brute_force():
    facts = random_facts(1)
    g = TemporalGraph(facts, N, R)
    edge_index, edge_type = ultra_relation_graph(g.edge_index, g.edge_type, N, 2 * R)
    head, tail = _brute_incidence(facts, R)
    expected = set()
    for t, (side1, side2) in enumerate(((head, head), (tail, tail), (head, tail), (tail, head))):
        for e in range(N):
            for r1 in side1.get(e, ()):
                for r2 in side2.get(e, ()):
                    expected.add((r1, r2, t))
    got = list(zip(edge_index[0].tolist(), edge_index[1].tolist(), edge_type.tolist()))
    assert len(got) == len(set(got)) and set(got) == expected
    assert any(r1 == r2 for r1, r2, _ in got)  # self-loops kept


@pytest.mark.parametrize("role", ROLES)
def test_trix_role_graph_matches_brute_force(role):
    facts = random_facts(2)
    g = TemporalGraph(facts, N, R)
    inc = RoleIncidence.build(g.edge_index, g.edge_type, N, 2 * R)
    head, tail = _brute_incidence(facts, R)
    side = {"h": head, "t": tail}
    expected = sorted((r1, r2, e) for e in range(N) for r1 in side[role[0]].get(e, ())
                      for r2 in side[role[1]].get(e, ()) if role[0] != role[1] or r1 != r2)
    edge_index, entity = role_graph(inc, role)
    got = sorted(zip(edge_index[0].tolist(), edge_index[1].tolist(), entity.tolist()))
    assert got == expected
    assert inc.role_graph_size(role) == len(expected)


@pytest.mark.parametrize("aggregate", ["sum", "pna"])
@pytest.mark.parametrize("role", ROLES)
def test_trix_factorised_convolution_equals_edgewise(role, aggregate):
    facts = random_facts(3, n=60)
    g = TemporalGraph(facts, N, R)
    inc = g.at().role_incidence
    torch.manual_seed(0)
    B, d = 3, 6
    h = torch.randn(2 * R, B, d, dtype=torch.float64, requires_grad=True)
    boundary = torch.randn(2 * R, B, d, dtype=torch.float64)
    x = torch.randn(N, B, d, dtype=torch.float64, requires_grad=True)
    fast = role_aggregate(h, boundary, x, inc, role, aggregate)
    slow = role_aggregate_edgewise(h, boundary, x, inc, role, aggregate)
    assert fast.shape == slow.shape == (2 * R, B, d if aggregate == "sum" else 12 * d)
    assert torch.allclose(fast, slow, rtol=1e-10, atol=1e-10)
    w = torch.randn_like(fast)
    gf = torch.autograd.grad((fast * w).sum(), (h, x))
    gs = torch.autograd.grad((slow * w).sum(), (h, x))
    for a, b in zip(gf, gs):
        assert torch.allclose(a, b, rtol=1e-8, atol=1e-8)


def test_ultra_relation_convolution_sparse_equals_edgewise():
    from grate.layers import UltraRelationLayer

    g = TemporalGraph(random_facts(8), N, R)
    snap = g.at()
    edge_index, edge_type = snap.ultra_graph
    torch.manual_seed(1)
    layer = UltraRelationLayer(6, "sum").double()
    h = torch.randn(2 * R, 3, 6, dtype=torch.float64, requires_grad=True)
    boundary = torch.randn(2 * R, 3, 6, dtype=torch.float64)
    fast = layer(h, boundary, edge_index, edge_type, "reference", snap.ultra_adjacency(torch.float64))
    slow = layer(h, boundary, edge_index, edge_type, "reference", None)
    assert torch.allclose(fast, slow, rtol=1e-10, atol=1e-10)
    w = torch.randn_like(fast)
    grads = [torch.autograd.grad((out * w).sum(), [h, layer.relation.weight]) for out in (fast, slow)]
    for a, b in zip(*grads):
        assert torch.allclose(a, b, rtol=1e-8, atol=1e-10)


def test_trix_max_excludes_self_pairs_with_ties():
    """hh/tt max must skip r1 = r2 even when several relations tie for the maximum."""
    facts = np.array([[0, 0, 1, 0], [0, 1, 2, 0], [0, 2, 3, 0], [4, 0, 5, 0]])
    g = TemporalGraph(facts, 6, 3)
    inc = g.at().role_incidence
    h = torch.tensor([2.0, 2.0, -1.0, 0.5, 0.5, 0.5], dtype=torch.float64).view(6, 1, 1)
    x = torch.linspace(-1, 1, 6, dtype=torch.float64).view(6, 1, 1)
    boundary = torch.full((6, 1, 1), -5.0, dtype=torch.float64)
    for role in ROLES:
        fast = role_aggregate(h, boundary, x, inc, role, "pna")
        slow = role_aggregate_edgewise(h, boundary, x, inc, role, "pna")
        assert torch.allclose(fast, slow)


# ---------------------------------------------------------------------- temporal graph
def test_temporal_graph_edges_and_visibility():
    facts = np.array([[0, 1, 2, 5], [2, 0, 3, 7], [0, 1, 2, 5]])
    g = TemporalGraph(facts, 4, 2)
    assert g.edge_index.tolist() == [[0, 2, 0, 2, 3, 2], [2, 3, 2, 0, 2, 0]]
    assert g.edge_type.tolist() == [1, 0, 1, 3, 2, 3] and g.edge_time.tolist() == [5, 7, 5, 5, 7, 5]
    assert g.at(3) is g.at(100)  # interpolation: one snapshot for every tau
    f = TemporalGraph(facts, 4, 2, forecasting=True)
    assert f.at(7).edge_time.tolist() == [5, 5, 5, 5] and f.at(5).num_edges == 0
    assert f.at(7) is f.at(7)  # cached
    w = TemporalGraph(facts, 4, 2, window=1)
    assert w.at(6).num_edges == 6 and w.at(8).edge_time.tolist() == [7, 7]
    keep = g.at().keep_mask(torch.tensor([[0, 1, 2, 5], [3, 2, 2, 7], [0, 1, 2, 6]]))
    assert keep.tolist() == [[False, True, False, False, True, False],  # fact, its duplicate, inverses
                             [True, False, True, True, False, True],  # asked through the inverse
                             [True] * 6]  # other time: nothing removed


@pytest.mark.parametrize("bad", [dict(facts=[[0, 0, 9, 0]]), dict(facts=[[0, 5, 1, 0]]), dict(window=-1)])
def test_temporal_graph_rejects_bad_input(bad):
    kwargs = dict(facts=[[0, 0, 1, 0]], num_entities=4, num_relations=2)
    kwargs.update(bad)
    with pytest.raises(ParameterError):
        TemporalGraph(**kwargs)


# ---------------------------------------------------------------------- scoring API
@pytest.mark.parametrize("model", ["ultra", "trix"])
def test_scoring_shapes_candidates_and_chunks(model):
    graph = TemporalGraph(random_facts(4), N, R, forecasting=True)
    m = small(model)
    q = torch.tensor([[0, 1, 4], [2, R + 1, 9], [5, 0, 4], [7, 2, 1]])
    full = m(graph, q)
    assert full.shape == (4, N) and torch.isfinite(full).all()
    cand = torch.tensor([[3, 1], [0, 0], [19, 2], [5, 6]])
    assert torch.allclose(m(graph, q, candidates=cand), full.gather(1, cand))
    assert torch.allclose(m.score_all(graph, q, batch_size=1), full)
    assert torch.allclose(m.score_all(graph, q.numpy(), memory_budget=1), full)
    with pytest.raises(ParameterError):
        m(graph, torch.tensor([[0, 2 * R, 1]]))
    with pytest.raises(ParameterError):
        m(graph, torch.tensor([[N, 0, 1]]))


@pytest.mark.parametrize("model", ["ultra", "trix"])
def test_training_removal_equals_graph_without_the_fact(model):
    facts = random_facts(5)
    fact = np.array([[3, 1, 8, 4]])
    twin = np.array([[3, 1, 8, 6]])  # same entities and relation at another time: relation graphs unchanged
    base = np.concatenate([facts[~((facts[:, 0] == 3) & (facts[:, 1] == 1) & (facts[:, 2] == 8))], twin])
    m = small(model)
    q = torch.tensor([[3, 1, 4], [8, R + 1, 4]])
    remove = torch.tensor([[3, 1, 8, 4], [8, R + 1, 3, 4]])
    with_fact = TemporalGraph(np.concatenate([base, fact]), N, R)
    removed = m(with_fact, q, remove=remove)
    assert torch.allclose(removed, m(TemporalGraph(base, N, R), q), rtol=1e-10, atol=1e-10)
    assert not torch.allclose(removed, m(with_fact, q))


def test_gradients_reach_every_used_parameter():
    graph = TemporalGraph(random_facts(6), N, R)
    for name in ("ultra", "trix"):
        m = small(name).train()
        m(graph, torch.tensor([[0, 1, 4], [2, 4, 7]]), remove=torch.tensor([[0, 1, 3, 4], [2, 4, 5, 7]])).sum().backward()
        missing = [k for k, p in m.named_parameters() if p.grad is None]
        # TRIX's entity net 1 scorer exists (as in the released TRIX) but entity prediction never uses it
        assert missing == ([] if name == "ultra" else [k for k, _ in m.named_parameters() if k.startswith("entity_net1.mlp")])


def test_memory_estimate_and_chunks():
    c = ModelConfig(dim=32)
    one, eight = estimate_bytes(c, 10_000, 1_000, 1), estimate_bytes(c, 10_000, 1_000, 8)
    assert eight == 8 * one and estimate_bytes(c, 10_000, 1_000, 1, training=True) > one
    assert estimate_bytes(c.replace(aggregate="pna"), 10_000, 1_000, 1) > one
    assert chunk_size(c, 10_000, 1_000, memory_budget=10 * one) == 10
    assert chunk_size(c, 10_000, 1_000, memory_budget=1) == 1


def _tiny_tkg():
    rng = np.random.default_rng(9)
    n = 150
    facts = np.stack([rng.integers(0, 15, n), rng.integers(0, 3, n), rng.integers(0, 15, n),
                      np.sort(rng.integers(0, 12, n))], 1).astype(np.int64)
    splits = {"train": facts[:100], "valid": facts[100:120], "test": facts[120:]}
    return TKG("tiny", splits, np.array([f"e{i}" for i in range(15)]), np.array(["a", "b", "c"]),
               TimeEncoding("int"))


@pytest.mark.parametrize("protocol", [transductive, single_step])
def test_scorer_runs_in_the_evaluation_harness(protocol):
    task = protocol(_tiny_tkg())
    scorer = Scorer(small("trix", "grate").float())
    result = evaluate(scorer, task, batch_size=16)
    assert 0 < result.metrics["mrr"] <= 1 and len(result.queries) == 2 * len(task.query_facts())
    assert scorer.graph_for(task).forecasting == task.forecasting
    assert scorer.graph_for(task) is scorer.graph_for(task)


def test_messages_differ():
    """The five message functions are different functions (same weights, same graph)."""
    graph = TemporalGraph(random_facts(7), N, R)
    q = torch.tensor([[0, 1, 4], [2, 4, 7]])
    state = small("ultra", "distmult").state_dict()
    outs = []
    for message in MESSAGES:
        m = small("ultra", message)
        m.load_state_dict(state)
        outs.append(m(graph, q))
    for i in range(len(outs)):
        for j in range(i):
            assert not torch.allclose(outs[i], outs[j])
    assert count_parameters(ModelConfig(message="sincos")) == count_parameters(ModelConfig(message="grate"))
