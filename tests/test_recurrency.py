"""Recurrency baseline on small synthetic graphs: fast ranking == brute force == harness, selection
rules, edge cases (no NaN/inf), registry and CLI. Real-data reproduction: test_recurrency_real.py."""
import json
import math

import numpy as np
import pytest
from click.testing import CliRunner

from tkg_indt.baselines import ALPHAS, DEFAULT_ALPHA, DEFAULT_LAMBDA, LAMBDAS, RecurrencyBaseline, select_parameters
from tkg_indt.baselines.recurrency import _Index, _sweep_counts, reciprocal_ranks
from tkg_indt.cli import main
from tkg_indt.data.timeenc import TimeEncoding
from tkg_indt.data.tkg import TKG
from tkg_indt.errors import ParameterError, UnknownNameError
from tkg_indt.evaluation import SUBSET_SEED, evaluate, inductive, sample_facts, single_step
from tkg_indt.evaluation.evaluator import metrics_from_counts
from tkg_indt.evaluation.filtering import KnownAnswers, with_inverses
from tkg_indt.evaluation.models import make_model, model_names, register_model


# ----------------------------------------------------------------------------- brute force
def brute_scores(history, N, s, r, tau, lam, a1, a2):
    """Scores of (s, r, ?, tau) straight from the definitions (history with inverse ids)."""
    H = history[(history[:, 3] < tau) & (history[:, 1] == r)]
    psi, xi = np.zeros(N), np.zeros(N)
    if len(H):
        m, M = H[:, 3].min(), H[:, 3].max()
        D = max(math.fsum(2.0 ** (lam * (i - tau)) for i in range(m, M)), 1e-15)
        mine = H[H[:, 0] == s]
        for o in np.unique(mine[:, 2]):
            psi[o] = math.fsum(2.0 ** (lam * (k - tau)) for k in mine[mine[:, 2] == o, 3]) / D
        xi = np.bincount(H[:, 2], minlength=N) / len(H)
    return a1 * psi + a2 * xi


def brute_counts(history, known_facts, queries, N, lam_rel, a1_rel, a2_rel, R):
    """(greater, equal) per query row with the time-aware filter over ``known_facts``."""
    known = with_inverses(known_facts, R)
    g, e = [], []
    for s, r, o, tau in queries:
        sc = brute_scores(history, N, s, r, tau, lam_rel[r], a1_rel[r], a2_rel[r])
        filt = set(known[(known[:, 0] == s) & (known[:, 1] == r) & (known[:, 3] == tau), 2]) - {o}
        keep = np.ones(N, bool)
        keep[list(filt)] = False
        keep[o] = False
        g.append(int(((sc > sc[o]) & keep).sum()))
        e.append(int(((sc == sc[o]) & keep).sum()))
    return np.array(g), np.array(e)


def random_tkg(seed, N=14, R=3, T=12, n=260, name="toy"):
    """Facts drawn from a small pool of triples (so they recur), with duplicates; chronological splits."""
    rng = np.random.default_rng(seed)
    pool = np.stack([rng.integers(0, N, 40), rng.integers(0, R, 40), rng.integers(0, N, 40)], axis=1)
    pick = pool[rng.integers(0, len(pool), n)]
    fresh = rng.random(n) < 0.3  # some facts are new triples
    pick[fresh] = np.stack([rng.integers(0, N, fresh.sum()), rng.integers(0, R, fresh.sum()),
                            rng.integers(0, N, fresh.sum())], axis=1)
    t = np.sort(rng.integers(0, T, n))
    facts = np.column_stack([pick, t])
    facts = np.concatenate([facts, facts[rng.integers(0, n, 15)]])  # duplicate lines
    facts = facts[np.argsort(facts[:, 3], kind="stable")]
    splits = {"train": facts[facts[:, 3] < T - 4], "valid": facts[(facts[:, 3] >= T - 4) & (facts[:, 3] < T - 2)],
              "test": facts[facts[:, 3] >= T - 2]}
    return TKG(name, splits, np.array([f"e{i}" for i in range(N)], object), np.array([f"r{i}" for i in range(R)], object),
               TimeEncoding("int"))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_fast_counts_equal_brute_force(seed):
    tkg = random_tkg(seed)
    N, R = tkg.num_entities, tkg.num_relations
    rng = np.random.default_rng(seed)
    lam = rng.choice([0.0, 0.037, 0.37, 1.0001], size=(2 * R, 1))
    alpha = rng.choice([0.0, 0.3, 0.99999, 1.0], size=2 * R)
    a1, a2 = 1000 * alpha, 1000 * (1 - alpha)
    hist = with_inverses(tkg.facts(), R)
    q = with_inverses(tkg.facts("valid", "test"), R)
    known = KnownAnswers(tkg.facts(), N, R, "time-aware")
    g, e = _sweep_counts(_Index.build(hist, N, 2 * R), lam, q, known, a1[:, None], a2[:, None])
    bg, be = brute_counts(hist, tkg.facts(), q, N, lam[:, 0], a1, a2, R)
    assert (g[:, 0, 0] == bg).all() and (e[:, 0, 0] == be).all()
    assert (be > 0).any() and (bg > 0).any()  # the data exercises ties and rankings


def test_grid_of_settings_equals_one_by_one():
    tkg = random_tkg(5)
    N, R = tkg.num_entities, tkg.num_relations
    hist = with_inverses(tkg.facts("train", "valid"), R)
    q = with_inverses(tkg["valid"], R)
    known = KnownAnswers(tkg.facts("train", "valid"), N, R, "time-aware")
    index = _Index.build(hist, N, 2 * R)
    grid = np.tile(np.asarray(LAMBDAS), (2 * R, 1))
    g, e = _sweep_counts(index, grid, q, known, np.full((2 * R, 1), 1000.0), np.zeros((2 * R, 1)))
    alphas = np.asarray(ALPHAS)
    ga, ea = _sweep_counts(index, np.full((2 * R, 1), 0.1), q, known, np.tile(1000 * alphas, (2 * R, 1)),
                           np.tile(1000 * (1 - alphas), (2 * R, 1)))
    for j, lam in enumerate(LAMBDAS):
        g1, e1 = _sweep_counts(index, np.full((2 * R, 1), lam), q, known, np.full((2 * R, 1), 1000.0),
                               np.zeros((2 * R, 1)))
        assert (g1[:, 0, 0] == g[:, j, 0]).all() and (e1[:, 0, 0] == e[:, j, 0]).all()
    for j, a in enumerate(ALPHAS):
        bg, be = brute_counts(hist, tkg.facts("train", "valid"), q, N, np.full(2 * R, 0.1), np.full(2 * R, 1000 * a),
                              np.full(2 * R, 1000 * (1 - a)), R)
        assert (bg == ga[:, 0, j]).all() and (be == ea[:, 0, j]).all()


def brute_selection(tkg, params="per-relation"):
    """λ then α by the stated rules, using brute-force counts."""
    N, R = tkg.num_entities, tkg.num_relations
    hist = with_inverses(tkg.facts("train", "valid"), R)
    q = with_inverses(tkg["valid"], R)
    lam_sel, alpha_sel = np.full(2 * R, DEFAULT_LAMBDA), np.full(2 * R, DEFAULT_ALPHA)

    def mrr(lam, a):
        g, e = brute_counts(hist, tkg.facts("train", "valid"), q, N, np.broadcast_to(lam, 2 * R), np.full(2 * R, 1000 * a),
                            np.full(2 * R, 1000 * (1 - a)), R)
        rr = reciprocal_ranks(g, e, "expected")
        if params == "per-dataset":
            return {None: rr.mean()}
        return {r: rr[q[:, 1] == r].mean() for r in np.unique(q[:, 1])}

    best = {}
    for lam in LAMBDAS:
        for r, v in mrr(lam, 1.0).items():
            if v > best.get(r, (0.0, 0.0))[1]:
                best[r] = (lam, v)
    keys = [None] if params == "per-dataset" else list(np.unique(q[:, 1]))
    lam_of = {r: best.get(r, (0.0, 0.0))[0] for r in keys}
    lam_vec = np.full(2 * R, lam_of[None]) if params == "per-dataset" else lam_sel.copy()
    if params != "per-dataset":
        for r in keys:
            lam_vec[r] = lam_of[r]
    best_a = {}
    for a in ALPHAS:
        for r, v in mrr(lam_vec, a).items():
            if v > best_a.get(r, (0.0, 0.0))[1]:
                best_a[r] = (a, v)
    if params == "per-dataset":
        return np.full(2 * R, lam_of[None]), np.full(2 * R, best_a.get(None, (0.0, 0))[0])
    for r in keys:
        lam_sel[r], alpha_sel[r] = lam_of[r], best_a.get(r, (0.0, 0.0))[0]
    return lam_sel, alpha_sel


@pytest.mark.parametrize("params", ["per-relation", "per-dataset"])
def test_selection_follows_the_rules(params):
    tkg = random_tkg(11, R=4)
    tkg.splits["valid"] = tkg["valid"][tkg["valid"][:, 1] != 3]  # relation r3 gets no validation query
    sel = select_parameters(tkg, params=params)
    lam, alpha = brute_selection(tkg, params)
    assert np.array_equal(sel.lam, lam) and np.array_equal(sel.alpha, alpha)
    if params == "per-relation":
        missing = sel.n_valid == 0
        assert missing.any()  # this draw has relation ids without validation queries -> defaults
        assert (sel.lam[missing] == DEFAULT_LAMBDA).all() and (sel.alpha[missing] == DEFAULT_ALPHA).all()
    again = select_parameters(tkg, params=params)
    assert np.array_equal(again.lam, sel.lam) and np.array_equal(again.alpha, sel.alpha)


def test_first_best_and_start_from_zero():
    from tkg_indt.baselines.recurrency import _first_best

    mrr = np.array([[0.2, 0.3, 0.3, 0.1], [0.0, 0.0, 0.0, 0.0], [np.nan] * 4, [0.1, 0.1, 0.1, 0.1]])
    grid = (0.0, 0.5, 0.7, 1.0)
    assert list(_first_best(mrr, grid)) == [0.5, 0.0, 0.0, 0.0]


@pytest.mark.parametrize("variant", ["combined", "strict", "relaxed"])
def test_harness_and_fast_path_agree(variant):
    tkg = random_tkg(3)
    model = RecurrencyBaseline(variant).fit(tkg)
    task = single_step(tkg)
    fast = model.evaluate(task, ties="expected")
    slow = evaluate(RecurrencyBaseline(variant).fit(tkg), task, ties="expected", batch_size=7)
    assert np.array_equal(fast.queries, slow.queries)
    assert np.array_equal(fast.greater, slow.greater) and np.array_equal(fast.equal, slow.equal)
    assert fast.metrics == slow.metrics


def test_test_time_alpha_and_variants():
    tkg = random_tkg(4)
    model = RecurrencyBaseline("combined").fit(tkg)
    model.selection.alpha[:] = 1.0
    lam, a1, a2 = model.weights(tkg)
    assert np.allclose(a1, 1000 * 0.99999) and np.allclose(a2, 1000 * (1 - 0.99999))
    _, a1, a2 = RecurrencyBaseline("strict").fit(tkg).weights(tkg)
    assert (a1 == 1000).all() and (a2 == 0).all()
    _, a1, a2 = RecurrencyBaseline("relaxed").weights(tkg)
    assert (a1 == 0).all() and (a2 == 1000).all()


def test_relaxed_is_relation_frequency():
    """ξ ranks by how often o answered r before, independent of s."""
    f = np.array([[0, 0, 1, 0], [2, 0, 1, 1], [3, 0, 4, 1], [0, 0, 4, 2], [5, 0, 1, 3]])
    tkg = TKG("tiny", {"train": f[:4], "valid": np.zeros((0, 4), np.int64), "test": f[4:]},
              np.array([f"e{i}" for i in range(6)], object), np.array(["r"], object), TimeEncoding("int"))
    model = RecurrencyBaseline("relaxed").fit(tkg)
    task = single_step(tkg)
    model.prepare(task)
    sc = model.score(task, np.array([[5, 0, 3]]))[0]
    assert sc[1] == pytest.approx(1000 * 2 / 4) and sc[4] == pytest.approx(1000 * 2 / 4) and sc[0] == 0
    res = model.evaluate(task, ties="optimistic")
    assert res.greater[0] == 0 and res.equal[0] == 1  # target 1 ties with entity 4


# ----------------------------------------------------------------------------- edge cases
def edge_tkg():
    """One relation with a single fact, an entity (e9) only in test, a relation only in test."""
    f_train = np.array([[0, 0, 1, 0], [0, 0, 1, 1], [2, 0, 3, 1], [4, 1, 5, 1]])
    f_valid = np.array([[0, 0, 1, 2], [2, 0, 1, 2]])
    f_test = np.array([[0, 0, 1, 3], [9, 0, 1, 3], [4, 1, 5, 3], [6, 2, 7, 3], [0, 0, 9, 4]])
    return TKG("edge", {"train": f_train, "valid": f_valid, "test": f_test},
               np.array([f"e{i}" for i in range(10)], object), np.array(["r0", "r1", "r2"], object), TimeEncoding("int"))


def _check_finite(tkg, model):
    task = single_step(tkg)
    model.prepare(task)
    q = with_inverses(tkg["test"], tkg.num_relations)[:, [0, 1, 3]]
    order = np.argsort(q[:, 2], kind="stable")
    scores = model.score(task, q[order])
    assert np.isfinite(scores).all() and (scores >= 0).all()
    res = model.evaluate(task, ties="expected")
    assert all(np.isfinite(v) for v in res.metrics.values())
    return res


@pytest.mark.parametrize("variant", ["combined", "strict", "relaxed"])
def test_edge_cases_have_finite_scores(variant):
    tkg = edge_tkg()
    model = RecurrencyBaseline(variant).fit(tkg)
    _check_finite(tkg, model)
    # r1 has one fact in history (D = 0 before the floor): its target still ranks first
    res = RecurrencyBaseline(variant).fit(tkg).evaluate(single_step(tkg), ties="pessimistic")
    row = np.flatnonzero((res.queries[:, 1] == 1) & (res.queries[:, 0] == 4))[0]
    if variant != "relaxed":
        assert res.greater[row] == 0 and res.equal[row] == 0


def test_one_timestamp_and_empty_valid():
    f = np.array([[0, 0, 1, 0], [1, 0, 2, 0], [2, 1, 0, 0]])
    tkg = TKG("flat", {"train": f[:2], "valid": np.zeros((0, 4), np.int64), "test": f[2:]},
              np.array(["a", "b", "c"], object), np.array(["r", "s"], object), TimeEncoding("int"))
    model = RecurrencyBaseline("combined").fit(tkg)
    assert (model.selection.lam == DEFAULT_LAMBDA).all() and (model.selection.alpha == DEFAULT_ALPHA).all()
    res = _check_finite(tkg, model)
    assert (res.greater == 0).all() and (res.equal == 2).all()  # no history before τ: all tie at 0


def test_per_dataset_and_name_transfer():
    tkg = random_tkg(7)
    sel = select_parameters(tkg, params="per-dataset")
    assert len(np.unique(sel.lam)) == 1 and len(np.unique(sel.alpha)) == 1
    lam, alpha, matched = sel.params_for(np.array(["r1", "zz"], object))
    assert matched == 1 and (lam == sel.lam[0]).all() and (alpha == sel.alpha[0]).all()
    rel = select_parameters(tkg, params="per-relation")
    lam, alpha, matched = rel.params_for(np.array(["zz", "r1"], object))
    R = tkg.num_relations
    assert matched == 1 and lam[0] == DEFAULT_LAMBDA and alpha[2] == DEFAULT_ALPHA
    assert lam[1] == rel.lam[1] and lam[3] == rel.lam[1 + R] and alpha[3] == rel.alpha[1 + R]


def test_bad_parameters():
    with pytest.raises(ParameterError, match="variant"):
        RecurrencyBaseline("loose")
    with pytest.raises(ParameterError, match="params"):
        RecurrencyBaseline(params="per-year")
    with pytest.raises(ParameterError, match="ties"):
        RecurrencyBaseline().evaluate(single_step(random_tkg(0)), ties="random")


def test_sweep_refuses_to_go_back():
    from tkg_indt.baselines.recurrency import _Sweep

    tkg = random_tkg(0)
    sw = _Sweep(_Index.build(with_inverses(tkg.facts(), 3), tkg.num_entities, 6), np.zeros((6, 1)))
    sw.advance(5)
    with pytest.raises(ValueError, match="backwards"):
        sw.advance(4)


# ----------------------------------------------------------------------------- registry and CLI
def test_registry():
    assert {"recurrency", "recurrency-strict", "recurrency-relaxed"} <= set(model_names())
    with pytest.raises(UnknownNameError, match="recurrency-strict"):
        make_model("grate-trix-missing")
    assert make_model("Recurrency-Strict", params="per-dataset").params == "per-dataset"
    with pytest.raises(ParameterError, match="no option"):
        make_model("recurrency", checkpoint="x.pt")

    class Const:
        def score(self, task, queries):
            return np.zeros((len(queries), task.num_entities))

    register_model("const-test", lambda: Const(), "all-zero scores")
    with pytest.raises(ParameterError, match="already registered"):
        register_model("const-test", lambda: Const())
    assert "const-test" in model_names()


def write_variant(folder, tkg):
    folder.mkdir(parents=True)
    for split, facts in tkg.splits.items():
        lines = [f"{tkg.entities[s]}\t{tkg.relations[r]}\t{tkg.entities[o]}\t{t}" for s, r, o, t in facts]
        (folder / f"{split}.txt").write_text("\n".join(lines) + "\n")
    (folder / "metadata.json").write_text(json.dumps({"time": TimeEncoding("int").to_dict()}))


def toy_variant():
    """A hand-made inductive variant: training graph (e0..e5, r0/r1) and inference graph (e10..e15, r1/r5)."""
    rng = np.random.default_rng(3)
    def facts(ents, rels, t0, t1, n):
        return np.stack([rng.choice(ents, n), rng.choice(rels, n), rng.choice(ents, n), np.sort(rng.integers(t0, t1, n))], 1)
    train, valid = facts(range(6), [0, 1], 0, 8, 60), facts(range(6), [0, 1], 8, 10, 10)
    msg, test = facts(range(10, 16), [1, 5], 10, 16, 50), facts(range(10, 16), [1, 5], 16, 18, 12)
    return TKG("toy-variant", {"train": train, "valid": valid, "msg": msg, "test": test},
               np.array([f"e{i}" for i in range(16)], object), np.array([f"r{i}" for i in range(6)], object),
               TimeEncoding("int"))


def test_cli_benchmark_variant_folder(tmp_path):
    tkg = toy_variant()
    write_variant(tmp_path / "WIKIIndT" / "p50-inter", tkg)
    out, ranks = tmp_path / "res.json", tmp_path / "ranks.csv"
    res = CliRunner().invoke(main, ["eval", "--model", "recurrency", "--benchmark", str(tmp_path / "WIKIIndT" / "p50-inter"),
                                    "--ties", "expected", "--out", str(out), "--ranks", str(ranks)])
    assert res.exit_code == 0, res.output
    assert "| MRR |" in res.output.splitlines()[0] and "toy-variant" not in res.output  # named by the folder
    report = json.loads(out.read_text())
    assert report["protocol"] == "inductive" and report["ties"] == "expected"
    details = report["model_details"]
    assert details["relations_with_fitted_parameters"] == 1  # r1 is shared by name, r5 falls back
    assert "r0" in details["selection"]["relations"]
    import pandas as pd

    table = pd.read_csv(ranks)
    assert len(table) == 2 * len(tkg["test"]) and set(table["direction"]) == {"head", "tail"}
    m = metrics_from_counts(table["greater"].to_numpy().copy(), table["equal"].to_numpy().copy(), "expected")
    assert m["mrr"] == pytest.approx(report["metrics"]["mrr"])
    # deterministic: a second run writes byte-identical files
    out2, ranks2 = tmp_path / "res2.json", tmp_path / "ranks2.csv"
    CliRunner().invoke(main, ["eval", "--model", "recurrency", "--benchmark", str(tmp_path / "WIKIIndT" / "p50-inter"),
                              "--ties", "expected", "--out", str(out2), "--ranks", str(ranks2)])
    assert out.read_bytes() == out2.read_bytes() and ranks.read_bytes() == ranks2.read_bytes()
    # the same numbers from the Python API on the inference graph
    model = RecurrencyBaseline().fit(tkg)
    direct = model.evaluate(inductive(tkg), ties="expected")
    assert direct.metrics["mrr"] == pytest.approx(report["metrics"]["mrr"])


def test_eval_subset_ranks_the_same_queries_as_the_full_run(tmp_path):
    """--subset N ranks the queries of N seeded facts exactly as the full run ranks them, says so in
    the report, and draws the same facts every time (and other facts with another seed)."""
    tkg = toy_variant()
    folder = tmp_path / "WIKIIndT" / "p50-inter"
    write_variant(folder, tkg)
    runs = {}
    for name, extra in {"full": [], "sub": ["--subset", "5"], "again": ["--subset", "5"],
                        "other": ["--subset", "5", "--seed", "1"]}.items():
        out, ranks = tmp_path / f"{name}.json", tmp_path / f"{name}.csv"
        res = CliRunner().invoke(main, ["eval", "--model", "recurrency", "--benchmark", str(folder), "--out", str(out),
                                        "--ranks", str(ranks)] + extra)
        assert res.exit_code == 0, res.output
        runs[name] = (json.loads(out.read_text()), ranks.read_bytes())
    report = runs["sub"][0]
    assert report["subset"] == {"facts": 5, "of": len(tkg["test"]), "seed": SUBSET_SEED} and report["queries"] == 10
    assert "subset" not in runs["full"][0]
    assert runs["sub"] == runs["again"] and runs["sub"][1] != runs["other"][1]
    import io

    import pandas as pd

    full, sub = (pd.read_csv(io.BytesIO(runs[k][1])) for k in ("full", "sub"))
    keys = ["direction", "subject", "relation", "object", "time"]
    merged = sub.merge(full, on=keys, suffixes=("", "_full"))
    assert len(merged) == len(sub) == 10
    assert (merged["greater"] == merged["greater_full"]).all() and (merged["equal"] == merged["equal_full"]).all()
    chosen = sample_facts(tkg["test"], 5)
    assert len(chosen) == 5 and np.array_equal(chosen, sample_facts(tkg["test"], 5))
    assert sample_facts(tkg["test"], 0) is tkg["test"] and sample_facts(tkg["test"], 10**6) is tkg["test"]
    res = CliRunner().invoke(main, ["eval", "--model", "recurrency", "--benchmark", str(folder), "--subset", "-1"])
    assert res.exit_code == 2


def test_inductive_history_uses_msg_and_earlier_test():
    tkg = toy_variant()
    model = RecurrencyBaseline("strict").fit(tkg)
    task = inductive(tkg)
    assert model.history_splits(task) == ("msg", "test")
    fast = model.evaluate(task, ties="average")
    slow = evaluate(RecurrencyBaseline("strict").fit(tkg), task, ties="average")
    assert np.array_equal(fast.greater, slow.greater) and np.array_equal(fast.equal, slow.equal)


def test_context_history_ignores_test_truth():
    """history='context': msg only (what a learned model sees); a triple known only from earlier test facts
    no longer helps, so no query ranks better than with the test truth, and some rank worse."""
    splits = {"train": np.array([[0, 0, 1, 0], [1, 0, 0, 1]]), "valid": np.array([[0, 0, 1, 2]]),
              "msg": np.array([[2, 1, 3, 3], [3, 1, 4, 3]]),
              "test": np.array([[2, 1, 4, 4], [2, 1, 4, 5], [3, 1, 4, 5]])}
    tkg = TKG("toy", splits, np.array(list("abcde")), np.array(["r", "q"]), TimeEncoding("int"))
    task = inductive(tkg)
    with_test = RecurrencyBaseline("strict").fit(tkg)
    context = RecurrencyBaseline("strict", history="context").fit(tkg)
    assert context.history_splits(task) == ("msg",) and with_test.history_splits(task) == ("msg", "test")
    a, b = with_test.evaluate(task, ties="average"), context.evaluate(task, ties="average")
    rank_a, rank_b = a.greater + a.equal / 2, b.greater + b.equal / 2
    assert np.all(rank_b >= rank_a) and np.any(rank_b > rank_a)
    with pytest.raises(ParameterError, match="history"):
        RecurrencyBaseline(history="all")


def test_cli_errors(tmp_path):
    runner = CliRunner()
    res = runner.invoke(main, ["eval", "--model", "nope", "--dataset", "YAGO"])
    assert res.exit_code == 2 and "unknown model 'nope'" in res.output and "recurrency" in res.output
    res = runner.invoke(main, ["eval", "--model", "recurrency"])
    assert res.exit_code == 2 and "exactly one of" in res.output
    res = runner.invoke(main, ["eval", "--model", "recurrency", "--benchmark", str(tmp_path / "missing")])
    assert res.exit_code == 2 and "error:" in res.output
