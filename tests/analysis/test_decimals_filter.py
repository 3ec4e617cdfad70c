"""``decimals``, the statistics page's numbers remembered as shown (docs/design.md §7, "Incremental
figures"): always what ``floatformat`` shows, whatever the value, the places, the language and the
separation of thousands, and after the kept numbers are forgotten."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import Any

from django.template.defaultfilters import floatformat
from django.test import override_settings
from django.utils import translation
from hypothesis import given
from hypothesis import strategies as st

from analysis import statistics_rows
from analysis.statistics_rows import decimals

VALUES = [
    0,
    1,
    1.0,
    -0.0,
    0.0005,
    -0.0005,
    2.5,
    1234567.891,
    math.nan,
    math.inf,
    None,
    "",
    "abc",
    "0.1",
    True,
    Decimal("1.23456"),
    Decimal("-0.0001"),
    10**20,
    1e-12,
]


def _both(value: Any, places: int) -> None:
    assert decimals(value, places) == floatformat(value, places), (value, places)


def test_it_shows_each_value_as_floatformat_does_in_every_language_and_separation() -> None:
    for language in ("en-us", "de", "fr"):
        with translation.override(language):
            for separated in (False, True):
                with override_settings(USE_THOUSAND_SEPARATOR=separated):
                    for _ in range(2):  # worked out, then remembered
                        for value in VALUES:
                            for places in (0, 2, 3, 4):
                                _both(value, places)


@given(st.floats(allow_nan=False) | st.integers(min_value=-(10**12), max_value=10**12), st.integers(0, 6))
def test_any_number_shows_as_floatformat_shows_it(value: float | int, places: int) -> None:
    _both(value, places)
    _both(value, places)


def test_past_its_limit_the_kept_numbers_are_forgotten_and_shown_alike(settings: Any) -> None:
    settings.STATISTICS_NUMBERS_KEPT = 3
    statistics_rows._DECIMALS.clear()
    for value in range(10):
        _both(value / 7, 3)
        assert len(statistics_rows._DECIMALS) <= 3
    _both(1 / 7, 3)
