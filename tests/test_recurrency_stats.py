"""Rec / DRec / median recurrence gap on hand-made facts (real datasets: test_recurrency_real.py)."""
import json

import numpy as np
from click.testing import CliRunner

from tkg_indt.cli import main
from tkg_indt.data.timeenc import TimeEncoding
from tkg_indt.data.tkg import TKG
from tkg_indt.recurrency_stats import last_occurrence, recurrency_stats, tkg_recurrency


def test_definitions():
    hist = np.array([[0, 0, 1, 0], [0, 0, 1, 3], [2, 0, 3, 1], [1, 0, 0, 4]])
    test = np.array([
        [0, 0, 1, 4],  # seen at 3 -> gap 1, DRec
        [0, 0, 1, 4],  # a duplicate line counts again
        [2, 0, 3, 5],  # seen at 1 -> gap 4
        [0, 0, 1, 3],  # seen at 0 only (3 is not < 3) -> gap 3
        [0, 1, 1, 5],  # other relation: never seen
        [0, 0, 1, 6],  # seen in test at 4 -> gap 2
        [1, 0, 0, 2],  # only seen later (4): not recurrent
    ])
    k = last_occurrence(hist, test)
    assert k.tolist() == [3, 3, 1, 0, -1, 4, -1]
    s = recurrency_stats(hist, test)
    assert s["rec"] == 5 / 7 and s["drec"] == 2 / 7 and s["median_gap"] == 2 and s["recurrent"] == 5
    assert recurrency_stats(hist[:0], test[:1])["rec"] == 0.0
    assert recurrency_stats(hist, test[:0])["test_facts"] == 0
    inverse_only = recurrency_stats(np.array([[1, 0, 0, 0]]), np.array([[0, 0, 1, 1]]))
    assert inverse_only["rec"] == 0.0  # original direction only


def test_variant_uses_msg_and_test():
    f = lambda *rows: np.array(rows, dtype=np.int64)  # noqa: E731
    tkg = TKG("v", {"train": f([0, 0, 1, 0]), "valid": f([0, 0, 1, 1]), "msg": f([2, 1, 3, 5], [4, 1, 5, 6]),
                    "test": f([2, 1, 3, 6], [4, 1, 5, 7], [0, 0, 1, 7])},
              np.array([f"e{i}" for i in range(6)], object), np.array(["a", "b"], object), TimeEncoding("int"))
    s = tkg_recurrency(tkg, "test")
    assert s["rec"] == 2 / 3 and s["drec"] == 2 / 3  # (0,0,1) of the training graph does not count
    assert tkg_recurrency(tkg, "valid")["drec"] == 1.0


def test_cli_stats_recurrency(data_dir):
    res = CliRunner().invoke(main, ["stats", "--source", "ICEWS14-extrap", "--recurrency", "--json",
                                    "--data-dir", str(data_dir)])
    assert res.exit_code == 0, res.output
    row = json.loads(res.output)["ICEWS14-extrap"]
    assert round(100 * row["rec"], 1) == 52.4 and round(100 * row["drec"], 1) == 10.5
    res = CliRunner().invoke(main, ["stats", "--source", "YAGO", "--recurrency", "--data-dir", str(data_dir)])
    assert res.exit_code == 0 and "| YAGO | test | 20,026 | 92.7 | 92.7 | 1 |" in res.output


def test_variant_folder_through_load_variants(tmp_path):
    from test_recurrency import toy_variant, write_variant
    from tkg_indt.benchmark import load_variants

    write_variant(tmp_path / "p50-inter", toy_variant())
    (tkg,) = load_variants(str(tmp_path / "p50-inter"))
    s = tkg_recurrency(tkg, "test")
    direct = recurrency_stats(tkg["msg"], tkg["test"])
    assert s["rec"] == direct["rec"] and s["drec"] == direct["drec"] and s["test_facts"] == 12
