"""Download public copies of the sources, convert them to names, verify and cache them.

The cached copy lives in ``$TKG_INDT_HOME/sources/<NAME>/`` in the same format as the files of a
user folder (names, tab-separated, the source's own time column). Verification: the line count of
every split must equal the registry's count (always possible); the md5 of the converted file is
compared with the reference copy's md5 where one is known, and ``VERIFIED.json`` records which check
passed. Nothing is moved into the cache unless every split passed.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import urllib.request
from pathlib import Path

from ..errors import DataFormatError, MissingDataError
from ..paths import atomic_dir, home
from .reader import check_times, read_bytes, read_id_map, read_quads

SPLITS = ("train", "valid", "test")


def fetch(url: str, target: Path, timeout: float = 60.0) -> Path:
    """Stream ``url`` to ``target`` with a progress bar."""
    from tqdm.auto import tqdm

    try:
        with urllib.request.urlopen(url, timeout=timeout) as response, open(target, "wb") as out:
            total = int(response.headers.get("Content-Length") or 0) or None
            with tqdm(total=total, unit="B", unit_scale=True, desc=target.name, leave=False) as bar:
                while chunk := response.read(1 << 20):
                    out.write(chunk)
                    bar.update(len(chunk))
    except OSError as exc:
        raise MissingDataError(f"cannot download {url} ({exc}). Fix: check the connection, or download the file "
                               f"yourself and point --data-dir / TKG_INDT_DATA at its folder") from None
    return target


def to_names_file(frame, target: Path) -> bytes:
    """Write a (head, relation, tail, time) string frame as our tab-separated names format."""
    text = (frame["head"] + "\t" + frame["relation"] + "\t" + frame["tail"] + "\t" + frame["time"]).str.cat(sep="\n")
    data = (text + "\n").encode("utf-8")
    target.write_bytes(data)
    return data


def download_source(spec) -> dict[str, Path]:
    """Fetch, convert, verify and cache one source; returns its split files."""
    final = home() / "sources" / spec.name
    checks = {}
    with atomic_dir(final) as tmp:
        raw = tmp / "raw"
        raw.mkdir()
        emap = rmap = None
        if spec.url_ids:
            for name, url in spec.map_urls.items():
                fetch(url, raw / name)
            emap, rmap = read_id_map(raw / "entity2id.txt"), read_id_map(raw / "relation2id.txt")
        for split in SPLITS:
            path = fetch(spec.urls[split], raw / f"{split}.txt")
            frame = read_quads(path, emap, rmap, data=read_bytes(path))
            check_times(path, frame, spec.encoding())
            expected = spec.counts[split]
            if len(frame) != expected:
                raise DataFormatError(spec.urls[split], f"has {len(frame):,} facts, expected {expected:,}",
                                      "the public copy changed; download it yourself and use --data-dir")
            data = to_names_file(frame, tmp / f"{split}.txt")
            md5 = hashlib.md5(data).hexdigest()
            ref = spec.md5.get(split)
            checks[split] = {"url": spec.urls[split], "lines": len(frame), "md5": md5,
                             "check": "md5" if md5 == ref else "line count",
                             "note": "" if md5 == ref else ("no reference md5 known" if ref is None else
                                                            "line count matches; bytes differ from the reference copy")}
        shutil.rmtree(raw)
        (tmp / "VERIFIED.json").write_text(json.dumps(checks, indent=1))
    return {s: final / f"{s}.txt" for s in SPLITS}
