"""A deterministic GDELT-shaped synthetic source (the real GDELT files are not always at hand).

Shape of the 500-entity GDELT of Goel et al. (2020): 500 entities, 20 relations, 366 daily
timestamps 2015-04-01 .. 2016-03-31, every day populated, millions of events, heavy-tailed entity
and relation popularity, many recurring (head, relation, tail) triples. Facts are drawn as:
a pool of distinct triples with Zipf-like head/tail/relation popularity, then each event picks a pool
triple (Zipf-like again, so some triples recur daily) and a uniform day. Split 80/10/10 at random
into train/valid/test like the original (2,735,685 / 341,961 / 341,961 lines).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..paths import atomic_dir

GDELT_SHAPE = {"entities": 500, "relations": 20, "days": 366, "start": "2015-04-01", "facts": 3_419_607}


def _zipf(n: int, s: float) -> np.ndarray:
    w = 1.0 / np.arange(1, n + 1, dtype=np.float64) ** s
    return w / w.sum()


def _draw(n_facts: int, seed: int, num_entities: int, num_relations: int, days: int, start: str):
    """Integer codes (head, relation, tail, day) of the events and the name vocabularies."""
    if n_facts < 1 or num_entities < 2 or num_relations < 1 or days < 1:
        raise ValueError("n_facts, num_relations, days >= 1 and num_entities >= 2 are required")
    rng = np.random.default_rng(seed)
    n_pool = max(1, n_facts // 8)
    ent_p = _zipf(num_entities, 0.5)[rng.permutation(num_entities)]
    h = rng.choice(num_entities, size=n_pool, p=ent_p)
    t = rng.choice(num_entities, size=n_pool, p=ent_p)
    t = np.where(t == h, (t + 1 + rng.integers(0, num_entities - 1, size=n_pool)) % num_entities, t)
    r = rng.choice(num_relations, size=n_pool, p=_zipf(num_relations, 1.1))
    pick = rng.choice(n_pool, size=n_facts, p=_zipf(n_pool, 0.6)[rng.permutation(n_pool)])
    day = rng.integers(0, days, size=n_facts)
    if n_facts >= days:
        day[:days] = np.arange(days)  # every day populated
    vocab = {"entities": np.array([f"ACTOR_{i:03d}" for i in range(num_entities)], dtype=object),
             "relations": np.array([f"EVENT_{i:02d}" for i in range(num_relations)], dtype=object),
             "days": np.datetime_as_string(np.datetime64(start, "D") + np.arange(days).astype("timedelta64[D]"), unit="D")}
    return (h[pick], r[pick], t[pick], day), vocab


def synthetic_gdelt(n_facts: int, seed: int = 0, num_entities: int = 500, num_relations: int = 20,
                    days: int = 366, start: str = "2015-04-01") -> dict[str, np.ndarray]:
    """Columns ``head relation tail`` (names) and ``time`` (ISO dates) of ``n_facts`` events.

    Every day gets at least one event when ``n_facts >= days``. Same arguments -> same arrays.
    """
    (h, r, t, day), v = _draw(n_facts, seed, num_entities, num_relations, days, start)
    return {"head": v["entities"][h], "relation": v["relations"][r], "tail": v["entities"][t], "time": v["days"][day]}


def write_synthetic_gdelt(data_dir: str | Path, n_facts: int = 60_000, seed: int = 0, name: str = "GDELT",
                          num_entities: int = 500, num_relations: int = 20, days: int = 366,
                          start: str = "2015-04-01") -> Path:
    """Write ``<data_dir>/<name>/{train,valid,test}.txt`` (80/10/10, tab-separated) and return the folder.

    The folder can be read by ``load_source("GDELT", data_dir=data_dir)`` like the real files.
    """
    from .build import format_lines

    (h, r, t, day), v = _draw(n_facts, seed, num_entities, num_relations, days, start)
    split = np.random.default_rng([seed, 1]).choice(3, size=n_facts, p=[0.8, 0.1, 0.1])
    target = Path(data_dir) / name
    with atomic_dir(target) as tmp:
        for i, part in enumerate(("train", "valid", "test")):
            m = split == i
            data = format_lines((h[m], v["entities"]), (r[m], v["relations"]), (t[m], v["entities"]), (day[m], v["days"]))
            (tmp / f"{part}.txt").write_bytes(data)
    return target
