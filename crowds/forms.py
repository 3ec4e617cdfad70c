"""Researcher forms for the crowd operations of a batch (sync, review, bonus, messages); each crowd's
publish form is its backend's (``publish_form``)."""

from __future__ import annotations

from decimal import Decimal

from django import forms

from hits.models import FilteredPolicy


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
