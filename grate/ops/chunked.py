"""Memory-bounded temporal message passing in plain PyTorch (any device, e.g. CUDA).

Edges are processed in chunks of about CHUNK_ELEMENTS message values: the forward keeps only the
aggregates, the backward recomputes each chunk's messages under autograd and backpropagates it
at once, so at most one chunk of (E_chunk, B, d) activations is alive instead of several full
(E, B, d) tensors. Gradients of max/min are split evenly among tied maximisers (as torch's
scatter_reduce does), so results match the reference path. No compiler needed.
"""
from __future__ import annotations

import torch

from .propagate import in_degree, messages, pna_combine

CHUNK_ELEMENTS = 1 << 22  # message values per chunk (16 MiB in float32)


def _chunks(E, B, d, chunk_elements):
    step = max(1, chunk_elements // max(1, B * d))
    return [(a, min(E, a + step)) for a in range(0, E, step)]


class ChunkedMessagePassing(torch.autograd.Function):
    """(x, boundary, rel, query) -> sum (N, B, d), or (sum, sumsq, max, min) for PNA."""

    @staticmethod
    def forward(ctx, x, boundary, rel, query, graph, message, pna, chunk_elements):
        src, dst, etype, dt, keep = graph
        ctx.graph, ctx.message, ctx.pna = graph, message, pna
        ctx.spans = _chunks(src.numel(), x.shape[1], x.shape[2], chunk_elements)
        s = boundary.clone()
        if pna:
            sq, mx, mn = boundary * boundary, boundary.clone(), boundary.clone()
        for a, b in ctx.spans:
            m = messages(x, rel, src[a:b], etype[a:b], dt[a:b], query, message)
            k = None if keep is None else keep[a:b]
            m0 = m if k is None else m * k
            s.index_add_(0, dst[a:b], m0)
            if pna:
                sq.index_add_(0, dst[a:b], m0 * m0)
                idx = dst[a:b].view(-1, 1, 1).expand_as(m)
                mx.scatter_reduce_(0, idx, m if k is None else m.masked_fill(~k, float("-inf")), "amax")
                mn.scatter_reduce_(0, idx, m if k is None else m.masked_fill(~k, float("inf")), "amin")
        if pna:
            ctx.save_for_backward(x, boundary, rel, query, mx, mn)
            return s, sq, mx, mn
        ctx.save_for_backward(x, boundary, rel, query)
        return s

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, *grads):
        src, dst, etype, dt, keep = ctx.graph
        need_x, need_b, need_rel, need_q = ctx.needs_input_grad[:4]
        if ctx.pna:
            x, boundary, rel, query, mx, mn = ctx.saved_tensors
        else:
            x, boundary, rel, query = ctx.saved_tensors
        zeros = torch.zeros_like(boundary)
        gs = grads[0] if grads[0] is not None else zeros
        if ctx.pna:
            gsq, gmx, gmn = (g if g is not None else zeros for g in grads[1:])
            # ties: the max/min gradient is split evenly among all equal values (boundary included)
            cmx, cmn = (boundary == mx).to(x.dtype), (boundary == mn).to(x.dtype)
            with torch.no_grad():
                for a, b in ctx.spans:
                    m = messages(x, rel, src[a:b], etype[a:b], dt[a:b], query, ctx.message)
                    hi, lo = m == mx[dst[a:b]], m == mn[dst[a:b]]
                    if keep is not None:
                        hi, lo = hi & keep[a:b], lo & keep[a:b]
                    cmx.index_add_(0, dst[a:b], hi.to(x.dtype))
                    cmn.index_add_(0, dst[a:b], lo.to(x.dtype))
            gmx, gmn = gmx / cmx, gmn / cmn
        leaves = [t.detach().requires_grad_(need) if t is not None else None
                  for t, need in ((x, need_x), (rel, need_rel), (query, need_q))]
        xl, rl, ql = leaves
        wanted = [t for t in leaves if t is not None and t.requires_grad]
        if wanted:
            for a, b in ctx.spans:
                d_ = dst[a:b]
                with torch.enable_grad():
                    m = messages(xl, rl, src[a:b], etype[a:b], dt[a:b], ql, ctx.message)
                with torch.no_grad():
                    gm = gs[d_]
                    if ctx.pna:
                        md = m.detach()
                        gm = gm + 2 * md * gsq[d_] + (md == mx[d_]) * gmx[d_] + (md == mn[d_]) * gmn[d_]
                    if keep is not None:
                        gm = gm * keep[a:b]
                torch.autograd.backward(m, gm, inputs=wanted)
        gb = None
        if need_b:
            gb = gs.clone()
            if ctx.pna:
                gb += 2 * boundary * gsq + (boundary == mx) * gmx + (boundary == mn) * gmn
        out = []
        for t, need in zip(leaves, (need_x, need_rel, need_q)):
            out.append(None if (t is None or not need) else
                       (t.grad if t.grad is not None else torch.zeros_like(t)))
        return out[0], gb, out[1], out[2], None, None, None, None


def propagate_chunked(x, boundary, rel, edge_index, edge_type, edge_time, query_time, query_state,
                      message, aggregate, edge_mask=None, degree_scale=None,
                      chunk_elements: int = CHUNK_ELEMENTS):
    """Same contract as propagate_reference, with memory bounded by chunk_elements."""
    src, dst = edge_index[0], edge_index[1]
    dt = query_time.unsqueeze(0) - edge_time.unsqueeze(1)  # (E, B) int
    keep = None if edge_mask is None else edge_mask.t().unsqueeze(-1)
    graph = (src, dst, edge_type, dt, keep)
    if aggregate == "sum":
        return ChunkedMessagePassing.apply(x, boundary, rel, query_state, graph, message, False,
                                           chunk_elements)
    s, sq, mx, mn = ChunkedMessagePassing.apply(x, boundary, rel, query_state, graph, message, True,
                                                chunk_elements)
    deg = in_degree(dst, x.shape[0], edge_mask, x.dtype)
    return pna_combine(s, sq, mx, mn, deg, degree_scale)
