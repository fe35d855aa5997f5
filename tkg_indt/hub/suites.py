"""The published suites, their variant (config) names, and where a built variant lives.

A suite is built from one source TKG into eight variants named ``p<100 p_tri>-<mode>``
(``p25-inter`` ... ``p100-extra``); on the Hub each variant is one config of the dataset
``grate/<suite>`` with splits ``train``, ``validation``, ``msg``, ``test``.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from ..errors import UnknownNameError
from ..paths import home

P_TRI = (25, 50, 75, 100)
MODES = ("inter", "extra")
VARIANTS = tuple(f"p{p}-{mode}" for mode in MODES for p in P_TRI)
DEFAULT_VARIANT = "p100-inter"
ORGANISATION = "grate"

# TKG split name -> Hub split name (``datasets`` knows ``validation``; ``msg`` is declared in the YAML)
HUB_SPLITS = {"train": "train", "valid": "validation", "msg": "msg", "test": "test"}


@dataclasses.dataclass(frozen=True)
class SuiteSpec:
    """What the export needs to know about one suite besides its built files."""

    name: str
    source: str  # registered source name (tkg_indt.data.sources.SOURCES)
    description: str
    licence: str  # Hub licence id
    licence_name: str | None  # for licence "other"
    licence_link: str | None
    licence_text: str  # card paragraph on the terms of the source
    citations: tuple[str, ...]  # keys of tkg_indt.hub.card.BIBTEX, source data first

    @property
    def repo_id(self) -> str:
        return f"{ORGANISATION}/{self.name}"


SUITES: dict[str, SuiteSpec] = {s.name: s for s in [
    SuiteSpec(
        "WIKIIndT", "WIKI",
        "Wikidata facts with yearly validity (1786-2017), the RE-Net version of WIKI",
        "cc0-1.0", None, None,
        "The facts come from Wikidata, whose structured data is released under CC0 1.0 "
        "(public domain dedication); the yearly quadruples are the WIKI dataset of Jin et al. (2020), "
        "derived from the Wikidata12k facts of Leblay & Chekol (2018) and Dasgupta et al. (2018). "
        "WIKIIndT is released under CC0 1.0 as well.",
        ("vrandecic2014wikidata", "leblay2018deriving", "dasgupta2018hyte", "jin2020recurrent"),
    ),
    SuiteSpec(
        "GDELTIndT", "GDELT",
        "GDELT political events with daily timestamps (2015-04-01 .. 2016-03-31), the DE-SimplE version of GDELT",
        "other", "gdelt-terms-of-use", "https://www.gdeltproject.org/about.html#termsofuse",
        "The events come from the GDELT Project, whose data is available for unrestricted use, "
        "including commercial use, provided that it is cited and linked (gdeltproject.org terms of use); "
        "the subset is the GDELT dataset of Trivedi et al. (2017) as split by Goel et al. (2020). "
        "GDELTIndT keeps these terms: cite the GDELT Project (Leetaru & Schrodt, 2013) when you use it.",
        ("leetaru2013gdelt", "trivedi2017know", "goel2020diachronic"),
    ),
]}


def get_suite(name: str) -> SuiteSpec:
    """The suite named ``name`` (case-insensitive), else :class:`UnknownNameError` listing the known ones."""
    for key, spec in SUITES.items():
        if key.lower() == str(name).lower():
            return spec
    raise UnknownNameError("suite", str(name), SUITES)


def check_variant(name: str) -> str:
    """``name`` if it is a variant name (``p25-inter`` ... ``p100-extra``), else :class:`UnknownNameError`."""
    if name not in VARIANTS:
        raise UnknownNameError("variant", str(name), VARIANTS)
    return name


def variant_params(name: str) -> tuple[float, str]:
    """``p50-extra`` -> ``(0.5, "extra")``."""
    check_variant(name)
    share, mode = name.split("-")
    return int(share[1:]) / 100, mode


def built_variant_dir(suite: str, variant: str, root=None) -> Path:
    """Where the benchmark builder writes a variant: ``<root>/<variant>``, root defaulting to
    ``$TKG_INDT_HOME/benchmarks/<SUITE>`` (:func:`tkg_indt.benchmark.variant_dir`)."""
    from ..benchmark import variant_dir

    return variant_dir(get_suite(suite).name, check_variant(variant), root=root)


def export_dir(suite: str) -> Path:
    """Default folder of an exported suite: ``$TKG_INDT_HOME/hub/<SUITE>``."""
    return home() / "hub" / get_suite(suite).name
