"""Model configuration: one plain dataclass that round-trips through JSON.

``ModelConfig`` names the base model (``ultra`` or ``trix``), the hidden size ``dim``, the
aggregation of every convolution (``sum`` or ``pna``), the entity-side message function and the
layer counts. The layer counts default to the published architectures:

* ULTRA: 6 relation-graph layers, one entity network of 6 layers -> ``entity_layers = (6,)``.
* TRIX: 3 relation layers (each = 4 role convolutions), entity net 1 with 2 layers (runs after
  relation layer 1) and entity net 2 with 4 layers (scores) -> ``entity_layers = (2, 4)``.

JSON form (``to_json``)::

    {"model": "trix", "dim": 32, "aggregate": "sum", "message": "grate",
     "relation_layers": 3, "entity_layers": [2, 4]}
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

from tkg_indt.errors import ParameterError

MODELS = ("ultra", "trix")
AGGREGATES = ("sum", "pna")
MESSAGES = ("distmult", "sincos", "rotation", "rotation+relgate", "grate")
DEFAULT_LAYERS = {"ultra": (6, (6,)), "trix": (3, (2, 4))}


@dataclasses.dataclass(frozen=True)
class ModelConfig:
    """Architecture of a GRATE model (all fields are JSON scalars or lists)."""

    model: str = "ultra"
    dim: int = 64
    aggregate: str = "sum"
    message: str = "grate"
    relation_layers: int | None = None  # None: the base model's default (ULTRA 6, TRIX 3)
    entity_layers: tuple[int, ...] | None = None  # None: ULTRA (6,), TRIX (2, 4)

    def __post_init__(self):
        def bad(field, value, fix):
            raise ParameterError(f"ModelConfig.{field}={value!r} is invalid. Fix: {fix}")

        if self.model not in MODELS:
            bad("model", self.model, f"use one of {', '.join(MODELS)}")
        if self.aggregate not in AGGREGATES:
            bad("aggregate", self.aggregate, f"use one of {', '.join(AGGREGATES)}")
        if self.message not in MESSAGES:
            bad("message", self.message, f"use one of {', '.join(MESSAGES)}")
        if isinstance(self.dim, bool) or not isinstance(self.dim, int) or self.dim < 2 or self.dim % 2:
            bad("dim", self.dim, "use a positive even integer (rotation acts on pairs of channels)")
        rel, ent = DEFAULT_LAYERS[self.model]
        if self.relation_layers is None:
            object.__setattr__(self, "relation_layers", rel)
        if self.entity_layers is None:
            object.__setattr__(self, "entity_layers", ent)
        layers = self.entity_layers
        if isinstance(layers, int) and not isinstance(layers, bool):
            layers = (layers,)
        try:
            layers = tuple(int(n) for n in layers)
        except TypeError:
            bad("entity_layers", self.entity_layers, "give a list of positive layer counts")
        object.__setattr__(self, "entity_layers", layers)
        if not isinstance(self.relation_layers, int) or self.relation_layers < 1:
            bad("relation_layers", self.relation_layers, "use a positive integer")
        if any(n < 1 for n in layers):
            bad("entity_layers", layers, "every entity network needs at least one layer")
        if self.model == "ultra" and len(layers) != 1:
            bad("entity_layers", layers, "ULTRA has one entity network, e.g. [6]")
        if self.model == "trix" and len(layers) != 2:
            bad("entity_layers", layers, "TRIX has two entity networks, e.g. [2, 4]")

    # ------------------------------------------------------------------ serialisation
    def to_dict(self) -> dict:
        out = dataclasses.asdict(self)
        out["entity_layers"] = list(self.entity_layers)
        return out

    def to_json(self, path: str | Path | None = None) -> str:
        """The config as JSON text; also written to ``path`` (atomically) when given."""
        text = json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n"
        if path is not None:
            from tkg_indt.paths import atomic_file

            with atomic_file(Path(path)) as handle:
                handle.write(text)
        return text

    @classmethod
    def from_dict(cls, data: dict) -> "ModelConfig":
        if not isinstance(data, dict):
            raise ParameterError(f"a model config must be a JSON object, got {type(data).__name__}")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ParameterError(f"unknown model config key(s) {', '.join(unknown)}. "
                                 f"Fix: use only {', '.join(sorted(known))}")
        return cls(**data)

    @classmethod
    def from_json(cls, source: str | Path) -> "ModelConfig":
        """Parse JSON text, or read a ``.json`` file when ``source`` is a path to one."""
        text = str(source)
        where = "model config"
        if not text.lstrip().startswith("{"):
            path = Path(text)
            if not path.is_file():
                raise ParameterError(f"model config {path} does not exist. Fix: give a JSON file or JSON text")
            text, where = path.read_text(), str(path)
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ParameterError(f"{where}: invalid JSON ({exc}). Fix: write a JSON object") from None
        return cls.from_dict(data)

    def replace(self, **changes) -> "ModelConfig":
        return dataclasses.replace(self, **changes)

    @property
    def num_entity_layers(self) -> int:
        return sum(self.entity_layers)
