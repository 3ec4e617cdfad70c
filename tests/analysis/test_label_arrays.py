"""The label arrays packed a slice at a time, narrow, equal the labels as the database orders them."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
import pytest

from analysis import selectors, slices
from analysis.selectors import CandidateTable, LabelArrays, candidate_table, label_arrays
from annotation.models import Benchmark, Candidate, Label, Worker, WorkerKind
from schemes.scores import ABSTAIN, ACCEPT, REJECT
from tests.analysis.labelled import labelled_benchmark

pytestmark = pytest.mark.django_db

CODES = {"accept": ACCEPT, "reject": REJECT, "abstain": ABSTAIN}


@pytest.fixture
def benchmark() -> Benchmark:
    benchmark = labelled_benchmark(
        "packed",
        [
            ("bright", "adj", [("clever", ["roget"], "AARAU"), ("smart", ["coinco"], "RRA"), ("light", [], "UA")]),
            ("run", "verb", [("sprint", ["roget"], "ARRA"), ("dash", ["coinco"], "A")]),
        ],
        workers=[f"w{i}" for i in range(5)],
    )
    # Labels added later, from a second import and by nobody, land after every other candidate's.
    extra = Worker.objects.create(kind=WorkerKind.IMPORTED, external_id="late")
    for number, candidate in enumerate(Candidate.objects.filter(target__benchmark=benchmark).order_by("-id")):
        Label.objects.bulk_create(
            [
                Label(candidate=candidate, value="reject", origin="second", position=0, worker=extra),
                Label(candidate=candidate, value="accept", origin="second", position=1, worker=None),
            ][: 1 + number % 2]
        )
    return benchmark


def expected_arrays(benchmark: Benchmark) -> dict[str, list[int] | list[str]]:
    rows = list(
        Label.objects.filter(candidate__target__benchmark=benchmark)
        .order_by("candidate_id", "id")
        .values_list("candidate_id", "worker_id", "value", "origin", "id")
    )
    candidates = sorted({row[0] for row in rows})
    workers = sorted({row[1] for row in rows if row[1] is not None})
    first: dict[str, int] = {}
    for *_, origin, pk in sorted(rows, key=lambda row: row[4]):
        first.setdefault(origin, pk)
    origins = sorted(first, key=first.__getitem__)
    return {
        "candidate_row": [candidates.index(row[0]) for row in rows],
        "worker_row": [workers.index(row[1]) if row[1] is not None else -1 for row in rows],
        "value": [CODES[row[2]] for row in rows],
        "origin": [origins.index(row[3]) for row in rows],
        "worker_ids": workers,
        "origins": origins,
    }


def found_arrays(benchmark: Benchmark) -> dict[str, list[int] | list[str]]:
    found = label_arrays(benchmark=benchmark, table=candidate_table(benchmark=benchmark))
    assert (found.candidate_row.dtype, found.worker_row.dtype, found.value.dtype) == (np.int32, np.int32, np.int8)
    return {
        "candidate_row": found.candidate_row.tolist(),
        "worker_row": found.worker_row.tolist(),
        "value": found.value.tolist(),
        "origin": found.origin.tolist(),
        "worker_ids": found.worker_ids.tolist(),
        "origins": found.origins,
    }


@pytest.mark.parametrize("rows", [2, 5, 1 << 18])
def test_labels_packed_by_slices_are_the_labels_by_candidate_and_id(
    benchmark: Benchmark, rows: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(slices, "LABEL_SLICE", rows)
    assert found_arrays(benchmark) == expected_arrays(benchmark)


def test_labels_not_scanned_by_id_are_sorted_by_id(benchmark: Benchmark, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(slices, "LABEL_SLICE", 3)
    monkeypatch.setattr(selectors, "_in_id_order", lambda rows, ids, last_id: False)
    assert found_arrays(benchmark) == expected_arrays(benchmark)


def scanned(*, shuffle_within: bool, seed: int = 5) -> tuple[pd.DataFrame, CandidateTable]:
    """Labels as a scan might give them: candidates shuffled, each one's labels by id unless
    ``shuffle_within``; and the table of their candidates."""
    rng = np.random.default_rng(seed)
    size = 500
    frame = pd.DataFrame(
        {
            "candidate": rng.integers(0, 40, size) * 10 + 1000,
            "worker": rng.integers(-1, 7, size) * 3 + 2,
            "value": rng.choice([ACCEPT, REJECT, ABSTAIN], size).astype(np.int8),
            "collected": rng.integers(0, 2, size).astype(np.int8),
            "id": np.arange(size) * 2 + 7,
            "origin": pd.Categorical(rng.choice(["b-import", "a-import", ""], size)),
        }
    )
    frame.loc[frame["worker"] < 0, "worker"] = -1
    frame.loc[frame["collected"] == 1, "origin"] = ""
    # A hash join's batches: each candidate's labels keep their order, the candidates do not.
    batch = rng.permutation(40)[(frame["candidate"].to_numpy() - 1000) // 10] % 4
    frame = frame.iloc[np.argsort(batch, kind="stable")].reset_index(drop=True)
    if shuffle_within:
        frame = frame.iloc[rng.permutation(size)].reset_index(drop=True)
    ids = np.arange(40) * 10 + 1000
    table = CandidateTable(
        contexts=1,
        target_ids=np.array([1]),
        target_pos=["noun"],
        candidate_ids=ids,
        candidate_target=np.zeros(ids.size, dtype=np.int64),
        source_group=["other"] * ids.size,
        counts=np.zeros((ids.size, 3), dtype=np.int64),
    )
    return frame, table


def packed(
    frame: pd.DataFrame, table: CandidateTable, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[bool], LabelArrays]:
    """label_arrays over ``frame`` given in slices of 64 rows; whether each slice came by id."""

    def frames(queryset: object, columns: dict[str, str], *, rows: int) -> Iterator[pd.DataFrame]:
        for start in range(0, len(frame), 64):
            part = frame.iloc[start : start + 64].reset_index(drop=True)
            yield part.assign(origin=part["origin"].cat.remove_unused_categories())

    checked: list[bool] = []
    check = selectors._in_id_order
    monkeypatch.setattr(selectors, "_frames", frames)

    def spied(*args: Any) -> bool:
        checked.append(check(*args))
        return checked[-1]

    monkeypatch.setattr(selectors, "_in_id_order", spied)
    return checked, label_arrays(benchmark=Benchmark.objects.create(name="scanned"), table=table)


def sorted_by_candidate_and_id(frame: pd.DataFrame, table: CandidateTable) -> dict[str, list[Any]]:
    ordered = frame.sort_values(["candidate", "id"])
    workers = sorted(set(frame["worker"]) - {-1})
    imported = frame[frame["collected"] == 0]
    origins = imported.groupby("origin", observed=True)["id"].min().sort_values().index.tolist()
    return {
        "candidate_row": table.rows_of(ordered["candidate"]).tolist(),
        "worker_row": [workers.index(w) if w >= 0 else -1 for w in ordered["worker"]],
        "value": ordered["value"].tolist(),
        "origin": [
            origins.index(o) if c == 0 else -1 for o, c in zip(ordered["origin"], ordered["collected"], strict=True)
        ],
        "worker_ids": workers,
        "origins": origins,
    }


def as_lists(arrays: LabelArrays) -> dict[str, list[Any]]:
    return {
        "candidate_row": arrays.candidate_row.tolist(),
        "worker_row": arrays.worker_row.tolist(),
        "value": arrays.value.tolist(),
        "origin": arrays.origin.tolist(),
        "worker_ids": arrays.worker_ids.tolist(),
        "origins": arrays.origins,
    }


def test_a_scan_by_id_within_candidates_is_grouped_by_a_counting_sort(monkeypatch: pytest.MonkeyPatch) -> None:
    frame, table = scanned(shuffle_within=False)
    checked, arrays = packed(frame, table, monkeypatch)
    assert len(checked) == 8 and all(checked)
    assert as_lists(arrays) == sorted_by_candidate_and_id(frame, table)


def test_a_scan_out_of_id_order_is_sorted_by_candidate_and_id(monkeypatch: pytest.MonkeyPatch) -> None:
    frame, table = scanned(shuffle_within=True)
    checked, arrays = packed(frame, table, monkeypatch)
    assert checked and not checked[-1]
    assert as_lists(arrays) == sorted_by_candidate_and_id(frame, table)


def test_the_id_order_check_sees_a_candidate_s_labels_out_of_order() -> None:
    last_id = np.full(3, -1, dtype=np.int64)
    assert selectors._in_id_order(np.array([2, 0, 2, 1]), np.array([5, 6, 7, 9]), last_id)
    assert last_id.tolist() == [6, 9, 7]
    # Candidate 0's next label has a smaller id than the one before it, in an earlier slice.
    assert not selectors._in_id_order(np.array([0, 1]), np.array([4, 10]), last_id)
    assert not selectors._in_id_order(np.array([1, 1]), np.array([12, 11]), np.full(3, -1, dtype=np.int64))


def test_counting_sort_places_each_candidate_s_labels_in_arrival_order() -> None:
    filled = np.array([0, 3, 5])  # candidate 0 has 3 labels, candidate 1 has 2, candidate 2 has 1
    first = selectors._places(np.array([1, 0, 2, 0], dtype=np.int32), filled)
    second = selectors._places(np.array([0, 1], dtype=np.int32), filled)
    assert first.tolist() == [3, 0, 5, 1] and second.tolist() == [2, 4]
    assert filled.tolist() == [3, 5, 6]
