"""Relational convolution layers shared by ULTRA and TRIX (NBFNet-style, node-major tensors).

Every convolution aggregates the messages of its incoming edges plus the boundary condition as one
extra self-message (``sum`` or ``pna``: NBFNet's mean/max/min/std x 3 degree scalers = 12d), then
updates ``h' = ReLU(LayerNorm(Linear(cat(h, agg))))``; the model adds the shortcut ``h' + h``.
The update is ``Linear(2d, d)`` for sum and ``Linear(13d, d)`` for PNA, so one convolution owns
``2d^2 + 3d`` (sum) or ``13d^2 + 3d`` (PNA) parameters including its LayerNorm.

Entity-side message passing goes through :func:`grate.ops.propagate` (messages ``distmult``,
``sincos``, ``rotation``, ``rotation+relgate``, ``grate``); this module only prepares its inputs:
each entity layer projects the query-conditioned relation representations with its own
``Linear(d, d) -> ReLU -> Linear(d, d)`` (``2d^2 + 2d`` parameters), and builds the query state
``Q = h_s^(l-1) + r_q`` (GRATE) or ``r_q`` (relation gate), ``r_q`` being the projected
representation of the query relation used by this layer.

Shapes: entity states ``(N, B, d)``; relation representations ``(B, 2R, d)``; queries ``(B, 3)``
int64 rows ``(s, r, tau)`` with ``r`` in ``[0, 2R)``.
"""
from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from .ops import propagate


def projection(dim: int) -> nn.Sequential:
    """``Linear(d, d) -> ReLU -> Linear(d, d)``: a layer's own view of relation (or entity) features."""
    return nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))


def scorer(dim: int) -> nn.Sequential:
    """``Linear(2d, 2d) -> ReLU -> Linear(2d, 1)`` on ``cat(h_L[v], q)``."""
    return nn.Sequential(nn.Linear(2 * dim, 2 * dim), nn.ReLU(), nn.Linear(2 * dim, 1))


class Update(nn.Module):
    """NBFNet node update ``ReLU(LayerNorm(Linear(cat(h, agg))))``."""

    def __init__(self, dim: int, aggregate: str):
        super().__init__()
        self.linear = nn.Linear(dim * (13 if aggregate == "pna" else 2), dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, h: torch.Tensor, agg: torch.Tensor) -> torch.Tensor:
        return F.relu(self.norm(self.linear(torch.cat([h, agg], dim=-1))))


class EntityLayer(nn.Module):
    """One entity-graph layer: project relations, temporal message passing, update."""

    def __init__(self, dim: int, aggregate: str, message: str):
        super().__init__()
        self.aggregate, self.message = aggregate, message
        self.project = projection(dim)
        self.update = Update(dim, aggregate)

    def forward(self, h, boundary, relations, snapshot, queries, edge_mask=None, impl="auto"):
        rel = self.project(relations)  # (B, 2R, d)
        batch = torch.arange(h.shape[1], device=h.device)
        s, r, tau = queries.unbind(1)
        state = None
        if self.message == "grate":
            state = h[s, batch] + rel[batch, r]
        elif self.message == "rotation+relgate":
            state = rel[batch, r]
        agg = propagate(h, boundary, rel, snapshot.edge_index, snapshot.edge_type, snapshot.edge_time, tau,
                        state, self.message, self.aggregate, edge_mask=edge_mask, impl=impl)
        return self.update(h, agg)


class EntityNet(nn.Module):
    """NBFNet over entities conditioned on the query; ends in a scorer (ULTRA's entity model).

    Boundary: the query relation's representation ``q = relations[b, r_b]`` at the head ``s_b``,
    zeros elsewhere. Layers keep the shortcut. :meth:`features` returns ``cat(h_L, q)``
    ``(N, B, 2d)``; :meth:`score` maps features to logits.
    """

    def __init__(self, dim: int, num_layers: int, aggregate: str, message: str):
        super().__init__()
        self.layers = nn.ModuleList(EntityLayer(dim, aggregate, message) for _ in range(num_layers))
        self.mlp = scorer(dim)

    def features(self, snapshot, relations, queries, edge_mask=None, impl="auto") -> torch.Tensor:
        B = queries.shape[0]
        batch = torch.arange(B, device=queries.device)
        s, r = queries[:, 0], queries[:, 1]
        q = relations[batch, r]  # (B, d)
        boundary = relations.new_zeros(snapshot.num_entities, B, relations.shape[-1])
        boundary[s, batch] = q
        h = boundary
        for layer in self.layers:
            h = layer(h, boundary, relations, snapshot, queries, edge_mask, impl) + h
        return torch.cat([h, q.unsqueeze(0).expand_as(h)], dim=-1)

    def score(self, features: torch.Tensor) -> torch.Tensor:
        """``(..., 2d)`` features -> ``(...)`` logits."""
        return self.mlp(features).squeeze(-1)


class UltraRelationLayer(nn.Module):
    """ULTRA relation-graph layer: DistMult messages with a learned embedding per edge type (4)."""

    def __init__(self, dim: int, aggregate: str):
        super().__init__()
        self.aggregate = aggregate
        self.relation = nn.Embedding(4, dim)
        self.update = Update(dim, aggregate)

    def forward(self, h, boundary, edge_index, edge_type, impl="auto", adjacency=None):
        """``adjacency``: the 4 sparse ``A_t`` (:func:`grate.relation_graph.ultra_adjacency`); with sum
        aggregation the convolution is then ``boundary + sum_t w_t * (A_t h)``, exactly the edge-wise
        DistMult sum without materialising per-edge messages."""
        n, B, d = h.shape
        if adjacency is not None and self.aggregate == "sum":
            flat = h.reshape(n, B * d)
            agg = boundary
            for t, a in enumerate(adjacency):
                agg = agg + torch.sparse.mm(a, flat).view(n, B, d) * self.relation.weight[t]
            return self.update(h, agg)
        rel = self.relation.weight.unsqueeze(0).expand(B, -1, -1)
        zeros_e = torch.zeros_like(edge_type)
        zeros_b = torch.zeros(B, dtype=torch.long, device=h.device)
        agg = propagate(h, boundary, rel, edge_index, edge_type, zeros_e, zeros_b, None, "distmult",
                        self.aggregate, impl=impl)
        return self.update(h, agg)
