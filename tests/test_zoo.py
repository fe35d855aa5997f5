"""Model zoo: load released checkpoints by name or folder; `tkg-indt eval --model/--checkpoint`."""
import json
import shutil

import numpy as np
import pytest
import torch
from click.testing import CliRunner

from grate.scoring import Scorer
from grate.train import parse, train
from grate.train.synthetic import tiny_recipe, write_source
from grate.zoo import RELEASES, available, load_model
from tkg_indt.cli import main
from tkg_indt.errors import MissingDataError, UnknownNameError
from tkg_indt.evaluation import evaluate, inductive


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    root = tmp_path_factory.mktemp("zoo")
    src = write_source(root / "A", seed=0)
    write_source(root / "variant", seed=5, num_entities=25, msg=True)
    train(parse(tiny_recipe([src], train={"epochs": 1}, validation={"final": "none"})), root / "run", progress=False)
    return root


@pytest.fixture
def releases(trained, tmp_path, monkeypatch):
    monkeypatch.setenv("GRATE_RELEASES", str(tmp_path / "releases"))
    shutil.copytree(trained / "run" / "best", tmp_path / "releases" / "grate-trix")
    return tmp_path / "releases"


def test_load_by_name_and_by_folder(trained, releases):
    import grate

    by_name, by_path = grate.load_model("grate-trix"), load_model(trained / "run" / "best")
    assert not by_name.training and by_name.config == by_path.config
    for a, b in zip(by_name.state_dict().values(), by_path.state_dict().values()):
        assert torch.equal(a, b)
    assert available()["grate-trix"] == releases / "grate-trix" and available()["ultra"] is None


def test_unknown_and_untrained_names_fail_clearly(releases):
    with pytest.raises(UnknownNameError) as err:
        load_model("grate-gnn")
    assert all(name in str(err.value) for name in RELEASES)
    with pytest.raises(MissingDataError, match="not been trained yet.*recipes/train/ultra-cpu.yaml"):
        load_model("ultra")


def test_eval_command_with_name_and_checkpoint(trained, releases, tmp_path):
    runner = CliRunner()
    variant = trained / "variant"
    out = tmp_path / "res.json"
    by_name = runner.invoke(main, ["eval", "--model", "grate-trix", "--benchmark", str(variant), "--out", str(out)])
    assert by_name.exit_code == 0, by_name.output
    assert "| grate-trix |" in by_name.output
    report = json.loads(out.read_text())
    assert report["protocol"] == "inductive" and report["model_details"]["checkpoint"].endswith("grate-trix")
    # the command goes through the same harness as the Python API
    from tkg_indt.benchmark import load_variant

    direct = evaluate(Scorer(load_model("grate-trix")), inductive(load_variant(variant)))
    assert np.isclose(direct.metrics["mrr"], report["metrics"]["mrr"])
    by_path = runner.invoke(main, ["eval", "--checkpoint", str(trained / "run" / "best"), "--benchmark", str(variant),
                                   "--out", str(out)])
    assert by_path.exit_code == 0, by_path.output
    assert np.isclose(json.loads(out.read_text())["metrics"]["mrr"], report["metrics"]["mrr"])
    missing = runner.invoke(main, ["eval", "--model", "ultra", "--benchmark", str(variant)])
    assert missing.exit_code == 2 and "not been trained yet" in missing.output
    none = runner.invoke(main, ["eval", "--benchmark", str(variant)])
    assert none.exit_code != 0 and "--model NAME or --checkpoint PATH" in none.output


def test_release_packaging_writes_a_small_loadable_release(trained, tmp_path, monkeypatch):
    from grate.train.release import release

    src = trained / "A"
    root = tmp_path / "rel"
    folder = release("trix", trained / "run", {str(src): 5}, root=root, datasets=(str(src),), progress=False)
    files = {p.name for p in folder.iterdir()}
    assert files == {"model.safetensors", "config.json", "MODEL_CARD.md", "curves.png", "test_metrics.json"}
    assert all(p.stat().st_size < 4 * 2 ** 20 for p in folder.iterdir())
    card = (folder / "MODEL_CARD.md").read_text()
    metrics = json.loads((folder / "test_metrics.json").read_text())["test"][str(src)]
    assert metrics["subset"] and metrics["test_facts"] == 5 and metrics["metrics"]["count"] == 10
    assert "5 of" in card and "seeded subset" in card and f"{100 * metrics['metrics']['mrr']:.2f}" in card
    assert "[trix](trix/MODEL_CARD.md)" in (root / "README.md").read_text()
    again = release("trix", trained / "run", root=root, datasets=(str(src),), progress=False, card_only=True)
    assert json.loads((again / "test_metrics.json").read_text())["test"][str(src)] == metrics
    monkeypatch.setenv("GRATE_RELEASES", str(root))
    assert load_model("trix").num_parameters() == json.loads((folder / "config.json").read_text())["parameters"]


@pytest.mark.parametrize("name", sorted(RELEASES))
def test_committed_releases_load_and_match_their_cards(name, monkeypatch):
    """Every release in releases/ loads by name (safetensors + JSON), has the architecture and the
    parameter count its card states, the static/GRATE message its name says, and test metrics on
    both pretraining sources."""
    import grate

    monkeypatch.delenv("GRATE_RELEASES", raising=False)
    model = grate.load_model(name)
    folder = available()[name]
    card = (folder / "MODEL_CARD.md").read_text()
    metrics = json.loads((folder / "test_metrics.json").read_text())
    assert model.config.message == ("grate" if name.startswith("grate-") else "distmult")
    assert model.config.model == name.split("-")[-1]
    assert model.num_parameters() == metrics["parameters"] == grate.count_parameters(model.config)
    assert f"Parameters: {metrics['parameters']:,}" in card
    assert set(metrics["test"]) == {"ICEWS14", "ICEWS05-15"}
    for result in metrics["test"].values():
        m = result["metrics"]
        assert 0 < m["hits@1"] <= m["mrr"] <= m["hits@10"] <= 1 and result["test_facts"] > 0
        assert f"{100 * m['mrr']:.2f}" in card
    assert (folder / "curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_release_index_compares_only_comparable_pairs(tmp_path):
    from grate.train.release import comparison, write_index

    def put(name, steps, mrr, facts=100):
        test = {ds: {"metrics": {"mrr": mrr, "hits@10": 0.9}, "subset": facts < 1000, "test_facts": facts,
                     "seed": 1 if facts < 1000 else None} for ds in ("ICEWS14", "ICEWS05-15")}
        (tmp_path / name).mkdir()
        (tmp_path / name / "test_metrics.json").write_text(json.dumps({"parameters": 1, "steps": steps, "test": test}))

    put("trix", 100, 0.40), put("grate-trix", 100, 0.50)
    put("ultra", 100, 0.30), put("grate-ultra", 50, 0.35)  # different training lengths: not compared
    rows = comparison(tmp_path)
    assert [(r["base"], r["dataset"]) for r in rows] == [("trix", "ICEWS14"), ("trix", "ICEWS05-15")]
    write_index(tmp_path)
    text = (tmp_path / "README.md").read_text()
    assert "| TRIX | ICEWS14 | 40.00* | 50.00* | +25.0 % |" in text and "| ULTRA |" not in text
    assert (tmp_path / "comparison.png").read_bytes()[:4] == b"\x89PNG"
    shutil.rmtree(tmp_path / "grate-trix")
    put("grate-trix", 100, 0.5, facts=200)  # other test facts: not compared either
    assert comparison(tmp_path) == []
