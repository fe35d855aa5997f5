"""Checkpoints without pickle: model weights as safetensors + JSON, and resumable training states.

Model checkpoint folder (:func:`save_model` / :func:`load_model_dir`)::

    model.safetensors   the model's state_dict (float32)
    config.json         {"format": "grate-checkpoint", "version": 1, "model": <ModelConfig>, ...metadata}

Training state folder (:func:`save_state` / :func:`load_state`), written atomically (a temporary
folder renamed into place, so a kill never leaves a half-written state)::

    model.safetensors       current weights
    optimizer.safetensors   optimizer tensors, keys "<param index>.<name>" (AdamW: step, exp_avg, exp_avg_sq)
    rng.safetensors         torch CPU (and CUDA) generator states
    state.json              step, optimizer param_groups, numpy/python RNG states, sampler state,
                            best validation MRR, elapsed seconds, the recipe
"""
from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import numpy as np
import torch
from safetensors.torch import load_file, save_file

from tkg_indt.errors import MissingDataError, ParameterError
from tkg_indt.paths import atomic_dir

from ..config import ModelConfig

FORMAT, VERSION = "grate-checkpoint", 1


def _tensors(state: dict) -> dict:
    return {k: v.detach().to("cpu").contiguous().clone() for k, v in state.items()}


def save_model(model, folder, **metadata) -> Path:
    """Write ``model.safetensors`` and ``config.json`` into ``folder`` (atomically, replacing it)."""
    folder = Path(folder)
    config = {"format": FORMAT, "version": VERSION, "model": model.config.to_dict(),
              "parameters": int(sum(p.numel() for p in model.parameters())), **metadata}
    with atomic_dir(folder) as tmp:
        save_file(_tensors(model.state_dict()), str(tmp / "model.safetensors"), metadata={"format": "pt"})
        (tmp / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return folder


def read_config(folder) -> dict:
    file = Path(folder) / "config.json"
    if not file.is_file():
        raise MissingDataError(f"{folder}: no config.json. Fix: pass a folder written by `tkg-indt train` "
                               f"(model.safetensors + config.json)")
    try:
        config = json.loads(file.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ParameterError(f"{file}: invalid JSON ({exc}). Fix: restore the file from the release") from None
    if not isinstance(config, dict) or config.get("format") != FORMAT or "model" not in config:
        raise ParameterError(f"{file}: not a GRATE checkpoint config (needs format={FORMAT!r} and a 'model' "
                             f"entry). Fix: pass a folder written by `tkg-indt train`")
    return config


def load_model_dir(folder, device="cpu"):
    """A model from a checkpoint folder (safetensors + JSON; no pickle). Returns the model in eval mode."""
    folder = Path(folder)
    config = read_config(folder)
    weights = folder / "model.safetensors"
    if not weights.is_file():
        raise MissingDataError(f"{folder}: no model.safetensors. Fix: pass a complete checkpoint folder")
    from .. import build_model

    model = build_model(ModelConfig.from_dict(config["model"]))
    state = load_file(str(weights))
    missing, unexpected = model.load_state_dict(state, strict=False)
    if missing or unexpected:
        raise ParameterError(f"{weights}: weights do not match the config (missing {missing[:3]}, unexpected "
                             f"{unexpected[:3]}). Fix: keep model.safetensors and config.json from the same run")
    model.checkpoint = config
    return model.to(device).eval()


# ---------------------------------------------------------------------- training state
def _rng_json() -> dict:
    version, mt, gauss = random.getstate()
    name, keys, pos, has_gauss, cached = np.random.get_state()
    return {"python": [version, list(mt), gauss],
            "numpy": [name, keys.tolist(), int(pos), int(has_gauss), float(cached)]}


def _set_rng_json(state: dict) -> None:
    version, mt, gauss = state["python"]
    random.setstate((version, tuple(mt), gauss))
    name, keys, pos, has_gauss, cached = state["numpy"]
    np.random.set_state((name, np.asarray(keys, dtype=np.uint32), pos, has_gauss, cached))


def save_state(folder, model, optimizer, step: int, **extra) -> Path:
    """Atomically write a resumable training state (see the module docstring)."""
    folder = Path(folder)
    opt = optimizer.state_dict()
    tensors, scalars = {}, {}
    for index, entries in opt["state"].items():
        for key, value in entries.items():
            if isinstance(value, torch.Tensor):
                tensors[f"{index}.{key}"] = value
            else:
                scalars[f"{index}.{key}"] = value
    rng = {"torch": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        rng["cuda"] = torch.cuda.get_rng_state()
    meta = {"format": "grate-train-state", "version": VERSION, "step": int(step),
            "param_groups": opt["param_groups"], "optimizer_scalars": scalars, "rng": _rng_json(), **extra}
    with atomic_dir(folder) as tmp:
        save_file(_tensors(model.state_dict()), str(tmp / "model.safetensors"))
        save_file(_tensors(tensors), str(tmp / "optimizer.safetensors"))
        save_file(_tensors(rng), str(tmp / "rng.safetensors"))
        (tmp / "state.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    for stale in folder.parent.glob(f".{folder.name}.old-*"):  # left by an earlier kill mid-swap
        shutil.rmtree(stale, ignore_errors=True)
    return folder


def state_folder(folder) -> Path | None:
    """``folder`` if it holds a state; else the previous state that a kill during the final swap of
    :func:`tkg_indt.paths.atomic_dir` left as ``.<name>.old-<pid>`` beside it; else None."""
    folder = Path(folder)
    if (folder / "state.json").is_file():
        return folder
    old = [p for p in folder.parent.glob(f".{folder.name}.old-*") if (p / "state.json").is_file()]
    return max(old, key=lambda p: p.stat().st_mtime) if old else None


def has_state(folder) -> bool:
    return state_folder(folder) is not None


def load_state(folder, model, optimizer, restore_rng: bool = True) -> dict:
    """Load weights, optimizer and RNG states saved by :func:`save_state`; returns ``state.json``."""
    found = state_folder(folder)
    if found is None:
        raise MissingDataError(f"{folder}: no training state to resume. Fix: run without --resume, or pass the "
                               f"--out folder of the interrupted run")
    folder = found
    meta = json.loads((folder / "state.json").read_text(encoding="utf-8"))
    model.load_state_dict(load_file(str(folder / "model.safetensors"), device=str(model.device)))
    tensors = load_file(str(folder / "optimizer.safetensors"))
    state: dict = {}
    for key, value in list(tensors.items()) + list(meta["optimizer_scalars"].items()):
        index, name = key.split(".", 1)
        state.setdefault(int(index), {})[name] = value
    optimizer.load_state_dict({"state": state, "param_groups": meta["param_groups"]})
    if restore_rng:
        rng = load_file(str(folder / "rng.safetensors"))
        torch.set_rng_state(rng["torch"])
        if "cuda" in rng and torch.cuda.is_available():
            torch.cuda.set_rng_state(rng["cuda"])
        _set_rng_json(meta["rng"])
    return meta
