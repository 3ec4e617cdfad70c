"""REST API of people management for researchers (docs/people.md, docs/api.md): the annotators and
who is active, new accounts (one, or a CSV file), one-time sign-in links, password resets and a
batch's named annotators. Each view calls one service of ``hits.people``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.contrib.auth.models import User
from drf_spectacular.utils import extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.exceptions import ValidationError
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.access import Role, object_for
from annotation.api import ImportErrorSerializer
from annotation.importers.errors import ImportFailed
from annotation.importers.reading import source_name, validate_upload_size
from annotation.services import workers_by_username
from crowdlex.pagination import PaginatedList
from crowdlex.permissions import IsResearcher
from hits.models import Batch
from hits.people import selectors, services


class PersonSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    username = serializers.CharField()
    email = serializers.CharField()
    name = serializers.CharField(source="first_name")
    last_seen = serializers.SerializerMethodField()
    submitted_day = serializers.IntegerField(help_text="HITs submitted in the last 24 hours, in your benchmarks")
    submitted_week = serializers.IntegerField(help_text="HITs submitted in the last 7 days, in your benchmarks")
    submitted_total = serializers.IntegerField()
    blocked = serializers.SerializerMethodField()

    @extend_schema_field(serializers.DateTimeField(allow_null=True))
    def get_last_seen(self, person: User) -> Any:
        seen = selectors.last_seen(person)
        return serializers.DateTimeField().to_representation(seen) if seen else None

    def get_blocked(self, person: User) -> bool:
        worker = getattr(person, "worker", None)
        return bool(worker is not None and worker.blocked)


class PersonCreateSerializer(serializers.Serializer):
    username = serializers.CharField(max_length=services.USERNAME_MAX_LENGTH)
    email = serializers.EmailField()
    name = serializers.CharField(max_length=services.NAME_MAX_LENGTH, required=False, allow_blank=True, default="")
    send = serializers.BooleanField(default=False, help_text="e-mail the one-time sign-in link")


class LinkRequestSerializer(serializers.Serializer):
    send = serializers.BooleanField(default=False, help_text="e-mail the link rather than only answer it")


class LinkSerializer(serializers.Serializer):
    username = serializers.CharField()
    url = serializers.CharField(help_text="the one-time link: it sets a password and signs in")
    emailed = serializers.BooleanField()


class PeopleUploadSerializer(serializers.Serializer):
    file = serializers.FileField(help_text="CSV: a header line naming username, email and optionally name")
    send = serializers.BooleanField(default=False)


class NamedAnnotatorsSerializer(serializers.Serializer):
    usernames = serializers.ListField(child=serializers.CharField(max_length=200), min_length=1, max_length=1000)


class NamedResultSerializer(serializers.Serializer):
    batch = serializers.IntegerField()
    places_added = serializers.IntegerField()


def _links(people: list[User], *, send: bool, by: Any) -> list[dict[str, Any]]:
    links = [(person, services.person_signin_link(person=person, send=send, by=by)) for person in people]
    return [{"username": person.username, "url": link.url, "emailed": link.emailed} for person, link in links]


class PeopleApi(PaginatedList, APIView):
    """Annotators' accounts, the most recently active first (GET); make one (POST)."""

    permission_classes = [IsResearcher]

    @extend_schema(responses=PersonSerializer(many=True))
    def get(self, request: Request) -> Response:
        rows = selectors.people_activity(viewer=request.user, query=request.query_params.get("q", ""))
        return self.paginated(request, rows, PersonSerializer)

    @extend_schema(request=PersonCreateSerializer, responses={201: LinkSerializer})
    def post(self, request: Request) -> Response:
        data = PersonCreateSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        values = data.validated_data
        try:
            person = services.annotator_create(
                username=values["username"], email=values["email"], name=values["name"], by=request.user
            )
        except services.PersonInvalid as error:
            raise ValidationError({error.field: [str(error)]}) from error
        (link,) = _links([person], send=values["send"], by=request.user)
        return Response(link, status=status.HTTP_201_CREATED)


class PeopleImportApi(APIView):
    """Make the accounts a CSV file lists, all or none; each answer holds its one-time link."""

    permission_classes = [IsResearcher]
    parser_classes = [MultiPartParser]

    @extend_schema(
        request={"multipart/form-data": PeopleUploadSerializer},
        responses={201: LinkSerializer(many=True), 400: ImportErrorSerializer},
    )
    def post(self, request: Request) -> Response:
        data = PeopleUploadSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        try:
            validate_upload_size(upload)
            made = services.annotators_import(upload=upload, file=source_name(upload), by=request.user)
        except ImportFailed as error:
            return Response(error.as_dict(), status=status.HTTP_400_BAD_REQUEST)
        return Response(_links(made, send=data.validated_data["send"], by=request.user), status=201)


def _link_response(request: Request, person_id: int, make: Callable[..., Any]) -> Response:
    """One person's one-time link, made by ``make`` (a sign-in link or a password reset) and e-mailed
    when asked; what the person may not be sent is a 400 naming the field."""
    person = selectors.person_for(request.user, person_id, act=True)
    data = LinkRequestSerializer(data=request.data)
    data.is_valid(raise_exception=True)
    try:
        link = make(person=person, send=data.validated_data["send"], by=request.user)
    except services.PersonInvalid as error:
        raise ValidationError({error.field: [str(error)]}) from error
    return Response({"username": person.username, "url": link.url, "emailed": link.emailed})


class PersonSigninLinkApi(APIView):
    """A one-time sign-in link for an annotator, e-mailed when asked."""

    permission_classes = [IsResearcher]

    @extend_schema(request=LinkRequestSerializer, responses=LinkSerializer)
    def post(self, request: Request, person_id: int) -> Response:
        return _link_response(request, person_id, services.person_signin_link)


class PersonPasswordResetApi(APIView):
    """Reset an annotator's password: the old one stops working; a one-time link sets a new one."""

    permission_classes = [IsResearcher]

    @extend_schema(request=LinkRequestSerializer, responses=LinkSerializer)
    def post(self, request: Request, person_id: int) -> Response:
        return _link_response(request, person_id, services.person_password_reset)


class BatchAnnotatorsApi(APIView):
    """Add annotators, by username, to the named list of a batch of named annotators."""

    permission_classes = [IsResearcher]

    @extend_schema(request=NamedAnnotatorsSerializer, responses=NamedResultSerializer)
    def post(self, request: Request, pk: int) -> Response:
        batch = object_for(request.user, Batch.objects.all(), Role.EDITOR, pk=pk)
        data = NamedAnnotatorsSerializer(data=request.data)
        data.is_valid(raise_exception=True)
        usernames = data.validated_data["usernames"]
        accounts = {user.username: user for user in selectors.annotator_accounts().filter(username__in=usernames)}
        unknown = [name for name in usernames if name not in accounts]
        if unknown:
            raise ValidationError({"usernames": [f"no annotator's account named {', '.join(unknown[:20])}"]})
        workers = workers_by_username(usernames=usernames)
        try:
            added = services.batch_annotators_add(batch=batch, workers=workers, by=request.user)
        except services.NamingRefused as error:
            raise ValidationError({"batch": [str(error)]}) from error
        return Response({"batch": batch.pk, "places_added": added})
