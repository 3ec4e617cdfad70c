"""REST API of task design (docs/api.md, docs/batches.md "Task design"): a batch's design and a
benchmark's template, read and replaced through the services the design pages use."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.exceptions import ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import Role, benchmark_for, object_for
from crowdlex.permissions import IsResearcher
from hits.design.services import (
    batch_design,
    batch_design_locks,
    batch_design_set,
    benchmark_pages,
    design_template,
    design_template_set,
    pages_choices,
    pages_editable,
    step_page,
)
from hits.models import Batch
from schemes.base import Choice, Editable, Page
from schemes.design import LISTING_COLUMN_LENGTH, DesignInvalid, TaskDesign


class ExampleSerializer(serializers.Serializer[Any]):
    text = serializers.CharField(max_length=settings.DESIGN_EXAMPLE_MAX_CHARS, help_text="a sentence")
    target = serializers.CharField(
        max_length=settings.DESIGN_EXAMPLE_MAX_CHARS,
        required=False,
        allow_blank=True,
        help_text="a word of the text to highlight (it must occur in the text)",
    )
    answer = serializers.CharField(
        max_length=settings.DESIGN_EXAMPLE_MAX_CHARS, required=False, allow_blank=True, help_text="a good answer"
    )
    note = serializers.CharField(
        max_length=settings.DESIGN_EXAMPLE_MAX_CHARS, required=False, allow_blank=True, help_text="why"
    )


class ChoiceDesignSerializer(serializers.Serializer[Any]):
    label = serializers.CharField(  # type: ignore[assignment]
        max_length=settings.DESIGN_CHOICE_LABEL_MAX_CHARS, required=False, help_text="the words on the button"
    )
    keys = serializers.ListField(
        child=serializers.CharField(min_length=1, max_length=1, trim_whitespace=False),
        min_length=1,
        max_length=settings.DESIGN_CHOICE_MAX_KEYS,
        required=False,
        help_text="single characters, lower case, not j or k, each choosing one answer only",
    )


class DesignSerializer(serializers.Serializer[Any]):
    """A task design (schemes.design.TaskDesign): an empty title, description or keywords keeps the
    batch's; the rest replaces the design as a whole."""

    title = serializers.CharField(max_length=LISTING_COLUMN_LENGTH, required=False, allow_blank=True)
    description = serializers.CharField(
        max_length=settings.DESIGN_DESCRIPTION_MAX_CHARS, required=False, allow_blank=True
    )
    keywords = serializers.CharField(max_length=LISTING_COLUMN_LENGTH, required=False, allow_blank=True)
    instructions = serializers.CharField(
        max_length=settings.DESIGN_INSTRUCTIONS_MAX_CHARS,
        required=False,
        allow_blank=True,
        help_text='plain text: blank lines part paragraphs, lines starting "- " make a list; never HTML',
    )
    examples = serializers.ListField(
        child=ExampleSerializer(), required=False, max_length=settings.DESIGN_EXAMPLES_MAX, help_text="worked examples"
    )
    scheme_instructions = serializers.BooleanField(
        required=False, default=True, help_text="also show the scheme's own instructions"
    )
    choices = serializers.DictField(
        child=ChoiceDesignSerializer(),
        required=False,
        help_text="by a choice's value (which never changes): its label, its keys, or both",
    )


class ExampleOutSerializer(serializers.Serializer[Any]):
    text = serializers.CharField()
    target = serializers.CharField(help_text='"" when no word is highlighted')
    answer = serializers.CharField()
    note = serializers.CharField()


class ChoiceDesignOutSerializer(serializers.Serializer[Any]):
    label = serializers.CharField(help_text='"": the scheme\'s')  # type: ignore[assignment]
    keys = serializers.ListField(child=serializers.CharField(), help_text="[]: the scheme's")


class DesignOutSerializer(serializers.Serializer[Any]):
    """A task design as stored: every field, empty where the design keeps the batch's or the scheme's."""

    title = serializers.CharField()
    description = serializers.CharField()
    keywords = serializers.CharField()
    instructions = serializers.CharField()
    examples = ExampleOutSerializer(many=True)
    scheme_instructions = serializers.BooleanField()
    choices = serializers.DictField(child=ChoiceDesignOutSerializer())


class SchemeChoiceSerializer(serializers.Serializer[Any]):
    value = serializers.CharField(help_text="what an answer records")
    label = serializers.CharField(help_text="the scheme's own label")  # type: ignore[assignment]
    keys = serializers.ListField(child=serializers.CharField(), help_text="the scheme's own keys")
    definition = serializers.CharField()


class EditableSerializer(serializers.Serializer[Any]):
    choice_labels = serializers.BooleanField()
    choice_keys = serializers.BooleanField()


class BatchDesignOutSerializer(serializers.Serializer[Any]):
    design = DesignOutSerializer()
    scheme_choices = SchemeChoiceSerializer(many=True, help_text="the choices of the batch's page, the scheme's own")
    editable = EditableSerializer(help_text="what of the choices the scheme's page lets a design change")
    locked = serializers.ListField(child=serializers.CharField(), help_text="fields that may no longer change")
    locked_reason = serializers.CharField(help_text='why, in a sentence per lock; "" when nothing is locked')
    preview_url = serializers.CharField(help_text="the page a worker sees, for the benchmark's researchers")


class TemplateDesignOutSerializer(serializers.Serializer[Any]):
    design = DesignOutSerializer()
    scheme_choices = SchemeChoiceSerializer(many=True, help_text="the choices of the steps that have them")
    editable = EditableSerializer()


def _full(design: TaskDesign) -> dict[str, Any]:
    return {
        "title": design.title,
        "description": design.description,
        "keywords": design.keywords,
        "instructions": design.instructions,
        "examples": [
            {"text": example.text, "target": example.target, "answer": example.answer, "note": example.note}
            for example in design.examples
        ],
        "scheme_instructions": design.scheme_instructions,
        "choices": {value: {"label": choice.label, "keys": list(choice.keys)} for value, choice in design.choices},
    }


def _choices(choices: tuple[Choice, ...]) -> list[dict[str, Any]]:
    return [
        {"value": choice.value, "label": choice.label, "keys": list(choice.keys), "definition": choice.definition}
        for choice in choices
    ]


def _editable(editable: Editable) -> dict[str, bool]:
    return {"choice_labels": editable.choice_labels, "choice_keys": editable.choice_keys}


def design_given(validated: Any) -> dict[str, Any]:
    """A design ``DesignSerializer`` validated, as plain JSON for ``schemes.design.design_from_json``."""
    data = dict(validated)
    if "examples" in data:
        data["examples"] = [dict(example) for example in data["examples"]]
    if "choices" in data:
        data["choices"] = {value: dict(entry) for value, entry in data["choices"].items()}
    return data


def _given(request: Request) -> dict[str, Any]:
    given = DesignSerializer(data=request.data)
    given.is_valid(raise_exception=True)
    return design_given(given.validated_data)


def _refused(invalid: DesignInvalid) -> ValidationError:
    return ValidationError(invalid.message_dict)


class BatchDesignApi(APIView):
    """GET: a batch's task design, what its page lets a design change and what is locked. PUT: replace
    it; 400 names each refused field (a key that clashes, a choice the scheme lacks, a locked field)."""

    permission_classes = [IsResearcher]

    def _answer(self, batch: Batch, page: Page) -> Response:
        locks = batch_design_locks(batch=batch)
        return Response(
            BatchDesignOutSerializer(
                {
                    "design": _full(batch_design(batch=batch)),
                    "scheme_choices": _choices(page.choices),
                    "editable": _editable(page.editable),
                    "locked": locks.fields,
                    "locked_reason": " ".join(f"{reason}." for reason in (locks.listing, locks.keys) if reason),
                    "preview_url": reverse("batch-worker-preview", args=[batch.pk]),
                }
            ).data
        )

    @extend_schema(responses=BatchDesignOutSerializer)
    def get(self, request: Request, pk: int) -> Response:
        batch = object_for(request.user, Batch.objects.select_related("benchmark"), Role.VIEWER, pk=pk)
        return self._answer(batch, step_page(benchmark=batch.benchmark, step=batch.step))

    @extend_schema(request=DesignSerializer, responses=BatchDesignOutSerializer)
    def put(self, request: Request, pk: int) -> Response:
        batch = object_for(request.user, Batch.objects.select_related("benchmark"), Role.EDITOR, pk=pk)
        data = _given(request)
        try:
            batch = batch_design_set(batch=batch, data=data, by=request.user)
        except DesignInvalid as invalid:
            raise _refused(invalid) from invalid
        return self._answer(batch, step_page(benchmark=batch.benchmark, step=batch.step))


class BenchmarkDesignApi(APIView):
    """GET: the task design template new batches of the benchmark start from. PUT: replace it,
    checked against the page of every step; 400 names each refused field."""

    permission_classes = [IsResearcher]

    def _answer(self, design: TaskDesign, pages: list[Page]) -> Response:
        choices = pages_choices(pages)
        return Response(
            TemplateDesignOutSerializer(
                {
                    "design": _full(design),
                    "scheme_choices": _choices(choices),
                    "editable": _editable(pages_editable(pages)),
                }
            ).data
        )

    @extend_schema(responses=TemplateDesignOutSerializer)
    def get(self, request: Request, name: str) -> Response:
        benchmark = benchmark_for(request.user, name, Role.VIEWER)
        return self._answer(design_template(benchmark=benchmark), benchmark_pages(benchmark=benchmark))

    @extend_schema(request=DesignSerializer, responses=TemplateDesignOutSerializer)
    def put(self, request: Request, name: str) -> Response:
        benchmark = benchmark_for(request.user, name, Role.EDITOR)
        data = _given(request)
        try:
            design = design_template_set(benchmark=benchmark, data=data, by=request.user)
        except DesignInvalid as invalid:
            raise _refused(invalid) from invalid
        return self._answer(design, benchmark_pages(benchmark=benchmark))
