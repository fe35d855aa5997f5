"""Hub export, card, offline `datasets` loading, load_benchmark and publish (no network unless opted in).

The suite under test is built by the real builder (tkg_indt.benchmark.build_suite) from a small
synthetic WIKI-shaped source (yearly time with gaps, names with spaces, commas, quotes, U+00A0 and
non-Latin letters), so the export is compared against real builder output, not a hand-made copy.
"""
import json
import os
import re
import shutil
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import yaml
from click.testing import CliRunner

from tkg_indt.benchmark import build_suite, load_variant
from tkg_indt.benchmark.recipe import Recipe
from tkg_indt.cli import main
from tkg_indt.data import TKG, TimeEncoding
from tkg_indt.data.reader import read_quads
from tkg_indt.errors import DataFormatError, MissingDataError, ParameterError, UnknownNameError
from tkg_indt.hub import DEFAULT_VARIANT, HUB_SPLITS, VARIANTS, export_suite, load_benchmark, publish_suite
from tkg_indt.hub.export import SCHEMA, suite_files
from tkg_indt.hub.load import read_front_matter

datasets = pytest.importorskip("datasets")

ALL_VARIANTS = tuple((p, m) for m in ("inter", "extra") for p in (0.25, 0.5, 0.75, 1.0))
PARAMS = dict(p_r=0.25, p_t=0.3, n_tr=30, n_inf=30, hop_cap=8, hops_tr=1, hops_inf=1)


def synthetic_source(name: str, time: TimeEncoding, n_ent=300, n_rel=12, n_time=60, n_facts=6000, seed=1) -> TKG:
    """A random TKG shaped like a source: ids = ranks of sorted names, times with gaps (every 2nd unit)."""
    rng = np.random.default_rng(seed)
    facts = np.stack([rng.integers(0, n_ent, n_facts), rng.integers(0, n_rel, n_facts),
                      rng.integers(0, n_ent, n_facts), rng.integers(0, n_time, n_facts) * 2], axis=1)
    names = np.array([f"Q{i}" for i in range(n_ent)], dtype=object)
    names[:4] = ["Găgăuzia\u00a0", 'a, "quoted" name', "with space", "日本"]
    return TKG(name, {"train": facts}, np.array(sorted(names), dtype=object),
               np.array(sorted(f"P{i}" for i in range(n_rel)), dtype=object), time, {"checksum": "synthetic"})


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    """A cache home holding a built synthetic WIKIIndT (all eight variants) under benchmarks/."""
    root = tmp_path_factory.mktemp("hubhome")
    src = synthetic_source("WIKI", TimeEncoding("year-index", 0, 1786))
    build_suite(Recipe("WIKIIndT", "WIKI", 0, PARAMS, ALL_VARIANTS), root=root / "benchmarks" / "WIKIIndT",
                tkg=src, progress=False)
    return root


@pytest.fixture
def env_home(home, monkeypatch):
    monkeypatch.setenv("TKG_INDT_HOME", str(home))
    return home


@pytest.fixture(scope="module")
def exported(home, tmp_path_factory):
    out = tmp_path_factory.mktemp("export") / "WIKIIndT"
    return export_suite("WIKIIndT", out, built=home / "benchmarks" / "WIKIIndT", progress=False)


@pytest.fixture
def offline(monkeypatch, tmp_path):
    """No Hub access for `datasets`; its cache in tmp."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants

    monkeypatch.setattr(datasets.config, "HF_HUB_OFFLINE", True)  # both read the variable at import
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    return tmp_path / "hf_cache"


def built(home, variant):
    return home / "benchmarks" / "WIKIIndT" / variant


# --------------------------------------------------------------------------- export
def test_export_layout_and_schema(exported):
    files = dict(suite_files(exported))
    expected = {"README.md"} | {f"{v}/{h}.parquet" for v in VARIANTS for h in HUB_SPLITS.values()} \
        | {f"{v}/metadata.json" for v in VARIANTS}
    assert set(files) == expected
    assert not any(p.endswith(".py") for p in files)
    for path in files:
        if path.endswith(".parquet"):
            schema = pq.read_schema(exported / path)
            assert schema.equals(SCHEMA, check_metadata=False), path
            assert json.loads(schema.metadata[b"huggingface"])["info"]["features"]["time"]["dtype"] == "int64"


def test_export_is_deterministic_and_atomic(home, exported, tmp_path):
    again = export_suite("WIKIIndT", tmp_path / "again", built=home / "benchmarks" / "WIKIIndT", progress=False)
    for path, _ in suite_files(exported):
        assert (again / path).read_bytes() == (exported / path).read_bytes(), path
    # a failing export (one variant missing) leaves the previous folder untouched and no temp folder behind
    broken = tmp_path / "broken"
    shutil.copytree(home / "benchmarks" / "WIKIIndT", broken)
    (broken / "p50-extra" / "msg.txt").unlink()
    with pytest.raises(DataFormatError, match="missing split file"):
        export_suite("WIKIIndT", again, built=broken, progress=False)
    assert (again / "README.md").read_bytes() == (exported / "README.md").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again", "broken"]


def test_export_refuses_a_changed_or_foreign_variant(home, tmp_path):
    bad = tmp_path / "built"
    shutil.copytree(home / "benchmarks" / "WIKIIndT", bad)
    with open(bad / "p100-inter" / "test.txt", "a", encoding="utf-8") as f:  # a msg fact leaks into test
        f.write((bad / "p100-inter" / "msg.txt").read_text(encoding="utf-8").splitlines()[0] + "\n")
    with pytest.raises(DataFormatError, match="fails the benchmark checks"):
        export_suite("WIKIIndT", tmp_path / "out", built=bad, variants=["p100-inter"], progress=False)
    meta = json.loads((bad / "p25-inter" / "metadata.json").read_text())
    meta["suite"] = "WIKIIndT-custom-1234"
    (bad / "p25-inter" / "metadata.json").write_text(json.dumps(meta))
    with pytest.raises(DataFormatError, match="custom builds"):
        export_suite("WIKIIndT", tmp_path / "out", built=bad, variants=["p25-inter"], progress=False)
    with pytest.raises(MissingDataError, match="not built"):
        export_suite("WIKIIndT", tmp_path / "out", built=tmp_path / "nothing", progress=False)
    with pytest.raises(UnknownNameError, match="p100-inter"):
        export_suite("WIKIIndT", tmp_path / "out", built=bad, variants=["p10-inter"], progress=False)


# --------------------------------------------------------------------------- datasets, offline
def test_every_config_loads_offline_and_matches_builder_files(home, exported, offline):
    for variant in VARIANTS:
        ds = datasets.load_dataset(str(exported), variant, cache_dir=str(offline))
        assert list(ds) == list(HUB_SPLITS.values())
        meta = json.loads((built(home, variant) / "metadata.json").read_text())
        enc = TimeEncoding.from_dict(meta["time"])
        for split, hub in HUB_SPLITS.items():
            rows = ds[hub].to_pandas()
            raw = read_quads(built(home, variant) / f"{split}.txt")
            assert len(rows) == len(raw) == meta["splits"][split]["quads"]
            for col in ("head", "relation", "tail"):
                assert rows[col].tolist() == raw[col].tolist(), (variant, hub, col)
            times = rows["time"].to_numpy()
            assert rows["time"].dtype == np.int64
            assert enc.raw(times).tolist() == raw["time"].tolist()
            assert rows["date"].tolist() == enc.label(times).tolist()


def test_num_examples_in_the_card_are_verified(exported, tmp_path, offline):
    corrupt = tmp_path / "WIKIIndT"
    shutil.copytree(exported, corrupt)
    readme = corrupt / "README.md"
    text = readme.read_text(encoding="utf-8")
    front = read_front_matter(readme)
    info = next(i for i in front["dataset_info"] if i["config_name"] == "p50-inter")
    n = next(s["num_examples"] for s in info["splits"] if s["name"] == "msg")
    block = text.index("- config_name: p50-inter\n  features:")
    msg_at = text.index("  - name: msg\n", block)
    start = text.index(f"num_examples: {n}\n", msg_at)
    readme.write_text(text[:start] + f"num_examples: {n + 1}\n" + text[start + len(f"num_examples: {n}\n"):],
                      encoding="utf-8")
    from datasets.exceptions import NonMatchingSplitsSizesError

    with pytest.raises(NonMatchingSplitsSizesError):
        datasets.load_dataset(str(corrupt), "p50-inter", cache_dir=str(offline))
    with pytest.raises(DataFormatError, match=f"but the card says {n + 1}"):
        load_benchmark("WIKIIndT", "p50-inter", source=corrupt)
    datasets.load_dataset(str(corrupt), "p25-inter", cache_dir=str(offline))  # other configs still load


def test_card_renders(exported, home, offline):
    text = (exported / "README.md").read_text(encoding="utf-8")
    front = read_front_matter(exported / "README.md")
    assert [c["config_name"] for c in front["configs"]] == list(VARIANTS)
    assert [c["config_name"] for c in front["configs"] if c.get("default")] == [DEFAULT_VARIANT]
    assert [i["config_name"] for i in front["dataset_info"]] == list(VARIANTS)
    assert front["license"] == "cc0-1.0" and front["task_categories"] == ["graph-ml"]
    for c in front["configs"]:
        assert [d["split"] for d in c["data_files"]] == list(HUB_SPLITS.values())
        assert all(re.fullmatch(r"\w+(\.\w+)*", d["split"]) for d in c["data_files"])
    body = text.split("\n---\n", 1)[1]
    for heading in ("## Quick start", "## Supported tasks", "## Dataset structure", "## Statistics",
                    "## Dataset creation", "### Construction procedure", "### Parameters", "## Licensing",
                    "## Citation"):
        assert heading in body
    assert body.count("@inproceedings{") + body.count("@misc{") + body.count("@article{") >= 6
    assert "CC0" in body and "jin2020recurrent" in body
    for variant in VARIANTS:  # the statistics table has the builder's counts
        meta = json.loads((built(home, variant) / "metadata.json").read_text())
        row = next(line for line in body.splitlines() if line.startswith(f"| `{variant}` | {meta['p_tri']:.2f}"))
        assert row.endswith(" | ".join(f"{meta['splits'][s]['quads']:,}" for s in HUB_SPLITS) + " |")
    default = datasets.load_dataset(str(exported), cache_dir=str(offline))  # no config name: the default one
    named = datasets.load_dataset(str(exported), DEFAULT_VARIANT, cache_dir=str(offline))
    assert {k: v.num_rows for k, v in default.items()} == {k: v.num_rows for k, v in named.items()}


# --------------------------------------------------------------------------- load_benchmark
def same(a: TKG, b: TKG):
    assert a.name == b.name
    assert a.entities.tolist() == b.entities.tolist() and a.relations.tolist() == b.relations.tolist()
    assert a.time == b.time
    assert list(a.splits) == list(b.splits) == ["train", "valid", "msg", "test"]
    for s in a.splits:
        assert np.array_equal(a[s], b[s]), s


def test_load_benchmark_same_graph_from_every_place(env_home, exported, offline, monkeypatch):
    import tkg_indt
    from tkg_indt.evaluation import evaluate, inductive

    assert tkg_indt.load_benchmark is load_benchmark
    monkeypatch.setenv("TKG_INDT_HOME", str(env_home))
    ref = load_variant(built(env_home, "p100-inter"))
    from_cache = load_benchmark("WIKIIndT", "p100-inter")
    assert from_cache.meta["loaded_from"].endswith("p100-inter")
    same(from_cache, ref)
    same(load_benchmark("WIKIIndT", "p100-inter", source=exported), ref)
    same(load_benchmark("WIKIIndT", "p100-inter", source=built(env_home, "p100-inter")), ref)
    hub = load_benchmark("WIKIIndT", "p100-inter", source="hub", repo_id=str(exported), cache_dir=offline)
    same(hub, ref)
    assert hub.meta["p_tri_realised"] == ref.meta["p_tri_realised"]
    assert ref.entities.tolist() == sorted(ref.entities.tolist())

    task = inductive(hub)  # the harness takes it directly
    assert task.num_entities == len(np.unique(hub.facts("msg", "test")[:, [0, 2]]))

    class Random:
        def score(self, task, queries):
            return np.random.default_rng(0).random((len(queries), task.num_entities))

    result = evaluate(Random(), task)
    assert result.metrics["count"] == 2 * len(hub["test"]) and 0 < result.metrics["mrr"] < 1


def test_load_benchmark_order_export_then_hub(env_home, exported, offline, monkeypatch, tmp_path):
    monkeypatch.setenv("TKG_INDT_HOME", str(tmp_path / "empty_home"))
    calls = []
    real = datasets.load_dataset

    def fake_load_dataset(path, name=None, **kw):  # the Hub, served from the local export
        calls.append((path, name))
        return real(str(exported), name, cache_dir=str(offline))

    monkeypatch.setattr(datasets, "load_dataset", fake_load_dataset)
    ref = load_variant(built(env_home, "p25-extra"))
    same(load_benchmark("WIKIIndT", "p25-extra"), ref)  # nothing local: the Hub
    assert calls == [("grate/WIKIIndT", "p25-extra")]
    shutil.copytree(exported, tmp_path / "empty_home" / "hub" / "WIKIIndT")
    same(load_benchmark("wikiindt", "p25-extra"), ref)  # exported folder found before the Hub
    assert len(calls) == 1


def test_load_benchmark_errors(tmp_path, monkeypatch):
    with pytest.raises(UnknownNameError, match="GDELTIndT, WIKIIndT"):
        load_benchmark("FB15k")
    with pytest.raises(UnknownNameError, match="p100-inter"):
        load_benchmark("WIKIIndT", "p100")
    with pytest.raises(ParameterError):
        load_benchmark("WIKIIndT", source=3)
    monkeypatch.setenv("TKG_INDT_HOME", str(tmp_path))

    def unreachable(*args, **kwargs):
        raise ConnectionError("offline")

    monkeypatch.setattr(datasets, "load_dataset", unreachable)
    with pytest.raises(MissingDataError, match="build cache.*exported folder.*offline"):
        load_benchmark("WIKIIndT", "p75-inter")


def test_time_and_date_columns_must_agree(exported, tmp_path):
    bad = tmp_path / "WIKIIndT"
    shutil.copytree(exported, bad)
    path = bad / "p100-inter" / "msg.parquet"
    table = pq.read_table(path)
    times = table.column("time").to_numpy().copy()
    times[0] += 1
    pq.write_table(table.set_column(3, "time", __import__("pyarrow").array(times)), path)
    with pytest.raises(DataFormatError, match="time and date disagree"):
        load_benchmark("WIKIIndT", "p100-inter", source=bad)


def test_daily_suite_round_trip(tmp_path, offline):
    """GDELTIndT from the builder's GDELT-shaped generator and the shipped recipe: ISO dates survive."""
    import dataclasses

    from tkg_indt.benchmark import get_recipe
    from tkg_indt.benchmark.synthetic import write_synthetic_gdelt
    from tkg_indt.data import load_source

    write_synthetic_gdelt(tmp_path / "data", n_facts=20_000, seed=0)
    src = load_source("GDELT", data_dir=tmp_path / "data", cache=False)
    recipe = dataclasses.replace(get_recipe("GDELTIndT"), variants=((1.0, "inter"), (0.5, "extra")))
    root = tmp_path / "built"
    build_suite(recipe, root=root, tkg=src, progress=False)
    out = export_suite("GDELTIndT", tmp_path / "GDELTIndT", variants=["p50-extra", "p100-inter"], built=root,
                       progress=False)
    front = read_front_matter(out / "README.md")
    assert front["license"] == "other" and front["license_link"].startswith("https://www.gdeltproject.org")
    assert [c["config_name"] for c in front["configs"]] == ["p100-inter", "p50-extra"]
    text = (out / "README.md").read_text(encoding="utf-8")
    assert "| `n_inf` | 300 |" in text and "leetaru2013gdelt" in text
    if "inf_gcc" in recipe.params or "inf_gcc" in json.loads((root / "p50-extra" / "metadata.json").read_text())["params"]:
        assert re.search(r"\| `inf_gcc` \| (true|false) \|", text)
    ds = datasets.load_dataset(str(out), cache_dir=str(offline))  # default config p100-inter
    dates = np.array(ds["msg"]["date"], dtype="datetime64[D]")
    assert np.array_equal(dates - np.datetime64("2015-04-01"), np.array(ds["msg"]["time"]).astype("timedelta64[D]"))
    assert dates.min() >= np.datetime64("2015-12-13")  # p100: every inference date after the training cut
    tkg = load_benchmark("GDELTIndT", "p50-extra", source=out)
    same(tkg, load_variant(root / "p50-extra"))
    assert tkg.time == src.time and tkg.time.label(0) == "2015-04-01"


# --------------------------------------------------------------------------- publish
class FakeApi:
    calls: list = []

    def __init__(self, token=None):
        FakeApi.calls.append(("init", token))

    def create_repo(self, repo_id, **kw):
        FakeApi.calls.append(("create_repo", repo_id, kw))

    def upload_folder(self, **kw):
        FakeApi.calls.append(("upload_folder", kw))
        folder = Path(kw["folder_path"])
        assert (folder / "README.md").exists() and (folder / "p100-inter" / "test.parquet").exists()

        class Info:
            commit_url = f"https://huggingface.co/datasets/{kw['repo_id']}/commit/abc"

        return Info()


def test_publish_calls_create_repo_then_upload_folder(env_home, monkeypatch, tmp_path):
    import huggingface_hub

    FakeApi.calls = []
    monkeypatch.setattr(huggingface_hub, "HfApi", FakeApi)
    monkeypatch.setenv("HF_TOKEN", "hf_fake")
    plan = publish_suite("WIKIIndT", "someone/WIKIIndT-test", private=True, progress=False)
    folder = env_home / "hub" / "WIKIIndT"
    assert plan.folder == folder and plan.url.endswith("/commit/abc")
    assert [c[0] for c in FakeApi.calls] == ["init", "create_repo", "upload_folder"]
    assert FakeApi.calls[0][1] == "hf_fake"
    assert FakeApi.calls[1][1:] == ("someone/WIKIIndT-test", {"repo_type": "dataset", "exist_ok": True, "private": True})
    upload = FakeApi.calls[2][1]
    assert upload["repo_id"] == "someone/WIKIIndT-test" and upload["repo_type"] == "dataset"
    assert Path(upload["folder_path"]) == folder and "*.parquet" in upload["delete_patterns"]
    assert plan.files == suite_files(folder) and len(plan.files) == 1 + 5 * len(VARIANTS)

    with pytest.raises(ParameterError, match="owner/name"):
        publish_suite("WIKIIndT", "no-owner", progress=False)
    monkeypatch.delenv("HF_TOKEN")
    monkeypatch.setattr(huggingface_hub, "get_token", lambda: None)
    with pytest.raises(MissingDataError, match="HF_TOKEN"):
        publish_suite("WIKIIndT", progress=False)


def test_publish_dry_run_touches_no_network(env_home, monkeypatch):
    import huggingface_hub

    class NoNetwork:
        def __init__(self, *a, **k):
            raise AssertionError("dry run must not create an HfApi")

    monkeypatch.setattr(huggingface_hub, "HfApi", NoNetwork)
    monkeypatch.delenv("HF_TOKEN", raising=False)
    result = CliRunner().invoke(main, ["publish", "--suite", "WIKIIndT", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "dry run" in result.output and "grate/WIKIIndT" in result.output
    for path, size in suite_files(env_home / "hub" / "WIKIIndT"):
        assert re.search(rf"^\s+{size:,}\s+{re.escape(path)}$", result.output, flags=re.M), path


def test_cli_export(env_home, tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["export", "--suite", "WIKIIndT", "--out", str(tmp_path / "x"),
                                  "--variants", "p100-inter,p25-extra"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "x").iterdir()) == ["README.md", "p100-inter", "p25-extra"]
    result = runner.invoke(main, ["export", "--suite", "NELL", "--out", str(tmp_path / "y")])
    assert result.exit_code == 2 and "unknown suite 'NELL'; known: GDELTIndT, WIKIIndT" in result.output


@pytest.mark.network
def test_push_to_the_hub_and_load_back(home, tmp_path):  # opt-in: pytest -m network, needs HF_TOKEN
    repo = os.environ.get("TKG_INDT_TEST_REPO")
    if not os.environ.get("HF_TOKEN") or not repo:
        pytest.skip("set HF_TOKEN and TKG_INDT_TEST_REPO (a dataset repo you may overwrite) to run")
    plan = publish_suite("WIKIIndT", repo, private=True, folder=tmp_path / "WIKIIndT",
                         built=home / "benchmarks" / "WIKIIndT", progress=False)
    assert plan.url
    tkg = load_benchmark("WIKIIndT", "p100-inter", source="hub", repo_id=repo, cache_dir=tmp_path / "cache")
    same(tkg, load_variant(built(home, "p100-inter")))
