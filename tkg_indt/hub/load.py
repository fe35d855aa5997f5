"""``load_benchmark(suite, variant)``: one variant of a suite as a :class:`TKG`, wherever it is.

Looked up in this order (``source=None``):

1. the local build cache: ``$TKG_INDT_HOME/benchmarks/<SUITE>/<variant>`` (the builder's output);
2. a local exported folder: ``$TKG_INDT_HOME/hub/<SUITE>`` (``tkg-indt export``);
3. the Hugging Face Hub: ``datasets.load_dataset("grate/<SUITE>", variant)``.

``source`` forces one place: ``"cache"``, ``"export"``, ``"hub"``, or a path (an exported suite
folder, a built suite folder holding ``<variant>/``, or a built variant folder). Whatever the place,
the result is the same graph: splits ``train``, ``valid``, ``msg``, ``test``; entity and relation ids
follow sorted names over all four splits; time indices count from the source's first timestamp.
``tkg_indt.evaluation.inductive(tkg)`` takes it as is.
"""
from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import yaml

from ..data.sources import get_spec
from ..data.timeenc import TimeEncoding
from ..data.tkg import TKG
from ..errors import DataFormatError, MissingDataError, ParameterError
from .export import FEATURES, read_built_variant
from .suites import DEFAULT_VARIANT, HUB_SPLITS, built_variant_dir, check_variant, export_dir, get_suite

PLACES = ("cache", "export", "hub")


def load_benchmark(suite: str, variant: str = DEFAULT_VARIANT, source=None, repo_id: str | None = None,
                   revision: str | None = None, cache_dir=None) -> TKG:
    """Load ``variant`` of ``suite`` (e.g. ``load_benchmark("WIKIIndT", "p100-inter")``).

    repo_id: Hub dataset (default ``grate/<SUITE>``); revision: its branch, tag or commit;
    cache_dir: the ``datasets`` cache for the Hub path. Unknown names raise ``UnknownNameError``.
    """
    _check_source(source)
    spec = get_suite(suite)
    check_variant(variant)
    name = f"{spec.name}/{variant}"
    repo_id = repo_id or spec.repo_id
    if source is not None and str(source) not in PLACES:
        return _load_path(Path(source), spec.name, variant, name)
    places = PLACES if source is None else (str(source),)
    tried = []
    for place in places:
        if place == "cache":
            folder = built_variant_dir(spec.name, variant)
            if (folder / "metadata.json").exists():
                return _from_built(folder, spec.name, variant)
            tried.append(f"build cache {folder}")
        elif place == "export":
            folder = export_dir(spec.name)
            if (folder / "README.md").exists():
                return load_exported(folder, variant, spec.name, name)
            tried.append(f"exported folder {folder}")
        else:
            try:
                return load_hub(repo_id, variant, spec.name, name, revision=revision, cache_dir=cache_dir)
            except MissingDataError as exc:
                tried.append(str(exc))
    raise MissingDataError(f"{name} not found; looked in: {'; '.join(tried)}. Fix: build it "
                           f"(tkg-indt build --suite {spec.name}), export it (tkg-indt export --suite {spec.name}), "
                           f"or allow network access to the Hub dataset {repo_id}")


# --------------------------------------------------------------------------- places
def _from_built(folder: Path, suite: str, variant: str) -> TKG:
    tkg = read_built_variant(folder, suite, variant, check=False)
    tkg.name = f"{suite}/{variant}"
    tkg.meta = dict(tkg.meta, loaded_from=str(folder))
    return tkg


def _load_path(path: Path, suite: str, variant: str, name: str) -> TKG:
    if (path / "README.md").exists():
        return load_exported(path, variant, suite, name)
    if (path / variant / "metadata.json").exists():
        return _from_built(path / variant, suite, variant)
    if (path / "metadata.json").exists():
        return _from_built(path, suite, variant)
    raise MissingDataError(f"{path}: neither an exported suite folder (README.md) nor a built suite or variant folder "
                           f"(metadata.json). Fix: pass the folder written by `tkg-indt export` or by the builder")


def read_front_matter(readme: Path) -> dict:
    """The YAML between the leading ``---`` lines of a dataset card."""
    text = Path(readme).read_text(encoding="utf-8")
    match = re.match(r"^---\n(.*?\n)---\n", text, flags=re.S)
    if not match:
        raise DataFormatError(readme, "no YAML front matter (--- ... ---) at the top", "export the suite again")
    try:
        return yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as exc:
        raise DataFormatError(readme, f"front matter is not valid YAML ({exc})", "export the suite again") from None


def load_exported(folder, variant: str, suite: str | None = None, name: str | None = None) -> TKG:
    """A variant from an exported suite folder, read with pyarrow; row counts checked against the card."""
    folder = Path(folder)
    readme = folder / "README.md"
    front = read_front_matter(readme)
    configs = {c.get("config_name"): c for c in front.get("configs", [])}
    if variant not in configs:
        raise MissingDataError(f"{folder}: config {variant!r} not exported (have: {', '.join(sorted(configs))}). "
                               f"Fix: tkg-indt export --suite {suite or '<SUITE>'} (all variants)")
    files = {item["split"]: folder / item["path"] for item in configs[variant]["data_files"]}
    info = {i.get("config_name"): i for i in front.get("dataset_info", [])}.get(variant, {})
    expected = {s["name"]: s["num_examples"] for s in info.get("splits", [])}
    tables = {}
    for split, hub in HUB_SPLITS.items():
        if hub not in files:
            raise DataFormatError(readme, f"config {variant} lists no {hub!r} split", "export the suite again")
        table = pq.read_table(files[hub])
        if hub in expected and table.num_rows != expected[hub]:
            raise DataFormatError(files[hub], f"{table.num_rows} rows but the card says {expected[hub]}",
                                  "export the suite again")
        tables[split] = table
    meta_path = folder / variant / "metadata.json"
    meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    spec = get_suite(suite or front.get("pretty_name", ""))
    return tkg_from_tables(tables, spec.source, name or f"{spec.name}/{variant}",
                           dict(meta, loaded_from=str(folder)), files=files)


def load_hub(repo_id: str, variant: str, suite: str, name: str | None = None, revision=None, cache_dir=None) -> TKG:
    """A variant through ``datasets.load_dataset(repo_id, variant)`` (the Hub, or a local folder path)."""
    import datasets

    try:
        ds = datasets.load_dataset(repo_id, variant, revision=revision,
                                   cache_dir=str(cache_dir) if cache_dir else None)
    except (FileNotFoundError, ConnectionError, OSError) as exc:  # DatasetNotFoundError is a FileNotFoundError
        raise MissingDataError(f"Hub dataset {repo_id} ({variant}) could not be loaded: {exc}") from exc
    missing = [h for h in HUB_SPLITS.values() if h not in ds]
    if missing:
        raise DataFormatError(repo_id, f"config {variant} has no split(s) {', '.join(missing)}",
                              "republish the suite with tkg-indt publish")
    tables = {split: ds[hub].with_format("arrow")[:] for split, hub in HUB_SPLITS.items()}
    meta = _hub_metadata(repo_id, variant, revision)
    return tkg_from_tables(tables, get_suite(suite).source, name or f"{suite}/{variant}",
                           dict(meta, loaded_from=f"hub:{repo_id}"))


def _hub_metadata(repo_id: str, variant: str, revision) -> dict:
    """The config's metadata.json from a local folder or the Hub; {} if it cannot be had (offline)."""
    local = Path(repo_id) / variant / "metadata.json"
    if local.exists():
        return json.loads(local.read_text())
    from huggingface_hub import hf_hub_download
    from huggingface_hub.errors import HfHubHTTPError

    try:
        path = hf_hub_download(repo_id, f"{variant}/metadata.json", repo_type="dataset", revision=revision)
    except (OSError, HfHubHTTPError, ValueError):
        return {}
    return json.loads(Path(path).read_text())


# --------------------------------------------------------------------------- tables -> TKG
def absolute_from_labels(enc: TimeEncoding, labels: np.ndarray) -> np.ndarray:
    """Calendar labels (``TimeEncoding.label``) -> absolute time units; unparseable labels raise ValueError."""
    if enc.format == "iso-date":
        return (np.asarray(labels, dtype="datetime64[D]") - np.datetime64("1970-01-01", "D")).astype(np.int64)
    if enc.format == "hour-offset":
        days = np.asarray(labels, dtype="datetime64[D]") - np.datetime64(str(enc.origin), "D")
        return days.astype(np.int64)
    values = np.asarray(labels).astype(np.int64)
    return values - int(enc.origin) if enc.format == "year-index" else values


def tkg_from_tables(tables: dict, source: str, name: str, meta: dict, files: dict | None = None) -> TKG:
    """Arrow tables with the export schema (per TKG split) -> TKG with sorted-name ids.

    The time encoding is the source's format with ``first`` recovered from the ``date`` labels
    (``absolute(date) - time`` must be one constant: a check of both columns).
    """
    where = lambda split: files[HUB_SPLITS[split]] if files else f"{name}:{HUB_SPLITS[split]}"  # noqa: E731
    for split, table in tables.items():
        got = [(f.name, str(f.type)) for f in table.schema]
        want = [(n, "int64" if d == "int64" else "string") for n, d in FEATURES]
        if [g for g in got if g[0] in dict(want)] != want:
            raise DataFormatError(where(split), f"columns {got} differ from the export schema {want}",
                                  "export or publish the suite again")
    order = list(tables)
    col = lambda c: pa.concat_arrays([tables[s].column(c).combine_chunks() for s in order])  # noqa: E731
    n = sum(tables[s].num_rows for s in order)
    if n == 0:
        raise DataFormatError(where(order[0]), "the variant has no facts", "export the suite again")
    heads = pd.Series(pa.concat_arrays([col("head"), col("tail")]).to_numpy(zero_copy_only=False), dtype=object)
    ent_codes, entities = pd.factorize(heads, sort=True)
    rel_codes, relations = pd.factorize(pd.Series(col("relation").to_numpy(zero_copy_only=False), dtype=object),
                                        sort=True)
    times = col("time").to_numpy(zero_copy_only=False).astype(np.int64)
    labels = col("date").to_numpy(zero_copy_only=False)
    base = get_spec(source).encoding()
    uniq, inverse = np.unique(labels.astype(str), return_inverse=True)
    try:
        absolute = absolute_from_labels(base, uniq)[inverse.reshape(-1)]
    except ValueError as exc:
        raise DataFormatError(where(order[0]), f"date labels do not parse as {base.format} ({exc})",
                              "export the suite again") from None
    firsts = np.unique(absolute - times)
    if len(firsts) != 1:
        raise DataFormatError(where(order[0]), "columns time and date disagree (more than one offset)",
                              "export the suite again")
    enc = base.with_first(int(firsts[0]))
    if isinstance(meta.get("time"), dict) and TimeEncoding.from_dict(meta["time"]) != enc:
        raise DataFormatError(where(order[0]), f"time encoding {meta['time']} of metadata.json does not match the data",
                              "export the suite again")
    quads = np.stack([ent_codes[:n], rel_codes, ent_codes[n:], times], axis=1).astype(np.int64)
    bounds = np.cumsum([0] + [tables[s].num_rows for s in order])
    splits = {s: quads[bounds[i]:bounds[i + 1]] for i, s in enumerate(order)}
    return TKG(name, splits, np.asarray(entities, dtype=object), np.asarray(relations, dtype=object), enc, meta)


def _check_source(source) -> None:
    if source is not None and not isinstance(source, (str, Path)):
        raise ParameterError(f"source must be None, one of {', '.join(PLACES)} or a folder path, not {source!r}")
