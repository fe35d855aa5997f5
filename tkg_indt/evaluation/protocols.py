"""The evaluation protocols of the paper as :class:`Task` objects, and the harness that runs a model.

A model is anything with ``score(task, queries) -> (B, N)`` scores, where ``queries`` is an int64
``(B, 3)`` array of ``(s, r, τ)`` (``r >= R`` = inverse relation) and ``N = task.num_entities``.
The harness asks every distinct ``(s, r, τ)`` once, in batches sorted by ``(τ, r, s)`` (so a model
that keeps per-time state can move forward in time), and ranks all targets of each query.
"""
from __future__ import annotations

import dataclasses
import time as _time

import numpy as np

from ..data.tkg import TKG
from ..errors import ParameterError
from .evaluator import Evaluator, metrics_from_counts
from .filtering import with_inverses

PROTOCOLS = ("transductive", "inductive", "single-step")


@dataclasses.dataclass
class Task:
    """One evaluation: the graph a model may use, the queries, and what filtering knows.

    graph: a TKG whose ids the model sees. context: splits forming the message graph.
    queries: split whose facts are asked (both directions). filter: splits whose facts are known.
    forecasting: a query at τ may only use facts strictly before τ from ``history`` splits
    (single-step: earlier ground truth of the query split included); otherwise the whole context.
    """

    name: str
    protocol: str
    graph: TKG
    context: tuple[str, ...]
    queries: str = "test"
    filter: tuple[str, ...] = ()
    forecasting: bool = False
    history: tuple[str, ...] = ()
    train: tuple[str, ...] = ()  # splits a model may fit or select parameters on
    valid: str | None = None

    @property
    def num_entities(self) -> int:
        return self.graph.num_entities

    @property
    def num_relations(self) -> int:
        return self.graph.num_relations

    def context_facts(self) -> np.ndarray:
        return self.graph.facts(*self.context)

    def query_facts(self) -> np.ndarray:
        return self.graph[self.queries]

    def with_queries(self, split: str) -> "Task":
        return dataclasses.replace(self, queries=split)


def transductive(tkg: TKG, split: str = "test") -> Task:
    """Interpolation on a transductive dataset: message graph = train, filter over all splits."""
    return Task(f"{tkg.name}/transductive", "transductive", tkg, ("train",), split,
                ("train", "valid", "test"), train=("train",), valid="valid")


def inductive(variant: TKG, split: str = "test") -> Task:
    """Inductive transfer: the inference graph (msg + test, its own ids) only; message graph = msg."""
    inf = variant.subgraph(["msg", "test"], name=f"{variant.name}[inference]")
    return Task(f"{variant.name}/inductive", "inductive", inf, ("msg",), split, ("msg", "test"))


def single_step(tkg: TKG, split: str = "test") -> Task:
    """Single-step forecasting: history = every fact strictly before τ (earlier test truth included)."""
    return Task(f"{tkg.name}/single-step", "single-step", tkg, ("train", "valid", "test"), split,
                ("train", "valid", "test"), forecasting=True, history=("train", "valid", "test"),
                train=("train",), valid="valid")


def make_task(tkg: TKG, protocol: str, split: str = "test") -> Task:
    builders = {"transductive": transductive, "inductive": inductive, "single-step": single_step}
    if protocol not in builders:
        raise ValueError(f"unknown protocol {protocol!r}; known: {', '.join(PROTOCOLS)}")
    return builders[protocol](tkg, split)


@dataclasses.dataclass
class EvalResult:
    task: str
    metrics: dict
    queries: np.ndarray  # (2n, 4) s, r, o, τ in both directions
    greater: np.ndarray
    equal: np.ndarray
    seconds: float
    ties: str

    def metrics_for(self, ties: str) -> dict:
        return metrics_from_counts(self.greater, self.equal, ties)

    def per_relation(self, num_relations: int, ties: str | None = None) -> dict[int, dict]:
        """Metrics per relation id (inverse ids ``>= R`` separate)."""
        out = {}
        rel = self.queries[:, 1]
        for r in np.unique(rel):
            m = rel == r
            out[int(r)] = metrics_from_counts(self.greater[m], self.equal[m], ties or self.ties)
        return out


def all_queries(facts: np.ndarray, num_relations: int) -> np.ndarray:
    """Tail and head queries of some facts as ``(s, r, o, τ)`` rows, head ones via inverses."""
    return with_inverses(facts, num_relations)


SUBSET_SEED = 20240917


def sample_facts(facts: np.ndarray, n: int | None, seed: int = SUBSET_SEED) -> np.ndarray:
    """``n`` of ``facts`` drawn without replacement by a seeded generator, kept in their order (all of
    them when ``n`` is None, 0 or at least their number): the same facts for every model."""
    if not n or n >= len(facts):
        return facts
    if n < 0:
        raise ParameterError(f"a subset of {n} facts: give a positive number (0 = all facts)")
    return facts[np.sort(np.random.default_rng(seed).choice(len(facts), n, replace=False))]


def evaluate(model, task: Task, ties: str = "average", filter: str = "time-aware", batch_size: int = 64,
             progress: bool = False, queries: np.ndarray | None = None) -> EvalResult:
    """Rank every tail and head query of ``task`` with ``model``; distinct (s, r, τ) scored once."""
    start = _time.perf_counter()
    q = all_queries(task.query_facts(), task.num_relations) if queries is None else queries
    ev = Evaluator(task.graph.facts(*task.filter) if filter != "raw" else None, task.num_entities,
                   task.num_relations, filter=filter, ties=ties)
    keys = q[:, [3, 1, 0]]  # sort by time, then relation, then subject
    uniq, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(len(uniq) + 1))
    greater = np.zeros(len(q), np.int64)
    equal = np.zeros(len(q), np.int64)
    if hasattr(model, "prepare"):
        model.prepare(task)
    batches = range(0, len(uniq), batch_size)
    if progress:
        from tqdm.auto import tqdm

        batches = tqdm(batches, desc=task.name, unit="batch")
    for lo in batches:
        hi = min(lo + batch_size, len(uniq))
        uq = uniq[lo:hi][:, [2, 1, 0]]  # back to (s, r, τ)
        scores = model.score(task, uq)
        rows = order[bounds[lo]:bounds[hi]]
        local = inverse[rows] - lo
        g, e = ev.counts(_take_rows(scores, local), q[rows])
        greater[rows], equal[rows] = g, e
    return EvalResult(task.name, metrics_from_counts(greater, equal, ties), q, greater, equal,
                      _time.perf_counter() - start, ties)


def _take_rows(scores, rows):
    import torch

    if isinstance(scores, torch.Tensor):
        return scores.detach().to("cpu")[torch.as_tensor(rows)]
    return np.asarray(scores)[rows]
