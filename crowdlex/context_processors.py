from typing import Any

from django.http import HttpRequest

from annotation.roles import is_researcher


def roles(request: HttpRequest) -> dict[str, Any]:
    """Expose the viewer's role to templates so navigation shows only what they may use."""
    user = getattr(request, "user", None)
    return {"is_researcher": bool(user is not None and user.is_authenticated and is_researcher(user))}
