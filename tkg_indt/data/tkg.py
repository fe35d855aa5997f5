"""The one compact TKG representation used everywhere in the toolkit.

A :class:`TKG` holds, per split, an ``(n, 4)`` int64 array of facts in column order
``head, relation, tail, time`` (ids into the vocabularies, time as an integer index, see
:mod:`tkg_indt.data.timeenc`), the entity and relation names, and the time encoding. Duplicate
facts are kept as separate events (counted by :meth:`TKG.num_duplicates`). Inverse relations are not
stored: relation ``r + R`` is the inverse of ``r`` wherever a model or the evaluator needs one.
"""
from __future__ import annotations

import dataclasses
from typing import Iterable, Mapping

import numpy as np

from .timeenc import TimeEncoding

HEAD, REL, TAIL, TIME = 0, 1, 2, 3
COLUMNS = ("head", "relation", "tail", "time")


def empty_facts() -> np.ndarray:
    return np.zeros((0, 4), dtype=np.int64)


@dataclasses.dataclass
class TKG:
    """A temporal knowledge graph split into named parts (``train``, ``valid``, ``test``, ``msg`` ...)."""

    name: str
    splits: dict[str, np.ndarray]
    entities: np.ndarray  # str names, index = entity id
    relations: np.ndarray  # str names, index = relation id
    time: TimeEncoding
    meta: dict = dataclasses.field(default_factory=dict)

    def __post_init__(self):
        self.entities = np.asarray(self.entities, dtype=object)
        self.relations = np.asarray(self.relations, dtype=object)
        for key, facts in self.splits.items():
            facts = np.ascontiguousarray(facts, dtype=np.int64).reshape(-1, 4)
            self.splits[key] = facts

    # ------------------------------------------------------------------ sizes
    @property
    def num_entities(self) -> int:
        return len(self.entities)

    @property
    def num_relations(self) -> int:
        """Number of original relations R (inverse ids are R .. 2R-1)."""
        return len(self.relations)

    def __getitem__(self, split: str) -> np.ndarray:
        return self.splits[split]

    def facts(self, *names: str) -> np.ndarray:
        """Facts of several splits concatenated in the given order (all splits if none given)."""
        names = names or tuple(self.splits)
        parts = [self.splits[n] for n in names]
        return np.concatenate(parts) if parts else empty_facts()

    @property
    def num_timestamps(self) -> int:
        return len(np.unique(self.facts()[:, TIME]))

    def num_duplicates(self, split: str) -> int:
        """Facts that repeat an earlier identical quadruple of the same split."""
        facts = self.splits[split]
        return int(len(facts) - len(np.unique(facts, axis=0))) if len(facts) else 0

    # ------------------------------------------------------------------ views
    def subgraph(self, names: Iterable[str], name: str | None = None) -> "TKG":
        """The splits ``names`` alone, entities and relations re-indexed to those they use.

        Ids keep their relative order, so the result is deterministic. This is how the inference
        graph (msg + test) of an inductive variant becomes a graph of its own.
        """
        names = list(names)
        allf = self.facts(*names)
        ents = np.unique(np.concatenate([allf[:, HEAD], allf[:, TAIL]]))
        rels = np.unique(allf[:, REL])
        emap = np.full(self.num_entities, -1, dtype=np.int64)
        emap[ents] = np.arange(len(ents))
        rmap = np.full(self.num_relations, -1, dtype=np.int64)
        rmap[rels] = np.arange(len(rels))
        splits = {}
        for n in names:
            f = self.splits[n].copy()
            f[:, HEAD], f[:, TAIL], f[:, REL] = emap[f[:, HEAD]], emap[f[:, TAIL]], rmap[f[:, REL]]
            splits[n] = f
        return TKG(name or f"{self.name}[{'+'.join(names)}]", splits, self.entities[ents],
                   self.relations[rels], self.time, dict(self.meta))

    def with_time_offset(self, offset: int) -> "TKG":
        """All time indices shifted by ``offset`` (used to give joint-training sources disjoint ranges)."""
        splits = {k: v.copy() for k, v in self.splits.items()}
        for f in splits.values():
            f[:, TIME] += offset
        return TKG(self.name, splits, self.entities, self.relations,
                   self.time.with_first(self.time.first - offset), dict(self.meta))

    # ------------------------------------------------------------------ tables
    def to_frame(self, split: str, names: bool = True):
        """One split as a pandas DataFrame (names and raw times, or ids and indices)."""
        import pandas as pd

        f = self.splits[split]
        if not names:
            return pd.DataFrame(f, columns=list(COLUMNS))
        return pd.DataFrame({
            "head": self.entities[f[:, HEAD]], "relation": self.relations[f[:, REL]],
            "tail": self.entities[f[:, TAIL]], "time": self.time.raw(f[:, TIME]),
        })

    def summary(self) -> Mapping[str, int]:
        return {k: len(v) for k, v in self.splits.items()}

    def __repr__(self) -> str:
        parts = ", ".join(f"{k}={len(v):,}" for k, v in self.splits.items())
        return (f"TKG({self.name!r}, entities={self.num_entities:,}, relations={self.num_relations}, "
                f"time={self.time.granularity}, {parts})")
