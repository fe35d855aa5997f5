"""Bad input gets a clear error naming the file, the line and the fix; good variants of input load."""
import gzip

import numpy as np
import pytest
from click.testing import CliRunner

from tkg_indt.cli import main
from tkg_indt.data import load_folder, load_source
from tkg_indt.errors import DataFormatError, MissingDataError, UnknownNameError

GOOD = "a\tlikes\tb\t2014-01-01\nb\tlikes\tc\t2014-01-03\n"


def write_source(folder, train=GOOD, valid=GOOD, test=GOOD, gz=False):
    folder.mkdir(parents=True, exist_ok=True)
    for split, text in (("train", train), ("valid", valid), ("test", test)):
        if text is None:
            continue
        if gz:
            (folder / f"{split}.txt.gz").write_bytes(gzip.compress(text.encode()))
        else:
            (folder / f"{split}.txt").write_bytes(text.encode())
    return folder


def test_wrong_column_count(tmp_path):
    folder = write_source(tmp_path / "d", train=GOOD + "c\tlikes\td\n")
    with pytest.raises(DataFormatError) as err:
        load_folder(folder)
    assert err.value.line == 3 and "train.txt" in str(err.value) and "Fix:" in str(err.value)


def test_first_line_with_too_many_columns(tmp_path):
    folder = write_source(tmp_path / "d", train="a\tb\tc\t1\tx\ty\n")
    with pytest.raises(DataFormatError, match="line 1"):
        load_folder(folder, time_format="int")


def test_unparseable_time(tmp_path):
    folder = write_source(tmp_path / "d", valid=GOOD + "c\tlikes\td\t2014-13-45\n")
    with pytest.raises(DataFormatError) as err:
        load_folder(folder)
    assert err.value.line == 3 and "valid.txt" in err.value.path and "2014-13-45" in str(err.value)


def test_hour_offsets_must_be_whole_days(tmp_path):
    folder = write_source(tmp_path / "d", train="a\tr\tb\t0\na\tr\tb\t25\n", valid="a\tr\tb\t24\n", test="a\tr\tb\t48\n")
    with pytest.raises(DataFormatError, match="line 2"):
        load_folder(folder, time_format="hour-offset", time_origin="2018-01-01")


def test_empty_split_file(tmp_path):
    folder = write_source(tmp_path / "d", test="")
    with pytest.raises(DataFormatError, match="empty"):
        load_folder(folder)


def test_empty_line_inside(tmp_path):
    folder = write_source(tmp_path / "d", train="a\tr\tb\t2014-01-01\n\nb\tr\tc\t2014-01-02\n")
    with pytest.raises(DataFormatError, match="line 2"):
        load_folder(folder)


def test_missing_split_file(tmp_path):
    folder = write_source(tmp_path / "d", test=None)
    with pytest.raises(MissingDataError, match="test.txt"):
        load_folder(folder, splits=("train", "valid", "test"))


def test_missing_source_files(tmp_path, tkg_home):
    with pytest.raises(MissingDataError, match="--data-dir"):
        load_source("YAGO", data_dir=tmp_path)


def test_unknown_source_name():
    with pytest.raises(UnknownNameError, match="known: GDELT, ICEWS05-15"):
        load_source("ICEWS99")


def test_corrupt_gzip(tmp_path):
    folder = write_source(tmp_path / "d", gz=True)
    blob = (folder / "train.txt.gz").read_bytes()
    (folder / "train.txt.gz").write_bytes(blob[:12] + b"\x00garbage" + blob[20:])
    with pytest.raises(DataFormatError, match="corrupt gzip"):
        load_folder(folder)


def test_unknown_entity_in_id_encoded_file(tmp_path):
    folder = tmp_path / "ids"
    folder.mkdir()
    (folder / "entity2id.txt").write_text("alice\t0\nbob\t1\n")
    (folder / "relation2id.txt").write_text("likes\t0\n")
    (folder / "train.txt").write_text("0\t0\t1\t0\t0\n1\t0\t7\t24\t0\n")
    (folder / "valid.txt").write_text("0\t0\t1\t48\t0\n")
    (folder / "test.txt").write_text("0\t0\t1\t72\t0\n")
    with pytest.raises(DataFormatError) as err:
        load_folder(folder, time_format="hour-offset", time_origin="2018-01-01")
    assert err.value.line == 2 and "'7'" in str(err.value) and "entity2id.txt" in str(err.value)


def test_id_encoded_crlf_five_columns_and_gzip(tmp_path):
    folder = tmp_path / "ids"
    folder.mkdir()
    (folder / "entity2id.txt").write_text("alice\t0\nbob\u00a0\t1\n")
    (folder / "relation2id.txt").write_text("likes\t0\n")
    (folder / "train.txt.gz").write_bytes(gzip.compress(b"0\t0\t1\t0\t-1\r\n1\t0\t0\t48\t-1\r\n"))
    (folder / "valid.txt").write_bytes(b"0\t0\t1\t24\t-1\r\n")
    (folder / "test.txt").write_bytes(b"0\t0\t1\t72\t-1\r\n")
    tkg = load_folder(folder, time_format="hour-offset", time_origin="2018-01-01")
    assert list(tkg.entities) == ["alice", "bob\u00a0"]
    assert tkg["train"].tolist() == [[0, 0, 1, 0], [1, 0, 0, 2]]
    assert tkg["valid"].tolist() == [[0, 0, 1, 1]] and tkg.time.label(3) == "2018-01-04"


def test_names_four_columns_time_gaps_kept(tmp_path):
    folder = write_source(tmp_path / "d", train="x\tr\ty\t2014-01-05\n", valid="y\tr\tz\t2014-01-01\n",
                          test="z\tr\tx\t2014-02-01\n")
    tkg = load_folder(folder)
    assert tkg["valid"][0, 3] == 0 and tkg["train"][0, 3] == 4 and tkg["test"][0, 3] == 31


def test_cli_reports_errors_without_traceback(tmp_path):
    result = CliRunner().invoke(main, ["stats", "--source", "nope"])
    assert result.exit_code == 2 and "unknown source 'nope'" in result.output and "Traceback" not in result.output
    result = CliRunner().invoke(main, ["stats", "--source", "YAGO", "--data-dir", str(tmp_path)])
    assert result.exit_code == 2 and "not available locally" in result.output


def test_user_id_map_with_duplicate_ids(tmp_path):
    folder = tmp_path / "ids"
    folder.mkdir()
    (folder / "entity2id.txt").write_text("alice\t0\nbob\t0\n")
    (folder / "relation2id.txt").write_text("likes\t0\n")
    for s in ("train", "valid", "test"):
        (folder / f"{s}.txt").write_text("0\t0\t0\t0\n")
    with pytest.raises(DataFormatError, match="listed twice"):
        load_folder(folder, time_format="int")
    assert np.array_equal(load_folder(folder, time_format="int", ids=False)["train"], [[0, 0, 0, 0]])
