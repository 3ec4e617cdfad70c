"""Dawid-Skene and MACE on hand-worked cases and on simulated crowds with known truth."""

import numpy as np
import pytest

from analysis.aggregation import DAWID_SKENE, MACE, METHODS, UNKNOWN, Votes, aggregate, votes_with_controls


def _votes(item: list[int], worker: list[int], accept: list[int], n_items: int, n_workers: int) -> Votes:
    return Votes(
        item=np.array(item, dtype=np.int64),
        worker=np.array(worker, dtype=np.int64),
        accept=np.array(accept, dtype=bool),
        truth=np.full(n_items, UNKNOWN, dtype=np.int64),
        n_workers=n_workers,
    )


def _crowd(seed: int, *, accuracies: list[float], items: int = 300, share: float = 0.3, always_accept: int = 0):
    """Every worker labels every item: honest ones right with their accuracy, then spammers who accept all."""
    rng = np.random.default_rng(seed)
    truth = rng.random(items) < share
    item, worker, accept = [], [], []
    for row, accuracy in enumerate(accuracies):
        right = rng.random(items) < accuracy
        item.append(np.arange(items))
        worker.append(np.full(items, row))
        accept.append(np.where(right, truth, ~truth))
    for extra in range(always_accept):
        item.append(np.arange(items))
        worker.append(np.full(items, len(accuracies) + extra))
        accept.append(np.ones(items, dtype=bool))
    votes = Votes(
        item=np.concatenate(item),
        worker=np.concatenate(worker),
        accept=np.concatenate(accept),
        truth=np.full(items, UNKNOWN, dtype=np.int64),
        n_workers=len(accuracies) + always_accept,
    )
    return votes, truth


def test_one_dawid_skene_iteration_matches_the_hand_computation() -> None:
    # One worker accepts item 0 and rejects item 1. Start: posteriors (1, 0), so the prior is
    # (1 + 0.5) / (2 + 1) = 0.5; P(accept | acceptable) = (1 + 0.5) / (1 + 1) = 0.75 and
    # P(accept | not) = 0.5 / 2 = 0.25; item 0's odds are 0.75 / 0.25 = 3, so its posterior is 0.75.
    fit = aggregate(_votes([0, 1], [0, 0], [1, 0], 2, 1), method=DAWID_SKENE, max_iterations=1)
    assert fit.posterior == pytest.approx([0.75, 0.25])
    assert fit.reliability[0] == pytest.approx(0.5)
    assert fit.iterations == 1


def test_one_mace_iteration_matches_the_hand_computation() -> None:
    # Start theta = strategy = 0.5: P(label = class) = 0.5 + 0.25 = 0.75, so each label is honest
    # with probability 0.5 / 0.75 = 2/3. theta = (4/3 + 0.5) / (2 + 1) = 11/18, the strategy stays
    # at 0.5; P(accept | acceptable) = 11/18 + 7/36 = 29/36 and P(accept | not) = 7/36.
    fit = aggregate(_votes([0, 1], [0, 0], [1, 0], 2, 1), method=MACE, max_iterations=1)
    assert fit.posterior == pytest.approx([29 / 36, 7 / 36])
    assert fit.reliability[0] == pytest.approx(11 / 18)


@pytest.mark.parametrize("method", METHODS)
def test_a_reliable_worker_outranks_a_random_one(method: str) -> None:
    votes, truth = _crowd(1, accuracies=[0.95, 0.9, 0.85, 0.5])
    fit = aggregate(votes, method=method)
    assert fit.converged
    reliable, random = fit.reliability[0], fit.reliability[3]
    assert reliable > 0.75
    assert abs(random) < 0.2
    assert np.mean((fit.posterior > 0.5) == truth) > 0.95


@pytest.mark.parametrize("method", METHODS)
def test_a_spammer_who_always_accepts_gets_no_reliability_and_moves_no_decision(method: str) -> None:
    votes, truth = _crowd(2, accuracies=[0.9, 0.9, 0.85], always_accept=2)
    fit = aggregate(votes, method=method)
    assert fit.reliability[3] < 0.15 and fit.reliability[4] < 0.15
    assert fit.reliability[0] > 0.7
    # Majority vote over the five is fooled whenever one honest worker errs on a rejectable item.
    majority = np.bincount(votes.item, weights=votes.accept, minlength=truth.size) > 2.5
    aggregated = fit.posterior > 0.5
    assert np.mean(aggregated == truth) > np.mean(majority == truth)
    assert np.mean(aggregated == truth) > 0.95


@pytest.mark.parametrize("method", METHODS)
def test_a_perfect_worker_gets_reliability_near_one(method: str) -> None:
    votes, truth = _crowd(3, accuracies=[1.0, 0.8, 0.75, 0.7, 0.65])
    fit = aggregate(votes, method=method)
    assert fit.converged
    # Soft posteriors on the few items the others outvote keep Dawid-Skene's estimate a little under 1.
    assert fit.reliability[0] > 0.9
    assert fit.reliability[0] > fit.reliability[1:5].max() + 0.2
    assert np.mean((fit.posterior > 0.5) == truth) > 0.99


@pytest.mark.parametrize("method", METHODS)
def test_posteriors_are_probabilities_and_the_fit_converges_to_a_fixed_point(method: str) -> None:
    votes, _ = _crowd(4, accuracies=[0.8, 0.7, 0.6, 0.55], items=120)
    fit = aggregate(votes, method=method, tolerance=1e-9, max_iterations=5000)
    assert fit.converged and fit.iterations < 5000
    assert np.all((fit.posterior >= 0) & (fit.posterior <= 1))
    assert 0 < fit.prior < 1
    again = aggregate(votes, method=method, tolerance=1e-9, max_iterations=fit.iterations + 1)
    assert again.posterior == pytest.approx(fit.posterior, abs=1e-7)
    capped = aggregate(votes, method=method, tolerance=1e-12, max_iterations=2)
    assert capped.iterations == 2 and not capped.converged


@pytest.mark.parametrize("method", METHODS)
def test_the_fit_does_not_depend_on_the_order_of_items_or_labels(method: str) -> None:
    votes, _ = _crowd(5, accuracies=[0.9, 0.75, 0.6], items=80)
    rng = np.random.default_rng(9)
    relabel = rng.permutation(votes.n_items)  # item i becomes item relabel[i]
    shuffle = rng.permutation(votes.item.size)
    permuted = Votes(
        item=relabel[votes.item][shuffle],
        worker=votes.worker[shuffle],
        accept=votes.accept[shuffle],
        truth=votes.truth,
        n_workers=votes.n_workers,
    )
    first, second = aggregate(votes, method=method), aggregate(permuted, method=method)
    assert second.posterior[relabel] == pytest.approx(first.posterior, abs=1e-9)
    assert second.reliability == pytest.approx(first.reliability, abs=1e-9)
    assert aggregate(votes, method=method).posterior.tolist() == first.posterior.tolist()


@pytest.mark.parametrize("method", METHODS)
def test_controls_are_known_answers_that_decide_whom_to_believe(method: str) -> None:
    # Two workers disagree on every candidate: alone, nothing says which is right. Worker 0
    # answers the controls as they expect (accept the copy, reject the distractor), worker 1 the
    # other way: the candidates then follow worker 0.
    candidates = 6
    first = [1, 0, 1, 0, 0, 0]
    item = list(range(candidates)) * 2
    worker = [0] * candidates + [1] * candidates
    accept = first + [1 - value for value in first]
    votes = votes_with_controls(
        candidate=item,
        worker=worker,
        value_accept=accept,
        n_candidates=candidates,
        n_workers=2,
        control_worker=[0, 0, 0, 0, 1, 1, 1, 1],
        control_accept=[1, 0, 1, 0, 0, 1, 0, 1],
        control_truth=[1, 0, 1, 0, 1, 0, 1, 0],
    )
    fit = aggregate(votes, method=method)
    assert fit.posterior[candidates:].tolist() == [1, 0, 1, 0, 1, 0, 1, 0]
    assert ((fit.posterior[:candidates] > 0.5) == np.array(first, dtype=bool)).all()
    assert fit.reliability[0] > fit.reliability[1]


def test_labels_without_a_worker_share_one_pooled_worker() -> None:
    votes = _votes([0, 0, 1, 1], [-1, -1, 0, -1], [1, 1, 0, 0], 2, 1)
    fit = aggregate(votes, method=DAWID_SKENE)
    assert fit.reliability.shape == (2,)
    assert fit.posterior[0] > 0.5 > fit.posterior[1]


def test_an_item_without_labels_sits_at_the_prior_and_bad_input_is_refused() -> None:
    fit = aggregate(_votes([0, 0], [0, 1], [1, 1], 2, 2), method=DAWID_SKENE)
    assert fit.posterior[1] == pytest.approx(fit.prior)
    with pytest.raises(ValueError, match="unknown aggregation method"):
        aggregate(_votes([0], [0], [1], 1, 1), method="vote")
    with pytest.raises(ValueError, match="worker row"):
        _votes([0], [3], [1], 1, 1)
    with pytest.raises(ValueError, match="item row"):
        _votes([2], [0], [1], 1, 1)
