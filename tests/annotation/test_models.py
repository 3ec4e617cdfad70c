import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction

from annotation.models import Benchmark, Candidate, Context, Target

pytestmark = pytest.mark.django_db


@pytest.fixture
def target() -> Target:
    benchmark = Benchmark.objects.create(name="bench")
    context = Context.objects.create(benchmark=benchmark, text="The cat sat on the mat.")
    return Target.objects.create(context=context, benchmark=benchmark, word="sat", offset=8, pos="verb")


def test_it_refuses_a_second_context_with_the_same_normalised_text(target: Target) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        Context.objects.create(benchmark=target.benchmark, text="  the CAT sat  on the mat. ")


def test_candidates_are_unique_per_target_up_to_case_and_spaces(target: Target) -> None:
    Candidate.objects.create(target=target, text="perched")
    with pytest.raises(IntegrityError), transaction.atomic():
        Candidate.objects.create(target=target, text=" Perched ")


def test_a_target_offset_must_point_at_the_word(target: Target) -> None:
    target.full_clean()
    target.offset = 4
    with pytest.raises(ValidationError, match="does not point at 'sat'"):
        target.full_clean()
