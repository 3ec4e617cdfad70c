"""The score a stopped candidate is evaluated with and exported as (docs/design.md §13, "The score
of a stopped candidate"): the published one under swords and curtail, and under adaptive the score
expected with the design's ten labels; worked out by hand."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from analysis import services
from annotation.models import Benchmark
from schemes.swords.evaluation.gold import BenchmarkGold
from schemes.swords.stopping import GRID, MixturePrior, Prior, expected_counts, posterior_mean
from tests.analysis.labelled import labelled_benchmark

UNIFORM = Prior(1.0, 1.0)


def test_the_labels_a_stop_saved_count_at_the_posterior_share() -> None:
    # 6 accepts of 6 under Beta(1, 1): mean 7/8; the 4 labels saved add 3.5 accepts and 0.5 rejects.
    assert expected_counts(6, 0, 6, maximum=10, prior=UNIFORM) == pytest.approx((9.5, 0.5))
    # 1 accept, 1 reject, 1 abstain (3 valid labels) under Beta(2, 6): mean 3/11; 7 labels saved.
    accepts, rejects = expected_counts(1, 1, 3, maximum=10, prior=Prior(2.0, 6.0))
    assert (accepts, rejects) == pytest.approx((1 + 21 / 11, 1 + 56 / 11))
    # A candidate with the design's ten labels keeps the published counts, whatever the prior.
    assert expected_counts(6, 3, 10, maximum=10, prior=UNIFORM) == (6.0, 3.0)


def test_a_mixture_prior_reads_its_posterior_mean_on_the_grid() -> None:
    # All the weight on shares 0.2 and 0.8, equally: after 2 accepts of 2 the posterior weighs them
    # 0.04 : 0.64, so the mean is (0.04 * 0.2 + 0.64 * 0.8) / 0.68 = 0.52 / 0.68.
    weights = tuple(0.5 if share in (0.2, 0.8) else 0.0 for share in GRID)
    prior = MixturePrior(weights)
    assert posterior_mean(2, 2, prior=prior) == pytest.approx(0.52 / 0.68)
    assert expected_counts(2, 0, 2, maximum=10, prior=prior) == pytest.approx((2 + 8 * 0.52 / 0.68, 8 * 0.16 / 0.68))


def test_counts_that_do_not_fit_are_refused() -> None:
    with pytest.raises(ValueError, match="must fit in the labels"):
        expected_counts(2, 2, 3, maximum=10, prior=UNIFORM)


def _benchmark(settings: dict[str, str]) -> Benchmark:
    benchmark = labelled_benchmark(
        f"scored-{'-'.join(settings.values()) or 'default'}",
        [
            (
                "ran",
                "verb",
                [("sprinted", ["coinco"], "AAAA"), ("jogged", ["thesaurus"], "AR"), ("walked", ["thesaurus"], "RRU")],
            ),
            ("quick", "adj", [("fast", ["coinco"], "AAARRRAAAR")]),
        ],
    )
    benchmark.scheme_settings = settings
    benchmark.save()
    return benchmark


def _scores(benchmark: Benchmark) -> dict[str, float]:
    gold = BenchmarkGold(benchmark)
    return {text: score for target in gold.targets.values() for text, score in target.scores.items()}


@pytest.mark.django_db
@pytest.mark.parametrize("settings", [{}, {"stopping_policy": "curtail"}, {"stopping_policy": "adaptive"}])
def test_swords_curtail_and_adaptive_by_default_evaluate_the_published_score(settings: dict[str, str]) -> None:
    assert _scores(_benchmark(settings)) == pytest.approx({"sprint": 1.0, "jog": 0.5, "walk": 0.0, "fast": 0.6})


@pytest.mark.django_db
def test_an_adaptive_benchmark_evaluates_and_exports_the_expected_score(tmp_path: Path) -> None:
    # Under the beta prior, with fewer candidates per source than a fitted prior needs, each source
    # reads Beta(1, 1). sprinted 4 of 4: mean 5/6, 6 saved: (4 + 5) / 10 = 0.9. jogged 1 of 2: mean
    # 1/2, 8 saved: (1 + 4) / 10 = 0.5. walked has no accept: it keeps 0, as a candidate step 2
    # dropped does (its expected counts would be 1.4 and 7.6). fast has its ten labels: 6 / 10.
    benchmark = _benchmark({"stopping_policy": "adaptive", "adaptive_prior": "beta", "adaptive_score": "expected"})

    assert _scores(benchmark) == pytest.approx({"sprint": 0.9, "jog": 0.5, "walk": 0.0, "fast": 0.6})

    folder = tmp_path / "folder"
    services.benchmark_dataset_write(benchmark=benchmark, directory=folder)
    table = pd.read_parquet(folder / "candidates" / "full.parquet").set_index("substitute")
    assert table.loc["sprinted", "score"] == 1.0
    assert table.loc["sprinted", "evaluated_score"] == pytest.approx(0.9)
    assert table.loc["jogged", "evaluated_score"] == pytest.approx(0.5)
    assert table.loc["walked", "evaluated_score"] == 0.0
    card = (folder / "README.md").read_text()
    assert "**Stopping policy**: `adaptive`" in card and "posterior share of accepts" in card


@pytest.mark.django_db
def test_the_card_of_a_swords_benchmark_states_the_published_score(tmp_path: Path) -> None:
    benchmark = _benchmark({})
    folder = tmp_path / "folder"
    services.benchmark_dataset_write(benchmark=benchmark, directory=folder)
    table = pd.read_parquet(folder / "candidates" / "full.parquet").set_index("substitute")
    assert table.loc["walked", "evaluated_score"] == 0.0 and table.loc["walked", "score"] == 0.0
    assert table.loc["sprinted", "evaluated_score"] == 1.0
    assert "the published SWORDS score" in (folder / "README.md").read_text()
