"""Temporal message passing for one NBFNet-style entity layer (plain PyTorch reference).

Formats (node-major):
    x, boundary   (N, B, d) float   layer input h^(l-1) and boundary condition (one self-message/node)
    rel           (B, 2R, d) float  per-query relation representations used by this layer
    edge_index    (2, E) long       rows (src, dst); messages flow src -> dst (scattered to dst)
    edge_type     (E,) long in [0, 2R)
    edge_time     (E,) long         fact timestamps (time index)
    query_time    (B,) long         query timestamps tau
    query_state   (B, d) float      Q = h_s + r_q ('grate'), r_q ('rotation+relgate'), else None
    edge_mask     (B, E) bool       optional: edges each query may use
Returns (N, B, d) for aggregate='sum' and (N, B, 12d) for aggregate='pna'.

Message variants (m = x[src] * rel[:, type], dt = tau - t, theta_k = omega_k dt):
    distmult          m
    sincos            m * s, s_2k = cos theta_k, s_2k+1 = sin theta_k
    rotation          R(dt) m   (rotation of consecutive pairs (m_2k, m_2k+1) by theta_k)
    rotation+relgate  g R(dt) m, g = sigmoid(r_q . R(dt) m / sqrt(d))
    grate             g R(dt) m, g = sigmoid(Q . R(dt) m / sqrt(d))

PNA (NBFNet): mean, max, min, std of the messages including the boundary self-message, each times
the degree scalers [1, log(deg)/mean_n log(deg), 1/clamp(log(deg)/mean_n log(deg), 1e-2)] with
deg = in-degree + 1 (per query when edge_mask is given). Feature layout of the 12d output:
index (c * 4 + k) * 3 + s for channel c, statistic k (mean, max, min, std), scaler s.

impl: 'reference' (this file: gather -> message -> scatter, materialises (E, B, d) tensors),
'fused' (C++/OpenMP CPU kernel, grate.ops.fused, built on first use), 'chunked' (plain PyTorch,
memory-bounded by recomputation, any device: grate.ops.chunked), 'compile' (torch.compile of the
reference: grate.ops.compiled) or 'auto': on the CPU the fused kernel, or, when it cannot be built,
the reference with a one-time warning; on other devices (CUDA) the chunked path.
"""
from __future__ import annotations

import math

import torch

MESSAGES = ("distmult", "sincos", "rotation", "rotation+relgate", "grate")
GATED = ("rotation+relgate", "grate")
AGGREGATES = ("sum", "pna")
IMPLS = ("auto", "reference", "fused", "chunked", "compile")
STD_EPS = 1e-6  # NBFNet: std = sqrt(clamp(E[m^2] - E[m]^2, eps))
ROPE_BASE = 10000.0


def frequencies(d: int, base: float = ROPE_BASE, device=None, dtype=torch.float32) -> torch.Tensor:
    """omega_k = base^(-2k/d), k = 0 .. d/2 - 1, shape (d/2,)."""
    if d % 2:
        raise ValueError(f"hidden dimension d={d} must be even for the rotary encoding")
    k = torch.arange(d // 2, device=device, dtype=torch.float64)
    return (base ** (-2.0 * k / d)).to(dtype)


def _angles(dt: torch.Tensor, d: int, dtype, device) -> torch.Tensor:
    """theta (..., d/2) for integer time gaps dt (...)."""
    return dt.to(dtype).unsqueeze(-1) * frequencies(d, device=device, dtype=dtype)


def _rotate_cs(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    a, b = x[..., 0::2], x[..., 1::2]
    return torch.stack((a * cos - b * sin, a * sin + b * cos), dim=-1).flatten(-2)


def rotate(x: torch.Tensor, dt, d: int | None = None) -> torch.Tensor:
    """R(dt) x: rotate consecutive pairs (x_2k, x_2k+1) by theta_k = omega_k dt.

    x (..., d); dt a number or an integer tensor broadcastable to x.shape[:-1].
    """
    d = x.shape[-1] if d is None else d
    if x.shape[-1] != d:
        raise ValueError(f"rotate: x has last dimension {x.shape[-1]}, expected d={d}")
    dt = torch.as_tensor(dt, device=x.device)
    theta = _angles(dt, d, x.dtype, x.device)
    return _rotate_cs(x, theta.cos(), theta.sin())


def check_inputs(x, boundary, rel, edge_index, edge_type, edge_time, query_time, query_state,
                 message, aggregate, edge_mask=None, degree_scale=None, impl="auto"):
    """Raise ValueError naming the parameter and the expected format; nothing is computed."""
    if message not in MESSAGES:
        raise ValueError(f"message={message!r}; expected one of {', '.join(MESSAGES)}")
    if aggregate not in AGGREGATES:
        raise ValueError(f"aggregate={aggregate!r}; expected one of {', '.join(AGGREGATES)}")
    if impl not in IMPLS:
        raise ValueError(f"impl={impl!r}; expected one of {', '.join(IMPLS)}")
    if x.dim() != 3:
        raise ValueError(f"x must be (N, B, d), got shape {tuple(x.shape)}")
    N, B, d = x.shape
    if boundary.shape != x.shape:
        raise ValueError(f"boundary must have the shape of x {tuple(x.shape)}, got {tuple(boundary.shape)}")
    if rel.dim() != 3 or rel.shape[0] != B or rel.shape[2] != d:
        raise ValueError(f"rel must be (B={B}, 2R, d={d}), got {tuple(rel.shape)}")
    if edge_index.dim() != 2 or edge_index.shape[0] != 2:
        raise ValueError(f"edge_index must be (2, E), got {tuple(edge_index.shape)}")
    E = edge_index.shape[1]
    for name, t in (("edge_type", edge_type), ("edge_time", edge_time)):
        if t.shape != (E,):
            raise ValueError(f"{name} must be (E={E},), got {tuple(t.shape)}")
    if query_time.shape != (B,):
        raise ValueError(f"query_time must be (B={B},), got {tuple(query_time.shape)}")
    if message in GATED:
        if query_state is None or query_state.shape != (B, d):
            got = None if query_state is None else tuple(query_state.shape)
            raise ValueError(f"message={message!r} needs query_state (B={B}, d={d}), got {got}")
    if message != "distmult" and d % 2:
        raise ValueError(f"message={message!r} needs an even hidden dimension, got d={d}")
    if edge_mask is not None and (edge_mask.shape != (B, E) or edge_mask.dtype != torch.bool):
        raise ValueError(f"edge_mask must be a bool (B={B}, E={E}) tensor, got "
                         f"{edge_mask.dtype} {tuple(edge_mask.shape)}")
    if degree_scale is not None and (degree_scale.dim() not in (2, 3) or degree_scale.shape[0] != N
                                     or degree_scale.shape[-1] != 3):
        raise ValueError(f"degree_scale must be (N={N}, 3) or (N, B, 3), got {tuple(degree_scale.shape)}")
    if E:
        if int(edge_index.min()) < 0 or int(edge_index.max()) >= N:
            raise ValueError(f"edge_index has node ids outside [0, N={N})")
        if int(edge_type.min()) < 0 or int(edge_type.max()) >= rel.shape[1]:
            raise ValueError(f"edge_type has ids outside [0, 2R={rel.shape[1]})")


def messages(x, rel, src, edge_type, dt, query_state, message):
    """Per-edge messages (E, B, d) for sources src (E,), types (E,) and time gaps dt (E, B)."""
    d = x.shape[-1]
    m = x[src] * rel.transpose(0, 1)[edge_type]
    if message == "distmult":
        return m
    theta = _angles(dt, d, x.dtype, x.device)
    cos, sin = theta.cos(), theta.sin()
    if message == "sincos":
        return m * torch.stack((cos, sin), dim=-1).flatten(-2)
    m = _rotate_cs(m, cos, sin)
    if message in GATED:
        g = torch.sigmoid((m * query_state).sum(-1, keepdim=True) / math.sqrt(d))
        m = g * m
    return m


def degree_scalers(deg: torch.Tensor) -> torch.Tensor:
    """PNA scalers (..., 3) from degrees deg (N,) or (N, B) counting the self-message."""
    log_deg = deg.to(torch.float64).log()
    scale = log_deg / log_deg.mean(0, keepdim=True).clamp(min=1e-12)
    return torch.stack((torch.ones_like(scale), scale, 1.0 / scale.clamp(min=1e-2)), dim=-1)


def in_degree(dst, num_nodes, edge_mask=None, dtype=torch.float32):
    """deg = in-degree + 1: (N, 1) without a mask, (N, B) with one."""
    if edge_mask is None:
        return (torch.bincount(dst, minlength=num_nodes).to(dtype) + 1).unsqueeze(1)
    cnt = torch.zeros(num_nodes, edge_mask.shape[0], dtype=dtype, device=dst.device)
    return cnt.index_add_(0, dst, edge_mask.t().to(dtype)) + 1


def pna_combine(s, sq, mx, mn, deg, degree_scale=None):
    """(N, B, 12d) PNA output from sum, sum of squares, max, min (N, B, d) and deg (N, 1|B)."""
    dg = deg.to(s.dtype).unsqueeze(-1)
    mean = s / dg
    std = (sq / dg - mean * mean).clamp(min=STD_EPS).sqrt()
    feats = torch.stack((mean, mx, mn, std), dim=-1).flatten(-2)  # (N, B, 4d)
    if degree_scale is None:
        degree_scale = degree_scalers(deg)
    scal = degree_scale.to(s.dtype)
    if scal.dim() == 2:
        scal = scal.unsqueeze(1)
    return (feats.unsqueeze(-1) * scal.unsqueeze(-2)).flatten(-2)


def propagate_reference(x, boundary, rel, edge_index, edge_type, edge_time, query_time, query_state,
                        message, aggregate, edge_mask=None, degree_scale=None):
    """Naive gather -> message -> scatter; materialises (E, B, d) messages. Always available."""
    N = x.shape[0]
    src, dst = edge_index[0], edge_index[1]
    dt = query_time.unsqueeze(0) - edge_time.unsqueeze(1)  # (E, B)
    m = messages(x, rel, src, edge_type, dt, query_state, message)
    keep = None if edge_mask is None else edge_mask.t().unsqueeze(-1)  # (E, B, 1)
    if aggregate == "sum":
        if keep is not None:
            m = m * keep
        return boundary.index_add(0, dst, m)
    m0 = m if keep is None else m * keep
    s = boundary.index_add(0, dst, m0)
    sq = (boundary * boundary).index_add(0, dst, m0 * m0)
    idx = dst.view(-1, 1, 1).expand_as(m)
    m_hi = m if keep is None else m.masked_fill(~keep, float("-inf"))
    m_lo = m if keep is None else m.masked_fill(~keep, float("inf"))
    mx = boundary.scatter_reduce(0, idx, m_hi, "amax", include_self=True)
    mn = boundary.scatter_reduce(0, idx, m_lo, "amin", include_self=True)
    deg = in_degree(dst, N, edge_mask, x.dtype)
    return pna_combine(s, sq, mx, mn, deg, degree_scale)


_WARNED = set()


def warn_once(key: str, text: str) -> None:
    """Print a warning once per process and key."""
    if key not in _WARNED:
        _WARNED.add(key)
        import warnings
        warnings.warn(text, RuntimeWarning, stacklevel=3)


def propagate(x, boundary, rel, edge_index, edge_type, edge_time, query_time, query_state,
              message, aggregate, edge_mask=None, degree_scale=None, impl="auto"):
    """One temporal message-passing step; see the module docstring for formats."""
    check_inputs(x, boundary, rel, edge_index, edge_type, edge_time, query_time, query_state,
                 message, aggregate, edge_mask, degree_scale, impl)
    if message not in GATED:
        query_state = None
    args = (x, boundary, rel, edge_index, edge_type, edge_time, query_time, query_state,
            message, aggregate, edge_mask, degree_scale)
    if impl == "reference":
        return propagate_reference(*args)
    if impl == "compile":
        from .compiled import propagate_compiled
        return propagate_compiled(*args)
    if impl == "chunked" or (impl == "auto" and x.device.type != "cpu"):
        from .chunked import propagate_chunked
        return propagate_chunked(*args)
    if impl == "fused" or impl == "auto":
        from . import fused
        if fused.available(x):
            return fused.propagate_fused(*args)
        if impl == "fused":
            raise RuntimeError(f"impl='fused' is unavailable for this input: {fused.why() or 'CPU float32/float64 with d <= 1024 only'}")
        if fused.why():
            warn_once("fused", f"grate.ops: fused kernel unavailable ({fused.why()}); using the "
                               "plain PyTorch reference (slower, more memory)")
    return propagate_reference(*args)
