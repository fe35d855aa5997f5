"""Learning-free baselines. ``recurrency``: the count-based recurrency predictor (Gastinger et al. 2024).

>>> from tkg_indt.baselines import RecurrencyBaseline                      # doctest: +SKIP
>>> model = RecurrencyBaseline("combined")                                  # doctest: +SKIP
>>> result = model.evaluate(single_step(tkg), ties="expected")              # doctest: +SKIP
"""
from .recurrency import (ALPHAS, DEFAULT_ALPHA, DEFAULT_LAMBDA, LAMBDAS, PARAMS, VARIANTS, RecurrencyBaseline,
                         Selection, select_parameters)

__all__ = ["RecurrencyBaseline", "Selection", "select_parameters", "LAMBDAS", "ALPHAS", "DEFAULT_LAMBDA",
           "DEFAULT_ALPHA", "VARIANTS", "PARAMS"]
