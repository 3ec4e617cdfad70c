from typing import Any

from django.http import HttpRequest

from annotation.roles import is_annotator, is_researcher


def roles(request: HttpRequest) -> dict[str, Any]:
    """Expose the viewer's role to templates so navigation shows only what they may use."""
    user = getattr(request, "user", None)
    signed_in = bool(user is not None and user.is_authenticated)
    return {
        "is_researcher": signed_in and is_researcher(user),
        "is_annotator": signed_in and is_annotator(user),
    }
