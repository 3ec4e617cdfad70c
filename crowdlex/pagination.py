"""Pagination of the API's lists."""

from __future__ import annotations

from typing import Any

from rest_framework import pagination

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
