"""A SWORDS benchmark's stored settings, read through the scheme (docs/design.md §2)."""

import pytest

from annotation.models import Benchmark
from schemes import get_scheme
from schemes.base import SchemeSettingsError
from schemes.swords.settings import SwordsSettings, settings_of

pytestmark = pytest.mark.django_db


def test_a_benchmark_without_settings_takes_the_defaults_and_keeps_what_it_sets() -> None:
    plain = Benchmark.objects.create(name="plain")
    tuned = Benchmark.objects.create(name="tuned", scheme_settings={"step2_labels": 5, "min_control_accuracy": 0.8})
    assert settings_of(plain) == SwordsSettings()
    assert get_scheme(tuned).settings(tuned) == SwordsSettings(step2_labels=5, min_control_accuracy=0.8)


def test_a_bad_stored_setting_is_named_when_read() -> None:
    wide = Benchmark.objects.create(name="too-wide", scheme_settings={"candidates_per_hit": 11})
    with pytest.raises(SchemeSettingsError, match="at most 10"):
        settings_of(wide)
