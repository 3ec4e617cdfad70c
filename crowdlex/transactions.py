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

Work held to the commit (``hold_to_commit``): a write that locks a row every transaction of its kind
waits on (a benchmark's change counter) is held while the transaction runs and made when its
outermost atomic block is about to commit, after every other lock the transaction takes
(docs/design.md §7, "The counter row is locked last"). Django runs nothing just before a commit
(``on_commit`` runs after it), so ``install_hold_to_commit`` wraps the exit of Django's atomic block
once per process: every transaction the platform opens is an atomic block (a service's, a task's,
``in_one_transaction``), so none commits without making what it held.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar, cast

from django.db import DEFAULT_DB_ALIAS, connections, transaction
from django.db.transaction import Atomic, TransactionManagementError, get_connection
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


# Where a connection keeps the work held to its commit: (the savepoints open when it was held, the
# function that makes it, the item), in the order held.
_HELD = "crowdlex_held_to_commit"
# Django's exit of an atomic block, wrapped by ``install_hold_to_commit`` (None until then).
_django_exit: Callable[..., Any] | None = None

Held = tuple[frozenset[str], Callable[[list[Any]], None], Any]


def install_hold_to_commit() -> None:
    """Make, just before each transaction's outermost atomic block commits, the work held for it
    (``hold_to_commit``); drop the work held inside a block that rolls back, to its savepoint or
    whole. Once per process (annotation's app, the first of the platform's to load)."""
    global _django_exit
    if _django_exit is not None:
        return
    _django_exit = Atomic.__exit__
    Atomic.__exit__ = _exit  # type: ignore[method-assign]


def _of_a_test(block: Atomic) -> bool:
    """Whether a test case opened the block (Django's test cases mark theirs)."""
    return bool(getattr(block, "_from_testcase", False))


def _outermost(connection: Any) -> bool:
    """Whether the innermost open atomic block is the outermost one the platform opened (a test's
    own blocks, which roll back, stand in for the database's transaction)."""
    return all(_of_a_test(block) for block in connection.atomic_blocks[:-1])


def _exit(block: Atomic, exc_type: Any, exc_value: Any, traceback: Any) -> Any:
    assert _django_exit is not None
    connection = get_connection(block.using)
    held: list[Held] | None = connection.__dict__.get(_HELD)
    if held and connection.in_atomic_block:
        if exc_type is None and not connection.needs_rollback and not connection.closed_in_transaction:
            if not _of_a_test(block) and _outermost(connection):
                try:
                    _make_held(connection)
                except BaseException as error:
                    _django_exit(block, type(error), error, error.__traceback__)
                    raise
        elif connection.savepoint_ids and connection.savepoint_ids[-1] is not None:
            # Rolled back to the block's savepoint: what was held inside it is not made.
            savepoint = connection.savepoint_ids[-1]
            held[:] = [entry for entry in held if savepoint not in entry[0]]
    try:
        return _django_exit(block, exc_type, exc_value, traceback)
    finally:
        if not connection.in_atomic_block:
            connection.__dict__.pop(_HELD, None)  # the transaction is over, committed or rolled back


def _make_held(connection: Any) -> None:
    held: list[Held] = connection.__dict__.pop(_HELD, [])
    by_maker: dict[Callable[[list[Any]], None], list[Any]] = {}
    for _, make, item in held:
        by_maker.setdefault(make, []).append(item)
    for make, items in by_maker.items():
        make(items)


def hold_to_commit(make: Callable[[list[Any]], None], item: Any, *, using: str = DEFAULT_DB_ALIAS) -> bool:
    """Hold ``item`` to the end of the transaction: just before its outermost atomic block commits,
    ``make`` is called once with every item held for it, in the order held; a block that rolls back
    (to its savepoint or whole) drops the items held inside it. True when held; False outside any
    transaction (each statement commits on its own; a test's own block), where the caller makes the
    item at once. Raises where nothing would make it: a transaction opened without an atomic block,
    or a process where ``install_hold_to_commit`` has not run."""
    if _django_exit is None:
        raise RuntimeError("work held to the commit needs install_hold_to_commit() first")
    connection = connections[using]
    if not connection.in_atomic_block:
        if not connection.get_autocommit():
            raise TransactionManagementError("work held to the commit needs an atomic block, not a manual transaction")
        return False
    if all(_of_a_test(block) for block in connection.atomic_blocks):
        return False
    held: list[Held] = connection.__dict__.setdefault(_HELD, [])
    held.append((frozenset(sid for sid in connection.savepoint_ids if sid is not None), make, item))
    return True


def taken_from_hold(
    make: Callable[[list[Any]], None], which: Callable[[Any], bool], *, using: str = DEFAULT_DB_ALIAS
) -> list[Any]:
    """Remove from the connection's hold the items held for ``make`` that ``which`` picks, and return
    them in the order held: the caller makes them now, not at the commit."""
    held: list[Held] | None = connections[using].__dict__.get(_HELD)
    if not held:
        return []
    taken = [entry for entry in held if entry[1] is make and which(entry[2])]
    if taken:
        held[:] = [entry for entry in held if not (entry[1] is make and which(entry[2]))]
    return [item for _, _, item in taken]
