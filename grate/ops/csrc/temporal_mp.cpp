// Fused temporal message passing (GRATE and ablations) for the CPU.
//
// Messages are computed on the fly and never materialised as (E, B, d) tensors.
// Forward: edges grouped by destination (CSR), each thread owns a range of output rows.
// Backward: messages are recomputed by the same (non-inlined) function, so they are bit-identical
// to the forward's; edges are grouped by source, so each thread owns the rows of grad_x it
// writes; grad_rel and grad_query are accumulated in one buffer per work piece and summed at the
// end. No locks, no atomics.
//
// Layouts (all contiguous): x, boundary (N, B, d); rel (B, R2, d); query (B, d); trig
// (B, T, 2d) for the rotation variants, rows (C, S) (see edge_messages) for the t-th distinct edge
// time, or (B, T, d) rows (cos theta_0, sin theta_0, cos theta_1, ..) for sincos; mask (B, E) bool
// indexed by the original edge id. A graph is given as rowptr (N + 1), nbr (E) (the other end
// point), type (E), trank (E) (time rank), eid (E) (original edge id), all int64 and sorted by the
// owning end point.
//
// PNA keeps, per (node, query, channel): sum, sum of squares, (max, min) and the number of values
// equal to the max / min (boundary included); the max/min gradient is split evenly among the tied
// values, as torch's scatter_reduce does, so the result equals the reference path.
#include <torch/extension.h>
#include <ATen/Parallel.h>

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

namespace {

enum Variant { DISTMULT = 0, SINCOS = 1, ROTATION = 2, RELGATE = 3, GRATE = 4 };
constexpr int64_t MAXD = 1024;

// Messages of one edge for all B queries: pre-gate m (B x d), gates g (B), final messages
// f = g * m (B x d); on[b] says whether query b may use the edge. Rotation uses the swap form
//   m = p * C + swap(p) * S,  p = x_u * r,  C = (c0, c0, c1, c1, ..),  S = (-s0, s0, -s1, s1, ..)
// where swap exchanges the members of each pair. The B exps of an edge are evaluated together.
// Not inlined: forward and backward run the same machine code, so the recomputed messages are
// bit-identical (needed to find the max/min ties again).
template <int V, int D, typename T>
__attribute__((noinline)) void edge_messages(
    const T* __restrict__ xu, const T* __restrict__ rel, int64_t R2, int64_t r,
    const T* __restrict__ trig, int64_t Tn, int64_t t, const T* __restrict__ q,
    const bool* __restrict__ mask, int64_t E, int64_t e, int64_t B, int64_t d_, T inv_sqrt_d,
    T* __restrict__ m, T* __restrict__ g, T* __restrict__ f, bool* __restrict__ on) {
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
  for (int64_t b = 0; b < B; ++b) {
    if (!on[b]) continue;
    const T gb = g[b];
    const T* __restrict__ mb = m + b * d;
    T* __restrict__ fb = f + b * d;
    for (int64_t c = 0; c < d; ++c) fb[c] = gb * mb[c];
  }
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

// Number of work pieces: one per thread, or 1 (no parallel region at all) for small problems,
// where waking threads costs more than it saves.
int64_t choose_pieces(int64_t N, int64_t E, int64_t B, int64_t d) {
  const int64_t work = (N + E) * B * d;
  if (work < (int64_t(1) << 17)) return 1;
  return std::max<int64_t>(1, std::min<int64_t>(at::get_num_threads(), work >> 16));
}

struct Graph {
  const int64_t *rowptr, *nbr, *type, *trank, *eid;
  Graph(const at::Tensor& rowptr_, const at::Tensor& nbr_, const at::Tensor& type_,
        const at::Tensor& trank_, const at::Tensor& eid_)
      : rowptr(rowptr_.data_ptr<int64_t>()), nbr(nbr_.data_ptr<int64_t>()),
        type(type_.data_ptr<int64_t>()), trank(trank_.data_ptr<int64_t>()),
        eid(eid_.data_ptr<int64_t>()) {}
};

// Per-thread scratch for one edge's messages.
template <typename T>
struct Scratch {
  std::vector<T> m, g, f;
  std::vector<char> on;
  Scratch(int64_t B, int64_t d) : m(B * d), g(B), f(B * d), on(B) {}
  bool* onp() { return reinterpret_cast<bool*>(on.data()); }
};

// sum: out = boundary + sum of messages. PNA: out = sum, sq = sum of squares, hilo (N, B, 2, d) =
// (max, min), cnt (N, B, 2, d) = number of values equal to the max / min.
template <int V, bool PNA, int D, typename T>
void forward_impl(const T* x, const T* bnd, const T* rel, const T* q, const T* trig,
                  const bool* mask, const Graph& g, int64_t N, int64_t B, int64_t d_, int64_t R2,
                  int64_t Tn, int64_t E, T* out, T* sq, T* hilo, T* cnt) {
  const int64_t d = D > 0 ? D : d_;
  const T inv_sqrt_d = T(1) / std::sqrt(T(d));
  const int64_t pieces = choose_pieces(N, E, B, d);
  const auto bounds = balanced_pieces(g.rowptr, N, pieces);
  at::parallel_for(0, pieces, 1, [&](int64_t p0, int64_t p1) {
    Scratch<T> sc(B, d);
    bool* on = sc.onp();
    for (int64_t v = bounds[p0]; v < bounds[p1]; ++v) {
      const int64_t row = v * B * d;
      for (int64_t i = 0; i < B * d; ++i) out[row + i] = bnd[row + i];
      if (PNA) {
        for (int64_t b = 0; b < B; ++b) {
          for (int64_t c = 0; c < d; ++c) {
            const T b0 = bnd[row + b * d + c];
            sq[row + b * d + c] = b0 * b0;
            hilo[2 * (row + b * d) + c] = b0;
            hilo[2 * (row + b * d) + d + c] = b0;
            cnt[2 * (row + b * d) + c] = T(1);
            cnt[2 * (row + b * d) + d + c] = T(1);
          }
        }
      }
      for (int64_t j = g.rowptr[v]; j < g.rowptr[v + 1]; ++j) {
        edge_messages<V, D, T>(x + g.nbr[j] * B * d, rel, R2, g.type[j], trig, Tn, g.trank[j], q,
                               mask, E, g.eid[j], B, d, inv_sqrt_d, sc.m.data(), sc.g.data(),
                               sc.f.data(), on);
        for (int64_t b = 0; b < B; ++b) {
          if (!on[b]) continue;
          const T* __restrict__ fb = sc.f.data() + b * d;
          T* __restrict__ o = out + row + b * d;
          if (!PNA) {
            for (int64_t c = 0; c < d; ++c) o[c] += fb[c];
          } else {
            T* __restrict__ s2 = sq + row + b * d;
            T* __restrict__ hi = hilo + 2 * (row + b * d);
            T* __restrict__ lo = hi + d;
            T* __restrict__ chi = cnt + 2 * (row + b * d);
            T* __restrict__ clo = chi + d;
#pragma omp simd
            for (int64_t c = 0; c < d; ++c) {
              const T val = fb[c];
              o[c] += val;
              s2[c] += val * val;
              const T h = hi[c], l = lo[c];
              hi[c] = val > h ? val : h;
              chi[c] = val > h ? T(1) : chi[c] + (val == h ? T(1) : T(0));
              lo[c] = val < l ? val : l;
              clo[c] = val < l ? T(1) : clo[c] + (val == l ? T(1) : T(0));
            }
          }
        }
      }
    }
  });
}

// grad: sum: (N, B, d); PNA: (N, B, 4, d) packing the gradients of (sum, sumsq, max / count,
// min / count), with hilo (N, B, 2, d) = (max, min) from the forward.
template <int V, bool PNA, int D, typename T>
void backward_impl(const T* x, const T* rel, const T* q, const T* trig, const bool* mask,
                   const Graph& g, int64_t N, int64_t B, int64_t d_, int64_t R2, int64_t Tn,
                   int64_t E, const T* grad, const T* hilo, T* gx, T* grel, T* gq,
                   bool need_x, int64_t pieces) {
  const int64_t d = D > 0 ? D : d_;
  const T inv_sqrt_d = T(1) / std::sqrt(T(d));
  const int64_t tw = (V == SINCOS) ? d : 2 * d;
  const auto bounds = balanced_pieces(g.rowptr, N, pieces);
  at::parallel_for(0, pieces, 1, [&](int64_t p0, int64_t p1) {
    Scratch<T> sc(B, d);
    bool* on = sc.onp();
    for (int64_t p = p0; p < p1; ++p) {
      T* grel_p = grel ? grel + p * B * R2 * d : nullptr;  // this piece's buffers
      T* gq_p = gq ? gq + p * B * d : nullptr;
      for (int64_t u = bounds[p]; u < bounds[p + 1]; ++u) {
        for (int64_t j = g.rowptr[u]; j < g.rowptr[u + 1]; ++j) {
          const int64_t v = g.nbr[j], r = g.type[j], t = g.trank[j];
          edge_messages<V, D, T>(x + u * B * d, rel, R2, r, trig, Tn, t, q, mask, E, g.eid[j], B,
                                 d, inv_sqrt_d, sc.m.data(), sc.g.data(), sc.f.data(), on);
          for (int64_t b = 0; b < B; ++b) {
            if (!on[b]) continue;
            const T gb = sc.g[b];
            const T* __restrict__ mb = sc.m.data() + b * d;
            const T* __restrict__ fb = sc.f.data() + b * d;
            const T* __restrict__ xu = x + (u * B + b) * d;
            const T* __restrict__ rr = rel + (b * R2 + r) * d;
            T gm[MAXD];
            // gradient w.r.t. the final message fb
            if (!PNA) {
              const T* __restrict__ G = grad + (v * B + b) * d;
              for (int64_t c = 0; c < d; ++c) gm[c] = G[c];
            } else {
              const T* __restrict__ G = grad + (v * B + b) * 4 * d;
              const T* __restrict__ H = hilo + (v * B + b) * 2 * d;
#pragma omp simd
              for (int64_t c = 0; c < d; ++c) {
                const T val = fb[c], ghi = G[2 * d + c], glo = G[3 * d + c];
                gm[c] = G[c] + T(2) * val * G[d + c] + (val == H[c] ? ghi : T(0)) +
                        (val == H[d + c] ? glo : T(0));
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
void combine_forward_impl(const T* s, const T* sq, const T* hilo, const T* deg, const T* scal,
                          int64_t N, int64_t B, int64_t d, int64_t Bd, int64_t Bs, T eps, T* out) {
  at::parallel_for(0, N * B, std::max<int64_t>(1, 8192 / d), [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t n = i / B, b = i % B;
      const T dg = deg[n * Bd + (Bd > 1 ? b : 0)];
      const T* sc = scal + (n * Bs + (Bs > 1 ? b : 0)) * 3;
      const T s0 = sc[0], s1 = sc[1], s2 = sc[2];
      const T* hl = hilo + i * 2 * d;
      T* o = out + i * 12 * d;
      for (int64_t c = 0; c < d; ++c) {
        const T mean = s[i * d + c] / dg;
        const T var = sq[i * d + c] / dg - mean * mean;
        const T f[4] = {mean, hl[c], hl[d + c], std::sqrt(std::max(var, eps))};
        for (int k = 0; k < 4; ++k) {
          o[(c * 4 + k) * 3 + 0] = f[k] * s0;
          o[(c * 4 + k) * 3 + 1] = f[k] * s1;
          o[(c * 4 + k) * 3 + 2] = f[k] * s2;
        }
      }
    }
  });
}

// Gradients of the statistics, packed (N, B, 4, d) as (sum, sumsq, max / count, min / count), and
// of the boundary (the self-message enters sum, sumsq and the max/min where it equals them).
template <typename T>
void combine_backward_impl(const T* g, const T* s, const T* sq, const T* hilo, const T* cnt,
                           const T* deg, const T* scal, const T* bnd, int64_t N, int64_t B,
                           int64_t d, int64_t Bd, int64_t Bs, T eps, T* gpack, T* gb) {
  at::parallel_for(0, N * B, std::max<int64_t>(1, 8192 / d), [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t n = i / B, b = i % B;
      const T dg = deg[n * Bd + (Bd > 1 ? b : 0)];
      const T* sc = scal + (n * Bs + (Bs > 1 ? b : 0)) * 3;
      const T s0 = sc[0], s1 = sc[1], s2 = sc[2];
      const T* gi = g + i * 12 * d;
      const T* hl = hilo + i * 2 * d;
      const T* cn = cnt + i * 2 * d;
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
        gp[2 * d + c] = gf[1] / cn[c];                 // d max, per tied value
        gp[3 * d + c] = gf[2] / cn[d + c];             // d min, per tied value
        if (gb) {
          const T b0 = bnd[i * d + c];
          gb[i * d + c] = gp[c] + T(2) * b0 * gp[d + c] + (b0 == hl[c] ? gp[2 * d + c] : T(0)) +
                          (b0 == hl[d + c] ? gp[3 * d + c] : T(0));
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

#define GRATE_DISPATCH_VARIANT(variant, ...)                              \
  switch (variant) {                                                      \
    case DISTMULT: { constexpr int V = DISTMULT; __VA_ARGS__; break; }    \
    case SINCOS: { constexpr int V = SINCOS; __VA_ARGS__; break; }        \
    case ROTATION: { constexpr int V = ROTATION; __VA_ARGS__; break; }    \
    case RELGATE: { constexpr int V = RELGATE; __VA_ARGS__; break; }      \
    case GRATE: { constexpr int V = GRATE; __VA_ARGS__; break; }          \
    default: TORCH_CHECK(false, "unknown message variant ", variant);    \
  }

// Calls body(width, pna) with a compile-time width (32 or 64 for float32, else 0 = runtime
// width) and a compile-time PNA flag.
template <typename T, typename F>
void dispatch_width_pna(int64_t d, bool pna, F&& body) {
  auto with_pna = [&](auto width) {
    if (pna) body(width, std::true_type{}); else body(width, std::false_type{});
  };
  if (std::is_same<T, float>::value && d == 32) with_pna(std::integral_constant<int, 32>{});
  else if (std::is_same<T, float>::value && d == 64) with_pna(std::integral_constant<int, 64>{});
  else with_pna(std::integral_constant<int, 0>{});
}

void check_common(const at::Tensor& x, const at::Tensor& rel, const at::Tensor& nbr) {
  TORCH_CHECK(x.device().is_cpu() && x.is_contiguous() && rel.is_contiguous(),
              "grate_ops: CPU contiguous tensors expected");
  TORCH_CHECK(x.size(2) <= MAXD, "grate_ops: hidden dimension ", x.size(2), " exceeds ", MAXD);
  TORCH_CHECK(nbr.size(0) < (int64_t(1) << 31), "grate_ops: more than 2^31 edges");
}

}  // namespace

// Returns [out] for sum aggregation; [sum, sumsq, hilo, cnt] for PNA (see forward_impl).
std::vector<at::Tensor> forward(at::Tensor x, at::Tensor boundary, at::Tensor rel, at::Tensor q,
                                at::Tensor trig, at::Tensor mask, at::Tensor rowptr,
                                at::Tensor nbr, at::Tensor type, at::Tensor trank,
                                at::Tensor eid, int64_t variant, bool pna) {
  check_common(x, rel, nbr);
  const int64_t N = x.size(0), B = x.size(1), d = x.size(2), R2 = rel.size(1);
  const int64_t E = nbr.size(0), Tn = trig.defined() && trig.dim() == 3 ? trig.size(1) : 0;
  const Graph g(rowptr, nbr, type, trank, eid);
  auto out = at::empty_like(x);
  at::Tensor sq, hilo, cnt;
  if (pna) {
    sq = at::empty_like(x);
    hilo = at::empty({N, B, 2, d}, x.options());
    cnt = at::empty({N, B, 2, d}, x.options());
  }
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "grate_forward", [&] {
    using T = scalar_t;
    dispatch_width_pna<T>(d, pna, [&](auto width, auto pna_tag) {
      constexpr int DD = decltype(width)::value;
      constexpr bool PN = decltype(pna_tag)::value;
      GRATE_DISPATCH_VARIANT(variant, forward_impl<V, PN, DD, T>(
          x.data_ptr<T>(), boundary.data_ptr<T>(), rel.data_ptr<T>(), opt_ptr<T>(q),
          opt_ptr<T>(trig), mask_ptr(mask), g, N, B, d, R2, Tn, E, out.data_ptr<T>(),
          PN ? sq.data_ptr<T>() : nullptr, PN ? hilo.data_ptr<T>() : nullptr,
          PN ? cnt.data_ptr<T>() : nullptr))
    });
  });
  if (pna) return {out, sq, hilo, cnt};
  return {out};
}

// Returns [grad_x, grad_rel, grad_q] (undefined where not requested). The graph is grouped by
// source (nbr = destination). grad: (N, B, d) for sum; for PNA the packed (N, B, 4, d) gradients
// from combine_backward, with hilo from forward.
std::vector<at::Tensor> backward(at::Tensor x, at::Tensor rel, at::Tensor q, at::Tensor trig,
                                 at::Tensor mask, at::Tensor rowptr, at::Tensor nbr,
                                 at::Tensor type, at::Tensor trank, at::Tensor eid,
                                 int64_t variant, bool pna, at::Tensor grad, at::Tensor hilo,
                                 bool need_x, bool need_rel, bool need_q) {
  check_common(x, rel, nbr);
  const int64_t N = x.size(0), B = x.size(1), d = x.size(2), R2 = rel.size(1);
  const int64_t E = nbr.size(0), Tn = trig.defined() && trig.dim() == 3 ? trig.size(1) : 0;
  TORCH_CHECK(grad.is_contiguous() && grad.numel() == (pna ? 4 : 1) * N * B * d,
              "grate_ops backward: grad has the wrong size");
  need_q = need_q && q.defined() && q.numel() > 0;
  const Graph g(rowptr, nbr, type, trank, eid);
  const int64_t pieces = choose_pieces(N, E, B, d);
  auto gx = need_x ? at::zeros_like(x) : at::Tensor();
  auto grel = at::zeros({need_rel ? pieces : 0, B, R2, d}, x.options());
  auto gq = at::zeros({need_q ? pieces : 0, B, d}, x.options());
  AT_DISPATCH_FLOATING_TYPES(x.scalar_type(), "grate_backward", [&] {
    using T = scalar_t;
    dispatch_width_pna<T>(d, pna, [&](auto width, auto pna_tag) {
      constexpr int DD = decltype(width)::value;
      constexpr bool PN = decltype(pna_tag)::value;
      GRATE_DISPATCH_VARIANT(variant, backward_impl<V, PN, DD, T>(
          x.data_ptr<T>(), rel.data_ptr<T>(), opt_ptr<T>(q), opt_ptr<T>(trig), mask_ptr(mask),
          g, N, B, d, R2, Tn, E, grad.data_ptr<T>(), PN ? hilo.data_ptr<T>() : nullptr,
          need_x ? gx.data_ptr<T>() : nullptr, need_rel ? grel.data_ptr<T>() : nullptr,
          need_q ? gq.data_ptr<T>() : nullptr, need_x, pieces))
    });
  });
  return {gx, need_rel ? grel.sum(0) : at::Tensor(), need_q ? gq.sum(0) : at::Tensor()};
}

// PNA output (N, B, 12d) from the statistics; deg (N, 1|B) and scal (N, 1|B, 3) in x's dtype.
at::Tensor combine_forward(at::Tensor s, at::Tensor sq, at::Tensor hilo, at::Tensor deg,
                           at::Tensor scal, double eps) {
  const int64_t N = s.size(0), B = s.size(1), d = s.size(2);
  auto out = at::empty({N, B, 12 * d}, s.options());
  AT_DISPATCH_FLOATING_TYPES(s.scalar_type(), "grate_combine_forward", [&] {
    using T = scalar_t;
    combine_forward_impl<T>(s.data_ptr<T>(), sq.data_ptr<T>(), hilo.data_ptr<T>(),
                            deg.data_ptr<T>(), scal.data_ptr<T>(), N, B, d, deg.size(1),
                            scal.size(1), T(eps), out.data_ptr<T>());
  });
  return out;
}

// [packed (N, B, 4, d) statistics gradients, grad boundary (undefined unless need_b)].
std::vector<at::Tensor> combine_backward(at::Tensor g, at::Tensor s, at::Tensor sq,
                                         at::Tensor hilo, at::Tensor cnt, at::Tensor deg,
                                         at::Tensor scal, at::Tensor boundary, double eps,
                                         bool need_b) {
  const int64_t N = s.size(0), B = s.size(1), d = s.size(2);
  TORCH_CHECK(g.is_contiguous() && g.numel() == 12 * N * B * d, "combine_backward: bad grad");
  auto gpack = at::empty({N, B, 4, d}, s.options());
  auto gb = need_b ? at::empty_like(s) : at::Tensor();
  AT_DISPATCH_FLOATING_TYPES(s.scalar_type(), "grate_combine_backward", [&] {
    using T = scalar_t;
    combine_backward_impl<T>(g.data_ptr<T>(), s.data_ptr<T>(), sq.data_ptr<T>(),
                             hilo.data_ptr<T>(), cnt.data_ptr<T>(), deg.data_ptr<T>(),
                             scal.data_ptr<T>(), boundary.data_ptr<T>(), N, B, d, deg.size(1),
                             scal.size(1), T(eps), gpack.data_ptr<T>(),
                             need_b ? gb.data_ptr<T>() : nullptr);
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
