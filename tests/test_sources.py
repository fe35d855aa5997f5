"""Loading each available source reproduces the per-split counts of ../shared/data/SOURCES.md exactly."""
import numpy as np
import pytest

from tkg_indt.data import load_source
from tkg_indt.stats import dataset_stats

# split: (lines, entities, relations, timestamps) as published in SOURCES.md
EXPECTED = {
    "ICEWS14": {"train": (72826, 6869, 230, 365), "valid": (8941, 2890, 159, 365), "test": (8963, 2760, 161, 365),
                "all": (90730, 7128, 230, 365)},
    "ICEWS05-15": {"train": (368962, 10094, 251, 4017), "valid": (46275, 5200, 211, 4010),
                   "test": (46092, 5112, 207, 4012), "all": (461329, 10488, 251, 4017)},
    "ICEWS18": {"train": (373018, 21085, 251, 240), "valid": (45995, 7730, 204, 30), "test": (49545, 8243, 213, 34),
                "all": (468558, 23033, 256, 304)},
    "YAGO": {"train": (161540, 9736, 10, 178), "valid": (19523, 4635, 10, 5), "test": (20026, 4558, 9, 6),
             "all": (201089, 10585, 10, 189)},
    "WIKI": {"train": (539286, 9009, 24, 211), "valid": (67538, 8716, 24, 11), "test": (63110, 8142, 24, 10),
             "all": (669934, 12435, 24, 232)},
    "ICEWS14-extrap": {"train": (74845, 6616, 226, 304), "valid": (8514, 2222, 157, 30), "test": (7371, 2090, 150, 31),
                       "all": (90730, 7128, 230, 365)},
}
MD5 = {"ICEWS14": "55b1d4950f8f0924853bd0f4e55ae33f", "YAGO": "e79057e81c0a9c44a55db6b0235445db"}


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_counts_match_sources_md(name, data_dir):
    tkg = load_source(name, data_dir=data_dir)
    stats = dataset_stats(tkg)
    for split, (lines, ents, rels, times) in EXPECTED[name].items():
        got = stats[split]
        assert (got["quads"], got["entities"], got["relations"], got["timestamps"]) == (lines, ents, rels, times), split
    if name in MD5:
        assert tkg.meta["files"]["train"]["md5"] == MD5[name]


def test_time_encoding_keeps_gaps_and_calendar(data_dir):
    icews18 = load_source("ICEWS18", data_dir=data_dir)
    t = icews18.facts()[:, 3]
    assert t.min() == 0 and t.max() == 303  # hours 0..7272 in steps of 24 -> days 0..303
    assert icews18.time.label(0) == "2018-01-01" and icews18.time.label(303) == "2018-10-31"
    wiki = load_source("WIKI", data_dir=data_dir)
    assert wiki.time.granularity == "year" and wiki.time.label(0) == "1786" and wiki.time.label(231) == "2017"
    icews = load_source("ICEWS05-15", data_dir=data_dir)
    assert icews.time.label(4016) == "2015-12-31"
    # the raw column round-trips
    assert list(icews18.time.raw(np.array([0, 1, 303]))) == ["0", "24", "7272"]


def test_wiki_duplicates_counted(data_dir):
    stats = dataset_stats(load_source("WIKI", data_dir=data_dir))
    assert (stats["train"]["duplicates"], stats["valid"]["duplicates"], stats["test"]["duplicates"]) == (5381, 1045, 1226)


def test_nbsp_names_are_kept(data_dir):
    tkg = load_source("ICEWS18", data_dir=data_dir)
    assert "Găgăuzia\u00a0" in set(tkg.entities)


def test_parquet_cache_roundtrip(data_dir, tkg_home):
    first = load_source("YAGO", data_dir=data_dir)
    assert any((tkg_home / "parsed").iterdir())
    second = load_source("YAGO", data_dir=data_dir)
    for split in first.splits:
        assert np.array_equal(first[split], second[split])
    assert list(first.entities) == list(second.entities) and list(first.relations) == list(second.relations)
    assert first.time == second.time and first.meta["checksum"] == second.meta["checksum"]
