"""Package a finished training run as a release: test metrics, model card, small files.

    python -m grate.train.release grate-trix --run runs/grate-trix [--test-subset ICEWS14=500 ...]

Writes ``releases/<name>/`` (or ``$GRATE_RELEASES/<name>/``) atomically:

* ``model.safetensors`` + ``config.json``: the best checkpoint of the run (by validation MRR);
* ``curves.png``: training loss and validation MRR against the step;
* ``test_metrics.json``: time-aware filtered MRR / Hits@1/3/10 (average ties) on the transductive
  test split of each dataset, computed with ``tkg_indt.evaluation.evaluate(Scorer(model),
  transductive(tkg))``; with ``--test-subset NAME=n`` only ``n`` test facts drawn with a fixed seed
  (the same facts for every model, both directions), and the card says so together with the
  measured cost per query and the extrapolated cost of the full test;
* ``MODEL_CARD.md``: recipe (and its reductions), compute, wall time, steps, parameters, curves,
  metrics; ``releases/README.md`` gets the table of all released models.
"""
from __future__ import annotations

import argparse
import json
import platform
import shutil
import time
from pathlib import Path

import numpy as np
import torch

from tkg_indt.evaluation import SUBSET_SEED, evaluate, sample_facts, transductive
from tkg_indt.evaluation.filtering import with_inverses
from tkg_indt.paths import atomic_dir, atomic_file

from ..scoring import Scorer
from ..zoo import RELEASES, releases_dir
from .checkpoint import load_model_dir, read_config
from .curves import plot_comparison, plot_curves, read_metrics

DATASETS = ("ICEWS14", "ICEWS05-15")


def evaluate_test(model, datasets=DATASETS, subsets: dict | None = None, data_dir=None, progress=True) -> dict:
    from .sampling import read_source

    out = {}
    for name in datasets:
        tkg = read_source(name, data_dir)
        chosen = sample_facts(tkg["test"], (subsets or {}).get(name))
        is_subset = len(chosen) < len(tkg["test"])
        q = with_inverses(chosen, tkg.num_relations)
        full = with_inverses(tkg["test"], tkg.num_relations)
        distinct_full = len(np.unique(full[:, [0, 1, 3]], axis=0))
        distinct = len(np.unique(q[:, [0, 1, 3]], axis=0))
        res = evaluate(Scorer(model), transductive(tkg), queries=q, progress=progress)
        per_query = res.seconds / max(distinct, 1)
        out[name] = {"metrics": res.metrics, "test_facts": int(len(q) // 2), "test_facts_total": int(len(tkg["test"])),
                     "subset": is_subset, "seed": SUBSET_SEED if is_subset else None,
                     "distinct_queries": distinct, "seconds": round(res.seconds, 1),
                     "seconds_per_query": round(per_query, 4),
                     "full_test_estimate_hours": round(per_query * distinct_full / 3600, 2)}
        print(json.dumps({name: out[name]}), flush=True)
    return out


def _pct(x) -> str:
    return f"{100 * x:.2f}"


def _recipe_header(recipe_file: Path) -> str:
    if not recipe_file.is_file():
        return ""
    lines = []
    for line in recipe_file.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line[1:].rstrip())
    return "\n".join(lines)


def model_card(name: str, config: dict, summary: dict, run_json: dict, test: dict, recipe_file: Path,
               recipe_yaml: str) -> str:
    m = config["model"]
    base = m["model"].upper() if m["model"] == "trix" else "ULTRA"
    kind = "GRATE" if m["message"] == "grate" else f"static ({m['message']})"
    wall = summary["wall_seconds"]
    rows = []
    for ds, r in test.items():
        mm = r["metrics"]
        what = (f"{r['test_facts']:,} of {r['test_facts_total']:,} test facts (seeded subset, seed {r['seed']})"
                if r["subset"] else f"all {r['test_facts_total']:,} test facts")
        rows.append(f"| {ds} | {_pct(mm['mrr'])} | {_pct(mm['hits@1'])} | {_pct(mm['hits@3'])} | "
                    f"{_pct(mm['hits@10'])} | {mm['count']:,} | {what} |")
    costs = "\n".join(f"- {ds}: {r['seconds']:.0f} s for {r['distinct_queries']:,} distinct queries "
                      f"({r['seconds_per_query']:.3f} s/query); the full test would take about "
                      f"{r['full_test_estimate_hours']:.1f} h on this machine." for ds, r in test.items())
    fv = summary.get("final_validation")
    params_note = ("the GRATE message adds none: the same count as the static model" if m["message"] != "distmult"
                   else "the same count as its GRATE counterpart: GRATE adds no parameter")
    return f"""# {name}: {base} + {kind} message

{RELEASES.get(name, '')}.

- Architecture: {base}, message `{m['message']}`, hidden size d = {m['dim']}, aggregation `{m['aggregate']}`,
  relation layers {m['relation_layers']}, entity layers {m['entity_layers']}.
- Parameters: {config['parameters']:,} ({params_note}).
- Checkpoint: best validation MRR at step {summary['best_step']} of {summary['steps']}
  (subset validation MRR {summary['best_valid_mrr']:.4f}, mean over ICEWS14 and ICEWS05-15).
- Files: `model.safetensors` (weights), `config.json` (architecture + training metadata); load with
  `grate.load_model("{name}")` (safetensors + JSON, no pickle) or evaluate with
  `tkg-indt eval --model {name} --dataset ICEWS14 --protocol transductive`.

## Test results (transductive interpolation, time-aware filtered, average ties)

| dataset | MRR | Hits@1 | Hits@3 | Hits@10 | queries | test facts |
|---|---|---|---|---|---|---|
{chr(10).join(rows)}

Evaluated with `tkg_indt.evaluation.evaluate(Scorer(model), transductive(tkg), queries=...)`: message
graph = the training split, tail and head queries of the test facts, filtered with train + valid +
test facts at the same time. Cost on the machine that ran the evaluation (CPU, fused kernel; other load included):
{costs}
Subsets, where used, are stated above; they are the same facts for every released model, so the
models are compared on identical queries.

## Training

- Recipe: `{recipe_file.as_posix()}` (scale `{summary['scale']}`), copied below; joint pretraining on
  ICEWS14 + ICEWS05-15 (interpolation splits, timestamps on disjoint ranges), one graph per step
  drawn proportionally to its edges, strict time-aware negatives, self-adversarial BCE, AdamW.
- Steps: {summary['steps']:,}; wall time {wall / 60:.1f} min ({summary['train_seconds'] / 60:.1f} min training steps,
  {summary['validation_seconds'] / 60:.1f} min validation); {summary['train_seconds_per_step']:.2f} s per training step.
- Compute: {run_json.get('processes', 1)} process(es), {run_json.get('threads')} torch threads, {run_json.get('cpu_count')} CPU
  cores ({run_json.get('machine')}, device `{run_json.get('device', 'cpu')}`; wall times include any other load on the
  machine), torch {run_json.get('torch')},
  Python {run_json.get('python')}.
- Final validation: {('none (recipe: validation.final = none)' if not fv else json.dumps(fv))}.

![training curves](curves.png)

Reductions relative to the paper recipe (from the recipe file):

```
{_recipe_header(recipe_file)}
```

Resolved recipe:

```yaml
{recipe_yaml.rstrip()}
```

## Limitations

Trained for minutes on a CPU, far from the paper's 10 x 80,000 steps on GPUs: numbers are much lower
than the paper's and the comparison GRATE vs static rests on one seed. Retrain with
`recipes/train/{name}-paper.yaml` on GPUs for the paper-scale model.
"""


def releases_table(root: Path) -> str:
    lines = ["| model | params | steps | ICEWS14 MRR | ICEWS14 H@10 | ICEWS05-15 MRR | ICEWS05-15 H@10 |",
             "|---|---|---|---|---|---|---|"]
    for name in RELEASES:
        f = root / name / "test_metrics.json"
        if not f.is_file():
            lines.append(f"| {name} | not trained yet | | | | | |")
            continue
        data = json.loads(f.read_text())
        t = data["test"]
        cells = []
        for ds in DATASETS:
            if ds in t:
                mm = t[ds]["metrics"]
                star = "*" if t[ds]["subset"] else ""
                cells += [f"{_pct(mm['mrr'])}{star}", f"{_pct(mm['hits@10'])}{star}"]
            else:
                cells += ["", ""]
        lines.append(f"| [{name}]({name}/MODEL_CARD.md) | {data['parameters']:,} | {data['steps']:,} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


PAIRS = (("trix", "grate-trix"), ("ultra", "grate-ultra"))  # (static base model, its GRATE version)


def comparison(root: Path) -> list[dict]:
    """Static vs GRATE test MRR for every pair of released models trained for the same number of steps,
    on each dataset where both were tested on the same facts."""
    rows = []
    for static, temporal in PAIRS:
        files = [root / n / "test_metrics.json" for n in (static, temporal)]
        if not all(f.is_file() for f in files):
            continue
        (a, steps_a), (b, steps_b) = ((d["test"], d["steps"]) for d in (json.loads(f.read_text()) for f in files))
        if steps_a != steps_b:  # not comparable: different training lengths
            continue
        for ds in DATASETS:
            same_queries = ds in a and ds in b and all(a[ds][k] == b[ds][k] for k in ("test_facts", "seed"))
            if same_queries:
                rows.append({"base": static, "dataset": ds, "static": a[ds]["metrics"]["mrr"],
                             "grate": b[ds]["metrics"]["mrr"], "subset": a[ds]["subset"] or b[ds]["subset"]})
    return rows


def comparison_table(rows: list[dict]) -> str:
    lines = ["| base model | dataset | static MRR | + GRATE MRR | relative change |", "|---|---|---|---|---|"]
    for r in rows:
        star = "*" if r["subset"] else ""
        lines.append(f"| {r['base'].upper()} | {r['dataset']} | {_pct(r['static'])}{star} | {_pct(r['grate'])}{star} | "
                     f"{100 * (r['grate'] / r['static'] - 1):+.1f} % |")
    return "\n".join(lines)


def write_index(root: Path) -> None:
    text = ("# Released checkpoints\n\nTrained with `recipes/train/<name>-cpu.yaml` "
            "(`bash recipes/train/train_releases.sh`); load with `grate.load_model(name)`.\n"
            "Transductive test, time-aware filtered, average ties, in %. `*`: seeded subset of the test facts "
            "(sizes in each model card).\n\n" + releases_table(root) + "\n")
    rows = comparison(root)
    if rows:
        text += ("\n## Static base model vs GRATE\n\nSame recipe, data, steps and test queries; GRATE adds no "
                 "parameter.\n\n" + comparison_table(rows) + "\n\n![static vs GRATE](comparison.png)\n")
        plot_comparison(rows, root / "comparison.png")
    with atomic_file(root / "README.md") as handle:
        handle.write(text)


def release(name: str, run: Path, subsets: dict | None = None, data_dir=None, root: Path | None = None,
            datasets=DATASETS, progress=True, card_only: bool = False) -> Path:
    """Evaluate the run's best checkpoint and write the release folder (``card_only``: reuse the test
    metrics already in the release, rewrite the card and curves only)."""
    run = Path(run)
    root = Path(root) if root else releases_dir()
    summary = json.loads((run / "summary.json").read_text())
    run_json = json.loads((run / "run.json").read_text())
    config = read_config(run / "best")
    model = load_model_dir(run / "best")
    start = time.perf_counter()
    previous = root / name / "test_metrics.json"
    if card_only:
        if not previous.is_file():
            raise SystemExit(f"--card-only: {previous} does not exist; run without --card-only first")
        old = json.loads(previous.read_text())
        test, start = old["test"], time.perf_counter() - old["evaluation_seconds"]
    else:
        test = evaluate_test(model, datasets, subsets, data_dir, progress)
    recipe_file = Path("recipes/train") / f"{name}-{summary['scale']}.yaml"
    card = model_card(name, config, summary, run_json, test, recipe_file, (run / "recipe.yaml").read_text())
    with atomic_dir(root / name) as tmp:
        shutil.copy(run / "best" / "model.safetensors", tmp / "model.safetensors")
        shutil.copy(run / "best" / "config.json", tmp / "config.json")
        plot_curves(read_metrics(run / "metrics.jsonl"), tmp / "curves.png", name)
        (tmp / "test_metrics.json").write_text(json.dumps({
            "name": name, "parameters": config["parameters"], "steps": summary["steps"], "best_step": summary["best_step"],
            "test": test, "evaluation_seconds": round(time.perf_counter() - start, 1), "torch": torch.__version__,
            "machine": platform.machine()}, indent=1) + "\n")
        (tmp / "MODEL_CARD.md").write_text(card, encoding="utf-8")
    write_index(root)
    return root / name


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("name")
    p.add_argument("--run", required=True, help="run folder of `tkg-indt train` (with summary.json and best/)")
    p.add_argument("--test-subset", action="append", default=None, metavar="DATASET=N",
                   help="evaluate N seeded test facts of DATASET (0 = all). Default: ICEWS14=0 (all), ICEWS05-15=500")
    p.add_argument("--data-dir", default=None)
    p.add_argument("--releases", default=None, help="releases root (default: grate.zoo.releases_dir())")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--card-only", action="store_true", help="reuse the release's test metrics; rewrite the card")
    a = p.parse_args(argv)
    torch.set_num_threads(a.threads)
    subsets = {"ICEWS14": 0, "ICEWS05-15": 500}
    for item in a.test_subset or []:
        key, _, value = item.partition("=")
        subsets[key] = int(value)
    folder = release(a.name, Path(a.run), subsets, a.data_dir, Path(a.releases) if a.releases else None,
                     card_only=a.card_only)
    print(folder)


if __name__ == "__main__":
    main()
