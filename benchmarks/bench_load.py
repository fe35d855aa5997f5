"""First (parse) vs second (parquet cache) load of a source; target: second load >= 5x faster on WIKI.

    python benchmarks/bench_load.py --data-dir ../shared/data [--source WIKI]
"""
import argparse
import os
import tempfile
import time

parser = argparse.ArgumentParser()
parser.add_argument("--data-dir", default=os.environ.get("TKG_INDT_DATA", "../shared/data"))
parser.add_argument("--source", default="WIKI")
parser.add_argument("--repeats", type=int, default=3)
args = parser.parse_args()

firsts, seconds = [], []
for _ in range(args.repeats):
    os.environ["TKG_INDT_HOME"] = tempfile.mkdtemp(prefix="bench_load_")  # empty cache each round
    from tkg_indt.data import load_source

    t0 = time.perf_counter()
    load_source(args.source, data_dir=args.data_dir)
    t1 = time.perf_counter()
    tkg = load_source(args.source, data_dir=args.data_dir)
    t2 = time.perf_counter()
    firsts.append(t1 - t0)
    seconds.append(t2 - t1)
first, second = min(firsts), min(seconds)
print(f"{tkg}")
print(f"first load (parse + write cache): {first:.3f} s   second load (parquet): {second:.3f} s   "
      f"speed-up {first / second:.1f}x (target >= 5x)")
