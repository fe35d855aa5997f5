"""Built suite -> a Hub-ready dataset folder (parquet per config and split, README.md dataset card).

Layout of an exported suite (no ``.py`` file: ``datasets`` >= 4 reads data files plus README YAML)::

    README.md                       YAML ``configs`` + ``dataset_info``, then the dataset card
    <variant>/train.parquet         one config per variant: p25-inter ... p100-extra
    <variant>/validation.parquet
    <variant>/msg.parquet
    <variant>/test.parquet
    <variant>/metadata.json         the builder's metadata.json (parameters, seed, checksums, counts)

Every split of every config has one schema: ``head``, ``relation``, ``tail`` (names, strings),
``time`` (int64 time index: granularity units, days or years, since the source's first timestamp)
and ``date`` (calendar label of ``time``: ``2015-12-13`` or ``1990``). Rows keep the order of the
builder's split files. Bytes are deterministic: the same built variants give identical files.
"""
from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..data.timeenc import TimeEncoding
from ..data.tkg import HEAD, REL, TAIL, TIME, TKG
from ..errors import DataFormatError, MissingDataError
from ..benchmark.load import read_metadata as read_variant_metadata
from ..paths import atomic_dir
from .suites import HUB_SPLITS, VARIANTS, built_variant_dir, check_variant, export_dir, get_suite

FEATURES = (("head", "string"), ("relation", "string"), ("tail", "string"), ("time", "int64"), ("date", "string"))
SCHEMA = pa.schema([(name, pa.string() if dtype == "string" else pa.int64()) for name, dtype in FEATURES],
                   metadata={"huggingface": json.dumps(
                       {"info": {"features": {n: {"dtype": d, "_type": "Value"} for n, d in FEATURES}}},
                       separators=(",", ":"))})
# fixed writer settings: the same table always gives the same bytes (for a given pyarrow version)
PARQUET = dict(compression="zstd", compression_level=9, use_dictionary=True, write_statistics=True,
               version="2.6", data_page_version="1.0", row_group_size=100_000)


@dataclasses.dataclass
class VariantExport:
    """One exported config: its files (paths relative to the suite folder), sizes, statistics, metadata."""

    name: str
    files: dict  # hub split -> relative path of the parquet file
    num_examples: dict  # hub split -> rows
    num_bytes: dict  # hub split -> in-memory arrow bytes (informative)
    file_bytes: dict  # hub split -> parquet file size
    stats: dict
    meta: dict


# --------------------------------------------------------------------------- reading built variants
def read_metadata(folder: Path) -> dict:
    """``metadata.json`` of a built variant; it must hold the time encoding (key ``time``)."""
    path = Path(folder) / "metadata.json"
    meta = read_variant_metadata(folder)
    if meta is None:
        raise MissingDataError(f"{path}: not found; a built variant folder holds train.txt, valid.txt, msg.txt, "
                               f"test.txt and metadata.json. Fix: build the suite first (tkg-indt build --suite ...)")
    if not isinstance(meta.get("time"), dict) or "format" not in meta["time"]:
        raise DataFormatError(path, "no time encoding under key 'time' (TimeEncoding.to_dict())",
                              "rebuild the variant with the current builder")
    return meta


def read_built_variant(folder, suite: str | None = None, variant: str | None = None, check: bool = True) -> TKG:
    """A built variant folder -> TKG (splits train/valid/msg/test, ``meta`` = its metadata.json).

    Read with :func:`tkg_indt.benchmark.load_variant`: ids follow sorted names, time indices count from
    the source's first timestamp (``metadata['time']['first']``), so they equal the exported ``time``.
    ``check`` re-verifies the builder's invariants and file hashes first
    (:func:`tkg_indt.benchmark.check_variant`, without rebuilding) and refuses a broken variant;
    ``suite``/``variant`` must match the metadata (a custom build is never exported as the suite).
    """
    from ..benchmark import check_variant as check_built
    from ..benchmark import load_variant

    folder = Path(folder)
    meta = read_metadata(folder)
    for key, want in (("suite", suite), ("variant", variant)):
        if want is not None and meta.get(key) != want:
            raise DataFormatError(folder / "metadata.json", f"{key} is {meta.get(key)!r}, expected {want!r}",
                                  "export the folder built for this suite and variant (custom builds are not "
                                  "exported under the suite's name)")
    if check:
        report = check_built(folder, rebuild=False)
        if not report.ok:
            raise DataFormatError(folder, "fails the benchmark checks: " + "; ".join(report.violations),
                                  f"rebuild it (tkg-indt build --suite {meta.get('suite')})")
    tkg = load_variant(folder)
    if tkg.time != TimeEncoding.from_dict(meta["time"]):
        raise DataFormatError(folder / "metadata.json", f"time encoding {meta['time']} does not match the files",
                              "rebuild the variant")
    tkg.meta = meta
    return tkg


# --------------------------------------------------------------------------- tables
def split_table(tkg: TKG, split: str) -> pa.Table:
    """One split as an arrow table with the export schema (names, time index, calendar label)."""
    f = tkg.splits[split]
    times, inverse = np.unique(f[:, TIME], return_inverse=True)
    labels = np.asarray(tkg.time.label(times), dtype=object)[inverse.reshape(-1)] if len(f) else np.zeros(0, object)
    columns = [tkg.entities[f[:, HEAD]], tkg.relations[f[:, REL]], tkg.entities[f[:, TAIL]], f[:, TIME], labels]
    return pa.Table.from_arrays([pa.array(c, type=SCHEMA.field(i).type) for i, c in enumerate(columns)], schema=SCHEMA)


def write_parquet(table: pa.Table, path: Path) -> None:
    pq.write_table(table, path, **PARQUET)


def variant_stats(tkg: TKG) -> dict:
    """Counts a card reports: quads per split and the training / inference graphs' vocabularies."""
    def part(*names):
        f = tkg.facts(*names)
        ents = np.unique(np.concatenate([f[:, HEAD], f[:, TAIL]]))
        return f, ents, np.unique(f[:, REL]), np.unique(f[:, TIME])

    ftr, etr, rtr, ttr = part("train", "valid")
    finf, einf, rinf, tinf = part("msg", "test")
    out = {split: len(tkg.splits[split]) for split in HUB_SPLITS}
    out["duplicates"] = int(len(tkg.facts()) - len(np.unique(tkg.facts(), axis=0)))
    out.update({
        "entities_train": len(etr), "entities_inference": len(einf),
        "entities_shared": len(np.intersect1d(etr, einf)),
        "relations_train": len(rtr), "relations_inference": len(rinf),
        "relations_shared": len(np.intersect1d(rtr, rinf)),
        "timestamps_train": len(ttr), "timestamps_inference": len(tinf),
        "timestamps_shared": len(np.intersect1d(ttr, tinf)),
        "span_train": tkg.time.span(ftr[:, TIME]), "span_inference": tkg.time.span(finf[:, TIME]),
        "span_msg": tkg.time.span(tkg.splits["msg"][:, TIME]), "span_test": tkg.time.span(tkg.splits["test"][:, TIME]),
    })
    return out


def export_variant(tkg: TKG, meta: dict, name: str, out: Path) -> VariantExport:
    """Write one config's parquet files and metadata.json under ``out/<name>/``."""
    (out / name).mkdir(parents=True, exist_ok=True)
    files, rows, nbytes, fbytes = {}, {}, {}, {}
    for split, hub in HUB_SPLITS.items():
        rel = f"{name}/{hub}.parquet"
        table = split_table(tkg, split)
        write_parquet(table, out / rel)
        files[hub], rows[hub] = rel, table.num_rows
        nbytes[hub] = pq.read_table(out / rel).nbytes  # what `datasets` counts once it has read the file
        fbytes[hub] = (out / rel).stat().st_size
    (out / name / "metadata.json").write_text(json.dumps(meta, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    return VariantExport(name, files, rows, nbytes, fbytes, variant_stats(tkg), meta)


# --------------------------------------------------------------------------- suite
def export_suite(suite: str, out=None, variants=None, built=None, check: bool = True, progress: bool = True) -> Path:
    """Export built variants of ``suite`` into a Hub-ready folder (default ``$TKG_INDT_HOME/hub/<SUITE>``).

    ``built``: folder holding ``<variant>/`` built folders (default ``$TKG_INDT_HOME/benchmarks/<SUITE>``).
    ``variants``: subset of the eight variant names (default all; every one must be built). ``check``:
    re-verify each variant's invariants before exporting it. The folder is written atomically: a
    failure leaves any previous export untouched.
    """
    from .card import render_readme

    spec = get_suite(suite)
    names = list(variants) if variants else list(VARIANTS)
    for v in names:
        check_variant(v)
    names = [v for v in VARIANTS if v in names]  # canonical order
    folders = {v: built_variant_dir(spec.name, v, root=built) for v in names}
    missing = [v for v, f in folders.items() if not (f / "metadata.json").exists()]
    if missing:
        where = built_variant_dir(spec.name, names[0], root=built).parent
        raise MissingDataError(f"{spec.name}: variant(s) {', '.join(missing)} not built under {where}. "
                               f"Fix: build the suite first (tkg-indt build --suite {spec.name}), or pass --variants")
    out = Path(out) if out else export_dir(spec.name)
    items = names
    if progress:
        from tqdm.auto import tqdm

        items = tqdm(names, desc=f"export {spec.name}", unit="config")
    with atomic_dir(out) as tmp:
        os.chmod(tmp, 0o777 & ~_umask())  # mkdtemp makes it private; an export is meant to be shared
        exports = []
        for v in items:
            tkg = read_built_variant(folders[v], spec.name, v, check=check)
            exports.append(export_variant(tkg, tkg.meta, v, tmp))
        (tmp / "README.md").write_text(render_readme(spec, exports), encoding="utf-8")
    return out


def suite_files(folder) -> list[tuple[str, int]]:
    """(relative path, size) of every file of an exported suite folder, sorted."""
    folder = Path(folder)
    return sorted((p.relative_to(folder).as_posix(), p.stat().st_size) for p in folder.rglob("*") if p.is_file())


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
