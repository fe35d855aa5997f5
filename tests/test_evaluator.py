"""The evaluator on hand-computed cases: every filter mode, every tie policy, head and tail."""
import math

import numpy as np
import pytest

from tkg_indt.data.tkg import TKG
from tkg_indt.data.timeenc import TimeEncoding
from tkg_indt.evaluation import Evaluator, evaluate, metrics_from_counts, transductive

# 5 entities, 1 relation (inverse id 1). Facts (s, r, o, t):
KNOWN = np.array([[0, 0, 1, 0], [0, 0, 2, 0], [0, 0, 3, 1], [4, 0, 1, 0]])
TAIL_Q = np.array([[0, 0, 1, 0]])  # (0, r, ?, 0), target 1; other answers at t=0: {2}; at t=1: {3}
TAIL_S = np.array([[0.5, 0.9, 0.9, 0.9, 0.1]])
HEAD_Q = np.array([[1, 1, 0, 0]])  # (?, r, 1, 0) as (1, r^-1, ?, 0), target 0; other answer at t=0: {4}
HEAD_S = np.array([[0.2, 0.3, 0.2, 0.1, 0.5]])


@pytest.mark.parametrize("mode,expected", [("time-aware", (0, 1)), ("static", (0, 0)), ("raw", (0, 2))])
def test_tail_filters(mode, expected):
    ev = Evaluator(KNOWN, 5, 1, filter=mode)
    g, e = ev.counts(TAIL_S, TAIL_Q)
    assert (g[0], e[0]) == expected


@pytest.mark.parametrize("mode,expected", [("time-aware", (1, 1)), ("static", (1, 1)), ("raw", (2, 1))])
def test_head_filters(mode, expected):
    ev = Evaluator(KNOWN, 5, 1, filter=mode)
    g, e = ev.counts(HEAD_S, HEAD_Q)
    assert (g[0], e[0]) == expected


def test_tie_policies_by_hand():
    # greater = 0, equal = 2 (raw filter on the tail query): ranks 1 / 3 / 2, expectation over ranks 1, 2, 3
    cases = {"optimistic": (1.0, 1.0, 1.0), "pessimistic": (1 / 3, 3.0, 0.0), "average": (0.5, 2.0, 0.0),
             "expected": ((1 + 1 / 2 + 1 / 3) / 3, 2.0, 1 / 3)}
    ev = Evaluator(KNOWN, 5, 1, filter="raw")
    for ties, (mrr, mr, h1) in cases.items():
        m = ev.eval(TAIL_S, TAIL_Q, ties=ties)
        assert m["mrr"] == pytest.approx(mrr) and m["mr"] == pytest.approx(mr) and m["hits@1"] == pytest.approx(h1)
        assert m["hits@3"] == pytest.approx(1.0) and m["count"] == 1


def test_expected_metrics_large_ties():
    # rank uniform on 10..13: hits@10 = 1/4, MRR = mean(1/10, 1/11, 1/12, 1/13)
    m = metrics_from_counts([9], [3], "expected")
    assert m["hits@10"] == pytest.approx(0.25) and m["hits@3"] == 0
    assert m["mrr"] == pytest.approx(np.mean([1 / k for k in range(10, 14)]), rel=1e-12)
    # huge ties: stays finite and matches the harmonic-number formula
    m = metrics_from_counts([0], [100000], "expected")
    h = sum(1 / k for k in range(1, 100002))
    assert m["mrr"] == pytest.approx(h / 100001, rel=1e-9)


def test_micro_average_over_head_and_tail():
    ev = Evaluator(KNOWN, 5, 1)
    m = ev.eval(np.concatenate([TAIL_S, HEAD_S]), np.concatenate([TAIL_Q, HEAD_Q]), ties="average")
    assert m["mrr"] == pytest.approx((1 / 1.5 + 1 / 2.5) / 2) and m["count"] == 2


def test_candidate_restriction_and_bad_input():
    ev = Evaluator(None, 5, 1, filter="raw", candidates=np.array([True, True, False, True, True]))
    g, e = ev.counts(TAIL_S, TAIL_Q)
    assert (g[0], e[0]) == (0, 1)
    with pytest.raises(ValueError, match="shape"):
        ev.counts(TAIL_S[:, :4], TAIL_Q)
    with pytest.raises(ValueError, match="NaN"):
        ev.counts(np.array([[np.nan] * 5]), TAIL_Q)
    with pytest.raises(ValueError, match="tie policy"):
        Evaluator(None, 5, 1, ties="random")


def _toy():
    splits = {"train": np.array([[0, 0, 1, 0], [1, 1, 2, 1]]),
              "valid": np.array([[0, 0, 2, 1]]),
              "test": np.array([[0, 0, 1, 2], [0, 0, 2, 2], [2, 1, 0, 2], [0, 0, 3, 2]])}
    return TKG("toy", splits, np.array(list("abcd")), np.array(["r0", "r1"]), TimeEncoding("int"))


def test_harness_scores_each_distinct_query_once_and_matches_evaluator():
    tkg = _toy()
    task = transductive(tkg)

    class Counting:
        def __init__(self):
            self.asked = []
            self.rng = np.random.default_rng(7)

        def score(self, task, queries):
            self.asked.extend(map(tuple, queries))
            return self.rng.random((len(queries), task.num_entities))

    model = Counting()
    result = evaluate(model, task, batch_size=2)
    assert len(model.asked) == len(set(model.asked))
    # tail queries (0,0,?,2) x3 share one score vector; 8 queries in total, 6 distinct (s, r, tau)
    assert result.metrics["count"] == 8 and len(model.asked) == 6
    times = [q[2] for q in model.asked]
    assert times == sorted(times)
    # the same numbers as calling the evaluator directly on full score rows
    ev = Evaluator(tkg.facts(), 4, 2)
    rng = np.random.default_rng(7)
    table = {}
    for lo in range(0, 6, 2):
        rows = rng.random((2, 4))
        for q, row in zip(model.asked[lo:lo + 2], rows):
            table[q] = row
    scores = np.stack([table[(s, r, t)] for s, r, _, t in result.queries])
    g, e = ev.counts(scores, result.queries)
    assert np.array_equal(g, result.greater) and np.array_equal(e, result.equal)
    assert math.isclose(result.metrics["mrr"], metrics_from_counts(g, e)["mrr"])
