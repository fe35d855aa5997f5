"""Graph primitives of the builder: unique facts, CSR entity adjacency, giant component, capped BFS.

Everything works on ``(n, 4)`` int64 fact arrays ``(head, relation, tail, time)`` and is vectorised;
every random draw is made over an array in a fixed (sorted) order with one ``np.random.Generator``,
so the same generator state gives the same result on every machine and run.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from ..data.tkg import HEAD, REL, TAIL, TIME


def unique_facts(facts: np.ndarray) -> np.ndarray:
    """Distinct quadruples, sorted by ``(head, relation, tail, time)``.

    Uses one int64 mixed-radix key when it fits (fast for millions of facts), else row-wise unique.
    """
    if len(facts) == 0:
        return facts.reshape(0, 4).astype(np.int64)
    sizes = facts.max(axis=0).astype(np.int64) + 1
    if float(np.prod(sizes.astype(np.float64))) < 2.0 ** 62:
        key = ((facts[:, HEAD] * sizes[REL] + facts[:, REL]) * sizes[TAIL] + facts[:, TAIL]) * sizes[TIME] + facts[:, TIME]
        key = sorted_unique(key)
        out = np.empty((len(key), 4), dtype=np.int64)
        key, out[:, TIME] = np.divmod(key, sizes[TIME])
        key, out[:, TAIL] = np.divmod(key, sizes[TAIL])
        out[:, HEAD], out[:, REL] = np.divmod(key, sizes[REL])
        return out
    return np.unique(facts, axis=0)


def sorted_unique(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values (a sort and a diff: faster than ``np.unique`` for large int arrays)."""
    values = np.sort(values)
    if len(values) == 0:
        return values
    keep = np.empty(len(values), dtype=bool)
    keep[0] = True
    np.not_equal(values[1:], values[:-1], out=keep[1:])
    return values[keep]


def member(values: np.ndarray, pool: np.ndarray) -> np.ndarray:
    """``np.isin(values, pool)`` by binary search in the sorted pool (much faster for int64 keys)."""
    pool = sorted_unique(np.asarray(pool))
    if len(pool) == 0:
        return np.zeros(len(values), dtype=bool)
    pos = np.minimum(np.searchsorted(pool, values), len(pool) - 1)
    return pool[pos] == values


def adjacency(facts: np.ndarray, num_entities: int) -> sp.csr_matrix:
    """Undirected entity graph as a CSR matrix: one entry per distinct neighbour pair, sorted columns."""
    n = np.int64(num_entities)
    h, t = facts[:, HEAD], facts[:, TAIL]
    pairs = sorted_unique(np.concatenate([h * n + t, t * n + h]))
    rows, cols = np.divmod(pairs, n)
    indptr = np.zeros(num_entities + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=num_entities), out=indptr[1:])
    return sp.csr_matrix((np.ones(len(cols), dtype=np.int8), cols, indptr), shape=(num_entities, num_entities))


def giant_component(facts: np.ndarray, num_entities: int) -> np.ndarray:
    """Boolean mask over entities: those in the largest connected component of the facts' entity graph.

    Only entities that occur in ``facts`` count. Ties go to the component holding the smallest id.
    """
    mask = np.zeros(num_entities, dtype=bool)
    if len(facts) == 0:
        return mask
    present = np.zeros(num_entities, dtype=bool)
    present[facts[:, HEAD]] = True
    present[facts[:, TAIL]] = True
    _, labels = connected_components(adjacency(facts, num_entities), directed=False)
    sizes = np.bincount(labels[present], minlength=labels.max() + 1)
    mask[:] = labels == int(np.argmax(sizes))
    return mask & present


def expand(adj: sp.csr_matrix, seeds: np.ndarray, hops: int, cap: int, rng: np.random.Generator) -> np.ndarray:
    """Breadth-first expansion from ``seeds``: sorted ids of every node reached.

    At each hop every frontier node contributes at most ``cap`` of its neighbours, drawn uniformly
    without replacement from all of them (visited or not, as INGRAM does); the next frontier is the
    newly reached nodes. One ``rng.random`` call per hop draws a key for every (frontier node,
    neighbour) pair in CSR order; a node keeps the ``cap`` neighbours with the smallest keys.
    """
    indptr, indices = adj.indptr, adj.indices
    visited = np.zeros(adj.shape[0], dtype=bool)
    frontier = sorted_unique(seeds)
    visited[frontier] = True
    for _ in range(hops):
        if len(frontier) == 0:
            break
        starts = indptr[frontier].astype(np.int64)
        deg = indptr[frontier + 1].astype(np.int64) - starts
        total = int(deg.sum())
        if total == 0:
            break
        offsets = np.repeat(np.cumsum(deg) - deg, deg)
        within = np.arange(total, dtype=np.int64) - offsets
        owner = np.repeat(np.arange(len(frontier)), deg)
        neighbours = indices[np.repeat(starts, deg) + within]
        order = np.lexsort((rng.random(total), owner))  # owner-major, random order inside each owner
        chosen = neighbours[order][within < cap]  # `within` is also the rank after sorting
        new = sorted_unique(chosen)
        new = new[~visited[new]]
        visited[new] = True
        frontier = new
    return np.flatnonzero(visited)


def entities_of(facts: np.ndarray) -> np.ndarray:
    """Sorted distinct entity ids of some facts (heads and tails)."""
    return sorted_unique(np.concatenate([facts[:, HEAD], facts[:, TAIL]]))


def first_covering(facts: np.ndarray, covered_entities: np.ndarray, covered_relations: np.ndarray) -> np.ndarray:
    """Row indices of ``facts`` that cover what is not yet covered: for every entity (relation) used by
    ``facts`` but absent from the ``covered_*`` masks, the first row that mentions it.

    Moving these rows to the covering split makes every entity and relation of ``facts`` covered.
    """
    rows = np.arange(len(facts), dtype=np.int64)
    picks = []
    for items, item_rows, covered in (
            (np.concatenate([facts[:, HEAD], facts[:, TAIL]]), np.concatenate([rows, rows]), covered_entities),
            (facts[:, REL], rows, covered_relations)):
        need = ~covered[items]
        items, item_rows = items[need], item_rows[need]
        order = np.lexsort((item_rows, items))  # by item, then by row
        _, first = np.unique(items[order], return_index=True)
        picks.append(item_rows[order][first])
    return sorted_unique(np.concatenate(picks))
