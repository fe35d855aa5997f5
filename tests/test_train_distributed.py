"""Data-parallel training with torchrun on 2 CPU processes (gloo): the processes stay in sync."""
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

from grate.train import parse, train
from grate.train.synthetic import tiny_recipe, write_source

REPO = Path(__file__).resolve().parents[1]


def test_two_cpu_processes_stay_in_sync(tmp_path):
    sources = [write_source(tmp_path / "A", seed=0), write_source(tmp_path / "B", seed=1, num_entities=20)]
    data = tiny_recipe(sources, train={"epochs": 1, "steps_per_epoch": 12}, validation={"every": 12, "final": "none"},
                       checkpoint={"every": 4})
    recipe = tmp_path / "tiny.yaml"
    recipe.write_text(yaml.safe_dump(data))
    out = tmp_path / "ddp"
    env = dict(os.environ, PYTHONPATH=str(REPO), OMP_NUM_THREADS="1")
    cmd = [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node=2", "-m", "tkg_indt.cli",
           "train", "--recipe", str(recipe), "--out", str(out), "--quiet"]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    ranks = json.loads((out / "ranks.json").read_text())
    assert ranks["step"] == 12 and len(ranks["digests"]) == 2
    assert ranks["in_sync"] and ranks["digests"][0] == ranks["digests"][1]
    run = json.loads((out / "run.json").read_text())
    assert run["processes"] == 2
    assert json.loads((out / "summary.json").read_text())["steps"] == 12
    # the second process contributed gradients: one process alone ends elsewhere
    single = tmp_path / "single"
    train(parse(data), single, progress=False)
    assert (single / "last/model.safetensors").read_bytes() != (out / "last/model.safetensors").read_bytes()
