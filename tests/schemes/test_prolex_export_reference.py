"""The ProLex CSV export writes the bytes of a straightforward reference: each row ``prolex_rows``
gives, its cells read from ``dataclasses.asdict`` under the benchmark's columns, written by Python's
``csv`` writer; on a release with quotes, apostrophes, backslashes, commas, line breaks, other
scripts, duplicated entries and every kind of level, one of whose targets experts judged again here."""

from __future__ import annotations

import csv
import dataclasses
import io

import pytest

from analysis.services import benchmark_export
from annotation.models import Benchmark
from annotation.services import benchmark_import
from hits.models import HITItem
from hits.services import assignment_claim_next, assignment_submit, hits_generate
from schemes.prolex.figures import columns_of, prolex_rows
from tests.base import Cast

pytestmark = pytest.mark.django_db

AWKWARD = ["d'accord", 'say "hi"', "back\\slash", "a, b", "line\nbreak", "größer", "日本語", 'don\'t "x"']


def _release() -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(
        [
            "target word",
            "Sentence",
            "acc_subs",
            "unacc_subs",
            "prof_acc_subs",
            "prof_unacc_subs",
            "t_words_cefr",
            "prof_acc_cefr",
            "prof_unacc_cefr",
        ]
    )
    for number, word in enumerate(("calm", "quiet", "still")):
        acc = [*AWKWARD[number:], AWKWARD[number]]
        prof = acc[:2]
        writer.writerow(
            [
                word,
                f'"{word}", she said: the sea was **{word}**, {AWKWARD[number]}.',
                str(acc),
                str(AWKWARD[: number + 1]),
                str(prof),
                str(acc[2:3]),
                "None" if number == 2 else str(number),
                str([6, "None"] if number else [-1, 5]),
                str([number]),
            ]
        )
    return buffer.getvalue().encode()


def _reference(benchmark: Benchmark) -> str:
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    columns = columns_of(benchmark)
    writer.writerow(columns)
    for row in prolex_rows(benchmark=benchmark):
        values = {"target word": row.target, "Sentence": row.sentence, **dataclasses.asdict(row)}
        writer.writerow([value if isinstance(value, str) else str(value) for value in (values[c] for c in columns)])
    return buffer.getvalue()


def test_the_prolex_export_writes_the_references_bytes_for_imported_and_rejudged_rows(cast: Cast) -> None:
    release = _release()
    file = io.BytesIO(release)
    file.name = "prolex.csv"
    benchmark_import(path_or_file=file, benchmark_name="px", fmt="prolex")
    benchmark = Benchmark.objects.get(name="px")
    out = io.StringIO()
    benchmark_export(benchmark=benchmark, format="prolex", out=out)
    # Imported and never judged here: the release itself.
    assert out.getvalue().encode() == release

    # An expert judges the first target's substitutes again: its row is made from the labels.
    first = benchmark.targets.order_by("pk").first()
    assert first is not None
    first.candidates.create(text="serene", sources=[])
    hits_generate(benchmark=benchmark, step=1, seed=1, annotators=[cast.alice.worker], targets=[first])
    while (claim := assignment_claim_next(worker=cast.alice.worker)) is not None:
        items = HITItem.objects.filter(hit=claim.hit)
        assignment_submit(assignment=claim, answers={item.pk: "1" for item in items})
    out = io.StringIO()
    benchmark_export(benchmark=benchmark, format="prolex", out=out)

    assert out.getvalue() == _reference(benchmark)
    assert out.getvalue() != release.decode() and "serene" in out.getvalue()
