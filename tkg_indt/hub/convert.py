"""Converters to the formats of neighbouring libraries.

TGB 2.0 (``py-tgb``) temporal KG edge list: a CSV with header ``timestamp,head,tail,relation_type``,
integer ids, one row per ORIGINAL quadruple, rows in chronological order. TGB adds the inverse
quadruples itself when it loads a dataset (``(tail, relation + num_rels, head)``), so the CSV holds
no inverses; neither does ours. TGB derives its own train/val/test split from one edge list by time;
our variants are not chronological splits of one stream, so :func:`to_tgb` writes one edge list per
split (and the id maps) and the user feeds them to TGB-style code split by split.

PyTorch Geometric: :func:`to_temporal_data` gives the ``TemporalData`` container TGB's PyG loader
returns (``src``, ``dst``, ``t``, ``msg``, ``edge_type``), inverse quadruples included by default as
``edge_type = relation + R`` with ``R = tkg.num_relations`` (the toolkit's convention, and TGB's).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..data.tkg import HEAD, REL, TAIL, TIME, TKG
from ..errors import UnknownNameError
from ..paths import atomic_file

TGB_COLUMNS = ("timestamp", "head", "tail", "relation_type")


def _facts(tkg: TKG, splits) -> np.ndarray:
    names = [splits] if isinstance(splits, str) else list(splits or tkg.splits)
    unknown = [s for s in names if s not in tkg.splits]
    if unknown:
        raise UnknownNameError("split", unknown[0], tkg.splits)
    return tkg.facts(*names)


def chronological(facts: np.ndarray) -> np.ndarray:
    """Facts stably sorted by time (ties keep their order)."""
    return facts[np.argsort(facts[:, TIME], kind="stable")]


def to_tgb_csv(tkg: TKG, path, splits=None) -> Path:
    """Write the facts of ``splits`` (default all, in order) as a TGB temporal KG edge list.

    Columns ``timestamp,head,tail,relation_type`` (header, integer ids of ``tkg``, time = the TKG's time
    index); sorted by time, stable; no inverse rows (TGB adds them at load). Written atomically.
    """
    f = chronological(_facts(tkg, splits))
    frame = pd.DataFrame({"timestamp": f[:, TIME], "head": f[:, HEAD], "tail": f[:, TAIL], "relation_type": f[:, REL]})
    path = Path(path)
    with atomic_file(path, newline="") as handle:
        frame.to_csv(handle, index=False, lineterminator="\n")
    return path


def read_tgb_csv(path) -> np.ndarray:
    """A TGB edge list -> ``(n, 4)`` int64 rows ``(head, relation, tail, time)`` (for round trips)."""
    frame = pd.read_csv(path, dtype=np.int64)
    if tuple(frame.columns) != TGB_COLUMNS:
        raise ValueError(f"{path}: header {tuple(frame.columns)} is not {TGB_COLUMNS}")
    return frame[["head", "relation_type", "tail", "timestamp"]].to_numpy(np.int64)


def to_tgb(tkg: TKG, folder, splits=None, prefix: str = "") -> dict[str, Path]:
    """One TGB edge list per split (``<prefix><split>_edgelist.csv``) plus ``<prefix>entity2id.csv`` and
    ``<prefix>relation2id.csv`` (``id,name``), so the integer ids can be read back as names."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    names = [splits] if isinstance(splits, str) else list(splits or tkg.splits)
    out = {s: to_tgb_csv(tkg, folder / f"{prefix}{s}_edgelist.csv", s) for s in names}
    for key, vocab in (("entity2id", tkg.entities), ("relation2id", tkg.relations)):
        path = folder / f"{prefix}{key}.csv"
        with atomic_file(path, newline="") as handle:
            pd.DataFrame({"id": np.arange(len(vocab)), "name": vocab.astype(str)}).to_csv(
                handle, index=False, lineterminator="\n")
        out[key] = path
    return out


def to_temporal_data(tkg: TKG, splits=None, inverses: bool = True, msg: bool = True):
    """The facts of ``splits`` as a ``torch_geometric.data.TemporalData``, sorted by time (stable).

    src, dst: entity ids; t: time index; edge_type: relation id, ``r + R`` for the inverse quadruple
    ``(tail, r + R, head)`` when ``inverses`` (each inverse follows the originals of its timestamp);
    msg: a ``(E, 1)`` float32 zero column (TGB's edge features for KGs without features; memory-based
    models such as TGN need one), left out with ``msg=False``. All tensors have one row per event.
    """
    import torch
    from torch_geometric.data import TemporalData

    f = _facts(tkg, splits)
    if inverses:
        inv = f[:, [TAIL, REL, HEAD, TIME]].copy()
        inv[:, 1] += tkg.num_relations
        f = np.concatenate([f, inv])
    f = chronological(f)
    fields = dict(src=torch.from_numpy(f[:, HEAD].copy()), dst=torch.from_numpy(f[:, TAIL].copy()),
                  t=torch.from_numpy(f[:, TIME].copy()), edge_type=torch.from_numpy(f[:, REL].copy()))
    if msg:
        fields["msg"] = torch.zeros((len(f), 1), dtype=torch.float32)
    return TemporalData(**fields)
