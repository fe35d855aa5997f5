"""Tiny synthetic temporal KGs (folders of split files) for tests and quick smoke runs.

Facts follow a learnable rule, ``tail = (head * (relation + 2) + time) mod N``, on random heads,
relations and times; duplicates are dropped and the rest split 80 / 10 / 10 into
``train.txt valid.txt test.txt`` (tab-separated names ``e<i>``, ``r<j>`` and integer times).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np


def write_source(folder, seed: int = 0, num_entities: int = 30, num_relations: int = 3, num_times: int = 6,
                 num_facts: int = 240, msg: bool = False) -> Path:
    """Write one synthetic source into ``folder``; ``msg=True`` also writes msg.txt (a variant layout)."""
    rng = np.random.default_rng(seed)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    h = rng.integers(0, num_entities, num_facts)
    r = rng.integers(0, num_relations, num_facts)
    t = rng.integers(0, num_times, num_facts)
    facts = np.unique(np.stack([h, r, (h * (r + 2) + t) % num_entities, t], 1), axis=0)
    facts = facts[rng.permutation(len(facts))]
    n = len(facts)
    cuts = [0, int(0.8 * n), int(0.9 * n), n]
    names = ["train", "valid", "test"]
    if msg:
        cuts, names = [0, int(0.6 * n), int(0.7 * n), int(0.9 * n), n], ["train", "valid", "msg", "test"]
    for name, lo, hi in zip(names, cuts[:-1], cuts[1:]):
        (folder / f"{name}.txt").write_text("".join(f"e{a}\tr{b}\te{c}\t{d}\n" for a, b, c, d in facts[lo:hi]))
    return folder


def tiny_recipe(sources, **changes) -> dict:
    """A recipe mapping for a seconds-long run on :func:`write_source` folders (d = 8, 2 + 2 layers)."""
    recipe = {
        "name": "tiny", "scale": "test",
        "model": {"model": "ultra", "dim": 8, "aggregate": "sum", "message": "grate", "relation_layers": 2,
                  "entity_layers": [2]},
        "data": {"sources": [str(s) for s in sources]},
        "train": {"seed": 0, "batch_size": 4, "num_negatives": 8, "epochs": 2, "steps_per_epoch": 10,
                  "num_threads": 1},
        "validation": {"every": 10, "subset": 8, "final": "full", "batch_size": 16},
        "checkpoint": {"every": 5},
        "log_every": 2,
    }
    for key, value in changes.items():
        if isinstance(value, dict) and isinstance(recipe.get(key), dict):
            recipe[key] = {**recipe[key], **value}
        else:
            recipe[key] = value
    return recipe
