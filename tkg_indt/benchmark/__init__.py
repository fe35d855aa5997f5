"""Fully-inductive TKG benchmarks (GDELTIndT, WIKIIndT): build, load, check, tabulate.

>>> from tkg_indt.benchmark import build_suite, load_variant
>>> build_suite("WIKIIndT", data_dir="../shared/data")                     # doctest: +SKIP
>>> tkg = load_variant("WIKIIndT/p100-inter")                              # doctest: +SKIP

A variant folder holds ``train.txt valid.txt msg.txt test.txt`` (tab-separated names and raw times,
the source's format) and ``metadata.json``; see :mod:`tkg_indt.benchmark.build` for the procedure.
"""
from .build import SPLITS, Variant, build_suite, build_variant, make_variant, variant_dir, write_variant
from .check import check_variant
from .load import load_variant, load_variants
from .recipe import BuildParams, Recipe, get_recipe, recipes, variant_name

__all__ = ["build_variant", "build_suite", "variant_dir", "load_variant", "load_variants", "check_variant", "make_variant",
           "write_variant", "get_recipe", "recipes", "variant_name", "BuildParams", "Recipe", "Variant", "SPLITS"]
