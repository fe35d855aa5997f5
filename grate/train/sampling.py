"""Training data for joint pretraining: sources on disjoint time ranges, batches, strict negatives.

* :func:`load_sources` reads each source (a registered name, e.g. ``ICEWS14``, or a folder of
  split files), shifts its time ids so the sources occupy disjoint integer ranges
  (``TKG.with_time_offset``; ``time_gap`` empty ids between ranges), and builds its message graph
  (the training facts with inverses, :class:`grate.graph.TemporalGraph`, interpolation).
* :class:`BatchSampler` draws one step's batch: ONE graph with probability proportional to its
  number of edges (inverses included), then ``B`` training facts of that graph uniformly with
  replacement; the first half of the rows asks for tails ``(s, r, ?, t)``, the rest for heads
  through the inverse relation ``(o, r + R, ?, t)`` (for odd ``B`` the middle row's side is a coin
  flip). Each row gets ``K`` strict, time-aware negatives: entities drawn uniformly (with
  replacement) among those that are NOT a true answer of the row's query at the same time in the
  training facts.
* Randomness is counter-based: step ``i`` of process ``rank`` draws from
  ``np.random.default_rng([seed, rank, i])``, so a resumed run reproduces the same batches from the
  step number alone and data-parallel processes draw different batches.

Batch format (:class:`Batch`): ``source`` (index), ``facts`` ``(B, 4)`` int64 rows ``(s, r, o, t)``
in query orientation (``r`` in ``[0, 2R)``), ``queries`` ``(B, 3)`` ``(s, r, t)``, ``candidates``
``(B, 1 + K)`` with the true answer ``o`` in column 0.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from tkg_indt.data.tkg import TKG
from tkg_indt.errors import MissingDataError, ParameterError, UnknownNameError
from tkg_indt.evaluation.filtering import KnownAnswers, with_inverses

from ..graph import TemporalGraph


@dataclasses.dataclass
class Source:
    """One training graph: its time-shifted TKG, message graph and known training answers."""

    name: str
    tkg: TKG
    offset: int
    graph: TemporalGraph
    answers: KnownAnswers

    @property
    def train(self) -> np.ndarray:
        return self.tkg["train"]

    @property
    def num_edges(self) -> int:
        return self.graph.num_edges


def read_source(name: str, data_dir=None) -> TKG:
    """A registered source by name, else a folder of ``train/valid/test`` files (int or ISO times)."""
    from tkg_indt.data import SOURCES, load_folder, load_source

    if name in SOURCES:
        return load_source(name, data_dir=data_dir)
    folder = Path(name).expanduser()
    if not folder.is_dir():
        raise UnknownNameError("training source (registered name or folder)", name, SOURCES)
    try:
        return load_folder(folder, time_format="int", splits=("train", "valid", "test"))
    except Exception as exc:  # noqa: BLE001 - retry once with calendar dates
        if "time" not in str(exc):
            raise
        return load_folder(folder, time_format="iso-date", splits=("train", "valid", "test"))


def load_sources(names, data_dir=None, time_gap: int = 1, device="cpu") -> list[Source]:
    """Read the sources and place their time ids on disjoint ranges, in the given order."""
    out, next_free = [], 0
    for name in names:
        tkg = read_source(name, data_dir)
        if "train" not in tkg.splits or not len(tkg["train"]):
            raise MissingDataError(f"source {name} has no training facts. Fix: give a source with a train split")
        times = tkg.facts()[:, 3]
        lo, hi = int(times.min()), int(times.max())
        offset = next_free - lo
        shifted = tkg.with_time_offset(offset)
        next_free = hi + offset + 1 + int(time_gap)
        graph = TemporalGraph.from_tkg(shifted, ("train",), device=device)
        answers = KnownAnswers(shifted["train"], shifted.num_entities, shifted.num_relations, "time-aware")
        out.append(Source(tkg.name, shifted, offset, graph, answers))
    return out


@dataclasses.dataclass
class Batch:
    source: int
    facts: np.ndarray
    queries: np.ndarray
    candidates: np.ndarray


def orient(facts: np.ndarray, heads: np.ndarray, num_relations: int) -> np.ndarray:
    """Rows with ``heads`` True become inverse facts ``(o, r + R, s, t)`` (head prediction as tail)."""
    out = facts.copy()
    inv = facts[heads][:, [2, 1, 0, 3]]
    inv[:, 1] += num_relations
    out[heads] = inv
    return out


def strict_negatives(answers: KnownAnswers, queries: np.ndarray, num_negatives: int, num_entities: int,
                     rng: np.random.Generator) -> np.ndarray:
    """``(B, K)`` entities, uniform with replacement among the non-answers of each ``(s, r, t)`` query."""
    B = len(queries)
    allowed = np.ones((B, num_entities), dtype=bool)
    rows, objects = answers.lookup(queries)
    allowed[rows, objects] = False
    count = allowed.sum(1)
    full = count == 0  # every entity is an answer (degenerate tiny graphs): fall back to all entities
    allowed[full] = True
    count[full] = num_entities
    _, cols = np.nonzero(allowed)  # row-major: each row's allowed entities, ascending
    start = np.cumsum(count) - count
    pick = np.floor(rng.random((B, num_negatives)) * count[:, None]).astype(np.int64)
    return cols[start[:, None] + np.minimum(pick, count[:, None] - 1)]


class BatchSampler:
    """One batch per step, from counter-based random streams (see the module docstring)."""

    def __init__(self, sources: list[Source], batch_size: int, num_negatives: int, seed: int, rank: int = 0):
        if not sources:
            raise ParameterError("no training sources. Fix: list at least one under data.sources")
        self.sources, self.batch_size, self.num_negatives = sources, int(batch_size), int(num_negatives)
        self.seed, self.rank = int(seed), int(rank)
        edges = np.array([s.num_edges for s in sources], dtype=np.float64)
        self.weights = edges / edges.sum()

    def rng(self, step: int) -> np.random.Generator:
        return np.random.default_rng([self.seed, self.rank, int(step)])

    def sample(self, step: int) -> Batch:
        rng = self.rng(step)
        g = int(rng.choice(len(self.sources), p=self.weights))
        src = self.sources[g]
        B = self.batch_size
        facts = src.train[rng.integers(0, len(src.train), B)]
        flip = int(rng.integers(0, 2))
        heads = np.arange(B) >= (B + flip) // 2
        facts = orient(facts, heads, src.tkg.num_relations)
        queries = facts[:, [0, 1, 3]]
        negatives = strict_negatives(src.answers, queries, self.num_negatives, src.tkg.num_entities, rng)
        candidates = np.concatenate([facts[:, 2:3], negatives], axis=1)
        return Batch(g, facts, queries, candidates)

    def state_dict(self) -> dict:
        """Everything needed to continue the stream (the step number is stored by the loop)."""
        return {"kind": "counter", "seed": self.seed, "rank": self.rank, "batch_size": self.batch_size,
                "num_negatives": self.num_negatives, "weights": self.weights.tolist(),
                "sources": [s.name for s in self.sources]}

    def check_state(self, state: dict) -> None:
        """Raise if a saved sampler state belongs to a different data stream."""
        mine = self.state_dict()
        for key in ("seed", "batch_size", "num_negatives", "sources"):
            if state.get(key) != mine[key]:
                raise ParameterError(f"the saved training state has sampler {key}={state.get(key)!r} but this recipe "
                                     f"gives {mine[key]!r}. Fix: resume with the recipe the run started with")


def validation_queries(source: Source, subset: int | None, seed: int, index: int) -> np.ndarray:
    """``(2n, 4)`` tail and head queries of ``subset`` validation facts (all when None), seeded and sorted."""
    valid = source.tkg["valid"]
    if subset is not None and subset < len(valid):
        rng = np.random.default_rng([int(seed), 7919, int(index)])
        valid = valid[np.sort(rng.choice(len(valid), int(subset), replace=False))]
    return with_inverses(valid, source.tkg.num_relations)
