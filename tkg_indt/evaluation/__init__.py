"""Time-aware filtered evaluation: the stand-alone :class:`Evaluator` and the protocol harness."""
from .evaluator import TIES, Evaluator, metrics_from_counts, ranks_from_counts
from .filtering import FILTERS, KnownAnswers, with_inverses
from .protocols import PROTOCOLS, EvalResult, Task, evaluate, inductive, make_task, single_step, transductive

__all__ = ["Evaluator", "KnownAnswers", "Task", "EvalResult", "evaluate", "make_task", "transductive",
           "inductive", "single_step", "metrics_from_counts", "ranks_from_counts", "with_inverses",
           "TIES", "FILTERS", "PROTOCOLS"]
