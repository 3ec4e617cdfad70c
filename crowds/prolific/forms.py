"""Prolific's publish options as a form: the study's estimated time and its rejection category."""

from __future__ import annotations

from django import forms

from crowds.prolific.client import REJECTION_CATEGORIES


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
