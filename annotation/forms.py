"""Forms of the researcher's benchmark pages."""

from typing import Any

from django import forms
from django.contrib.auth.models import User

from annotation.importers import ImportFormat, import_formats, validate_upload_size
from annotation.models import Benchmark, Role, default_scheme, scheme_choices
from annotation.roles import is_researcher


def offered_import_formats(scheme: str | None = None) -> list[ImportFormat]:
    """The registered import formats a benchmark of ``scheme`` takes (None: every one): those of any
    scheme and the scheme's own."""
    return [found for found in import_formats() if scheme is None or found.scheme in ("", scheme)]


def format_choices(scheme: str | None = None) -> list[tuple[str, str]]:
    """Detection from the content, then every registered import format (schemes add theirs) that
    a benchmark of ``scheme`` takes."""
    offered = offered_import_formats(scheme)
    # Detection tells the formats that know their first bytes, and our JSONL and CSV otherwise.
    told = [
        found.title.split(" (")[0] for found in offered if found.sniff is not None or found.name in ("jsonl", "csv")
    ]
    return [("auto", f"detect from the content ({', '.join(told)})")] + [(found.name, found.title) for found in offered]


def import_format_help(scheme: str | None = None) -> list[dict[str, str]]:
    """What the import pages list: each offered format's name, title and, for a scheme's own
    format, the title of the scheme whose benchmarks it fills."""
    schemes = dict(scheme_choices())
    return [
        {"name": found.name, "title": found.title, "scheme": str(schemes.get(found.scheme, found.scheme))}
        for found in offered_import_formats(scheme)
    ]


class BenchmarkCreateForm(forms.Form):
    name = forms.SlugField(max_length=100, help_text="letters, digits, hyphens, underscores; used in URLs")
    title = forms.CharField(max_length=200, required=False)
    scheme = forms.ChoiceField(choices=scheme_choices, initial=default_scheme)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))

    def clean_name(self) -> str:
        name: str = self.cleaned_data["name"]
        if Benchmark.objects.filter(name=name).exists():
            raise forms.ValidationError("A benchmark with this name exists already.")
        return name


class BenchmarkImportForm(forms.Form):
    file = forms.FileField(help_text="any format below, gzipped or not", validators=[validate_upload_size])
    format = forms.ChoiceField(choices=format_choices, initial="auto", required=False)
    origin = forms.CharField(
        max_length=200,
        required=False,
        help_text="the name its labels are kept under; default: the file name. Keep it to import a file again.",
    )
    new_label_set = forms.BooleanField(
        required=False,
        label="These labels are a new label set",
        help_text="a new annotation of candidates that another import labelled (a re-annotation). Without it, "
        "labels for candidates that already have imported labels are refused, so none is counted twice.",
    )

    def __init__(self, *args: Any, scheme: str | None = None, **kwargs: Any) -> None:
        """``scheme``: the benchmark's, whose own import format is offered beside the general ones."""
        super().__init__(*args, **kwargs)
        self.fields["format"].choices = format_choices(scheme)  # type: ignore[attr-defined]

    def clean_format(self) -> str:
        return self.cleaned_data.get("format") or "auto"


class AccessGrantForm(forms.Form):
    username = forms.CharField(max_length=150, help_text="a researcher's account")
    role = forms.TypedChoiceField(choices=Role.choices, coerce=int, initial=Role.VIEWER)

    def clean_username(self) -> User:
        username: str = self.cleaned_data["username"].strip()
        user = User.objects.filter(username=username).first()
        if user is None or not is_researcher(user):
            raise forms.ValidationError("No researcher has this account.")
        return user
