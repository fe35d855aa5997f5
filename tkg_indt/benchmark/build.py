"""The inductive-transfer builder: INGRAM's generator extended to quadruples with a chronological time cut.

:func:`make_variant` runs the 7 steps of ``docs/benchmark.md`` on a source :class:`TKG` (all its
splits together) and returns the four splits with their metadata; :func:`build_variant` loads the
source, builds and writes a variant folder; :func:`build_suite` does the 8 variants of a recipe.

Decisions the procedure leaves open (all recorded in ``metadata.json``):

- Duplicate quadruples of the source (WIKI has ~7.6 k) are merged first: the builder works on
  distinct facts, so "msg ∩ test = ∅ as quadruples" holds by construction.
- The giant component is that of the undirected entity graph; ties go to the smallest entity id.
- Randomness: the relation partition is drawn once per recipe seed (``relation_seed``) and shared by
  the variants of a suite (the paper: "all eight share the V/R/T-disjoint partition"); every other
  draw (seeds, BFS, X/Y subsample, splits) uses the variant's own ``variant_seed``, so V_tr differs
  across variants as in the paper. Both seeds are SHA-256 derived from the recipe seed (see
  :mod:`~tkg_indt.benchmark.recipe`) and recorded.
- ``|R_inf| = floor(p_R |R|)`` relations, drawn at random; ``T_tr`` = the earliest
  ``floor((1 - p_T) |T|)`` distinct timestamps, ``T_inf`` the rest (a cut by date/year).
- BFS: see :func:`~tkg_indt.benchmark.graph.expand` (cap per node per hop, next frontier = new nodes).
  Training seeds are drawn from the giant component of the source; inference seeds from the giant
  component of the source without ``V_tr`` (facts touching ``V_tr`` removed), expanded in that graph.
- Inference seeds: ``min(n_inf, |giant component of the rest|)`` (on GDELT fewer than n_inf = 300
  entities remain once ``V_tr`` is removed; then every remaining entity is a seed).
- X/Y merge as INGRAM: ``N = min(|X|/(1-p), |Y|/p)``, ``int(N(1-p))`` of X and ``int(N p)`` of Y
  drawn at random (``p = 1``: all of Y). The paper's step list takes no giant component afterwards,
  so by default none is taken (``inf_gcc: false``) and the realised share of Y equals p_tri up to
  rounding and the extra-mode drops; ``inf_gcc: true`` adds INGRAM's final giant-component step
  (the share then drifts; on WIKI X (early) and Y (late) facts are often in different components).
- train/valid: random, ``floor(valid_frac n)`` facts to valid; then, for every entity or relation of
  valid missing from train, the first valid fact (in the random order) mentioning it moves to train,
  so valid uses only the training graph (count: ``coverage.valid_moved_to_train``).
- msg/test: ``floor(test_frac n)`` facts to test. inter: random shuffle, then for every entity or
  relation of test missing from msg the first test fact mentioning it moves to msg (count:
  ``coverage.test_moved_to_msg``). extra: facts ordered by time (random order inside a timestamp),
  the last ``floor(test_frac n)`` are test, so ``max time(msg) <= min time(test)``; test facts whose
  entity or relation never occurs in msg are dropped (count: ``coverage.test_dropped``), since moving
  them would break the chronological cut.
- Output lines: sorted by (time, head, relation, tail), ids being ranks of names in sorted order.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from pathlib import Path

import numpy as np

from ..data.tkg import HEAD, REL, TAIL, TIME, TKG
from ..errors import ParameterError
from ..paths import atomic_dir, home
from ..recurrency_stats import recurrency_stats
from . import graph
from .recipe import BuildParams, Recipe, get_recipe

SPLITS = ("train", "valid", "msg", "test")
FORMAT_VERSION = 1


@dataclasses.dataclass
class Variant:
    """A built variant in memory: the four splits (source ids) and the metadata to be written."""

    params: BuildParams
    tkg: TKG  # splits train, valid, msg, test; vocabularies of the source
    meta: dict


def _floor(x: float) -> int:
    """floor with a tolerance for float noise (0.7 * 230 = 160.99999999999997 -> 161)."""
    return int(math.floor(x + 1e-9))


def merge_sizes(n_x: int, n_y: int, p_tri: float) -> tuple[int, int]:
    """INGRAM's merge: how many X and Y facts give the largest |X|:|Y| = (1-p):p subsample."""
    if p_tri >= 1.0:
        return 0, n_y
    total = min(n_x / (1.0 - p_tri), n_y / p_tri)
    return min(n_x, _floor(total * (1.0 - p_tri))), min(n_y, _floor(total * p_tri))


def _sorted_lines(facts: np.ndarray) -> np.ndarray:
    return facts[np.lexsort((facts[:, TAIL], facts[:, REL], facts[:, HEAD], facts[:, TIME]))]


def _counts(tkg: TKG, facts: np.ndarray) -> dict:
    if len(facts) == 0:
        return {"quads": 0, "entities": 0, "relations": 0, "timestamps": 0, "first": None, "last": None}
    return {"quads": int(len(facts)), "entities": int(len(graph.entities_of(facts))),
            "relations": int(len(graph.sorted_unique(facts[:, REL]))), "timestamps": int(len(graph.sorted_unique(facts[:, TIME]))),
            "first": str(tkg.time.label(int(facts[:, TIME].min()))),
            "last": str(tkg.time.label(int(facts[:, TIME].max())))}


def _time_block(tkg: TKG, times: np.ndarray) -> dict:
    return {"count": int(len(times)), "first": str(tkg.time.label(int(times[0]))),
            "last": str(tkg.time.label(int(times[-1]))), "first_raw": str(tkg.time.raw(times[:1])[0]),
            "last_raw": str(tkg.time.raw(times[-1:])[0]), "first_index": int(times[0]), "last_index": int(times[-1])}


def check_source_sizes(params: BuildParams, n_entities: int, n_relations: int, n_times: int) -> tuple[int, int]:
    """Size checks that need the source's giant component; returns (|R_inf|, |T_tr|)."""
    k_rel = _floor(params.p_r * n_relations)
    if k_rel == 0 or k_rel == n_relations:
        side = "inference" if k_rel == 0 else "training"
        raise ParameterError(f"p_r={params.p_r} leaves no relation for the {side} graph: the source "
                             f"{params.source} has {n_relations} relations and floor(p_r * {n_relations}) = {k_rel}. "
                             f"Fix: choose p_r in [{1 / n_relations:.3g}, {1 - 1 / n_relations:.3g}]")
    k_time = _floor((1.0 - params.p_t) * n_times)
    if k_time == 0 or k_time == n_times:
        raise ParameterError(f"p_t={params.p_t} leaves no timestamp for one side: {params.source} has {n_times} "
                             f"timestamps. Fix: choose p_t in [{1 / n_times:.3g}, {1 - 1 / n_times:.3g}]")
    if params.n_tr + params.n_inf > n_entities:
        raise ParameterError(f"n_tr + n_inf = {params.n_tr} + {params.n_inf} seeds exceed the {n_entities} entities "
                             f"of the giant component of {params.source}. Fix: lower n_tr / n_inf")
    return k_rel, k_time


def make_variant(tkg: TKG, params: BuildParams) -> Variant:
    """Run the 7 steps on ``tkg`` (every split together) and return the variant in memory."""
    params.validate()
    rng = np.random.default_rng(params.variant_seed)
    E = tkg.num_entities
    raw = tkg.facts()
    facts = graph.unique_facts(raw)
    n_distinct = len(facts)

    # 1. giant component of the undirected entity graph
    in_gcc = graph.giant_component(facts, E)
    facts = facts[in_gcc[facts[:, HEAD]]]
    gcc_entities = np.flatnonzero(in_gcc)
    relations = graph.sorted_unique(facts[:, REL])
    times = graph.sorted_unique(facts[:, TIME])
    k_rel, k_time = check_source_sizes(params, len(gcc_entities), len(relations), len(times))

    # 2. relation partition: one draw per recipe seed, shared by the variants of a suite
    perm = np.random.default_rng(params.relation_seed).permutation(relations)
    r_inf = np.sort(perm[:k_rel])
    r_tr = np.sort(perm[k_rel:])
    is_r_inf = np.zeros(tkg.num_relations, dtype=bool)
    is_r_inf[r_inf] = True
    is_r_tr = np.zeros(tkg.num_relations, dtype=bool)
    is_r_tr[r_tr] = True

    # 3. chronological time partition
    t_tr, t_inf = times[:k_time], times[k_time:]
    seen_time = facts[:, TIME] <= t_tr[-1]

    # 4. training entities
    adj = graph.adjacency(facts, E)
    seeds_tr = rng.choice(gcc_entities, size=params.n_tr, replace=False)
    cand_tr = np.zeros(E, dtype=bool)
    cand_tr[graph.expand(adj, seeds_tr, params.hops_tr, params.hop_cap, rng)] = True
    e_tr = facts[cand_tr[facts[:, HEAD]] & cand_tr[facts[:, TAIL]] & is_r_tr[facts[:, REL]] & seen_time]
    v_tr = graph.giant_component(e_tr, E)
    e_tr = e_tr[v_tr[e_tr[:, HEAD]]]
    if len(e_tr) == 0:
        raise ParameterError(f"the training graph of {params.source} is empty with n_tr={params.n_tr}, "
                             f"hops_tr={params.hops_tr}, hop_cap={params.hop_cap}. Fix: raise them")

    # 5. inference entities, sampled in the source without V_tr
    rest = facts[~v_tr[facts[:, HEAD]] & ~v_tr[facts[:, TAIL]]]
    rest_gcc = np.flatnonzero(graph.giant_component(rest, E))
    if len(rest_gcc) == 0:
        raise ParameterError(f"no fact of {params.source} is left once the {int(v_tr.sum())} training entities are "
                             f"removed. Fix: lower n_tr, hops_tr or hop_cap")
    n_seeds_inf = min(params.n_inf, len(rest_gcc))  # GDELT: fewer entities remain than n_inf -> all of them
    seeds_inf = rng.choice(rest_gcc, size=n_seeds_inf, replace=False)
    cand_inf = np.zeros(E, dtype=bool)
    cand_inf[graph.expand(graph.adjacency(rest, E), seeds_inf, params.hops_inf, params.hop_cap, rng)] = True

    # 6. X (seen relation and time) / Y (new relation and time), merged at (1-p):p
    pool = rest[cand_inf[rest[:, HEAD]] & cand_inf[rest[:, TAIL]]]
    pool_seen_time = pool[:, TIME] <= t_tr[-1]
    x = pool[is_r_tr[pool[:, REL]] & pool_seen_time]
    y = pool[is_r_inf[pool[:, REL]] & ~pool_seen_time]
    pool_x, pool_y = len(x), len(y)
    n_x, n_y = merge_sizes(pool_x, pool_y, params.p_tri)
    if n_y == 0:
        raise ParameterError(f"no strictly new inference fact (unseen relation and unseen time) among the "
                             f"{len(pool)} facts of the inference pool of {params.source} (|X|={len(x)}, "
                             f"|Y|={len(y)}). Fix: raise n_inf, hops_inf or p_r, or lower p_tri")
    x = x[np.sort(rng.permutation(len(x))[:n_x])]
    y = y[np.sort(rng.permutation(len(y))[:n_y])]
    merged = np.concatenate([x, y])
    e_inf = merged
    if params.inf_gcc:  # optional: INGRAM's last step, the giant component of the merged graph
        e_inf = merged[graph.giant_component(merged, E)[merged[:, HEAD]]]
    gcc_dropped_y = int(is_r_inf[merged[:, REL]].sum() - is_r_inf[e_inf[:, REL]].sum())
    gcc_dropped = {"x": int(len(merged) - len(e_inf)) - gcc_dropped_y, "y": gcc_dropped_y}

    # 7a. train / valid, valid inside the training graph
    e_tr = e_tr[rng.permutation(len(e_tr))]
    n_valid = _floor(params.valid_frac * len(e_tr))
    valid, train = e_tr[:n_valid], e_tr[n_valid:]
    move = graph.first_covering(valid, _mask(graph.entities_of(train), E), _mask(graph.sorted_unique(train[:, REL]), tkg.num_relations))
    if len(move):
        train = np.concatenate([train, valid[move]])
        valid = np.delete(valid, move, axis=0)
    valid_moved = len(move)
    if len(valid) == 0:
        raise ParameterError(f"the valid split of {params.variant} is empty (training graph of {len(e_tr)} facts). "
                             f"Fix: raise n_tr or valid_frac")

    # 7b. msg / test
    e_inf = e_inf[rng.permutation(len(e_inf))]
    n_test = _floor(params.test_frac * len(e_inf))
    coverage = {"valid_moved_to_train": int(valid_moved)}
    if params.mode == "inter":
        test, msg = e_inf[:n_test], e_inf[n_test:]
        move = graph.first_covering(test, _mask(graph.entities_of(msg), E), _mask(graph.sorted_unique(msg[:, REL]), tkg.num_relations))
        if len(move):
            msg = np.concatenate([msg, test[move]])
            test = np.delete(test, move, axis=0)
        coverage.update(test_moved_to_msg=int(len(move)), test_dropped=0, test_dropped_y=0)
    else:
        e_inf = e_inf[np.argsort(e_inf[:, TIME], kind="stable")]
        msg, test = e_inf[:len(e_inf) - n_test], e_inf[len(e_inf) - n_test:]
        ent_ok = _mask(graph.entities_of(msg), E)
        rel_ok = _mask(graph.sorted_unique(msg[:, REL]), tkg.num_relations)
        keep = ent_ok[test[:, HEAD]] & ent_ok[test[:, TAIL]] & rel_ok[test[:, REL]]
        dropped = test[~keep]
        test = test[keep]
        coverage.update(test_moved_to_msg=0, test_dropped=int(len(dropped)),
                        test_dropped_y=int(is_r_inf[dropped[:, REL]].sum()))
    if len(test) == 0:
        raise ParameterError(f"the test split of {params.variant} is empty (inference graph of {len(e_inf)} facts). "
                             f"Fix: raise n_inf or hops_inf")

    splits = {"train": _sorted_lines(train), "valid": _sorted_lines(valid),
              "msg": _sorted_lines(msg), "test": _sorted_lines(test)}
    out = TKG(f"{params.suite or params.source}/{params.variant}", splits, tkg.entities, tkg.relations, tkg.time)
    inf = np.concatenate([splits["msg"], splits["test"]])
    tr = np.concatenate([splits["train"], splits["valid"]])
    n_new = int(is_r_inf[inf[:, REL]].sum())
    meta = {
        "format": "tkg-indt inductive variant", "format_version": FORMAT_VERSION,
        "suite": params.suite, "variant": params.variant, "p_tri": params.p_tri, "mode": params.mode,
        "seed": params.seed, "relation_seed": params.relation_seed, "variant_seed": params.variant_seed,
        "params": params.to_dict(), "params_key": params.key(),
        "source": {"name": tkg.name, "checksum": tkg.meta.get("checksum"), "facts": int(len(raw)),
                   "distinct_facts": int(n_distinct), "duplicates_merged": int(len(raw) - n_distinct),
                   "gcc_entities": int(len(gcc_entities)), "gcc_facts": int(len(facts)),
                   "relations": int(len(relations)), "timestamps": int(len(times))},
        "time": tkg.time.to_dict(),
        "relations": {"train": [str(r) for r in tkg.relations[r_tr]], "inference": [str(r) for r in tkg.relations[r_inf]]},
        "timestamps": {"train": _time_block(tkg, t_tr), "inference": _time_block(tkg, t_inf)},
        "sampling": {"train_seeds": params.n_tr, "train_candidates": int(cand_tr.sum()),
                     "train_graph_facts": int(len(e_tr)), "rest_gcc_entities": int(len(rest_gcc)),
                     "inference_seeds": int(n_seeds_inf), "inference_candidates": int(cand_inf.sum()),
                     "pool": int(len(pool)), "pool_x": int(pool_x), "pool_y": int(pool_y),
                     "taken_x": int(n_x), "taken_y": int(n_y), "gcc_dropped_x": gcc_dropped["x"],
                     "gcc_dropped_y": gcc_dropped["y"]},
        "coverage": coverage,
        "V_tr": int(len(graph.entities_of(tr))), "V_inf": int(len(graph.entities_of(inf))),
        "new_facts": n_new, "p_tri_realised": round(n_new / len(inf), 6),
        "splits": {name: _counts(tkg, f) for name, f in splits.items()},
        "recurrency": recurrency_stats(splits["msg"], splits["test"]),  # test split, history msg ∪ test
        "line_order": "time, then head, relation, tail (ids = ranks of names in sorted order); tab-separated, "
                      "times in the source's raw format",
    }
    return Variant(params, out, meta)


def _mask(ids: np.ndarray, n: int) -> np.ndarray:
    m = np.zeros(n, dtype=bool)
    m[ids] = True
    return m


# --------------------------------------------------------------------------- files
def format_lines(*columns) -> bytes:
    """UTF-8 bytes of tab-separated lines, each ending in LF, built column-wise with Arrow.

    Each column is ``(codes, vocabulary)``: line ``i`` holds ``vocabulary[codes[i]]`` (entity ids and
    names, unique time indices and raw strings ...).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(columns[0][0])
    if n == 0:
        return b""
    text = pa.large_string()
    cols = [pa.DictionaryArray.from_arrays(pa.array(np.asarray(codes, dtype=np.int64)),
                                           pa.array(np.asarray(vocab, dtype=object).astype(str).tolist(), type=text)
                                           ).cast(text) for codes, vocab in columns]
    newline = pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int8)), pa.array(["\n"], type=text)).cast(text)
    joined = pc.binary_join_element_wise(*cols, pa.scalar("\t", type=text))
    joined = pc.binary_join_element_wise(joined, newline, pa.scalar("", type=text))
    offsets = np.frombuffer(joined.buffers()[1], dtype=np.int64)[joined.offset:joined.offset + n + 1]
    return joined.buffers()[2].to_pybytes()[offsets[0]:offsets[-1]]


def _lines(tkg: TKG, facts: np.ndarray) -> bytes:
    """Tab-separated ``head relation tail time`` lines (names, raw times), LF ends, UTF-8."""
    times, time_codes = np.unique(facts[:, TIME], return_inverse=True)
    return format_lines((facts[:, HEAD], tkg.entities), (facts[:, REL], tkg.relations),
                        (facts[:, TAIL], tkg.entities), (time_codes.reshape(-1), tkg.time.raw(times)))


def write_variant(variant: Variant, out: str | Path) -> Path:
    """Write ``train.txt valid.txt msg.txt test.txt metadata.json`` into ``out`` atomically."""
    out = Path(out)
    meta = dict(variant.meta)
    meta["files"] = {}
    with atomic_dir(out) as tmp:
        for name in SPLITS:
            data = _lines(variant.tkg, variant.tkg.splits[name])
            (tmp / f"{name}.txt").write_bytes(data)
            meta["files"][f"{name}.txt"] = hashlib.sha256(data).hexdigest()
        (tmp / "metadata.json").write_text(json.dumps(meta, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return out


def variant_dir(suite: str, variant: str, root: str | Path | None = None) -> Path:
    """Folder of a variant: ``<root>/<variant>``, root defaulting to ``$TKG_INDT_HOME/benchmarks/<suite>``."""
    return (Path(root) if root is not None else home() / "benchmarks" / suite) / variant


def _source(params: BuildParams, data_dir, tkg: TKG | None) -> TKG:
    if tkg is not None:
        return tkg
    from ..data.sources import load_source

    return load_source(params.source, data_dir=data_dir)


def resolve_params(source: str | None = None, p_tri: float | None = None, mode: str | None = None,
                   recipe: str | Recipe | None = None, **overrides) -> BuildParams:
    """Parameters of one variant: the recipe of ``source`` (or ``recipe``) with ``overrides``.

    A build whose parameters differ from the recipe gets the suite name ``<suite>-custom-<hash>`` so
    it never overwrites a recipe variant.
    """
    if p_tri is None or mode is None:
        raise ParameterError("give both p_tri (0 < p_tri <= 1) and mode (inter or extra)")
    if source is None and recipe is None:
        raise ParameterError("give a source (gdelt, wiki) or a recipe")
    rec = recipe if isinstance(recipe, Recipe) else get_recipe(recipe or source)
    if source is not None and source.lower() != rec.source.lower():
        raise ParameterError(f"source {source} does not match the recipe's source {rec.source}")
    return rec.with_overrides(**overrides).build_params(p_tri, mode)


def build_variant(source: str | None = None, p_tri: float | None = None, mode: str | None = None, *,
                  out: str | Path | None = None, data_dir=None, tkg: TKG | None = None,
                  recipe: str | Recipe | None = None, **overrides) -> Path:
    """Build one variant and write it; returns its folder.

    >>> build_variant("wiki", 1.0, "inter", data_dir="../shared/data")        # doctest: +SKIP
    PosixPath('~/.cache/tkg_indt/benchmarks/WIKIIndT/p100-inter')

    ``overrides``: any of seed, p_r, p_t, n_tr, n_inf, hop_cap, hops_tr, hops_inf, valid_frac,
    test_frac (None keeps the recipe value). Bad parameters raise before the source is read.
    """
    params = resolve_params(source, p_tri, mode, recipe, **overrides)
    variant = make_variant(_source(params, data_dir, tkg), params)
    target = Path(out) if out is not None else variant_dir(params.suite, params.variant)
    return write_variant(variant, target)


def is_built(folder: Path, params: BuildParams) -> bool:
    """A complete variant folder built with exactly these parameters (used to resume a suite)."""
    try:
        meta = json.loads((folder / "metadata.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return meta.get("params_key") == params.key() and all((folder / f"{s}.txt").exists() for s in SPLITS)


def build_suite(suite: str | Recipe, *, root: str | Path | None = None, data_dir=None, tkg: TKG | None = None,
                force: bool = False, progress: bool = True) -> list[Path]:
    """Build every variant of a recipe into ``root`` (default ``$TKG_INDT_HOME/benchmarks/<suite>``).

    Variants already built with the same parameters are kept (so an interrupted run resumes) unless
    ``force``. The source is read once.
    """
    from tqdm.auto import tqdm

    rec = suite if isinstance(suite, Recipe) else get_recipe(suite)
    all_params = rec.all_params()
    root = Path(root) if root is not None else home() / "benchmarks" / rec.suite
    todo = [p for p in all_params if force or not is_built(root / p.variant, p)]
    source = _source(all_params[0], data_dir, tkg) if todo else None
    bar = tqdm(all_params, desc=rec.suite, unit="variant", disable=not progress)
    out = []
    for p in bar:
        bar.set_postfix_str(p.variant)
        if p in todo:
            write_variant(make_variant(source, p), root / p.variant)
        out.append(root / p.variant)
    return out
