"""Model zoo: released checkpoints by name, and their adapter for ``tkg-indt eval``.

    from grate.zoo import load_model
    model = load_model("grate-trix")         # or a checkpoint folder (model.safetensors + config.json)

Names: ``grate-trix`` (TRIX + GRATE), ``grate-ultra`` (ULTRA + GRATE), ``trix`` and ``ultra`` (the
static base models, DistMult messages, retrained on the same temporal data). Releases live in
``$GRATE_RELEASES/<name>/`` when the variable is set, else in ``releases/<name>/`` beside the
package (the repository checkout); each holds ``model.safetensors``, ``config.json`` and
``MODEL_CARD.md``. Loading uses safetensors and JSON only (no pickle).
"""
from __future__ import annotations

import os
from pathlib import Path

from tkg_indt.errors import MissingDataError, ParameterError, UnknownNameError

from .scoring import Scorer

RELEASES = {
    "grate-trix": "TRIX + GRATE message (rotation + query gate), jointly pretrained on ICEWS14 + ICEWS05-15",
    "grate-ultra": "ULTRA + GRATE message (rotation + query gate), jointly pretrained on ICEWS14 + ICEWS05-15",
    "trix": "TRIX with static DistMult messages, retrained on the same temporal data (ICEWS14 + ICEWS05-15)",
    "ultra": "ULTRA with static DistMult messages, retrained on the same temporal data (ICEWS14 + ICEWS05-15)",
}


def releases_dir() -> Path:
    """``$GRATE_RELEASES``, else ``releases/`` of the checkout that holds this package."""
    env = os.environ.get("GRATE_RELEASES")
    return Path(env).expanduser() if env else Path(__file__).resolve().parents[1] / "releases"


def release_path(name: str) -> Path:
    """The folder of a released model; raises a clear error for unknown or untrained names."""
    key = name.lower()
    if key not in RELEASES:
        raise UnknownNameError("released model", name, RELEASES)
    folder = releases_dir() / key
    if not (folder / "model.safetensors").is_file() or not (folder / "config.json").is_file():
        trained = [n for n in RELEASES if (releases_dir() / n / "model.safetensors").is_file()]
        raise MissingDataError(
            f"model {key!r} has not been trained yet: {folder} holds no model.safetensors + config.json "
            f"(trained: {', '.join(trained) or 'none'}). Fix: `tkg-indt train --recipe recipes/train/{key}-cpu.yaml "
            f"--out runs/{key}`, then pass --checkpoint runs/{key}/best (or set GRATE_RELEASES)")
    return folder


def available() -> dict[str, Path | None]:
    """Every release name -> its folder when trained, else None."""
    return {n: (releases_dir() / n if (releases_dir() / n / "model.safetensors").is_file() else None)
            for n in RELEASES}


def load_model(name_or_path: str | os.PathLike, device: str = "cpu"):
    """A released model by name, or any checkpoint folder written by ``tkg-indt train``; eval mode."""
    from .train.checkpoint import load_model_dir

    path = Path(name_or_path).expanduser()
    if str(name_or_path).lower() not in RELEASES and path.is_dir():
        return load_model_dir(path, device)
    return load_model_dir(release_path(str(name_or_path)), device)


class ZooScorer(Scorer):
    """:class:`grate.Scorer` of a loaded checkpoint, with ``describe()`` for the results JSON."""

    def __init__(self, model, source: str, batch_size: int | None = None):
        super().__init__(model, batch_size=batch_size)
        self.source = source

    def describe(self) -> dict:
        info = getattr(self.model, "checkpoint", {})
        return {"checkpoint": self.source, "model": self.model.config.to_dict(),
                "parameters": self.model.num_parameters(), "step": info.get("step"),
                "valid_mrr": info.get("valid_mrr"), "name": info.get("name"), "impl": self.model.impl}


def harness_model(name: str | None = None, checkpoint=None, device: str = "cpu", batch_size: int | None = None,
                  params=None, progress=None) -> ZooScorer:
    """Factory behind ``tkg-indt eval --model NAME`` / ``--checkpoint PATH`` (registered in the eval registry)."""
    if params is not None:
        raise ParameterError("--params applies to the recurrency baseline only; learned models take none")
    if checkpoint is not None:
        source = str(checkpoint)
        path = Path(checkpoint).expanduser()
        if not path.is_dir():
            raise MissingDataError(f"--checkpoint {checkpoint}: no such folder. Fix: pass a folder with "
                                   f"model.safetensors + config.json (e.g. runs/NAME/best or releases/NAME)")
        model = load_model(path, device)
    else:
        source = str(release_path(name))
        model = load_model(name, device)
    return ZooScorer(model, source, batch_size)
