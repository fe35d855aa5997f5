"""`tkg-indt check`: a clean variant passes; each kind of corruption is caught and named."""
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tkg_indt.benchmark import build_variant, check_variant
from tkg_indt.benchmark.synthetic import write_synthetic_gdelt
from tkg_indt.cli import main
from tkg_indt.data import load_source


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    write_synthetic_gdelt(data, n_facts=30_000, seed=2)
    src = load_source("GDELT", data_dir=data)
    root = tmp_path_factory.mktemp("variants")
    return {"src": src, "data": data,
            "extra": build_variant("gdelt", 0.5, "extra", tkg=src, out=root / "p50-extra"),
            "p100": build_variant("gdelt", 1.0, "inter", tkg=src, out=root / "p100-inter")}


@pytest.fixture
def copy(built, tmp_path):
    def make(which: str, keep_meta: bool = True) -> Path:
        folder = tmp_path / built[which].name
        shutil.copytree(built[which], folder)
        if not keep_meta:
            (folder / "metadata.json").unlink()
        return folder
    return make


def lines(folder: Path, split: str) -> list[list[str]]:
    return [ln.split("\t") for ln in (folder / f"{split}.txt").read_text().splitlines()]


def write(folder: Path, split: str, rows) -> None:
    (folder / f"{split}.txt").write_text("".join("\t".join(r) + "\n" for r in rows))


def violations(folder: Path, built) -> str:
    report = check_variant(folder, source=built["src"], rebuild=True)
    assert not report.ok
    return "\n".join(report.violations)


def test_clean_variants_pass(built, copy):
    for which in ("extra", "p100"):
        assert check_variant(built[which], source=built["src"], rebuild=True).ok
        bare = copy(which, keep_meta=False)
        report = check_variant(bare)
        assert report.ok, str(report)
        assert any("no metadata.json" in n for n in report.notes)


@pytest.mark.parametrize("keep_meta", [True, False])
def test_train_valid_overlap(built, copy, keep_meta):
    f = copy("extra", keep_meta)
    write(f, "valid", lines(f, "valid") + lines(f, "train")[:1])
    assert "train ∩ valid is not empty" in "\n".join(check_variant(f, source=built["src"]).violations)


@pytest.mark.parametrize("keep_meta", [True, False])
def test_msg_test_overlap(built, copy, keep_meta):
    f = copy("p100", keep_meta)
    write(f, "msg", lines(f, "msg") + lines(f, "test")[:1])
    assert "msg ∩ test is not empty" in "\n".join(check_variant(f, source=built["src"]).violations)


def test_entity_in_both_graphs(built, copy):
    f = copy("p100")
    train, msg = lines(f, "train"), lines(f, "msg")
    train[0][0] = msg[0][0]
    write(f, "train", train)
    assert "V_tr ∩ V_inf is not empty" in violations(f, built)


def test_valid_outside_the_training_graph(built, copy):
    f = copy("extra")
    valid = lines(f, "valid")
    valid[0][2] = "NOT_IN_TRAIN"
    write(f, "valid", valid)
    assert "of valid never occur in train" in violations(f, built)


def test_test_entity_missing_from_msg(built, copy):
    f = copy("extra")
    test = lines(f, "test")
    test[-1][0] = "UNSEEN_ENTITY"
    write(f, "test", test)
    v = violations(f, built)
    assert "entit(y/ies) of test never occur in msg" in v and "'UNSEEN_ENTITY'" in v


@pytest.mark.parametrize("keep_meta", [True, False])
def test_extra_mode_order(built, copy, keep_meta):
    f = copy("extra", keep_meta)
    test = lines(f, "test")
    write(f, "msg", lines(f, "msg") + test[-1:])  # the latest test fact moves into msg
    write(f, "test", test[:-1])
    assert "extra mode: max time(msg)" in "\n".join(check_variant(f, source=built["src"]).violations)


@pytest.mark.parametrize("keep_meta", [True, False])
def test_p100_relation_overlap(built, copy, keep_meta):
    f = copy("p100", keep_meta)
    msg = lines(f, "msg")
    msg[0][1] = lines(f, "train")[0][1]
    write(f, "msg", msg)
    v = "\n".join(check_variant(f, source=built["src"]).violations)
    assert "R_tr ∩ R_inf is not empty" in v
    if keep_meta:
        assert "in neither X (R_tr, T_tr) nor Y (R_inf, T_inf)" in v


@pytest.mark.parametrize("keep_meta", [True, False])
def test_p100_time_overlap(built, copy, keep_meta):
    f = copy("p100", keep_meta)
    msg = lines(f, "msg")
    msg[0][3] = lines(f, "train")[-1][3]
    write(f, "msg", msg)
    v = "\n".join(check_variant(f, source=built["src"]).violations)
    assert "T_tr ∩ T_inf is not empty" in v and "not later than every training timestamp" in v


def test_counts_and_hashes_against_metadata(built, copy):
    f = copy("extra")
    write(f, "test", lines(f, "test")[1:])
    v = violations(f, built)
    assert "test.txt has" in v and "metadata.json says" in v and "sha256 mismatch" in v


def test_fact_not_in_source_and_rebuild_mismatch(built, copy):
    f = copy("p100")
    msg = lines(f, "msg")
    msg[0][3] = "2016-03-31" if msg[0][3] != "2016-03-31" else "2016-03-30"  # still a Y time, new quadruple
    write(f, "msg", msg)
    v = violations(f, built)
    assert "differs from a rebuild" in v


def test_recorded_parameters_must_reproduce_the_files(built, copy):
    f = copy("extra")
    meta = json.loads((f / "metadata.json").read_text())
    meta["params"]["seed"] = 7
    (f / "metadata.json").write_text(json.dumps(meta))
    assert "differs from a rebuild" in violations(f, built)


def test_merge_sizes_recorded(built, copy):
    f = copy("extra")
    meta = json.loads((f / "metadata.json").read_text())
    meta["sampling"]["taken_x"] += 5
    (f / "metadata.json").write_text(json.dumps(meta))
    assert "is not the merge of pools" in violations(f, built)


def test_missing_and_empty_files(built, copy):
    f = copy("extra")
    (f / "msg.txt").unlink()
    assert "missing split file(s): msg.txt" in "\n".join(check_variant(f).violations)
    g = copy("p100")
    (g / "valid.txt").write_text("")
    assert "valid.txt" in "\n".join(check_variant(g).violations)


def test_cli_check_exit_codes(built, copy):
    runner = CliRunner()
    ok = runner.invoke(main, ["check", str(built["extra"]), "--data-dir", str(built["data"])])
    assert ok.exit_code == 0 and "OK" in ok.output
    f = copy("p100")
    write(f, "valid", lines(f, "valid") + lines(f, "train")[:1])
    bad = runner.invoke(main, ["check", str(f), "--no-rebuild"])
    assert bad.exit_code == 1 and "VIOLATION: train ∩ valid is not empty" in bad.output
    # a suite folder: every variant under it is checked
    both = runner.invoke(main, ["check", str(built["extra"].parent), "--no-rebuild"])
    assert both.exit_code == 0 and both.output.count(": OK") == 2
