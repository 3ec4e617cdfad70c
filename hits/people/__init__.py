"""People management for researchers (docs/people.md): annotator accounts, one-time sign-in links,
password resets, a batch's named annotators and who is active. One service per operation, called by
the pages, the API and the ``annotators_create`` command."""

from hits.people.selectors import annotator_accounts, batches_to_name, last_seen, people_activity, person_for
from hits.people.services import (
    CSV_COLUMNS,
    NamingRefused,
    NewPerson,
    PersonInvalid,
    SigninLink,
    annotator_create,
    annotators_import,
    batch_annotators_add,
    is_managed_account,
    person_password_reset,
    person_signin_link,
    signin_url,
)

__all__ = [
    "CSV_COLUMNS",
    "NamingRefused",
    "NewPerson",
    "PersonInvalid",
    "SigninLink",
    "annotator_accounts",
    "annotator_create",
    "annotators_import",
    "batch_annotators_add",
    "batches_to_name",
    "is_managed_account",
    "last_seen",
    "people_activity",
    "person_for",
    "person_password_reset",
    "person_signin_link",
    "signin_url",
]
