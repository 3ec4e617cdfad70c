"""Researcher forms for batches."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import timedelta
from decimal import Decimal
from typing import Any

from django import forms
from django.conf import settings
from django.contrib.auth.models import User
from django.db.models import QuerySet
from django.template.loader import render_to_string
from django.urls import get_script_prefix
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language

from annotation.roles import ANNOTATORS, RESEARCHERS
from annotation.services import worker_for_user
from crowdlex.statements import shaped_rows
from crowds.interface import backend_choices, default_backend_name
from hits.models import MAX_ASSIGNMENT_MINUTES, MAX_BATCH_SEED
from hits.notifications.addresses import WebhookAddressRefused, webhook_url_check
from schemes.base import Step, main_step

_ID_SEPARATORS = re.compile(r"[\s,;]+")


def _target_ids(raw: str) -> list[int] | None:
    """Target ids typed with spaces, commas or semicolons between them; None when empty."""
    raw = raw.strip()
    if not raw:
        return None
    ids = []
    for part in _ID_SEPARATORS.split(raw):
        if not part.isdigit():
            raise forms.ValidationError(f"{part!r} is not a target id (a whole number)")
        ids.append(int(part))
    return ids


def _annotator_accounts() -> QuerySet[User]:
    accounts = User.objects.filter(is_active=True, groups__name__in=(ANNOTATORS, RESEARCHERS))
    return accounts.distinct().order_by("username")


def _annotator_names() -> QuerySet[User, tuple[str]]:
    return _annotator_accounts().values_list("username")


class BatchCreateForm(forms.Form):
    step = forms.TypedChoiceField(choices=[], coerce=int, help_text="The step of the scheme this batch collects.")
    seed = forms.IntegerField(
        label="Seed (a whole number)",
        min_value=0,
        max_value=MAX_BATCH_SEED,
        help_text="The same seed gives the same HITs.",
    )
    targets = forms.CharField(
        required=False,
        help_text="Target ids separated by spaces or commas; empty takes every target waiting for this step.",
    )
    backend = forms.ChoiceField(
        label="Crowd",
        choices=backend_choices,
        initial=default_backend_name,
        help_text="Where the HITs are offered: this platform's own queue or a paid crowd.",
    )
    assignments_per_hit = forms.IntegerField(
        label="Assignments per HIT (workers)",
        required=False,
        min_value=1,
        max_value=100,
        help_text="How many workers do each HIT; empty: the benchmark's labels for this step.",
    )
    reward = forms.DecimalField(
        label="Reward per assignment (dollars)",
        required=False,
        min_value=Decimal("0"),
        max_digits=6,
        decimal_places=2,
        help_text="What one assignment pays; empty: the benchmark's reward.",
    )
    assignment_minutes = forms.IntegerField(
        label="Time to submit (minutes)",
        min_value=1,
        max_value=MAX_ASSIGNMENT_MINUTES,
        initial=30,
        help_text="Time a worker has to submit a claimed HIT.",
    )
    gold_feedback = forms.BooleanField(
        label="Show workers their accuracy on check items",
        required=False,
        help_text="Each worker sees, on their own page, how many of this batch's check items they answered right.",
    )
    force = forms.BooleanField(
        label="Also candidates already in an open batch",
        required=False,
        help_text="Generate even for candidates already in an open batch of this step.",
    )
    annotators = forms.ModelMultipleChoiceField(
        label="Named annotators",
        queryset=User.objects.none(),
        required=False,
        to_field_name="username",
        help_text="Assign the work to these accounts by name (each target to one of them, on the local queue); "
        "empty: whoever takes it. A scheme whose work goes to named annotators needs them.",
    )
    overlap = forms.IntegerField(
        label="Overlap (targets)",
        required=False,
        min_value=0,
        initial=0,
        help_text="Targets that two of the named annotators both judge (for agreement).",
    )

    def __init__(
        self, *args: Any, steps: Sequence[Step], annotator_names: Sequence[str] | None = None, **kwargs: Any
    ) -> None:
        """``steps``: the benchmark scheme's steps, offered in order (the first preselected);
        ``annotator_names``: the accounts offered as named annotators, when already read."""
        super().__init__(*args, **kwargs)
        field = self.fields["step"]
        assert isinstance(field, forms.TypedChoiceField)
        field.choices = [(step.number, step.title) for step in steps]
        field.initial = main_step(steps)
        annotators = self.fields["annotators"]
        assert isinstance(annotators, forms.ModelMultipleChoiceField)
        annotators.queryset = _annotator_accounts()
        # The options shown, the accounts' names (each account's text is its name), by the statement
        # built once per process (``crowdlex.statements.shaped_rows``): the batches' page shows the
        # form after every change. The choice made is checked against the queryset.
        if annotator_names is None:
            annotator_names = annotator_names_offered()
        annotators.widget.choices = [(name, name) for name in annotator_names]

    def clean_targets(self) -> list[int] | None:
        return _target_ids(self.cleaned_data["targets"])

    def service_arguments(self) -> dict[str, Any]:
        """The cleaned data as keyword arguments of hits_generate."""
        data = self.cleaned_data
        return {
            "step": data["step"],
            "seed": data["seed"],
            "targets": data["targets"],
            "backend": data["backend"],
            "assignments_per_hit": data["assignments_per_hit"],
            "reward": data["reward"],
            "force": data["force"],
            "gold_feedback": data["gold_feedback"],
            "assignment_duration": timedelta(minutes=data["assignment_minutes"]),
            "annotators": [worker_for_user(user=user) for user in data["annotators"]] or None,
            "overlap": data["overlap"] or 0,
        }


def annotator_names_offered() -> list[str]:
    """The names of the accounts the batch form offers as named annotators, by the statement the ORM
    built once per process (``crowdlex.statements.shaped_rows``)."""
    return [name for (name,) in shaped_rows(_annotator_names)]


# The batch form's fields as shown unbound (``batch_form_fields``), by what they show.
_FIELDS_SHOWN: dict[tuple[Any, ...], SafeString] = {}


def batch_form_fields(*, benchmark: Any, steps: Sequence[Step]) -> SafeString:
    """The fields of a new, unbound ``BatchCreateForm`` for the benchmark as templates/hits/
    _batch_form_fields.html renders them, kept per process by what they show (at most
    ``BATCH_FORMS_KEPT``; docs/design.md §7, "Kept widgets"): the benchmark's name (its links) and
    seed, the scheme's steps, the accounts offered as named annotators (read each time, so one
    added or taken away shows at once), the crowds, the language and the links' prefix. The
    batches' page shows the form after every submit, and building and rendering its eleven fields
    cost more than the rest of the page's template; its reader's own token stays outside
    (templates/hits/_batch_form.html)."""
    names = annotator_names_offered()
    key = (
        benchmark.name,
        benchmark.seed,
        tuple((step.number, step.title) for step in steps),
        main_step(steps),
        tuple(names),
        tuple(backend_choices()),
        default_backend_name(),
        get_language(),
        get_script_prefix(),
    )
    shown = _FIELDS_SHOWN.get(key)
    if shown is None:
        form = BatchCreateForm(initial={"seed": benchmark.seed}, steps=steps, annotator_names=names)
        shown = mark_safe(render_to_string("hits/_batch_form_fields.html", {"form": form, "benchmark": benchmark}))
        _fields_kept(key, shown)
    return shown


def _fields_kept(key: tuple[Any, ...], shown: SafeString) -> None:
    """Keep a form's fields as shown, at most ``BATCH_FORMS_KEPT`` renderings (0: none)."""
    limit = settings.BATCH_FORMS_KEPT
    if limit > 0:
        if len(_FIELDS_SHOWN) >= limit:
            _FIELDS_SHOWN.clear()
        _FIELDS_SHOWN[key] = shown


def batch_clone_fields(*, batch: Any) -> SafeString:
    """The fields of a new, unbound ``BatchCloneForm`` of the batch as templates/hits/
    _batch_clone_fields.html renders them, kept per process (with ``batch_form_fields``') by what
    they show: the batch's crowd (the one preselected), its benchmark's name (a link), the crowds,
    the language and the links' prefix. A batch's page shows it after every submit."""
    key = ("clone", batch.benchmark.name, batch.backend, tuple(backend_choices()), get_language(), get_script_prefix())
    shown = _FIELDS_SHOWN.get(key)
    if shown is None:
        form = BatchCloneForm(initial={"backend": batch.backend})
        shown = mark_safe(render_to_string("hits/_batch_clone_fields.html", {"clone_form": form, "batch": batch}))
        _fields_kept(key, shown)
    return shown


class BatchCloneForm(forms.Form):
    """A clone of a batch: the same settings, other targets or another backend (``batch_clone``)."""

    targets = forms.CharField(
        required=False,
        help_text="Target ids separated by spaces or commas; empty takes every target waiting for this step.",
    )
    backend = forms.ChoiceField(choices=backend_choices)
    force = forms.BooleanField(
        label="Also candidates already in an open batch",
        required=False,
        help_text="Generate even for candidates already in an open batch of this step.",
    )

    def clean_targets(self) -> list[int] | None:
        return _target_ids(self.cleaned_data["targets"])


class NotificationSettingsForm(forms.Form):
    """A benchmark's budget cap and where its notifications go (docs/notifications.md)."""

    budget_cap = forms.DecimalField(
        label="Budget cap",
        required=False,
        min_value=Decimal("0"),
        max_digits=10,
        decimal_places=2,
        help_text="The most this benchmark's work may cost in all, spent and committed, the crowds' fees included "
        "(dollars, or your Prolific workspace's currency). Empty: no cap.",
    )
    webhook_url = forms.URLField(
        label="Webhook URL",
        required=False,
        max_length=500,
        assume_scheme="https",
        help_text="Each event is posted here as JSON, signed with the benchmark's secret. Empty: no webhook.",
    )
    email_me = forms.BooleanField(
        label="E-mail me about this benchmark",
        required=False,
        help_text="When a batch is done, the budget reaches 80 % of its cap, or a worker is flagged.",
    )

    def clean_webhook_url(self) -> str:
        """A URL reaching an address that is not public is refused here, before anything is saved
        (``hits.notifications.addresses``; the service checks it again)."""
        url = str(self.cleaned_data.get("webhook_url") or "")
        try:
            webhook_url_check(url)
        except WebhookAddressRefused as refused:
            raise forms.ValidationError(str(refused)) from None
        return url
