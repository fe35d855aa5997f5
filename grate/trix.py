"""TRIX (Zhang et al., LoG 2024) with a pluggable entity-side message (GRATE and ablations).

Relation layer = four role convolutions (hh, ht, th, tt; :mod:`grate.relation_graph`) summed, plus
shortcut. A role convolution passes messages ``h[r1] * x_e`` along the edges ``r1 -> r2`` of its
role graph, where ``x_e`` is the current feature of the shared entity ``e`` through the
convolution's own projection ``Linear -> ReLU -> Linear``; the boundary (all-ones at the query
relation) is one extra self-message; update ``ReLU(LayerNorm(Linear(cat(h, agg))))``.
Entity features start as all-ones.

Interleaving (``relation_layers = 3``, ``entity_layers = (2, 4)``): relation layer 1 -> entity net
1 (2 layers) -> ``Linear(2d, d)`` on its ``cat(h, q)`` gives new entity features -> relation
layers 2-3 -> entity net 2 (4 layers) scores candidates. GRATE replaces the message inside both
entity nets; relation-graph messages carry no time. As in the released TRIX, entity net 1 owns a
scorer that the entity-prediction forward does not use (it is counted in the parameters).

Parameters (sum) ``82 d^2 + 99 d + 2``: 18 convolutions (12 role + 6 entity), each
``Linear(2d, d) + LayerNorm + projection MLP = 4 d^2 + 5 d``; ``Linear(2d, d)``; two scorers
``4 d^2 + 4 d + 1``. With PNA each convolution's update is ``Linear(13d, d)`` (+11 d^2).

Role convolution through the incidence (O(nnz B d) instead of O(sum_e |R(e)|^2 B d)):
with ``A1``/``A2`` the 0/1 entity x relation incidence of the roles of r1 and r2,
``sum: out[r2] = sum_e A2[e, r2] x_e * (sum_r1 A1[e, r1] h[r1])``, minus ``h[r2] * sum_e A[e, r2] x_e``
for hh/tt (no self pairs): two sparse products ``A2^T (x * (A1 h))``. PNA also needs the sum of squares (same factorisation with squares),
max and min: for each entity the max/min over its role-1 relations (top-2/bottom-2 for hh/tt, to
leave r2 out) times ``x_e`` (sign-aware), then max/min over the entities of r2.
:func:`role_aggregate_edgewise` is the explicit edge-wise version used by the tests.
"""
from __future__ import annotations

import torch
from torch import nn

from .config import ModelConfig
from .layers import EntityNet, Update, projection
from .ops import propagate
from .ops.propagate import pna_combine
from .relation_graph import ROLES, RoleIncidence, role_graph
from .scoring import TemporalModel
from .ultra import relation_boundary


def _segment(values, index, size, reduce):
    """Reduce ``values (nnz, B, d)`` into ``(size, B, d)`` by ``index``; empty segments stay +-inf."""
    fill = float("-inf") if reduce == "amax" else float("inf")
    out = values.new_full((size,) + values.shape[1:], fill)
    idx = index.view(-1, 1, 1).expand_as(values)
    return out.scatter_reduce(0, idx, values, reduce, include_self=True)


def _excluding(values, seg, size, top, reduce):
    """Per pair: the max (min) of its segment without this pair's own value (top-2 trick).

    ``values (nnz, B, d)`` with segment ids ``seg``, ``top = _segment(values, seg, size, reduce)``.
    A value equal to a unique segment extreme is replaced by the segment's second extreme.
    """
    at_top = values == top[seg]
    n_top = torch.zeros_like(top).index_add_(0, seg, at_top.to(values.dtype))
    fill = float("-inf") if reduce == "amax" else float("inf")
    second = _segment(torch.where(at_top, torch.full_like(values, fill), values), seg, size, reduce)
    unique_top = at_top & (n_top[seg] == 1)
    return torch.where(unique_top, second[seg], top[seg])


def role_aggregate(h, boundary, x, inc: RoleIncidence, role: str, aggregate: str):
    """Aggregate of one TRIX role convolution, through the incidence.

    ``h``, ``boundary`` ``(2R, B, d)`` relation states; ``x`` ``(N, B, d)`` projected entity
    features (broadcastable). Returns ``(2R, B, d)`` (sum) or ``(2R, B, 12d)`` (PNA, the layout of
    :func:`grate.ops.propagate`), equal to the edge-wise aggregation over :func:`role_graph`.
    Sums are sparse incidence products (nothing per edge is materialised); PNA's max/min gather
    per incidence pair.
    """
    n_rel, B, d = h.shape
    N = inc.num_entities
    x = x.expand(N, B, d)
    self_pairs = role[0] == role[1]
    a1 = inc.matrix(role[0], h.dtype)  # (N, 2R): entity e has r1 in role 1
    a2t = inc.matrix(role[1], h.dtype, transpose=True)  # (2R, N): r2 has entity e in role 2

    def gather(a, v):  # (rows, cols) sparse @ (cols, B, d)
        return torch.sparse.mm(a, v.reshape(v.shape[0], B * d)).view(a.shape[0], B, d)

    out = boundary + gather(a2t, x * gather(a1, h))
    if self_pairs:
        out = out - h * gather(a2t, x)
    if aggregate == "sum":
        return out
    # PNA: sum of squares, degree, max, min
    x_sq = x * x
    sq = boundary * boundary + gather(a2t, x_sq * gather(a1, h * h))
    if self_pairs:
        sq = sq - h * h * gather(a2t, x_sq)
    e1, r1 = inc.pairs[role[0]]
    e2, r2 = inc.pairs[role[1]]
    count1 = inc.count[role[0]].to(h.dtype)[e2] - (1.0 if self_pairs else 0.0)  # role-1 partners of (e, r2)
    deg = torch.zeros(n_rel, dtype=h.dtype, device=h.device).index_add_(0, r2, count1) + 1
    valid = count1 > 0
    hv = h[r1]
    top = _segment(hv, e1, N, "amax")
    bot = _segment(hv, e1, N, "amin")
    if self_pairs:  # p1 == p2: exclude each pair's own relation
        hi = _excluding(hv, e1, N, top, "amax")
        lo = _excluding(hv, e1, N, bot, "amin")
    else:
        hi, lo = top[e2], bot[e2]
    hi, lo, xv, rv = hi[valid], lo[valid], x[e2[valid]], r2[valid]
    pos = xv >= 0
    m_hi = torch.where(pos, xv * hi, xv * lo)  # max over partners of x_e * h[r1]
    m_lo = torch.where(pos, xv * lo, xv * hi)
    idx = rv.view(-1, 1, 1).expand_as(m_hi)
    mx = boundary.scatter_reduce(0, idx, m_hi, "amax", include_self=True)
    mn = boundary.scatter_reduce(0, idx, m_lo, "amin", include_self=True)
    return pna_combine(out, sq, mx, mn, deg.unsqueeze(1))


def role_aggregate_edgewise(h, boundary, x, inc: RoleIncidence, role: str, aggregate: str, impl="reference"):
    """The same aggregation over the explicit role graph (O(sum_e |R(e)|^2 B d); tests only)."""
    n_rel, B, d = h.shape
    edge_index, entity = role_graph(inc, role)
    rel = x.expand(inc.num_entities, B, d).transpose(0, 1)  # (B, N, d): the "relation" of an edge = its entity
    zeros_e = torch.zeros_like(entity)
    zeros_b = torch.zeros(B, dtype=torch.long, device=h.device)
    return propagate(h, boundary, rel, edge_index, entity, zeros_e, zeros_b, None, "distmult", aggregate,
                     impl=impl)


class RoleConv(nn.Module):
    """One TRIX role convolution (its own entity-feature projection and update)."""

    def __init__(self, dim: int, aggregate: str, role: str):
        super().__init__()
        self.role, self.aggregate = role, aggregate
        self.project = projection(dim)
        self.update = Update(dim, aggregate)

    def forward(self, h, boundary, entities, inc: RoleIncidence):
        x = self.project(entities)
        return self.update(h, role_aggregate(h, boundary, x, inc, self.role, self.aggregate))


class RelationLayer(nn.Module):
    """Sum of the four role convolutions hh, ht, th, tt (shortcut added by the model)."""

    def __init__(self, dim: int, aggregate: str):
        super().__init__()
        self.convs = nn.ModuleDict({role: RoleConv(dim, aggregate, role) for role in ROLES})

    def forward(self, h, boundary, entities, inc):
        return sum(conv(h, boundary, entities, inc) for conv in self.convs.values())


class Trix(TemporalModel):
    def __init__(self, config: ModelConfig):
        super().__init__(config)
        d, agg, msg = config.dim, config.aggregate, config.message
        self.relation_layers = nn.ModuleList(RelationLayer(d, agg) for _ in range(config.relation_layers))
        self.entity_net1 = EntityNet(d, config.entity_layers[0], agg, msg)
        self.node_mlp = nn.Linear(2 * d, d)
        self.entity_net2 = EntityNet(d, config.entity_layers[1], agg, msg)

    def relations(self, snapshot, queries, edge_mask=None) -> torch.Tensor:
        """Query-conditioned relation representations ``(B, 2R, d)`` (runs entity net 1 inside)."""
        inc = snapshot.role_incidence
        d = self.config.dim
        dtype = self.node_mlp.weight.dtype
        boundary = relation_boundary(queries, snapshot.num_relation_nodes, d, dtype)
        entities = torch.ones(1, 1, d, dtype=dtype, device=queries.device)  # all-ones entity features
        h = boundary
        for i, layer in enumerate(self.relation_layers):
            h = layer(h, boundary, entities, inc) + h
            if i == 0 and len(self.relation_layers) > 1:
                feats = self.entity_net1.features(snapshot, h.transpose(0, 1), queries, edge_mask, self.impl)
                entities = self.node_mlp(feats)  # (N, B, d)
        return h.transpose(0, 1)

    def features(self, snapshot, queries, edge_mask=None) -> torch.Tensor:
        rel = self.relations(snapshot, queries, edge_mask)
        return self.entity_net2.features(snapshot, rel, queries, edge_mask, self.impl)

    def score_features(self, features: torch.Tensor) -> torch.Tensor:
        return self.entity_net2.score(features)
