"""The recurrency baseline (Gastinger et al., IJCAI 2024): strict ψ, relaxed ξ and combined ψξ.

Scores of a query ``(s, r, ?, τ)`` with history H = the facts strictly before τ. Relation ids
``r >= R`` are inverses (head prediction) and are handled as relations of their own.

* strict  ``ψ(o) = Σ_{(s,r,o,k) ∈ H} 2^(λ_r (k − τ)) / D`` with ``D = Σ_{i=m_r}^{M_r−1} 2^(λ_r (i − τ))``,
  where m_r / M_r are the first / last time of ANY fact of r in H (what the public code does; the
  paper's Eq. 4 sums over all time steps). D is floored at 1e-15 (it is 0 when r was seen at one time
  step only; the public code floors only its first time step and divides by zero later).
* relaxed ``ξ(o) = #(·, r, o, k) ∈ H / #(·, r, ·, k) ∈ H`` (0 when r has no history).
* combined ``1000 α_r ψ(o) + 1000 (1 − α_r) ξ(o)`` in float64; at test time α_r = 1 becomes 0.99999.

Parameters (:func:`select_parameters`), per relation id on the validation split with history =
train + valid facts before τ, criterion = time-aware filtered MRR of that relation's validation queries
under the tie policy ``expected`` (the public code breaks ties by an unstable sort, which is this in
aggregate): λ_r over :data:`LAMBDAS` scored with ψ alone, then α_r over :data:`ALPHAS` with that λ_r;
in grid order, a value replaces the best so far only if strictly better, starting from λ = 0 / α = 0
with MRR 0. A relation without validation query gets λ = 1.0001, α = 0.99999. ``per-dataset``: one λ,
then one α, selected the same way on the MRR of all validation queries (D stays per relation).

How it runs: one sweep forward in time per evaluation. A triple (s, r, o) keeps a decayed running sum
S = Σ c_k 2^(λ (k − t_u)) relative to its last update time t_u (no overflow for any time span); the
numerator at τ is S · 2^(λ (t_u − τ)). ξ is a running count per (r, o). Queries are ranked on the fly
from sparse scores: only the ψ candidates of (s, r), the filtered answers and the target are touched
explicitly; all other entities score 1000 (1 − α) ξ(o), counted per relation from sorted counts. The
selection grids are evaluated in the same sweep (14 λ values at once, then 13 α values at once).
:class:`RecurrencyBaseline` is also a model of the harness (``prepare`` + ``score`` giving dense rows)
and both paths give identical (greater, equal) counts.
"""
from __future__ import annotations

import dataclasses
import math
import time as _time

import numpy as np
import torch

from ..data.tkg import TKG
from ..errors import ParameterError
from ..evaluation.evaluator import TIES, metrics_from_counts
from ..evaluation.filtering import FILTERS, KnownAnswers, with_inverses
from ..evaluation.protocols import EvalResult, Task, all_queries

LAMBDAS = (0.0, 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.5, 0.9, 1.0001)
ALPHAS = (0.0, 0.00001, 0.0001, 0.001, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999, 0.99999, 1.0)
DEFAULT_LAMBDA, DEFAULT_ALPHA = 1.0001, 0.99999
TEST_ALPHA_FOR_ONE = 0.99999  # α = 1 at test time: ξ still fills ψ's gaps
VARIANTS = ("combined", "strict", "relaxed")
PARAMS = ("per-relation", "per-dataset")
D_FLOOR = 1e-15
_PAIRS = 1 << 18  # ψ candidates of distinct (s, r) queries per vectorised block


# ----------------------------------------------------------------------------------------- history
@dataclasses.dataclass
class _Index:
    """Static structure of a history given as facts ``(s, r, o, k)`` with inverse relation ids.

    Events ``row_*`` are the distinct (triple u, time k) pairs with their multiplicity ``row_c``,
    sorted by k. Triples are sorted by (s, r, o), so the triples of one (s, r) form the block
    ``sr_start .. sr_end``; ``ro_keys`` are the distinct (r, o) pairs (key r * N + o).
    """

    N: int
    R2: int
    row_k: np.ndarray
    row_u: np.ndarray
    row_c: np.ndarray
    row_v: np.ndarray
    row_r: np.ndarray
    trip_obj: np.ndarray
    trip_rel: np.ndarray
    trip_first: np.ndarray
    sr_keys: np.ndarray
    sr_start: np.ndarray
    sr_end: np.ndarray
    ro_keys: np.ndarray
    ro_rel: np.ndarray
    total: int

    @classmethod
    def build(cls, facts: np.ndarray, num_entities: int, num_relations2: int) -> "_Index":
        f = np.asarray(facts, dtype=np.int64).reshape(-1, 4)
        N, R2 = int(num_entities), int(num_relations2)
        s, r, o, k = f[:, 0], f[:, 1], f[:, 2], f[:, 3]
        trip_keys, u = np.unique((s * R2 + r) * N + o, return_inverse=True)
        u = u.reshape(-1)
        U = len(trip_keys)
        if len(f):
            kmin = int(k.min())
            events, counts = np.unique((k - kmin) * U + u, return_counts=True)  # sorted by k, then u
            row_k, row_u = events // U + kmin, events % U
        else:
            counts = row_k = row_u = np.zeros(0, np.int64)
        trip_sr = trip_keys // N
        trip_obj, trip_rel = trip_keys % N, trip_sr % R2
        trip_first = np.zeros(U, np.int64)
        firsts, idx = np.unique(row_u, return_index=True)  # first occurrence = earliest time
        trip_first[firsts] = row_k[idx]
        sr_keys, sr_start = np.unique(trip_sr, return_index=True)
        sr_end = np.append(sr_start[1:], U).astype(np.int64)
        ro_keys, trip_v = np.unique(trip_rel * N + trip_obj, return_inverse=True)
        trip_v = trip_v.reshape(-1)
        return cls(N, R2, row_k, row_u, counts.astype(np.int64), trip_v[row_u], trip_rel[row_u], trip_obj,
                   trip_rel, trip_first, sr_keys, sr_start.astype(np.int64), sr_end, ro_keys, ro_keys // N,
                   int(counts.sum()))

    def candidates(self, s: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(query index, triple u) for every triple (s, r, ·) of the whole history (filter by time later)."""
        start, size = self.blocks(s, r)
        rows = np.repeat(np.arange(len(s)), size)
        within = np.arange(size.sum()) - np.repeat(np.cumsum(size) - size, size)
        return rows, np.repeat(start, size) + within

    def blocks(self, s, r):
        sr = np.asarray(s, np.int64) * self.R2 + np.asarray(r, np.int64)
        if len(self.sr_keys) == 0:
            return np.zeros(len(sr), np.int64), np.zeros(len(sr), np.int64)
        pos = np.minimum(np.searchsorted(self.sr_keys, sr), len(self.sr_keys) - 1)
        hit = self.sr_keys[pos] == sr
        return np.where(hit, self.sr_start[pos], 0), np.where(hit, self.sr_end[pos] - self.sr_start[pos], 0)


class _Sweep:
    """The running statistics of an :class:`_Index` at time τ, for L values of λ per relation at once."""

    def __init__(self, index: _Index, lam_rel: np.ndarray):
        self.ix = index
        self.lam_rel = np.asarray(lam_rel, dtype=np.float64).reshape(index.R2, -1)  # (2R, L)
        self.lam = self.lam_rel[index.trip_rel]  # (U, L)
        self.S = np.zeros_like(self.lam)
        self.t_upd = index.trip_first.copy()
        self.cnt_ro = np.zeros(len(index.ro_keys), np.int64)
        self.cnt_r = np.zeros(index.R2, np.int64)
        big = np.iinfo(np.int64).max
        self.first_r = np.full(index.R2, big, np.int64)
        self.last_r = np.full(index.R2, -big, np.int64)
        self.pos, self.tau, self._sorted, self._D = 0, None, None, None

    @property
    def L(self) -> int:
        return self.lam_rel.shape[1]

    def advance(self, tau: int) -> None:
        """Fold in every fact with time < τ (τ must not decrease)."""
        tau = int(tau)
        if self.tau is not None and tau < self.tau:
            raise ValueError(f"time went backwards ({tau} < {self.tau}); the sweep only moves forward")
        ix = self.ix
        end = int(np.searchsorted(ix.row_k, tau, side="left"))
        if end > self.pos:
            sl = slice(self.pos, end)
            u, k, c = ix.row_u[sl], ix.row_k[sl], ix.row_c[sl]
            uu, inv = np.unique(u, return_inverse=True)
            contrib = c[:, None] * np.exp2(self.lam[u] * (k - tau)[:, None].astype(np.float64))
            add = np.stack([np.bincount(inv, contrib[:, j], minlength=len(uu)) for j in range(self.L)], axis=1)
            decay = np.exp2(self.lam[uu] * (self.t_upd[uu] - tau)[:, None].astype(np.float64))
            self.S[uu] = self.S[uu] * decay + add
            self.t_upd[uu] = tau
            self.cnt_ro += np.bincount(ix.row_v[sl], c, minlength=len(self.cnt_ro)).astype(np.int64)
            rel = ix.row_r[sl]
            self.cnt_r += np.bincount(rel, c, minlength=ix.R2).astype(np.int64)
            np.minimum.at(self.first_r, rel, k)
            np.maximum.at(self.last_r, rel, k)
            self.pos = end
        self.tau, self._sorted, self._D = tau, None, None

    # ------------------------------------------------------------------ scores at τ
    def denominator(self, rel: np.ndarray) -> np.ndarray:
        """D of ψ for relations ``rel`` -> ``(len(rel), L)``, floored at :data:`D_FLOOR`."""
        if self._D is None:
            lo, hi = self.first_r, self.last_r
            seen = hi >= lo
            span = np.where(seen, hi - lo, 0).astype(np.float64)[:, None]
            gap = np.where(seen, hi - self.tau, 0).astype(np.float64)[:, None]  # M_r − τ < 0
            lam = self.lam_rel
            pos = lam > 0
            safe = np.where(pos, lam, 1.0)
            # Σ_{i=m}^{M-1} 2^(λ(i-τ)) = 2^(λ(M-τ)) (1 - 2^(-λ(M-m))) / (2^λ - 1) for λ > 0; M - m for λ = 0
            geo = np.exp2(safe * gap) * -np.expm1(-safe * span * math.log(2)) / np.expm1(safe * math.log(2))
            self._D = np.maximum(np.where(pos, geo, span), D_FLOOR)
        return self._D[rel]

    def psi(self, u: np.ndarray, rel: np.ndarray) -> np.ndarray:
        """ψ of triples ``u`` (seen before τ) -> ``(len(u), L)``."""
        num = self.S[u] * np.exp2(self.lam[u] * (self.t_upd[u] - self.tau)[:, None].astype(np.float64))
        return num / self.denominator(rel)

    def xi(self, rel: np.ndarray, obj: np.ndarray) -> np.ndarray:
        """ξ(obj) for relation ``rel`` (element-wise) at τ."""
        keys = self.ix.ro_keys
        if len(keys) == 0:
            return np.zeros(len(rel))
        key = rel * self.ix.N + obj
        pos = np.minimum(np.searchsorted(keys, key), len(keys) - 1)
        cnt = np.where(keys[pos] == key, self.cnt_ro[pos], 0)
        tot = self.cnt_r[rel]
        return np.where(tot > 0, cnt / np.maximum(tot, 1), 0.0)

    def count_at_least(self, rel: np.ndarray, c: np.ndarray) -> np.ndarray:
        """#entities o with count(r, o) >= c (c >= 1), for ``rel`` broadcast against ``c``."""
        if self._sorted is None:
            nz = np.flatnonzero(self.cnt_ro)
            M = self.ix.total + 3
            self._sorted = (np.sort(self.ix.ro_rel[nz] * M + self.cnt_ro[nz]), M)
        K, M = self._sorted
        end = np.searchsorted(K, (rel + 1) * M)
        return end - np.searchsorted(K, rel * M + np.clip(c, 0, M - 1))

    def seen(self, u: np.ndarray) -> np.ndarray:
        return self.ix.trip_first[u] < self.tau


# ----------------------------------------------------------------------------------------- ranking
def _count_block(sw: _Sweep, q: np.ndarray, known: KnownAnswers, a1: np.ndarray,
                 a2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(greater, equal) ``(n, L, A)`` of queries ``q`` = rows (s, r, o) at the sweep's τ.

    ``known``: the filter (answers known at τ are not counted; the target never is).
    ``a1, a2``: ``(n, A)`` weights of ψ and ξ per query and setting (a function of the relation).

    Every entity o first counts with its score outside the ψ candidates, b(o) = a2 ξ(o) (counted per
    relation from sorted counts); the ψ candidates P of each distinct (s, r) then swap b for their full
    score, and the target and the filtered answers are taken out again with the score they were counted
    with. Candidate scores are computed once per distinct (s, r), not once per target.
    """
    ix, n, N = sw.ix, len(q), sw.ix.N
    s, r, o = q[:, 0], q[:, 1], q[:, 2]
    dkeys, d_of = np.unique(s * ix.R2 + r, return_inverse=True)
    d_of = d_of.reshape(-1)
    rep = np.zeros(len(dkeys), np.int64)
    rep[d_of] = np.arange(n)
    e_d, u = ix.candidates(dkeys // ix.R2, dkeys % ix.R2)
    keep = sw.seen(u)
    e_d, u = e_d[keep], u[keep]
    e_x = ix.trip_obj[u]
    e_r = r[rep[e_d]]
    xi = sw.xi(e_r, e_x)
    w1, w2 = a1[rep[e_d]], a2[rep[e_d]]
    sc = w1[:, None, :] * sw.psi(u, e_r)[:, :, None] + w2[:, None, :] * xi[:, None, None]  # (m, L, A)
    b = w2 * xi[:, None]  # (m, A): what a candidate would score outside P
    e_key = e_d * N + e_x  # sorted: candidates come in (s, r, o) order

    def counted(row, x):  # the score entity x was counted with for query row: full in P, else b
        val = np.broadcast_to((a2[row] * sw.xi(r[row], x)[:, None])[:, None, :], (len(row), sw.L, a1.shape[1]))
        if len(e_key) == 0:
            return val
        key = d_of[row] * N + x
        pos = np.minimum(np.searchsorted(e_key, key), len(e_key) - 1)
        return np.where((e_key[pos] == key)[:, None, None], sc[pos], val)

    t = counted(np.arange(n), o)  # (n, L, A) target scores
    g, e = _outside_counts(sw, r, a2, t)
    # swap b -> full score for the ψ candidates of each query's (s, r)
    for j in range(sc.shape[2]):
        tj = t[:, :, j]
        gb, eb = _segment_counts(e_d, b[:, j], np.repeat(d_of, sw.L), tj.reshape(-1))
        g[:, :, j] -= gb.reshape(n, sw.L)
        e[:, :, j] -= eb.reshape(n, sw.L)
        for l in range(sw.L):
            gs, es = _segment_counts(e_d, sc[:, l, j], d_of, tj[:, l])
            g[:, l, j] += gs
            e[:, l, j] += es
    # take out the filtered answers K of each (s, r) (known at τ; the same for all its targets), then the
    # target itself where it is not among them
    k_d, k_x = known.lookup(np.stack([dkeys // ix.R2, dkeys % ix.R2, np.full(len(dkeys), sw.tau)], axis=1))
    pairs = np.unique(k_d * N + k_x)
    k_d, k_x = pairs // N, pairs % N
    val = counted(rep[k_d], k_x)
    for j in range(sc.shape[2]):
        for l in range(sw.L):
            gk, ek = _segment_counts(k_d, val[:, l, j], d_of, t[:, l, j])
            g[:, l, j] -= gk
            e[:, l, j] -= ek
    in_k = np.isin(d_of * N + o, pairs, assume_unique=False)
    e -= (~in_k)[:, None, None]
    return g, e


def _segment_counts(seg: np.ndarray, vals: np.ndarray, q_seg: np.ndarray, thr: np.ndarray):
    """For each threshold: #(vals > thr) and #(vals == thr) among the values of its segment.

    ``seg`` (sorted) and ``vals``: the elements; ``q_seg, thr``: one threshold per entry.
    """
    if len(vals) == 0:
        return np.zeros(len(thr), np.int64), np.zeros(len(thr), np.int64)
    K = len(vals) + len(thr) + 1
    if not vals.any():  # all zero (e.g. no ξ weight): one comparison per threshold
        size = np.searchsorted(seg, q_seg + 1) - np.searchsorted(seg, q_seg)
        return np.zeros(len(thr), np.int64), np.where(thr == 0, size, 0)
    _, rank = np.unique(np.concatenate([vals, thr]), return_inverse=True)  # equal floats, equal rank
    rank = rank.reshape(-1)
    keys = np.sort(seg * K + rank[:len(vals)])
    qk = q_seg * K + rank[len(vals):]
    right = np.searchsorted(keys, qk, side="right")
    left = np.searchsorted(keys, qk, side="left")
    end = np.searchsorted(keys, (q_seg + 1) * K, side="left")
    return end - right, right - left


def _outside_counts(sw: _Sweep, r: np.ndarray, a2: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Over ALL entities o: #(1000(1-α) ξ(o) > t) and #(... == t), exactly as float64 comparisons."""
    N = sw.ix.N
    tot = sw.cnt_r[r].astype(np.float64)[:, None, None]
    w = a2[:, None, :]
    flat = (w == 0) | (tot == 0)  # every entity scores exactly 0
    zero_eq = (t == 0)
    g_flat, e_flat = np.zeros(t.shape, np.int64), np.where(zero_eq, N, 0)
    if flat.all():
        return g_flat, e_flat
    safe_w = np.where(w > 0, w, 1.0)
    safe_tot = np.where(tot > 0, tot, 1.0)
    est = np.floor(np.clip(t * safe_tot / safe_w, -4.0, sw.ix.total + 4.0)).astype(np.int64)
    cands = est[..., None] + np.arange(-2, 3)
    vals = safe_w[..., None] * (cands / safe_tot[..., None])  # the same float ops as w * (count / total)
    c_gt = np.maximum(est - 2 + (vals <= t[..., None]).sum(-1), 1)  # smallest count scoring above t
    c_ge = np.maximum(est - 2 + (vals < t[..., None]).sum(-1), 1)
    rel = r[:, None, None]
    above = sw.count_at_least(rel, c_gt)
    equal = sw.count_at_least(rel, c_ge) - above
    zeros = N - sw.count_at_least(rel, np.ones_like(c_gt))
    g = np.where(flat, g_flat, above)
    e = np.where(flat, e_flat, equal + np.where(zero_eq, zeros, 0))
    return g, e


def _dense_block(sw: _Sweep, s: np.ndarray, r: np.ndarray, a1: np.ndarray, a2: np.ndarray) -> np.ndarray:
    """Scores ``(B, N)`` of queries (s, r) at τ with one λ per relation (L = 1)."""
    ix, B = sw.ix, len(s)
    p_row, u = ix.candidates(s, r)
    keep = sw.seen(u)
    p_row, u = p_row[keep], u[keep]
    psi = np.zeros((B, ix.N))
    psi[p_row, ix.trip_obj[u]] = sw.psi(u, r[p_row])[:, 0]
    xi = np.zeros((B, ix.N))
    lo = np.searchsorted(ix.ro_keys, r * ix.N)
    size = np.searchsorted(ix.ro_keys, (r + 1) * ix.N) - lo
    x_row = np.repeat(np.arange(B), size)
    v = np.repeat(lo, size) + np.arange(size.sum()) - np.repeat(np.cumsum(size) - size, size)
    xi[x_row, ix.ro_keys[v] % ix.N] = sw.xi(r[x_row], ix.ro_keys[v] % ix.N)
    return a1[:, None] * psi + a2[:, None] * xi


def _sweep_counts(index: _Index, lam_rel: np.ndarray, queries: np.ndarray, known: KnownAnswers,
                  a1_rel: np.ndarray, a2_rel: np.ndarray, progress: bool = False, desc: str = "recurrency"):
    """Rank every query row (s, r, o, τ): (greater, equal) of shape ``(n, L, A)``.

    ``lam_rel`` ``(2R, L)``: λ values per relation (all evaluated at once); ``a1_rel, a2_rel``
    ``(2R, A)``: weights of ψ and ξ per relation and setting.
    """
    q = np.asarray(queries, dtype=np.int64).reshape(-1, 4)
    L, A = np.shape(lam_rel)[1], a1_rel.shape[1]
    greater = np.zeros((len(q), L, A), np.int64)
    equal = np.zeros((len(q), L, A), np.int64)
    if len(q) == 0:
        return greater, equal
    order = np.argsort(q[:, 3], kind="stable")
    taus, starts = np.unique(q[order, 3], return_index=True)
    bounds = np.append(starts, len(q))
    sweep = _Sweep(index, lam_rel)
    steps = range(len(taus))
    if progress:
        from tqdm.auto import tqdm

        steps = tqdm(steps, desc=desc, unit="step", leave=False)
    for i in steps:
        sweep.advance(taus[i])
        idx = order[bounds[i]:bounds[i + 1]]
        dk = q[idx, 0] * index.R2 + q[idx, 1]
        by = np.argsort(dk, kind="stable")
        idx, dk = idx[by], dk[by]
        new = np.r_[True, dk[1:] != dk[:-1]]
        _, size = index.blocks(q[idx, 0], q[idx, 1])
        work = np.cumsum(np.where(new, size, 0) + 1)
        cut = (work[new] // _PAIRS)[np.cumsum(new) - 1]  # never splits the rows of one (s, r)
        for c in np.unique(cut):
            sub = idx[cut == c]
            rel = q[sub, 1]
            g, e = _count_block(sweep, q[sub, :3], known, a1_rel[rel], a2_rel[rel])
            greater[sub], equal[sub] = g, e
    return greater, equal


def reciprocal_ranks(greater, equal, ties: str = "expected") -> np.ndarray:
    """Per-query reciprocal rank under a tie policy (``expected`` = expectation under random tie-breaking)."""
    g = torch.as_tensor(np.asarray(greater, dtype=np.float64))
    e = torch.as_tensor(np.asarray(equal, dtype=np.float64))
    if ties == "expected":
        euler = 0.5772156649015329
        h = lambda n: torch.where(n > 0, torch.digamma(n + 1.0) + euler, torch.zeros_like(n))  # noqa: E731
        return ((h(g + e + 1) - h(g)) / (e + 1)).numpy()
    rank = {"optimistic": g + 1, "pessimistic": g + e + 1, "average": g + e / 2 + 1}[ties]
    return (1.0 / rank).numpy()


# ----------------------------------------------------------------------------------------- selection
@dataclasses.dataclass
class Selection:
    """Selected λ and α per relation id of the fitting graph (``2R`` ids, inverses last).

    ``lambda_mrr`` / ``alpha_mrr``: validation MRR per relation id and grid value (NaN where a relation
    has no validation query; per-dataset: one row). ``alpha`` is stored as selected (1 stays 1).
    """

    relations: np.ndarray
    variant: str
    mode: str
    lam: np.ndarray
    alpha: np.ndarray
    n_valid: np.ndarray
    lambda_mrr: np.ndarray | None = None
    alpha_mrr: np.ndarray | None = None
    ties: str = "expected"
    seconds: float = 0.0

    def params_for(self, relations) -> tuple[np.ndarray, np.ndarray, int]:
        """λ and α for the ``2R'`` relation ids of another graph, matched by relation name.

        Relations unknown to the fitting graph get the default (per-relation) or the dataset's pair
        (per-dataset). Returns (λ, α, number of relations of ``relations`` matched to a relation that
        had validation queries in either direction).
        """
        names = [str(x) for x in relations]
        R, R_own = len(names), len(self.relations)
        where = {str(x): i for i, x in enumerate(self.relations)}
        idx = np.array([where.get(x, -1) for x in names], dtype=np.int64)
        if self.mode == "per-dataset" and R_own:
            fill_lam, fill_alpha = self.lam[0], self.alpha[0]
        else:
            fill_lam, fill_alpha = DEFAULT_LAMBDA, DEFAULT_ALPHA
        lam = np.full(2 * R, fill_lam)
        alpha = np.full(2 * R, fill_alpha)
        known = idx >= 0
        for inv in (0, 1):
            lam[inv * R + np.flatnonzero(known)] = self.lam[inv * R_own + idx[known]]
            alpha[inv * R + np.flatnonzero(known)] = self.alpha[inv * R_own + idx[known]]
        fitted = known.copy()
        if R_own:
            fitted[known] = (self.n_valid[idx[known]] + self.n_valid[R_own + idx[known]]) > 0
        return lam, alpha, int(fitted.sum())

    def to_dict(self) -> dict:
        """JSON-ready: per relation (``name`` and ``name (inverse)``) λ, α, #valid queries, MRRs."""
        R = len(self.relations)
        names = [str(x) for x in self.relations] + [f"{x} (inverse)" for x in self.relations]
        per = {}
        for i, name in enumerate(names):
            row = {"lambda": float(self.lam[i]), "alpha": float(self.alpha[i]), "valid_queries": int(self.n_valid[i])}
            if self.mode == "per-relation" and self.n_valid[i] > 0:
                if self.lambda_mrr is not None:
                    row["valid_mrr_lambda"] = _finite(self.lambda_mrr[i])
                if self.alpha_mrr is not None:
                    row["valid_mrr_alpha"] = _finite(self.alpha_mrr[i])
                row["valid_mrr"] = _selected_mrr(self, i)
            per[name] = row
        out = {"variant": self.variant, "params": self.mode, "selection_ties": self.ties,
               "lambda_grid": list(LAMBDAS), "alpha_grid": list(ALPHAS),
               "default": {"lambda": DEFAULT_LAMBDA, "alpha": DEFAULT_ALPHA},
               "relations_with_valid_queries": int((self.n_valid > 0).sum()), "relation_ids": 2 * R,
               "relations": per}  # no timings: the same data give a byte-identical file
        if self.mode == "per-dataset":
            out["lambda"] = float(self.lam[0]) if len(self.lam) else DEFAULT_LAMBDA
            out["alpha"] = float(self.alpha[0]) if len(self.alpha) else DEFAULT_ALPHA
            if self.lambda_mrr is not None:
                out["valid_mrr_lambda"] = _finite(self.lambda_mrr[0])
            if self.alpha_mrr is not None:
                out["valid_mrr_alpha"] = _finite(self.alpha_mrr[0])
        return out


def _finite(values) -> list:
    return [None if not np.isfinite(v) else float(v) for v in np.asarray(values, dtype=np.float64)]


def _selected_mrr(sel: Selection, i: int) -> float | None:
    table, grid, value = ((sel.alpha_mrr, ALPHAS, sel.alpha[i]) if sel.alpha_mrr is not None
                          else (sel.lambda_mrr, LAMBDAS, sel.lam[i]))
    if table is None:
        return None
    return float(table[i][list(grid).index(value)])


def _first_best(mrr: np.ndarray, grid) -> np.ndarray:
    """Per row the first grid value with the highest MRR if it beats 0, else grid[0] (= 0 in both grids)."""
    best = np.argmax(np.nan_to_num(mrr, nan=-1.0), axis=-1)
    top = np.take_along_axis(np.nan_to_num(mrr, nan=-1.0), best[..., None], -1)[..., 0]
    return np.where(top > 0, np.asarray(grid)[best], grid[0])


def select_parameters(graph: TKG, train=("train",), valid: str | None = "valid", variant: str = "combined",
                      params: str = "per-relation", ties: str = "expected", progress: bool = False) -> Selection:
    """Select λ (then α) per relation id, or per dataset, on the ``valid`` split of ``graph``.

    History of a validation query at τ: facts of ``train`` and ``valid`` strictly before τ; filter:
    time-aware over ``train`` + ``valid``. ``relaxed`` needs no parameter; ``strict`` selects λ only.
    """
    _check(variant, params, ties)
    start = _time.perf_counter()
    R, N = graph.num_relations, graph.num_entities
    R2 = 2 * R
    lam, alpha = np.full(R2, DEFAULT_LAMBDA), np.full(R2, DEFAULT_ALPHA)
    vq = with_inverses(graph[valid], R) if valid is not None and valid in graph.splits else np.zeros((0, 4), np.int64)
    n_valid = np.bincount(vq[:, 1], minlength=R2) if len(vq) else np.zeros(R2, np.int64)
    sel = Selection(graph.relations, variant, params, lam, alpha, n_valid, ties=ties)
    if variant == "relaxed" or len(vq) == 0:
        sel.seconds = _time.perf_counter() - start
        return sel
    splits = tuple(train) + (valid,)
    facts = graph.facts(*splits)
    index = _Index.build(with_inverses(facts, R), N, R2)
    known = KnownAnswers(facts, N, R, "time-aware")
    rel, has = vq[:, 1], n_valid > 0

    def mrr_table(g, e):  # (n, G) counts -> (2R or 1, G) MRR
        rr = reciprocal_ranks(g, e, ties)
        if params == "per-dataset":
            return rr.mean(axis=0, keepdims=True)
        sums = np.stack([np.bincount(rel, rr[:, j], minlength=R2) for j in range(rr.shape[1])], axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(has[:, None], sums / n_valid[:, None], np.nan)

    # 1) λ with ψ alone (α = 1: weights 1000 and 0)
    grid = np.tile(np.asarray(LAMBDAS), (R2, 1))
    g, e = _sweep_counts(index, grid, vq, known, np.full((R2, 1), 1000.0), np.zeros((R2, 1)), progress, "select λ")
    sel.lambda_mrr = mrr_table(g[:, :, 0], e[:, :, 0])
    chosen = _first_best(sel.lambda_mrr, LAMBDAS)
    if params == "per-dataset":
        lam[:] = chosen[0]
    else:
        lam[has] = chosen[has]
    # 2) α with the chosen λ, combined score
    if variant == "combined":
        alphas = np.asarray(ALPHAS)
        a1, a2 = np.tile(1000 * alphas, (R2, 1)), np.tile(1000 * (1 - alphas), (R2, 1))
        g, e = _sweep_counts(index, lam[:, None], vq, known, a1, a2, progress, "select α")
        sel.alpha_mrr = mrr_table(g[:, 0, :], e[:, 0, :])
        chosen = _first_best(sel.alpha_mrr, ALPHAS)
        if params == "per-dataset":
            alpha[:] = chosen[0]
        else:
            alpha[has] = chosen[has]
    sel.seconds = _time.perf_counter() - start
    return sel


def _check(variant: str, params: str, ties: str) -> None:
    if variant not in VARIANTS:
        raise ParameterError(f"variant={variant!r} is unknown; choose one of {', '.join(VARIANTS)}")
    if params not in PARAMS:
        raise ParameterError(f"params={params!r} is unknown; choose one of {', '.join(PARAMS)}")
    if ties not in TIES:
        raise ParameterError(f"ties={ties!r} is unknown; choose one of {', '.join(TIES)}")


# ----------------------------------------------------------------------------------------- model
HISTORIES = ("with-test", "context")  # non-forecasting tasks: context + earlier query truth, or context only

class RecurrencyBaseline:
    """The recurrency baseline as a model of the evaluation harness, plus a fast ranking path.

    ``fit(tkg)`` selects parameters on ``tkg``'s train + valid splits. ``prepare(task)`` (called by
    :func:`tkg_indt.evaluation.evaluate`) fits on ``task.train`` / ``task.valid`` when not fitted yet and
    builds the history: ``task.history`` for forecasting tasks, else ``task.context`` + the query split
    (inductive: msg ∪ test; with ``history="context"`` msg only, the graph a learned model sees),
    always restricted to facts strictly before each query's τ.
    ``score(task, queries)`` -> dense float64 ``(B, N)``; ``evaluate(task)`` ranks on the fly (same
    counts, far less work). Parameters reach another graph (an inference graph) by relation name:
    relations the fitting graph does not know get λ = 1.0001, α = 0.99999 (per-relation) or the
    dataset's pair (per-dataset).
    """

    def __init__(self, variant: str = "combined", params: str = "per-relation", selection_ties: str = "expected",
                 progress: bool = False, history: str = "with-test"):
        _check(variant, params, selection_ties)
        if history not in HISTORIES:
            raise ParameterError(f"history={history!r} is unknown; choose one of {', '.join(HISTORIES)}")
        self.variant, self.params, self.selection_ties, self.progress = variant, params, selection_ties, progress
        self.history = history
        self.selection: Selection | None = None
        self._ready = None
        self.matched_relations = None

    @property
    def name(self) -> str:
        return {"combined": "recurrency", "strict": "recurrency-strict", "relaxed": "recurrency-relaxed"}[self.variant]

    def fit(self, tkg: TKG, train=("train",), valid: str | None = "valid") -> "RecurrencyBaseline":
        self.selection = select_parameters(tkg, train, valid, self.variant, self.params, self.selection_ties,
                                           self.progress)
        self._ready = None
        return self

    # -------------------------------------------------------------- parameters and history of a task
    def weights(self, graph: TKG) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Test-time λ ``(2R,)`` and weights a1 = 1000 α, a2 = 1000 (1 − α) ``(2R,)`` for ``graph``."""
        sel = self.selection
        if sel is None:
            sel = Selection(np.zeros(0, object), self.variant, self.params, np.zeros(0), np.zeros(0), np.zeros(0, int))
        lam, alpha, self.matched_relations = sel.params_for(graph.relations)
        if self.variant == "strict":
            return lam, np.full_like(lam, 1000.0), np.zeros_like(lam)
        if self.variant == "relaxed":
            return np.zeros_like(lam), np.zeros_like(lam), np.full_like(lam, 1000.0)
        alpha = np.where(alpha == 1.0, TEST_ALPHA_FOR_ONE, alpha)
        return lam, 1000 * alpha, 1000 * (1 - alpha)

    def history_splits(self, task: Task) -> tuple[str, ...]:
        if task.forecasting:
            return tuple(task.history)
        if self.history == "context":  # what a learned model sees: the message graph only
            return tuple(task.context)
        return tuple(dict.fromkeys((*task.context, task.queries)))

    def _setup(self, task: Task):
        if self.selection is None and task.train and task.valid:
            self.fit(task.graph, task.train, task.valid)
        graph = task.graph
        lam, a1, a2 = self.weights(graph)
        facts = with_inverses(graph.facts(*self.history_splits(task)), graph.num_relations)
        index = _Index.build(facts, graph.num_entities, 2 * graph.num_relations)
        return lam, a1, a2, index

    # -------------------------------------------------------------- harness interface
    def prepare(self, task: Task) -> None:
        lam, a1, a2, index = self._setup(task)
        self._ready = (task.name, a1, a2, index, _Sweep(index, lam[:, None]), lam)

    def score(self, task: Task, queries) -> np.ndarray:
        """Dense scores ``(B, N)`` for rows (s, r, τ); τ must not decrease across calls."""
        if self._ready is None or self._ready[0] != task.name:
            self.prepare(task)
        _, a1, a2, index, sweep, lam = self._ready
        q = np.asarray(queries, dtype=np.int64).reshape(-1, 3)
        if len(q) and sweep.tau is not None and q[:, 2].min() < sweep.tau:  # asked about the past: restart
            sweep = _Sweep(index, lam[:, None])
            self._ready = (*self._ready[:4], sweep, lam)
        out = np.zeros((len(q), index.N))
        for tau in np.unique(q[:, 2]):
            rows = np.flatnonzero(q[:, 2] == tau)
            sweep.advance(tau)
            s, r = q[rows, 0], q[rows, 1]
            out[rows] = _dense_block(sweep, s, r, a1[r], a2[r])
        return out

    # -------------------------------------------------------------- fast path
    def evaluate(self, task: Task, ties: str = "average", filter: str = "time-aware",
                 queries: np.ndarray | None = None) -> EvalResult:
        """Like :func:`tkg_indt.evaluation.evaluate` (same counts), ranking sparse scores on the fly."""
        if ties not in TIES:
            raise ParameterError(f"ties={ties!r} is unknown; choose one of {', '.join(TIES)}")
        if filter not in FILTERS:
            raise ParameterError(f"filter={filter!r} is unknown; choose one of {', '.join(FILTERS)}")
        start = _time.perf_counter()
        lam, a1, a2, index = self._setup(task)
        graph = task.graph
        q = all_queries(task.query_facts(), graph.num_relations) if queries is None else queries
        known = KnownAnswers(graph.facts(*task.filter) if filter != "raw" else np.zeros((0, 4), np.int64),
                             graph.num_entities, graph.num_relations, filter)
        g, e = _sweep_counts(index, lam[:, None], q, known, a1[:, None], a2[:, None], self.progress, task.name)
        g, e = g[:, 0, 0], e[:, 0, 0]
        return EvalResult(task.name, metrics_from_counts(g, e, ties), q, g, e, _time.perf_counter() - start, ties)

    def describe(self) -> dict:
        out = {"model": self.name, "variant": self.variant, "params": self.params}
        if self.selection is not None:
            out["selection"] = self.selection.to_dict()
        if self.matched_relations is not None:
            out["relations_with_fitted_parameters"] = self.matched_relations
        return out
