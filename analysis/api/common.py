"""What every analysis API module shares: reading a query string through a serializer."""

from __future__ import annotations

from typing import Any

from rest_framework import serializers
from rest_framework.request import Request


def query(serializer_class: type[serializers.Serializer[Any]], request: Request) -> dict[str, Any]:
    """The query string checked by ``serializer_class`` (a 400 with field errors otherwise)."""
    given = serializer_class(data=request.query_params)
    given.is_valid(raise_exception=True)
    return dict(given.validated_data)
