"""Re-verify the invariants of an inductive variant folder (``tkg-indt check DIR``).

Needs only the four split files. With ``metadata.json`` it also checks the recorded relation and time
partitions, the X/Y merge sizes, the recorded counts and file hashes; with the source available
(``data_dir``) that every fact is a source fact and that a rebuild with the recorded parameters gives
exactly the same splits (so the inference facts are exactly the X ∪ Y subsample of step 6).

Invariants (``docs/benchmark.md``): train ∩ valid = ∅ and msg ∩ test = ∅ as quadruples;
V_tr ∩ V_inf = ∅; valid uses only training entities and relations; every test entity and relation
occurs in msg; extra mode: max time(msg) <= min time(test); p_tri = 1: relations and timestamps of
the training and inference graphs are disjoint and every inference time is later than every
training time; an inference fact of a relation unseen in training is later than every training fact.
"""
from __future__ import annotations

import dataclasses
import hashlib
import re
from pathlib import Path

import numpy as np
import pandas as pd

from ..data.tkg import HEAD, REL, TAIL, TIME, TKG
from ..errors import TKGError
from . import graph
from .load import SPLITS, read_metadata, read_splits

_NAME = re.compile(r"p(?P<pct>[0-9.]+)-(?P<mode>inter|extra)$")


@dataclasses.dataclass
class CheckReport:
    folder: Path
    violations: list
    notes: list

    @property
    def ok(self) -> bool:
        return not self.violations

    def __str__(self) -> str:
        head = f"{self.folder}: " + ("OK" if self.ok else f"{len(self.violations)} violation(s)")
        return "\n".join([head, *(f"  VIOLATION: {v}" for v in self.violations), *(f"  note: {n}" for n in self.notes)])


def _keys(facts: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """One int64 per quadruple (mixed radix over entity, relation, entity, time sizes)."""
    if float(sizes[0]) ** 2 * float(sizes[1]) * float(sizes[2]) >= 2.0 ** 63:
        raise ValueError("graph too large for int64 quadruple keys")
    return ((facts[:, HEAD] * sizes[1] + facts[:, REL]) * sizes[0] + facts[:, TAIL]) * sizes[2] + facts[:, TIME]


def _fact_str(tkg: TKG, f) -> str:
    return f"{tkg.entities[f[HEAD]]}\t{tkg.relations[f[REL]]}\t{tkg.entities[f[TAIL]]}\t{tkg.time.raw(np.array([f[TIME]]))[0]}"


def _overlap(tkg: TKG, a: str, b: str, out: list) -> None:
    fa, fb = tkg[a], tkg[b]
    sizes = np.array([tkg.num_entities, tkg.num_relations, int(tkg.facts()[:, TIME].max()) + 1], dtype=np.int64)
    common = graph.member(_keys(fa, sizes), _keys(fb, sizes))
    if common.any():
        out.append(f"{a} ∩ {b} is not empty: {int(common.sum())} quadruple(s) in both, e.g. "
                   f"{_fact_str(tkg, fa[np.flatnonzero(common)[0]])!r}")


def _uncovered(tkg: TKG, split: str, by: str, out: list, what: str) -> None:
    f, g = tkg[split], tkg[by]
    ents = graph.entities_of(f)
    ents = ents[~graph.member(ents, graph.entities_of(g))]
    rels = graph.sorted_unique(f[:, REL])
    rels = rels[~graph.member(rels, g[:, REL])]
    if len(ents):
        out.append(f"{len(ents)} entit(y/ies) of {split} never occur in {what}, e.g. {tkg.entities[ents[0]]!r}")
    if len(rels):
        out.append(f"{len(rels)} relation(s) of {split} never occur in {what}, e.g. {tkg.relations[rels[0]]!r}")


def check_variant(folder, data_dir=None, source: TKG | None = None, rebuild: bool | None = None) -> CheckReport:
    """Check every invariant on a variant folder; returns a :class:`CheckReport` (``.ok``, ``.violations``).

    ``source``/``data_dir``: the source TKG (or where to find it) for the source checks; ``rebuild``:
    None = rebuild when the source and metadata are available, False = never, True = required.
    """
    folder = Path(folder)
    v: list[str] = []
    notes: list[str] = []
    report = CheckReport(folder, v, notes)
    missing = [f"{s}.txt" for s in SPLITS if not any((folder / f"{s}.txt{z}").exists() for z in ("", ".gz"))]
    if missing:
        v.append(f"missing split file(s): {', '.join(missing)}")
        return report
    try:
        meta = read_metadata(folder)
        tkg = read_splits(folder, meta)
    except TKGError as exc:
        v.append(f"cannot read the variant: {exc}")
        return report
    if meta is None:
        notes.append("no metadata.json: only the structural invariants were checked")
    for s in SPLITS:
        if len(tkg[s]) == 0:
            v.append(f"{s}.txt is empty")
    if v:
        return report
    sizes = np.array([tkg.num_entities, tkg.num_relations, int(tkg.facts()[:, TIME].max()) + 1], dtype=np.int64)
    for s in SPLITS:
        dup = len(tkg[s]) - len(graph.sorted_unique(_keys(tkg[s], sizes)))
        if dup:
            notes.append(f"{s}.txt repeats {dup} quadruple(s)")

    # disjointness of splits and of the two graphs
    _overlap(tkg, "train", "valid", v)
    _overlap(tkg, "msg", "test", v)
    tr, inf = tkg.facts("train", "valid"), tkg.facts("msg", "test")
    shared = graph.entities_of(tr)
    shared = shared[graph.member(shared, graph.entities_of(inf))]
    if len(shared):
        v.append(f"V_tr ∩ V_inf is not empty: {len(shared)} entit(y/ies) in both graphs, e.g. {tkg.entities[shared[0]]!r}")
    _uncovered(tkg, "valid", "train", v, "train (valid must stay inside the training graph)")
    _uncovered(tkg, "test", "msg", v, "msg")

    # time and relation structure
    mode, p_tri = (meta or {}).get("mode"), (meta or {}).get("p_tri")
    match = _NAME.search(folder.name)
    if mode is None and match:
        mode, p_tri = match["mode"], float(match["pct"]) / 100
        notes.append(f"mode {mode} and p_tri {p_tri} taken from the folder name")
    if mode == "extra":
        hi, lo = int(tkg["msg"][:, TIME].max()), int(tkg["test"][:, TIME].min())
        if hi > lo:
            v.append(f"extra mode: max time(msg) = {tkg.time.label(hi)} is later than min time(test) = {tkg.time.label(lo)}")
    elif mode is None:
        notes.append("mode unknown (no metadata, folder not named p<NN>-inter/extra): chronological cut not checked")
    tr_rel = graph.sorted_unique(tr[:, REL])
    last_tr_time = int(tr[:, TIME].max())
    if p_tri is not None and float(p_tri) >= 1.0:
        rel_both = tr_rel[graph.member(tr_rel, inf[:, REL])]
        if len(rel_both):
            v.append(f"p_tri = 1 but R_tr ∩ R_inf is not empty: {len(rel_both)} relation(s), e.g. {tkg.relations[rel_both[0]]!r}")
        time_both = graph.sorted_unique(tr[:, TIME])
        time_both = time_both[graph.member(time_both, inf[:, TIME])]
        if len(time_both):
            v.append(f"p_tri = 1 but T_tr ∩ T_inf is not empty: {len(time_both)} timestamp(s), e.g. {tkg.time.label(int(time_both[0]))}")
        if int(inf[:, TIME].min()) <= last_tr_time:
            v.append("p_tri = 1 but some inference timestamp is not later than every training timestamp")

    if meta is not None:
        _check_meta(tkg, meta, folder, v)
        _check_source(tkg, meta, data_dir, source, rebuild, v, notes)
    return report


def _check_meta(tkg: TKG, meta: dict, folder: Path, v: list) -> None:
    """Recorded partitions, merge sizes, counts and file hashes against the files."""
    from .build import merge_sizes

    try:
        r_tr = set(meta["relations"]["train"])
        r_inf = set(meta["relations"]["inference"])
        tr_last = int(meta["timestamps"]["train"]["last_index"])
        inf_first = int(meta["timestamps"]["inference"]["first_index"])
        samp, cov = meta["sampling"], meta["coverage"]
        p_tri = float(meta["p_tri"])
    except (KeyError, TypeError, ValueError) as exc:
        v.append(f"metadata.json lacks {exc} (rebuild the variant)")
        return
    if r_tr & r_inf:
        v.append(f"metadata: R_tr and R_inf overlap ({sorted(r_tr & r_inf)[:3]})")
    names = tkg.relations.astype(str)
    in_tr = pd.Index(sorted(r_tr)).get_indexer(names) >= 0
    in_inf = pd.Index(sorted(r_inf)).get_indexer(names) >= 0
    for split in ("train", "valid"):
        f = tkg[split]
        bad = ~in_tr[f[:, REL]] | (f[:, TIME] > tr_last)
        if bad.any():
            v.append(f"{split}.txt has {int(bad.sum())} fact(s) outside R_tr x T_tr, e.g. {_fact_str(tkg, f[np.flatnonzero(bad)[0]])!r}")
    n_x = n_y = 0
    for split in ("msg", "test"):
        f = tkg[split]
        x = in_tr[f[:, REL]] & (f[:, TIME] <= tr_last)
        y = in_inf[f[:, REL]] & (f[:, TIME] >= inf_first)
        bad = ~(x | y)
        if bad.any():
            v.append(f"{split}.txt has {int(bad.sum())} fact(s) in neither X (R_tr, T_tr) nor Y (R_inf, T_inf), "
                     f"e.g. {_fact_str(tkg, f[np.flatnonzero(bad)[0]])!r}")
        n_x, n_y = n_x + int(x.sum()), n_y + int(y.sum())
    want_x, want_y = merge_sizes(int(samp["pool_x"]), int(samp["pool_y"]), p_tri)
    if (want_x, want_y) != (int(samp["taken_x"]), int(samp["taken_y"])):
        v.append(f"metadata: taken X/Y = {samp['taken_x']}/{samp['taken_y']} is not the merge of pools "
                 f"{samp['pool_x']}/{samp['pool_y']} at p_tri={p_tri} ({want_x}/{want_y})")
    dropped_y = int(cov.get("test_dropped_y", 0)) + int(samp.get("gcc_dropped_y", 0))
    dropped_x = int(cov.get("test_dropped", 0)) - int(cov.get("test_dropped_y", 0)) + int(samp.get("gcc_dropped_x", 0))
    if n_x + dropped_x != int(samp["taken_x"]) or n_y + dropped_y != int(samp["taken_y"]):
        v.append(f"inference graph has {n_x} X and {n_y} Y facts (+ {dropped_x}/{dropped_y} dropped), "
                 f"metadata says {samp['taken_x']}/{samp['taken_y']} were sampled")
    counts = meta.get("splits", {})
    for split in SPLITS:
        if counts.get(split, {}).get("quads") != len(tkg[split]):
            v.append(f"{split}.txt has {len(tkg[split])} facts, metadata.json says {counts.get(split, {}).get('quads')}")
    for key, facts in (("V_tr", tkg.facts("train", "valid")), ("V_inf", tkg.facts("msg", "test"))):
        if meta.get(key) != len(graph.entities_of(facts)):
            v.append(f"{key} = {len(graph.entities_of(facts))} in the files, metadata.json says {meta.get(key)}")
    for name, digest in meta.get("files", {}).items():
        path = folder / name
        if path.exists() and hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            v.append(f"{name} differs from the file that was built (sha256 mismatch with metadata.json)")


def _check_source(tkg: TKG, meta: dict, data_dir, source: TKG | None, rebuild: bool | None, v: list, notes: list) -> None:
    """Facts against the source; optionally an exact rebuild with the recorded parameters."""
    from ..data.sources import load_source

    if rebuild is False and source is None and data_dir is None:
        return
    src_name = meta.get("source", {}).get("name")
    if source is None:
        try:
            source = load_source(src_name, data_dir=data_dir)
        except TKGError as exc:
            (v if rebuild else notes).append(f"source checks skipped: {exc}")
            return
    if meta["source"].get("checksum") and source.meta.get("checksum") != meta["source"]["checksum"]:
        v.append(f"the source {src_name} found has checksum {source.meta.get('checksum')}, the variant was built "
                 f"from {meta['source']['checksum']}")
        return
    ent = pd.Index(source.entities).get_indexer(tkg.entities)
    rel = pd.Index(source.relations).get_indexer(tkg.relations)
    if (ent < 0).any() or (rel < 0).any():
        v.append("some entity or relation name is not in the source")
        return
    sizes = np.array([source.num_entities, source.num_relations,
                      max(int(source.facts()[:, TIME].max()), int(tkg.facts()[:, TIME].max())) + 1], dtype=np.int64)
    as_source = {s: np.stack([ent[tkg[s][:, HEAD]], rel[tkg[s][:, REL]], ent[tkg[s][:, TAIL]], tkg[s][:, TIME]], 1) for s in SPLITS}
    known = _keys(source.facts(), sizes)
    for s, f in as_source.items():
        bad = ~graph.member(_keys(f, sizes), known)
        if bad.any():
            v.append(f"{s}.txt has {int(bad.sum())} fact(s) that are not in the source {src_name}, "
                     f"e.g. {_fact_str(tkg, tkg[s][np.flatnonzero(bad)[0]])!r}")
    if rebuild is False:
        return
    from .build import make_variant
    from .recipe import BuildParams

    params = BuildParams(**meta["params"])
    built = make_variant(source, params)
    for s in SPLITS:
        a, b = np.sort(_keys(as_source[s], sizes)), np.sort(_keys(built.tkg[s], sizes))
        if not np.array_equal(a, b):
            extra, lost = int((~graph.member(a, b)).sum()), int((~graph.member(b, a)).sum())
            v.append(f"{s}.txt differs from a rebuild from {src_name} with the recorded parameters "
                     f"({extra} fact(s) not in the rebuild, {lost} missing)")
    notes.append(f"rebuilt from {src_name} with the recorded parameters (seed {params.variant_seed})")
