"""Training curves as a small PNG (matplotlib, Agg backend) from a run's ``metrics.jsonl``."""
from __future__ import annotations

import json
from pathlib import Path


def read_metrics(path) -> list[dict]:
    path = Path(path)
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def plot_curves(metrics: list[dict], target, title: str = "") -> Path | None:
    """Loss (per logged window) and validation MRR against the step; returns the PNG path."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from tkg_indt.paths import atomic_file

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
    target = Path(target)
    with atomic_file(target, "wb") as handle:
        fig.savefig(handle, format="png")
    plt.close(fig)
    return target
