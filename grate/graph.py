"""Temporal message graphs: a TKG's facts as edges with inverses, and what each query may see.

A :class:`TemporalGraph` is built from ``(n, 4)`` int64 facts ``(head, relation, tail, time)``
with ``N`` entities and ``R`` relations. Every fact ``(s, r, o, t)`` gives two edges: ``s -> o`` of
type ``r`` and ``o -> s`` of type ``r + R``, both at time ``t`` (the inverse keeps the timestamp).
Edge tensors (int64): ``edge_index (2, 2n)`` rows (src, dst), ``edge_type (2n,)`` in ``[0, 2R)``,
``edge_time (2n,)``; the first ``n`` edges are the facts in their given order, then the inverses.

Visibility of an edge to a query ``(s, r, tau)``:

* interpolation (``forecasting=False``): every edge, whatever its time;
* forecasting (``forecasting=True``): only edges with ``t < tau`` (strictly before the query);
* optional time window ``window=W``: additionally ``|tau - t| <= W`` (off by default).

Visibility depends only on ``tau``, so the edges a query may use form a :class:`Snapshot` shared
by every query at that ``tau`` (:meth:`TemporalGraph.at`); snapshots carry their relation graphs
(ULTRA's 4-type graph, TRIX's role incidence), built once on first use and cached. Relation
graphs are built from the visible edges only, so in forecasting mode nothing at or after ``tau``
reaches a score. Training additionally hides the query fact itself and its inverse (same time):
:meth:`Snapshot.keep_mask`.
"""
from __future__ import annotations

import collections
from functools import cached_property

import numpy as np
import torch

from tkg_indt.errors import ParameterError

from .relation_graph import RoleIncidence, ultra_adjacency, ultra_relation_graph


class Snapshot:
    """A set of visible edges over all ``N`` entities, with lazily built relation graphs."""

    def __init__(self, edge_index, edge_type, edge_time, num_entities: int, num_relations: int):
        self.edge_index, self.edge_type, self.edge_time = edge_index, edge_type, edge_time
        self.num_entities, self.num_relations = int(num_entities), int(num_relations)

    @property
    def num_edges(self) -> int:
        return int(self.edge_type.shape[0])

    @property
    def num_relation_nodes(self) -> int:
        return 2 * self.num_relations

    @property
    def device(self) -> torch.device:
        return self.edge_index.device

    @cached_property
    def ultra_graph(self) -> tuple[torch.Tensor, torch.Tensor]:
        """ULTRA relation graph ``(edge_index (2, E_r), edge_type (E_r,))`` over ``2R`` relation nodes."""
        return ultra_relation_graph(self.edge_index, self.edge_type, self.num_entities, self.num_relation_nodes)

    def ultra_adjacency(self, dtype=torch.float32) -> list:
        """The 4 sparse ``(2R, 2R)`` adjacencies of :attr:`ultra_graph` (``A_t[r2, r1]``), cached per dtype."""
        cache = self.__dict__.setdefault("_adjacency", {})
        if dtype not in cache:
            edge_index, edge_type = self.ultra_graph
            cache[dtype] = ultra_adjacency(edge_index, edge_type, self.num_relation_nodes, dtype)
        return cache[dtype]

    @cached_property
    def role_incidence(self) -> RoleIncidence:
        """TRIX head/tail incidence of entities and the ``2R`` relations."""
        return RoleIncidence.build(self.edge_index, self.edge_type, self.num_entities, self.num_relation_nodes)

    def keep_mask(self, facts: torch.Tensor) -> torch.Tensor:
        """``(B, E)`` bool, False on the edges of fact ``b`` and of its inverse (training removal).

        ``facts`` is ``(B, 4)`` ``(s, r, o, t)`` with ``r`` in ``[0, 2R)``; the fact itself is the
        edge ``s -> o`` of type ``r`` at ``t``, its inverse ``o -> s`` of type ``r +/- R`` at ``t``.
        Duplicated facts are all removed. Cost ``O(B E)``, the size of the mask itself.
        """
        facts = torch.as_tensor(facts, dtype=torch.long, device=self.device).reshape(-1, 4)
        s, r, o, t = (facts[:, i:i + 1] for i in range(4))
        r_inv = (r + self.num_relations) % (2 * self.num_relations)
        src, dst = self.edge_index[0][None], self.edge_index[1][None]
        typ, tim = self.edge_type[None], self.edge_time[None]
        same_time = tim == t
        hit = same_time & (((src == s) & (dst == o) & (typ == r)) | ((src == o) & (dst == s) & (typ == r_inv)))
        return ~hit

    def to(self, device) -> "Snapshot":
        return Snapshot(self.edge_index.to(device), self.edge_type.to(device), self.edge_time.to(device),
                        self.num_entities, self.num_relations)


class TemporalGraph:
    """The message graph of a TKG and the visibility rule of its queries (see module docstring)."""

    def __init__(self, facts, num_entities: int, num_relations: int, forecasting: bool = False,
                 window: int | None = None, device: str | torch.device = "cpu", cache_size: int = 4):
        facts = np.ascontiguousarray(np.asarray(facts, dtype=np.int64).reshape(-1, 4))
        if num_entities < 1 or num_relations < 1:
            raise ParameterError(f"a graph needs entities and relations (got N={num_entities}, R={num_relations})")
        if len(facts):
            for col, name, bound in ((0, "head", num_entities), (2, "tail", num_entities),
                                     (1, "relation", num_relations)):
                bad = np.flatnonzero((facts[:, col] < 0) | (facts[:, col] >= bound))
                if len(bad):
                    raise ParameterError(f"fact row {bad[0]} has {name} id {facts[bad[0], col]} outside "
                                         f"[0, {bound}). Fix: use ids of the graph's own vocabularies")
        if window is not None and (isinstance(window, bool) or int(window) != window or window < 0):
            raise ParameterError(f"time window {window!r} is invalid. Fix: use a non-negative integer or None")
        self.facts = facts
        self.num_entities, self.num_relations = int(num_entities), int(num_relations)
        self.forecasting, self.window = bool(forecasting), None if window is None else int(window)
        f = torch.from_numpy(facts).to(device)
        h, r, t, tm = f.unbind(1)
        self._full = Snapshot(torch.stack([torch.cat([h, t]), torch.cat([t, h])]),
                              torch.cat([r, r + self.num_relations]), torch.cat([tm, tm]),
                              self.num_entities, self.num_relations)
        self._cache: collections.OrderedDict = collections.OrderedDict()
        self.cache_size = int(cache_size)

    @classmethod
    def from_tkg(cls, tkg, splits=("train",), **kwargs) -> "TemporalGraph":
        """The graph of some splits of a :class:`tkg_indt.data.tkg.TKG` (ids of that TKG)."""
        return cls(tkg.facts(*splits), tkg.num_entities, tkg.num_relations, **kwargs)

    # ------------------------------------------------------------------ edges
    @property
    def edge_index(self) -> torch.Tensor:
        return self._full.edge_index

    @property
    def edge_type(self) -> torch.Tensor:
        return self._full.edge_type

    @property
    def edge_time(self) -> torch.Tensor:
        return self._full.edge_time

    @property
    def num_edges(self) -> int:
        return self._full.num_edges

    @property
    def device(self) -> torch.device:
        return self._full.device

    @property
    def time_dependent(self) -> bool:
        """Whether the visible edges depend on the query time."""
        return self.forecasting or self.window is not None

    def visible(self, tau: int) -> torch.Tensor:
        """``(E,)`` bool: the edges a query at time ``tau`` may use."""
        time = self._full.edge_time
        mask = torch.ones_like(time, dtype=torch.bool)
        if self.forecasting:
            mask &= time < tau
        if self.window is not None:
            mask &= (time - tau).abs() <= self.window
        return mask

    def at(self, tau: int | None = None) -> Snapshot:
        """The snapshot of edges visible at ``tau`` (the whole graph when visibility ignores time).

        Snapshots keep the edge order of the graph; the last ``cache_size`` are cached with their
        relation graphs (queries arrive sorted by time in the evaluation harness).
        """
        if not self.time_dependent:
            return self._full
        if tau is None:
            raise ParameterError("a forecasting or windowed graph needs the query time tau")
        tau = int(tau)
        if tau in self._cache:
            self._cache.move_to_end(tau)
            return self._cache[tau]
        keep = self.visible(tau)
        full = self._full
        snap = Snapshot(full.edge_index[:, keep], full.edge_type[keep], full.edge_time[keep],
                        self.num_entities, self.num_relations)
        self._cache[tau] = snap
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return snap

    def to(self, device) -> "TemporalGraph":
        """The same graph with its tensors on ``device`` (the snapshot cache starts empty)."""
        return TemporalGraph(self.facts, self.num_entities, self.num_relations, self.forecasting, self.window,
                             device=device, cache_size=self.cache_size)

    def __repr__(self) -> str:
        mode = "forecasting" if self.forecasting else "interpolation"
        win = "" if self.window is None else f", window={self.window}"
        return (f"TemporalGraph(entities={self.num_entities:,}, relations={self.num_relations}, "
                f"edges={self.num_edges:,}, {mode}{win})")
