"""API token authentication that reads the account's roles in the same query.

Every annotator request is authenticated and then checked for a role; reading both at once
saves a round trip to the database on each call of the work queue. The account's local worker
is joined too, for ``annotation.services.worker_for_user``.
"""

from typing import Any

from django.contrib.auth.models import User
from django.db.models import Exists, OuterRef
from django.utils.translation import gettext_lazy as _
from rest_framework import authentication, exceptions
from rest_framework.authtoken.models import Token

from annotation.roles import ROLES, remember_roles

_Membership = User.groups.through


class TokenAuthentication(authentication.TokenAuthentication):
    def authenticate_credentials(self, key: str) -> tuple[Any, Token]:
        in_role = {
            f"in_{role}": Exists(_Membership.objects.filter(user_id=OuterRef("user_id"), group__name=role))
            for role in ROLES
        }
        try:
            token = Token.objects.select_related("user__worker").annotate(**in_role).get(key=key)
        except Token.DoesNotExist as missing:
            raise exceptions.AuthenticationFailed(_("Invalid token.")) from missing
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed(_("User inactive or deleted."))
        remember_roles(token.user, frozenset(role for role in ROLES if getattr(token, f"in_{role}")))
        return (token.user, token)
