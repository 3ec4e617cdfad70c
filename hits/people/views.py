"""People pages for researchers (docs/people.md): the annotators and who is active, a new account,
a CSV of accounts, one person's page (sign-in link, password reset, a batch's named list), and
the one-time sign-in page the links open."""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.models import User
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse, reverse_lazy
from django.views.decorators.http import require_http_methods, require_POST

from annotation.access import Role, object_for
from annotation.importers.errors import ImportFailed
from annotation.importers.reading import source_name, validate_upload_size
from annotation.services import worker_for_user
from crowdlex.confirm import confirmation_page, confirmed
from crowdlex.permissions import researcher_required
from hits.models import Batch
from hits.people import selectors, services

PEOPLE_PER_PAGE = 100


class PersonForm(forms.Form):
    username = forms.CharField(max_length=services.USERNAME_MAX_LENGTH)
    email = forms.EmailField(label="E-mail", help_text="Where the sign-in link goes.")
    name = forms.CharField(max_length=services.NAME_MAX_LENGTH, required=False, help_text="Optional.")
    send = forms.BooleanField(
        required=False, initial=True, label="E-mail the sign-in link now (otherwise it is shown here, once)"
    )


class PeopleUploadForm(forms.Form):
    file = forms.FileField(
        help_text="CSV with a header line: username,email and optionally name; one person per line (gzip is fine)."
    )
    send = forms.BooleanField(required=False, initial=True, label="E-mail each person their sign-in link")

    def clean_file(self) -> Any:
        upload = self.cleaned_data["file"]
        validate_upload_size(upload)
        return upload


class LinkForm(forms.Form):
    send = forms.BooleanField(required=False)


def _made(request: HttpRequest, people: list[User], *, send: bool) -> HttpResponse:
    """The accounts just made, each with its one-time link unless it was e-mailed."""
    rows = [(person, services.person_signin_link(person=person, send=send, by=request.user)) for person in people]
    return render(request, "hits/people/made.html", {"rows": rows, "sent": send})


@researcher_required
@require_http_methods(["GET", "POST"])
def people(request: HttpRequest) -> HttpResponse:
    """Every annotator's account with when it was last seen and its HITs of the last day and week;
    the form that makes one."""
    form = PersonForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        try:
            person = services.annotator_create(
                username=data["username"], email=data["email"], name=data["name"], by=request.user
            )
        except services.PersonInvalid as error:
            form.add_error(error.field, str(error))
        else:
            return _made(request, [person], send=data["send"])
    query = request.GET.get("q", "")
    page = Paginator(selectors.people_activity(viewer=request.user, query=query), PEOPLE_PER_PAGE).get_page(
        request.GET.get("page")
    )
    rows = [(person, selectors.last_seen(person)) for person in page.object_list]
    context = {"form": form, "page": page, "rows": rows, "query": query}
    return render(request, "hits/people/list.html", context, status=400 if form.errors else 200)


@researcher_required
@require_http_methods(["GET", "POST"])
def people_import(request: HttpRequest) -> HttpResponse:
    """A CSV file of accounts, made all together or not at all."""
    form = PeopleUploadForm(request.POST or None, request.FILES or None)
    if request.method == "POST" and form.is_valid():
        upload = form.cleaned_data["file"]
        try:
            made = services.annotators_import(upload=upload, file=source_name(upload), by=request.user)
        except ImportFailed as error:
            form.add_error("file", f"No account was made: {error}")
        else:
            return _made(request, made, send=form.cleaned_data["send"])
    return render(request, "hits/people/import.html", {"form": form}, status=400 if form.errors else 200)


@researcher_required
def person_detail(request: HttpRequest, person_id: int) -> HttpResponse:
    person = selectors.person_for(request.user, person_id)
    row = selectors.people_activity(viewer=request.user).get(pk=person.pk)
    context = {
        "person": row,
        "last_seen": selectors.last_seen(row),
        "batches": selectors.batches_to_name(viewer=request.user),
    }
    return render(request, "hits/people/detail.html", context)


@researcher_required
@require_POST
def person_signin_link(request: HttpRequest, person_id: int) -> HttpResponse:
    """A one-time sign-in link, e-mailed or shown once."""
    person = selectors.person_for(request.user, person_id, act=True)
    form = LinkForm(request.POST)
    send = form.is_valid() and form.cleaned_data["send"]
    try:
        link = services.person_signin_link(person=person, send=send, by=request.user)
    except services.PersonInvalid as error:
        messages.error(request, str(error))
        return redirect("people-detail", person_id=person.pk)
    return render(request, "hits/people/made.html", {"rows": [(person, link)], "sent": send})


@researcher_required
@require_POST
def person_password_reset(request: HttpRequest, person_id: int) -> HttpResponse:
    """Reset a password, after a confirmation: the old one stops working, a one-time link sets a new one."""
    person = selectors.person_for(request.user, person_id, act=True)
    form = LinkForm(request.POST)
    send = form.is_valid() and form.cleaned_data["send"]
    if not confirmed(request):
        return confirmation_page(
            request,
            title=f"Reset the password of {person.username}",
            effects=[
                f"stop {person.username}'s password and every earlier link working at once",
                "e-mail them a one-time link to set a new one" if send else "show you a one-time link to give them",
            ],
            button="Reset the password",
            cancel_url=reverse("people-detail", kwargs={"person_id": person.pk}),
        )
    try:
        link = services.person_password_reset(person=person, send=send, by=request.user)
    except services.PersonInvalid as error:
        messages.error(request, str(error))
        return redirect("people-detail", person_id=person.pk)
    return render(request, "hits/people/made.html", {"rows": [(person, link)], "sent": send, "reset": True})


@researcher_required
@require_POST
def person_batch_add(request: HttpRequest, person_id: int) -> HttpResponse:
    """Add the person to a batch's named annotators (the editor's role in its benchmark), after a confirmation."""
    person = selectors.person_for(request.user, person_id)
    back = reverse("people-detail", kwargs={"person_id": person.pk})
    batch_id = request.POST.get("batch", "")
    if not batch_id.isdigit():
        messages.error(request, "Choose a batch.")
        return redirect(back)
    batch = object_for(request.user, Batch.objects.select_related("benchmark"), Role.EDITOR, pk=int(batch_id))
    worker = worker_for_user(user=person)
    if not confirmed(request):
        hits = batch.hits.filter(reserved=True).exclude(reservations__worker=worker).count()
        return confirmation_page(
            request,
            title=f"Name {person.username} for batch {batch.pk}",
            effects=[
                f"reserve the {hits} HITs of batch {batch.pk} ({batch.benchmark.name}) for {person.username} as well, "
                "one more place each: they judge every target of the batch"
            ],
            button=f"Name {person.username}",
            cancel_url=back,
        )
    try:
        added = services.batch_annotators_add(batch=batch, workers=[worker], by=request.user)
    except services.NamingRefused as error:
        messages.error(request, f"Not named: {error}.")
    else:
        messages.success(request, f"{person.username} is named for batch {batch.pk}: {added} HITs wait for them.")
    return redirect(back)


class SigninView(auth_views.PasswordResetConfirmView):
    """The page a one-time link opens: choose a password, and be signed in. A used, replaced or
    expired link says so."""

    template_name = "hits/people/signin.html"
    post_reset_login = True
    post_reset_login_backend = "crowdlex.authentication.AccountBackend"
    success_url = reverse_lazy("home")

    def form_valid(self, form: Any) -> HttpResponse:
        response = super().form_valid(form)
        messages.success(self.request, "Your password is set: you are signed in.")
        return response
