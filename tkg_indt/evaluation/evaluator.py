"""Time-aware filtered ranking metrics, usable on its own like OGB's ``Evaluator``.

Input format
------------
``scores``: float array or tensor ``(B, N)``, higher means more plausible, one row per query, one
column per candidate entity (all entities of the evaluated graph).
``queries``: int64 ``(B, 4)`` rows ``(s, r, o, τ)``: the query ``(s, r, ?, τ)`` with target ``o``.
Relation ids ``r >= R`` are inverses (``r - R`` asked backwards), so head prediction
``(?, r, o, τ)`` is the row ``(o, r + R, s, τ)``.

For every query: ``greater`` = candidates scoring strictly higher than the target and ``equal`` =
candidates scoring the same (target excluded), after removing filtered candidates (other true
answers, see :class:`KnownAnswers`). Tie policies turn (greater, equal) into metrics:

* ``optimistic``  rank = greater + 1
* ``pessimistic`` rank = greater + equal + 1 (ULTRA's choice)
* ``average``     rank = greater + equal / 2 + 1 (TGB 2.0 / INGRAM; the default)
* ``expected``    the expectation of each metric under uniformly random tie-breaking
  (rank uniform on greater+1 .. greater+equal+1); what the recurrency baseline code gives in aggregate.

>>> ev = Evaluator(known_facts, num_entities=N, num_relations=R)     # doctest: +SKIP
>>> ev.eval(scores, queries)                                          # doctest: +SKIP
{'mrr': 0.41, 'mr': 37.2, 'hits@1': 0.30, 'hits@3': 0.46, 'hits@10': 0.62, 'count': 17926}
"""
from __future__ import annotations

import numpy as np
import torch

from .filtering import KnownAnswers

TIES = ("average", "pessimistic", "optimistic", "expected")
HITS = (1, 3, 10)
_EULER = 0.5772156649015329


def _harmonic(n: torch.Tensor) -> torch.Tensor:
    """H(n) = sum_{k=1..n} 1/k for float64 tensors (H(0) = 0)."""
    return torch.where(n > 0, torch.digamma(n + 1.0) + _EULER, torch.zeros_like(n))


def metrics_from_counts(greater, equal, ties: str = "average", hits=HITS) -> dict:
    """MRR, MR and Hits@k (fractions) from per-query (greater, equal) counts under a tie policy."""
    if ties not in TIES:
        raise ValueError(f"unknown tie policy {ties!r}; known: {', '.join(TIES)}")
    g = torch.as_tensor(np.asarray(greater), dtype=torch.float64)
    e = torch.as_tensor(np.asarray(equal), dtype=torch.float64)
    n = len(g)
    if n == 0:
        return {"mrr": float("nan"), "mr": float("nan"), **{f"hits@{k}": float("nan") for k in hits}, "count": 0}
    if ties == "expected":
        rr = (_harmonic(g + e + 1) - _harmonic(g)) / (e + 1)
        hk = {k: ((k - g).clamp(min=0) / (e + 1)).clamp(max=1) for k in hits}
        rank = g + e / 2 + 1
    else:
        rank = {"optimistic": g + 1, "pessimistic": g + e + 1, "average": g + e / 2 + 1}[ties]
        rr = 1.0 / rank
        hk = {k: (rank <= k).double() for k in hits}
    out = {"mrr": rr.mean().item(), "mr": rank.mean().item()}
    out.update({f"hits@{k}": v.mean().item() for k, v in hk.items()})
    out["count"] = n
    return out


def ranks_from_counts(greater, equal, ties: str = "average") -> np.ndarray:
    """Per-query rank (float) under a tie policy; ``expected`` gives the expected rank."""
    g, e = np.asarray(greater, dtype=np.float64), np.asarray(equal, dtype=np.float64)
    return {"optimistic": g + 1, "pessimistic": g + e + 1}.get(ties, g + e / 2 + 1)


class Evaluator:
    """Filtered ranking against all candidate entities. See the module docstring for the format."""

    def __init__(self, known_facts: np.ndarray | None, num_entities: int, num_relations: int,
                 filter: str = "time-aware", ties: str = "average", candidates: np.ndarray | None = None):
        if ties not in TIES:
            raise ValueError(f"unknown tie policy {ties!r}; known: {', '.join(TIES)}")
        known = np.zeros((0, 4), np.int64) if known_facts is None else known_facts
        self.known = KnownAnswers(known, num_entities, num_relations, filter)
        self.num_entities, self.num_relations = num_entities, num_relations
        self.filter, self.ties = filter, ties
        self.excluded = None if candidates is None else ~torch.as_tensor(np.asarray(candidates, dtype=bool))

    def counts(self, scores, queries) -> tuple[np.ndarray, np.ndarray]:
        """Per-query (greater, equal) counts after filtering."""
        q = np.asarray(queries, dtype=np.int64).reshape(-1, 4)
        scores = torch.as_tensor(scores)
        if scores.shape != (len(q), self.num_entities):
            raise ValueError(f"scores must have shape (num_queries, num_entities) = ({len(q)}, {self.num_entities}), "
                             f"got {tuple(scores.shape)}")
        if torch.isnan(scores).any():
            raise ValueError("scores contain NaN; a model must give every candidate a number")
        rows = torch.arange(len(q))
        target_idx = torch.as_tensor(q[:, 2])
        target = scores[rows, target_idx].unsqueeze(1)
        drop = torch.zeros(scores.shape, dtype=torch.bool)
        r_idx, o_idx = self.known.lookup(q[:, [0, 1, 3]])
        drop[torch.as_tensor(r_idx), torch.as_tensor(o_idx)] = True
        if self.excluded is not None:
            drop |= self.excluded.unsqueeze(0)
        drop[rows, target_idx] = True  # the target is neither above nor tied with itself
        keep = ~drop
        greater = ((scores > target) & keep).sum(1)
        equal = ((scores == target) & keep).sum(1)
        return greater.numpy(), equal.numpy()

    def eval(self, scores, queries, ties: str | None = None) -> dict:
        greater, equal = self.counts(scores, queries)
        return metrics_from_counts(greater, equal, ties or self.ties)
