"""Training curves as a small PNG (matplotlib, Agg backend) from a run's ``metrics.jsonl``."""
from __future__ import annotations

import json
from pathlib import Path


def read_metrics(path) -> list[dict]:
    path = Path(path)
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(plt, fig, target) -> Path:
    """Write ``fig`` as a PNG atomically and close it."""
    from tkg_indt.paths import atomic_file

    target = Path(target)
    with atomic_file(target, "wb") as handle:
        fig.savefig(handle, format="png")
    plt.close(fig)
    return target


def plot_curves(metrics: list[dict], target, title: str = "") -> Path | None:
    """Loss (per logged window) and validation MRR against the step; returns the PNG path."""
    plt = _pyplot()

    train = [m for m in metrics if m.get("event") == "train"]
    valid = [m for m in metrics if m.get("event") == "valid"]
    if not train and not valid:
        return None
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(7.5, 2.8), dpi=80)
    if train:
        ax1.plot([m["step"] for m in train], [m["loss"] for m in train], lw=0.8)
    ax1.set_xlabel("step")
    ax1.set_ylabel("training loss")
    if valid:
        steps = [m["step"] for m in valid]
        ax2.plot(steps, [m["mrr"] for m in valid], "o-", lw=1, ms=3, label="mean")
        names = sorted({k for m in valid for k in m.get("sources", {})})
        for name in names:
            ax2.plot(steps, [m["sources"].get(name, {}).get("mrr", float("nan")) for m in valid], ".--", lw=0.7,
                     label=name)
        ax2.legend(fontsize=6)
    ax2.set_xlabel("step")
    ax2.set_ylabel("validation MRR (subset)")
    if title:
        fig.suptitle(title, fontsize=8)
    fig.tight_layout()
    return _save(plt, fig, target)


def plot_comparison(rows: list[dict], target) -> Path:
    """Grouped bars of test MRR, static base model vs GRATE, per (base model, dataset)."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(1.4 + 1.3 * len(rows), 2.8), dpi=80)
    x = list(range(len(rows)))
    for offset, key, label in ((-0.2, "static", "static"), (0.2, "grate", "+ GRATE")):
        values = [100 * r[key] for r in rows]
        bars = ax.bar([i + offset for i in x], values, width=0.4, label=label)
        ax.bar_label(bars, fmt="%.1f", fontsize=6)
    ax.set_xticks(x, [f"{r['base'].upper()}\n{r['dataset']}{'*' if r['subset'] else ''}" for r in rows], fontsize=7)
    ax.set_ylabel("test MRR (%)")
    ax.set_ylim(0, 125 * max(max(r["static"], r["grate"]) for r in rows))
    ax.legend(fontsize=7, loc="upper center", ncol=2, frameon=False)
    fig.tight_layout()
    return _save(plt, fig, target)
