"""Temporal message passing operators (GRATE and its ablations) with a plain PyTorch reference."""
from .propagate import (AGGREGATES, MESSAGES, degree_scalers, frequencies, in_degree, messages,
                        propagate, propagate_reference, rotate)

__all__ = ["AGGREGATES", "MESSAGES", "degree_scalers", "frequencies", "in_degree", "messages",
           "propagate", "propagate_reference", "rotate"]
