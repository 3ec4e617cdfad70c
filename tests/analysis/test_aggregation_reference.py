"""The fits of analysis.aggregation equal a plain, label-by-label EM written from the models'
definitions (docs/design.md §13), on random votes of every shape and at every slice size."""

from unittest import mock

import numpy as np
import numpy.typing as npt
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis import slices
from analysis.aggregation import DAWID_SKENE, MACE, METHODS, UNKNOWN, Votes, aggregate

FLOOR = 1e-12


def reference_fit(
    votes: Votes, method: str, *, max_iterations: int, tolerance: float, smoothing: float
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], float, int, bool]:
    """Posterior, reliability, prior, iterations and convergence, each quantity worked per label."""
    s = smoothing
    n = votes.n_items
    workers = votes.n_workers + 1
    worker = np.where(votes.worker < 0, votes.n_workers, votes.worker).astype(np.intp)
    item = votes.item.astype(np.intp)
    accept = votes.accept.astype(np.float64)
    known = votes.truth != UNKNOWN

    def per_item(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        return np.bincount(item, weights=values, minlength=n).astype(np.float64)

    def per_worker(values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        return np.bincount(worker, weights=values, minlength=workers).astype(np.float64)

    labels = per_item(np.ones(item.size))
    posterior = np.where(labels > 0, per_item(accept) / np.maximum(labels, 1), 0.5)
    posterior[known] = votes.truth[known]
    given_one = given_zero = np.full(workers, 0.5)  # Dawid-Skene: P(accept | class)
    theta, strategy = np.full(workers, 0.5), np.full(workers, 0.5)  # MACE
    prior, iterations, converged = 0.5, 0, False

    def mace_likelihoods() -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """P(the label given | class 1) and P(it | class 0), per label."""
        t, spam_accept = theta[worker], strategy[worker]
        if_one = np.where(accept == 1, t + (1 - t) * spam_accept, (1 - t) * (1 - spam_accept))
        if_zero = np.where(accept == 1, (1 - t) * spam_accept, t + (1 - t) * (1 - spam_accept))
        return np.clip(if_one, FLOOR, 1.0), np.clip(if_zero, FLOOR, 1.0)

    while iterations < max_iterations:
        iterations += 1
        prior = float((posterior.sum() + s) / (n + 2 * s))
        one = posterior[item]  # P(class 1) of each label's item
        if method == DAWID_SKENE:
            given_one = (per_worker(one * accept) + s) / (per_worker(one) + 2 * s)
            given_zero = (per_worker((1 - one) * accept) + s) / (per_worker(1 - one) + 2 * s)
            p1, p0 = np.clip(given_one, FLOOR, 1 - FLOOR)[worker], np.clip(given_zero, FLOOR, 1 - FLOOR)[worker]
            evidence = np.where(accept == 1, np.log(p1) - np.log(p0), np.log(1 - p1) - np.log(1 - p0))
        else:
            if_one, if_zero = mace_likelihoods()
            t = theta[worker]
            honest = np.where(accept == 1, one * t / if_one, (1 - one) * t / if_zero)
            theta = (per_worker(honest) + s) / (per_worker(np.ones(item.size)) + 2 * s)
            strategy = (per_worker((1 - honest) * accept) + s) / (per_worker(1 - honest) + 2 * s)
            if_one, if_zero = mace_likelihoods()
            evidence = np.log(if_one) - np.log(if_zero)
        log_odds = np.log(prior / (1 - prior)) + per_item(evidence)
        updated = 1 / (1 + np.exp(np.clip(-log_odds, -700, 700)))
        updated[known] = votes.truth[known]
        change = float(np.max(np.abs(updated - posterior), initial=0.0))
        posterior = updated
        if change < tolerance:
            converged = True
            break
    reliability = given_one - given_zero if method == DAWID_SKENE else theta
    return posterior, reliability, prior, iterations, converged


@st.composite
def random_votes(draw: st.DrawFn) -> Votes:
    n_items = draw(st.integers(1, 40))
    n_workers = draw(st.integers(0, 6))
    n_labels = draw(st.integers(0, 160))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    item = rng.integers(0, n_items, n_labels)
    if draw(st.booleans()):
        item = np.sort(item)  # grouped by item, as label_arrays gives them
    worker = rng.integers(-1, n_workers, n_labels) if n_workers else np.full(n_labels, -1)
    accept = rng.random(n_labels) < draw(st.floats(0, 1))
    known = rng.random(n_items) < draw(st.sampled_from([0.0, 0.2, 1.0]))
    truth = np.where(known, rng.integers(0, 2, n_items), UNKNOWN)
    narrow = draw(st.booleans())  # label_arrays' 32-bit rows, or 64-bit ones
    dtype = np.int32 if narrow else np.int64
    return Votes(
        item=item.astype(dtype),
        worker=worker.astype(dtype),
        accept=accept,
        truth=truth.astype(np.int64),
        n_workers=n_workers,
    )


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    votes=random_votes(),
    method=st.sampled_from(METHODS),
    slice_rows=st.sampled_from([1, 3, 16, slices.LABEL_SLICE]),
    max_iterations=st.integers(1, 60),
    tolerance=st.sampled_from([1e-3, 1e-6, 1e-12]),
    smoothing=st.sampled_from([0.5, 0.1, 2.0]),
)
def test_a_fit_equals_the_label_by_label_em(
    votes: Votes, method: str, slice_rows: int, max_iterations: int, tolerance: float, smoothing: float
) -> None:
    with mock.patch.object(slices, "LABEL_SLICE", slice_rows):
        fit = aggregate(votes, method=method, max_iterations=max_iterations, tolerance=tolerance, smoothing=smoothing)
    posterior, reliability, prior, iterations, converged = reference_fit(
        votes, method, max_iterations=max_iterations, tolerance=tolerance, smoothing=smoothing
    )
    assert (fit.iterations, fit.converged) == (iterations, converged)
    np.testing.assert_allclose(fit.posterior, posterior, rtol=0, atol=1e-9)
    np.testing.assert_allclose(fit.reliability, reliability, rtol=0, atol=1e-9)
    assert abs(fit.prior - prior) <= 1e-9


def test_a_fit_at_the_default_settings_equals_the_label_by_label_em_on_a_large_crowd() -> None:
    # Thousands of labels over several slices, grouped by item, to convergence.
    rng = np.random.default_rng(11)
    items, workers, labels = 3000, 40, 20_000
    truth = rng.random(items) < 0.1
    item = np.sort(rng.integers(0, items, labels))
    worker = rng.integers(-1, workers, labels)
    right = rng.random(labels) < rng.uniform(0.55, 0.98, workers + 1)[worker]
    votes = Votes(
        item=item.astype(np.int32),
        worker=worker.astype(np.int32),
        accept=np.where(right, truth[item], ~truth[item]),
        truth=np.full(items, UNKNOWN, dtype=np.int64),
        n_workers=workers,
    )
    for method in (DAWID_SKENE, MACE):
        with mock.patch.object(slices, "LABEL_SLICE", 4096):
            fit = aggregate(votes, method=method)
        posterior, reliability, _, iterations, converged = reference_fit(
            votes, method, max_iterations=1000, tolerance=1e-6, smoothing=0.5
        )
        assert fit.converged and converged and fit.iterations == iterations
        np.testing.assert_allclose(fit.posterior, posterior, rtol=0, atol=1e-9)
        np.testing.assert_allclose(fit.reliability, reliability, rtol=0, atol=1e-9)
