"""Figures kept in the shared cache pickled as their fields' values (``crowdlex.pickled``): they
come back equal, those written the old way still come back, and a subclass keeps its own fields."""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field

import pytest

from crowdlex.pickled import pickled_by_fields
from review.selectors import TargetProgress, TargetStepProgress
from schemes.progress import TargetCount


def _row() -> TargetProgress:
    steps = [TargetStepProgress(2, 3, 10), TargetStepProgress(3, None, None)]
    return TargetProgress(7, "bright", "adj", "a <b>bright</b> day", "reduce", "step 2", 4, steps, {"dropped": 1}, 2)


def test_the_kept_figures_come_back_equal_in_every_field() -> None:
    row = _row()
    count = TargetCount(5, {2: (3, 10), 3: None}, {"scored": 2}, {2: (3, 10, 5, 1)}, {"reduce": 4}, {"t": {"r": (1,)}})
    for value in (row, count, TargetProgress(1, "w", "", "c", "done", "done"), TargetCount()):
        back = pickle.loads(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))
        assert back == value and type(back) is type(value)
    # Each is rebuilt by its class from its fields' values, not from a dictionary of them.
    assert row.__reduce_ex__(pickle.HIGHEST_PROTOCOL)[0] is TargetProgress


def test_figures_pickled_as_a_dataclass_pickles_still_come_back(monkeypatch: pytest.MonkeyPatch) -> None:
    row, count = _row(), TargetCount(5, {2: (3, 10)}, {"scored": 2})
    with monkeypatch.context() as patched:
        for cls in (TargetProgress, TargetStepProgress, TargetCount):
            patched.delattr(cls, "__reduce_ex__")
        written_before = pickle.dumps((row, count), pickle.HIGHEST_PROTOCOL)
        assert b"__dict__" not in written_before and pickle.loads(written_before) == (row, count)
    assert pickle.loads(written_before) == (row, count)
    assert len(pickle.dumps((row, count), pickle.HIGHEST_PROTOCOL)) < len(written_before)


@pickled_by_fields
@dataclass
class _Figures:
    total: int
    names: list[str] = field(default_factory=list)


@dataclass
class _MoreFigures(_Figures):
    extra: int = 0


def test_a_subclass_with_fields_of_its_own_keeps_them() -> None:
    value = _MoreFigures(3, ["a"], extra=9)
    back = pickle.loads(pickle.dumps(value, pickle.HIGHEST_PROTOCOL))
    assert back == value and type(back) is _MoreFigures and back.extra == 9
    assert pickle.loads(pickle.dumps(_Figures(1), pickle.HIGHEST_PROTOCOL)) == _Figures(1)
