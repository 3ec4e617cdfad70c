"""Fixtures of the crowds tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from django.core.cache import cache


@pytest.fixture(autouse=True)
def _fresh_rate_limits() -> Iterator[None]:
    """The crowd pages count requests per address in the cache: every test starts with none counted."""
    cache.clear()
    yield
    cache.clear()
