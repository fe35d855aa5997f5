"""Fused C++/OpenMP temporal message passing (CPU), built lazily with torch's extension mechanism.

The kernel (csrc/temporal_mp.cpp) computes messages on the fly: nothing of size (E, B, d) is
stored. Forward groups edges by destination (each thread owns output rows); backward recomputes
the messages with edges grouped by source (each thread owns the grad_x rows it writes; grad_rel and
grad_query go to one buffer per thread, summed at the end). PNA keeps sum, sum of squares, max,
min and tie counts (N, B, d each); the recomputed messages are bit-identical to the forward's, so
the max/min gradient is split among tied values exactly as in the reference (torch scatter_reduce).
The PNA output (N, B, 12d) and its backward are single fused passes too.

Build: on first use, `torch.utils.cpp_extension.load` compiles the source with the system C++
compiler and ninja into a build folder keyed by a hash of the source, the flags and the torch
version: $GRATE_OPS_BUILD_DIR, else $TORCH_EXTENSIONS_DIR/grate_ops, else
$XDG_CACHE_HOME/grate_ops (~/.cache/grate_ops). Later processes load the cached library (~1 s).
If the build fails (no compiler, no ninja, ...) `available()` is False, `why()` says why, and
`propagate(impl='auto')` warns once and uses the reference. GRATE_OPS_DISABLE_FUSED=1 turns the
kernel off.
"""
from __future__ import annotations

import hashlib
import os
import platform
import shutil
import sys
import threading
import weakref
from pathlib import Path

import torch

from .propagate import (GATED, STD_EPS, degree_scalers, frequencies, in_degree,
                        propagate_reference)

VARIANTS = {"distmult": 0, "sincos": 1, "rotation": 2, "rotation+relgate": 3, "grate": 4}
SOURCE = Path(__file__).with_name("csrc") / "temporal_mp.cpp"
# no -ffast-math: it would switch the whole process to flush-to-zero
CFLAGS = ["-O3", "-fopenmp", "-fno-math-errno", "-fno-trapping-math", "-fno-signed-zeros",
          "-fassociative-math"]
LDFLAGS = ["-fopenmp"]
MAX_D = 1024

_lock = threading.Lock()
_state: dict = {}


def build_dir() -> Path:
    """Folder holding compiled kernels (see the module docstring)."""
    if os.environ.get("GRATE_OPS_BUILD_DIR"):
        return Path(os.environ["GRATE_OPS_BUILD_DIR"])
    if os.environ.get("TORCH_EXTENSIONS_DIR"):
        return Path(os.environ["TORCH_EXTENSIONS_DIR"]) / "grate_ops"
    cache = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(cache) / "grate_ops"


def _cpu_id() -> bytes:
    """CPU model and feature flags (the build uses -march=native, so it is keyed by the CPU)."""
    try:
        with open("/proc/cpuinfo") as fh:
            lines = [ln for ln in fh if ln.startswith(("model name", "flags"))][:2]
        return "".join(lines).encode()
    except OSError:
        return platform.processor().encode()


def _arch_flags() -> list[str]:
    """-march=native on x86-64/arm64 Linux with GCC/Clang (AVX2/FMA where the CPU has them)."""
    if os.environ.get("GRATE_OPS_NO_NATIVE", "") not in ("", "0"):
        return []
    return ["-march=native"] if platform.machine() in ("x86_64", "AMD64", "aarch64") else []


def _load():
    if os.environ.get("GRATE_OPS_DISABLE_FUSED", "") not in ("", "0"):
        raise RuntimeError("disabled by GRATE_OPS_DISABLE_FUSED")
    if not SOURCE.is_file():
        raise RuntimeError(f"kernel source {SOURCE} is missing from the installation")
    from torch.utils import cpp_extension
    cxx = os.environ.get("CXX", "c++")
    if shutil.which(cxx) is None:
        raise RuntimeError(f"no C++ compiler ({cxx!r} not on PATH)")
    if not cpp_extension.is_ninja_available():
        raise RuntimeError("ninja is not installed (pip install ninja)")
    cflags = CFLAGS + _arch_flags()
    key = hashlib.sha256(b"\0".join([SOURCE.read_bytes(), " ".join(cflags).encode(), _cpu_id(),
                                     torch.__version__.encode(), platform.machine().encode(),
                                     platform.python_version().encode()])).hexdigest()[:12]
    name = f"grate_ops_cpu_{key}"
    folder = build_dir() / name
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / f"{name}.so").exists():
        print(f"grate.ops: compiling the fused CPU kernel (first use, about a minute; cached in "
              f"{folder})", file=sys.stderr, flush=True)
    return cpp_extension.load(name=name, sources=[str(SOURCE)], extra_cflags=cflags,
                              extra_ldflags=LDFLAGS, build_directory=str(folder), verbose=False)


def kernel():
    """The compiled extension module, or None if it cannot be built (reason in why())."""
    with _lock:
        if "module" not in _state:
            try:
                _state["module"] = _load()
            except Exception as exc:  # any build/load failure means: use the reference
                _state["module"] = None
                lines = str(exc).strip().splitlines() or [""]
                _state["why"] = f"{type(exc).__name__}: {lines[0]}"
                _state["error"] = str(exc)  # the full compiler output, for debugging
        return _state["module"]


def why(full: bool = False) -> str:
    """Why the kernel is unavailable ('' if it is available or not tried yet); full=True gives
    the whole error text (e.g. the compiler output)."""
    return _state.get("error" if full else "why", "")


def available(x: torch.Tensor | None = None) -> bool:
    """True if the kernel is built and supports tensors like x (CPU, float32/float64, d <= 1024)."""
    if x is not None:
        if x.device.type != "cpu":
            return False
        if x.dtype not in (torch.float32, torch.float64) or x.shape[-1] > MAX_D:
            return False
    return kernel() is not None


class GraphCSR:
    """Edges grouped by destination and by source, plus time ranks; built once per graph."""

    def __init__(self, edge_index, edge_type, edge_time, num_nodes):
        src, dst = edge_index[0].long(), edge_index[1].long()
        self.num_nodes, self.num_edges = num_nodes, src.numel()
        self.edge_type, self.edge_time = edge_type.long().clone(), edge_time.long().clone()
        self.times, trank = torch.unique(self.edge_time, return_inverse=True)
        self.by_dst = self._group(dst, src, self.edge_type, trank, num_nodes)
        self.by_src = self._group(src, dst, self.edge_type, trank, num_nodes)
        self.dst = dst

    def same_attributes(self, edge_type, edge_time) -> bool:
        return torch.equal(edge_type.long(), self.edge_type) and torch.equal(edge_time.long(), self.edge_time)

    @staticmethod
    def _group(key, other, etype, trank, n):
        perm = torch.argsort(key, stable=True)
        rowptr = torch.zeros(n + 1, dtype=torch.long)
        rowptr[1:] = torch.cumsum(torch.bincount(key, minlength=n), 0)
        return (rowptr, other[perm].contiguous(), etype[perm].contiguous(),
                trank[perm].contiguous(), perm.contiguous())


_graphs: dict = {}


def graph_csr(edge_index, edge_type, edge_time, num_nodes) -> GraphCSR:
    """GraphCSR cached per edge_index tensor (identity and version); edge_type and edge_time are
    compared by value (O(E)), so callers may pass freshly built attribute tensors."""
    key = (id(edge_index), num_nodes)
    hit = _graphs.get(key)
    if hit is not None:
        ref, version, csr = hit
        if ref() is edge_index and version == edge_index._version and csr.same_attributes(edge_type, edge_time):
            return csr
    csr = GraphCSR(edge_index, edge_type, edge_time, num_nodes)
    if key not in _graphs:
        if len(_graphs) >= 16:
            _graphs.pop(next(iter(_graphs)))
        weakref.finalize(edge_index, _graphs.pop, key, None)  # drop the entry with the graph
    _graphs[key] = (weakref.ref(edge_index), edge_index._version, csr)
    return csr


def trig_table(query_time, times, d, dtype, message="grate"):
    """Per (query b, distinct edge time t) factors of theta_k = omega_k (tau_b - t).

    sincos: (B, T, d) rows (cos theta_0, sin theta_0, cos theta_1, ...);
    rotation variants: (B, T, 2d) rows (C, S), C = (cos theta_0, cos theta_0, cos theta_1, ...),
    S = (-sin theta_0, sin theta_0, -sin theta_1, ...), so that R(dt) p = p * C + swap(p) * S.
    """
    dt = query_time.long().unsqueeze(1) - times.unsqueeze(0)
    theta = dt.to(dtype).unsqueeze(-1) * frequencies(d, dtype=dtype)
    cos, sin = theta.cos(), theta.sin()
    if message == "sincos":
        return torch.stack((cos, sin), dim=-1).flatten(-2).contiguous()
    c2 = torch.stack((cos, cos), dim=-1).flatten(-2)
    s2 = torch.stack((-sin, sin), dim=-1).flatten(-2)
    return torch.cat((c2, s2), dim=-1).contiguous()


_EMPTY = torch.empty(0)


class FusedSum(torch.autograd.Function):
    """(x, boundary, rel, query) -> boundary + sum of messages (N, B, d)."""

    @staticmethod
    def forward(ctx, x, boundary, rel, query, csr, trig, mask, variant):
        q = query if query is not None else _EMPTY.to(x.dtype)
        out = kernel().forward(x, boundary, rel, q, trig, mask, *csr.by_dst, variant, False)[0]
        ctx.csr, ctx.variant = csr, variant
        ctx.save_for_backward(x, rel, q, trig, mask)
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        x, rel, q, trig, mask = ctx.saved_tensors
        need_x, need_b, need_rel, need_q = ctx.needs_input_grad[:4]
        grad = grad.contiguous()
        gx = grel = gq = None
        if need_x or need_rel or need_q:
            gx, grel, gq = kernel().backward(x, rel, q, trig, mask, *ctx.csr.by_src, ctx.variant, False,
                                             grad, _EMPTY.to(x.dtype), need_x, need_rel,
                                             need_q and q.numel() > 0)
        return (gx if need_x else None, grad if need_b else None, grel if need_rel else None,
                gq if need_q else None, None, None, None, None)


class FusedPNA(torch.autograd.Function):
    """(x, boundary, rel, query) -> PNA features (N, B, 12d); deg (N, 1|B), scal (N, 1|B, 3) fixed."""

    @staticmethod
    def forward(ctx, x, boundary, rel, query, csr, trig, mask, variant, deg, scal):
        mod = kernel()
        q = query if query is not None else _EMPTY.to(x.dtype)
        s, sq, hilo, cnt = mod.forward(x, boundary, rel, q, trig, mask, *csr.by_dst, variant, True)
        out = mod.combine_forward(s, sq, hilo, deg, scal, STD_EPS)
        ctx.csr, ctx.variant = csr, variant
        ctx.save_for_backward(x, boundary, rel, q, trig, mask, s, sq, hilo, cnt, deg, scal)
        return out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad):
        mod = kernel()
        x, boundary, rel, q, trig, mask, s, sq, hilo, cnt, deg, scal = ctx.saved_tensors
        need_x, need_b, need_rel, need_q = ctx.needs_input_grad[:4]
        gpack, gb = mod.combine_backward(grad.contiguous(), s, sq, hilo, cnt, deg, scal, boundary,
                                         STD_EPS, need_b)
        gx = grel = gq = None
        if need_x or need_rel or need_q:
            gx, grel, gq = mod.backward(x, rel, q, trig, mask, *ctx.csr.by_src, ctx.variant, True,
                                        gpack, hilo, need_x, need_rel, need_q and q.numel() > 0)
        return (gx if need_x else None, gb if need_b else None, grel if need_rel else None,
                gq if need_q else None, None, None, None, None, None, None)


def propagate_fused(x, boundary, rel, edge_index, edge_type, edge_time, query_time, query_state,
                    message, aggregate, edge_mask=None, degree_scale=None):
    """Same contract as propagate_reference (inputs already checked), via the fused kernel."""
    if degree_scale is not None and degree_scale.requires_grad:  # the kernel treats it as constant
        return propagate_reference(x, boundary, rel, edge_index, edge_type, edge_time, query_time,
                                   query_state, message, aggregate, edge_mask, degree_scale)
    N, B, d = x.shape
    dtype = x.dtype
    csr = graph_csr(edge_index, edge_type, edge_time, N)
    trig = (_EMPTY.to(dtype) if message == "distmult"
            else trig_table(query_time, csr.times, d, dtype, message))
    mask = _EMPTY.bool() if edge_mask is None else edge_mask.contiguous()
    query = query_state.to(dtype).contiguous() if message in GATED else None
    args = (x.contiguous(), boundary.to(dtype).contiguous(), rel.to(dtype).contiguous(), query,
            csr, trig, mask, VARIANTS[message])
    if aggregate == "sum":
        return FusedSum.apply(*args)
    deg = in_degree(csr.dst, N, edge_mask, dtype)
    scal = degree_scalers(deg) if degree_scale is None else degree_scale
    if scal.dim() == 2:
        scal = scal.unsqueeze(1)
    return FusedPNA.apply(*args, deg.contiguous(), scal.to(dtype).contiguous())
