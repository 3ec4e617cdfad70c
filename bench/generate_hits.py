"""Time step-2 HIT generation for a synthetic benchmark of ~45,000 candidates.

    DATABASE_URL=postgres://... python -m bench.generate_hits [--candidates 45000] [--repeat 3] [--keep]

Builds the benchmark with bulk inserts, then times `hits_generate` for all its targets (wall
clock, and the CPU time of this process, which machine load disturbs less): the first
run includes loading the distractor pool (read from its cache file, or built once per host when
there is none), later runs reuse it. Between runs
the previous batch is closed, which frees its candidates for the next one. The benchmark is
deleted at the end unless --keep.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

from bench import django_setup


def _drop(benchmark_id: int) -> None:
    """Delete the synthetic benchmark leaf tables first: the ORM's cascade would load every row."""
    from django.db import connection, transaction

    from annotation.models import Benchmark, Candidate, Context, Target
    from hits.models import HIT, Batch, HITItem

    batches = f"SELECT id FROM {Batch._meta.db_table} WHERE benchmark_id = %s"
    hits = f"SELECT id FROM {HIT._meta.db_table} WHERE batch_id IN ({batches})"
    targets = f"SELECT id FROM {Target._meta.db_table} WHERE benchmark_id = %s"
    statements = [
        f"DELETE FROM {HITItem._meta.db_table} WHERE hit_id IN ({hits})",
        f"DELETE FROM {HIT._meta.db_table} WHERE batch_id IN ({batches})",
        f"DELETE FROM {Batch._meta.db_table} WHERE benchmark_id = %s",
        f"DELETE FROM {Candidate._meta.db_table} WHERE target_id IN ({targets})",
        f"DELETE FROM {Target._meta.db_table} WHERE benchmark_id = %s",
        f"DELETE FROM {Context._meta.db_table} WHERE benchmark_id = %s",
        f"DELETE FROM {Benchmark._meta.db_table} WHERE id = %s",
    ]
    with transaction.atomic(), connection.cursor() as cursor:
        for statement in statements:
            cursor.execute(statement, [benchmark_id])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--candidates", type=int, default=45_000, help="about this many candidates in all")
    parser.add_argument("--per-target", type=int, default=45, help="mean candidates per target (SWORDS: ~50)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the benchmark and its batches")
    args = parser.parse_args(argv)

    django_setup()

    import numpy as np
    import wordfreq
    from django.db import connection

    from annotation.models import Benchmark, Candidate, Context, Target, normalize_candidate, text_digest
    from hits.models import HIT, HITItem
    from hits.services import batch_close, hits_generate

    if connection.vendor != "postgresql":
        print(f"warning: running on {connection.vendor}, the figure that matters is PostgreSQL's", file=sys.stderr)

    rng = np.random.default_rng(args.seed)
    vocabulary = [w for w in wordfreq.top_n_list("en", 30_000) if w.isalpha() and len(w) > 2]
    target_count = max(1, round(args.candidates / args.per_target))
    sizes = rng.integers(max(1, args.per_target // 3), args.per_target * 5 // 3 + 1, size=target_count)
    sizes = np.maximum(1, np.round(sizes * args.candidates / sizes.sum()).astype(int))

    started = time.perf_counter()
    benchmark = Benchmark.objects.create(name=f"bench-generate-{int(time.time())}", title="generation benchmark")
    contexts = Context.objects.bulk_create(
        Context(benchmark=benchmark, text=text, digest=text_digest(text))
        for text in (f"Sentence number {i} where the word {vocabulary[i]} appears." for i in range(target_count))
    )
    targets = Target.objects.bulk_create(
        Target(
            context=context,
            benchmark=benchmark,
            word=vocabulary[i],
            lemma=vocabulary[i],
            offset=len(f"Sentence number {i} where the word "),
            pos="noun",
        )
        for i, context in enumerate(contexts)
    )
    candidates = []
    for target, size in zip(targets, sizes, strict=True):
        for word in rng.choice(len(vocabulary), size=int(size), replace=False):
            text = vocabulary[int(word)]
            candidates.append(
                Candidate(target=target, text=text, normalized=normalize_candidate(text), sources=["thesaurus"])
            )
    Candidate.objects.bulk_create(candidates, batch_size=5000, ignore_conflicts=True)
    candidate_total = Candidate.objects.filter(target__benchmark=benchmark).count()
    print(
        f"built benchmark {benchmark.name}: {target_count} targets, {candidate_total} candidates "
        f"in {time.perf_counter() - started:.1f} s"
    )

    timings: list[float] = []
    try:
        for run in range(args.repeat):
            started, cpu_started = time.perf_counter(), time.process_time()
            batch = hits_generate(benchmark=benchmark, step=2, seed=args.seed + run)
            elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu_started
            timings.append(elapsed)
            hits = HIT.objects.filter(batch=batch).count()
            items = HITItem.objects.filter(hit__batch=batch).count()
            print(
                f"run {run + 1}: {elapsed:.2f} s ({cpu:.2f} s CPU in this process) for {hits} HITs, {items} items"
                + (" (includes building the distractor pool)" if run == 0 else "")
            )
            batch_close(batch=batch)
    finally:
        if not args.keep:
            _drop(benchmark.pk)

    if len(timings) > 1:
        warm = statistics.median(timings[1:])
        print(
            f"first run {timings[0]:.2f} s, median of later runs {warm:.2f} s "
            f"({candidate_total / warm:,.0f} candidates/s, first/warm ratio {timings[0] / warm:.2f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
