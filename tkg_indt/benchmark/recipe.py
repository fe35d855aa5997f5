"""Build parameters and suite recipes.

A recipe (YAML) names a suite, its source, a recipe seed, the sampling parameters and the variants
(``p_tri`` x ``mode``). The recipes of GDELTIndT and WIKIIndT ship inside the package
(``tkg_indt/benchmark/recipes/*.yaml``, read with :mod:`importlib.resources`, so they are found by an
installed copy too); ``recipes/benchmarks/*.yaml`` in the repository are byte-identical copies for
people to read, and any other YAML file can be passed as a path.

Every variant is its own random draw: its generator seed is derived from the recipe seed and the
variant name (:func:`variant_seed`, a SHA-256, independent of ``PYTHONHASHSEED``).
"""
from __future__ import annotations

import dataclasses
import hashlib
import math
from importlib import resources
from pathlib import Path

import yaml

from ..errors import ParameterError, UnknownNameError

MODES = ("inter", "extra")
_PARAM_KEYS = ("p_r", "p_t", "n_tr", "n_inf", "hop_cap", "hops_tr", "hops_inf", "valid_frac", "test_frac", "inf_gcc")


@dataclasses.dataclass(frozen=True)
class BuildParams:
    """Everything that determines one variant (with the source files)."""

    source: str
    p_tri: float
    mode: str
    p_r: float
    p_t: float
    n_tr: int
    n_inf: int
    hop_cap: int
    hops_tr: int
    hops_inf: int
    seed: int = 0
    valid_frac: float = 0.1
    test_frac: float = 0.2
    inf_gcc: bool = False
    suite: str | None = None

    @property
    def variant(self) -> str:
        """``p25-inter`` ... ``p100-extra`` (percent of p_tri, then the mode)."""
        return variant_name(self.p_tri, self.mode)

    @property
    def variant_seed(self) -> int:
        """Seed of the variant's own draws (entities, X/Y subsample, splits)."""
        return variant_seed(self.seed, self.variant)

    @property
    def relation_seed(self) -> int:
        """Seed of the relation partition, the same for every variant of a recipe seed."""
        return variant_seed(self.seed, "relations")

    def validate(self) -> "BuildParams":
        """Raise :class:`ParameterError` naming the first bad parameter (no data needed)."""
        def bad(name, value, rule):
            raise ParameterError(f"{name}={value!r} is invalid: {rule}")

        if not (isinstance(self.p_tri, (int, float)) and 0.0 < self.p_tri <= 1.0):
            bad("p_tri", self.p_tri, "it must lie in (0, 1] (1 = fully inductive: only unseen relations and times)")
        if self.mode not in MODES:
            bad("mode", self.mode, f"choose one of {', '.join(MODES)}")
        for name in ("p_r", "p_t", "valid_frac", "test_frac"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and 0.0 < v < 1.0):
                bad(name, v, "it must lie strictly between 0 and 1")
        for name in ("n_tr", "n_inf", "hop_cap"):
            v = getattr(self, name)
            if not (isinstance(v, int) and not isinstance(v, bool) and v >= 1):
                bad(name, v, "it must be a positive integer")
        for name in ("hops_tr", "hops_inf"):
            v = getattr(self, name)
            if not (isinstance(v, int) and not isinstance(v, bool) and v >= 0):
                bad(name, v, "it must be a non-negative integer")
        if not isinstance(self.inf_gcc, bool):
            bad("inf_gcc", self.inf_gcc, "it must be true or false")
        if not (isinstance(self.seed, int) and not isinstance(self.seed, bool) and self.seed >= 0):
            bad("seed", self.seed, "it must be a non-negative integer")
        return self

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    def key(self) -> str:
        """Short hash of the parameters (identifies a build for resuming a suite)."""
        text = ",".join(f"{k}={v!r}" for k, v in sorted(self.to_dict().items()) if k != "suite")
        return hashlib.sha256(text.encode()).hexdigest()[:12]


def variant_name(p_tri: float, mode: str) -> str:
    pct = 100.0 * float(p_tri)
    return f"p{int(round(pct)) if math.isclose(pct, round(pct)) else format(pct, 'g')}-{mode}"


def variant_seed(seed: int, variant: str) -> int:
    """The generator seed of one variant: first 4 bytes of sha256("<seed>/<variant>")."""
    return int.from_bytes(hashlib.sha256(f"{int(seed)}/{variant}".encode()).digest()[:4], "big")


@dataclasses.dataclass(frozen=True)
class Recipe:
    suite: str
    source: str
    seed: int
    params: dict
    variants: tuple  # of (p_tri, mode)
    path: str = ""

    def build_params(self, p_tri: float, mode: str, **overrides) -> BuildParams:
        """Parameters of one variant: recipe values, then ``overrides`` (None = keep recipe value)."""
        values = {**self.params, "seed": self.seed}
        unknown = set(overrides) - set(values)
        if unknown:
            raise ParameterError(f"unknown parameter(s) {', '.join(sorted(unknown))}; known: {', '.join(sorted(values))}")
        values.update({k: v for k, v in overrides.items() if v is not None})
        return BuildParams(source=self.source, p_tri=p_tri, mode=mode, suite=self.suite, **values).validate()

    def with_overrides(self, **overrides) -> "Recipe":
        """The recipe with some parameters (or ``seed``) replaced; None keeps a value.

        A recipe that differs from this one is renamed ``<suite>-custom-<hash>`` so that its
        variants never overwrite the recipe's own.
        """
        overrides = {k: v for k, v in overrides.items() if v is not None}
        first = self.build_params(*self.variants[0], **overrides)  # validates
        if first == self.build_params(*self.variants[0]):
            return self
        params = {k: getattr(first, k) for k in (*self.params, *(k for k in overrides if k != "seed"))}
        return dataclasses.replace(self, suite=f"{self.suite}-custom-{first.key()[:8]}", seed=first.seed, params=params)

    def all_params(self) -> list[BuildParams]:
        return [self.build_params(p, m) for p, m in self.variants]


def _parse(text: str, where: str) -> Recipe:
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ParameterError(f"{where}: not valid YAML ({exc})") from None
    if not isinstance(raw, dict):
        raise ParameterError(f"{where}: a recipe is a mapping with suite, source, seed, params, variants")
    missing = [k for k in ("suite", "source", "params", "variants") if k not in raw]
    if missing:
        raise ParameterError(f"{where}: missing key(s) {', '.join(missing)}")
    params = dict(raw["params"])
    unknown = set(params) - set(_PARAM_KEYS)
    if unknown or set(_PARAM_KEYS[:7]) - set(params):
        raise ParameterError(f"{where}: params must give {', '.join(_PARAM_KEYS[:7])} "
                             f"(optional valid_frac, test_frac, inf_gcc); got {', '.join(sorted(params))}")
    variants = tuple((float(v["p_tri"]), str(v["mode"])) for v in raw["variants"])
    recipe = Recipe(str(raw["suite"]), str(raw["source"]), int(raw.get("seed", 0)), params, variants, where)
    recipe.all_params()  # validates every variant now
    return recipe


def recipe_files() -> dict[str, str]:
    """Shipped recipe texts: file stem -> YAML text."""
    folder = resources.files("tkg_indt.benchmark") / "recipes"
    return {p.name[:-5]: p.read_text(encoding="utf-8") for p in folder.iterdir() if p.name.endswith(".yaml")}


def recipes() -> dict[str, Recipe]:
    """Shipped recipes by suite name (``GDELTIndT``, ``WIKIIndT``)."""
    out = {}
    for stem, text in sorted(recipe_files().items()):
        r = _parse(text, f"tkg_indt/benchmark/recipes/{stem}.yaml")
        out[r.suite] = r
    return out


def get_recipe(name: str) -> Recipe:
    """A recipe by suite name (``WIKIIndT``), source name (``wiki``) or path to a YAML file."""
    path = Path(name)
    if name.endswith((".yaml", ".yml")) or path.is_file():
        if not path.is_file():
            raise ParameterError(f"recipe file {name} not found")
        return _parse(path.read_text(encoding="utf-8"), str(path))
    known = recipes()
    for r in known.values():
        if name.lower() in (r.suite.lower(), r.source.lower()):
            return r
    raise UnknownNameError("benchmark suite or source", name, [*known, *(r.source for r in known.values())])
