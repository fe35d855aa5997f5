"""Recurrency statistics of a test split: Rec, DRec and the median recurrence gap.

Definitions (Gastinger et al. 2024, "History repeats itself", section 4.3). H = the history facts
together with the test facts themselves (so earlier test facts count), times as time indices. For each
test fact (s, r, o, t) in its original direction (duplicate lines count), k* = max{k < t : (s, r, o, k)
∈ H}, or none.

* ``rec``  share of test facts with some k* (the triple occurred before),
* ``drec`` share with k* = t − 1 (it occurred at the immediately preceding time step),
* ``median_gap`` median of t − k* over the test facts that have a k* (time units; None if none).

>>> recurrency_stats(tkg.facts("train", "valid"), tkg["test"])            # doctest: +SKIP
{'rec': 0.524, 'drec': 0.105, 'median_gap': 4.0, 'test_facts': 7371, 'recurrent': 3862}

For a built variant pass ``history = msg`` (or msg ∪ test) and ``test``; for a source dataset
``history = train ∪ valid`` (or all splits). :func:`tkg_recurrency` does this for a :class:`TKG`.
"""
from __future__ import annotations

import numpy as np

from .data.tkg import TKG


def last_occurrence(history_facts: np.ndarray, test_facts: np.ndarray) -> np.ndarray:
    """k* of every test fact: the latest time < t at which its (s, r, o) occurs in history ∪ test; -1 if none.

    Times must be >= 0 (time indices). Returns int64 ``(len(test_facts),)``.
    """
    test = np.asarray(test_facts, dtype=np.int64).reshape(-1, 4)
    hist = np.concatenate([np.asarray(history_facts, dtype=np.int64).reshape(-1, 4), test])
    if len(test) == 0:
        return np.zeros(0, np.int64)
    n_ent = int(max(hist[:, 0].max(), hist[:, 2].max())) + 1
    n_rel = int(hist[:, 1].max()) + 1
    _, ids = np.unique((hist[:, 0] * n_rel + hist[:, 1]) * n_ent + hist[:, 2], return_inverse=True)
    ids = ids.reshape(-1)
    t_min = int(hist[:, 3].min())
    span = int(hist[:, 3].max()) - t_min + 1
    keys = np.unique(ids * span + (hist[:, 3] - t_min))  # sorted (triple, time) events
    test_ids = ids[len(hist) - len(test):]
    query = test_ids * span + (test[:, 3] - t_min)
    pos = np.searchsorted(keys, query, side="left") - 1  # the latest event strictly before (triple, t)
    pos_c = np.maximum(pos, 0)
    found = (pos >= 0) & (keys[pos_c] // span == test_ids)
    return np.where(found, keys[pos_c] % span + t_min, -1)


def recurrency_stats(history_facts: np.ndarray, test_facts: np.ndarray) -> dict:
    """Rec, DRec (fractions) and the median recurrence gap of ``test_facts`` given ``history_facts``."""
    test = np.asarray(test_facts, dtype=np.int64).reshape(-1, 4)
    k_star = last_occurrence(history_facts, test)
    has = k_star >= 0
    n = len(test)
    gaps = (test[:, 3] - k_star)[has]
    return {
        "rec": float(has.mean()) if n else float("nan"),
        "drec": float((has & (k_star == test[:, 3] - 1)).mean()) if n else float("nan"),
        "median_gap": float(np.median(gaps)) if len(gaps) else None,
        "test_facts": n,
        "recurrent": int(has.sum()),
    }


def tkg_recurrency(tkg: TKG, split: str = "test") -> dict:
    """:func:`recurrency_stats` of one split: H = all splits of a source, msg ∪ test (or train ∪ valid) of a variant."""
    if split not in tkg.splits:
        from .errors import UnknownNameError

        raise UnknownNameError("split", split, tkg.splits)
    if "msg" in tkg.splits:  # a built variant: training graph train ∪ valid, inference graph msg ∪ test
        graph = ("msg", "test") if split in ("msg", "test") else ("train", "valid")
    else:
        graph = tuple(tkg.splits)
    history = tkg.facts(*[s for s in graph if s != split and s in tkg.splits])
    out = recurrency_stats(history, tkg[split])
    out["split"] = split
    return out


def format_recurrency(rows: dict) -> str:
    """Markdown table of :func:`tkg_recurrency` results keyed by data name (percent)."""
    lines = ["| data | split | facts | Rec (%) | DRec (%) | median gap |", "|---|---|---|---|---|---|"]
    for name, s in rows.items():
        gap = "-" if s["median_gap"] is None else f"{s['median_gap']:g}"
        lines.append(f"| {name} | {s['split']} | {s['test_facts']:,} | {100 * s['rec']:.1f} | {100 * s['drec']:.1f} | {gap} |")
    return "\n".join(lines)
