"""Downloads: fetched (here from file:// URLs), converted to names, verified by line count or md5, cached."""
import dataclasses
import hashlib
import json

import pytest

from tkg_indt.data import load_source
from tkg_indt.data.download import download_source
from tkg_indt.data.sources import get_spec
from tkg_indt.errors import DataFormatError, MissingDataError


def _id_copy(folder):
    folder.mkdir()
    (folder / "entity2id.txt").write_text("<Alice>\t0\t1990-##-##\t####-##-##\n<Bob>\t1\t1991-##-##\t####-##-##\n")
    (folder / "relation2id.txt").write_text("<knows>\t0\n")
    rows = {"train": ["0\t0\t1\t0\t0", "1\t0\t0\t1\t0"], "valid": ["0\t0\t1\t2\t0"], "test": ["1\t0\t0\t3\t0"]}
    for split, lines in rows.items():
        (folder / f"{split}.txt").write_text("\n".join(lines) + "\n")
    return {s: len(v) for s, v in rows.items()}


def _spec(folder, counts, md5=None):
    spec = get_spec("YAGO")
    return dataclasses.replace(spec, counts=counts, md5=md5 or {},
                               urls={s: (folder / f"{s}.txt").as_uri() for s in counts},
                               map_urls={m: (folder / m).as_uri() for m in ("entity2id.txt", "relation2id.txt")})


def test_download_converts_verifies_and_caches(tmp_path, tkg_home, monkeypatch):
    monkeypatch.delenv("TKG_INDT_DATA", raising=False)
    counts = _id_copy(tmp_path / "upstream")
    expected_md5 = hashlib.md5(b"<Alice>\t<knows>\t<Bob>\t0\n<Bob>\t<knows>\t<Alice>\t1\n").hexdigest()
    files = download_source(_spec(tmp_path / "upstream", counts, {"train": expected_md5}))
    assert files["train"].read_text() == "<Alice>\t<knows>\t<Bob>\t0\n<Bob>\t<knows>\t<Alice>\t1\n"
    verified = json.loads((files["train"].parent / "VERIFIED.json").read_text())
    assert verified["train"]["check"] == "md5" and verified["valid"]["check"] == "line count"
    # the cached copy is what load_source finds next, without any data dir
    tkg = load_source("YAGO")
    assert tkg.summary() == {"train": 2, "valid": 1, "test": 1} and tkg.time.label(3) == "1833"


def test_download_rejects_wrong_counts_and_leaves_nothing(tmp_path, tkg_home):
    counts = _id_copy(tmp_path / "upstream")
    with pytest.raises(DataFormatError, match="expected 5"):
        download_source(_spec(tmp_path / "upstream", {**counts, "train": 5}))
    assert not (tkg_home / "sources" / "YAGO").exists()


def test_unreachable_url_is_a_clear_error(tmp_path, tkg_home):
    spec = dataclasses.replace(get_spec("ICEWS14"), urls={s: (tmp_path / "nowhere" / s).as_uri() for s in ("train", "valid", "test")})
    with pytest.raises(MissingDataError, match="--data-dir"):
        download_source(spec)
