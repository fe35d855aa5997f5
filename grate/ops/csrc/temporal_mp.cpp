// Fused temporal message passing (GRATE and ablations) for the CPU.
//
// Messages are computed on the fly and never materialised as (E, B, d) tensors.
// Forward: edges grouped by destination (CSR), each thread owns a range of output rows.
// Backward: messages are recomputed; edges grouped by source, so each thread owns the rows of
// grad_x it writes; grad_rel and grad_query are accumulated in one buffer per work piece and
// summed at the end. No locks, no atomics.
//
// Layouts (all contiguous): x, boundary (N, B, d); rel (B, R2, d); query (B, d); trig
// (B, T, 2d) for the rotation variants, rows (C, S) (see edge_messages) for the t-th distinct edge
// time, or (B, T, d) rows (cos theta_0, sin theta_0, cos theta_1, ..) for sincos; mask (B, E) bool indexed by the original edge id. A graph is given as
// rowptr (N + 1), nbr (E) (the other end point), type (E), trank (E) (time rank), eid (E) (original
// edge id), all int64 and sorted by the owning end point.
#include <torch/extension.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

namespace {

enum Variant { DISTMULT = 0, SINCOS = 1, ROTATION = 2, RELGATE = 3, GRATE = 4 };
constexpr int64_t MAXD = 1024;

// Pre-gate messages of one edge for all B queries into m (B x d) and gates into g (B); on[b]
// says whether query b may use the edge. Rotation uses the swap form
//   m = p * C + swap(p) * S,  p = x_u * r,  C = (c0, c0, c1, c1, ..),  S = (-s0, s0, -s1, s1, ..)
// where swap exchanges the members of each pair; trig rows hold (C, S) (2d values) for the
// rotation variants and (c0, s0, c1, s1, ..) (d values) for sincos. All B exps of an edge are
// evaluated together (pipelined).
template <int V, int D, typename T>
inline void edge_messages(const T* __restrict__ xu, const T* __restrict__ rel, int64_t R2,
                          int64_t r, const T* __restrict__ trig, int64_t Tn, int64_t t,
                          const T* __restrict__ q, const bool* __restrict__ mask, int64_t E,
                          int64_t e, int64_t B, int64_t d_, T inv_sqrt_d, T* __restrict__ m,
                          T* __restrict__ g, bool* __restrict__ on) {
  const int64_t d = D > 0 ? D : d_;
  const int64_t tw = (V == SINCOS) ? d : 2 * d;  // trig row width
  for (int64_t b = 0; b < B; ++b) {
    on[b] = !mask || mask[b * E + e];
    if (!on[b]) { g[b] = T(0); continue; }
    const T* __restrict__ x = xu + b * d;
    const T* __restrict__ rr = rel + (b * R2 + r) * d;
    T* __restrict__ mb = m + b * d;
    if (V == DISTMULT) {
      for (int64_t c = 0; c < d; ++c) mb[c] = x[c] * rr[c];
    } else if (V == SINCOS) {
      const T* __restrict__ cs = trig + (b * Tn + t) * tw;
      for (int64_t c = 0; c < d; ++c) mb[c] = x[c] * rr[c] * cs[c];
    } else {
      const T* __restrict__ cs = trig + (b * Tn + t) * tw;
      T p[MAXD], ps[MAXD];
      for (int64_t c = 0; c < d; ++c) p[c] = x[c] * rr[c];
      for (int64_t c = 0; c < d; c += 2) { ps[c] = p[c + 1]; ps[c + 1] = p[c]; }
      for (int64_t c = 0; c < d; ++c) mb[c] = p[c] * cs[c] + ps[c] * cs[d + c];
    }
    if (V == RELGATE || V == GRATE) {
      const T* __restrict__ qb = q + b * d;
      T s = 0;
#pragma omp simd reduction(+ : s)
      for (int64_t c = 0; c < d; ++c) s += qb[c] * mb[c];
      g[b] = s * inv_sqrt_d;
    } else {
      g[b] = T(1);
    }
  }
  if (V == RELGATE || V == GRATE)
    for (int64_t b = 0; b < B; ++b) g[b] = on[b] ? T(1) / (T(1) + std::exp(-g[b])) : T(0);
}

// Pieces of the node range [0, N) with about equal work (edges + one self-message per node).
std::vector<int64_t> balanced_pieces(const int64_t* rowptr, int64_t N, int64_t pieces) {
  const int64_t total = rowptr[N] + N;
  std::vector<int64_t> bounds(pieces + 1, N);
  bounds[0] = 0;
  for (int64_t p = 1; p < pieces; ++p) {
    const int64_t target = total * p / pieces;
    int64_t lo = bounds[p - 1], hi = N;  // first v with rowptr[v] + v >= target
    while (lo < hi) {
      const int64_t mid = (lo + hi) / 2;
      if (rowptr[mid] + mid < target) lo = mid + 1; else hi = mid;
    }
    bounds[p] = lo;
  }
  return bounds;
}

struct Graph {
  const int64_t *rowptr, *nbr, *type, *trank, *eid;
  Graph(const at::Tensor& rowptr_, const at::Tensor& nbr_, const at::Tensor& type_,
        const at::Tensor& trank_, const at::Tensor& eid_)
      : rowptr(rowptr_.data_ptr<int64_t>()), nbr(nbr_.data_ptr<int64_t>()),
        type(type_.data_ptr<int64_t>()), trank(trank_.data_ptr<int64_t>()),
        eid(eid_.data_ptr<int64_t>()) {}
};

template <int V, bool PNA, int D, typename T>
void forward_impl(const T* x, const T* bnd, const T* rel, const T* q, const T* trig,
                  const bool* mask, const Graph& g, int64_t N, int64_t B, int64_t d_, int64_t R2,
                  int64_t Tn, int64_t E, T* out, T* sq, T* mx, T* mn, int32_t* arg) {
  const int64_t d = D > 0 ? D : d_;
  const T inv_sqrt_d = T(1) / std::sqrt(T(d));
  const int64_t pieces = std::max<int64_t>(1, at::get_num_threads());
  const auto bounds = balanced_pieces(g.rowptr, N, pieces);
  at::parallel_for(0, pieces, 1, [&](int64_t p0, int64_t p1) {
    std::vector<T> mbuf(B * d), gbuf(B);
    std::vector<char> onbuf(B);
    T* m = mbuf.data();
    T* gate = gbuf.data();
    bool* on = reinterpret_cast<bool*>(onbuf.data());
    for (int64_t v = bounds[p0]; v < bounds[p1]; ++v) {
      const int64_t row = v * B * d;
      for (int64_t i = 0; i < B * d; ++i) {
        const T b0 = bnd[row + i];
        out[row + i] = b0;
        if (PNA) {
          sq[row + i] = b0 * b0;
          mx[row + i] = b0;
          mn[row + i] = b0;
        }
      }
      if (PNA)
        for (int64_t i = 0; i < 2 * B * d; ++i) arg[2 * row + i] = -1;
      for (int64_t j = g.rowptr[v]; j < g.rowptr[v + 1]; ++j) {
        const int64_t u = g.nbr[j], r = g.type[j], t = g.trank[j], e = g.eid[j];
        edge_messages<V, D, T>(x + u * B * d, rel, R2, r, trig, Tn, t, q, mask, E, e, B, d,
                               inv_sqrt_d, m, gate, on);
        const int32_t e32 = (int32_t)e;
        for (int64_t b = 0; b < B; ++b) {
          if (!on[b]) continue;
          const T gb = gate[b];
          const T* __restrict__ mb = m + b * d;
          T* __restrict__ o = out + row + b * d;
          if (!PNA) {
            for (int64_t c = 0; c < d; ++c) o[c] += gb * mb[c];
          } else {
            T* __restrict__ s2 = sq + row + b * d;
            T* __restrict__ hi = mx + row + b * d;
            T* __restrict__ lo = mn + row + b * d;
            int32_t* __restrict__ ahi = arg + 2 * (row + b * d);  // (argmax, argmin) of (v, b)
            int32_t* __restrict__ alo = ahi + d;
#pragma omp simd
            for (int64_t c = 0; c < d; ++c) {
              const T val = gb * mb[c];
              o[c] += val;
              s2[c] += val * val;
              const bool up = val > hi[c], down = val < lo[c];
              hi[c] = up ? val : hi[c];
              ahi[c] = up ? e32 : ahi[c];
              lo[c] = down ? val : lo[c];
              alo[c] = down ? e32 : alo[c];
            }
          }
        }
      }
    }
  });
}

template <int V, bool PNA, int D, typename T>
void backward_impl(const T* x, const T* rel, const T* q, const T* trig, const bool* mask,
                   const Graph& g, int64_t N, int64_t B, int64_t d_, int64_t R2, int64_t Tn,
                   int64_t E, const T* grad, const int32_t* arg, T* gx, T* grel, T* gq,
                   bool need_x, bool need_rel, bool need_q, int64_t pieces) {
  const int64_t d = D > 0 ? D : d_;
  const T inv_sqrt_d = T(1) / std::sqrt(T(d));
  const auto bounds = balanced_pieces(g.rowptr, N, pieces);
  at::parallel_for(0, pieces, 1, [&](int64_t p0, int64_t p1) {
    std::vector<T> mbuf(B * d), gbuf(B);
    std::vector<char> onbuf(B);
    T* m = mbuf.data();
    T* gate = gbuf.data();
    bool* on = reinterpret_cast<bool*>(onbuf.data());
    const int64_t tw = (V == SINCOS) ? d : 2 * d;
    for (int64_t p = p0; p < p1; ++p) {
      T* grel_p = grel ? grel + p * B * R2 * d : nullptr;  // this piece's buffers
      T* gq_p = gq ? gq + p * B * d : nullptr;
      for (int64_t u = bounds[p]; u < bounds[p + 1]; ++u) {
        for (int64_t j = g.rowptr[u]; j < g.rowptr[u + 1]; ++j) {
          const int64_t v = g.nbr[j], r = g.type[j], t = g.trank[j], e = g.eid[j];
          edge_messages<V, D, T>(x + u * B * d, rel, R2, r, trig, Tn, t, q, mask, E, e, B, d,
                                 inv_sqrt_d, m, gate, on);
          const int32_t e32 = (int32_t)e;
          for (int64_t b = 0; b < B; ++b) {
            if (!on[b]) continue;
            const T gb = gate[b];
            const T* __restrict__ mb = m + b * d;
            const T* __restrict__ xu = x + (u * B + b) * d;
            const T* __restrict__ rr = rel + (b * R2 + r) * d;
            T gm[MAXD];
            // gradient w.r.t. the final message gb * mb: sum: grad (N, B, d); PNA: grad packs
            // (d sum, d sumsq, d max, d min) per (v, b) as (N, B, 4, d), arg (N, B, 2, d)
            if (!PNA) {
              const T* __restrict__ G = grad + (v * B + b) * d;
              for (int64_t c = 0; c < d; ++c) gm[c] = G[c];
            } else {
              const T* __restrict__ G = grad + (v * B + b) * 4 * d;
              const int32_t* __restrict__ A = arg + (v * B + b) * 2 * d;
              const T two_gb = T(2) * gb;
              // unconditional loads and selects, so that the loop vectorises
#pragma omp simd
              for (int64_t c = 0; c < d; ++c) {
                const T ghi = G[2 * d + c], glo = G[3 * d + c];
                gm[c] = G[c] + two_gb * mb[c] * G[d + c] + (A[c] == e32 ? ghi : T(0)) +
                        (A[d + c] == e32 ? glo : T(0));
              }
            }
            // through the gate: gm becomes the gradient w.r.t. the pre-gate message mb
            if (V == RELGATE || V == GRATE) {
              const T* __restrict__ qb = q + b * d;
              T dot = 0;
#pragma omp simd reduction(+ : dot)
              for (int64_t c = 0; c < d; ++c) dot += gm[c] * mb[c];
              const T coef = dot * gb * (T(1) - gb) * inv_sqrt_d;
              for (int64_t c = 0; c < d; ++c) gm[c] = gb * gm[c] + coef * qb[c];
              if (gq_p) {
                T* __restrict__ gqb = gq_p + b * d;
                for (int64_t c = 0; c < d; ++c) gqb[c] += coef * mb[c];
              }
            }
            // through the rotation / modulation: gm becomes the gradient w.r.t. p = x_u * r
            if (V == SINCOS) {
              const T* __restrict__ cs = trig + (b * Tn + t) * tw;
              for (int64_t c = 0; c < d; ++c) gm[c] *= cs[c];
            } else if (V != DISTMULT) {
              const T* __restrict__ cs = trig + (b * Tn + t) * tw;
              T gs[MAXD];
              for (int64_t c = 0; c < d; ++c) gs[c] = gm[c] * cs[d + c];
              for (int64_t c = 0; c < d; c += 2) {
                gm[c] = gm[c] * cs[c] + gs[c + 1];
                gm[c + 1] = gm[c + 1] * cs[c + 1] + gs[c];
              }
            }
            if (need_x) {
              T* __restrict__ gxu = gx + (u * B + b) * d;
              for (int64_t c = 0; c < d; ++c) gxu[c] += gm[c] * rr[c];
            }
            if (grel_p) {
              T* __restrict__ gr = grel_p + (b * R2 + r) * d;
              for (int64_t c = 0; c < d; ++c) gr[c] += gm[c] * xu[c];
            }
          }
        }
      }
    }
  });
}

// PNA output (N, B, 12d) with index (c * 4 + k) * 3 + s, statistics k = (mean, max, min, std),
// std = sqrt(max(sumsq / deg - mean^2, eps)), scalers scal (N, Bs, 3), deg (N, Bd), Bs, Bd in {1, B}.
template <typename T>
void combine_forward_impl(const T* s, const T* sq, const T* mx, const T* mn, const T* deg,
                          const T* scal, int64_t N, int64_t B, int64_t d, int64_t Bd,
                          int64_t Bs, T eps, T* out) {
  at::parallel_for(0, N * B, 64, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t n = i / B, b = i % B;
      const T dg = deg[n * Bd + (Bd > 1 ? b : 0)];
      const T* sc = scal + (n * Bs + (Bs > 1 ? b : 0)) * 3;
      const T s0 = sc[0], s1 = sc[1], s2 = sc[2];
      T* o = out + i * 12 * d;
      for (int64_t c = 0; c < d; ++c) {
        const T mean = s[i * d + c] / dg;
        const T var = sq[i * d + c] / dg - mean * mean;
        const T f[4] = {mean, mx[i * d + c], mn[i * d + c], std::sqrt(std::max(var, eps))};
        for (int k = 0; k < 4; ++k) {
          o[(c * 4 + k) * 3 + 0] = f[k] * s0;
          o[(c * 4 + k) * 3 + 1] = f[k] * s1;
          o[(c * 4 + k) * 3 + 2] = f[k] * s2;
        }
      }
    }
  });
}

// Gradients of the statistics, packed (N, B, 4, d) as (sum, sumsq, max, min), and of the boundary
// (the self-message: b enters sum, sumsq, and max/min where arg == -1).
template <typename T>
void combine_backward_impl(const T* g, const T* s, const T* sq, const T* deg, const T* scal,
                           const T* bnd, const int32_t* arg, int64_t N, int64_t B, int64_t d,
                           int64_t Bd, int64_t Bs, T eps, T* gpack, T* gb) {
  at::parallel_for(0, N * B, 64, [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t n = i / B, b = i % B;
      const T dg = deg[n * Bd + (Bd > 1 ? b : 0)];
      const T* sc = scal + (n * Bs + (Bs > 1 ? b : 0)) * 3;
      const T s0 = sc[0], s1 = sc[1], s2 = sc[2];
      const T* gi = g + i * 12 * d;
      T* gp = gpack + i * 4 * d;
      for (int64_t c = 0; c < d; ++c) {
        T gf[4];
        for (int k = 0; k < 4; ++k) {
          const T* gk = gi + (c * 4 + k) * 3;
          gf[k] = gk[0] * s0 + gk[1] * s1 + gk[2] * s2;
        }
        const T mean = s[i * d + c] / dg;
        const T var = sq[i * d + c] / dg - mean * mean;
        const T g_var = var >= eps ? gf[3] * T(0.5) / std::sqrt(var) : T(0);
        gp[c] = (gf[0] - T(2) * mean * g_var) / dg;  // d sum
        gp[d + c] = g_var / dg;                        // d sumsq
        gp[2 * d + c] = gf[1];                         // d max
        gp[3 * d + c] = gf[2];                         // d min
        if (gb) {
          const int32_t* a = arg + i * 2 * d;
          gb[i * d + c] = gp[c] + T(2) * bnd[i * d + c] * gp[d + c] +
                          (a[c] < 0 ? gf[1] : T(0)) + (a[d + c] < 0 ? gf[2] : T(0));
        }
      }
    }
  });
}

const bool* mask_ptr(const at::Tensor& mask) {
  return mask.defined() && mask.numel() ? mask.data_ptr<bool>() : nullptr;
}

template <typename T>
const T* opt_ptr(const at::Tensor& t) {
  return t.defined() && t.numel() ? t.data_ptr<T>() : nullptr;
}

#define GRATE_DISPATCH_VARIANT(variant, PNA_, ...)                          \
  switch (variant) {                                                        \
    case DISTMULT: { constexpr int V = DISTMULT; constexpr bool P = PNA_; __VA_ARGS__; break; } \
    case SINCOS: { constexpr int V = SINCOS; constexpr bool P = PNA_; __VA_ARGS__; break; }     \
    case ROTATION: { constexpr int V = ROTATION; constexpr bool P = PNA_; __VA_ARGS__; break; } \
    case RELGATE: { constexpr int V = RELGATE; constexpr bool P = PNA_; __VA_ARGS__; break; }   \
    case GRATE: { constexpr int V = GRATE; constexpr bool P = PNA_; __VA_ARGS__; break; }       \
    default: TORCH_CHECK(false, "unknown message variant ", variant);      \
  }

// Calls body with a compile-time width DD: 32 or 64 for float32, else 0 (runtime width).
template <typename T, typename F>
void dispatch_width(int64_t d, F&& body) {
  if (std::is_same<T, float>::value && d == 32) body(std::integral_constant<int, 32>{});
  else if (std::is_same<T, float>::value && d == 64) body(std::integral_constant<int, 64>{});
  else body(std::integral_constant<int, 0>{});
}

}  // namespace

// Returns [sum] for sum aggregation; [sum, sumsq, max, min, arg] for PNA, arg (N, B, 2, d) int32
// holding the original id of the edge giving the max (slot 0) and min (slot 1), -1 = boundary.
std::vector<at::Tensor> forward(at::Tensor x, at::Tensor boundary, at::Tensor rel, at::Tensor q,
                                at::Tensor trig, at::Tensor mask, at::Tensor rowptr,
                                at::Tensor nbr, at::Tensor type, at::Tensor trank,
                                at::Tensor eid, int64_t variant, bool pna) {
  const int64_t N = x.size(0), B = x.size(1), d = x.size(2), R2 = rel.size(1);
  const int64_t E = nbr.size(0), Tn = trig.defined() && trig.dim() == 3 ? trig.size(1) : 0;
  TORCH_CHECK(d <= MAXD, "hidden dimension ", d, " exceeds ", MAXD);
  TORCH_CHECK(E < (int64_t(1) << 31), "more than 2^31 edges");
  const Graph g(rowptr, nbr, type, trank, eid);
  auto out = at::empty_like(x);
  at::Tensor sq, mx, mn, arg;
  if (pna) {
    sq = at::empty_like(x);
    mx = at::empty_like(x);
    mn = at::empty_like(x);
    arg = at::empty({N, B, 2, d}, x.options().dtype(at::kInt));
  }
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "grate_forward", [&] {
    using T = scalar_t;
    T* s2 = pna ? sq.data_ptr<T>() : nullptr;
    T* hi = pna ? mx.data_ptr<T>() : nullptr;
    T* lo = pna ? mn.data_ptr<T>() : nullptr;
    int32_t* a = pna ? arg.data_ptr<int32_t>() : nullptr;
    dispatch_width<T>(d, [&](auto width) {
      constexpr int DD = decltype(width)::value;
      auto run = [&](auto pna_tag) {
        constexpr bool PN = decltype(pna_tag)::value;
        GRATE_DISPATCH_VARIANT(variant, PN, forward_impl<V, P, DD, T>(
            x.data_ptr<T>(), boundary.data_ptr<T>(), rel.data_ptr<T>(), opt_ptr<T>(q),
            opt_ptr<T>(trig), mask_ptr(mask), g, N, B, d, R2, Tn, E, out.data_ptr<T>(), s2, hi,
            lo, a))
      };
      if (pna) run(std::true_type{}); else run(std::false_type{});
    });
  });
  if (pna) return {out, sq, mx, mn, arg};
  return {out};
}

// Returns [grad_x, grad_rel, grad_q] (undefined where not requested). The graph is grouped by
// source (nbr = destination). grad: (N, B, d) for sum; for PNA the packed (N, B, 4, d) gradients
// of (sum, sumsq, max, min) from combine_backward, with arg from forward.
std::vector<at::Tensor> backward(at::Tensor x, at::Tensor rel, at::Tensor q, at::Tensor trig,
                                 at::Tensor mask, at::Tensor rowptr, at::Tensor nbr,
                                 at::Tensor type, at::Tensor trank, at::Tensor eid,
                                 int64_t variant, bool pna, at::Tensor grad, at::Tensor arg,
                                 bool need_x, bool need_rel, bool need_q) {
  const int64_t N = x.size(0), B = x.size(1), d = x.size(2), R2 = rel.size(1);
  const int64_t E = nbr.size(0), Tn = trig.defined() && trig.dim() == 3 ? trig.size(1) : 0;
  TORCH_CHECK(d <= MAXD, "hidden dimension ", d, " exceeds ", MAXD);
  TORCH_CHECK(grad.is_contiguous() && grad.numel() == (pna ? 4 : 1) * N * B * d,
              "backward: grad has the wrong size");
  need_q = need_q && q.defined() && q.numel() > 0;
  const Graph g(rowptr, nbr, type, trank, eid);
  const int64_t pieces = std::max<int64_t>(1, at::get_num_threads());
  auto gx = at::zeros_like(x);
  auto grel = at::zeros({need_rel ? pieces : 0, B, R2, d}, x.options());
  auto gq = at::zeros({need_q ? pieces : 0, B, d}, x.options());
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "grate_backward", [&] {
    using T = scalar_t;
    const int32_t* a = pna ? arg.data_ptr<int32_t>() : nullptr;
    dispatch_width<T>(d, [&](auto width) {
      constexpr int DD = decltype(width)::value;
      auto run = [&](auto pna_tag) {
        constexpr bool PN = decltype(pna_tag)::value;
        GRATE_DISPATCH_VARIANT(variant, PN, backward_impl<V, P, DD, T>(
            x.data_ptr<T>(), rel.data_ptr<T>(), opt_ptr<T>(q), opt_ptr<T>(trig), mask_ptr(mask),
            g, N, B, d, R2, Tn, E, grad.data_ptr<T>(), a, gx.data_ptr<T>(),
            need_rel ? grel.data_ptr<T>() : nullptr, need_q ? gq.data_ptr<T>() : nullptr, need_x,
            need_rel, need_q, pieces))
      };
      if (pna) run(std::true_type{}); else run(std::false_type{});
    });
  });
  return {need_x ? gx : at::Tensor(), need_rel ? grel.sum(0) : at::Tensor(),
          need_q ? gq.sum(0) : at::Tensor()};
}

// PNA output (N, B, 12d) from the statistics; deg (N, 1|B) and scal (N, 1|B, 3) in x's dtype.
at::Tensor combine_forward(at::Tensor s, at::Tensor sq, at::Tensor mx, at::Tensor mn,
                           at::Tensor deg, at::Tensor scal, double eps) {
  const int64_t N = s.size(0), B = s.size(1), d = s.size(2);
  auto out = at::empty({N, B, 12 * d}, s.options());
  AT_DISPATCH_FLOATING_TYPES(s.scalar_type(), "grate_combine_forward", [&] {
    using T = scalar_t;
    combine_forward_impl<T>(s.data_ptr<T>(), sq.data_ptr<T>(), mx.data_ptr<T>(), mn.data_ptr<T>(),
                            deg.data_ptr<T>(), scal.data_ptr<T>(), N, B, d, deg.size(1),
                            scal.size(1), T(eps), out.data_ptr<T>());
  });
  return out;
}

// [packed (N, B, 4, d) gradients of (sum, sumsq, max, min), grad boundary (or undefined)].
std::vector<at::Tensor> combine_backward(at::Tensor g, at::Tensor s, at::Tensor sq,
                                         at::Tensor deg, at::Tensor scal, at::Tensor boundary,
                                         at::Tensor arg, double eps, bool need_b) {
  const int64_t N = s.size(0), B = s.size(1), d = s.size(2);
  auto gpack = at::empty({N, B, 4, d}, s.options());
  auto gb = need_b ? at::empty_like(s) : at::Tensor();
  AT_DISPATCH_FLOATING_TYPES(s.scalar_type(), "grate_combine_backward", [&] {
    using T = scalar_t;
    combine_backward_impl<T>(g.data_ptr<T>(), s.data_ptr<T>(), sq.data_ptr<T>(),
                             deg.data_ptr<T>(), scal.data_ptr<T>(), boundary.data_ptr<T>(),
                             arg.data_ptr<int32_t>(), N, B, d, deg.size(1), scal.size(1), T(eps),
                             gpack.data_ptr<T>(), need_b ? gb.data_ptr<T>() : nullptr);
  });
  return {gpack, gb};
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) {
  m.doc() = "Fused temporal message passing (GRATE) for the CPU";
  m.def("forward", &forward, "fused message + aggregation (edges grouped by destination)");
  m.def("backward", &backward, "recomputing backward (edges grouped by source)");
  m.def("combine_forward", &combine_forward, "PNA output from sum, sumsq, max, min");
  m.def("combine_backward", &combine_backward, "PNA statistics gradients, packed");
}
