import gzip
import io
import json
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from analysis import services
from annotation.models import Benchmark, Candidate, Context, Label, Target, Worker, WorkerKind
from annotation.services import benchmark_import
from hits.models import HIT, Assignment, AssignmentStatus, Batch
from tests.analysis.swords_check import assert_loadable

pytestmark = pytest.mark.django_db

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "swords_small.json"


def _export(benchmark: Benchmark, format: str = "swords") -> str:
    out = io.StringIO()
    services.benchmark_export(benchmark=benchmark, format=format, out=out)
    return out.getvalue()


def test_an_imported_file_exports_back_byte_for_byte() -> None:
    benchmark_import(path_or_file=FIXTURE, benchmark_name="small")
    exported = _export(Benchmark.objects.get(name="small"))
    assert json.loads(exported) == json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert exported == FIXTURE.read_text(encoding="utf-8")
    assert_loadable(json.loads(exported))


def test_the_export_imports_again_to_the_same_file(tmp_path: Path) -> None:
    benchmark_import(path_or_file=FIXTURE.with_suffix(".json.gz"), benchmark_name="small")
    first = tmp_path / "first.json.gz"
    services.benchmark_export_to_path(benchmark=Benchmark.objects.get(name="small"), format="swords", path=first)
    benchmark_import(path_or_file=first, benchmark_name="again")
    again = _export(Benchmark.objects.get(name="again"))
    assert again == gzip.decompress(first.read_bytes()).decode("utf-8")


def test_rows_created_here_get_library_ids_and_sources() -> None:
    benchmark = Benchmark.objects.create(name="native")
    context = Context.objects.create(benchmark=benchmark, text="They Ran home quickly.")
    target = Target.objects.create(benchmark=benchmark, context=context, word="Ran", offset=5, pos="verb", lemma="run")
    hurried = Candidate.objects.create(target=target, text="Hurried", sources=["coinco", "thesaurus"])
    Candidate.objects.create(target=target, text="walked", sources=["thesaurus"])  # no label yet: left out
    for position, value in enumerate(["accept", "abstain", "reject"]):
        Label.objects.create(candidate=hurried, value=value, origin="native", position=position)
    data = json.loads(_export(benchmark))
    assert_loadable(data)
    (target_item,) = data["targets"].values()
    assert (target_item["target"], target_item["pos"], target_item["extra"]) == ("Ran", "VERB", {"lemma": "run"})
    (substitute,) = data["substitutes"].values()
    assert substitute["substitute"] == "Hurried"
    assert substitute["extra"] == {"sources": ["coinco", "thesaurus"]}
    assert list(data["substitute_labels"].values()) == [["TRUE", "UNSURE", "FALSE"]]
    assert data["substitutes_lemmatized"] is True


def test_labels_of_filtered_assignments_are_not_exported(cast: object) -> None:
    benchmark = Benchmark.objects.create(name="collected")
    context = Context.objects.create(benchmark=benchmark, text="A calm sea.")
    target = Target.objects.create(benchmark=benchmark, context=context, word="calm", offset=2, pos="adj")
    candidate = Candidate.objects.create(target=target, text="still", sources=["coinco"])
    batch = Batch.objects.create(benchmark=benchmark, step=2)
    hit = HIT.objects.create(batch=batch, target=target, part=0, assignments_required=3)
    now = timezone.now()
    for name, value, filtered in [("alice", "accept", False), ("sam", "reject", True), ("bob", "reject", False)]:
        worker = Worker.objects.get(kind=WorkerKind.LOCAL, external_id=name)
        assignment = Assignment.objects.create(
            hit=hit,
            worker=worker,
            status=AssignmentStatus.SUBMITTED,
            filtered=filtered,
            claimed_at=now,
            deadline=now + timedelta(minutes=30),
            submitted_at=now,
        )
        Label.objects.create(candidate=candidate, value=value, worker=worker, assignment=assignment)
    data = json.loads(_export(benchmark))
    assert list(data["substitute_labels"].values()) == [["TRUE", "FALSE"]]
    labels_csv = _export(benchmark, "labels-csv").splitlines()
    assert len(labels_csv) == 3 and "local:sam" not in "".join(labels_csv)
    assert services.benchmark_statistics(benchmark=benchmark)["labels"] == 2


def test_a_marked_re_annotation_stays_out_of_the_swords_file() -> None:
    benchmark_import(path_or_file=FIXTURE, benchmark_name="small")
    benchmark = Benchmark.objects.get(name="small")
    original = _export(benchmark)
    for candidate in Candidate.objects.filter(target__benchmark=benchmark):
        Label.objects.create(candidate=candidate, value="accept", origin="second-look", position=0)
    assert _export(benchmark) != original
    services.benchmark_reannotation_set(benchmark=benchmark, origin="second-look")
    assert _export(benchmark) == original
