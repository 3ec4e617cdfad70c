"""``benchmark_settings``: the command reads and changes a benchmark's scheme settings through the
service the settings page and the API use, with its checks and its lock."""

from __future__ import annotations

import pytest
from django.core.management import CommandError, call_command

from annotation.models import Benchmark
from hits.services import hits_generate
from schemes.swords.settings import settings_of
from tests.hits.generation_data import build_benchmark

pytestmark = pytest.mark.django_db


def test_the_command_sets_the_stopping_policy_refuses_bad_values_and_respects_the_lock(
    capsys: pytest.CaptureFixture[str],
) -> None:
    benchmark = build_benchmark("by-command")
    call_command("benchmark_settings", benchmark.name)
    assert 'stopping_policy = "swords"' in capsys.readouterr().out

    call_command("benchmark_settings", benchmark.name, "--set", "stopping_policy=adaptive", "--set", "adaptive_floor=3")
    out = capsys.readouterr().out
    assert 'stopping_policy = "adaptive"' in out and "adaptive_floor = 3" in out
    settings = settings_of(Benchmark.objects.get(pk=benchmark.pk))
    assert (settings.stopping_policy, settings.adaptive_floor) == ("adaptive", 3)

    with pytest.raises(CommandError, match="stopping_policy: must be one of swords, curtail, adaptive"):
        call_command("benchmark_settings", benchmark.name, "--set", "stopping_policy=greedy")
    with pytest.raises(CommandError, match="write NAME=VALUE"):
        call_command("benchmark_settings", benchmark.name, "--set", "curtail")

    hits_generate(benchmark=benchmark, step=2, seed=1)
    with pytest.raises(CommandError, match=r"stopping_policy: .*locked"):
        call_command("benchmark_settings", benchmark.name, "--set", "stopping_policy=curtail")
    assert settings_of(Benchmark.objects.get(pk=benchmark.pk)).stopping_policy == "adaptive"
