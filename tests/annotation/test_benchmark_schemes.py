"""A benchmark takes a registered scheme: the registry offers its schemes to benchmarks, forms and
``Benchmark.clean`` read them from there, and a scheme that only runs another's step is not offered."""

from __future__ import annotations

import pytest
from django.core.exceptions import ValidationError

from annotation.forms import BenchmarkCreateForm
from annotation.models import Benchmark, default_scheme, scheme_choices
from annotation.services import benchmark_create
from schemes import benchmark_schemes, registered, step_runners
from tests.schemes.toy import TOY, ToyScheme, toy_scheme

pytestmark = pytest.mark.django_db


def test_the_choices_are_the_registered_schemes_that_are_not_a_step_of_another() -> None:
    runners = step_runners()
    assert runners, "a built-in scheme runs a step of another"
    offered = dict(scheme_choices())
    assert set(offered) == {scheme.name for scheme in registered()} - runners
    assert offered == {scheme.name: scheme.title for scheme in benchmark_schemes()}


def test_a_scheme_registered_later_is_offered_and_withdrawn_with_it() -> None:
    with toy_scheme():
        assert (TOY, ToyScheme.title) in scheme_choices()
        form = BenchmarkCreateForm(data={"name": "toy-one", "scheme": TOY})
        assert form.is_valid(), form.errors
        benchmark = benchmark_create(name="toy-one", scheme=TOY)
        assert benchmark.get_scheme_display() == ToyScheme.title
    assert TOY not in dict(scheme_choices())
    assert not BenchmarkCreateForm(data={"name": "toy-two", "scheme": TOY}).is_valid()


def test_an_unknown_scheme_is_refused_by_name() -> None:
    benchmark = Benchmark(name="nowhere", scheme="no-such-scheme")
    with pytest.raises(ValidationError) as error:
        benchmark.full_clean()
    assert "no-such-scheme" in str(error.value.message_dict["scheme"])


def test_a_new_benchmark_takes_the_scheme_that_says_it_is_the_default() -> None:
    defaults = [scheme.name for scheme in registered() if scheme.default]
    assert len(defaults) == 1
    assert default_scheme() == defaults[0]
    assert Benchmark.objects.create(name="plain").scheme == defaults[0]
    assert benchmark_create(name="plain-too").scheme == defaults[0]
