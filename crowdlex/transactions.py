"""One transaction for the whole of a request that writes, for the views of the annotator's cycle alone.

Outside a transaction every read commits on its own: the account's read before a claim or a submit,
the page's reads after a claim, were each a transaction of their own on the server. A view that
wears ``in_one_transaction`` reads the account, does its work and reads what it answers in one
transaction, committed before the response leaves (Django's ``ATOMIC_REQUESTS``, for these views
only: the rest of the platform keeps its transactions where its services open them).

A GET or HEAD only reads: its statements stay in autocommit, where each is a transaction of its
own but no BEGIN or COMMIT goes to the server (two round trips more than the reads they would
group).

A service that runs inside such a view joins the transaction (``savepoint=False``): when it raises,
the whole transaction is rolled back and no further statement may run in it. A view that answers
such an error with a page that reads the database raises ``AfterRollback`` with the function that
builds the answer; it is called once the transaction is rolled back, outside any transaction.

Put this inside ``retry_on_lost_connection``: a lost connection then leaves the transaction before
the retry looks, so the view runs again from the start on a new connection.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar, cast

from django.db import transaction
from django.http import HttpRequest

View = TypeVar("View", bound=Callable[..., Any])

READ_ONLY_METHODS = frozenset({"GET", "HEAD"})


class AfterRollback(Exception):
    """Not an error: roll the request's transaction back, then answer with ``respond()``."""

    def __init__(self, respond: Callable[[], Any]) -> None:
        super().__init__("answered after the request's transaction was rolled back")
        self.respond = respond


def in_one_transaction(view: View) -> View:
    """Run ``view`` (a function view or a class's ``dispatch``) in one transaction unless the request
    only reads; see the module."""

    @wraps(view)
    def wrapper(request: HttpRequest, *args: Any, **kwargs: Any) -> Any:
        if request.method in READ_ONLY_METHODS:
            return view(request, *args, **kwargs)
        try:
            with transaction.atomic():
                return view(request, *args, **kwargs)
        except AfterRollback as deferred:
            return deferred.respond()

    return cast(View, wrapper)
