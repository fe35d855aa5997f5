"""Speed and memory of one GRATE entity layer: naive PyTorch reference vs accelerated paths.

What is timed (--what layer, default): one full ULTRA-style entity layer, forward and backward:
    agg = propagate(x, boundary, rel, ...)            (the message passing, all impls)
    h   = ReLU(LayerNorm(Linear(cat(x, agg)))) + x    (Linear(2d, d) for sum, Linear(13d, d) for PNA)
with Q = x[s] + r_q built inside the graph, so gradients reach x, boundary, rel and Q
(--what propagate: the message passing alone, loss on agg).
Shape: the ICEWS14 train graph with inverse edges (7,128 entities, 145,652 edges), B = 8, d = 32;
a random graph of the same shape if the data is absent (--random forces it).

Time: median over --reps rounds after --warmup rounds, implementations interleaved within each
round (the machine is shared: compare ratios from the same run). Threads: --threads (default 2).
Memory: each implementation runs in a fresh subprocess; after one warm-up iteration the peak RSS
(VmHWM) is reset through /proc/self/clear_refs, one forward+backward runs, and the reported figure
is VmHWM minus the RSS just before it. glibc's mmap threshold is pinned at 128 KiB
(MALLOC_MMAP_THRESHOLD_) so freed tensors go back to the OS and RSS follows tensor memory.

Accuracy: 'err f64' = max over (output, grad x, grad boundary, grad rel) of max|impl - truth| /
max|truth| with truth = the reference in float64; 'diff ref' = the same against the float32
reference. (PNA's std = sqrt(E[m^2] - E[m]^2) is ill-conditioned in float32 on high-degree nodes, so
float32 implementations can differ from each other noticeably there: judge them by 'err f64'.)

    python benchmarks/bench_grate_layer.py [--impls reference,fused,chunked,compile] [--aggregates sum,pna]
"""
from __future__ import annotations

import argparse
import copy
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np
import torch
from torch import nn

from grate.ops import propagate

N_ICEWS14, E_ICEWS14, R_ICEWS14, T_ICEWS14 = 7128, 72826, 230, 365


def load_graph(data_dir: str, random: bool, seed: int = 0):
    """(edge_index, edge_type, edge_time, N, 2R, source) with inverse edges."""
    facts = None
    if not random:
        try:
            from tkg_indt.data import load_source
            tkg = load_source("ICEWS14", data_dir=data_dir)
            facts, n, r = tkg.splits["train"], tkg.num_entities, tkg.num_relations
            source = "ICEWS14 train"
        except Exception as exc:  # data absent: same-shaped random graph
            print(f"# ICEWS14 unavailable ({type(exc).__name__}: {exc}); using a random graph")
    if facts is None:
        rng = np.random.default_rng(seed)
        n, r = N_ICEWS14, R_ICEWS14
        facts = np.stack([rng.integers(0, n, E_ICEWS14), rng.integers(0, r, E_ICEWS14),
                          rng.integers(0, n, E_ICEWS14), rng.integers(0, T_ICEWS14, E_ICEWS14)], 1)
        source = "random (ICEWS14 shape)"
    f = torch.as_tensor(np.asarray(facts, dtype=np.int64))
    src = torch.cat([f[:, 0], f[:, 2]])
    dst = torch.cat([f[:, 2], f[:, 0]])
    etype = torch.cat([f[:, 1], f[:, 1] + r])
    etime = torch.cat([f[:, 3], f[:, 3]])
    return torch.stack([src, dst]), etype, etime, n, 2 * r, source


class EntityLayer(nn.Module):
    """propagate + ULTRA's update ReLU(LayerNorm(Linear(cat(x, agg)))) + x."""

    def __init__(self, d, aggregate, message, propagate_only=False):
        super().__init__()
        self.aggregate, self.message, self.propagate_only = aggregate, message, propagate_only
        self.linear = nn.Linear(d + (12 * d if aggregate == "pna" else d), d)
        self.norm = nn.LayerNorm(d)

    def forward(self, x, boundary, rel, graph, heads, rq, query_time, impl):
        edge_index, edge_type, edge_time = graph
        B = x.shape[1]
        query_state = x[heads, torch.arange(B)] + rel[torch.arange(B), rq]
        agg = propagate(x, boundary, rel, edge_index, edge_type, edge_time, query_time, query_state,
                        self.message, self.aggregate, impl=impl)
        if self.propagate_only:
            return agg
        return torch.relu(self.norm(self.linear(torch.cat([x, agg], -1)))) + x


def make_inputs(n, r2, times, B, d, seed):
    g = torch.Generator().manual_seed(seed)
    x = torch.randn(n, B, d, generator=g).requires_grad_()
    boundary = torch.randn(n, B, d, generator=g).requires_grad_()
    rel = torch.randn(B, r2, d, generator=g).requires_grad_()
    heads = torch.randint(0, n, (B,), generator=g)
    rq = torch.randint(0, r2, (B,), generator=g)
    qt = times[torch.randint(0, len(times), (B,), generator=g)]
    return x, boundary, rel, heads, rq, qt


def step(layer, inputs, graph, impl, weight):
    """One forward + backward; returns (forward s, backward s)."""
    x, boundary, rel, heads, rq, qt = inputs
    for t in (x, boundary, rel):
        t.grad = None
    layer.zero_grad(set_to_none=True)
    t0 = time.perf_counter()
    out = layer(x, boundary, rel, graph, heads, rq, qt, impl)
    t1 = time.perf_counter()
    (out * weight).sum().backward()
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1


def rss_kib(field):
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{field} not in /proc/self/status")


def setup(args, aggregate):
    torch.set_num_threads(args.threads)
    edge_index, edge_type, edge_time, n, r2, source = load_graph(args.data_dir, args.random)
    graph = (edge_index, edge_type, edge_time)
    torch.manual_seed(0)
    only = args.what == "propagate"
    layer = EntityLayer(args.d, aggregate, args.message, propagate_only=only)
    inputs = make_inputs(n, r2, torch.unique(edge_time), args.batch, args.d, seed=1)
    width = 12 * args.d if only and aggregate == "pna" else args.d
    weight = torch.randn(n, args.batch, width, generator=torch.Generator().manual_seed(2))
    return layer, inputs, graph, weight, source, n, edge_index.shape[1]


def memory_child(args):
    """Run in a subprocess: peak RSS delta (MiB) of one forward+backward."""
    layer, inputs, graph, weight, *_ = setup(args, args.aggregate)
    step(layer, inputs, graph, args.impl, weight)  # warm-up: builds/loads kernels, caches CSR
    for t in (*inputs[:3], *layer.parameters()):
        t.grad = None
    before = rss_kib("VmRSS")
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # reset VmHWM to the current RSS
    step(layer, inputs, graph, args.impl, weight)
    print(json.dumps({"peak_mib": (rss_kib("VmHWM") - before) / 1024}))


def measure_memory(args, impl, aggregate):
    env = dict(os.environ, MALLOC_MMAP_THRESHOLD_="131072", MALLOC_TRIM_THRESHOLD_="131072")
    cmd = [sys.executable, __file__, "--memory-child", "--impl", impl, "--aggregate", aggregate,
           "--threads", str(args.threads), "--batch", str(args.batch), "--d", str(args.d),
           "--message", args.message, "--what", args.what, "--data-dir", args.data_dir] + (["--random"] if args.random else [])
    res = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if res.returncode:
        print(res.stderr[-2000:], file=sys.stderr)
        return float("nan")
    return json.loads(res.stdout.strip().splitlines()[-1])["peak_mib"]


def outputs_and_grads(layer, inputs, graph, impl, weight):
    """[output, grad x, grad boundary, grad rel] of sum(layer(...) * weight), as float64."""
    x, boundary, rel, *_ = inputs
    for t in (x, boundary, rel):
        t.grad = None
    out = layer(*inputs[:3], graph, *inputs[3:], impl)
    (out * weight).sum().backward()
    return [t.detach().double() for t in (out, x.grad, boundary.grad, rel.grad)]


def float64_truth(layer, inputs, graph, weight):
    """The reference path in float64 (same parameters and inputs)."""
    layer64 = copy.deepcopy(layer).double()
    x, boundary, rel, heads, rq, qt = inputs
    in64 = [t.detach().double().requires_grad_() for t in (x, boundary, rel)] + [heads, rq, qt]
    return outputs_and_grads(layer64, in64, graph, "reference", weight.double())


def rel_error(got, truth):
    """Max over (output, grad x, grad boundary, grad rel) of max|got - truth| / max|truth|."""
    return max(float((a - b).abs().max() / b.abs().max().clamp(min=1e-300)) for a, b in zip(got, truth))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--impls", default="reference,fused,chunked,compile")
    ap.add_argument("--aggregates", default="sum,pna")
    ap.add_argument("--message", default="grate")
    ap.add_argument("--what", choices=("layer", "propagate"), default="layer",
                    help="time the whole entity layer (default) or propagate alone")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--d", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--no-memory", action="store_true")
    ap.add_argument("--random", action="store_true", help="random graph of ICEWS14's shape")
    ap.add_argument("--data-dir", default=os.environ.get("TKG_INDT_DATA", "/work/shared/data"))
    ap.add_argument("--memory-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--impl", help=argparse.SUPPRESS)
    ap.add_argument("--aggregate", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.memory_child:
        return memory_child(args)
    impls = args.impls.split(",")
    if impls[0] != "reference":
        impls = ["reference"] + [i for i in impls if i != "reference"]
    rows = []
    for aggregate in args.aggregates.split(","):
        layer, inputs, graph, weight, source, n, e = setup(args, aggregate)
        print(f"# {source}: N={n}, E={e} (with inverses), B={args.batch}, d={args.d}, "
              f"message={args.message}, aggregate={aggregate}, threads={torch.get_num_threads()}, "
              f"timed: {'propagate alone' if args.what == 'propagate' else 'entity layer'}")
        t_first = {}
        for impl in impls:  # first call: kernel build/load or compilation
            t0 = time.perf_counter()
            step(layer, inputs, graph, impl, weight)
            t_first[impl] = time.perf_counter() - t0
        for _ in range(args.warmup - 1):
            for impl in impls:
                step(layer, inputs, graph, impl, weight)
        times = {i: [] for i in impls}
        for _ in range(args.reps):
            for impl in impls:
                times[impl].append(step(layer, inputs, graph, impl, weight))
        truth = float64_truth(layer, inputs, graph, weight)
        ref32 = outputs_and_grads(layer, inputs, graph, "reference", weight)
        for impl in impls:
            fw = statistics.median(t[0] for t in times[impl])
            bw = statistics.median(t[1] for t in times[impl])
            tot = statistics.median(t[0] + t[1] for t in times[impl])
            got = ref32 if impl == "reference" else outputs_and_grads(layer, inputs, graph, impl, weight)
            err, diff = rel_error(got, truth), rel_error(got, ref32)
            mem = float("nan") if args.no_memory else measure_memory(args, impl, aggregate)
            rows.append(dict(aggregate=aggregate, impl=impl, fw=fw, bw=bw, total=tot, mem=mem,
                             first=t_first[impl], err=err, diff=diff))
    print(f"{'agg':4} {'impl':10} {'fwd ms':>8} {'bwd ms':>8} {'f+b ms':>8} {'speedup':>8} "
          f"{'peak MiB':>9} {'mem ratio':>9} {'err f64':>8} {'diff ref':>8} {'1st call s':>10}")
    for r in rows:
        base = next(b for b in rows if b["aggregate"] == r["aggregate"] and b["impl"] == "reference")
        print(f"{r['aggregate']:4} {r['impl']:10} {1e3 * r['fw']:8.1f} {1e3 * r['bw']:8.1f} "
              f"{1e3 * r['total']:8.1f} {base['total'] / r['total']:7.2f}x {r['mem']:9.1f} "
              f"{r['mem'] / base['mem']:9.3f} {r['err']:8.1e} {r['diff']:8.1e} {r['first']:10.1f}")


if __name__ == "__main__":
    main()
