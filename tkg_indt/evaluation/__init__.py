"""Time-aware filtered evaluation: the stand-alone :class:`Evaluator` and the protocol harness."""
from .evaluator import TIES, Evaluator, metrics_from_counts, ranks_from_counts
from .filtering import FILTERS, KnownAnswers, with_inverses
from .protocols import (PROTOCOLS, SUBSET_SEED, EvalResult, Task, evaluate, inductive, make_task, sample_facts,
                        single_step, transductive)

__all__ = ["Evaluator", "KnownAnswers", "Task", "EvalResult", "evaluate", "make_task", "transductive",
           "inductive", "single_step", "metrics_from_counts", "ranks_from_counts", "with_inverses",
           "sample_facts", "SUBSET_SEED", "TIES", "FILTERS", "PROTOCOLS"]
