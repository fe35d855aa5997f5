"""Known-answer index for filtered ranking (time-aware, static or raw).

Facts are indexed in both directions: ``(s, r, o, t)`` answers the tail query ``(s, r, ?, t)`` and,
through the inverse relation ``r + R``, the head query ``(o, r + R, ?, t)``. Lookups are vectorised:
a sorted key array plus CSR offsets, queried with ``np.searchsorted``.
"""
from __future__ import annotations

import numpy as np

FILTERS = ("time-aware", "static", "raw")


def with_inverses(facts: np.ndarray, num_relations: int) -> np.ndarray:
    """``(n, 4)`` facts -> ``(2n, 4)``: the facts, then their inverses ``(o, r + R, s, t)``."""
    inv = facts[:, [2, 1, 0, 3]].copy()
    inv[:, 1] += num_relations
    return np.concatenate([facts, inv])


class KnownAnswers:
    """All true answers of ``(s, r, ?, t)`` (time-aware) or ``(s, r, ?)`` (static) queries."""

    def __init__(self, facts: np.ndarray, num_entities: int, num_relations: int, mode: str = "time-aware"):
        if mode not in FILTERS:
            raise ValueError(f"unknown filter {mode!r}; known: {', '.join(FILTERS)}")
        self.mode, self.num_entities, self.num_relations = mode, num_entities, num_relations
        facts = with_inverses(np.asarray(facts, dtype=np.int64).reshape(-1, 4), num_relations)
        self.t_min = int(facts[:, 3].min()) if len(facts) else 0
        self.t_span = int(facts[:, 3].max()) - self.t_min + 1 if len(facts) else 1
        keys = self._keys(facts[:, 0], facts[:, 1], facts[:, 3])
        order = np.argsort(keys, kind="stable")
        keys, objects = keys[order], facts[order, 2]
        self.keys, start = np.unique(keys, return_index=True)
        self.offsets = np.append(start, len(keys))
        self.objects = objects

    def _keys(self, s, r, t):
        key = s.astype(np.int64) * (2 * self.num_relations) + r
        if self.mode == "time-aware":
            key = key * self.t_span + (t - self.t_min)
        return key

    def lookup(self, queries: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For ``(B, >=3)`` queries ``(s, r, τ, ...)`` -> (row index, known object) pairs."""
        if self.mode == "raw" or len(self.keys) == 0 or len(queries) == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        q = np.asarray(queries, dtype=np.int64)
        t = q[:, 2]
        keys = self._keys(q[:, 0], q[:, 1], t)
        pos = np.searchsorted(self.keys, keys)
        pos_c = np.minimum(pos, len(self.keys) - 1)
        hit = self.keys[pos_c] == keys
        if self.mode == "time-aware":
            hit &= (t >= self.t_min) & (t < self.t_min + self.t_span)
        start = np.where(hit, self.offsets[pos_c], 0)
        count = np.where(hit, self.offsets[pos_c + 1] - self.offsets[pos_c], 0)
        rows = np.repeat(np.arange(len(q)), count)
        within = np.arange(count.sum()) - np.repeat(np.cumsum(count) - count, count)
        return rows, self.objects[np.repeat(start, count) + within]
