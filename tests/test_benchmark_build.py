"""The benchmark builder on a synthetic GDELT-shaped source (the real GDELT files are not available).

The synthetic source is written as ``GDELT/{train,valid,test}.txt`` under a temporary data folder
and read by the real loader, so the whole GDELT path (recipe, load, build, write, check, load back)
runs end to end.
"""
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from tkg_indt.benchmark import (build_suite, build_variant, check_variant, get_recipe, load_variant, make_variant,
                                recipes, variant_dir)
from tkg_indt.benchmark.build import merge_sizes, resolve_params
from tkg_indt.benchmark.graph import adjacency, expand, first_covering, giant_component, unique_facts
from tkg_indt.benchmark.recipe import recipe_files
from tkg_indt.benchmark.synthetic import synthetic_gdelt, write_synthetic_gdelt
from tkg_indt.cli import main
from tkg_indt.data import load_source
from tkg_indt.errors import ParameterError

REPO = Path(__file__).resolve().parents[1]
N_FACTS = 40_000


@pytest.fixture(scope="module")
def gdelt_dir(tmp_path_factory):
    data = tmp_path_factory.mktemp("data")
    write_synthetic_gdelt(data, n_facts=N_FACTS, seed=0)
    return data


@pytest.fixture(scope="module")
def gdelt(gdelt_dir):
    return load_source("GDELT", data_dir=gdelt_dir)


@pytest.fixture(scope="module")
def gdelt_suite(gdelt_dir, tmp_path_factory):
    root = tmp_path_factory.mktemp("GDELTIndT")
    return build_suite("GDELTIndT", root=root, data_dir=gdelt_dir, progress=False)


def sha(folder: Path) -> dict:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}


# ----------------------------------------------------------------------------- recipes
def test_recipes_hold_the_paper_parameters():
    r = recipes()
    assert set(r) == {"GDELTIndT", "WIKIIndT"}
    g, w = r["GDELTIndT"], r["WIKIIndT"]
    assert (g.source, w.source, g.seed, w.seed) == ("GDELT", "WIKI", 0, 23)  # WIKI: see its recipe
    assert {k: g.params[k] for k in ("p_r", "p_t", "n_tr", "n_inf", "hop_cap", "hops_tr", "hops_inf")} == \
        {"p_r": 0.5, "p_t": 0.3, "n_tr": 50, "n_inf": 300, "hop_cap": 5, "hops_tr": 1, "hops_inf": 1}
    assert {k: w.params[k] for k in ("p_r", "p_t", "n_tr", "n_inf", "hop_cap", "hops_tr", "hops_inf")} == \
        {"p_r": 0.25, "p_t": 0.3, "n_tr": 2000, "n_inf": 1000, "hop_cap": 20, "hops_tr": 1, "hops_inf": 2}
    want = [(p, m) for m in ("inter", "extra") for p in (0.25, 0.5, 0.75, 1.0)]
    assert sorted(g.variants) == sorted(want) and sorted(w.variants) == sorted(want)
    assert get_recipe("wiki").suite == get_recipe("WIKIIndT").suite == "WIKIIndT"


def test_repo_recipes_are_the_shipped_ones():
    shipped = recipe_files()
    for stem in ("gdelt", "wiki"):
        assert (REPO / "recipes" / "benchmarks" / f"{stem}.yaml").read_text(encoding="utf-8") == shipped[stem]


def test_pyproject_ships_the_recipes():
    text = (REPO / "pyproject.toml").read_text()
    assert '"tkg_indt.benchmark" = ["recipes/*.yaml"]' in text


def test_recipe_file_path(tmp_path):
    custom = tmp_path / "mine.yaml"
    custom.write_text(recipe_files()["gdelt"].replace("suite: GDELTIndT", "suite: Mine"))
    assert get_recipe(str(custom)).suite == "Mine"
    (tmp_path / "bad.yaml").write_text("suite: X\nsource: GDELT\nparams: {p_r: 2}\nvariants: []\n")
    with pytest.raises(ParameterError, match="params must give"):
        get_recipe(str(tmp_path / "bad.yaml"))


# ----------------------------------------------------------------------------- primitives
def test_merge_sizes_is_ingram_merge():
    assert merge_sizes(900, 100, 0.25) == (300, 100)  # Y limits: N = 400
    assert merge_sizes(90, 1000, 0.25) == (90, 30)  # X limits: N = 120
    assert merge_sizes(50, 70, 0.5) == (50, 50)
    assert merge_sizes(50, 70, 1.0) == (0, 70)
    assert merge_sizes(300, 100, 0.75) == (33, 100)


def test_unique_facts_sorted_and_distinct():
    f = np.array([[2, 0, 1, 5], [0, 1, 2, 3], [2, 0, 1, 5], [0, 1, 2, 1]])
    assert unique_facts(f).tolist() == [[0, 1, 2, 1], [0, 1, 2, 3], [2, 0, 1, 5]]


def test_giant_component_and_expand_cap():
    # star 0 - 1..30, plus a separate edge 40 - 41
    f = np.array([[0, 0, i, 0] for i in range(1, 31)] + [[40, 0, 41, 0]])
    gcc = giant_component(f, 50)
    assert np.flatnonzero(gcc).tolist() == list(range(31))
    adj = adjacency(f, 50)
    rng = np.random.default_rng(0)
    one = expand(adj, np.array([0]), 1, 5, rng)
    assert len(one) == 6 and 0 in one and set(one) <= set(range(31))
    assert expand(adj, np.array([0]), 0, 5, rng).tolist() == [0]
    two = expand(adj, np.array([3]), 2, 5, rng)  # 3 -> 0 -> five leaves
    assert 0 in two and 3 in two and 2 <= len(two) <= 7
    a = expand(adj, np.array([0, 40]), 2, 3, np.random.default_rng(7))
    b = expand(adj, np.array([0, 40]), 2, 3, np.random.default_rng(7))
    assert a.tolist() == b.tolist()


def test_first_covering_picks_one_row_per_missing_item():
    facts = np.array([[5, 0, 1, 0], [1, 0, 6, 0], [5, 1, 6, 0], [1, 0, 2, 0]])
    covered_e = np.zeros(10, bool)
    covered_e[[1, 2]] = True
    covered_r = np.array([True, False])
    rows = first_covering(facts, covered_e, covered_r)
    assert rows.tolist() == [0, 1, 2]  # 5 (row 0), 6 (row 1), relation 1 (row 2)


def test_synthetic_generator_shape_and_determinism():
    a = synthetic_gdelt(5000, seed=3)
    b = synthetic_gdelt(5000, seed=3)
    assert all((a[k] == b[k]).all() for k in a)
    days = np.unique(a["time"])
    assert len(days) == 366 and days[0] == "2015-04-01" and days[-1] == "2016-03-31"
    assert len(np.unique(np.concatenate([a["head"], a["tail"]]))) <= 500 and len(np.unique(a["relation"])) <= 20
    assert not (a["head"] == a["tail"]).any()


# ----------------------------------------------------------------------------- GDELT end to end
def test_gdelt_suite_builds_and_passes_every_check(gdelt_suite, gdelt):
    assert [p.name for p in gdelt_suite] == [f"p{p}-{m}" for m in ("inter", "extra") for p in (25, 50, 75, 100)]
    seeds = set()
    for folder in gdelt_suite:
        assert sorted(p.name for p in folder.iterdir()) == ["metadata.json", "msg.txt", "test.txt", "train.txt", "valid.txt"]
        report = check_variant(folder, source=gdelt, rebuild=True)
        assert report.ok, str(report)
        meta = json.loads((folder / "metadata.json").read_text())
        seeds.add(meta["variant_seed"])
        assert meta["source"]["name"] == "GDELT" and meta["source"]["checksum"] == gdelt.meta["checksum"]
        tt, ti = meta["timestamps"]["train"], meta["timestamps"]["inference"]
        assert (tt["first"], tt["last"], tt["count"]) == ("2015-04-01", "2015-12-12", 256)  # paper's boundaries
        assert (ti["first"], ti["last"], ti["count"]) == ("2015-12-13", "2016-03-31", 110)
        assert meta["time"]["format"] == "iso-date"
        assert len(meta["relations"]["train"]) == len(meta["relations"]["inference"]) == 10
        assert meta["V_tr"] + meta["V_inf"] <= 500
        if meta["mode"] == "inter":
            assert abs(meta["p_tri_realised"] - meta["p_tri"]) < 0.01
        for split in ("train", "valid", "msg", "test"):
            assert meta["splits"][split]["quads"] > 0
    assert len(seeds) == 8  # every variant is its own draw


def test_load_variant_matches_the_build(gdelt_suite, gdelt):
    folder = gdelt_suite[5]  # p50-extra
    tkg = load_variant(folder)
    assert set(tkg.splits) == {"train", "valid", "msg", "test"}
    assert tkg.time.first == gdelt.time.first  # indices are the source's time indices
    params = resolve_params("gdelt", 0.5, "extra")
    built = make_variant(gdelt, params)
    ent = {n: i for i, n in enumerate(gdelt.entities)}
    rel = {n: i for i, n in enumerate(gdelt.relations)}
    emap = np.array([ent[n] for n in tkg.entities])
    rmap = np.array([rel[n] for n in tkg.relations])
    for split in tkg.splits:
        f = tkg[split]
        back = np.stack([emap[f[:, 0]], rmap[f[:, 1]], emap[f[:, 2]], f[:, 3]], 1)
        assert np.array_equal(np.unique(back, axis=0), np.unique(built.tkg[split], axis=0))
    # lines are sorted by time, then names
    lines = (folder / "test.txt").read_text().splitlines()
    keys = [(ln.split("\t")[3], ln.split("\t")[0], ln.split("\t")[1], ln.split("\t")[2]) for ln in lines]
    assert keys == sorted(keys)


def test_extra_mode_is_chronological_and_records_drops(gdelt_suite):
    for folder in gdelt_suite[4:]:
        tkg = load_variant(folder)
        assert tkg["msg"][:, 3].max() <= tkg["test"][:, 3].min()
        assert "test_dropped" in tkg.meta["coverage"]


def test_build_is_deterministic_in_process(gdelt, tmp_path):
    a = build_variant("gdelt", 0.75, "inter", tkg=gdelt, out=tmp_path / "a")
    b = build_variant("gdelt", 0.75, "inter", tkg=gdelt, out=tmp_path / "b")
    assert sha(a) == sha(b)


def test_build_is_identical_under_other_hash_seeds_and_outside_the_repo(gdelt_dir, gdelt, tmp_path):
    """Same parameters -> byte-identical files whatever PYTHONHASHSEED (fresh processes, CLI). One of the
    two processes runs a copy of the package outside the repository (as a non-editable install has it),
    which must find its recipes as package data."""
    import shutil

    ref = build_variant("gdelt", 0.25, "extra", tkg=gdelt, out=tmp_path / "ref")
    copy = tmp_path / "site"
    shutil.copytree(REPO / "tkg_indt", copy / "tkg_indt", ignore=shutil.ignore_patterns("__pycache__"))
    code = ("import sys, tkg_indt, tkg_indt.benchmark as b; from tkg_indt.cli import main; "
            "print(tkg_indt.__file__, sorted(b.recipes()), file=sys.stderr); main()")
    procs = []
    for hs, path in (("0", copy), ("4242", REPO)):
        env = {**os.environ, "PYTHONHASHSEED": hs, "TKG_INDT_HOME": str(tmp_path / f"home{hs}"), "PYTHONPATH": str(path)}
        argv = [sys.executable, "-c", code, "build", "--source", "gdelt", "--p-tri", "0.25", "--mode", "extra",
                "--data-dir", str(gdelt_dir), "--out", str(tmp_path / f"hs{hs}")]
        procs.append(subprocess.Popen(argv, env=env, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outs = [p.communicate() for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    assert outs[0][1].startswith(str(copy / "tkg_indt")) and "['GDELTIndT', 'WIKIIndT']" in outs[0][1]
    for hs in ("0", "4242"):
        assert sha(tmp_path / f"hs{hs}") == sha(ref)


# ----------------------------------------------------------------------------- CLI and parameters
def test_cli_build_default_folder_and_overrides(gdelt_dir, tkg_home):
    runner = CliRunner()
    res = runner.invoke(main, ["build", "--source", "gdelt", "--p-tri", "1.0", "--mode", "inter",
                               "--data-dir", str(gdelt_dir)])
    assert res.exit_code == 0, res.output
    folder = tkg_home / "benchmarks" / "GDELTIndT" / "p100-inter"
    assert folder == variant_dir("GDELTIndT", "p100-inter") and (folder / "metadata.json").exists()
    res = runner.invoke(main, ["build", "--source", "gdelt", "--p-tri", "1.0", "--mode", "inter", "--n-tr", "40",
                               "--hop-cap", "4", "--data-dir", str(gdelt_dir)])
    assert res.exit_code == 0, res.output
    custom = [p for p in (tkg_home / "benchmarks").iterdir() if p.name.startswith("GDELTIndT-custom-")]
    assert len(custom) == 1
    meta = json.loads((custom[0] / "p100-inter" / "metadata.json").read_text())
    assert meta["params"]["n_tr"] == 40 and meta["params"]["hop_cap"] == 4 and meta["params"]["n_inf"] == 300
    res = runner.invoke(main, ["check", str(folder), "--data-dir", str(gdelt_dir)])
    assert res.exit_code == 0 and "OK" in res.output


@pytest.mark.parametrize("args, message", [
    (["--p-tri", "0"], "p_tri=0.0 is invalid"),
    (["--p-tri", "1.5"], "p_tri=1.5 is invalid"),
    (["--mode", "intra"], "mode='intra' is invalid"),
    (["--p-r", "0.01"], "leaves no relation for the inference graph"),
    (["--n-tr", "100000"], "exceed the 500 entities"),
    (["--p-t", "1.2"], "p_t=1.2 is invalid"),
    (["--hop-cap", "0"], "hop_cap=0 is invalid"),
])
def test_bad_parameters_fail_with_a_clear_message(args, message, gdelt_dir, tkg_home):
    base = {"--p-tri": "0.5", "--mode": "inter"}
    for k, v in zip(args[::2], args[1::2]):
        base[k] = v
    argv = ["build", "--source", "gdelt", *[x for kv in base.items() for x in kv], "--data-dir", str(gdelt_dir)]
    res = CliRunner().invoke(main, argv)
    assert res.exit_code == 2 and message in res.output, res.output
    assert not (tkg_home / "benchmarks").exists()  # nothing written


def test_parameter_errors_come_before_reading_data(tmp_path):
    empty = tmp_path / "nothing"
    empty.mkdir()
    with pytest.raises(ParameterError, match="p_tri"):
        build_variant("gdelt", 2.0, "inter", data_dir=empty, out=tmp_path / "x")
    with pytest.raises(ParameterError, match="mode"):
        build_variant("wiki", 0.5, "sideways", data_dir=empty, out=tmp_path / "x")
    assert not (tmp_path / "x").exists()


def test_source_too_small(tmp_path):
    write_synthetic_gdelt(tmp_path, n_facts=400, seed=1, num_entities=40, num_relations=4)
    src = load_source("GDELT", data_dir=tmp_path)
    with pytest.raises(ParameterError, match="exceed the .* entities"):
        make_variant(src, resolve_params("gdelt", 0.5, "inter"))  # 50 + 300 seeds, 40 entities
    with pytest.raises(ParameterError, match="leaves no relation"):
        make_variant(src, resolve_params("gdelt", 0.5, "inter", n_tr=2, n_inf=2, p_r=0.2))  # floor(0.8) = 0


def test_stats_benchmark_table(gdelt_dir, tkg_home):
    runner = CliRunner()
    res = runner.invoke(main, ["stats", "--benchmark", "GDELTIndT"])
    assert res.exit_code == 0 and "not built" in res.output and "tkg-indt build --suite GDELTIndT" in res.output
    res = runner.invoke(main, ["stats", "--benchmark", "GDELTIndT", "--build", "--data-dir", str(gdelt_dir)])
    assert res.exit_code == 0, res.output
    lines = [ln for ln in res.stdout.splitlines() if ln.startswith("| ")]
    assert lines[0] == "| Variant | p_tri | mode | V_tr | V_inf | train | valid | msg | test | Rec | DRec |"
    assert len(lines) == 9 and lines[1].startswith("| 25-inter | 0.25 | inter |") and " - " not in lines[1]
    res = runner.invoke(main, ["stats", "--benchmark", "GDELTIndT", "--latex"])
    assert "\\begin{tabular}" in res.output and "$|V_{\\mathrm{tr}}|$" in res.output and "100-extra" in res.output
    # the suite build is resumable: a second call keeps the variants
    before = sha(tkg_home / "benchmarks" / "GDELTIndT" / "p25-inter")
    res = runner.invoke(main, ["build", "--suite", "GDELTIndT", "--data-dir", str(gdelt_dir)])
    assert res.exit_code == 0 and sha(tkg_home / "benchmarks" / "GDELTIndT" / "p25-inter") == before


def test_extra_table_columns(gdelt_suite):
    from tkg_indt.benchmark.table import COLUMNS, Column, format_table, suite_rows

    rows = suite_rows("GDELTIndT", root=gdelt_suite[0].parent)
    extra = Column("test_ents", "test ents", lambda r: r.tkg()["test"].shape[0])
    text = format_table(rows, [*COLUMNS, extra])
    assert text.splitlines()[0].endswith("| test_ents |")
    assert all(r.built for r in rows)


def test_optional_inference_giant_component(gdelt, tmp_path):
    folder = build_variant("gdelt", 0.5, "inter", tkg=gdelt, out=tmp_path / "p50-inter", inf_gcc=True)
    meta = json.loads((folder / "metadata.json").read_text())
    assert meta["params"]["inf_gcc"] is True and meta["suite"].startswith("GDELTIndT-custom-")
    assert check_variant(folder, source=gdelt, rebuild=True).ok
