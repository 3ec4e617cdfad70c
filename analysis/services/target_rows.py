"""Each target's rows for the statistics page, kept per target (docs/design.md §7, "Incremental
figures"): the candidates' ids, tallies and source groups Table 2 is computed from, and the groups
of the per-source table (§14), both filled from one read of the candidates and their tallies, so a
change that names every target reads each candidate once for both tables.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt
from django.db.models import QuerySet, TextField
from django.db.models.functions import Cast, Coalesce

from analysis import stats
from analysis.selectors import benchmark_candidates, stream_rows
from annotation.changes import KeptFigures, benchmark_kept
from annotation.models import Benchmark, Target
from crowdlex.pickled import pickled_by_fields
from crowdlex.statements import shaped_rows

#: A target's candidates as the statistics keep them: id, (accept, reject, abstain) counts of valid
#: labels, source group (its index in ``stats.SOURCE_GROUPS``) and list of sources (its index in the
#: target's ``TargetRows.sources``), packed.
CANDIDATE_ROW = np.dtype(
    [("id", "<i8"), ("accepts", "<i4"), ("rejects", "<i4"), ("abstains", "<i4"), ("group", "i1"), ("sources", "<u4")]
)

#: A profile of the per-source table: (source, alone, accepts, rejects, abstains).
ProfileKey = tuple[str, bool, int, int, int]

#: A target's share of the per-source table: (profile, candidates) rows.
ProfileRows = tuple[tuple[ProfileKey, int], ...]


@pickled_by_fields
@dataclass(frozen=True)
class TargetRows:
    """One target's rows for the statistics: its part of speech, its candidates (excluded ones left
    out), read from their tallies (docs/design.md §7 "Tallies"), as ``CANDIDATE_ROW`` records in
    bytes (kept per target in the shared cache, where bytes are stored as they are), and the
    distinct lists of sources its candidates name (each as the per-source table counts it: "" for
    none), from which its share of the per-source table is counted when it is summed
    (``rows_summed``): a bucket of 64 targets holds their candidates' bytes and a few names, not a
    tuple per row of the per-source table, so it is written and read back after each submit in a
    fraction of the time."""

    pos: str
    candidates: bytes
    sources: tuple[tuple[str, ...], ...] = ()


def source_list(text: str | None) -> tuple[list[str], bool, int]:
    """A candidate's list of sources as the database gives it (JSON text or None): the sources it
    counts under in the per-source table ("" for none), whether it came from one source alone, and
    its source group for Table 2 (an index in ``stats.SOURCE_GROUPS``)."""
    named = [str(source) for source in (json.loads(text) if text else None) or []]
    group = stats.SOURCE_GROUPS.index(stats.source_group(named))
    return named or [""], len(named) <= 1, group


def _target_pos_rows(benchmark_id: int, target_ids: list[int] | None) -> QuerySet[Target, tuple[int, str]]:
    targets = Target.objects.filter(benchmark_id=benchmark_id)
    if target_ids is not None:
        targets = targets.filter(pk__in=target_ids)
    return targets.values_list("pk", "pos")


def _candidate_rows(benchmark_id: int, target_ids: list[int] | None) -> QuerySet[Any, tuple[Any, ...]]:
    candidates = benchmark_candidates(benchmark=benchmark_id)  # type: ignore[arg-type]
    if target_ids is not None:
        candidates = candidates.filter(target_id__in=target_ids)
    return candidates.order_by("target_id", "id").values_list(
        "target_id",
        "id",
        Coalesce("tally__accepts", 0),
        Coalesce("tally__rejects", 0),
        Coalesce("tally__abstains", 0),
        Cast("sources", TextField()),
    )


def statistics_target_rows(benchmark: Benchmark, target_ids: list[int] | None) -> dict[int, TargetRows]:
    """Every target of ``target_ids`` (every target of the benchmark when None) with its rows, in
    two statements (the targets, then their candidates once, for both tables): a target without
    candidates has empty rows (it counts in Table 2's means)."""
    # Built by the ORM once per process (``crowdlex.statements.shaped_rows``): every submit's first
    # reader of the statistics reads them for its targets. Every target's candidates are streamed.
    pos_of: dict[int, str] = dict(shaped_rows(_target_pos_rows, benchmark.pk, target_ids))
    rows: dict[int, list[tuple[int, int, int, int, int, int]]] = {pk: [] for pk in pos_of}
    # Each target's distinct lists of sources, numbered in the order first met.
    named_by_target: dict[int, dict[tuple[str, ...], int]] = {pk: {} for pk in pos_of}
    # The few distinct lists of sources are each decoded once.
    lists: dict[str | None, tuple[tuple[str, ...], int]] = {}
    read_rows: Iterable[tuple[Any, ...]] = (
        stream_rows(_candidate_rows(benchmark.pk, None))
        if target_ids is None
        else shaped_rows(_candidate_rows, benchmark.pk, target_ids)
    )
    for target_id, candidate_id, accepts, rejects, abstains, text in read_rows:
        if target_id not in rows:  # a target added since the targets were read: read with it next time
            continue
        read = lists.get(text)
        if read is None:
            sources, _, group = source_list(text)
            read = lists[text] = (tuple(sources), group)
        named, group = read
        numbered = named_by_target[target_id]
        number = numbered.get(named)
        if number is None:
            number = numbered[named] = len(numbered)
        rows[target_id].append((candidate_id, accepts, rejects, abstains, group, number))
    return {
        target_id: TargetRows(
            pos=pos,
            candidates=np.asarray(rows[target_id], CANDIDATE_ROW).tobytes(),
            sources=tuple(named_by_target[target_id]),
        )
        for target_id, pos in pos_of.items()
    }


def _profiles(kept: list[TargetRows], table: npt.NDArray[Any], sizes: npt.NDArray[np.int64]) -> Counter[ProfileKey]:
    """The per-source table's groups of some targets' candidates (``table``, ``sizes`` of them a
    target): the candidates counted by list of sources and counts at once, then each such group
    under each source of its list (alone when the list names at most one)."""
    profiles: Counter[ProfileKey] = Counter()
    if not table.size:
        return profiles
    # Each target's numbers of its lists, as numbers of the distinct lists of them all.
    numbered: dict[tuple[str, ...], int] = {}
    mapped = np.concatenate(
        [
            np.asarray([numbered.setdefault(named, len(numbered)) for named in each.sources], dtype=np.int64)[
                table["sources"][start : start + size]
            ]
            for each, start, size in zip(kept, np.cumsum(sizes) - sizes, sizes, strict=True)
            if size
        ]
    )
    found = Counter(
        zip(
            mapped.tolist(),
            table["accepts"].tolist(),
            table["rejects"].tolist(),
            table["abstains"].tolist(),
            strict=True,
        )
    )
    lists = list(numbered)
    for (number, accepts, rejects, abstains), count in found.items():
        named = lists[number]
        alone = len(named) <= 1
        for source in named:
            profiles[(source, alone, accepts, rejects, abstains)] += count
    return profiles


@dataclass(frozen=True)
class RowsTotal:
    """Targets' rows summed: Table 2's sums (``stats.Table2Sums``) and the per-source table's groups.
    Exact counts, so the total of the parts is the whole's (docs/design.md §7, "Incremental figures")."""

    table2: stats.Table2Sums
    profiles: Counter[ProfileKey]


def rows_summed(rows: Iterable[TargetRows]) -> RowsTotal:
    """The sums of some targets' rows (a bucket of them). Pure."""
    kept = list(rows)
    table = np.frombuffer(b"".join(each.candidates for each in kept), dtype=CANDIDATE_ROW)
    sizes = np.asarray([len(each.candidates) // CANDIDATE_ROW.itemsize for each in kept], dtype=np.int64)
    profiles = _profiles(kept, table, sizes)
    table2 = stats.table2_sums(
        target_pos=[each.pos for each in kept],
        candidate_target=np.repeat(np.arange(len(kept), dtype=np.int64), sizes),
        counts=np.stack([table["accepts"], table["rejects"], table["abstains"]], axis=1),
        candidate_group=table["group"],
    )
    return RowsTotal(table2=table2, profiles=profiles)


def rows_totals_added(totals: Iterable[RowsTotal]) -> RowsTotal:
    """The sum of sums of targets' rows (of buckets). Pure."""
    parts = list(totals)
    profiles: Counter[ProfileKey] = Counter()
    for part in parts:
        for key, count in part.profiles.items():
            profiles[key] += count
    return RowsTotal(table2=stats.table2_sums_added(part.table2 for part in parts), profiles=profiles)


def rows_total_taken(total: RowsTotal, rows: Iterable[TargetRows]) -> RowsTotal:
    """``total`` less some targets' rows it summed. Pure."""
    part = rows_summed(rows)
    profiles = Counter(total.profiles)
    for key, count in part.profiles.items():
        profiles[key] -= count
        if not profiles[key]:
            del profiles[key]
    return RowsTotal(table2=stats.table2_sums_taken(total.table2, [part.table2]), profiles=profiles)


def kept_target_rows(*, benchmark: Benchmark) -> KeptFigures[TargetRows, RowsTotal]:
    """Every target's rows, kept per target (``annotation.changes.benchmark_kept``) with their sums
    (``RowsTotal``) kept beside them: after a change only the targets it names are read again and
    only their buckets' sums added again, and Table 2 and the per-source table read the same kept
    rows, so a change that names every target is read once for both. Summed by difference: a change
    takes its targets' rows as kept out of the sums and adds their new ones."""
    return benchmark_kept(
        benchmark_id=benchmark.pk,
        # Named apart from the rows kept before they were summed, before they held the per-source
        # table's share too, and before they were packed with their lists of sources (another layout
        # of bytes, never to be read as this one).
        name="target-rows-packed",
        compute=lambda target_ids: statistics_target_rows(benchmark, target_ids),
        summarise=rows_summed,
        combine=rows_totals_added,
        take=rows_total_taken,
    )
