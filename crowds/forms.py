"""Researcher forms for the crowd operations of a batch (publish, sync, review, bonus, messages)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms

from crowds.mturk import MAX_APPROVED_HITS, PRODUCTION, SANDBOX, Qualifications
from crowds.prolific import REJECTION_CATEGORIES
from hits.models import FilteredPolicy


class PublishForm(forms.Form):
    environment = forms.ChoiceField(
        choices=[(SANDBOX, "MTurk sandbox (no money)"), (PRODUCTION, "MTurk production (real money)")]
    )
    approval_rate = forms.IntegerField(
        required=False, min_value=0, max_value=100, help_text="Approval rate above this percentage; empty: any."
    )
    locale = forms.CharField(required=False, max_length=2, help_text="Two-letter country, e.g. US; empty: anywhere.")
    approved_hits = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=MAX_APPROVED_HITS,
        help_text="More approved HITs than this; empty: any. Sandbox accounts have few.",
    )
    confirm_production = forms.BooleanField(
        required=False, label="I understand that publishing to production pays workers with real money."
    )

    @classmethod
    def initial_for(cls, qualifications: Qualifications, environment: str) -> dict[str, Any]:
        return {"environment": environment, **qualifications.as_json()}

    def clean_locale(self) -> str | None:
        value = self.cleaned_data["locale"].strip().upper()
        if value and (len(value) != 2 or not value.isalpha()):
            raise forms.ValidationError("a two-letter country code such as US")
        return value or None

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if data.get("environment") == PRODUCTION and not data.get("confirm_production"):
            self.add_error("confirm_production", "Tick this to publish to production.")
        return data

    def qualifications(self) -> dict[str, Any]:
        data = self.cleaned_data
        return {key: data.get(key) for key in Qualifications.KEYS}


class ProlificPublishForm(forms.Form):
    estimated_minutes = forms.IntegerField(
        min_value=1,
        max_value=7 * 24 * 60,
        help_text="Prolific's estimated completion time of one HIT; it checks the pay per hour against it.",
    )
    rejection_category = forms.ChoiceField(
        choices=[(category, category.replace("_", " ").lower()) for category in REJECTION_CATEGORIES],
        help_text="What Prolific is told when the sync rejects filtered work.",
    )
    confirm_money = forms.BooleanField(
        required=True, label="I understand that publishing pays participants with real money."
    )


class SyncForm(forms.Form):
    decide_now = forms.BooleanField(
        required=False, help_text="Approve or reject submitted work now, without waiting for the hold period."
    )


class PolicyForm(forms.Form):
    filtered_policy = forms.ChoiceField(choices=FilteredPolicy.choices, label="Filtered work")
    rejection_message = forms.CharField(widget=forms.Textarea(attrs={"rows": 3}), required=False, max_length=1024)


class MessageForm(forms.Form):
    message = forms.CharField(required=False, max_length=1024, widget=forms.TextInput())


class BonusForm(forms.Form):
    amount = forms.DecimalField(min_value=Decimal("0.01"), max_digits=6, decimal_places=2)
    reason = forms.CharField(max_length=1024)
    above_limit_confirmed = forms.BooleanField(required=False, label="Send it even above the bonus limit")


class NotifyForm(forms.Form):
    subject = forms.CharField(max_length=200)
    text = forms.CharField(max_length=4096, widget=forms.Textarea(attrs={"rows": 4}))


class BlockForm(forms.Form):
    reason = forms.CharField(max_length=1024)
