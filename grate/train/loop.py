"""The training loop: joint pretraining of a GRATE / ULTRA / TRIX model on several TKGs.

``train(recipe, out)`` runs ``recipe.total_steps`` optimisation steps. One step: draw a batch
(:class:`grate.train.sampling.BatchSampler`: one graph by edge count, B facts, strict time-aware
negatives), score ``1 + K`` candidates per query with the query fact and its inverse removed from
the message graph, self-adversarial BCE (:mod:`grate.train.loss`), average gradients over
data-parallel processes, AdamW step. Every ``validation.every`` steps (default: once per epoch)
and at the end, the time-aware filtered MRR on a fixed seeded subset of each source's validation
facts (mean over sources) selects the best weights; at the end the best weights get the full
validation (``validation.final``).

Run folder ``out`` (written by rank 0)::

    recipe.yaml      the recipe of the run
    run.json         environment: command, device, processes, threads, torch version
    metrics.jsonl    one JSON object per line: {"event": "train", "step", "loss", "steps_per_s", ...},
                     {"event": "valid", "step", "mrr", "sources": {name: metrics}}, {"event": "final", ...}
    curves.png       loss and validation MRR against the step
    state/           resumable training state (every checkpoint.every steps and after each validation)
    best/            best weights by subset validation MRR (model.safetensors + config.json)
    last/            weights after the last step
    summary.json     steps, wall time, s/step, best step, validation metrics

Interrupting (Ctrl-C, SIGTERM) saves the state; SIGKILL loses at most one checkpoint interval.
``train(..., resume=True)`` restores weights, optimizer, RNG states and the step, drops metric lines
after the saved step and continues; batches depend only on (seed, rank, step), so the resumed run
retraces the uninterrupted one.
"""
from __future__ import annotations

import json
import math
import os
import platform
import random
import signal
import sys
import time
from pathlib import Path

import numpy as np
import torch

from tkg_indt.errors import ParameterError
from tkg_indt.paths import atomic_file

from .. import build_model
from ..scoring import Scorer
from . import checkpoint
from .curves import plot_curves, read_metrics
from .distributed import Dist
from .loss import self_adversarial_bce
from .recipe import Recipe, load_recipe
from .sampling import BatchSampler, load_sources, validation_queries


def _write_json(path: Path, data) -> None:
    with atomic_file(path) as handle:
        handle.write(json.dumps(data, indent=1, sort_keys=True) + "\n")


class Validator:
    """Time-aware filtered ranking of validation queries per source, through the evaluation harness."""

    def __init__(self, model, sources, subset: int | None, seed: int, batch_size: int):
        from tkg_indt.evaluation import transductive

        self.sources, self.batch_size = sources, batch_size
        self.tasks = [transductive(s.tkg, split="valid") for s in sources]
        self.queries = [validation_queries(s, subset, seed, i) for i, s in enumerate(sources)]
        self.scorer = [Scorer(model) for _ in sources]

    def run(self, progress: bool = False) -> dict:
        from tkg_indt.evaluation import evaluate

        per, start = {}, time.perf_counter()
        for src, task, q, scorer in zip(self.sources, self.tasks, self.queries, self.scorer):
            res = evaluate(scorer, task, batch_size=self.batch_size, queries=q, progress=progress)
            per[src.name] = {k: v for k, v in res.metrics.items()}
        mrr = float(np.mean([m["mrr"] for m in per.values()]))
        return {"mrr": mrr, "sources": per, "seconds": round(time.perf_counter() - start, 2)}


class _Stop(Exception):
    pass


def _on_sigterm(signum, frame):  # noqa: ARG001
    raise _Stop()


def train(recipe: Recipe | str | Path, out: str | Path, data_dir=None, resume: bool = False, device: str = "cpu",
          progress: bool = True, max_steps: int | None = None) -> dict:
    """Train (or resume) a run; returns the summary dict (rank 0) or ``{}`` (other ranks).

    ``max_steps`` stops after that many steps of this call (the run stays resumable): for tests
    and for splitting a long run over sessions.
    """
    out = Path(out)
    if recipe is None:
        if not (out / "recipe.yaml").is_file():
            raise ParameterError(f"no --recipe given and {out}/recipe.yaml does not exist. Fix: pass --recipe")
        recipe = out / "recipe.yaml"
    if not isinstance(recipe, Recipe):
        recipe = load_recipe(recipe)
    state_dir = out / "state"
    if resume and not checkpoint.has_state(state_dir):
        raise ParameterError(f"--resume: {state_dir} holds no training state. Fix: start the run without --resume")
    if not resume and checkpoint.has_state(state_dir):
        raise ParameterError(f"{out} already holds a training state. Fix: pass --resume to continue it, or choose "
                             f"another --out folder")
    if resume:
        saved = load_recipe(out / "recipe.yaml")
        if saved.to_dict() != recipe.to_dict():
            raise ParameterError(f"--resume: the recipe differs from {out}/recipe.yaml, the one the run started "
                                 f"with. Fix: resume with that recipe (or omit --recipe)")

    dist = Dist.start(device)
    t = recipe.train
    if t.num_threads:
        torch.set_num_threads(t.num_threads)
    random.seed(t.seed)
    np.random.seed(t.seed)
    torch.manual_seed(t.seed)
    model = build_model(recipe.model).to(dist.device)
    dist.broadcast_parameters(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=t.lr, weight_decay=t.weight_decay)
    sources = load_sources(recipe.data.sources, data_dir, recipe.data.time_gap, device=dist.device)
    sampler = BatchSampler(sources, t.batch_size, t.num_negatives, t.seed, dist.rank)

    step, best, elapsed, train_time = 0, -math.inf, 0.0, 0.0
    best_step = None
    if resume:
        meta = checkpoint.load_state(state_dir, model, optimizer)
        sampler.check_state(meta["sampler"] | {"rank": dist.rank})
        step, elapsed, train_time = meta["step"], meta["elapsed"], meta["train_seconds"]
        best, best_step = meta["best_mrr"], meta["best_step"]
        best = -math.inf if best is None else best
        if dist.main:
            kept = [m for m in read_metrics(out / "metrics.jsonl") if m.get("step", 0) <= step]
            with atomic_file(out / "metrics.jsonl") as handle:
                handle.writelines(json.dumps(m, sort_keys=True) + "\n" for m in kept)
    elif dist.main:
        out.mkdir(parents=True, exist_ok=True)
        with atomic_file(out / "recipe.yaml") as handle:
            handle.write(recipe.to_yaml())
        (out / "metrics.jsonl").unlink(missing_ok=True)
    if dist.main:
        _write_json(out / ("run.json" if not resume else f"run-resume-{step}.json"), {
            "command": sys.argv, "device": str(dist.device), "processes": dist.world, "threads": torch.get_num_threads(),
            "torch": torch.__version__, "python": platform.python_version(), "machine": platform.machine(),
            "cpu_count": os.cpu_count(), "start_step": step, "parameters": model.num_parameters(),
            "sources": {s.name: {"edges": s.num_edges, "weight": float(w), "time_offset": s.offset}
                        for s, w in zip(sources, sampler.weights)}})
    validator = Validator(model, sources, recipe.validation.subset, t.seed, recipe.validation.batch_size) \
        if dist.main else None

    total = recipe.total_steps
    stop_at = total if max_steps is None else min(total, step + int(max_steps))
    interactive = sys.stderr.isatty()
    from tqdm.auto import tqdm

    bar = tqdm(total=total, initial=step, disable=not (dist.main and progress), unit="step",
               desc=recipe.name, mininterval=0.5 if interactive else 30, dynamic_ncols=True, file=sys.stderr)
    window, last_valid = [], None
    last_log = time.perf_counter()
    old_handler = signal.signal(signal.SIGTERM, _on_sigterm) if dist.main and not dist.enabled else None

    def save(at: int) -> None:
        if dist.main:
            checkpoint.save_state(state_dir, model, optimizer, at, sampler=sampler.state_dict(),
                                  best_mrr=None if best == -math.inf else best, best_step=best_step,
                                  elapsed=elapsed, train_seconds=train_time, recipe=recipe.to_dict())

    def log(record: dict) -> None:
        if dist.main:
            with open(out / "metrics.jsonl", "a", encoding="utf-8") as handle:
                handle.write(json.dumps(record, sort_keys=True) + "\n")

    try:
        while step < stop_at:
            tick = time.perf_counter()
            batch = sampler.sample(step)
            src = sources[batch.source]
            dev = dist.device
            model.train()
            logits = model(src.graph, torch.from_numpy(batch.queries).to(dev),
                           torch.from_numpy(batch.candidates).to(dev), remove=torch.from_numpy(batch.facts).to(dev))
            loss = self_adversarial_bce(logits, t.adversarial_temperature)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            dist.average_gradients(model)
            optimizer.step()
            step += 1
            spent = time.perf_counter() - tick
            elapsed += spent
            train_time += spent
            window.append((float(loss.detach()), src.name))
            if step % recipe.log_every == 0 or step == stop_at:
                now = time.perf_counter()
                rate = len(window) / max(now - last_log, 1e-9)
                mean_loss = dist.mean(float(np.mean([w[0] for w in window])))
                graphs = {name: sum(1 for w in window if w[1] == name) for name in sorted({w[1] for w in window})}
                log({"event": "train", "step": step, "loss": mean_loss, "steps_per_s": rate, "graphs": graphs,
                     "elapsed": round(elapsed, 2), "train_seconds": round(train_time, 2)})
                bar.set_postfix_str(f"loss={mean_loss:.4f} val_mrr={'-' if last_valid is None else f'{last_valid:.4f}'} "
                                    f"{1 / max(rate, 1e-9):.2f}s/step", refresh=False)
                window, last_log = [], now
            bar.update(1)
            validate = step % recipe.validate_every == 0 or step == total
            if validate:
                if dist.main:
                    tick = time.perf_counter()
                    result = validator.run()
                    last_valid = result["mrr"]
                    log({"event": "valid", "step": step, **result})
                    if result["mrr"] > best:
                        best, best_step = result["mrr"], step
                        checkpoint.save_model(model, out / "best", name=recipe.name, step=step, valid_mrr=best,
                                              valid_subset=recipe.validation.subset, recipe=recipe.to_dict())
                    plot_curves(read_metrics(out / "metrics.jsonl"), out / "curves.png", recipe.name)
                    elapsed += time.perf_counter() - tick
                    bar.set_postfix_str(f"val_mrr={last_valid:.4f} best={best:.4f}@{best_step}", refresh=False)
                dist.barrier()
            if step % recipe.checkpoint.every == 0 or validate or step == stop_at:
                save(step)
    except (KeyboardInterrupt, _Stop):
        save(step)
        bar.close()
        if dist.main:
            print(f"\ninterrupted at step {step}; state saved in {state_dir} (resume with --resume)", file=sys.stderr)
        raise SystemExit(130)
    finally:
        if old_handler is not None:
            signal.signal(signal.SIGTERM, old_handler)
    bar.close()

    digests = dist.digests(model)
    if dist.main and dist.enabled:
        _write_json(out / "ranks.json", {"step": step, "digests": digests, "in_sync": len(set(digests)) == 1})
    if len(set(digests)) != 1:
        raise RuntimeError(f"data-parallel processes diverged: parameter digests {digests}")
    dist.barrier()
    dist.close()
    if not dist.main:
        return {}
    if step < total:
        print(f"stopped at step {step} of {total} (max_steps); resume with --resume", file=sys.stderr)
        return {"step": step, "total_steps": total, "finished": False}
    return finish(recipe, out, model, sources, step, elapsed, train_time, best_step, progress)


def finish(recipe: Recipe, out: Path, model, sources, step: int, elapsed: float, train_time: float,
           best_step, progress: bool) -> dict:
    """After the last step: save ``last/``, run the final validation of ``best/``, write summary.json."""
    checkpoint.save_model(model, out / "last", name=recipe.name, step=step, recipe=recipe.to_dict())
    final = None
    if recipe.validation.final != "none" and (out / "best").is_dir():
        best_model = checkpoint.load_model_dir(out / "best", device=model.device)
        subset = recipe.validation.subset if recipe.validation.final == "subset" else None
        full = Validator(best_model, sources, subset, recipe.train.seed, recipe.validation.batch_size)
        tick = time.perf_counter()
        final = full.run(progress=progress)
        elapsed += time.perf_counter() - tick
        final["kind"] = recipe.validation.final
        with open(out / "metrics.jsonl", "a", encoding="utf-8") as handle:
            handle.write(json.dumps({"event": "final", "step": best_step, **final}, sort_keys=True) + "\n")
    metrics = read_metrics(out / "metrics.jsonl")
    plot_curves(metrics, out / "curves.png", recipe.name)
    valid_lines = [m for m in metrics if m.get("event") == "valid"]
    summary = {
        "name": recipe.name, "scale": recipe.scale, "steps": step, "total_steps": recipe.total_steps, "finished": True,
        "wall_seconds": round(elapsed, 1),
        "train_seconds": round(train_time, 1), "train_seconds_per_step": round(train_time / max(step, 1), 4),
        "validation_seconds": round(sum(m["seconds"] for m in valid_lines), 1),
        "best_step": best_step, "best_valid_mrr": max((m["mrr"] for m in valid_lines), default=None),
        "final_validation": final, "parameters": model.num_parameters(), "model": model.config.to_dict(),
    }
    _write_json(out / "summary.json", summary)
    return summary
