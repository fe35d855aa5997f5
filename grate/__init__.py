"""GRATE: gated rotary attention for temporal knowledge graph foundation models (ULTRA, TRIX)."""
__version__ = "0.1.0"
