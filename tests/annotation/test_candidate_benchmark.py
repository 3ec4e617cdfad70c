"""Each candidate names its target's benchmark (docs/design.md §7, "Candidates by benchmark"): whichever
path wrote it (an import of every scheme's formats and of our own, by COPY and by the portable
inserts, candidates added to targets an import finds, WordNet's and a language model's candidates,
a worker's proposals, the demo data, the ORM and the admin), in an installation holding other
benchmarks; the database refuses a candidate naming another benchmark than its target's and carries
a target's move to its candidates; the migration's fill names it for candidates written before; and
the data browser's candidates of one benchmark are that benchmark's alone."""

from __future__ import annotations

import importlib
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.db import IntegrityError, connection, transaction
from django.db.models import F
from django.urls import reverse

from annotation.importers import writer
from annotation.models import Benchmark, Candidate, Context, Target
from annotation.services import ModelRequest, benchmark_import, candidates_add, demo_load
from crowdlex.dialect import JsonListHolds
from tests.annotation.fake_chat import FakeChat, fake_chat, substitutes
from tests.annotation.import_helpers import FIXTURES, coat_record, record, write_csv, write_jsonl
from tests.base import Cast
from tests.hits.submitted_work import generation_work

pytestmark = pytest.mark.django_db

# A file of each format a benchmark of each scheme takes: the scheme's released formats and our own.
SCHEME_FILES = {
    "swords": ("swords", FIXTURES / "swords_small.json"),
    "prolex": ("prolex", FIXTURES / "prolex_small.csv"),
    "sws": ("sws", FIXTURES / "sws_small.json"),
    "tsar": ("tsar", FIXTURES / "tsar2022" / "tsar2022_en_trial_gold.tsv"),
}


@pytest.fixture
def fake(settings: Any) -> Iterator[FakeChat]:
    with fake_chat() as server:
        settings.OPENAI_BASE_URL = server.base_url
        settings.OPENAI_API_KEY = "sk-test"
        settings.LLM_BACKOFF_SECONDS = 0.01
        settings.LLM_REQUESTS_PER_MINUTE = 60_000
        yield server


def _misplaced() -> int:
    """Candidates whose own benchmark is not their target's."""
    return Candidate.objects.exclude(benchmark_id=F("target__benchmark_id")).count()


def _own(benchmark: Benchmark) -> set[int]:
    return set(Candidate.objects.filter(target__benchmark=benchmark).values_list("pk", flat=True))


def _numbered_apart() -> None:
    """Targets numbered far apart from benchmarks, so a candidate naming its target for its benchmark
    shows: 5,000 targets written and deleted (ids are never given twice, on either database)."""
    scratch = Benchmark.objects.create(name="numbered-apart")
    context = Context.objects.create(benchmark=scratch, text="A scratch context.")
    Target.objects.bulk_create(
        Target(benchmark=scratch, context=context, word="scratch", offset=number, pos="noun") for number in range(5000)
    )
    scratch.delete()


def _checked_now() -> None:
    """The deferred foreign keys checked now, as the commit would."""
    connection.check_constraints()


def test_every_writer_of_every_scheme_names_the_targets_benchmark(
    cast: Cast, tmp_path: Path, fake: FakeChat, monkeypatch: pytest.MonkeyPatch
) -> None:
    _numbered_apart()
    written: list[Benchmark] = []
    # Every scheme's released format, each into a benchmark of that scheme, after other benchmarks.
    for scheme, (fmt, source) in SCHEME_FILES.items():
        path = tmp_path / source.name
        shutil.copyfile(source, path)
        benchmark_import(path_or_file=path, benchmark_name=f"released-{scheme}", fmt=fmt)
        written.append(Benchmark.objects.get(name=f"released-{scheme}"))
    assert {benchmark.scheme for benchmark in written} == set(SCHEME_FILES)
    # TSAR-2022's file holds no candidates: our own format brings some to its benchmark.
    jsonl = write_jsonl(tmp_path / "own.jsonl", [record(), coat_record()])
    benchmark_import(path_or_file=jsonl, benchmark_name="released-tsar")
    # Our own formats; a second file adds a candidate to a target the first import stored.
    benchmark_import(path_or_file=jsonl, benchmark_name="own")
    more = record(candidates=[{"text": "tranquil", "sources": ["coinco"], "labels": ["accept"]}])
    benchmark_import(path_or_file=write_jsonl(tmp_path / "more.jsonl", [more]), benchmark_name="own")
    benchmark_import(path_or_file=write_csv(tmp_path / "own.csv", [record(), coat_record()]), benchmark_name="csv")
    own = Benchmark.objects.get(name="own")
    assert Candidate.objects.filter(target__benchmark=own, text="tranquil").exists()
    written += [own, Benchmark.objects.get(name="csv")]
    # WordNet's candidates and a language model's, added to the targets of a benchmark holding some.
    candidates_add(benchmark=own, source="wordnet")
    assert Candidate.objects.filter(JsonListHolds("sources", "wordnet"), target__benchmark=own).exists()
    fake.script("calm", substitutes("placid", "unruffled"))
    fake.script("picked", substitutes("opted for"))
    candidates_add(benchmark=own, source="llm", model=ModelRequest(model="fake-model", per_target=2))
    assert Candidate.objects.filter(target__benchmark=own, text="placid").exists()
    # A worker's proposals (SWORDS's first step), and the demo data.
    proposed, _ = generation_work(cast)
    assert Candidate.objects.filter(JsonListHolds("sources", "crowd"), target__benchmark=proposed).exists()
    demo_load()
    written += [proposed, Benchmark.objects.get(name="demo")]
    # The portable inserts (SQLite's, without COPY).
    monkeypatch.setattr(writer, "bulk_copy", lambda: False)
    benchmark_import(path_or_file=jsonl, benchmark_name="portable")
    written.append(Benchmark.objects.get(name="portable"))

    assert _misplaced() == 0
    for benchmark in written:
        own_ids = _own(benchmark)
        # Smart Word Suggestions' items are sentences: its file's substitutes stay with them, no candidate.
        assert bool(own_ids) == (benchmark.scheme != "sws"), benchmark.name
        assert set(Candidate.objects.filter(benchmark=benchmark).values_list("pk", flat=True)) == own_ids
    _checked_now()


def test_candidates_written_through_the_orm_or_the_admin_name_their_targets_benchmark(cast: Cast, client) -> None:
    _numbered_apart()
    first = Benchmark.objects.create(name="first")
    second = Benchmark.objects.create(name="second")
    mine, theirs = (
        Target.objects.create(
            benchmark=benchmark,
            context=Context.objects.create(benchmark=benchmark, text="The cat sat."),
            word="sat",
            offset=8,
            pos="verb",
        )
        for benchmark in (second, first)
    )
    created = Candidate.objects.create(target=mine, text="perched")
    Candidate.objects.bulk_create([Candidate(target_id=mine.pk, text="rested", normalized="rested")])
    mine.candidates.create(text="lounged")
    Candidate.objects.bulk_create([Candidate(target=mine, text="squatted", normalized="squatted")])
    assert set(Candidate.objects.filter(benchmark=second).values_list("text", flat=True)) == {
        "perched",
        "rested",
        "lounged",
        "squatted",
    }
    # Saved with another target, and a sources-only update that leaves it be.
    created.target = theirs
    created.save()
    assert Candidate.objects.get(pk=created.pk).benchmark_id == first.pk
    created.sources = ["coinco"]
    created.save(update_fields=["sources"])
    assert _misplaced() == 0

    client.force_login(User.objects.create_superuser("root", password="x"))
    form = client.get(reverse("admin:annotation_candidate_add")).context["adminform"].form
    assert "benchmark" not in form.fields
    fields = {"text": "settled", "sources": "[]", "stage": "reduce", "external_id": "", "cefr": "", "extra": "{}"}
    response = client.post(reverse("admin:annotation_candidate_add"), {**fields, "target": mine.pk})
    assert response.status_code == 302, response.content[:500]
    added = Candidate.objects.get(text="settled")
    assert added.benchmark_id == second.pk
    response = client.post(
        reverse("admin:annotation_candidate_change", args=[added.pk]), {**fields, "target": theirs.pk}
    )
    assert response.status_code == 302, response.content[:500]
    assert Candidate.objects.get(pk=added.pk).benchmark_id == first.pk
    assert _misplaced() == 0
    _checked_now()


@pytest.mark.production_database("the key of a candidate's (target, benchmark) is declared on PostgreSQL alone")
def test_the_database_refuses_a_candidate_naming_another_benchmark_and_moves_a_targets_candidates() -> None:
    first = Benchmark.objects.create(name="first")
    second = Benchmark.objects.create(name="second")
    context = Context.objects.create(benchmark=first, text="The cat sat.")
    target = Target.objects.create(benchmark=first, context=context, word="sat", offset=8, pos="verb")
    candidate = Candidate.objects.create(target=target, text="perched")
    table = Candidate._meta.db_table
    with pytest.raises(IntegrityError), transaction.atomic(), connection.cursor() as cursor:
        cursor.execute(f"UPDATE {table} SET benchmark_id = %s WHERE id = %s", [second.pk, candidate.pk])
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
    with pytest.raises(IntegrityError), transaction.atomic():
        Candidate.objects.bulk_create(
            [Candidate(target=target, benchmark_id=second.pk, text="rested", normalized="rested")]
        )
        _checked_now()
    assert Candidate.objects.get(pk=candidate.pk).benchmark_id == first.pk
    # A target moved to another benchmark (the admin lets an owner of both do it) takes its candidates.
    Target.objects.filter(pk=target.pk).update(benchmark=second)
    assert Candidate.objects.get(pk=candidate.pk).benchmark_id == second.pk
    _checked_now()


def test_the_migrations_fill_names_the_benchmark_of_candidates_written_before(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "own.jsonl", [record(), coat_record()])
    for name in ("first", "second"):
        benchmark_import(path_or_file=path, benchmark_name=name)
    first, second = Benchmark.objects.get(name="first"), Benchmark.objects.get(name="second")
    with connection.cursor() as cursor:
        # Candidates as a wrong writer would leave them (the foreign key is checked at the commit).
        cursor.execute(f"UPDATE {Candidate._meta.db_table} SET benchmark_id = %s", [first.pk])
    assert _misplaced() == len(_own(second)) > 0
    fill = importlib.import_module("annotation.migrations.0034_candidate_benchmark").FILL
    with connection.cursor() as cursor:
        cursor.execute(fill)
    assert _misplaced() == 0
    assert set(Candidate.objects.filter(benchmark=second).values_list("pk", flat=True)) == _own(second)
    _checked_now()


def test_the_data_browsers_candidates_of_a_benchmark_are_its_own(cast: Cast, client, tmp_path: Path) -> None:
    first_file = write_jsonl(tmp_path / "first.jsonl", [record(), coat_record()])
    second_file = write_jsonl(tmp_path / "second.jsonl", [record()])
    benchmark_import(path_or_file=first_file, benchmark_name="first", created_by=cast.researcher)
    benchmark_import(path_or_file=second_file, benchmark_name="second", created_by=cast.researcher)
    client.force_login(cast.researcher)
    for name in ("first", "second"):
        benchmark = Benchmark.objects.get(name=name)
        page = client.get(f"/benchmarks/{name}/data/candidates.csv")
        assert page.status_code == 200
        rows = b"".join(page.streaming_content if page.streaming else [page.content]).decode().splitlines()[1:]
        assert {int(row.split(",")[0]) for row in rows} == _own(benchmark)
        page = client.get(f"/benchmarks/{name}/data/candidates/")
        assert page.status_code == 200
        assert page.context["page"].count == len(_own(benchmark))


@pytest.mark.production_database("reads PostgreSQL's catalog and the plan of its check of a foreign key")
def test_the_check_of_a_candidates_key_probes_one_target_whatever_the_statistics() -> None:
    """No index on targets leads with the benchmark without ending with the id, and the key's check,
    planned generic on a table PostgreSQL never analyzed, probes (benchmark, id) or the id: the
    check does not read a benchmark's targets per candidate (docs/design.md §7, "Candidates by
    benchmark")."""
    benchmark = Benchmark.objects.create(name="probed")
    context = Context.objects.create(benchmark=benchmark, text="A warm coat and a bright day.")
    Target.objects.bulk_create(
        Target(benchmark=benchmark, context=context, word="coat", offset=7, pos=pos) for pos in ("noun", "verb", "adj")
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT indexrelid::regclass::text, array(SELECT attname FROM unnest(indkey) WITH ORDINALITY k(n, o) "
            "JOIN pg_attribute ON attrelid = indrelid AND attnum = n ORDER BY o) "
            "FROM pg_index WHERE indrelid = 'annotation_target'::regclass"
        )
        leading = {name: columns for name, columns in cursor.fetchall() if columns[:1] == ["benchmark_id"]}
        assert leading == {"target_with_benchmark": ["benchmark_id", "id"]}
        # The statement of PostgreSQL's check of a foreign key, planned once for any parameters.
        cursor.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        cursor.execute(
            "PREPARE key_check(bigint, bigint) AS SELECT 1 FROM ONLY annotation_target x "
            "WHERE id = $1 AND benchmark_id = $2 FOR KEY SHARE OF x"
        )
        cursor.execute(f"EXPLAIN EXECUTE key_check(1, {benchmark.pk})")
        plan = "\n".join(row[0] for row in cursor.fetchall())
        cursor.execute("DEALLOCATE key_check")
    assert "Filter" not in plan and "Seq Scan" not in plan, plan
    assert "Index Cond: ((benchmark_id = $2) AND (id = $1))" in plan or "Index Cond: (id = $1)" in plan, plan
