"""Long commands draw a progress bar on a terminal and nothing when their output goes elsewhere."""

from __future__ import annotations

import io
from typing import Any

import pytest
from django.core.management import call_command

from crowdlex.progress import progress_bar
from tests.crowds.crowd_helpers import SITE, stubbed_mturk
from tests.crowds.crowd_helpers import make_batch as make_crowd_batch
from tests.review.builders import honest, make_benchmark, simulated, step2_batch, work_once

pytestmark = pytest.mark.django_db


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_a_bar_is_drawn_on_a_terminal_only() -> None:
    terminal, log = Terminal(), io.StringIO()
    with progress_bar(terminal, desc="counting", unit="thing") as on_terminal:
        assert on_terminal is not None
        for done in range(1, 4):
            on_terminal(done, 3)
    with progress_bar(log, desc="counting", unit="thing") as in_a_log:
        assert in_a_log is None

    assert "counting" in terminal.getvalue() and "/3 " in terminal.getvalue()
    assert log.getvalue() == ""


def _run(command: str, *args: str, stderr: io.StringIO) -> None:
    call_command(command, *args, stdout=io.StringIO(), stderr=stderr)


@pytest.mark.parametrize(
    ("command", "arguments", "desc"),
    [
        ("create_batch", ["--step", "2", "--seed", "1"], "planning HITs"),
        ("advance_pipeline", [], "refreshing"),
        ("benchmark_agreement", ["--resamples", "10"], "agreement"),
        ("export_benchmark", ["--format", "labels-csv", "--output", "-"], "exporting labels-csv"),
        ("simulate_crowd", ["--honest", "6", "--spammers", "0", "--targets", "1"], "targets done"),
    ],
)
def test_each_long_command_shows_its_bar_on_a_terminal_and_stays_quiet_in_a_log(
    command: str, arguments: list[str], desc: str
) -> None:
    benchmark = make_benchmark(targets=1, candidates=8)
    if command != "create_batch":
        step2_batch(benchmark)
        work_once(simulated("ann"), benchmark, honest())
    args = [benchmark.name, *arguments]

    terminal = Terminal()
    _run(command, *args, stderr=terminal)
    assert desc in terminal.getvalue()

    if command in ("create_batch", "simulate_crowd"):
        # Once more on fresh targets, this time into a log.
        benchmark = make_benchmark(targets=1, candidates=8)
        if command == "simulate_crowd":
            step2_batch(benchmark)
        args = [benchmark.name, *arguments]
    log = io.StringIO()
    _run(command, *args, stderr=log)
    assert desc not in log.getvalue() and "\r" not in log.getvalue()


def test_publishing_to_mturk_shows_its_hits_posted_on_a_terminal(settings: Any, monkeypatch: Any) -> None:
    settings.SITE_URL = SITE
    batch = make_crowd_batch(hits=2)
    terminal = Terminal()
    with stubbed_mturk(monkeypatch) as stub:
        stub.add_response("get_account_balance", {"AvailableBalance": "10000.00"}, {})
        stub.add_response("create_hit_type", {"HITTypeId": "HT9"})
        for number in (1, 2):
            stub.add_response("create_hit_with_hit_type", {"HIT": {"HITId": f"H{number}", "HITGroupId": "G1"}})
        call_command("mturk_publish", str(batch.pk), "--sandbox", stdout=io.StringIO(), stderr=terminal)

    assert "publishing" in terminal.getvalue() and "HIT" in terminal.getvalue()
