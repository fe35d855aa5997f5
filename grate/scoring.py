"""Scoring API shared by ULTRA and TRIX, memory-aware batching, and the evaluation-harness adapter.

``model(graph, queries)`` scores every entity as the answer of each query ``(s, r, tau)``
(``queries`` int64 ``(B, 3)``, ``r`` in ``[0, 2R)``; ``r >= R`` asks for a head through the
inverse relation) and returns logits ``(B, N)``; with ``candidates`` ``(B, K)`` only those entities
``(B, K)``. Queries are grouped by the edges they may see (one group per ``tau`` in forecasting or
windowed mode, see :class:`grate.graph.TemporalGraph`). ``remove`` ``(B, 4)`` facts
``(s, r, o, t)`` hides each query's own fact and its inverse from its message passing (training).

Memory: the reference message passing materialises per-edge messages, about ``k E B d`` floats per
layer (``k`` ~ 4 for sum, ~ 8 for PNA) and, when gradients are kept, that for each of the ``L``
layers: ``~ L E B d`` floats overall plus ``L N B d`` (``13 L N B d`` with PNA) node states.
:func:`estimate_bytes` evaluates it; :meth:`TemporalModel.score_all` splits the queries into chunks
whose estimate stays under ``memory_budget`` bytes (default 2 GiB), so a large graph does not run
out of memory.
"""
from __future__ import annotations

import numpy as np
import torch
from torch import nn

from tkg_indt.errors import ParameterError

from .config import ModelConfig
from .graph import Snapshot, TemporalGraph

DEFAULT_MEMORY_BUDGET = 2 * 1024 ** 3


def estimate_bytes(config: ModelConfig, num_edges: int, num_entities: int, batch: int, training: bool = False,
                   itemsize: int = 4) -> int:
    """Rough peak memory of scoring ``batch`` queries on a graph of ``num_edges`` edges (with inverses)."""
    d = config.dim
    layers = config.num_entity_layers
    per_edge = 8 if config.aggregate == "pna" else 4
    node = 14 if config.aggregate == "pna" else 3
    kept = layers if training else 1
    floats = batch * (kept * per_edge * num_edges * d + layers * node * num_entities * d + 4 * num_entities * d)
    return int(floats * itemsize)


def chunk_size(config: ModelConfig, num_edges: int, num_entities: int, memory_budget: int | None = None,
               training: bool = False) -> int:
    """Largest number of queries whose :func:`estimate_bytes` fits ``memory_budget`` (at least 1)."""
    budget = DEFAULT_MEMORY_BUDGET if memory_budget is None else int(memory_budget)
    one = estimate_bytes(config, num_edges, num_entities, 1, training)
    return max(1, budget // max(one, 1))


class TemporalModel(nn.Module):
    """Base class of :class:`grate.ultra.Ultra` and :class:`grate.trix.Trix`.

    Subclasses implement ``features(snapshot, queries, edge_mask) -> (N, B, 2d)`` and
    ``score_features(features) -> logits``. ``impl`` selects the :func:`grate.ops.propagate`
    implementation (a runtime choice, not part of the config).
    """

    def __init__(self, config: ModelConfig):
        super().__init__()
        self.config = config
        self.impl = "auto"

    @property
    def device(self) -> torch.device:
        return next(self.parameters()).device

    def num_parameters(self) -> int:
        return sum(p.numel() for p in self.parameters())

    # ------------------------------------------------------------------ checks
    def _queries(self, graph, queries) -> torch.Tensor:
        q = torch.as_tensor(np.asarray(queries) if not isinstance(queries, torch.Tensor) else queries,
                            dtype=torch.long, device=graph.device)
        if q.dim() != 2 or q.shape[1] != 3:
            raise ParameterError(f"queries must be (B, 3) rows (s, r, tau), got shape {tuple(q.shape)}")
        if len(q):
            s, r = q[:, 0], q[:, 1]
            if int(s.min()) < 0 or int(s.max()) >= graph.num_entities:
                raise ParameterError(f"query subject ids must lie in [0, {graph.num_entities})")
            if int(r.min()) < 0 or int(r.max()) >= 2 * graph.num_relations:
                raise ParameterError(f"query relation ids must lie in [0, 2R={2 * graph.num_relations})")
        return q

    # ------------------------------------------------------------------ forward
    def forward(self, graph: TemporalGraph, queries, candidates=None, remove=None) -> torch.Tensor:
        """Logits ``(B, N)`` (or ``(B, K)`` for ``candidates``); see the module docstring."""
        q = self._queries(graph, queries)
        B = q.shape[0]
        cand = None if candidates is None else torch.as_tensor(candidates, dtype=torch.long, device=q.device)
        if cand is not None and (cand.dim() != 2 or cand.shape[0] != B):
            raise ParameterError(f"candidates must be (B={B}, K), got {tuple(cand.shape)}")
        rem = None if remove is None else torch.as_tensor(remove, dtype=torch.long, device=q.device)
        if rem is not None and rem.shape != (B, 4):
            raise ParameterError(f"remove must be (B={B}, 4) facts (s, r, o, t), got {tuple(rem.shape)}")
        width = graph.num_entities if cand is None else cand.shape[1]
        if not graph.time_dependent:
            return self._group(graph.at(), q, cand, rem)
        out = None
        taus, group = torch.unique(q[:, 2], return_inverse=True)
        for g, tau in enumerate(taus.tolist()):
            idx = torch.nonzero(group == g).squeeze(1)
            part = self._group(graph.at(tau), q[idx], None if cand is None else cand[idx],
                               None if rem is None else rem[idx])
            if out is None:
                out = part.new_empty(B, width)
            out = out.index_copy(0, idx, part)
        return out if out is not None else q.new_zeros(0, width, dtype=torch.float32)

    def _group(self, snap: Snapshot, q, cand, rem) -> torch.Tensor:
        edge_mask = None if rem is None else snap.keep_mask(rem)
        feats = self.features(snap, q, edge_mask)  # (N, B, 2d)
        feats = feats.transpose(0, 1)  # (B, N, 2d)
        if cand is not None:
            feats = feats.gather(1, cand.unsqueeze(-1).expand(-1, -1, feats.shape[-1]))
        return self.score_features(feats)

    @torch.no_grad()
    def score_all(self, graph: TemporalGraph, queries, batch_size: int | None = None,
                  memory_budget: int | None = None) -> torch.Tensor:
        """Logits ``(B, N)`` for every query, in memory-bounded chunks, without gradients.

        ``batch_size`` fixes the chunk size; otherwise it is :func:`chunk_size` of the largest
        snapshot (the whole graph) under ``memory_budget`` bytes.
        """
        q = self._queries(graph, queries)
        if batch_size is None:
            batch_size = chunk_size(self.config, graph.num_edges, graph.num_entities, memory_budget)
        if len(q) <= batch_size:
            return self(graph, q)
        return torch.cat([self(graph, q[i:i + batch_size]) for i in range(0, len(q), batch_size)])


class Scorer:
    """Adapter to the evaluation harness: ``score(task, queries) -> (B, N)`` logits.

    Builds (once per task graph, context and mode) the :class:`TemporalGraph` of
    ``task.context_facts()``, forecasting iff ``task.forecasting``, on the model's device, and
    scores without gradients in eval mode. ``window`` adds the optional time window.
    """

    def __init__(self, model: TemporalModel, window: int | None = None, batch_size: int | None = None,
                 memory_budget: int | None = None):
        self.model, self.window = model, window
        self.batch_size, self.memory_budget = batch_size, memory_budget
        self._key, self._graph, self._task_graph = None, None, None

    def graph_for(self, task) -> TemporalGraph:
        key = (id(task.graph), tuple(task.context), bool(task.forecasting), self.window)
        if self._key != key:
            self._graph = TemporalGraph(task.context_facts(), task.num_entities, task.num_relations,
                                        forecasting=task.forecasting, window=self.window, device=self.model.device)
            self._key, self._task_graph = key, task.graph  # holding the graph keeps its id unique
        return self._graph

    def prepare(self, task) -> None:
        self.graph_for(task)

    def score(self, task, queries) -> torch.Tensor:
        graph = self.graph_for(task)
        was_training = self.model.training
        self.model.eval()
        try:
            scores = self.model.score_all(graph, queries, self.batch_size, self.memory_budget)
        finally:
            self.model.train(was_training)
        return scores.cpu()
