"""Training recipes: one YAML file per run, parsed into a checked :class:`Recipe`.

Format (every key optional except ``model``; defaults are the ULTRA/TRIX pretraining recipe)::

    name: grate-trix                  # release name the run produces
    scale: paper                      # free text: paper | cpu | test
    model: {model: trix, dim: 32, aggregate: sum, message: grate}   # grate.ModelConfig
    data:
      sources: [ICEWS14, ICEWS05-15]  # registered source names or folders of split files
      time_gap: 1                     # empty time ids between consecutive sources' ranges
    train:
      seed: 0
      batch_size: 2                   # facts per step and per process
      num_negatives: 512              # strict, time-aware; half of the rows corrupt heads
      adversarial_temperature: 1.0    # self-adversarial weights softmax(score / T); 0 = uniform
      lr: 5.0e-4
      weight_decay: 0.01              # AdamW's default
      epochs: 10
      steps_per_epoch: 80000
      num_threads: 0                  # torch CPU threads; 0 = leave torch's default
    validation:
      every: 0                        # steps between subset validations (0 = once per epoch)
      subset: 500                     # validation facts per source (seeded), both directions
      final: full                     # full | subset | none: validation of the best weights at the end
      batch_size: 64                  # distinct queries per scoring call
    checkpoint:
      every: 1000                     # steps between resumable training states
    log_every: 10                     # steps between metric lines
    notes: ""                         # free text copied into the run summary (reductions etc.)

Unknown keys and bad values raise :class:`tkg_indt.errors.ParameterError` naming the file and key.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import yaml

from tkg_indt.errors import ParameterError

from ..config import ModelConfig


@dataclasses.dataclass(frozen=True)
class Data:
    sources: tuple[str, ...] = ("ICEWS14", "ICEWS05-15")
    time_gap: int = 1


@dataclasses.dataclass(frozen=True)
class Train:
    seed: int = 0
    batch_size: int = 8
    num_negatives: int = 512
    adversarial_temperature: float = 1.0
    lr: float = 5.0e-4
    weight_decay: float = 0.01
    epochs: int = 10
    steps_per_epoch: int = 80000
    num_threads: int = 0


@dataclasses.dataclass(frozen=True)
class Validation:
    every: int = 0
    subset: int = 500
    final: str = "full"
    batch_size: int = 64


@dataclasses.dataclass(frozen=True)
class Checkpoint:
    every: int = 1000


SECTIONS = {"data": Data, "train": Train, "validation": Validation, "checkpoint": Checkpoint}


@dataclasses.dataclass(frozen=True)
class Recipe:
    model: ModelConfig
    name: str = "run"
    scale: str = "paper"
    data: Data = Data()
    train: Train = Train()
    validation: Validation = Validation()
    checkpoint: Checkpoint = Checkpoint()
    log_every: int = 10
    notes: str = ""

    @property
    def total_steps(self) -> int:
        return self.train.epochs * self.train.steps_per_epoch

    @property
    def validate_every(self) -> int:
        return self.validation.every or self.train.steps_per_epoch

    def to_dict(self) -> dict:
        out = dataclasses.asdict(self)
        out["model"] = self.model.to_dict()
        out["data"]["sources"] = list(self.data.sources)
        return out

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.to_dict(), sort_keys=False)

    def replace(self, **changes) -> "Recipe":
        """A checked copy with fields changed: ``replace(train={"seed": 1}, model={"dim": 8}, log_every=1)``."""
        data = self.to_dict()
        for key, value in changes.items():
            if (key in SECTIONS or key == "model") and isinstance(value, dict):
                data[key].update(value)
            else:
                data[key] = value
        return parse(data)


def _bad(where: str, key: str, value, fix: str):
    raise ParameterError(f"{where}: {key}={value!r} is invalid. Fix: {fix}")


def _section(cls, data, where: str, prefix: str):
    if data is None:
        return cls()
    if not isinstance(data, dict):
        _bad(where, prefix, data, "write a mapping of keys")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ParameterError(f"{where}: unknown key(s) {', '.join(prefix + '.' + k for k in unknown)}. "
                             f"Fix: use only {', '.join(prefix + '.' + k for k in fields)}")
    values = {}
    for key, value in data.items():
        default = fields[key].default
        if isinstance(default, tuple):
            if isinstance(value, str):
                value = [value]
            if not isinstance(value, (list, tuple)) or not value or not all(isinstance(v, str) for v in value):
                _bad(where, f"{prefix}.{key}", value, "give a non-empty list of names")
            value = tuple(value)
        elif isinstance(default, bool) or isinstance(default, str):
            if not isinstance(value, type(default)):
                _bad(where, f"{prefix}.{key}", value, f"give a {type(default).__name__}")
        elif isinstance(default, int):
            if isinstance(value, bool) or not isinstance(value, int):
                _bad(where, f"{prefix}.{key}", value, "give an integer")
        elif isinstance(default, float):
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                _bad(where, f"{prefix}.{key}", value, "give a number")
            value = float(value)
        values[key] = value
    return cls(**values)


def parse(data: dict, where: str = "recipe") -> Recipe:
    """A :class:`Recipe` from a parsed YAML mapping; every value is checked."""
    if not isinstance(data, dict):
        raise ParameterError(f"{where}: a recipe is a YAML mapping. Fix: see grate/train/recipe.py for the format")
    known = {f.name for f in dataclasses.fields(Recipe)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise ParameterError(f"{where}: unknown key(s) {', '.join(unknown)}. Fix: use only {', '.join(sorted(known))}")
    if "model" not in data:
        raise ParameterError(f"{where}: no 'model' section. Fix: add e.g. model: {{model: trix, dim: 32, message: grate}}")
    try:
        model = data["model"] if isinstance(data["model"], ModelConfig) else ModelConfig.from_dict(data["model"])
    except ParameterError as exc:
        raise ParameterError(f"{where}: model: {exc}") from None
    sections = {k: _section(cls, data.get(k), where, k) for k, cls in SECTIONS.items()}
    top = {}
    for key, kind in (("name", str), ("scale", str), ("notes", str), ("log_every", int)):
        if key in data:
            value = data[key]
            if value is None and kind is str:
                value = ""
            if not isinstance(value, kind) or isinstance(value, bool):
                _bad(where, key, value, f"give a {kind.__name__}")
            top[key] = value
    recipe = Recipe(model=model, **sections, **top)
    t, v = recipe.train, recipe.validation
    checks = [
        ("train.batch_size", t.batch_size, t.batch_size >= 1, "use at least 1"),
        ("train.num_negatives", t.num_negatives, t.num_negatives >= 1, "use at least 1"),
        ("train.adversarial_temperature", t.adversarial_temperature, t.adversarial_temperature >= 0, "use >= 0"),
        ("train.lr", t.lr, t.lr > 0, "use a positive learning rate"),
        ("train.weight_decay", t.weight_decay, t.weight_decay >= 0, "use >= 0"),
        ("train.epochs", t.epochs, t.epochs >= 1, "use at least 1"),
        ("train.steps_per_epoch", t.steps_per_epoch, t.steps_per_epoch >= 1, "use at least 1"),
        ("train.num_threads", t.num_threads, t.num_threads >= 0, "use 0 (default) or a thread count"),
        ("validation.every", v.every, v.every >= 0, "use 0 (once per epoch) or a step count"),
        ("validation.subset", v.subset, v.subset >= 1, "use at least 1 fact per source"),
        ("validation.final", v.final, v.final in ("full", "subset", "none"), "use full, subset or none"),
        ("validation.batch_size", v.batch_size, v.batch_size >= 1, "use at least 1"),
        ("checkpoint.every", recipe.checkpoint.every, recipe.checkpoint.every >= 1, "use at least 1"),
        ("data.time_gap", recipe.data.time_gap, recipe.data.time_gap >= 0, "use >= 0"),
        ("log_every", recipe.log_every, recipe.log_every >= 1, "use at least 1"),
    ]
    for key, value, ok, fix in checks:
        if not ok:
            _bad(where, key, value, fix)
    return recipe


def load_recipe(path: str | Path) -> Recipe:
    """Read and check a recipe YAML file."""
    path = Path(path)
    if not path.is_file():
        known = sorted(p.name for p in Path("recipes/train").glob("*.yaml")) if Path("recipes/train").is_dir() else []
        hint = f" (recipes/train has: {', '.join(known)})" if known else ""
        raise ParameterError(f"recipe {path} does not exist{hint}. Fix: pass --recipe recipes/train/<name>.yaml")
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ParameterError(f"{path}: invalid YAML ({exc}). Fix: correct the syntax") from None
    return parse(data, str(path))
