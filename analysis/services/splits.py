"""Splitting a benchmark's targets into named splits (dev / test, ...), by a seeded rule or by an
imported list. Exports, statistics and the evaluation take a split name."""

from __future__ import annotations

import csv
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

import numpy as np
from django.db import transaction
from django.db.models import QuerySet

from analysis.models import TargetSplit
from analysis.target_ids import swords_target_ids
from annotation.changes import benchmark_changed
from annotation.importers.errors import ImportFailed
from annotation.importers.reading import READ_ERRORS, Source, numbered_lines, open_binary, source_name
from annotation.models import Benchmark, Target
from crowdlex.statements import shaped_rows


class SplitError(ValueError):
    pass


def _split_name(name: str) -> str:
    # The names Hugging Face's datasets accepts for a split.
    if not re.fullmatch(r"[A-Za-z0-9_]{1,50}", name):
        raise SplitError(f"a split name is up to 50 letters, digits or underscores, not {name!r}")
    if name == "all":
        raise SplitError("'all' names the union of every split in Hugging Face's datasets: choose another split name")
    return name


def _store(*, benchmark: Benchmark, assignments: Iterable[tuple[int, str]]) -> dict[str, int]:
    """Replace the benchmark's splits with ``(target pk, split)`` pairs; returns targets per split."""
    rows = [TargetSplit(target_id=pk, benchmark=benchmark, name=name) for pk, name in assignments]
    with transaction.atomic():
        Benchmark.objects.select_for_update(no_key=True).filter(pk=benchmark.pk).first()
        TargetSplit.objects.filter(benchmark=benchmark).delete()
        TargetSplit.objects.bulk_create(rows)
        # The figures of each split are read once per change of the benchmark (annotation.changes).
        benchmark_changed(benchmark_id=benchmark.pk)
    return dict(sorted(Counter(row.name for row in rows).items()))


def benchmark_split_seeded(*, benchmark: Benchmark, shares: Sequence[tuple[str, float]], seed: int) -> dict[str, int]:
    """Split the targets by context (a context's targets stay together, so no sentence is in two
    splits): contexts in the order of their text's digest, shuffled by ``seed``, cut in the given
    shares (``[("dev", 0.5), ("test", 0.5)]``; shares are relative). The same seed and data give the
    same splits on any database. Replaces the benchmark's splits; returns targets per split."""
    names = [_split_name(name) for name, _ in shares]
    weights = np.array([share for _, share in shares], dtype=float)
    if len(set(names)) != len(names) or not names or not np.isfinite(weights).all() or (weights < 0).any():
        raise SplitError("give each split once, with finite shares that are not negative")
    if weights.sum() <= 0 or seed < 0:
        raise SplitError("the shares must not all be zero, and the seed must not be negative")
    targets = list(Target.objects.filter(benchmark=benchmark).values_list("id", "context__digest"))
    digests = sorted({digest for _, digest in targets})
    order = np.random.default_rng(seed).permutation(len(digests))
    bounds = np.rint(np.cumsum(weights) / weights.sum() * len(digests)).astype(int)
    split_of = {
        digests[index]: names[int(np.searchsorted(bounds, rank, side="right"))] for rank, index in enumerate(order)
    }
    return _store(benchmark=benchmark, assignments=((pk, split_of[digest]) for pk, digest in targets))


def benchmark_split_import(*, benchmark: Benchmark, source: Source) -> dict[str, int]:
    """Split the targets by a CSV list with the columns ``target`` and ``split``; a target is named
    by its SWORDS id (``t:…``), its external id or its id here. Targets the list leaves out are in
    no split. Replaces the benchmark's splits; returns targets per split.

    The list is read as a stream, a line at a time, through the reader every upload goes through
    (``annotation.importers.reading``: bounded lines, gzip ratio and decompressed size); what is
    kept is one split per target of the benchmark, whatever the size of the file."""
    name = source_name(source)
    known = _target_names(benchmark)
    chosen: dict[int, str] = {}
    unknown_count = 0
    unknown_shown: list[str] = []
    try:
        with open_binary(source, file=name) as stream:
            lines = numbered_lines(stream, file=name)
            rows = csv.reader(text.removeprefix("\ufeff") for _, text in lines)
            header = next(rows, None)
            if header is None:
                return _store(benchmark=benchmark, assignments=())
            if not {"target", "split"} <= set(header):
                raise SplitError(f"{name} needs the columns target and split")
            target_at, split_at = header.index("target"), header.index("split")
            for row in rows:
                line = rows.line_num
                if not row:
                    continue
                if len(row) != len(header):
                    raise SplitError(f"{name}, line {line}: {len(row)} cells, the header names {len(header)}")
                target, split = row[target_at], _split_name(row[split_at])
                pk = known.get(target)
                if pk is None:
                    unknown_count += 1
                    if len(unknown_shown) < 3:
                        unknown_shown.append(target[:100])
                    continue
                if chosen.setdefault(pk, split) != split:
                    raise SplitError(f"{name}, line {line}: target {target} is named again, in another split")
    except ImportFailed as exc:
        raise SplitError(str(exc)) from exc
    except (csv.Error, *READ_ERRORS) as exc:
        raise SplitError(f"{name} is not a CSV list of targets and splits: {exc}") from exc
    if unknown_count:
        raise SplitError(f"{unknown_count} target(s) of {name} are not in {benchmark.name}: {', '.join(unknown_shown)}")
    return _store(benchmark=benchmark, assignments=chosen.items())


def _target_names(benchmark: Benchmark) -> Mapping[str, int]:
    names: dict[str, int] = {}
    for pk, external_id in Target.objects.filter(benchmark=benchmark).values_list("id", "external_id"):
        names[str(pk)] = pk
        if external_id:
            names[external_id] = pk
    for pk, swords_id in swords_target_ids(benchmark):
        names[swords_id] = pk
    return names


def _split_names(benchmark_id: int) -> QuerySet[TargetSplit, tuple[str]]:
    return TargetSplit.objects.filter(benchmark_id=benchmark_id).values_list("name")


def benchmark_splits(*, benchmark: Benchmark) -> dict[str, int]:
    """Targets per split of the benchmark, by name (empty when it is not split)."""
    # Built by the ORM once per process (``crowdlex.statements.shaped_rows``): the evaluation page
    # reads it on every request.
    counts = Counter(name for (name,) in shaped_rows(_split_names, benchmark.pk))
    return dict(sorted(counts.items()))


def split_check(*, benchmark: Benchmark, split: str | None) -> None:
    """Refuse a split the benchmark does not have (None: the whole benchmark)."""
    if split is not None and not TargetSplit.objects.filter(benchmark=benchmark, name=split).exists():
        splits = ", ".join(benchmark_splits(benchmark=benchmark)) or "none"
        raise SplitError(f"{benchmark.name} has no split {split!r} (its splits: {splits})")
