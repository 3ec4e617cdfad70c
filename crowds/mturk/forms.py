"""MTurk's publish options as a form: the endpoint and the worker qualifications."""

from __future__ import annotations

from typing import Any

from django import forms

from crowds.mturk.client import MAX_APPROVED_HITS, PRODUCTION, SANDBOX, Qualifications


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
