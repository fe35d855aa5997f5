"""One full training step of a 6-layer model on ICEWS14 (issue 5 target): naive vs fused message passing.

A step = forward over the ICEWS14 training graph (inverse edges, the query facts removed) for B training
queries with 1 positive + K random negatives each, the self-adversarial BCE loss, backward and an AdamW
update: what `tkg-indt train` does per step. Both message-passing paths run in the same process,
interleaved, so the ratio is meaningful on a noisy machine.

    python benchmarks/bench_train_step.py [--model trix] [--message grate] [--batch 8] [--reps 3]
"""
import argparse
import os
import time

import numpy as np
import torch

from grate import ModelConfig, TemporalGraph, build_model
from grate.train.loss import self_adversarial_bce
from tkg_indt.data import load_source

ap = argparse.ArgumentParser()
ap.add_argument("--model", default="trix")
ap.add_argument("--message", default="grate")
ap.add_argument("--aggregate", default="sum")
ap.add_argument("--dim", type=int, default=32)
ap.add_argument("--batch", type=int, default=8)
ap.add_argument("--negatives", type=int, default=512)
ap.add_argument("--reps", type=int, default=3)
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--impls", default="reference,auto")
ap.add_argument("--data-dir", default=os.environ.get("TKG_INDT_DATA", "../shared/data"))
args = ap.parse_args()
torch.set_num_threads(args.threads)

tkg = load_source("ICEWS14", data_dir=args.data_dir)
train = tkg["train"]
graph = TemporalGraph(train, tkg.num_entities, tkg.num_relations)
torch.manual_seed(0)
model = build_model(ModelConfig(model=args.model, dim=args.dim, aggregate=args.aggregate, message=args.message))
opt = torch.optim.AdamW(model.parameters(), lr=5e-4)
rng = np.random.default_rng(0)


def step(impl: str) -> float:
    model.impl = impl
    facts = train[rng.choice(len(train), args.batch, replace=False)]
    queries = facts[:, [0, 1, 3]]
    negatives = rng.integers(0, tkg.num_entities, (args.batch, args.negatives))
    candidates = np.concatenate([facts[:, 2:3], negatives], axis=1)
    start = time.perf_counter()
    logits = model(graph, queries, candidates=candidates, remove=facts)
    loss = self_adversarial_bce(logits)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return time.perf_counter() - start


impls = args.impls.split(",")
for impl in impls:  # warm-up: relation graphs, fused kernel build/load, CSR caches
    step(impl)
times = {impl: [] for impl in impls}
for _ in range(args.reps):
    for impl in impls:
        times[impl].append(step(impl))
base = np.median(times[impls[0]])
print(f"{args.model.upper()} + {args.message}, d={args.dim}, {args.aggregate}, B={args.batch}, "
      f"{args.negatives} negatives, ICEWS14 train graph ({graph.num_edges:,} edges with inverses), "
      f"{args.threads} threads, median of {args.reps}")
print("| message passing | s / step | speed-up |")
print("|---|---|---|")
for impl in impls:
    t = float(np.median(times[impl]))
    print(f"| {impl} | {t:.2f} | {base / t:.1f}x |")
