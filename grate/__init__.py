"""GRATE: gated rotary attention for temporal knowledge graph foundation models (ULTRA, TRIX).

    from grate import ModelConfig, build_model, load_model, TemporalGraph, Scorer
    model = load_model("grate-trix")                   # a released checkpoint (releases/), or a folder
    model = build_model(ModelConfig(model="trix", dim=32, aggregate="sum", message="grate"))
    graph = TemporalGraph(facts, num_entities, num_relations, forecasting=False)
    logits = model.score_all(graph, queries)           # (B, N) for (B, 3) rows (s, r, tau)
    tkg_indt.evaluation.evaluate(Scorer(model), task)   # the evaluation harness
"""
from __future__ import annotations

from .config import AGGREGATES, MESSAGES, MODELS, ModelConfig
from .graph import Snapshot, TemporalGraph
from .params import count_parameters, parameter_table
from .scoring import Scorer, TemporalModel, chunk_size, estimate_bytes
from .zoo import load_model

__version__ = "0.1.0"


def build_model(config: ModelConfig | dict | str):
    """A freshly initialised model for ``config`` (a :class:`ModelConfig`, its dict or JSON)."""
    if isinstance(config, dict):
        config = ModelConfig.from_dict(config)
    elif isinstance(config, str):
        config = ModelConfig.from_json(config)
    if config.model == "ultra":
        from .ultra import Ultra

        return Ultra(config)
    from .trix import Trix

    return Trix(config)


__all__ = ["ModelConfig", "MODELS", "MESSAGES", "AGGREGATES", "build_model", "count_parameters",
           "parameter_table", "load_model", "TemporalGraph", "Snapshot", "TemporalModel", "Scorer", "estimate_bytes",
           "chunk_size"]
