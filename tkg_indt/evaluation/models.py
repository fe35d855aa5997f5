"""Model registry (name -> factory) and the runner behind ``tkg-indt eval``.

A factory takes keyword options and returns a model of the harness: ``score(task, queries)`` and
optionally ``prepare(task)``, ``fit(tkg)`` (select or fit on a graph's train + valid splits),
``evaluate(task, ties=..., filter=...)`` (a fast path returning an :class:`EvalResult`) and
``describe() -> dict`` (written to the results JSON). Other packages add models with
:func:`register_model` (at import time) or through the entry-point group ``tkg_indt.models``
(``name = "package.module:factory"``), loaded on the first lookup of an unknown name.

>>> model = make_model("recurrency", params="per-dataset")                  # doctest: +SKIP
>>> reports = run_eval("recurrency", dataset="YAGO", ties="expected")       # doctest: +SKIP
"""
from __future__ import annotations

import dataclasses
import inspect
import json
from typing import Callable

import numpy as np

from ..errors import ParameterError, UnknownNameError
from ..paths import atomic_file
from .evaluator import TIES, metrics_from_counts, ranks_from_counts
from .protocols import (PROTOCOLS, SUBSET_SEED, EvalResult, all_queries, evaluate, inductive, make_task,
                        sample_facts)

ENTRY_POINT_GROUP = "tkg_indt.models"


@dataclasses.dataclass(frozen=True)
class ModelSpec:
    name: str
    factory: Callable
    description: str = ""


_REGISTRY: dict[str, ModelSpec] = {}
_entry_points_loaded = False


def register_model(name: str, factory: Callable | None = None, description: str = "", replace: bool = False):
    """Register ``factory`` under ``name`` (usable as a decorator). Names are case-insensitive."""
    def add(f):
        key = name.lower()
        if key in _REGISTRY and not replace and _REGISTRY[key].factory is not f:
            raise ParameterError(f"model name {name!r} is already registered; pass replace=True to override it")
        _REGISTRY[key] = ModelSpec(name, f, description or (inspect.getdoc(f) or "").split("\n")[0])
        return f

    return add if factory is None else add(factory)


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    _entry_points_loaded = True
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name.lower() not in _REGISTRY:
            try:
                register_model(ep.name, ep.load())
            except Exception as exc:  # a broken plug-in must not hide the others
                register_model(ep.name, _broken(ep.name, exc), f"failed to load: {exc}")


def _broken(name, exc):
    def factory(**_):
        raise ParameterError(f"model {name!r} could not be loaded ({exc}); check the package that provides it")
    return factory


def model_names() -> list[str]:
    _load_entry_points()
    return sorted(spec.name for spec in _REGISTRY.values())


def get_model_spec(name: str) -> ModelSpec:
    key = name.lower()
    if key not in _REGISTRY:
        _load_entry_points()
    if key not in _REGISTRY:
        raise UnknownNameError("model", name, model_names())
    return _REGISTRY[key]


def make_model(name: str, **options):
    """Build a registered model. Options set to None are dropped; others must be accepted by the factory."""
    spec = get_model_spec(name)
    options = {k: v for k, v in options.items() if v is not None}
    params = inspect.signature(spec.factory).parameters
    if not any(p.kind is p.VAR_KEYWORD for p in params.values()):
        unknown = sorted(set(options) - set(params))
        if unknown:
            raise ParameterError(f"model {spec.name!r} takes no option {', '.join(unknown)}; "
                                 f"it takes: {', '.join(params) or 'none'}")
    return spec.factory(**options)


# ------------------------------------------------------------------ built-in models
def _recurrency(variant):
    def factory(params: str = "per-relation", progress: bool = False, selection_ties: str = "expected",
                history: str = "with-test"):
        from ..baselines.recurrency import RecurrencyBaseline

        return RecurrencyBaseline(variant, params=params, selection_ties=selection_ties, progress=progress,
                                  history=history)
    return factory


register_model("recurrency", _recurrency("combined"),
               "recurrency baseline ψξ (Gastinger et al. 2024): 1000 α ψ + 1000 (1 − α) ξ, λ and α selected on valid")
register_model("recurrency-strict", _recurrency("strict"), "recurrency baseline, strict ψ only (λ selected on valid)")
register_model("recurrency-relaxed", _recurrency("relaxed"), "recurrency baseline, relaxed ξ only (no parameter)")


def _learned(name):  # GRATE / ULTRA / TRIX checkpoints (grate.zoo); torch is imported on use only
    def factory(checkpoint: str | None = None, params=None, progress=None):
        from grate.zoo import harness_model

        return harness_model(name, checkpoint=checkpoint, params=params, progress=progress)
    return factory


for _name, _what in (("grate-trix", "TRIX + GRATE"), ("grate-ultra", "ULTRA + GRATE"), ("trix", "TRIX (static)"),
                     ("ultra", "ULTRA (static)")):
    register_model(_name, _learned(_name), f"{_what}, released checkpoint releases/{_name} (grate.zoo)")
register_model("checkpoint", _learned(None), "any checkpoint folder written by `tkg-indt train` (--checkpoint PATH)")


# ------------------------------------------------------------------ running
def run_eval(model: str, dataset: str | None = None, benchmark: str | None = None, protocol: str | None = None,
             ties: str = "average", filter: str = "time-aware", params: str | None = None, data_dir=None,
             progress: bool = False, checkpoint: str | None = None, history: str | None = None,
             subset: int | None = None, seed: int | None = None) -> list[tuple[dict, EvalResult, object]]:
    """Evaluate a registered model on a dataset (``protocol``, default single-step) or on benchmark
    variants (inductive). Returns (report, result, task) per evaluated graph.

    Models with ``fit`` are fitted on the dataset's / variant's own train + valid splits first (for a
    variant: the training graph; the inference graph msg + test is never used for fitting).
    ``subset``: rank only the tail and head queries of that many query facts, drawn with ``seed``
    (:func:`~tkg_indt.evaluation.sample_facts`: the same facts for every model); the report says so.
    """
    get_model_spec(model)  # an unknown name fails before any data is read
    if subset is not None and subset < 0:
        raise ParameterError(f"subset={subset}: give a number of query facts >= 0 (0 = all)")
    seed = SUBSET_SEED if seed is None else seed
    if (dataset is None) == (benchmark is None):
        raise ParameterError("give exactly one of --dataset NAME or --benchmark SUITE[/VARIANT]")
    if ties not in TIES:
        raise ParameterError(f"ties={ties!r} is unknown; choose one of {', '.join(TIES)}")
    if benchmark is not None:
        if protocol not in (None, "inductive"):
            raise ParameterError(f"--benchmark variants are evaluated with the inductive protocol, not {protocol!r}")
        from ..benchmark import load_variants

        graphs, protocol = load_variants(benchmark), "inductive"
    else:
        from ..data.sources import load_source

        protocol = protocol or "single-step"
        if protocol not in PROTOCOLS:
            raise ParameterError(f"protocol={protocol!r} is unknown; choose one of {', '.join(PROTOCOLS)}")
        if protocol == "inductive":
            raise ParameterError("the inductive protocol needs a built variant: use --benchmark SUITE[/VARIANT]")
        graphs = [load_source(dataset, data_dir=data_dir)]
    out = []
    for tkg in graphs:
        m = make_model(model, params=params, progress=progress or None, checkpoint=checkpoint, history=history)
        if hasattr(m, "fit") and "train" in tkg.splits:
            m.fit(tkg)
        task = inductive(tkg) if protocol == "inductive" else make_task(tkg, protocol)
        facts = task.query_facts()
        chosen = sample_facts(facts, subset, seed)
        queries = all_queries(chosen, task.num_relations) if len(chosen) < len(facts) else None
        if hasattr(m, "evaluate"):
            result = m.evaluate(task, ties=ties, filter=filter, queries=queries)
        else:
            result = evaluate(m, task, ties=ties, filter=filter, progress=progress, queries=queries)
        report = {
            "model": model, "data": tkg.name, "protocol": protocol, "filter": filter, "ties": ties,
            "metrics": result.metrics,
            "metrics_by_ties": {t: metrics_from_counts(result.greater, result.equal, t) for t in TIES},
            "queries": int(len(result.queries)), "entities": task.num_entities,
        }  # no timings in the report: the same inputs give byte-identical JSON (times: result.seconds)
        if queries is not None:
            report["subset"] = {"facts": int(len(chosen)), "of": int(len(facts)), "seed": int(seed)}
        if hasattr(m, "describe"):
            report["model_details"] = m.describe()
        out.append((report, result, task))
    return out


def format_reports(reports: list[dict]) -> str:
    """Markdown table of MRR / Hits@k / MR (x100 except MR) under each report's tie policy."""
    lines = ["| data | model | ties | MRR | H@1 | H@3 | H@10 | MR | queries |", "|---|---|---|---|---|---|---|---|---|"]
    for r in reports:
        m = r["metrics"]
        lines.append(f"| {r['data']} | {r['model']} | {r['ties']} | {100 * m['mrr']:.2f} | {100 * m['hits@1']:.2f} | "
                     f"{100 * m['hits@3']:.2f} | {100 * m['hits@10']:.2f} | {m['mr']:.1f} | {m['count']:,}{_subset_note(r)} |")
    return "\n".join(lines)


def _subset_note(report: dict) -> str:
    s = report.get("subset")
    return f" ({s['facts']:,} of {s['of']:,} facts, seed {s['seed']})" if s else ""


def write_json(reports: list[dict], path) -> None:
    with atomic_file(path) as fh:
        json.dump(reports if len(reports) != 1 else reports[0], fh, indent=1, default=_json_default)
        fh.write("\n")


def _json_default(x):
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"cannot write {type(x).__name__} as JSON")


def write_ranks(runs, path, ties: str) -> None:
    """Per-query ranks as CSV: data, subject, relation, object (the target), time, direction, greater,
    equal, rank (under ``ties``; ``expected`` writes the expected rank). Head queries (direction
    ``head``) ask (?, relation, subject) with ``object`` the true head."""
    import pandas as pd

    frames = []
    for report, result, task in runs:
        g = task.graph
        q, R = result.queries, g.num_relations
        head = q[:, 1] >= R
        frames.append(pd.DataFrame({
            "data": report["data"], "subject": g.entities[q[:, 0]], "relation": g.relations[q[:, 1] % R],
            "object": g.entities[q[:, 2]], "time": g.time.raw(q[:, 3]),
            "direction": np.where(head, "head", "tail"), "greater": result.greater, "equal": result.equal,
            "rank": ranks_from_counts(result.greater, result.equal, ties)}))
    with atomic_file(path) as fh:
        pd.concat(frames, ignore_index=True).to_csv(fh, index=False)
