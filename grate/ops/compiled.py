"""torch.compile of the reference propagate (an alternative accelerated path, any device).

Compiled lazily on first use (inductor needs a C++ compiler on the CPU); one compiled function per
process, re-specialised by torch for new shapes/variants. If compilation fails, a warning is
printed once and the plain reference is used.
"""
from __future__ import annotations

import torch

from .propagate import propagate_reference, warn_once

_state: dict = {}


def propagate_compiled(*args):
    """Same contract as propagate_reference."""
    fn = _state.get("fn")
    if fn is None:
        fn = _state["fn"] = torch.compile(propagate_reference, dynamic=False)
    if _state.get("broken"):
        return propagate_reference(*args)
    try:
        return fn(*args)
    except Exception as exc:  # compilation failure: use the reference from now on
        _state["broken"] = True
        warn_once("compile", f"grate.ops: torch.compile failed ({type(exc).__name__}); "
                             "using the plain PyTorch reference")
        return propagate_reference(*args)
