"""Hugging Face Hub: export the suites as parquet datasets with a dataset card, publish them, load
them back as :class:`~tkg_indt.data.tkg.TKG` objects, and convert to neighbouring formats (TGB, PyG).

``export_suite`` -> folder with ``README.md`` + ``<variant>/<split>.parquet``; ``publish_suite`` ->
``grate/<SUITE>`` on the Hub; ``load_benchmark(suite, variant)`` -> TKG from the build cache, an
exported folder or the Hub; ``to_tgb_csv`` / ``to_tgb`` / ``to_temporal_data`` in :mod:`.convert`.
"""
from .convert import to_temporal_data, to_tgb, to_tgb_csv
from .export import export_suite, read_built_variant
from .load import load_benchmark, load_exported
from .publish import publish_suite
from .suites import DEFAULT_VARIANT, HUB_SPLITS, SUITES, VARIANTS, get_suite

__all__ = ["export_suite", "publish_suite", "load_benchmark", "load_exported", "read_built_variant",
           "to_tgb_csv", "to_tgb", "to_temporal_data", "SUITES", "VARIANTS", "DEFAULT_VARIANT", "HUB_SPLITS",
           "get_suite"]
