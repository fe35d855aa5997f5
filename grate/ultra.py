"""ULTRA (Galkin et al., ICLR 2024) with a pluggable entity-side message (GRATE and ablations).

Relation model: ``relation_layers`` (6) convolutions over ULTRA's 4-type relation graph
(:func:`grate.relation_graph.ultra_relation_graph`) with DistMult messages, each layer owning an
embedding of the 4 edge types; query init = all-ones vector at the query relation node, zeros
elsewhere (the boundary); LayerNorm, ReLU, shortcut. Its output ``(B, 2R, d)`` feeds the entity
model (:class:`grate.layers.EntityNet`, ``entity_layers[0]`` = 6 layers) whose message is
``config.message``; the scorer maps ``cat(h_L[v], q)`` to a logit.

Parameters (L = 6 both sides): sum ``40 d^2 + 76 d + 1``, PNA ``172 d^2 + 76 d + 1``.
"""
from __future__ import annotations

import torch
from torch import nn

from .config import ModelConfig
from .layers import EntityNet, UltraRelationLayer
from .scoring import TemporalModel


def relation_boundary(queries: torch.Tensor, num_relation_nodes: int, dim: int, dtype) -> torch.Tensor:
    """``(2R, B, d)``: all-ones at each query's relation node, zeros elsewhere."""
    B = queries.shape[0]
    boundary = torch.zeros(num_relation_nodes, B, dim, dtype=dtype, device=queries.device)
    boundary[queries[:, 1], torch.arange(B, device=queries.device)] = 1.0
    return boundary


class Ultra(TemporalModel):
    def __init__(self, config: ModelConfig):
        super().__init__(config)
        d, agg = config.dim, config.aggregate
        self.relation_layers = nn.ModuleList(UltraRelationLayer(d, agg) for _ in range(config.relation_layers))
        self.entity_net = EntityNet(d, config.entity_layers[0], agg, config.message)

    def relations(self, snapshot, queries) -> torch.Tensor:
        """Query-conditioned relation representations ``(B, 2R, d)``."""
        edge_index, edge_type = snapshot.ultra_graph
        dtype = self.entity_net.mlp[0].weight.dtype
        boundary = relation_boundary(queries, snapshot.num_relation_nodes, self.config.dim, dtype)
        adjacency = snapshot.ultra_adjacency(dtype) if self.config.aggregate == "sum" else None
        h = boundary
        for layer in self.relation_layers:
            h = layer(h, boundary, edge_index, edge_type, self.impl, adjacency) + h
        return h.transpose(0, 1)

    def features(self, snapshot, queries, edge_mask=None) -> torch.Tensor:
        rel = self.relations(snapshot, queries)
        return self.entity_net.features(snapshot, rel, queries, edge_mask, self.impl)

    def score_features(self, features: torch.Tensor) -> torch.Tensor:
        return self.entity_net.score(features)
