"""Graphs over relations: ULTRA's 4-type relation graph and TRIX's role incidence.

All inputs are the message graph with inverse edges already added: ``edge_index`` ``(2, E)``
(src, dst), ``edge_type`` ``(E,)`` in ``[0, 2R)``. Relation nodes are the ``2R`` relation ids.

Incidence (:func:`incidence`): the distinct (entity, relation) pairs where the entity is the head
(source) of an edge of that relation, and those where it is the tail (target). As 0/1 matrices
these are ``E_h`` and ``E_t`` (``N x 2R``), stored as ``(2, nnz)`` int64 rows ``[entity; relation]``
sorted by entity, then relation.

ULTRA (:func:`ultra_relation_graph`): edges ``r1 -> r2`` (messages flow r1 to r2) whenever the two
relations share an entity in the given roles, one edge per relation pair, unweighted, self-loops
kept. Types: 0 = hh (``E_h^T E_h``), 1 = tt (``E_t^T E_t``), 2 = ht (``E_h^T E_t``: an entity is a
head of r1 and a tail of r2), 3 = th (``E_t^T E_h``).

TRIX (:func:`role_graph`): four graphs hh, ht, th, tt whose edges ``r1 -> r2`` are typed by the
shared entity, one edge per shared entity (r1 in role 1, r2 in role 2), hh and tt without
``r1 = r2``. Their total size is about ``sum_e |R(e)|^2``; the model never materialises them (it
convolves through the incidence, see :mod:`grate.trix`), they exist for tests and statistics.
"""
from __future__ import annotations

import dataclasses

import torch

ULTRA_TYPES = ("hh", "tt", "ht", "th")
ROLES = ("hh", "ht", "th", "tt")  # TRIX: role of r1, role of r2


def _pairs(entity: torch.Tensor, relation: torch.Tensor, num_relations: int) -> torch.Tensor:
    key = torch.unique(entity * num_relations + relation)  # sorted -> by entity, then relation
    return torch.stack([key // num_relations, key % num_relations])


def incidence(edge_index: torch.Tensor, edge_type: torch.Tensor, num_relations: int):
    """``(head_pairs, tail_pairs)``: distinct ``[entity; relation]`` columns, each ``(2, nnz)``."""
    return (_pairs(edge_index[0], edge_type, num_relations),
            _pairs(edge_index[1], edge_type, num_relations))


def _cross(p1: torch.Tensor, p2: torch.Tensor, num_entities: int):
    """Every ``(r1, r2, e)`` with ``[e; r1]`` in ``p1`` and ``[e; r2]`` in ``p2`` (both sorted by entity).

    Vectorised: each pair of ``p1`` is repeated once per pair of ``p2`` with the same entity.
    """
    c2 = torch.bincount(p2[0], minlength=num_entities)
    start2 = torch.cumsum(c2, 0) - c2  # first pair of each entity in p2
    reps = c2[p1[0]]
    src = torch.repeat_interleave(torch.arange(p1.shape[1], device=p1.device), reps)
    offset = torch.arange(int(reps.sum()), device=p1.device) - torch.repeat_interleave(torch.cumsum(reps, 0) - reps, reps)
    dst = start2[p1[0, src]] + offset
    return p1[1, src], p2[1, dst], p1[0, src]


def _product_pairs(a: torch.Tensor, b: torch.Tensor, num_entities: int, num_relations: int,
                   chunk_floats: int = 1 << 24) -> torch.Tensor:
    """Nonzeros ``(2, k)`` ``[r1; r2]`` (sorted) of the boolean product ``E_a^T E_b``.

    Up to 4096 relation nodes: sparse ``E_a^T`` times dense ``E_b`` over chunks of entities
    (``O(nnz_a 2R)`` flops, at most ``chunk_floats`` floats per dense block); beyond that the
    per-entity cross product (``O(sum_e |R_a(e)| |R_b(e)|)``) followed by a unique.
    """
    if num_relations > 4096:
        r1, r2, _ = _cross(a, b, num_entities)
        key = torch.unique(r1 * num_relations + r2)
        return torch.stack([key // num_relations, key % num_relations])
    step = max(1, chunk_floats // num_relations)
    total = torch.zeros(num_relations, num_relations, dtype=torch.float32, device=a.device)
    bounds = torch.arange(0, num_entities + step, step, device=a.device).clamp(max=num_entities)
    cut_a = torch.searchsorted(a[0], bounds).tolist()
    cut_b = torch.searchsorted(b[0], bounds).tolist()
    for i in range(len(bounds) - 1):
        lo, n = int(bounds[i]), int(bounds[i + 1] - bounds[i])
        if n == 0 or cut_a[i] == cut_a[i + 1] or cut_b[i] == cut_b[i + 1]:
            continue
        pa, pb = a[:, cut_a[i]:cut_a[i + 1]], b[:, cut_b[i]:cut_b[i + 1]]
        dense_b = torch.zeros(n, num_relations, dtype=torch.float32, device=a.device)
        dense_b[pb[0] - lo, pb[1]] = 1.0
        sparse_at = torch.sparse_coo_tensor(torch.stack([pa[1], pa[0] - lo]), torch.ones(pa.shape[1], device=a.device),
                                            (num_relations, n), check_invariants=False)
        total += torch.sparse.mm(sparse_at, dense_b)
    return torch.nonzero(total > 0).t()


def ultra_relation_graph(edge_index: torch.Tensor, edge_type: torch.Tensor, num_entities: int,
                         num_relations: int) -> tuple[torch.Tensor, torch.Tensor]:
    """ULTRA's relation graph: ``(edge_index (2, E_r) [r1; r2], edge_type (E_r,) in 0..3)``.

    ``num_relations`` is the number of relation nodes (2R with inverses). Edges are grouped by
    type (hh, tt, ht, th) and sorted by (r1, r2) within a type.
    """
    heads, tails = incidence(edge_index, edge_type, num_relations)
    parts, types = [], []
    for t, (a, b) in enumerate(((heads, heads), (tails, tails), (heads, tails), (tails, heads))):
        idx = _product_pairs(a, b, num_entities, num_relations)
        parts.append(idx)
        types.append(torch.full((idx.shape[1],), t, dtype=torch.long, device=idx.device))
    return torch.cat(parts, dim=1), torch.cat(types)


def sparse_matrix(rows: torch.Tensor, cols: torch.Tensor, shape: tuple[int, int], dtype=torch.float32) -> torch.Tensor:
    """Coalesced sparse COO 0/1 matrix with ones at ``(rows, cols)`` (pairs are distinct)."""
    values = torch.ones(rows.shape[0], dtype=dtype, device=rows.device)
    return torch.sparse_coo_tensor(torch.stack([rows, cols]), values, shape, check_invariants=False).coalesce()


def ultra_adjacency(edge_index: torch.Tensor, edge_type: torch.Tensor, num_relations: int, dtype=torch.float32):
    """The 4 relation-graph adjacencies as sparse ``(2R, 2R)`` matrices ``A_t[r2, r1] = 1`` for ``r1 -> r2``.

    With sum aggregation and DistMult messages, ULTRA's relation convolution is exactly
    ``boundary + sum_t w_t * (A_t h)``.
    """
    return [sparse_matrix(edge_index[1, edge_type == t], edge_index[0, edge_type == t], (num_relations, num_relations),
                          dtype) for t in range(len(ULTRA_TYPES))]


@dataclasses.dataclass
class RoleIncidence:
    """Entity-relation incidence in both roles, with the per-entity counts TRIX's convolution needs.

    ``pairs[role]`` is ``(2, nnz)`` ``[entity; relation]`` for role ``"h"`` (entity is a head of the
    relation) or ``"t"`` (a tail). ``count[role]`` is ``(N,)``: ``|R_role(e)|``.
    """

    num_entities: int
    num_relations: int
    pairs: dict
    count: dict

    @classmethod
    def build(cls, edge_index, edge_type, num_entities: int, num_relations: int) -> "RoleIncidence":
        heads, tails = incidence(edge_index, edge_type, num_relations)
        pairs = {"h": heads, "t": tails}
        count = {k: torch.bincount(v[0], minlength=num_entities) for k, v in pairs.items()}
        return cls(num_entities, num_relations, pairs, count)

    def matrix(self, role: str, dtype=torch.float32, transpose: bool = False) -> torch.Tensor:
        """Sparse 0/1 incidence ``(N, 2R)`` of role ``"h"`` or ``"t"`` (``(2R, N)`` transposed), cached."""
        key = (role, dtype, transpose)
        cache = self.__dict__.setdefault("_matrices", {})
        if key not in cache:
            e, r = self.pairs[role]
            cache[key] = (sparse_matrix(r, e, (self.num_relations, self.num_entities), dtype) if transpose
                          else sparse_matrix(e, r, (self.num_entities, self.num_relations), dtype))
        return cache[key]

    @property
    def nnz(self) -> int:
        return int(self.pairs["h"].shape[1] + self.pairs["t"].shape[1])

    def role_graph_size(self, role: str) -> int:
        """Edge count of one TRIX role graph (``sum_e |R1(e)| |R2(e)|``, minus self pairs for hh/tt)."""
        c1, c2 = self.count[role[0]], self.count[role[1]]
        size = int((c1 * c2).sum())
        return size - int(c1.sum()) if role[0] == role[1] else size


def role_graph(inc: RoleIncidence, role: str) -> tuple[torch.Tensor, torch.Tensor]:
    """The explicit TRIX role graph ``role`` in ``ROLES``: ``(edge_index [r1; r2], edge_entity)``.

    One edge ``r1 -> r2`` per entity ``e`` with ``r1`` in role ``role[0]`` and ``r2`` in role
    ``role[1]``; for hh and tt the pairs ``r1 = r2`` are left out. Built vectorised: every pair of
    the first incidence is repeated once per pair of the second incidence with the same entity.
    """
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; known: {', '.join(ROLES)}")
    r1, r2, ent = _cross(inc.pairs[role[0]], inc.pairs[role[1]], inc.num_entities)
    if role[0] == role[1]:
        keep = r1 != r2
        r1, r2, ent = r1[keep], r2[keep], ent[keep]
    return torch.stack([r1, r2]), ent
