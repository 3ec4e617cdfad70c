"""Pagination of the API's lists."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.db.models import QuerySet
from rest_framework import pagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import Serializer

MAX_PAGE_SIZE = 1000


class LimitOffsetPagination(pagination.LimitOffsetPagination):
    """``?limit=&offset=`` with at most MAX_PAGE_SIZE rows a page (a larger limit gets that many)."""

    max_limit = MAX_PAGE_SIZE

    def get_schema_operation_parameters(self, view: Any) -> list[dict[str, Any]]:
        parameters = super().get_schema_operation_parameters(view)
        for parameter in parameters:
            parameter["schema"]["minimum"] = 0
            if parameter["name"] == self.limit_query_param:
                parameter["schema"]["maximum"] = self.max_limit
        return parameters


class PaginatedList:
    """For an ``APIView`` that answers a list: ``?limit=&offset=`` like every generic list.

    The schema generator sees ``pagination_class`` and declares the page (``count``, ``next``,
    ``previous``, ``results``) and its query parameters for the operation's listed serializer.
    """

    pagination_class = LimitOffsetPagination

    def paginated(
        self,
        request: Request,
        rows: Sequence[Any] | QuerySet[Any],
        serializer_class: type[Serializer[Any]],
        **kwargs: Any,
    ) -> Response:
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(rows, request, view=self)  # type: ignore[arg-type]
        return paginator.get_paginated_response(serializer_class(page, many=True, **kwargs).data)
