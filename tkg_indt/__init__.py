"""tkg-indt: benchmarks, baselines and evaluation for inductive temporal knowledge graph reasoning.

The pipeline, one sub-package each: ``data`` (raw sources -> :class:`TKG`), ``benchmark`` (the
fully-inductive suites), ``baselines`` (recurrency), ``evaluation`` (filtered ranking, protocols),
``hub`` (Hugging Face export). Models live in the sibling package ``grate``.
"""
from .data import TKG, TimeEncoding, load_folder, load_source
from .evaluation import Evaluator, evaluate, make_task
from .hub.load import load_benchmark

__version__ = "0.1.0"
__all__ = ["TKG", "TimeEncoding", "load_source", "load_folder", "load_benchmark", "Evaluator", "evaluate",
           "make_task"]
