"""The registry of raw TKG sources and the loader that turns them into :class:`TKG` objects.

Where files come from, in order: a user folder (``data_dir`` argument or ``$TKG_INDT_DATA``) holding
``<NAME>/train.txt`` (or ``.txt.gz``), ``valid.txt``, ``test.txt``; then the download cache under
``$TKG_INDT_HOME/sources/<NAME>``; then, with ``download=True``, the public copies listed here
(downloaded, converted to names, verified, cached). Parsed sources are cached as parquet under
``$TKG_INDT_HOME/parsed`` keyed by the files' sizes and modification times.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd

from ..errors import MissingDataError, UnknownNameError
from ..paths import atomic_dir, home, user_data_dir
from .reader import check_times, read_bytes, read_id_map, read_quads
from .timeenc import TimeEncoding
from .tkg import TKG

SPLITS = ("train", "valid", "test")
CACHE_VERSION = 1
_GH = "https://raw.githubusercontent.com"


@dataclasses.dataclass(frozen=True)
class SourceSpec:
    """What is known of one source: its format, time encoding, public copy and expected counts."""

    name: str
    description: str
    time_format: str  # see TimeEncoding
    time_origin: str | int | None  # year of index 0 / date of hour 0
    counts: dict  # split -> number of lines
    md5: dict  # split -> md5 of the uncompressed names-format file (SOURCES.md)
    urls: dict  # split -> public URL
    url_ids: bool = False  # public copy is id-encoded; maps at map_urls
    map_urls: dict = dataclasses.field(default_factory=dict)
    licence: str = ""
    citation: str = ""
    paper_stats: dict = dataclasses.field(default_factory=dict)  # entities/relations/timestamps

    @property
    def granularity(self) -> str:
        return TimeEncoding(self.time_format, origin=self.time_origin).granularity

    def encoding(self) -> TimeEncoding:
        return TimeEncoding(self.time_format, origin=self.time_origin)


def _urls(base: str, pattern: str) -> dict:
    return {s: f"{base}/{pattern.format(split=s)}" for s in SPLITS}


def _renet(name: str) -> dict:
    base = f"{_GH}/INK-USC/RE-Net/master/data/{name}"
    return dict(urls=_urls(base, "{split}.txt"), url_ids=True,
                map_urls={"entity2id.txt": f"{base}/entity2id.txt", "relation2id.txt": f"{base}/relation2id.txt"})


_ICEWS_LICENCE = "ICEWS Coded Event Data, Harvard Dataverse (research use; see the dataverse terms)"
SOURCES: dict[str, SourceSpec] = {s.name: s for s in [
    SourceSpec("ICEWS14", "ICEWS political events of 2014, interpolation split (Garcia-Duran et al. 2018)",
               "iso-date", None, {"train": 72826, "valid": 8941, "test": 8963},
               {"train": "55b1d4950f8f0924853bd0f4e55ae33f", "valid": "b6493b02c251a199f590a7d65c9db28e",
                "test": "176fca316ec491e7d136bd0ad3508e65"},
               _urls(f"{_GH}/mniepert/mmkb/master/TemporalKGs/icews14", "icews_2014_{split}.txt"),
               licence=_ICEWS_LICENCE, citation="garcia2018learning",
               paper_stats={"entities": 7128, "relations": 230, "timestamps": 365}),
    SourceSpec("ICEWS05-15", "ICEWS political events 2005-2015, interpolation split (Garcia-Duran et al. 2018)",
               "iso-date", None, {"train": 368962, "valid": 46275, "test": 46092},
               {"train": "60af36527f17eccb755cc4bba6e13d7f", "valid": "b77b0691e2addcf2b65ced164ae53030",
                "test": "94942804d6bb95838afb97d3e3dbe3ba"},
               _urls(f"{_GH}/mniepert/mmkb/master/TemporalKGs/icews05-15", "icews_2005-2015_{split}.txt"),
               licence=_ICEWS_LICENCE, citation="garcia2018learning",
               paper_stats={"entities": 10488, "relations": 251, "timestamps": 4017}),
    SourceSpec("GDELT", "GDELT events 2015-04-01..2016-03-31, 500 entities (Goel et al. 2020, DE-SimplE)",
               "iso-date", None, {"train": 2735685, "valid": 341961, "test": 341961}, {},
               _urls(f"{_GH}/BorealisAI/de-simple/master/datasets/gdelt", "{split}.txt"),
               licence="GDELT: free for unrestricted use with attribution (gdeltproject.org terms)",
               citation="goel2020diachronic",
               paper_stats={"entities": 500, "relations": 20, "timestamps": 366}),
    SourceSpec("WIKI", "Wikidata facts with yearly validity, 1786-2017 (RE-Net version, Jin et al. 2020)",
               "year-index", 1786, {"train": 539286, "valid": 67538, "test": 63110},
               {"train": "861a943d74af36d47da4ee00506d679f", "valid": "66a2b7457c5f242c1d2092229e983b6a",
                "test": "68cff9387421a684cceb70c69f6381ba"},
               **_renet("WIKI"), licence="Wikidata: CC0 1.0", citation="jin2020recurrent",
               paper_stats={"entities": 12554, "relations": 24, "timestamps": 232}),
    SourceSpec("ICEWS18", "ICEWS political events Jan-Oct 2018 (RE-Net version, Jin et al. 2020)",
               "hour-offset", "2018-01-01", {"train": 373018, "valid": 45995, "test": 49545},
               {"train": "91dc27318cf164d43734aacb9269fcd6", "valid": "65c2caee4dc10bcae647ee45bf6478af",
                "test": "e053c38a85158eeda197c7d2b9a8194e"},
               **_renet("ICEWS18"), licence=_ICEWS_LICENCE, citation="jin2020recurrent",
               paper_stats={"entities": 23033, "relations": 256, "timestamps": 304}),
    SourceSpec("YAGO", "YAGO facts with yearly validity, 1830-2018 (RE-Net version, Jin et al. 2020)",
               "year-index", 1830, {"train": 161540, "valid": 19523, "test": 20026},
               {"train": "e79057e81c0a9c44a55db6b0235445db", "valid": "8f4a2c8b7cbcacf37110927f9aeee80c",
                "test": "6c824910fd6b571976b710bc07c271f1"},
               **_renet("YAGO"), licence="YAGO: CC BY 4.0", citation="jin2020recurrent",
               paper_stats={"entities": 10623, "relations": 10, "timestamps": 189}),
    SourceSpec("ICEWS14-extrap", "ICEWS 2014, chronological (forecasting) split of RE-GCN (Li et al. 2021)",
               "hour-offset", "2014-01-01", {"train": 74845, "valid": 8514, "test": 7371},
               {"train": "7d025432fd5da5a38fb0bab23fbf1a3c", "valid": "82781d143b777c9d548bfd2021948a5d",
                "test": "98e0fdb127016dc806acef74c2c942cc"},
               _urls(f"{_GH}/nec-research/recurrency_baseline_tkg/main/data/ICEWS14", "{split}.txt"), url_ids=True,
               map_urls={m: f"{_GH}/nec-research/recurrency_baseline_tkg/main/data/ICEWS14/{m}"
                         for m in ("entity2id.txt", "relation2id.txt")},
               licence=_ICEWS_LICENCE, citation="li2021temporal",
               paper_stats={"entities": 7128, "relations": 230, "timestamps": 365}),
]}


def get_spec(name: str) -> SourceSpec:
    for key, spec in SOURCES.items():
        if key.lower() == name.lower():
            return spec
    raise UnknownNameError("source", name, SOURCES)


# --------------------------------------------------------------------------- locating files
def _split_file(folder: Path, split: str) -> Path | None:
    for candidate in (folder / f"{split}.txt", folder / f"{split}.txt.gz"):
        if candidate.exists():
            return candidate
    return None


def find_files(name: str, data_dir=None) -> dict[str, Path] | None:
    """Paths of the three split files of a source, or None if not available locally."""
    spec = get_spec(name)
    folders = []
    user = user_data_dir(data_dir)
    if user is not None:
        folders.append(user / spec.name)
    folders.append(home() / "sources" / spec.name)
    for folder in folders:
        files = {s: _split_file(folder, s) for s in SPLITS}
        if all(files.values()):
            return files
    return None


def locate(name: str, data_dir=None, download: bool = False) -> dict[str, Path]:
    spec = get_spec(name)
    files = find_files(spec.name, data_dir)
    if files is not None:
        return files
    if download:
        from .download import download_source

        return download_source(spec)
    where = user_data_dir(data_dir)
    hint = f" or {where / spec.name}" if where else ""
    raise MissingDataError(
        f"source {spec.name} is not available locally (looked in {home() / 'sources' / spec.name}{hint}). "
        f"Fix: pass --data-dir / set TKG_INDT_DATA to a folder holding {spec.name}/train.txt, valid.txt, test.txt, "
        f"or run `tkg-indt download {spec.name}`.")


# --------------------------------------------------------------------------- parsing
def _file_key(files: dict[str, Path]) -> str:
    h = hashlib.sha1(f"v{CACHE_VERSION}".encode())
    for split in sorted(files):
        st = files[split].stat()
        h.update(f"{split}:{files[split].resolve()}:{st.st_size}:{st.st_mtime_ns}".encode())
    return h.hexdigest()[:16]


def parse_files(name: str, files: dict[str, Path], encoding: TimeEncoding,
                entity_map: dict | None = None, relation_map: dict | None = None) -> TKG:
    """Parse split files (names or ids with maps) into a TKG. Vocabularies are sorted by name."""
    frames, absolute, file_meta = {}, {}, {}
    for split, path in files.items():
        data = read_bytes(path)
        frame = read_quads(path, entity_map, relation_map, data=data)
        absolute[split] = check_times(path, frame, encoding)
        frames[split] = frame
        file_meta[split] = {"path": str(path), "md5": hashlib.md5(data).hexdigest(), "lines": len(frame)}
    order = list(frames)
    all_frames = pd.concat([frames[s] for s in order], ignore_index=True)
    ent_codes, entities = pd.factorize(pd.concat([all_frames["head"], all_frames["tail"]], ignore_index=True), sort=True)
    rel_codes, relations = pd.factorize(all_frames["relation"], sort=True)
    n = len(all_frames)
    times = np.concatenate([absolute[s] for s in order]) if order else np.zeros(0, np.int64)
    first = int(times.min()) if n else 0
    quads = np.stack([ent_codes[:n], rel_codes, ent_codes[n:], times - first], axis=1).astype(np.int64)
    bounds = np.cumsum([0] + [len(frames[s]) for s in order])
    splits = {s: quads[bounds[i]:bounds[i + 1]] for i, s in enumerate(order)}
    checksum = hashlib.sha256("".join(file_meta[s]["md5"] for s in order).encode()).hexdigest()
    meta = {"source": name, "files": file_meta, "checksum": checksum, "duplicates": "kept as events"}
    return TKG(name, splits, np.asarray(entities, dtype=object), np.asarray(relations, dtype=object),
               encoding.with_first(first), meta)


def _save_parsed(tkg: TKG, folder: Path) -> None:
    with atomic_dir(folder) as tmp:
        order = list(tkg.splits)
        facts = tkg.facts(*order)
        split_col = np.repeat(np.arange(len(order), dtype=np.int8), [len(tkg.splits[s]) for s in order])
        frame = pd.DataFrame(facts, columns=["head", "relation", "tail", "time"])
        frame.insert(0, "split", split_col)
        frame.to_parquet(tmp / "facts.parquet", index=False)
        pd.DataFrame({"name": tkg.entities.astype(str)}).to_parquet(tmp / "entities.parquet", index=False)
        pd.DataFrame({"name": tkg.relations.astype(str)}).to_parquet(tmp / "relations.parquet", index=False)
        (tmp / "meta.json").write_text(json.dumps({"name": tkg.name, "splits": order, "time": tkg.time.to_dict(),
                                                   "meta": tkg.meta}, indent=1))


def _load_parsed(folder: Path) -> TKG:
    info = json.loads((folder / "meta.json").read_text())
    frame = pd.read_parquet(folder / "facts.parquet")
    split_col = frame.pop("split").to_numpy()
    facts = frame.to_numpy(dtype=np.int64)
    splits = {s: facts[split_col == i] for i, s in enumerate(info["splits"])}
    entities = pd.read_parquet(folder / "entities.parquet")["name"].to_numpy(dtype=object)
    relations = pd.read_parquet(folder / "relations.parquet")["name"].to_numpy(dtype=object)
    return TKG(info["name"], splits, entities, relations, TimeEncoding.from_dict(info["time"]), info["meta"])


def load_source(name: str, data_dir=None, download: bool = False, cache: bool = True) -> TKG:
    """Load a registered source as a :class:`TKG` (splits ``train``, ``valid``, ``test``).

    >>> tkg = load_source("YAGO", data_dir="../shared/data")   # doctest: +SKIP
    """
    spec = get_spec(name)
    files = locate(spec.name, data_dir, download)
    folder = home() / "parsed" / f"{spec.name}-{_file_key(files)}"
    if cache and (folder / "meta.json").exists():
        return _load_parsed(folder)
    tkg = parse_files(spec.name, files, spec.encoding())
    tkg.meta["granularity"] = spec.granularity
    if cache:
        try:
            _save_parsed(tkg, folder)
        except OSError:  # a read-only cache must not stop anyone from loading data
            pass
    return tkg


def load_folder(folder, time_format: str = "iso-date", time_origin=None, name: str | None = None,
                splits: tuple[str, ...] | None = None, ids: bool | None = None) -> TKG:
    """Load users' own quadruple files from a folder (``train.txt`` etc., names or ids).

    ``ids=None`` uses ``entity2id.txt``/``relation2id.txt`` when both are beside the splits.
    ``splits`` defaults to every ``*.txt``/``*.txt.gz`` split file found among
    train, valid, msg, test.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise MissingDataError(f"{folder}: no such folder. Fix: pass the folder that holds train.txt, valid.txt, test.txt")
    wanted = splits or ("train", "valid", "msg", "test")
    files = {s: p for s in wanted if (p := _split_file(folder, s)) is not None}
    if splits and len(files) < len(splits):
        missing = [s for s in splits if s not in files]
        raise MissingDataError(f"{folder}: missing split file(s) {', '.join(s + '.txt' for s in missing)}. "
                               f"Fix: add them or choose other splits")
    if not files:
        raise MissingDataError(f"{folder}: no split files (train.txt, valid.txt, msg.txt, test.txt) found")
    emap = rmap = None
    have_maps = (folder / "entity2id.txt").exists() and (folder / "relation2id.txt").exists()
    if ids or (ids is None and have_maps):
        if not have_maps:
            raise MissingDataError(f"{folder}: id-encoded files need entity2id.txt and relation2id.txt beside them")
        emap, rmap = read_id_map(folder / "entity2id.txt"), read_id_map(folder / "relation2id.txt")
    return parse_files(name or folder.name, files, TimeEncoding(time_format, origin=time_origin), emap, rmap)


def available(data_dir=None) -> dict[str, Path | None]:
    """Which sources are available locally: name -> folder (or None)."""
    out = {}
    for name in SOURCES:
        files = find_files(name, data_dir)
        out[name] = files["train"].parent if files else None
    return out


def file_md5(path: os.PathLike) -> str:
    return hashlib.md5(read_bytes(Path(path))).hexdigest()
