"""Converters to TGB edge lists and PyG TemporalData."""
import numpy as np
import pandas as pd
import pytest

from tkg_indt.data import TKG, TimeEncoding
from tkg_indt.errors import UnknownNameError
from tkg_indt.hub.convert import read_tgb_csv, to_temporal_data, to_tgb, to_tgb_csv


@pytest.fixture
def tkg():
    rng = np.random.default_rng(0)

    def facts(n):
        return np.stack([rng.integers(0, 40, n), rng.integers(0, 5, n), rng.integers(0, 40, n),
                         rng.integers(0, 30, n)], axis=1)

    names = np.array(sorted([f"e{i}" for i in range(38)] + ['comma, "quote"', "nbsp\u00a0"]), dtype=object)
    return TKG("toy", {"train": facts(300), "valid": facts(30), "msg": facts(80), "test": facts(20)},
               names, np.array([f"r{i}" for i in range(5)], dtype=object), TimeEncoding("year-index", 0, 1786))


def multiset(rows):
    return sorted(map(tuple, np.asarray(rows).tolist()))


def test_tgb_csv(tkg, tmp_path):
    path = to_tgb_csv(tkg, tmp_path / "edges.csv", ["msg", "test"])
    lines = path.read_text().splitlines()
    assert lines[0] == "timestamp,head,tail,relation_type"
    assert len(lines) == 1 + 100  # no inverse rows
    back = read_tgb_csv(path)
    facts = tkg.facts("msg", "test")
    assert np.all(np.diff(back[:, 3]) >= 0)  # chronological
    assert multiset(back) == multiset(facts)
    order = np.argsort(facts[:, 3], kind="stable")
    assert np.array_equal(back, facts[order])  # stable inside a timestamp
    frame = pd.read_csv(path)
    assert all(frame[c].dtype == np.int64 for c in frame)
    assert to_tgb_csv(tkg, tmp_path / "again.csv", ["msg", "test"]).read_bytes() == path.read_bytes()


def test_tgb_folder_with_id_maps(tkg, tmp_path):
    files = to_tgb(tkg, tmp_path / "tgb")
    assert sorted(files) == ["entity2id", "msg", "relation2id", "test", "train", "valid"]
    for split in tkg.splits:
        assert multiset(read_tgb_csv(files[split])) == multiset(tkg[split])
    ents = pd.read_csv(files["entity2id"], keep_default_na=False)
    assert ents["id"].tolist() == list(range(tkg.num_entities))
    assert ents["name"].tolist() == tkg.entities.tolist()  # commas, quotes and U+00A0 survive
    with pytest.raises(UnknownNameError, match="msg"):
        to_tgb(tkg, tmp_path / "x", ["inference"])


def test_temporal_data_with_inverses(tkg):
    R = tkg.num_relations
    data = to_temporal_data(tkg, ["msg", "test"])
    facts = tkg.facts("msg", "test")
    assert data.num_events == 2 * len(facts)
    assert data.msg.shape == (2 * len(facts), 1) and data.msg.dtype.is_floating_point
    t = data.t.numpy()
    assert np.all(np.diff(t) >= 0)
    rows = np.stack([data.src.numpy(), data.edge_type.numpy(), data.dst.numpy(), t], axis=1)
    inverse = np.stack([facts[:, 2], facts[:, 1] + R, facts[:, 0], facts[:, 3]], axis=1)
    assert multiset(rows) == multiset(np.concatenate([facts, inverse]))
    first_t = rows[t == t[0]]  # originals of a timestamp come before their inverses
    assert np.all(np.diff((first_t[:, 1] >= R).astype(int)) >= 0)
    assert data[:5].num_events == 5  # sliceable like any TemporalData


def test_temporal_data_plain(tkg):
    data = to_temporal_data(tkg, "train", inverses=False, msg=False)
    facts = tkg["train"][np.argsort(tkg["train"][:, 3], kind="stable")]
    assert "msg" not in data
    assert np.array_equal(np.stack([data.src, data.edge_type, data.dst, data.t], 1), facts)
    assert int(data.edge_type.max()) < tkg.num_relations
