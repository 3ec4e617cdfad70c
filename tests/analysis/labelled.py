"""Small benchmarks for the analysis tests, built directly with the ORM."""

from __future__ import annotations

from collections.abc import Sequence

from annotation.models import Benchmark, Candidate, Context, Label, Target, Worker, WorkerKind
from annotation.tallies import tallies_benchmark_recount

VALUE = {"A": "accept", "R": "reject", "U": "abstain"}


def labelled_benchmark(
    name: str,
    targets: Sequence[tuple[str, str, Sequence[tuple[str, Sequence[str], str]]]],
    *,
    origin: str = "fixture",
    workers: Sequence[str] | None = None,
) -> Benchmark:
    """A benchmark from ``[(word, pos, [(candidate, sources, "ARRU..."), ...]), ...]``.

    Each target gets its own context; the i-th label of a candidate is given by ``workers[i]``
    (imported workers) when ``workers`` is set, by nobody otherwise.
    """
    benchmark = Benchmark.objects.create(name=name)
    worker_rows = [Worker.objects.get_or_create(kind=WorkerKind.IMPORTED, external_id=w)[0] for w in workers or []]
    for number, (word, pos, candidates) in enumerate(targets):
        context = Context.objects.create(benchmark=benchmark, text=f"Sentence {number} with {word} in it.")
        target = Target.objects.create(
            benchmark=benchmark, context=context, word=word, offset=context.text.index(word), pos=pos
        )
        for text, sources, labels in candidates:
            candidate = Candidate.objects.create(target=target, text=text, sources=sorted(sources))
            Label.objects.bulk_create(
                Label(
                    candidate=candidate,
                    value=VALUE[letter],
                    origin=origin,
                    position=position,
                    worker=worker_rows[position] if worker_rows else None,
                )
                for position, letter in enumerate(labels)
            )
    # Written as an import writes them (docs/design.md §7, "Tallies"): the figures read them.
    tallies_benchmark_recount(benchmark_id=benchmark.pk)
    return benchmark
