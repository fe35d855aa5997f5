"""Raw sources -> the compact :class:`TKG` representation."""
from .reader import read_quads
from .sources import SOURCES, available, get_spec, load_folder, load_source
from .timeenc import TimeEncoding
from .tkg import COLUMNS, TKG

__all__ = ["TKG", "TimeEncoding", "SOURCES", "COLUMNS", "load_source", "load_folder", "get_spec",
           "available", "read_quads"]
