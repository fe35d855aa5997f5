"""The per-variant statistics table of a suite (paper tables ``gdelt_sweep`` / ``wiki_sweep``).

Rows come from each variant's ``metadata.json``; a column that needs the facts can load them
(:meth:`Row.tkg`, cached). To add columns (e.g. Rec / DRec of the test split), append
:class:`Column` objects to :data:`EXTRA_COLUMNS` (or pass ``columns=``); they are printed after
the standard ones. A value of ``None`` prints as ``-``.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Callable

from .build import SPLITS, variant_dir
from .load import read_metadata
from .recipe import get_recipe, variant_name


@dataclasses.dataclass
class Row:
    """One variant of a suite: where it is and, when built, its metadata."""

    suite: str
    variant: str
    p_tri: float
    mode: str
    folder: Path
    meta: dict | None
    _tkg: object = None

    @property
    def built(self) -> bool:
        return self.meta is not None

    def tkg(self):
        """The variant as a TKG (loaded once)."""
        if self._tkg is None:
            from .load import load_variant

            self._tkg = load_variant(self.folder)
        return self._tkg


@dataclasses.dataclass(frozen=True)
class Column:
    header: str  # markdown header
    latex: str  # LaTeX header
    value: Callable[[Row], object]  # called only for built variants
    fmt: Callable[[object], str] = str
    align: str = "r"


def _thousands(x) -> str:
    return f"{x / 1000:.1f}"


def _split(name: str) -> Callable[[Row], int]:
    return lambda row: row.meta["splits"][name]["quads"]


COLUMNS: list[Column] = [
    Column("Variant", "Variant", lambda r: r.variant.removeprefix("p"), align="l"),
    Column("p_tri", "$p_{\\mathrm{tri}}$", lambda r: r.p_tri, lambda x: f"{x:.2f}", "c"),
    Column("mode", "mode", lambda r: r.mode, align="c"),
    Column("V_tr", "$|V_{\\mathrm{tr}}|$", lambda r: r.meta["V_tr"], lambda x: f"{x:,}"),
    Column("V_inf", "$|V_{\\mathrm{inf}}|$", lambda r: r.meta["V_inf"], lambda x: f"{x:,}"),
    *(Column(s, s, _split(s), _thousands) for s in SPLITS),
]


def _recurrency(key: str) -> Callable[[Row], float]:
    """Rec / DRec of the test split (history msg ∪ test), from the metadata or computed from the files."""
    def value(row: Row) -> float:
        stats = row.meta.get("recurrency")
        if stats is None:
            from ..recurrency_stats import tkg_recurrency

            stats = tkg_recurrency(row.tkg(), "test")
        return stats[key]
    return value


EXTRA_COLUMNS: list[Column] = [  # more columns go here
    Column("Rec", "Rec", _recurrency("rec"), lambda x: f"{100 * x:.1f}"),
    Column("DRec", "DRec", _recurrency("drec"), lambda x: f"{100 * x:.1f}"),
]


def suite_rows(suite: str, root: str | Path | None = None) -> list[Row]:
    """Rows of every variant of the recipe ``suite``; folders under ``root`` (default: the cache)."""
    rec = get_recipe(suite)
    rows = []
    for p_tri, mode in rec.variants:
        name = variant_name(p_tri, mode)
        folder = variant_dir(rec.suite, name, root)
        meta = read_metadata(folder) if all((folder / f"{s}.txt").exists() for s in SPLITS) else None
        rows.append(Row(rec.suite, name, p_tri, mode, folder, meta))
    return rows


def format_table(rows: list[Row], columns: list[Column] | None = None, latex: bool = False,
                 caption: str | None = None) -> str:
    """Markdown (default) or a LaTeX ``tabular`` of the rows; unbuilt variants show ``-``."""
    columns = list(columns) if columns is not None else [*COLUMNS, *EXTRA_COLUMNS]
    cells = []
    for row in rows:
        line = []
        for i, col in enumerate(columns):
            if row.built or i < 3:
                value = col.value(row)
                line.append("-" if value is None else col.fmt(value))
            else:
                line.append("-")
        cells.append(line)
    if not latex:
        out = ["| " + " | ".join(c.header for c in columns) + " |",
               "|" + "|".join("---" if c.align == "l" else "---:" if c.align == "r" else ":---:" for c in columns) + "|"]
        out += ["| " + " | ".join(line) + " |" for line in cells]
        return "\n".join(out)
    out = ["\\begin{tabular}{" + "".join(c.align for c in columns) + "}", "\\toprule",
           " & ".join(c.latex for c in columns) + " \\\\", "\\midrule"]
    out += [" & ".join(x.replace(",", "{,}").replace("_", "\\_") for x in line) + " \\\\" for line in cells]
    out += ["\\bottomrule", "\\end{tabular}"]
    if caption:
        out = ["\\begin{table*}[t]", "\\centering", *out, f"\\caption{{{caption}}}", "\\end{table*}"]
    return "\n".join(out)


def suite_table(suite: str, root: str | Path | None = None, latex: bool = False,
                columns: list[Column] | None = None) -> tuple[str, list[str]]:
    """The table of a suite and the names of the variants not built yet."""
    rows = suite_rows(suite, root)
    caption = None
    if latex and rows and rows[0].built:
        p = rows[0].meta["params"]
        caption = f"{rows[0].suite} benchmark suite ($p_R = {p['p_r']}$, $p_T = {p['p_t']}$). Edge counts in thousands."
    return format_table(rows, columns, latex, caption), [r.variant for r in rows if not r.built]


def print_suite_table(suite: str, latex: bool = False, build_missing: bool = False, data_dir=None,
                      root: str | Path | None = None) -> list[str]:
    """``tkg-indt stats --benchmark SUITE``: print the table; unbuilt variants are built with
    ``build_missing``, otherwise shown as ``-`` with the command that builds them. Returns what is missing."""
    import click

    if build_missing:
        from .build import build_suite

        build_suite(suite, root=root, data_dir=data_dir)
    text, missing = suite_table(suite, root, latex)
    click.echo(text)
    if missing:
        name = get_recipe(suite).suite
        click.echo(f"not built: {', '.join(missing)}. Build them with `tkg-indt build --suite {name}` "
                   f"(or `tkg-indt stats --benchmark {name} --build`)", err=True)
    return missing
