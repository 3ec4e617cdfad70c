"""An import can be undone by its origin: the service, the command, the API and the benchmark page."""

from __future__ import annotations

import importlib
import io
import json
from pathlib import Path
from typing import Any

import pytest
from django.apps import apps
from django.core.management import CommandError, call_command
from django.test import Client
from django.urls import reverse

from annotation.importers import writer
from annotation.models import Benchmark, Candidate, CandidateStage, Context, Import, Label, Target, TargetStage
from annotation.selectors import benchmark_counts, import_list
from annotation.services import ImportRemoval, ImportRemovalRefused, benchmark_import, import_delete
from crowdlex.celery import app as celery_app
from crowdlex.followup import REFRESH_TASK
from tests.annotation.import_helpers import (
    COAT,
    FIXTURES,
    coat_record,
    record,
    snapshot,
    swords_from_db,
    write_jsonl,
)
from tests.base import Cast
from tests.hits.factories import make_batch, make_hit

pytestmark = pytest.mark.django_db

PLAIN = FIXTURES / "swords_small.json"
GZIPPED = FIXTURES / "swords_small.json.gz"
EMPTY = {"contexts": 0, "targets": 0, "candidates": 0, "labels": 0}


def _swords() -> Benchmark:
    benchmark_import(path_or_file=PLAIN, benchmark_name="swords")
    return Benchmark.objects.get(name="swords")


def _two_imports(tmp_path: Path) -> Benchmark:
    """a.jsonl: the river and coat targets with 14 labels; b.jsonl: the river target again, with
    'still' (no labels) and a new candidate 'tranquil' with two labels."""
    benchmark_import(path_or_file=write_jsonl(tmp_path / "a.jsonl", [record(), coat_record()]), benchmark_name="b")
    more = record(
        candidates=[{"text": "still", "sources": ["model"]}, {"text": "tranquil", "labels": ["accept", "reject"]}]
    )
    benchmark_import(path_or_file=write_jsonl(tmp_path / "b.jsonl", [more]), benchmark_name="b")
    return Benchmark.objects.get(name="b")


def _client(user: object) -> Client:
    client = Client()
    client.force_login(user)  # type: ignore[arg-type]
    return client


# The service ---------------------------------------------------------------------------------


def test_removing_the_only_import_empties_the_benchmark_and_counts_what_went() -> None:
    benchmark = _swords()
    removal = import_delete(benchmark=benchmark, origin="swords_small.json")
    assert removal == ImportRemoval(
        benchmark="swords", origin="swords_small.json", dry_run=False, labels=55, candidates=9, targets=3, contexts=4
    )
    assert benchmark_counts(benchmark=benchmark) == EMPTY
    assert not Import.objects.exists()


def test_a_file_that_names_rows_again_in_later_chunks_records_each_row_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rows a chunk creates are recorded without a conflict check; a row named again in a later
    chunk (the same context, target and candidate) is recorded once all the same."""
    monkeypatch.setattr(writer, "CHUNK_TARGETS", 1)
    again = record(candidates=[{"text": "still", "labels": ["reject"]}, {"text": "quiet", "labels": ["accept"]}])
    lines = [record(), coat_record(), again]
    benchmark_import(path_or_file=write_jsonl(tmp_path / "a.jsonl", lines), benchmark_name="b")
    benchmark = Benchmark.objects.get(name="b")
    recorded = Import.objects.get(benchmark=benchmark, origin="a.jsonl")
    through = Import.candidates.through.objects.filter(import_id=recorded.pk)
    assert through.count() == Candidate.objects.filter(target__benchmark=benchmark).count() == 7
    assert recorded.contexts.count() == 2 and recorded.targets.count() == 2
    assert not benchmark_import(path_or_file=tmp_path / "a.jsonl", benchmark_name="b").changed
    assert through.count() == 7

    removal = import_delete(benchmark=benchmark, origin="a.jsonl")
    assert (removal.contexts, removal.targets, removal.candidates, removal.labels) == (2, 2, 7, 16)
    assert benchmark_counts(benchmark=benchmark) == EMPTY


def test_a_dry_run_reports_the_same_removal_and_removes_nothing() -> None:
    benchmark = _swords()
    before = snapshot()
    dry = import_delete(benchmark=benchmark, origin="swords_small.json", dry_run=True)
    assert snapshot() == before
    assert Import.objects.filter(origin="swords_small.json").exists()
    real = import_delete(benchmark=benchmark, origin="swords_small.json")
    assert (dry.dry_run, real.dry_run) == (True, False)
    assert dry.summary().replace("would remove", "removed") == real.summary()


def test_rows_another_import_brought_stay_with_that_imports_labels(tmp_path: Path) -> None:
    benchmark = _two_imports(tmp_path)

    removal = import_delete(benchmark=benchmark, origin="a.jsonl")

    assert (removal.labels, removal.candidates, removal.targets, removal.contexts) == (14, 5, 1, 1)
    assert set(Candidate.objects.values_list("normalized", flat=True)) == {"still", "tranquil"}
    assert list(Label.objects.values_list("origin", flat=True)) == ["b.jsonl", "b.jsonl"]
    assert not Context.objects.filter(text=COAT).exists()
    assert [summary.origin for summary in import_list(benchmark=benchmark)] == ["b.jsonl"]


def test_a_kept_target_that_lost_labels_goes_back_to_step_two(tmp_path: Path) -> None:
    benchmark = _two_imports(tmp_path)
    Target.objects.update(stage=TargetStage.DONE)
    Candidate.objects.update(stage=CandidateStage.FINAL)

    removal = import_delete(benchmark=benchmark, origin="a.jsonl")

    assert removal.targets_reopened == 1
    assert "1 targets other imports keep go back to step 2" in removal.summary()
    calm = Target.objects.get()
    assert calm.stage == TargetStage.REDUCE
    assert set(calm.candidates.values_list("stage", flat=True)) == {CandidateStage.REDUCE}


def test_a_candidate_a_researcher_excluded_stays_excluded_when_its_target_goes_back_to_step_two(
    tmp_path: Path,
) -> None:
    benchmark = _two_imports(tmp_path)
    Target.objects.update(stage=TargetStage.DONE)
    Candidate.objects.update(stage=CandidateStage.FINAL)
    Candidate.objects.filter(normalized="still").update(stage=CandidateStage.EXCLUDED)

    import_delete(benchmark=benchmark, origin="a.jsonl")

    stages = dict(Target.objects.get().candidates.values_list("normalized", "stage"))
    assert stages == {"still": CandidateStage.EXCLUDED, "tranquil": CandidateStage.REDUCE}


def test_a_candidate_holding_labels_of_another_origin_stays_with_its_target_and_context(tmp_path: Path) -> None:
    benchmark_import(path_or_file=write_jsonl(tmp_path / "a.jsonl", [record()]), benchmark_name="b")
    still = Candidate.objects.get(normalized="still")
    Label.objects.create(candidate=still, value="accept", origin="typed-in", position=0)

    removal = import_delete(benchmark=Benchmark.objects.get(name="b"), origin="a.jsonl")

    assert (removal.labels, removal.candidates, removal.targets, removal.contexts) == (5, 2, 0, 0)
    assert list(Candidate.objects.all()) == [still]
    assert still.labels.get().origin == "typed-in"


def test_the_labels_of_a_new_label_set_stay_when_the_first_import_goes() -> None:
    benchmark_import(path_or_file=GZIPPED, benchmark_name="swords")
    benchmark_import(path_or_file=PLAIN, benchmark_name="swords", origin="second-look", new_label_set=True)
    benchmark = Benchmark.objects.get(name="swords")

    removal = import_delete(benchmark=benchmark, origin="swords_small.json.gz")

    assert (removal.labels, removal.candidates, removal.targets, removal.contexts) == (55, 0, 0, 0)
    assert benchmark_counts(benchmark=benchmark) == {"contexts": 4, "targets": 3, "candidates": 9, "labels": 55}
    assert set(Label.objects.values_list("origin", flat=True)) == {"second-look"}


def test_a_removed_import_can_be_imported_again_and_gives_the_file_back_exactly() -> None:
    benchmark = _swords()
    import_delete(benchmark=benchmark, origin="swords_small.json")
    benchmark_import(path_or_file=PLAIN, benchmark_name="swords")
    assert swords_from_db(benchmark) == json.loads(PLAIN.read_text())


def test_removal_is_refused_while_a_batch_has_hits_on_its_targets() -> None:
    benchmark = _swords()
    batch = make_batch(benchmark)
    make_hit(batch, Target.objects.get(word="calm"))
    before = snapshot()

    with pytest.raises(ImportRemovalRefused, match=rf"batches {batch.pk} have HITs on its targets"):
        import_delete(benchmark=benchmark, origin="swords_small.json")

    assert snapshot() == before
    assert Import.objects.exists()


def test_an_unknown_origin_is_refused_naming_the_benchmarks_imports() -> None:
    benchmark = _swords()
    with pytest.raises(Import.DoesNotExist, match=r"no import 'nope' \(its imports: 'swords_small.json'\)"):
        import_delete(benchmark=benchmark, origin="nope")


def test_imports_made_before_they_were_recorded_are_recorded_from_their_labels(tmp_path: Path) -> None:
    benchmark_import(path_or_file=write_jsonl(tmp_path / "a.jsonl", [record(), coat_record()]), benchmark_name="b")
    Import.objects.all().delete()
    migration = importlib.import_module("annotation.migrations.0004_import_records")

    migration.record_earlier_imports(apps, None)

    [summary] = import_list(benchmark=Benchmark.objects.get(name="b"))
    # 'peaceful' has no labels, so nothing says which import brought it.
    assert (summary.origin, summary.contexts, summary.targets, summary.candidates, summary.labels) == (
        "a.jsonl",
        2,
        2,
        5,
        14,
    )


# The command -----------------------------------------------------------------------------------


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command("import_delete", *args, stdout=out)
    return out.getvalue()


def test_the_command_reports_a_dry_run_then_removes() -> None:
    benchmark = _swords()
    dry = _run("swords", "swords_small.json", "--dry-run")
    assert "Import swords_small.json of swords would remove 55 labels, 9 candidates, 3 targets and 4 contexts" in dry
    assert benchmark_counts(benchmark=benchmark)["labels"] == 55
    report = json.loads(_run("swords", "swords_small.json", "--json"))
    assert (report["dry_run"], report["labels"], report["contexts"]) == (False, 55, 4)
    assert benchmark_counts(benchmark=benchmark) == EMPTY


def test_the_command_names_what_it_cannot_remove() -> None:
    benchmark = _swords()
    with pytest.raises(CommandError, match="no benchmark named 'nope'"):
        _run("nope", "swords_small.json")
    with pytest.raises(CommandError, match=r"has no import 'other\.json'"):
        _run("swords", "other.json")
    make_hit(make_batch(benchmark), Target.objects.get(word="calm"))
    with pytest.raises(CommandError, match="crowd work is never removed with an import"):
        _run("swords", "swords_small.json")


# The API ---------------------------------------------------------------------------------------


def test_the_api_lists_imports_and_removes_one_by_origin(cast: Cast) -> None:
    origin = "release 1/part?2"
    benchmark_import(path_or_file=PLAIN, benchmark_name="swords", origin=origin)
    client = _client(cast.researcher)

    [listed] = client.get(reverse("api-import-list", args=["swords"])).json()["results"]
    assert {key: listed[key] for key in ("origin", "new_label_set", "contexts", "targets", "candidates", "labels")} == {
        "origin": origin,
        "new_label_set": False,
        "contexts": 4,
        "targets": 3,
        "candidates": 9,
        "labels": 55,
    }

    url = reverse("api-import-delete", args=["swords", origin])
    dry = client.delete(f"{url}?dry_run=true")
    assert dry.status_code == 200, dry.content
    assert (dry.json()["dry_run"], dry.json()["labels"]) == (True, 55)
    assert Label.objects.count() == 55

    removed = client.delete(url)
    assert removed.status_code == 200
    assert removed.json() == {
        "benchmark": "swords",
        "origin": origin,
        "dry_run": False,
        "labels": 55,
        "candidates": 9,
        "targets": 3,
        "contexts": 4,
        "targets_reopened": 0,
    }
    gone = client.delete(url)
    assert gone.status_code == 404
    assert "has no import" in gone.json()["detail"]


def test_the_api_answers_409_while_crowd_work_depends_on_the_import(cast: Cast) -> None:
    benchmark = _swords()
    make_hit(make_batch(benchmark), Target.objects.get(word="calm"))
    response = _client(cast.researcher).delete(reverse("api-import-delete", args=["swords", "swords_small.json"]))
    assert response.status_code == 409
    assert "crowd work is never removed" in response.json()["detail"]
    assert Label.objects.count() == 55


def test_annotators_may_not_list_or_remove_imports(cast: Cast) -> None:
    _swords()
    client = _client(cast.alice)
    assert client.get(reverse("api-import-list", args=["swords"])).status_code == 403
    assert client.delete(reverse("api-import-delete", args=["swords", "swords_small.json"])).status_code == 403
    assert Label.objects.count() == 55


# The benchmark page ---------------------------------------------------------------------------


def test_the_benchmark_page_lists_imports_with_their_counts_and_a_remove_link(cast: Cast) -> None:
    _swords()
    page = _client(cast.researcher).get(reverse("benchmark-detail", args=["swords"]))
    text = page.content.decode()
    assert "<code>swords_small.json</code>" in text
    assert '<td class="num">9</td>' in text and '<td class="num">55</td>' in text
    assert reverse("import-delete", args=["swords", "swords_small.json"]) in text


def test_the_page_shows_what_would_go_then_removes_on_confirmation(cast: Cast) -> None:
    benchmark = _swords()
    client = _client(cast.researcher)
    url = reverse("import-delete", args=["swords", "swords_small.json"])

    confirm = client.get(url)
    assert confirm.status_code == 200
    assert b"Remove swords_small.json</button>" in confirm.content
    assert b"55 labels imported under it" in confirm.content
    assert b"9 candidates, 3 targets and 4 contexts" in confirm.content
    assert benchmark_counts(benchmark=benchmark)["labels"] == 55

    done = client.post(url, follow=True)
    assert done.redirect_chain == [(reverse("benchmark-detail", args=["swords"]), 302)]
    assert b"removed 55 labels, 9 candidates, 3 targets and 4 contexts" in done.content
    assert b"Nothing imported yet." in done.content
    assert benchmark_counts(benchmark=benchmark) == EMPTY


def test_the_page_says_why_an_import_cannot_be_removed(cast: Cast) -> None:
    benchmark = _swords()
    make_hit(make_batch(benchmark), Target.objects.get(word="calm"))
    client = _client(cast.researcher)
    url = reverse("import-delete", args=["swords", "swords_small.json"])
    for response in (client.get(url), client.post(url)):
        assert response.status_code == 409
        assert b"crowd work is never removed with an import" in response.content
        assert b"Remove swords_small.json</button>" not in response.content
    assert Label.objects.count() == 55


def test_only_researchers_reach_the_remove_page_of_a_known_import(cast: Cast) -> None:
    _swords()
    url = reverse("import-delete", args=["swords", "swords_small.json"])
    assert _client(cast.alice).post(url).status_code == 403
    assert _client(cast.researcher).get(reverse("import-delete", args=["swords", "nope"])).status_code == 404
    assert Label.objects.count() == 55


def test_an_import_and_a_removal_with_labels_ask_the_pipeline_to_refresh(
    monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    queued: list[int] = []
    monkeypatch.setattr(celery_app.tasks[REFRESH_TASK], "delay", queued.append)
    with django_capture_on_commit_callbacks(execute=True):
        benchmark = _swords()
    assert queued == [benchmark.pk]
    with django_capture_on_commit_callbacks(execute=True):
        import_delete(benchmark=benchmark, origin=_origin(benchmark), dry_run=True)
    assert queued == [benchmark.pk]
    with django_capture_on_commit_callbacks(execute=True):
        import_delete(benchmark=benchmark, origin=_origin(benchmark))
    assert queued == [benchmark.pk, benchmark.pk]


def _origin(benchmark: Benchmark) -> str:
    return benchmark.imports.get().origin
