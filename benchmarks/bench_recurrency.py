"""The complete recurrency protocol (selection on valid + test + evaluation) per dataset: wall time and
peak memory. Targets: ICEWS14-extrap <= 20 s, YAGO <= 50 s, peak memory <= 2 GB (2 CPU cores).

    python benchmarks/bench_recurrency.py --data-dir ../shared/data [--datasets ICEWS14-extrap YAGO]

Each dataset runs in a fresh process (so the peak RSS is its own). Same-run baseline: the test stage
through the generic harness (dense (B, N) score rows + Evaluator) with the same fitted model; its counts
must equal the fast path's. Reference (recurrency.md, not re-measured): the public code needed 392 s +
19-32 s + 14 s (ICEWS14-extrap) and 965 s + 59-104 s + 34 s (YAGO) on this machine.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time

TARGET_S = {"ICEWS14-extrap": 20.0, "YAGO": 50.0}
PUBLIC_S = {"ICEWS14-extrap": 392 + 19 + 14, "YAGO": 965 + 59 + 34}  # fastest reported stages
TARGET_MB = 2048


def one(name: str, data_dir: str, dense: bool) -> dict:
    import numpy as np

    from tkg_indt.baselines import RecurrencyBaseline
    from tkg_indt.data import load_source
    from tkg_indt.evaluation import evaluate, single_step

    tkg = load_source(name, data_dir=data_dir)  # parquet cache warmed by the parent
    rss_loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.perf_counter()
    model = RecurrencyBaseline("combined").fit(tkg)
    t1 = time.perf_counter()
    task = single_step(tkg)
    result = model.evaluate(task, ties="expected")
    t2 = time.perf_counter()
    out = {"dataset": name, "select_s": t1 - t0, "test_eval_s": t2 - t1, "total_s": t2 - t0,
           "mrr": result.metrics["mrr"], "hits@10": result.metrics["hits@10"],
           "rss_after_load_mb": rss_loaded, "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}
    if dense:
        t3 = time.perf_counter()
        slow = evaluate(model, task, ties="expected", batch_size=256)
        out["dense_test_eval_s"] = time.perf_counter() - t3
        out["dense_equal"] = bool(np.array_equal(slow.greater, result.greater) and np.array_equal(slow.equal, result.equal))
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", default=os.environ.get("TKG_INDT_DATA", "../shared/data"))
    parser.add_argument("--datasets", nargs="+", default=["ICEWS14-extrap", "YAGO"])
    parser.add_argument("--no-dense", action="store_true", help="skip the dense-harness baseline")
    parser.add_argument("--one", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(one(args.one, args.data_dir, not args.no_dense)))
        return
    from tkg_indt.data import load_source

    for name in args.datasets:  # parse once so the timed runs read the parquet cache
        load_source(name, data_dir=args.data_dir)
    print("| dataset | selection s | test + eval s | total s | target s | x faster than public code | "
          "dense harness test s | fast/dense | peak RSS MB | MRR | H@10 |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    ok = True
    for name in args.datasets:
        cmd = [sys.executable, __file__, "--one", name, "--data-dir", args.data_dir] + (["--no-dense"] if args.no_dense else [])
        r = json.loads(subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1])
        target = TARGET_S.get(name)
        dense = r.get("dense_test_eval_s")
        ok &= (target is None or r["total_s"] <= target) and r["peak_rss_mb"] <= TARGET_MB and r.get("dense_equal", True)
        print(f"| {name} | {r['select_s']:.1f} | {r['test_eval_s']:.1f} | {r['total_s']:.1f} | "
              f"{target if target else '-'} | {PUBLIC_S[name] / r['total_s']:.0f}x | " if name in PUBLIC_S else
              f"| {name} | {r['select_s']:.1f} | {r['test_eval_s']:.1f} | {r['total_s']:.1f} | - | - | ", end="")
        print(f"{dense:.1f} | {dense / r['test_eval_s']:.1f}x{'' if r.get('dense_equal', True) else ' (COUNTS DIFFER)'} | "
              if dense else "- | - | ", end="")
        print(f"{r['peak_rss_mb']:.0f} (after load {r['rss_after_load_mb']:.0f}) | {100 * r['mrr']:.2f} | "
              f"{100 * r['hits@10']:.2f} |")
    print(f"targets met: {ok} (time per dataset, peak RSS <= {TARGET_MB} MB, dense and fast counts equal)")


if __name__ == "__main__":
    main()
