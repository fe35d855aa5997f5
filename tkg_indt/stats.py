"""Dataset statistics: per-split counts, duplicates and time span."""
from __future__ import annotations

import numpy as np

from .data.tkg import HEAD, REL, TAIL, TIME, TKG


def split_stats(tkg: TKG, facts: np.ndarray) -> dict:
    """Counts of one set of facts: quads, entities, relations, timestamps, duplicates, span."""
    n = len(facts)
    ents = np.unique(np.concatenate([facts[:, HEAD], facts[:, TAIL]])) if n else []
    span = int(facts[:, TIME].max() - facts[:, TIME].min() + 1) if n else 0
    return {
        "quads": n,
        "entities": len(ents),
        "relations": len(np.unique(facts[:, REL])),
        "timestamps": len(np.unique(facts[:, TIME])),
        "duplicates": int(n - len(np.unique(facts, axis=0))) if n else 0,
        "first": str(tkg.time.label(int(facts[:, TIME].min()))) if n else None,
        "last": str(tkg.time.label(int(facts[:, TIME].max()))) if n else None,
        "span": span,
        "span_unit": {"day": "days", "year": "years", "unit": "units"}[tkg.time.granularity],
    }


def dataset_stats(tkg: TKG) -> dict:
    """Per split and over all splits together (key ``all``)."""
    out = {name: split_stats(tkg, facts) for name, facts in tkg.splits.items()}
    out["all"] = split_stats(tkg, tkg.facts())
    return out


def format_table(stats: dict, columns=("quads", "entities", "relations", "timestamps", "duplicates")) -> str:
    """A markdown table with one row per split."""
    head = ["split", *columns, "time span"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for split, s in stats.items():
        cells = [f"{s[c]:,}" if isinstance(s[c], (int, np.integer)) else str(s[c]) for c in columns]
        span = f"{s['first']} .. {s['last']} ({s['span']} {s['span_unit']})" if s["quads"] else "empty"
        lines.append("| " + " | ".join([split, *cells, span]) + " |")
    return "\n".join(lines)
