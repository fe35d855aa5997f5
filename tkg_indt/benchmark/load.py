"""Reading a built variant folder back as one :class:`TKG` with splits train, valid, msg, test."""
from __future__ import annotations

import json
from pathlib import Path

from ..data.sources import load_folder
from ..data.timeenc import TimeEncoding
from ..data.tkg import TKG
from ..errors import DataFormatError, MissingDataError
from ..paths import home

SPLITS = ("train", "valid", "msg", "test")


def resolve(path_or_name) -> Path:
    """A folder path, or a name ``SUITE/VARIANT`` / ``SUITE-VARIANT`` under ``$TKG_INDT_HOME/benchmarks``."""
    path = Path(path_or_name).expanduser()
    if path.is_dir():
        return path
    text = str(path_or_name)
    root = home() / "benchmarks"
    candidates = [root / text]
    if "/" not in text and "-" in text:
        suite, _, variant = text.partition("-")
        candidates.append(root / suite / variant)
    for c in candidates:
        if c.is_dir():
            return c
    suite = text.split("/")[0].split("-")[0]
    raise MissingDataError(f"no variant folder {path_or_name!r} (looked for the path and under {root}). "
                           f"Fix: build it with `tkg-indt build --suite {suite}` or pass the folder path")


def read_metadata(folder: Path) -> dict | None:
    """``metadata.json`` of a variant folder, or None when absent."""
    file = Path(folder) / "metadata.json"
    if not file.exists():
        return None
    try:
        return json.loads(file.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise DataFormatError(file, f"not valid JSON ({exc})", "rebuild the variant (tkg-indt build)") from None


def read_splits(folder: Path, meta: dict | None, name: str | None = None) -> TKG:
    """Parse the four split files with ids shared across splits.

    The time format comes from ``metadata.json`` (key ``time``); indices are then shifted so that they
    equal the source's time indices. Without metadata the format is guessed: integers, else ISO dates.
    """
    folder = Path(folder)
    name = name or f"{folder.parent.name}/{folder.name}"
    if meta is not None and "time" in meta:
        enc = TimeEncoding.from_dict(meta["time"])
        tkg = load_folder(folder, time_format=enc.format, time_origin=enc.origin, name=name, splits=SPLITS)
        return tkg.with_time_offset(tkg.time.first - enc.first)
    try:
        return load_folder(folder, time_format="int", name=name, splits=SPLITS)
    except DataFormatError as exc:
        if "cannot parse time" not in exc.problem:
            raise
        return load_folder(folder, time_format="iso-date", name=name, splits=SPLITS)


def load_variant(path_or_name) -> TKG:
    """Load a variant (folder or ``SUITE/VARIANT`` name) as a TKG with splits train, valid, msg, test.

    Entity and relation ids are shared across the four splits (names sorted); ``tkg.meta`` holds
    ``metadata.json`` plus ``folder``. Use :func:`tkg_indt.evaluation.inductive` for the inference
    graph (msg + test) with its own ids.
    """
    folder = resolve(path_or_name)
    meta = read_metadata(folder)
    name = f"{meta['suite']}/{meta['variant']}" if meta and meta.get("suite") else None
    tkg = read_splits(folder, meta, name)
    tkg.meta = {**(meta or {}), "folder": str(folder)}
    return tkg


def load_variants(name_or_dir) -> list[TKG]:
    """``SUITE`` (every variant of its recipe), ``SUITE/VARIANT`` or a variant folder -> list of TKGs."""
    if Path(name_or_dir).expanduser().is_dir() or "/" in str(name_or_dir):
        return [load_variant(name_or_dir)]
    from .recipe import get_recipe, variant_name

    recipe = get_recipe(str(name_or_dir))
    return [load_variant(f"{recipe.suite}/{variant_name(p, m)}") for p, m in recipe.variants]
