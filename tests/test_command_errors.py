"""Commands fail in one line that says what to do: no settings, a missing file, a value out of range, a
folder that does not exist, a reader that left the pipe; what they did is plain or green, and the long
ones draw a progress bar on a terminal."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import CommandError, call_command

from analysis.target_ids import swords_target_ids
from annotation.models import Benchmark
from tests.analysis.labelled import labelled_benchmark
from tests.crowds.crowd_helpers import make_batch as make_crowd_batch

ROOT = Path(settings.BASE_DIR)
MANAGE = str(ROOT / "manage.py")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def _bare_environment(**extra: str) -> dict[str, str]:
    environment = {key: os.environ[key] for key in ("PATH", "HOME", "LANG") if key in os.environ}
    return {**environment, **extra}


def _labelled() -> Benchmark:
    return labelled_benchmark(
        "cmds",
        [("ran", "verb", [("sprinted", ["coinco"], "AAAR"), ("walked", ["thesaurus"], "RRU")])],
    )


@pytest.mark.parametrize("arguments", [["simulate_crowd", "--help"], ["migrate"]])
def test_without_settings_a_command_says_in_one_line_what_to_set(arguments: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, MANAGE, *arguments],
        env=_bare_environment(),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 1
    assert result.stdout == ""
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "set DEBUG=1 for the embedded default" in lines[0] and "SECRET_KEY" in lines[0]


def test_a_reader_that_leaves_the_pipe_ends_the_export_quietly(tmp_path: Path) -> None:
    environment = _bare_environment(
        DEBUG="1", DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}", DERIVED_CACHE_DIR=str(tmp_path / "cache")
    )
    manage = f"{sys.executable} {MANAGE}"
    prepared = subprocess.run(
        ["bash", "-c", f"{manage} migrate --noinput && {manage} load_demo"],
        env=environment,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert prepared.returncode == 0, prepared.stderr[-2000:]

    # `true` leaves before the export writes its first row: every write meets a closed pipe.
    piped = subprocess.run(
        ["bash", "-c", f"{manage} export_benchmark demo --format candidates-csv --output - | true; echo $?"],
        env=environment,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert piped.stderr == ""
    assert piped.stdout.strip() == "0"  # the pipeline's status is the reader's
    head = subprocess.run(
        ["bash", "-c", f"{manage} export_benchmark demo --format candidates-csv --output - | head -n 1"],
        env=environment,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert head.stderr == "" and head.stdout.startswith("candidate_id,")


@pytest.mark.django_db
def test_a_missing_split_list_or_result_file_is_a_command_error(tmp_path: Path) -> None:
    benchmark = _labelled()

    with pytest.raises(CommandError, match=r"missing\.csv: cannot open the file"):
        call_command("benchmark_split", benchmark.name, "--list", str(tmp_path / "missing.csv"), stdout=io.StringIO())
    with pytest.raises(CommandError, match=r"system\.json: cannot open the file"):
        call_command("evaluate_system", benchmark.name, "--result", str(tmp_path / "system.json"), stdout=io.StringIO())


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("command", "backend", "option", "value", "message"),
    [
        ("prolific_publish", "prolific", "--median-seconds", "-5", "--median-seconds must be"),
        ("prolific_publish", "prolific", "--median-seconds", "0", "--median-seconds must be"),
        ("prolific_publish", "prolific", "--estimated-minutes", "0", "--estimated-minutes must be"),
        ("mturk_publish", "mturk", "--median-seconds", "-5", "--median-seconds must be"),
    ],
)
def test_values_out_of_range_are_refused(command: str, backend: str, option: str, value: str, message: str) -> None:
    batch = make_crowd_batch(hits=1, backend=backend)
    out = io.StringIO()

    with pytest.raises(CommandError, match=message):
        call_command(command, str(batch.pk), "--dry-run", option, value, stdout=out)
    assert out.getvalue() == ""

    # In range, the same dry run prints its plan.
    call_command(command, str(batch.pk), "--dry-run", option, "2", stdout=out)
    assert "Dry run" in out.getvalue()


@pytest.mark.django_db
def test_a_license_the_card_does_not_know_is_refused_and_nothing_is_written(tmp_path: Path) -> None:
    benchmark = _labelled()
    folder = tmp_path / "dataset"

    with pytest.raises(CommandError, match=r"'not-a-license' is not a license the dataset card knows.*cc-by-4\.0"):
        call_command(
            "export_benchmark",
            benchmark.name,
            "--format",
            "dataset",
            "--output",
            str(folder),
            "--license",
            "not-a-license",
            stdout=io.StringIO(),
        )
    assert not folder.exists()


@pytest.mark.django_db
@pytest.mark.parametrize(("format", "name"), [("labels-csv", "x.csv"), ("dataset", "x"), ("stats", "x.json")])
def test_an_output_in_a_folder_that_does_not_exist_is_refused_and_no_folder_is_made(
    tmp_path: Path, format: str, name: str
) -> None:
    benchmark = _labelled()
    missing = tmp_path / "nonexistent"

    with pytest.raises(CommandError, match=r"the folder .*nonexistent does not exist"):
        call_command(
            "export_benchmark",
            benchmark.name,
            "--format",
            format,
            "--output",
            str(missing / name),
            stdout=io.StringIO(),
        )
    assert not missing.exists()


@pytest.mark.django_db
def test_success_lines_are_green_on_stdout_and_never_styled_as_errors(tmp_path: Path) -> None:
    benchmark = _labelled()
    out, err = io.StringIO(), io.StringIO()

    call_command(
        "export_benchmark",
        benchmark.name,
        "--format",
        "labels-csv",
        "--output",
        str(tmp_path / "labels.csv"),
        stdout=out,
        stderr=err,
        force_color=True,
    )
    call_command(
        "benchmark_plot", benchmark.name, "scores", "--output", str(tmp_path / "s.svg"), stdout=out, stderr=err
    )

    assert err.getvalue() == ""
    assert "wrote" in out.getvalue() and "\x1b[31" not in out.getvalue()
    assert "\x1b[32" in out.getvalue()  # Django's SUCCESS style


@pytest.mark.django_db
def test_the_dataset_export_and_an_evaluation_draw_a_bar_on_a_terminal_only(tmp_path: Path) -> None:
    benchmark = _labelled()
    result = tmp_path / "system.json"
    result.write_text(
        json.dumps(
            {
                "substitutes_lemmatized": True,
                "substitutes": {tid: ["sprinted"] for _, tid in swords_target_ids(benchmark)},
            }
        )
    )

    for stream, expected in ((Terminal(), True), (io.StringIO(), False)):
        folder = tmp_path / f"dataset-{expected}"
        call_command(
            "export_benchmark",
            benchmark.name,
            "--format",
            "dataset",
            "--output",
            str(folder),
            stdout=io.StringIO(),
            stderr=stream,
        )
        call_command("evaluate_system", benchmark.name, "--result", str(result), stdout=io.StringIO(), stderr=stream)
        drawn = stream.getvalue()
        assert ("writing the dataset" in drawn) is expected
        assert ("evaluating" in drawn) is expected
        assert (folder / "README.md").is_file()


def test_without_settings_the_list_of_commands_names_what_to_set_without_a_traceback() -> None:
    result = subprocess.run(
        [sys.executable, MANAGE, "--help"],
        env=_bare_environment(),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert "Traceback" not in result.stdout + result.stderr
    assert "set DEBUG=1 for the embedded default" in result.stdout + result.stderr


@pytest.mark.django_db
@pytest.mark.parametrize(("option", "value"), [("--resamples", "-1"), ("--resamples", "0"), ("--min-overlap", "0")])
def test_agreement_refuses_counts_below_one(option: str, value: str) -> None:
    benchmark = _labelled()

    with pytest.raises(CommandError, match=f"{option} must be a whole number >= 1, not {value}"):
        call_command("benchmark_agreement", benchmark.name, option, value, stdout=io.StringIO())


@pytest.mark.django_db
def test_the_inline_refresh_logs_its_result_below_info(caplog: pytest.LogCaptureFixture) -> None:
    from review.services import benchmark_refresh

    benchmark = _labelled()
    with caplog.at_level(logging.DEBUG):
        benchmark_refresh(benchmark=benchmark, full=True)

    refreshed = [record for record in caplog.records if record.getMessage().startswith(f"refreshed {benchmark.name}")]
    assert refreshed and all(record.levelno == logging.DEBUG for record in refreshed)
    # Tasks run inline here: their "succeeded" lines stay out of a command's terminal.
    assert logging.getLogger("celery.app.trace").level == logging.WARNING
