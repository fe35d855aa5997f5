"""Joint pretraining of GRATE / ULTRA / TRIX models (``tkg-indt train --recipe ...``).

    from grate.train import load_recipe, train
    summary = train(load_recipe("recipes/train/grate-trix-cpu.yaml"), "runs/grate-trix")

Modules: :mod:`.recipe` (YAML format), :mod:`.sampling` (graphs, batches, strict negatives),
:mod:`.loss` (self-adversarial BCE), :mod:`.checkpoint` (safetensors + JSON, resumable state),
:mod:`.distributed` (torchrun data parallelism), :mod:`.loop` (the loop), :mod:`.curves` (PNG).
"""
from .checkpoint import load_model_dir, load_state, save_model, save_state
from .loop import train
from .loss import self_adversarial_bce
from .recipe import Recipe, load_recipe, parse
from .sampling import BatchSampler, load_sources, strict_negatives

__all__ = ["train", "Recipe", "load_recipe", "parse", "load_sources", "BatchSampler", "strict_negatives",
           "self_adversarial_bce", "save_model", "load_model_dir", "save_state", "load_state"]
