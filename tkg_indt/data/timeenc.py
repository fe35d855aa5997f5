"""Integer time encoding: granularity units since the dataset's first timestamp, gaps kept.

GRATE feeds ``tau - t`` into a rotation, so this encoding is part of the model input. A raw time
column is first parsed to *absolute* units (days since 1970-01-01 for dates, raw integers divided by
their step otherwise); the index of a fact is ``absolute - first`` where ``first`` is the smallest
absolute time of the whole dataset. The encoding keeps what is needed to turn an index back into the
raw column (``raw``) and into a calendar label for a person (``label``).
"""
from __future__ import annotations

import dataclasses
from datetime import date, timedelta

import numpy as np
import pandas as pd

FORMATS = ("iso-date", "year-index", "hour-offset", "int")
_EPOCH = date(1970, 1, 1)


@dataclasses.dataclass(frozen=True)
class TimeEncoding:
    """How time indices relate to the raw column and to the calendar.

    format: ``iso-date`` (``2014-01-31``, daily), ``year-index`` (``t``, year = origin + t),
    ``hour-offset`` (``t`` in hours, a multiple of 24, day = origin + t/24) or ``int`` (plain units).
    origin: calendar meaning of raw value 0 (a year for ``year-index``, an ISO date for
    ``hour-offset``; unused for ``iso-date`` and ``int``). first: absolute units of index 0.
    """

    format: str
    first: int = 0
    origin: str | int | None = None

    def __post_init__(self):
        if self.format not in FORMATS:
            raise ValueError(f"unknown time format {self.format!r}; known: {', '.join(FORMATS)}")

    @property
    def granularity(self) -> str:
        return {"iso-date": "day", "hour-offset": "day", "year-index": "year", "int": "unit"}[self.format]

    @property
    def step(self) -> int:
        """Raw units per index step (24 for hour offsets, 1 otherwise)."""
        return 24 if self.format == "hour-offset" else 1

    # ----------------------------------------------------------------- parsing
    def parse(self, raw: pd.Series) -> tuple[np.ndarray, np.ndarray]:
        """Raw strings -> (absolute int64 units, mask of unparseable entries)."""
        if self.format == "iso-date":
            dates = pd.to_datetime(raw, format="%Y-%m-%d", errors="coerce")
            bad = dates.isna().to_numpy()
            days = (dates.to_numpy(dtype="datetime64[D]") - np.datetime64("1970-01-01", "D")).astype(np.int64)
            return np.where(bad, 0, days), bad
        values = pd.to_numeric(raw, errors="coerce")
        as_float = values.to_numpy(dtype=np.float64, na_value=np.nan)
        bad = ~np.isfinite(as_float) | (as_float != np.round(as_float))
        ints = np.where(bad, 0, as_float).astype(np.int64)
        bad |= ints % self.step != 0
        return ints // self.step, bad

    def with_first(self, first: int) -> "TimeEncoding":
        return dataclasses.replace(self, first=int(first))

    # ----------------------------------------------------------------- output
    def raw(self, index: np.ndarray) -> np.ndarray:
        """Time indices -> raw column strings (the source's own format)."""
        absolute = np.asarray(index, dtype=np.int64) + self.first
        if self.format == "iso-date":
            return np.datetime_as_string(absolute.astype("datetime64[D]"), unit="D")
        return (absolute * self.step).astype(str)

    def label(self, index) -> str | np.ndarray:
        """Time indices -> calendar labels (``2014-03-02``, ``1990``) for people and tables."""
        scalar = np.ndim(index) == 0
        absolute = np.atleast_1d(np.asarray(index, dtype=np.int64)) + self.first
        if self.format == "iso-date":
            out = np.datetime_as_string(absolute.astype("datetime64[D]"), unit="D")
        elif self.format == "hour-offset":
            base = np.datetime64(str(self.origin), "D")
            out = np.datetime_as_string(base + absolute.astype("timedelta64[D]"), unit="D")
        elif self.format == "year-index":
            out = (absolute + int(self.origin)).astype(str)
        else:
            out = absolute.astype(str)
        return out[0] if scalar else out

    def origin_label(self) -> str:
        return str(self.label(0))

    def span(self, index: np.ndarray) -> str:
        """Human description of the calendar span covered by some indices."""
        if len(index) == 0:
            return "empty"
        lo, hi = int(np.min(index)), int(np.max(index))
        units = {"day": "days", "year": "years", "unit": "units"}[self.granularity]
        return f"{self.label(lo)} .. {self.label(hi)} ({hi - lo + 1} {units})"

    def to_dict(self) -> dict:
        return {"format": self.format, "first": self.first, "origin": self.origin,
                "granularity": self.granularity, "index_0": self.origin_label()}

    @classmethod
    def from_dict(cls, d: dict) -> "TimeEncoding":
        return cls(format=d["format"], first=int(d.get("first", 0)), origin=d.get("origin"))


def date_to_days(value: str) -> int:
    """ISO date -> days since 1970-01-01."""
    return (date.fromisoformat(value) - _EPOCH).days


def days_to_date(days: int) -> str:
    return (_EPOCH + timedelta(days=int(days))).isoformat()
