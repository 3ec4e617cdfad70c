"""The claim cycle's figure is the ratio at the offered rate, both sides at that rate; the closed
loop's figures follow as context (bench.claim_cycle)."""

from __future__ import annotations

import pytest

from bench.claim_cycle import (
    DEFAULT_RATE,
    ClientStats,
    Measured,
    argument_parser,
    offered_rates,
    report_context,
    report_figures,
)


def _measured(*, rate: float, gunicorn: float, postgres: float, worked: float) -> Measured:
    stats = ClientStats(start_measuring=0.0, stop=10.0)
    stats.record(1.0, 1.1, 1.2)
    return Measured(stats=[stats], used=[gunicorn, postgres, 1.0, 20.0], load=(1.0, 1.0), worked=worked, rate=rate)


@pytest.mark.parametrize(
    ("argv", "rates"),
    [
        ([], [DEFAULT_RATE, 0.0]),
        (["--rate", "25"], [25.0, 0.0]),
        (["--rate", "25", "--no-closed-loop"], [25.0]),
        # As before the offered rate was the default: a closed loop alone, which gives the figure.
        (["--rate", "0"], [0.0]),
        (["--rate", "0", "--no-closed-loop"], [0.0]),
    ],
)
def test_the_runs_are_the_offered_rate_then_the_closed_loop(argv: list[str], rates: list[float]) -> None:
    assert offered_rates(argument_parser().parse_args(argv)) == rates


def test_the_default_rate_is_forty_cycles_a_second() -> None:
    assert argument_parser().parse_args([]).rate == 40.0


def test_the_figure_is_the_ratio_at_the_offered_rate(capsys: pytest.CaptureFixture[str]) -> None:
    args = argument_parser().parse_args(["--seconds", "10"])
    platform = _measured(rate=40.0, gunicorn=4.0, postgres=3.5, worked=400.0)
    floor = _measured(rate=40.0, gunicorn=2.5, postgres=2.5, worked=399.0)
    report_figures(args, platform, floor, "5 + 8 statements a cycle")
    out = capsys.readouterr().out
    figures = [line for line in out.splitlines() if line.startswith("FIGURE ")]
    assert len(figures) == 2
    assert figures[0].startswith("FIGURE p99 latency of a request (api, 40 cycles/s offered)")
    ratio = "FIGURE claim cycle (api), CPU per cycle in gunicorn + PostgreSQL against its floor: 1.5 x"
    assert figures[1].startswith(ratio)
    assert "40 cycles/s offered to each: platform 4.0 + 3.5 = 7.5 ms (40.0 cycles/s" in out
    assert "floor 2.5 + 2.5 = 5.0 ms (39.9 cycles/s" in out
    assert "WARNING" not in out
    # What a paced run sustained is not what the run of every benchmark paces from.
    assert "cycles per second (api" not in out


def test_a_side_behind_the_offered_rate_is_named(capsys: pytest.CaptureFixture[str]) -> None:
    args = argument_parser().parse_args(["--seconds", "10", "--rate", "60"])
    platform = _measured(rate=60.0, gunicorn=4.0, postgres=3.5, worked=500.0)
    floor = _measured(rate=60.0, gunicorn=2.5, postgres=2.5, worked=600.0)
    report_figures(args, platform, floor, "")
    warnings = [line for line in capsys.readouterr().out.splitlines() if line.startswith("WARNING")]
    assert warnings == [
        "WARNING: the platform sustained 50.0 of the 60 cycles/s offered: "
        "the ratio compares unlike loads (lower --rate)"
    ]


def test_the_closed_loop_is_context_and_not_a_figure(capsys: pytest.CaptureFixture[str]) -> None:
    args = argument_parser().parse_args(["--seconds", "10"])
    platform = _measured(rate=0.0, gunicorn=5.0, postgres=5.0, worked=1500.0)
    floor = _measured(rate=0.0, gunicorn=2.0, postgres=3.0, worked=2900.0)
    report_context(args, platform, floor)
    out = capsys.readouterr().out
    assert "FIGURE" not in out
    assert "cycles per second (api, 64 clients): 150.0" in out
    assert "closed loop, as context: platform 5.0 + 5.0 = 10.0 ms a cycle" in out
    assert "floor 2.0 + 3.0 = 5.0 ms (290.0 cycles/s): 2.00 x its floor" in out


def test_a_closed_loop_alone_gives_the_figure_and_the_throughput(capsys: pytest.CaptureFixture[str]) -> None:
    args = argument_parser().parse_args(["--seconds", "10", "--rate", "0"])
    platform = _measured(rate=0.0, gunicorn=5.0, postgres=5.0, worked=1500.0)
    floor = _measured(rate=0.0, gunicorn=2.0, postgres=3.0, worked=2900.0)
    report_figures(args, platform, floor, "")
    out = capsys.readouterr().out
    assert "FIGURE claim cycle (api), CPU per cycle in gunicorn + PostgreSQL against its floor: 2 x" in out
    assert "FIGURE p99" not in out
    assert "closed loop: platform 5.0 + 5.0 = 10.0 ms" in out
    assert "cycles per second (api, 64 clients): 150.0" in out


@pytest.mark.django_db
def test_the_work_done_before_is_whole_and_counted_as_the_claims_count_it() -> None:
    from django.contrib.auth.models import User
    from django.db.models import Count

    from annotation.models import Label, Worker, WorkerKind
    from bench.claim_cycle import CANDIDATES_PER_HIT, check_counters, seed_history
    from hits.models import HIT, Answer, Assignment, AssignmentStatus, BatchStatus

    users = [User.objects.create(username=f"before{i}") for i in range(4)]
    workers = [Worker.objects.create(kind=WorkerKind.LOCAL, external_id=u.username, user=u).pk for u in users]
    seed_history(hits=5, workers=workers)

    hits = HIT.objects.filter(batch__benchmark__name="claim-cycle-history")
    assert hits.count() == 5
    assert set(hits.values_list("batch__status", flat=True)) == {BatchStatus.CLOSED}
    per_hit = hits.annotate(taken=Count("assignments__worker", distinct=True)).values_list(
        "assignments_active", "taken", "assignments_required"
    )
    assert set(per_hit) == {(3, 3, 3)}
    assert set(Assignment.objects.values_list("status", flat=True)) == {AssignmentStatus.SUBMITTED}
    assert Label.objects.count() == 15 * CANDIDATES_PER_HIT
    assert Answer.objects.count() == 15 * (CANDIDATES_PER_HIT + 2)
    assert check_counters().endswith(": OK")
