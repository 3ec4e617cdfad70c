"""create_batch and export_hits from the command line."""

from __future__ import annotations

import csv
import io
from decimal import Decimal
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Benchmark, Target
from hits.models import HIT, Batch
from hits.services import hits_generate
from schemes.swords.items import ItemKind
from tests.hits.generation_data import build_benchmark

pytestmark = pytest.mark.django_db


@pytest.fixture
def benchmark() -> Benchmark:
    return build_benchmark("cli")


def run(*args: str) -> list[str]:
    out = io.StringIO()
    call_command(*args, stdout=out)
    return out.getvalue().splitlines()


def test_create_batch_prints_the_new_batch_id_last(benchmark: Benchmark) -> None:
    lines = run("create_batch", "cli", "--step", "2", "--seed", "7")
    batch = Batch.objects.get()
    assert lines[-1] == str(batch.pk)
    assert "5 HITs for 3 targets" in lines[0]
    assert (batch.step, batch.seed, batch.assignments_per_hit, batch.backend) == (2, 7, 3, "local")


def test_create_batch_takes_targets_assignments_reward_and_duration(benchmark: Benchmark) -> None:
    bright = Target.objects.get(word="bright")
    lines = run(
        "create_batch", "cli", "--step", "2", "--seed", "1", "--targets", str(bright.pk),
        "--assignments", "5", "--reward", "0.30", "--assignment-minutes", "12",
    )  # fmt: skip
    batch = Batch.objects.get(pk=int(lines[-1]))
    assert list(HIT.objects.filter(batch=batch).values_list("target_id", flat=True)) == [bright.pk]
    assert (batch.assignments_per_hit, batch.reward, batch.assignment_duration.total_seconds()) == (
        5, Decimal("0.30"), 720
    )  # fmt: skip


def test_create_batch_explains_a_refusal(benchmark: Benchmark) -> None:
    run("create_batch", "cli", "--step", "2", "--seed", "1")
    with pytest.raises(CommandError, match="nothing needs collecting"):
        run("create_batch", "cli", "--step", "2", "--seed", "1")
    with pytest.raises(CommandError, match="no benchmark named 'nope'"):
        run("create_batch", "nope", "--step", "2", "--seed", "1")
    with pytest.raises(CommandError, match="step must be one of 1, 2, 3"):
        run("create_batch", "cli", "--step", "4", "--seed", "1")


def test_export_hits_writes_one_row_per_hit_with_every_item(benchmark: Benchmark, tmp_path: Path) -> None:
    batch = hits_generate(benchmark=benchmark, step=2, seed=3)
    path = tmp_path / "hits.csv"
    lines = run("export_hits", str(batch.pk), "--output", str(path))
    assert lines == [f"wrote 5 HITs of batch {batch.pk} to {path}"]
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 5
    header = list(rows[0])
    assert header[:8] == ["hit_id", "batch_id", "target_id", "target", "pos", "offset", "part", "context"]
    assert header[8:11] == ["item_1_text", "item_1_candidate_id", "item_1_kind"]
    assert header[-1] == "item_12_kind"
    for row in rows:
        hit = HIT.objects.get(pk=int(row["hit_id"]))
        assert row["target"] == hit.target.word
        assert row["context"] == hit.target.context.text
        for item in hit.items.all():
            i = item.position
            assert row[f"item_{i}_text"] == item.text
            assert row[f"item_{i}_kind"] == item.kind
            assert row[f"item_{i}_candidate_id"] == ("" if item.control else str(item.candidate_id))
            if item.kind == ItemKind.CONTROL_TARGET:
                assert item.text == row["target"]
        # Short HITs (the one-candidate target has 3 items) leave the remaining columns empty.
        last = hit.items.count()
        assert all(row[f"item_{i}_text"] == "" for i in range(last + 1, 13))


def test_export_hits_to_standard_output_and_refusals(benchmark: Benchmark) -> None:
    batch = hits_generate(benchmark=benchmark, step=2, seed=3)
    lines = run("export_hits", str(batch.pk), "--output", "-")
    assert lines[0].startswith("hit_id,batch_id,target_id")
    assert len(list(csv.reader(lines))) == 6
    with pytest.raises(CommandError, match="no batch with id 999999"):
        run("export_hits", "999999", "--output", "-")
    with pytest.raises(CommandError, match="cannot write"):
        run("export_hits", str(batch.pk), "--output", "/nonexistent-dir/hits.csv")
