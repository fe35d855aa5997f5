"""Build time and peak memory of one inductive variant: WIKI (real) and a 3.4 M-quad GDELT-shaped source.

Targets: WIKI variant <= 5 s; 3.4 M GDELT-shaped variant <= 60 s and <= 4 GB peak. Each case runs in a
fresh process; the baseline measured in the same run is reading the source (parse of the text files,
then the parquet cache), so the printed ratios say how the builder compares with merely loading.

    python benchmarks/bench_build.py --data-dir ../shared/data [--facts 3419607] [--variant 1.0 inter]
"""
import argparse
import multiprocessing as mp
import os
import resource
import tempfile
import time
import tracemalloc


def case(source, data_dir, p_tri, mode, queue):
    os.environ["TKG_INDT_HOME"] = tempfile.mkdtemp(prefix="bench_build_home_")
    from tkg_indt.benchmark.build import make_variant, resolve_params, write_variant
    from tkg_indt.data import load_source

    t0 = time.perf_counter()
    load_source(source, data_dir=data_dir)  # parse + cache
    t1 = time.perf_counter()
    tkg = load_source(source, data_dir=data_dir)  # parquet
    t2 = time.perf_counter()
    tracemalloc.start()
    params = resolve_params(source, p_tri, mode)
    variant = make_variant(tkg, params)
    t3 = time.perf_counter()
    write_variant(variant, tempfile.mkdtemp(prefix="bench_build_out_") + "/" + params.variant)
    t4 = time.perf_counter()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    queue.put({"source": f"{tkg.name} ({len(tkg.facts()):,} quads)", "parse": t1 - t0, "cached": t2 - t1,
               "build": t3 - t2, "write": t4 - t3, "peak_traced": peak,
               "maxrss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
               "sizes": {k: v["quads"] for k, v in variant.meta["splits"].items()}})


def run(*args):
    queue = mp.get_context("spawn").Queue()
    proc = mp.get_context("spawn").Process(target=case, args=(*args, queue))
    proc.start()
    out = queue.get()
    proc.join()
    return out


def report(name, r, target_s, target_gb=None):
    total = r["build"] + r["write"]
    gb = r["maxrss"] / 2 ** 30
    print(f"{name}: {r['source']}  variant sizes {r['sizes']}")
    print(f"  baseline load: parse {r['parse']:.2f} s, cached {r['cached']:.2f} s")
    print(f"  build {r['build']:.2f} s + write {r['write']:.2f} s = {total:.2f} s "
          f"(target <= {target_s} s: {'OK' if total <= target_s else 'MISSED'}; "
          f"{total / r['parse']:.2f}x the parse, {total / r['cached']:.1f}x the cached load)")
    mem = f"  peak memory: process max RSS {gb:.2f} GB (load included), traced during build {r['peak_traced'] / 2 ** 30:.2f} GB"
    if target_gb:
        mem += f" (target <= {target_gb} GB: {'OK' if gb <= target_gb else 'MISSED'})"
    print(mem)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--data-dir", default=os.environ.get("TKG_INDT_DATA", "../shared/data"))
    parser.add_argument("--facts", type=int, default=3_419_607, help="quads of the GDELT-shaped source")
    parser.add_argument("--variant", nargs=2, default=["1.0", "inter"], metavar=("P_TRI", "MODE"))
    args = parser.parse_args()
    p_tri, mode = float(args.variant[0]), args.variant[1]

    report("WIKI", run("WIKI", args.data_dir, p_tri, mode), 5)

    from tkg_indt.benchmark.synthetic import write_synthetic_gdelt

    synth = tempfile.mkdtemp(prefix="bench_build_gdelt_")
    t = time.perf_counter()
    write_synthetic_gdelt(synth, n_facts=args.facts, seed=0)
    print(f"(wrote the GDELT-shaped source, {args.facts:,} quads, in {time.perf_counter() - t:.1f} s)")
    report("GDELT-shaped", run("GDELT", synth, p_tri, mode), 60, 4)
