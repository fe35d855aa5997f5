"""WIKIIndT from the real WIKI: all 8 variants, every invariant, statistics against the paper, determinism.

Paper table ``wiki_sweep`` (benchmark.md): |V_tr| 722-873, |V_inf| 235-1,089, train 27.7-37.2 k,
valid 3.1-4.1 k, msg 4.7-20.3 k, test 1.2-5.1 k; T_tr = the first 162 years, T_inf = the last 70.
The inference side depends mostly on which relations the recipe seed puts into R_inf (WIKI's
late-time relation sizes range from ~100 to ~84 k facts): over recipe seeds 0-29 the p100-inter
inference graph had 199-4,883 entities; seed 0 draws P31/P39/P54 (three of the largest) into R_inf,
so its inference graphs are ~10x the paper's. The recipe therefore uses seed 23, the smallest seed
whose draw (P150, P26, P2962, P551, P6) lands every column of every variant within [0.5x, 2x] of the
paper's row (see the recipe). The default suite is checked against those bands; the other structure
(80/20, coverage, extra-mode cut) is checked as well.
"""
import hashlib
import json
import os
import subprocess
import sys

import pytest

from tkg_indt.benchmark import build_suite, check_variant
from tkg_indt.data import load_source

PAPER = {  # variant: (V_tr, V_inf, train, valid, msg, test), thousands for edges
    "p25-inter": (722, 1089, 27.7, 3.1, 20.3, 5.1), "p50-inter": (765, 942, 28.2, 3.1, 9.9, 2.5),
    "p75-inter": (743, 821, 30.6, 3.4, 5.2, 1.3), "p100-inter": (784, 235, 35.2, 3.9, 4.7, 1.2),
    "p25-extra": (873, 1040, 34.6, 3.8, 19.4, 4.8), "p50-extra": (851, 909, 37.2, 4.1, 7.6, 1.9),
    "p75-extra": (768, 843, 33.4, 3.7, 6.3, 1.6), "p100-extra": (855, 240, 35.8, 4.0, 4.8, 1.2),
}


@pytest.fixture(scope="module")
def wiki(data_dir):
    return load_source("WIKI", data_dir=data_dir)


@pytest.fixture(scope="module")
def suite(wiki, tmp_path_factory):
    root = tmp_path_factory.mktemp("WIKIIndT")
    folders = build_suite("WIKIIndT", root=root, tkg=wiki, progress=False)
    return {f.name: (f, json.loads((f / "metadata.json").read_text())) for f in folders}


def test_every_invariant_holds(suite, wiki):
    assert sorted(suite) == sorted(PAPER)
    for name, (folder, _) in suite.items():
        report = check_variant(folder, source=wiki, rebuild=False)  # facts vs source; rebuilds: GDELT tests, CLI
        assert report.ok, str(report)


def test_time_cut_is_the_papers(suite):
    for _, meta in suite.values():
        tt, ti = meta["timestamps"]["train"], meta["timestamps"]["inference"]
        assert (tt["count"], tt["first"], tt["last"]) == (162, "1786", "1947")
        assert (ti["count"], ti["first"], ti["last"]) == (70, "1948", "2017")


def test_training_side_in_the_papers_ranges(suite):
    for name, (_, meta) in suite.items():
        v_tr, _, train, valid, _, _ = PAPER[name]
        s = meta["splits"]
        assert 0.6 * v_tr <= meta["V_tr"] <= 1.4 * v_tr, (name, meta["V_tr"])
        assert 0.5 * train <= s["train"]["quads"] / 1000 <= 2.0 * train, (name, s["train"]["quads"])
        assert 0.5 * valid <= s["valid"]["quads"] / 1000 <= 2.0 * valid, (name, s["valid"]["quads"])
        e_tr = s["train"]["quads"] + s["valid"]["quads"]
        assert abs(s["valid"]["quads"] / e_tr - 0.1) < 0.005  # 90/10, a few facts moved for coverage
        assert len(meta["relations"]["inference"]) == 5 and len(meta["relations"]["train"]) == 18  # 23 relations in the GCC


def test_inference_side_structure_and_order_of_magnitude(suite):
    for name, (_, meta) in suite.items():
        _, v_inf, _, _, msg, test = PAPER[name]
        s = meta["splits"]
        assert 0.5 * v_inf <= meta["V_inf"] <= 2 * v_inf, (name, meta["V_inf"])
        assert 0.5 * msg <= s["msg"]["quads"] / 1000 <= 2 * msg, (name, s["msg"]["quads"])
        assert 0.5 * test <= s["test"]["quads"] / 1000 <= 2 * test, (name, s["test"]["quads"])
        n_inf = s["msg"]["quads"] + s["test"]["quads"]
        if meta["mode"] == "inter":  # 80/20 up to the covering facts moved to msg
            assert abs(meta["p_tri_realised"] - meta["p_tri"]) < 0.005
            assert abs(s["test"]["quads"] + meta["coverage"]["test_moved_to_msg"] - int(0.2 * n_inf)) <= 1
        else:  # extra: test = the latest 20 %, minus the recorded uncoverable facts
            assert meta["coverage"]["test_dropped"] >= 0
            assert s["msg"]["last"] <= s["test"]["first"]
        assert meta["V_tr"] + meta["V_inf"] <= meta["source"]["gcc_entities"]


def test_the_default_draw_reproduces_the_papers_table(suite):
    for name, paper in PAPER.items():
        meta = suite[name][1]
        assert meta["relations"]["inference"] == ["P150", "P26", "P2962", "P551", "P6"]
        s = meta["splits"]
        ours = (meta["V_tr"], meta["V_inf"], *(s[k]["quads"] / 1000 for k in ("train", "valid", "msg", "test")))
        for col, a, b in zip(("V_tr", "V_inf", "train", "valid", "msg", "test"), ours, paper):
            assert 0.5 * b <= a <= 2.0 * b, (name, col, a, b)


@pytest.mark.slow  # ~15 s (two fresh processes); the GDELT-shaped test covers hash seeds by default
def test_identical_files_under_other_hash_seeds(suite, data_dir, tmp_path):
    """Fresh processes with different PYTHONHASHSEED rebuild p100-inter byte for byte."""
    def digest(folder):
        return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(folder.iterdir())}

    procs = []
    for hs in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hs}
        argv = [sys.executable, "-m", "tkg_indt.cli", "build", "--source", "wiki", "--p-tri", "1.0", "--mode", "inter",
                "--data-dir", str(data_dir), "--out", str(tmp_path / hs)]
        procs.append(subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    outs = [p.communicate() for p in procs]
    assert all(p.returncode == 0 for p in procs), outs
    ref = digest(suite["p100-inter"][0])
    assert digest(tmp_path / "1") == ref and digest(tmp_path / "2") == ref


def test_drec_rises_with_p_tri_as_in_the_paper(suite):
    """Paper: DRec rises from 0.45 (p25) to 0.95 (p100) over the interpolation variants; Rec stays high."""
    drec = [suite[f"p{p}-inter"][1]["recurrency"]["drec"] for p in (25, 50, 75, 100)]
    assert drec == sorted(drec) and 0.35 <= drec[0] <= 0.55 and drec[-1] >= 0.9, drec
    assert all(suite[f"p{p}-inter"][1]["recurrency"]["rec"] >= 0.85 for p in (25, 50, 75, 100))
