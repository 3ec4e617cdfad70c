"""The signed-in account kept beside the session in the shared cache (docs/design.md §7, "The
signed-in account, kept").

Every signed-in request reads its account (``crowdlex.authentication.account_load``: the user row,
whether it holds each role, its local worker): one statement, and on a page a transaction of its
own. With a shared Redis cache (``CACHE_URL``) the row that statement returns is kept in the cache
for ``ACCOUNT_KEPT_SECONDS`` under the account's id, and the session store (``crowdlex.sessions``)
reads it together with the session in one round trip, through a pointer from the session's key to
the account's id that the first fill leaves. The backend's ``get_user`` then answers from it.

A kept account must never outlive a change to it, so every kept row carries two stamps: the
account's version (``account-version:<id>``, bumped by ``account_forget``) and the epoch of every
account (``account-epoch``, bumped by ``account_forget_all``, for a change to the role groups). A
row is used only while both stamps are what they were when it was read from the database, and it is
stored only if neither moved between reading the stamps and storing it (a compare-and-set in one
script): a change that commits while a fill reads the database bumps the stamps after its commit, so
the fill either fails its compare or is forgotten by that bump. ``account_forget`` runs at the write
(inside its transaction) and again after the commit: a fill between the two may read the row before
the commit, and the second bump forgets it.

What changes an account is found through Django's signals (saves and deletions of accounts, workers
and groups, group membership); a write that sends none names the accounts it changed with
``account_forget``. Whatever still slips through lives at most ``ACCOUNT_KEPT_SECONDS``.

The scripts compose keys from prefixes (``crowdlex.cache.database_key`` puts the key last), so the
cache must be one Redis server, not a cluster.
"""

from __future__ import annotations

import contextvars
import logging
import pickle
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.auth import HASH_SESSION_KEY
from django.contrib.auth import middleware as auth_middleware
from django.contrib.auth.models import Group, User
from django.core.cache import caches
from django.db import transaction
from django.db.models.signals import m2m_changed, post_delete, post_save, pre_save
from django.utils.crypto import constant_time_compare
from django.utils.functional import SimpleLazyObject

from crowdlex.cache import RedisCache

logger = logging.getLogger(__name__)

# A version stamp outlives any fill that could have read it (a fill reads the stamps, the database,
# then stores, within one request), so a bump is never lost to the stamp expiring meanwhile.
_VERSION_SECONDS = 24 * 3600

# The session and, through the session key's pointer, the account's kept row and both stamps: a
# function of KEYS[1..3] and ARGV[1..2], which other scripts compose (``crowdlex.kept_pages``).
LOAD_FUNCTION = """
local function session_and_account()
  local session = redis.call('GET', KEYS[1])
  local id = redis.call('GET', KEYS[2])
  if not id then return {session} end
  return {session, id, redis.call('GET', ARGV[1] .. id), redis.call('GET', ARGV[2] .. id), redis.call('GET', KEYS[3])}
end
"""
_LOAD = LOAD_FUNCTION + "return session_and_account()\n"
# One account's kept row and stamps, pointing the session's key (when there is one) at the account.
_PEEK = """
if KEYS[4] ~= '' then redis.call('SET', KEYS[4], ARGV[1], 'EX', ARGV[2]) end
return {redis.call('GET', KEYS[1]), redis.call('GET', KEYS[2]), redis.call('GET', KEYS[3])}
"""
# Store the row only if neither stamp moved since they were read before the database was.
_FILL = """
if (redis.call('GET', KEYS[2]) or '') ~= ARGV[1] or (redis.call('GET', KEYS[3]) or '') ~= ARGV[2] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[3], 'EX', ARGV[4])
if KEYS[4] ~= '' then redis.call('SET', KEYS[4], ARGV[5], 'EX', ARGV[4]) end
return 1
"""


@dataclass(frozen=True)
class Kept:
    """What the cache held for one account: its kept row as stored (or None) and the stamps as they
    are now, which the row must carry to be used and a fill must find unchanged."""

    stored: bytes | None
    version: bytes
    epoch: bytes

    def row(self, account_id: str, fmt: str) -> tuple[Any, ...] | None:
        """The kept row if it is this account's, in this format, and both its stamps are current."""
        if self.stored is None:
            return None
        kept_id, kept_fmt, version, epoch, row = pickle.loads(self.stored)  # written by ``Keeper.fill``
        return row if (kept_id, kept_fmt, version, epoch) == (account_id, fmt, self.version, self.epoch) else None


class Keeper:
    """The account rows kept in one Redis cache."""

    def __init__(self, cache: RedisCache) -> None:
        self.cache = cache
        self.seconds = settings.ACCOUNT_KEPT_SECONDS
        self.client = cache.redis_client()
        self.row_prefix = cache.make_key("account:")
        self.version_prefix = cache.make_key("account-version:")
        self.epoch_key = cache.make_key("account-epoch")
        self.scripts = {name: self.client.register_script(text) for name, text in _SCRIPTS.items()}

    def pointer_key(self, session_key: str | None) -> str:
        return self.cache.make_key(f"account-of-session:{session_key}") if session_key else ""

    def load_with_session(self, session_cache_key: str, session_key: str | None) -> tuple[bytes | None, Any]:
        """The session's raw value and, if the session key points at an account, that account's id
        with its ``Kept`` (else None): one round trip."""
        found = self.scripts["load"](keys=self.load_keys(session_cache_key, session_key), args=self.load_args())
        return self.loaded(found)

    def load_keys(self, session_cache_key: str, session_key: str | None) -> list[str]:
        """The keys ``LOAD_FUNCTION`` reads, its first three."""
        return [session_cache_key, self.pointer_key(session_key), self.epoch_key]

    def load_args(self) -> list[str]:
        """The arguments ``LOAD_FUNCTION`` reads, its first two."""
        return [self.row_prefix, self.version_prefix]

    @staticmethod
    def loaded(found: list[Any]) -> tuple[bytes | None, Any]:
        """What ``LOAD_FUNCTION`` answered, as ``load_with_session`` returns it."""
        if len(found) < 2 or found[1] is None:
            return found[0], None
        session, account_id, raw, version, epoch = found
        return session, (account_id.decode(), _kept(raw, version, epoch))

    def peek(self, account_id: str, session_key: str | None) -> Kept:
        """One account's ``Kept``, pointing the session's key at it: one round trip."""
        raw, version, epoch = self.scripts["peek"](
            keys=[*self._account_keys(account_id), self.pointer_key(session_key)], args=[account_id, self.seconds]
        )
        return _kept(raw, version, epoch)

    def _account_keys(self, account_id: str) -> list[str]:
        return [self.row_prefix + account_id, self.version_prefix + account_id, self.epoch_key]

    def fill(self, account_id: str, fmt: str, kept: Kept, row: tuple[Any, ...], session_key: str | None) -> bool:
        """Keep the row read from the database after ``kept``'s stamps were; False if either stamp
        moved meanwhile (a change committed, and the row may predate it)."""
        payload = pickle.dumps((account_id, fmt, kept.version, kept.epoch, row), pickle.HIGHEST_PROTOCOL)
        stored = self.scripts["fill"](
            keys=[*self._account_keys(account_id), self.pointer_key(session_key)],
            args=[kept.version, kept.epoch, payload, self.seconds, account_id],
        )
        return bool(stored)

    def forget(self, account_ids: list[str]) -> None:
        pipe = self.client.pipeline(transaction=True)
        for account_id in account_ids:
            pipe.incr(self.version_prefix + account_id)
            pipe.expire(self.version_prefix + account_id, _VERSION_SECONDS)
            pipe.delete(self.row_prefix + account_id)
        pipe.execute()

    def forget_all(self) -> None:
        self.client.incr(self.epoch_key)


_SCRIPTS = {"load": _LOAD, "peek": _PEEK, "fill": _FILL}


def _kept(stored: bytes | None, version: bytes | None, epoch: bytes | None) -> Kept:
    return Kept(stored, version or b"", epoch or b"")


# The keeper of each cache, by the cache's identity (a change of settings replaces the caches).
_keepers: dict[int, Keeper] = {}


def keeper(cache: Any = None) -> Keeper | None:
    """The keeper of the shared cache (or of ``cache``), or None where accounts are not kept: no
    Redis cache, or ``ACCOUNT_KEPT_SECONDS`` is 0."""
    cache = caches[settings.SESSION_CACHE_ALIAS] if cache is None else cache
    if not isinstance(cache, RedisCache) or settings.ACCOUNT_KEPT_SECONDS <= 0:
        return None
    found = _keepers.get(id(cache))
    if found is None or found.cache is not cache or found.seconds != settings.ACCOUNT_KEPT_SECONDS:
        found = _keepers[id(cache)] = Keeper(cache)
    return found


# The session of the request whose account ``auth.get_user`` is reading (``AuthenticationMiddleware``).
_session: contextvars.ContextVar[Any] = contextvars.ContextVar("crowdlex_account_session", default=None)


class AuthenticationMiddleware(auth_middleware.AuthenticationMiddleware):
    """Django's, handing the request's session to the backend while Django reads the account, so
    that the backend can answer from the account the session store read with the session."""

    def process_request(self, request: Any) -> None:
        super().process_request(request)
        request.user = SimpleLazyObject(lambda: _user_of(request))


def _user_of(request: Any) -> Any:
    token = _session.set(request.session)
    try:
        return auth_middleware.get_user(request)
    finally:
        _session.reset(token)


def account_signed_in(
    account_id: Any, *, fmt: str, load: Callable[[], tuple[Any, ...] | None], build: Callable[[Any], Any]
) -> Any:
    """The account of this id as ``build`` makes it from its row: the kept row when there is a current
    one, else the row ``load`` reads from the database, kept for the next request. None if there is
    no such account. ``fmt`` names the row's columns (a deployment that changes them reads none of
    the rows kept before).

    A kept account whose session hash differs from the session's is read again: after a password
    change (through ``update_session_auth_hash``) the session holds the new hash before the row's
    forget can be relied on, and a database rebuilt under the same name reuses ids.
    """
    found_keeper = keeper()
    if found_keeper is None:
        row = load()
        return None if row is None else build(row)
    store = _session.get()
    session_key = getattr(store, "session_key", None)
    key = str(account_id)
    try:
        kept = getattr(store, "kept_account", None)
        if kept is None or kept[0] != key:
            kept = (key, found_keeper.peek(key, session_key))
        stamps = kept[1]
        row = stamps.row(key, fmt)
        if row is not None:
            user = build(row)
            if _session_agrees(store, user):
                return user
    except Exception:
        logger.exception("The kept account could not be read; reading it from the database")
        row = load()
        return None if row is None else build(row)
    row = load()
    if row is None:
        return None
    try:
        found_keeper.fill(key, fmt, stamps, row, session_key)
    except Exception:
        logger.exception("The account could not be kept")
    return build(row)


def _session_agrees(store: Any, user: Any) -> bool:
    held = store.get(HASH_SESSION_KEY) if store is not None else None
    return not held or constant_time_compare(held, user.get_session_auth_hash())


def account_forget(user_ids: Iterable[Any]) -> None:
    """Make the next request of each of these accounts read it from the database: now (inside the
    writer's transaction) and again once that transaction commits. For writes that send no signal
    (``QuerySet.update``, raw SQL, bulk operations) on accounts, their role memberships or workers."""
    ids = sorted({str(pk) for pk in user_ids if pk is not None})
    if ids:
        _now_and_at_commit(lambda found: found.forget(ids))


def account_forget_all() -> None:
    """Make the next request of every account read it from the database (a role group renamed or
    deleted, memberships cleared from a group's side)."""
    _now_and_at_commit(lambda found: found.forget_all())


def _now_and_at_commit(forget: Callable[[Keeper], None]) -> None:
    found = keeper()
    if found is None:
        return

    def run() -> None:
        try:
            forget(found)
        except Exception:
            # A cache out of reach keeps what it held: it lives at most ACCOUNT_KEPT_SECONDS.
            logger.exception("A kept account could not be forgotten")

    run()
    if transaction.get_connection().in_atomic_block:
        transaction.on_commit(run)


# What changes a kept account, as Django's signals tell it.


def _user_changed(sender: Any, instance: User, **kwargs: Any) -> None:
    account_forget([instance.pk])


def _worker_saving(sender: Any, instance: Any, update_fields: Any = None, **kwargs: Any) -> None:
    """A worker relinked to another account changes the account it leaves, too."""
    if instance.pk is None or (update_fields is not None and "user" not in update_fields) or keeper() is None:
        return
    before = type(instance)._base_manager.filter(pk=instance.pk).values_list("user_id", flat=True).first()
    if before is not None and before != instance.user_id:
        account_forget([before])


def _worker_changed(sender: Any, instance: Any, **kwargs: Any) -> None:
    account_forget([instance.user_id])


def _group_changed(sender: Any, instance: Group, created: bool = False, **kwargs: Any) -> None:
    # A new group has no members; a renamed or deleted one may change the roles of all of its.
    if not created:
        account_forget_all()


def _membership_changed(sender: Any, instance: Any, action: str, reverse: bool, pk_set: Any, **kwargs: Any) -> None:
    if action not in ("post_add", "post_remove", "post_clear"):
        return
    if not reverse:
        account_forget([instance.pk])
    elif pk_set is not None:
        account_forget(pk_set)
    else:
        account_forget_all()


def connect_signals() -> None:
    from annotation.models import Worker

    post_save.connect(_user_changed, sender=User, dispatch_uid="account-user-saved")
    post_delete.connect(_user_changed, sender=User, dispatch_uid="account-user-deleted")
    pre_save.connect(_worker_saving, sender=Worker, dispatch_uid="account-worker-saving")
    post_save.connect(_worker_changed, sender=Worker, dispatch_uid="account-worker-saved")
    post_delete.connect(_worker_changed, sender=Worker, dispatch_uid="account-worker-deleted")
    post_save.connect(_group_changed, sender=Group, dispatch_uid="account-group-saved")
    post_delete.connect(_group_changed, sender=Group, dispatch_uid="account-group-deleted")
    m2m_changed.connect(_membership_changed, sender=User.groups.through, dispatch_uid="account-memberships")
