"""Parameter counts in closed form, per component (no model is built).

One convolution (update ``Linear(2d, d)`` or ``Linear(13d, d)`` for PNA, plus ``LayerNorm(d)``):
``conv = 2d^2 + 3d`` (sum) or ``13d^2 + 3d`` (PNA). Projection MLP ``Linear(d,d) ReLU Linear(d,d)``:
``2d^2 + 2d``. Scorer ``Linear(2d, 2d) ReLU Linear(2d, 1)``: ``4d^2 + 4d + 1``.

* ULTRA: ``L_rel (conv + 4d)`` (4 edge-type embeddings per layer) + ``L_ent (conv + proj)`` +
  scorer. With L = 6: sum ``40d^2 + 76d + 1``, PNA ``172d^2 + 76d + 1``.
* TRIX: ``4 L_rel (conv + proj)`` (role convolutions with their entity projections) +
  ``(L_1 + L_2)(conv + proj)`` + ``Linear(2d, d)`` (``2d^2 + d``) + 2 scorers. With 3, (2, 4):
  sum ``82d^2 + 99d + 2``, PNA ``280d^2 + 99d + 2``.

The GRATE message and its ablations add no parameter.
"""
from __future__ import annotations

from .config import AGGREGATES, MODELS, ModelConfig


def _conv(d: int, aggregate: str) -> int:
    return (13 if aggregate == "pna" else 2) * d * d + d + 2 * d


def count_parameters(config: ModelConfig) -> int:
    """Number of learnable parameters of ``build_model(config)``, from the closed form."""
    d, agg = config.dim, config.aggregate
    conv, proj, score = _conv(d, agg), 2 * d * d + 2 * d, 4 * d * d + 4 * d + 1
    ent = sum(config.entity_layers) * (conv + proj) + len(config.entity_layers) * score
    if config.model == "ultra":
        return config.relation_layers * (conv + 4 * d) + ent
    return 4 * config.relation_layers * (conv + proj) + ent + 2 * d * d + d


def parameter_table(dims=(32, 64), models=MODELS, aggregates=AGGREGATES, message: str = "grate") -> str:
    """Markdown table of the parameter count of every (model, d, aggregation), default layers."""
    lines = ["| model | d | aggregation | parameters |", "|---|---|---|---|"]
    for model in models:
        for d in dims:
            for agg in aggregates:
                n = count_parameters(ModelConfig(model=model, dim=d, aggregate=agg, message=message))
                lines.append(f"| {model.upper() if model == 'trix' else 'ULTRA'} | {d} | {agg} | {n:,} |")
    return "\n".join(lines)
