"""The refresh benchmark's queue figure: the messages waiting over every sample of the run, by a
nearest-rank percentile (bench.refresh_backlog)."""

from __future__ import annotations

from bench.refresh_backlog import percentile


def test_the_percentile_is_the_smallest_sample_at_or_above_that_share_of_the_run() -> None:
    # Twenty samples: the queue empty most of the run, a burst of 5 on one sample and 3 on another.
    samples = [0] * 12 + [1] * 6 + [3, 5]
    assert percentile(samples, 50) == 0
    assert percentile(samples, 90) == 1  # the 18th of 20
    assert percentile(samples, 95) == 3  # the 19th of 20: one sample in twenty may be longer
    assert percentile(samples, 100) == 5
    assert percentile(list(reversed(samples)), 95) == 3, "in whatever order the samples came"


def test_a_share_between_two_samples_takes_the_higher_one() -> None:
    # Seven samples: 95 % of them is 6.65 samples, so the seventh, the longest, is the 95th percentile.
    samples = [0, 0, 0, 0, 0, 1, 4]
    assert percentile(samples, 95) == 4
    assert percentile(samples, 80) == 1  # 5.6 samples: the sixth


def test_a_run_without_samples_has_an_empty_queue() -> None:
    assert percentile([], 95) == 0


def test_one_sample_is_every_percentile() -> None:
    assert [percentile([4], percent) for percent in (1, 50, 95, 100)] == [4, 4, 4, 4]
