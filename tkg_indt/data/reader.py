"""A strict, fast reader for quadruple files, ours and users'.

Accepted: UTF-8, tab-separated, 4 columns ``head relation tail time`` or 5 (the 5th, a padding column
of RE-Net style files, is ignored), LF or CRLF line ends, plain or gzip (detected from the content).
Names or integer ids: with ``ids=True`` every entity/relation column is an id looked up in
``entity2id.txt`` / ``relation2id.txt`` maps. Fields are never stripped (some ICEWS names end with a
non-breaking space). Every problem raises :class:`~tkg_indt.errors.DataFormatError` naming the file,
the line and the fix.
"""
from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv

from ..errors import DataFormatError

MAX_COLUMNS = 8


def read_bytes(path: Path) -> bytes:
    """The file's bytes, gunzipped if needed (detected from the content, not the name)."""
    path = Path(path)
    if not path.exists():
        raise DataFormatError(path, "file not found", "check the path, or pass --data-dir pointing at the folder that holds it")
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError, zlib.error) as exc:
            raise DataFormatError(path, f"corrupt gzip data ({exc})",
                                  "download or copy the file again (gunzip -t tests it)") from None
    return raw


def read_table(path: str | Path, columns: int | tuple[int, ...] = (4, 5), data: bytes | None = None) -> pd.DataFrame:
    """Read a tab-separated file into a DataFrame of strings with columns ``0..k-1``.

    ``columns`` lists the accepted column counts; the first line decides, and every other line must
    have the same count. Empty files and empty lines are errors.
    """
    path = Path(path)
    data = read_bytes(path) if data is None else data
    if not data.strip(b"\r\n"):
        raise DataFormatError(path, "the file is empty", "a split needs at least one fact; regenerate or re-download it")
    accepted = (columns,) if isinstance(columns, int) else tuple(columns)
    first = data.split(b"\n", 1)[0].rstrip(b"\r")
    width = first.count(b"\t") + 1
    if width not in accepted:
        raise DataFormatError(path, f"expected {' or '.join(map(str, accepted))} tab-separated columns, found {width}",
                              "write one fact per line as head<TAB>relation<TAB>tail<TAB>time", line=1)
    bad_rows: list = []

    def on_invalid(row):
        bad_rows.append(row)
        return "skip"

    names = [str(i) for i in range(width)]
    try:
        table = pacsv.read_csv(
            pa.BufferReader(data),
            read_options=pacsv.ReadOptions(column_names=names, use_threads=False, block_size=1 << 26),
            parse_options=pacsv.ParseOptions(delimiter="\t", quote_char=False, escape_char=False,
                                             ignore_empty_lines=False, invalid_row_handler=on_invalid),
            convert_options=pacsv.ConvertOptions(column_types={n: pa.string() for n in names},
                                                 strings_can_be_null=False, quoted_strings_can_be_null=False),
        )
    except (pa.ArrowInvalid, UnicodeDecodeError) as exc:
        raise DataFormatError(path, f"cannot be parsed as UTF-8 tab-separated text ({exc})",
                              "convert the file to UTF-8 with one tab-separated fact per line") from None
    if bad_rows:
        row = bad_rows[0]
        raise DataFormatError(path, f"expected {width} tab-separated columns like line 1, found {row.actual_columns}"
                              f" ({len(bad_rows)} such line(s))",
                              "give every line the same columns head<TAB>relation<TAB>tail<TAB>time", line=row.number)
    frame = table.to_pandas(types_mapper=None)
    frame.columns = list(range(width))
    empty = (frame == "").all(axis=1)
    if empty.any():
        raise DataFormatError(path, "empty line", "remove empty lines", line=int(np.flatnonzero(empty.to_numpy())[0]) + 1)
    return frame


def read_id_map(path: str | Path) -> dict[str, str]:
    """``entity2id.txt``-style map (``name<TAB>id[<TAB>...]``) -> {id string: name}."""
    frame = read_table(path, columns=(2, 3, 4))
    ids = frame[1]
    dup = ids.duplicated()
    if dup.any():
        line = int(np.flatnonzero(dup.to_numpy())[0]) + 1
        raise DataFormatError(path, f"id {ids[line - 1]!r} is listed twice", "give every name its own id", line=line)
    return dict(zip(ids.tolist(), frame[0].tolist()))


def read_quads(path: str | Path, entity_map: dict[str, str] | None = None,
               relation_map: dict[str, str] | None = None, data: bytes | None = None) -> pd.DataFrame:
    """Read one split into a DataFrame with string columns head, relation, tail, time.

    With maps, the head/relation/tail columns are ids translated to names; an id missing from its
    map is an error naming the line and the map file.
    """
    path = Path(path)
    frame = read_table(path, data=data)
    out = pd.DataFrame({"head": frame[0], "relation": frame[1], "tail": frame[2], "time": frame[3]})
    for cols, mapping, which in ((("head", "tail"), entity_map, "entity2id.txt"), (("relation",), relation_map, "relation2id.txt")):
        if mapping is None:
            continue
        for col in cols:
            mapped = out[col].map(mapping)
            missing = mapped.isna().to_numpy()
            if missing.any():
                i = int(np.flatnonzero(missing)[0])
                raise DataFormatError(path, f"{col} id {out[col].iloc[i]!r} is not in {which}",
                                      f"add it to {which} or fix the id", line=i + 1)
            out[col] = mapped
    return out


def check_times(path: Path, frame: pd.DataFrame, encoding) -> np.ndarray:
    """Parse the time column to absolute units; unparseable values raise with their line."""
    absolute, bad = encoding.parse(frame["time"])
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        hint = {"iso-date": "write dates as YYYY-MM-DD", "hour-offset": "write hours as multiples of 24",
                }.get(encoding.format, "write times as integers")
        raise DataFormatError(path, f"cannot parse time {frame['time'].iloc[i]!r} as {encoding.format}",
                              hint, line=i + 1)
    return absolute
