"""Training: recipes, sampling, loss, the loop's outputs, checkpoints and resume after SIGKILL."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import torch
import yaml

from grate.train import BatchSampler, load_recipe, load_sources, parse, self_adversarial_bce, train
from grate.train.checkpoint import load_model_dir
from grate.train.synthetic import tiny_recipe, write_source
from tkg_indt.errors import ParameterError
from tkg_indt.evaluation.filtering import KnownAnswers

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def sources(tmp_path_factory):
    root = tmp_path_factory.mktemp("src")
    return [write_source(root / "A", seed=0), write_source(root / "B", seed=1, num_entities=20, num_times=4,
                                                           num_facts=120)]


def write_recipe(path, data):
    path.write_text(yaml.safe_dump(data))
    return path


# ---------------------------------------------------------------------- recipes
def test_repository_recipes_parse_and_match_the_paper():
    files = sorted((REPO / "recipes" / "train").glob("*.yaml"))
    names = {f.stem for f in files}
    for name in ("grate-trix", "grate-ultra", "trix", "ultra"):
        assert {f"{name}-paper", f"{name}-cpu"} <= names
    for f in files:
        r = load_recipe(f)
        assert r.data.sources == ("ICEWS14", "ICEWS05-15")
        assert r.train.num_negatives == 512 and r.train.adversarial_temperature == 1.0
        message = "grate" if r.name.startswith("grate-") else "distmult"
        assert r.model.message == message and r.model.model == r.name.split("-")[-1]
        if r.scale == "paper":
            assert r.train.batch_size == (8 if r.model.model == "ultra" else 2)
            assert (r.train.lr, r.train.epochs, r.train.steps_per_epoch) == (5e-4, 10, 80000)
            assert r.validation.subset == 500 and r.validation.final == "full"
        else:
            assert "Reductions" in f.read_text(), f"{f} must list its reductions"
    # the static and GRATE CPU runs of a base model differ only in the message
    for base in ("trix", "ultra"):
        a, b = load_recipe(REPO / f"recipes/train/{base}-cpu.yaml"), load_recipe(REPO / f"recipes/train/grate-{base}-cpu.yaml")
        assert a.replace(name="x", notes="", model={"message": "grate"}) == b.replace(name="x", notes="")


def test_recipe_errors_name_the_key(sources, tmp_path):
    good = tiny_recipe(sources)
    parse(good)
    for bad, key in ((dict(good, bogus=1), "bogus"), (tiny_recipe(sources, train={"lr": -1.0}), "train.lr"),
                     (tiny_recipe(sources, train={"batchsize": 2}), "train.batchsize"),
                     (tiny_recipe(sources, validation={"final": "all"}), "validation.final"),
                     (tiny_recipe(sources, model={"model": "gnn"}), "model")):
        with pytest.raises(ParameterError, match=key.replace(".", r"\.")):
            parse(bad, "r.yaml")
    with pytest.raises(ParameterError, match="does not exist"):
        load_recipe(tmp_path / "missing.yaml")


# ---------------------------------------------------------------------- sampling
def test_sources_get_disjoint_time_ranges(sources):
    a, b = load_sources(sources, time_gap=1)
    ta, tb = a.tkg.facts()[:, 3], b.tkg.facts()[:, 3]
    assert ta.min() == 0 and tb.min() == ta.max() + 2
    assert np.array_equal(np.diff(np.unique(tb)), np.diff(np.unique(b.tkg.facts()[:, 3] - b.offset)))


def test_batches_follow_the_recipe(sources):
    srcs = load_sources(sources)
    sampler = BatchSampler(srcs, batch_size=4, num_negatives=64, seed=3)
    edges = np.array([s.num_edges for s in srcs], float)
    assert np.allclose(sampler.weights, edges / edges.sum())
    picks = np.array([sampler.sample(i).source for i in range(600)])
    share = np.mean(picks == 0)
    assert abs(share - sampler.weights[0]) < 4 * np.sqrt(sampler.weights[0] * (1 - sampler.weights[0]) / 600)
    for step in range(50):
        b = sampler.sample(step)
        src = srcs[b.source]
        R = src.tkg.num_relations
        assert np.array_equal(b.facts[:, [0, 1, 3]], b.queries) and np.array_equal(b.facts[:, 2], b.candidates[:, 0])
        assert (b.queries[:, 1] >= R).sum() == 2  # half of the rows ask for heads (inverse relations)
        # every oriented fact is a training fact (or its inverse): the model can remove it
        train = {tuple(f) for f in src.train.tolist()}
        for s, r, o, t in b.facts.tolist():
            assert ((s, r, o, t) if r < R else (o, r - R, s, t)) in train
        # strict, time-aware negatives: never a true answer of (s, r, ?, t) in the training facts
        known = KnownAnswers(src.train, src.tkg.num_entities, R, "time-aware")
        rows, objs = known.lookup(b.queries)
        neg = b.candidates[:, 1:]
        assert not any(o in neg[r] for r, o in zip(rows, objs))
        keep = src.graph.at().keep_mask(torch.from_numpy(b.facts))
        assert ((~keep).sum(1) >= 2).all()  # the fact and its inverse edge are hidden
    again = BatchSampler(srcs, 4, 64, seed=3).sample(7)
    assert np.array_equal(again.candidates, sampler.sample(7).candidates)
    other = BatchSampler(srcs, 4, 64, seed=3, rank=1).sample(7)
    assert not np.array_equal(other.candidates, again.candidates)


def test_self_adversarial_loss_matches_its_formula():
    torch.manual_seed(0)
    logits = torch.randn(3, 6)
    pos, neg = logits[:, 0], logits[:, 1:]
    w = torch.softmax(neg, -1)
    expected = ((-torch.log(torch.sigmoid(pos)) + (w * -torch.log(1 - torch.sigmoid(neg))).sum(-1)) / 2).mean()
    assert torch.allclose(self_adversarial_bce(logits, 1.0), expected, atol=1e-6)
    uniform = ((-torch.log(torch.sigmoid(pos)) + (-torch.log(1 - torch.sigmoid(neg))).mean(-1)) / 2).mean()
    assert torch.allclose(self_adversarial_bce(logits, 0.0), uniform, atol=1e-6)
    logits.requires_grad_(True)
    self_adversarial_bce(logits).backward()  # the weights carry no gradient: d/d neg = w * sigmoid(neg) / 2 / B
    assert torch.allclose(logits.grad[:, 1:], (w * torch.sigmoid(neg) / 2 / 3).detach(), atol=1e-6)


# ---------------------------------------------------------------------- the loop
def test_training_run_writes_its_folder_and_learns(sources, tmp_path):
    out = tmp_path / "run"
    summary = train(parse(tiny_recipe(sources, train={"lr": 5e-3})), out, progress=False)
    for f in ("recipe.yaml", "run.json", "metrics.jsonl", "curves.png", "summary.json", "best/model.safetensors",
              "best/config.json", "last/model.safetensors", "state/state.json", "state/optimizer.safetensors"):
        assert (out / f).is_file(), f
    assert (out / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not list(out.rglob("*.pt")) and not list(out.rglob("*.pkl"))
    lines = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    train_lines = [m for m in lines if m["event"] == "train"]
    valid = [m for m in lines if m["event"] == "valid"]
    assert [m["step"] for m in valid] == [10, 20] and [m["step"] for m in train_lines] == list(range(2, 21, 2))
    assert set(valid[0]["sources"]) == {"A", "B"} and valid[0]["sources"]["A"]["count"] == 16
    assert train_lines[-1]["loss"] < train_lines[0]["loss"]
    assert summary["steps"] == 20 and summary["best_step"] in (10, 20)
    assert summary["final_validation"]["kind"] == "full"
    model = load_model_dir(out / "best")
    assert model.checkpoint["step"] == summary["best_step"]
    assert model.num_parameters() == summary["parameters"]


def test_resume_errors(sources, tmp_path):
    recipe = parse(tiny_recipe(sources))
    with pytest.raises(ParameterError, match="no training state"):
        train(recipe, tmp_path / "r", resume=True, progress=False)
    train(recipe, tmp_path / "r", progress=False, max_steps=3)
    with pytest.raises(ParameterError, match="--resume"):
        train(recipe, tmp_path / "r", progress=False)
    with pytest.raises(ParameterError, match="recipe differs"):
        train(recipe.replace(train={"lr": 1e-2}), tmp_path / "r", resume=True, progress=False)


def _state_step(out: Path) -> int:
    try:
        return json.loads((out / "state" / "state.json").read_text())["step"]
    except (OSError, ValueError):
        return -1


def test_sigkill_then_resume_reproduces_the_uninterrupted_run(sources, tmp_path):
    data = tiny_recipe(sources, train={"epochs": 1, "steps_per_epoch": 80}, validation={"every": 40},
                       checkpoint={"every": 5})
    recipe = write_recipe(tmp_path / "tiny.yaml", data)
    out = tmp_path / "killed"
    env = dict(os.environ, PYTHONPATH=str(REPO))
    cmd = [sys.executable, "-m", "tkg_indt.cli", "train", "--recipe", str(recipe), "--out", str(out), "--quiet"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while _state_step(out) < 20 and proc.poll() is None and time.time() < deadline:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    killed_at = _state_step(out)
    assert 20 <= killed_at < 80, f"the run was not killed mid-way (state at step {killed_at})"
    assert not (out / "summary.json").exists()
    lines = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    last_logged = max(m["step"] for m in lines)
    assert last_logged - killed_at < 5 + data["log_every"]  # at most one checkpoint interval is lost

    resumed = subprocess.run(cmd + ["--resume"], env=env, capture_output=True, text=True, timeout=300)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["steps"] == 80
    steps = [m["step"] for m in map(json.loads, (out / "metrics.jsonl").read_text().splitlines()) if m["event"] == "train"]
    assert steps == sorted(set(steps)) and steps[-1] == 80  # no step logged twice, none skipped past the state

    ref = tmp_path / "uninterrupted"
    train(parse(data), ref, progress=False)
    for folder in ("last", "best"):  # same seed: bit-identical weights
        assert (out / folder / "model.safetensors").read_bytes() == (ref / folder / "model.safetensors").read_bytes()


def test_a_kill_during_the_state_swap_still_resumes(sources, tmp_path):
    recipe = parse(tiny_recipe(sources))
    out = tmp_path / "r"
    train(recipe, out, progress=False, max_steps=4)
    (out / "state").rename(out / ".state.old-12345")  # killed between the two renames of atomic_dir
    summary = train(recipe, out, resume=True, progress=False)
    assert summary["steps"] == 20 and (out / "state" / "state.json").is_file()
    assert not list(out.glob(".state.old-*"))
