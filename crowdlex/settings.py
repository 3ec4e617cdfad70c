"""Settings for crowdlex, read from environment variables (see .env.example).

With DEBUG=1 and nothing else set, the platform runs from a fresh checkout: SQLite in the
checkout, Celery tasks executed inline (``make run`` does this). DEBUG is off unless set, so a
deployment that forgets it shows no tracebacks; production sets DATABASE_URL, CELERY_BROKER_URL,
SECRET_KEY, ALLOWED_HOSTS and the HTTPS settings (docs/deploy.md).
"""

from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from crowdlex.env import env_bool, env_decimal, env_int, env_list, env_networks, env_str

BASE_DIR = Path(__file__).resolve().parent.parent

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured(
            "SECRET_KEY is required when DEBUG is off: set DEBUG=1 for the embedded default (SQLite, tasks "
            "inline), or SECRET_KEY, ALLOWED_HOSTS and DATABASE_URL for production (docs/deploy.md)"
        )
    SECRET_KEY = "insecure-development-key-only-for-debug"
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"] if DEBUG else [])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
# Public HTTPS base URL of this platform, used in MTurk ExternalQuestions and links in e-mails.
SITE_URL = env_str("SITE_URL", "http://127.0.0.1:8000").rstrip("/")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "axes",
    "annotation",
    "schemes",
    "hits",
    "crowds",
    # Each crowd's own package, for its commands (CROWD_BACKENDS below names the crowds themselves).
    "crowds.mturk",
    "crowds.prolific",
    "review",
    "analysis",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # With, inside it, the API's JSON errors and either trailing-slash spelling under /api/
    # (crowdlex.api_errors) and the 400 for input nested too deeply to parse (crowdlex.middleware).
    "crowdlex.middleware.SecurityHeadersMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    # Django's, letting the backend answer from the account read with the session (crowdlex.accounts).
    "crowdlex.accounts.AuthenticationMiddleware",
    # Django's, reading the messages only once something reads or adds one.
    "crowdlex.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    # Last, so it sees the lockouts the authentication backend reports (django-axes).
    "axes.middleware.AxesMiddleware",
]

# Django's default storage of messages (a signed cookie, the session for what it cannot hold), with
# the cookie's signer made once per process and the cookies it writes and reads kept, at most this
# many of each (crowdlex.messages, docs/design.md §7, "The request's fixed cost").
MESSAGE_STORAGE = "crowdlex.messages.MessageStorage"
MESSAGE_COOKIES_KEPT = env_int("MESSAGE_COOKIES_KEPT", 1024)

ROOT_URLCONF = "crowdlex.urls"
WSGI_APPLICATION = "crowdlex.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "crowdlex.context_processors.roles",
                # In place of Django's own (always first): the form's token masked with one read of
                # the system's randomness, not 32.
                "crowdlex.context_processors.csrf",
            ],
        },
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{BASE_DIR / 'db.sqlite3'}"),
        conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 60),
        # A kept connection is tested before a request reuses it, so a restarted database costs no errors.
        conn_health_checks=True,
    )
}
# The statements of the annotator's cycle are prepared once per connection on PostgreSQL, so it plans
# them once (crowdlex.sql). Turn off behind a pooler that shares server connections between
# transactions (PgBouncer in transaction mode).
DATABASE_PREPARED_STATEMENTS = env_bool("DATABASE_PREPARED_STATEMENTS", True)
# The requests in flight when the connection is lost (PostgreSQL restarting) are run again on a new
# one for up to this long, where running them twice is safe: claim, submit, return, the work pages
# (crowdlex.reconnect). 0 turns that off.
DATABASE_RETRY_SECONDS = env_int("DATABASE_RETRY_SECONDS", 10)
# A Celery worker keeps its database connection across tasks as a web server keeps one across
# requests (for DATABASE_CONN_MAX_AGE, checked before reuse, closed after an error), rather than
# Celery's default of a new connection for every task (crowdlex/celery.py; docs/design.md §16,
# "A worker's database connection"). 0 goes back to Celery's default.
DATABASE_WORKER_KEEPS_CONNECTION = env_bool("DATABASE_WORKER_KEEPS_CONNECTION", True)
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    # Django's, with a health check that reads the socket instead of running SELECT 1 on each request
    # (crowdlex/postgresql/base.py).
    DATABASES["default"]["ENGINE"] = "crowdlex.postgresql"
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # The embedded default: write-ahead logging lets pages read while a task writes, NORMAL sync
    # makes each commit cheap (every submit commits several times), and IMMEDIATE transactions
    # take the write lock up front instead of failing with "database is locked" on upgrade.
    DATABASES["default"].setdefault("OPTIONS", {}).update(
        {"init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;", "transaction_mode": "IMMEDIATE"}
    )
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTHENTICATION_BACKENDS = [
    # First: refuses every attempt while the account and address are locked out.
    "crowdlex.authentication.LockoutBackend",
    # Django's, reading the session's account, its roles and its worker in one statement.
    "crowdlex.authentication.AccountBackend",
]
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")))
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"
        if DEBUG
        else "whitenoise.storage.CompressedManifestStaticFilesStorage"
    },
}
# Uploaded imports and finished exports.
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(BASE_DIR / "media")))
MEDIA_URL = "media/"
# Derived data that is costly to build and the same for every process of a host, built once and
# kept here (the distractor pool: a second of work per process otherwise). Safe to delete.
DERIVED_CACHE_DIR = Path(env_str("DERIVED_CACHE_DIR", str(BASE_DIR / ".cache")))
DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("DATA_UPLOAD_MAX_MEMORY_SIZE", 10 * 1024 * 1024)
# The longest URL (path and query, in characters) an /api/ path reads; a longer one answers 414 in
# the API's error shape. Below gunicorn's request line limit (crowdlex/gunicorn_conf.py), so the
# platform, not gunicorn, answers it; no query of the API comes near it.
API_MAX_URL_LENGTH = env_int("API_MAX_URL_LENGTH", 8000)
FILE_UPLOAD_MAX_MEMORY_SIZE = 2 * 1024 * 1024
# Imports (docs/formats.md, "Limits"): the largest file the upload page and the API accept, and how
# many times its compressed size a gzipped import may expand to before reading stops (the SWORDS dev
# set expands 6 times; a CSV that repeats long contexts on every row, about 50).
IMPORT_MAX_UPLOAD_BYTES = env_int("IMPORT_MAX_UPLOAD_BYTES", 100 * 1024 * 1024)
IMPORT_MAX_GZIP_RATIO = env_int("IMPORT_MAX_GZIP_RATIO", 200)
# Every upload (imports, split lists, result files, gold files) is read as a stream through one
# reader (annotation.importers.reading): the most bytes its content may have once decompressed. An
# import streams, so this bounds its time, not its memory; past it the file is refused, naming it.
IMPORT_MAX_DECOMPRESSED_BYTES = env_int("IMPORT_MAX_DECOMPRESSED_BYTES", 2 * 1024 * 1024 * 1024)
# An import runs as a job (annotation.models.ImportJob): the upload is kept in this folder under
# MEDIA_ROOT until the job has read it, then deleted. A job whose worker has been silent this long
# is taken over by a redelivered task (the import is one transaction: nothing of the first run stays).
IMPORT_UPLOAD_DIRECTORY = env_str("IMPORT_UPLOAD_DIRECTORY", "uploads")
IMPORT_JOB_HEARTBEAT_SECONDS = env_int("IMPORT_JOB_HEARTBEAT_SECONDS", 120)
# A job still pending or running this long after its upload, with no live worker, is marked failed
# and its stored upload deleted (Celery beat, every 5 minutes): its task was lost.
IMPORT_JOB_TIMEOUT_SECONDS = env_int("IMPORT_JOB_TIMEOUT_SECONDS", 6 * 3600)
# A system's result file for the evaluation (docs/evaluation.md, "Limits"): read member by member,
# at most this many bytes once decompressed and this many substitutes in all (what is kept in
# memory: about 250 bytes each). 100 substitutes for each of a thousand targets is a third of it.
EVALUATION_MAX_RESULT_BYTES = env_int("EVALUATION_MAX_RESULT_BYTES", 64 * 1024 * 1024)
EVALUATION_MAX_SUBSTITUTES = env_int("EVALUATION_MAX_SUBSTITUTES", 300_000)
# A complete evaluation (docs/design.md §14, docs/evaluation.md): bootstrap intervals over targets
# from this many seeded resamples, the central share of them in percent; at most this many of a
# system's top substitutes per target, and this many in all, are sent to be judged at once.
EVALUATION_BOOTSTRAP_RESAMPLES = env_int("EVALUATION_BOOTSTRAP_RESAMPLES", 1000)
EVALUATION_BOOTSTRAP_SEED = env_int("EVALUATION_BOOTSTRAP_SEED", 0)
EVALUATION_BOOTSTRAP_LEVEL_PERCENT = env_int("EVALUATION_BOOTSTRAP_LEVEL_PERCENT", 95)
EVALUATION_JUDGE_MAX_TOP_K = env_int("EVALUATION_JUDGE_MAX_TOP_K", 50)
EVALUATION_JUDGE_MAX_SUBSTITUTES = env_int("EVALUATION_JUDGE_MAX_SUBSTITUTES", 100_000)
# A qualification test's gold file (docs/qualification.md): a few thousand items take far less.
QUALIFICATION_MAX_GOLD_FILE_BYTES = env_int("QUALIFICATION_MAX_GOLD_FILE_BYTES", 5 * 1024 * 1024)
# A HIT's draft on the server (docs/design.md §4): its JSON size, and how many page views may report time.
DRAFT_MAX_BYTES = env_int("DRAFT_MAX_BYTES", 256 * 1024)
DRAFT_MAX_VIEWS = env_int("DRAFT_MAX_VIEWS", 200)
# How often the HIT page saves its draft to the server while it is open.
DRAFT_SAVE_SECONDS = env_int("DRAFT_SAVE_SECONDS", 20)
# Rows of the worker's own page of work (docs/design.md §11).
WORK_HISTORY_PAGE_SIZE = env_int("WORK_HISTORY_PAGE_SIZE", 50)
# What the HIT page keeps in memory per process (docs/design.md §4, "The page's fixed parts"), each
# forgotten whole when full, as task designs come and go: a scheme's page as each design shows it,
# the fragments kept per `kept_fragment` tag (keyed on those pages) and an assignment's addresses
# per route and script prefix, and the sets of choices' markup.
WORK_PAGE_DESIGNS_KEPT = env_int("WORK_PAGE_DESIGNS_KEPT", 512)
WORK_PAGE_FRAGMENTS_KEPT = env_int("WORK_PAGE_FRAGMENTS_KEPT", 512)
WORK_PAGE_CHOICE_SETS_KEPT = env_int("WORK_PAGE_CHOICE_SETS_KEPT", 256)


def _import_limit(name: str, default: int, column: int | None = None) -> int:
    """A limit on imported text, at least 1 and at most the width of the column that stores it."""
    value = env_int(name, default)
    if value < 1 or (column is not None and value > column):
        within = f"1 to {column}, the width of the column that stores it" if column else "at least 1"
        raise ImproperlyConfigured(f"{name}={value} must be {within}")
    return value


# The longest text an import accepts, in characters (docs/formats.md, "Limits"); a file with a longer
# one is refused whole, naming the line, the field and the setting. A context or a sentence: far past
# the longest of any released benchmark.
IMPORT_MAX_TEXT_LENGTH = _import_limit("IMPORT_MAX_TEXT_LENGTH", 20_000)
# A target word or phrase, and a lemma (the lemma column holds 200).
IMPORT_MAX_WORD_LENGTH = _import_limit("IMPORT_MAX_WORD_LENGTH", 200, column=200)
# A candidate substitute (its columns hold 500).
IMPORT_MAX_CANDIDATE_LENGTH = _import_limit("IMPORT_MAX_CANDIDATE_LENGTH", 500, column=500)
# An id in a file: a SWORDS context, target or substitute id, a Smart Word Suggestions sentence id.
IMPORT_MAX_ID_LENGTH = _import_limit("IMPORT_MAX_ID_LENGTH", 200, column=200)
# One line of a CSV or JSONL file, in bytes: room for many contexts of the longest kind.
IMPORT_MAX_LINE_BYTES = _import_limit("IMPORT_MAX_LINE_BYTES", 1024 * 1024)

SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", not DEBUG)
# A signed-in page sends the CSRF cookie again (renewing its age, CSRF_COOKIE_AGE: a year by
# Django's default) only once the session signed in longer ago than this, in seconds: the cookie set
# at sign-in outlives it by the rest of its age (crowdlex.context_processors.cookie_may_lapse,
# docs/design.md §7, "The form's token"); never later than half of CSRF_COOKIE_AGE. 0 renews on every page.
CSRF_COOKIE_RENEW_AFTER_SECONDS = env_int("CSRF_COOKIE_RENEW_AFTER_SECONDS", 26 * 7 * 24 * 3600)
BEHIND_HTTPS_PROXY = env_bool("BEHIND_HTTPS_PROXY", False)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if BEHIND_HTTPS_PROXY else None
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
# The health check answers over plain HTTP too, for probes that do not speak TLS.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
X_FRAME_OPTIONS = "DENY"
# Each page's Content-Security-Policy (crowdlex.middleware): nothing inline but style attributes.
CONTENT_SECURITY_POLICY: dict[str, list[str]] = {
    "default-src": ["'self'"],
    "script-src": ["'self'"],
    "style-src": ["'self'"],
    # Progress bars and chart widths are style attributes; style elements stay refused.
    "style-src-attr": ["'unsafe-inline'"],
    "img-src": ["'self'", "data:"],
    "object-src": ["'none'"],
    "base-uri": ["'none'"],
    "form-action": ["'self'"],
    "frame-ancestors": ["'none'"],
}

# Sign-in: after this many failures from one address for one account, both are locked out for a
# while (django-axes; the login page, the admin's and /api/auth-token/ alike).
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 10)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_LOCKOUT_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
# Lockouts and failures are still logged; the banner at every start and each success are not.
AXES_VERBOSE = False
AXES_CLIENT_IP_CALLABLE = "crowdlex.throttling.client_ip"
# The proxies whose X-Forwarded-For is believed (addresses or networks): the client's address, for
# sign-in lockouts and every throttle, is REMOTE_ADDR unless that is one of them, and then the last
# address of X-Forwarded-For that is not (a client can write anything further left, and one that
# reaches the server directly can write the whole header). Default: the loopback behind an HTTPS
# proxy (a proxy on the same host), else none.
TRUSTED_PROXY_ADDRESSES = env_networks("TRUSTED_PROXY_ADDRESSES", "127.0.0.0/8,::1" if BEHIND_HTTPS_PROXY else "")
# API tokens expire this long after they were issued; logging out revokes them at once.
API_TOKEN_MAX_AGE = timedelta(hours=env_int("API_TOKEN_MAX_AGE_HOURS", 24 * 7))

# The throttles count in this cache: set CACHE_URL (Redis) when several processes serve.
CACHES = {
    # Django's Redis cache, with one Redis client per connection pool rather than one per operation.
    "default": {
        **(
            {"BACKEND": "crowdlex.cache.RedisCache", "LOCATION": env_str("CACHE_URL")}
            if env_str("CACHE_URL")
            else {
                # The process's own cache, for the embedded default: figures kept per target take a
                # few entries per 64 targets each, so Django's default of 300 entries would drop them
                # on a large benchmark and recount every target on each change.
                "BACKEND": "django.core.cache.backends.locmem.LocMemCache",
                "OPTIONS": {"MAX_ENTRIES": env_int("LOCAL_CACHE_MAX_ENTRIES", 20000)},
            }
        ),
        # Every key under CACHE_KEY_PREFIX, or when it is empty under a prefix naming the database
        # (crowdlex.cache.database_key): installations sharing one Redis database never read each
        # other's sessions, counts or cached figures (docs/design.md §7).
        "KEY_PREFIX": env_str("CACHE_KEY_PREFIX", ""),
        "KEY_FUNCTION": "crowdlex.cache.database_key",
    }
}
# With a shared cache, sessions are read from it and written through to the database (a page costs
# no session statement); a cache of one process would go stale across processes, so not without.
# With it, the session store reads the signed-in account kept beside the session in the same round
# trip (crowdlex.sessions, crowdlex.accounts).
SESSION_ENGINE = "crowdlex.sessions" if env_str("CACHE_URL") else "django.contrib.sessions.backends.db"
# With a shared cache, the signed-in account (its row, roles and local worker) is kept there for at
# most this long; every change to it that the platform makes is forgotten at once, so this bounds
# only a write made outside it (SQL by hand, a restored database). 0 reads it from the database on
# every request (docs/design.md §7, "The signed-in account, kept").
ACCOUNT_KEPT_SECONDS = env_int("ACCOUNT_KEPT_SECONDS", 900)
# With a shared cache (and accounts kept), a researcher page that opts in is kept whole for at most
# this long and answered again while its session, account, CSRF cookie, figures' period and the
# benchmark's change key are unchanged (crowdlex.kept_pages); what moves no key (a claim) shows
# within it. 0 keeps none (docs/design.md §7, "Kept pages").
KEPT_PAGE_SECONDS = env_int("KEPT_PAGE_SECONDS", 60)
# The longest answer kept, in bytes (a longer one is rendered each time); a streamed download is
# collected as it is sent while within it (docs/design.md §7, "Kept pages").
KEPT_PAGE_MAX_BYTES = env_int("KEPT_PAGE_MAX_BYTES", 2_000_000)
# Of a longer download that can be made again from any of its chunks on (a CSV), the most kept of
# its head: its first chunks, served at once with the rest made after them (docs/design.md §7,
# "Kept pages"); at most KEPT_PAGE_MAX_BYTES.
KEPT_PAGE_HEAD_BYTES = env_int("KEPT_PAGE_HEAD_BYTES", 262_144)

REST_FRAMEWORK = {
    # The token first: DRF answers a request without credentials (or with bad ones) with the first
    # class's challenge, 401 with ``WWW-Authenticate: Token``; the session has no challenge to offer.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "crowdlex.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "EXCEPTION_HANDLER": "crowdlex.api_errors.exception_handler",
    # DRF's, answering at once a request that names no format (crowdlex.negotiation).
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "crowdlex.negotiation.ContentNegotiation",
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "crowdlex.schema.AutoSchema",
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PARSER_CLASSES": [
        "crowdlex.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_PAGINATION_CLASS": "crowdlex.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 100,
    # Never X-Forwarded-For for DRF's own address (crowdlex.throttling.client_ip reads it, from
    # trusted proxies alone).
    "NUM_PROXIES": 0,
    # Per account for claim and submit, per address for sign-in. A person working by hand stays far
    # below them; tests and benchmarks raise them through the environment (empty: no limit).
    "DEFAULT_THROTTLE_RATES": {
        "claim": env_str("THROTTLE_CLAIM_RATE", "60/minute") or None,
        "submit": env_str("THROTTLE_SUBMIT_RATE", "60/minute") or None,
        "sign-in": env_str("THROTTLE_SIGN_IN_RATE", "30/minute") or None,
        # The crowd pages (MTurk's frame, Prolific's study page), per address: every request, and the
        # new worker/assignment bindings a first visit writes (docs/mturk.md, "The HIT page").
        "crowd-page": env_str("THROTTLE_CROWD_PAGE_RATE", "300/minute") or None,
        "crowd-binding": env_str("THROTTLE_CROWD_BINDING_RATE", "60/hour") or None,
        # Draft saves of the HIT page, per account (docs/design.md §4): it saves every half minute and on hide.
        "draft": env_str("THROTTLE_DRAFT_RATE", "120/minute") or None,
    },
}
SPECTACULAR_SETTINGS = {
    "TITLE": "crowdlex API",
    "DESCRIPTION": "Crowdsourced lexical-substitution benchmarks: import, HITs, labels, analysis, export.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # The browsable schema page (/docs/api/) serves Swagger UI's files itself: no CDN.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # Several models have a "status" field with different choices; name each enum after its model.
    "ENUM_NAME_OVERRIDES": {
        "BatchStatusEnum": "hits.models.BatchStatus",
        "AssignmentStatusEnum": "hits.models.AssignmentStatus",
        "WorkerKindEnum": "annotation.models.WorkerKind",
        "ImportJobStatusEnum": "annotation.models.ImportJobStatus",
    },
}

# Celery: without a broker URL, tasks run inline in the calling process (the embedded default).
CELERY_TASK_ALWAYS_EAGER = env_bool("CELERY_TASK_ALWAYS_EAGER", not env_str("CELERY_BROKER_URL"))
# The in-memory transport stands in when tasks run inline, so nothing tries to reach a broker.
CELERY_BROKER_URL = env_str("CELERY_BROKER_URL") or "memory://localhost/"
CELERY_RESULT_BACKEND = env_str("CELERY_RESULT_BACKEND") or None
CELERY_TASK_EAGER_PROPAGATES = True
# Every task is idempotent, so a task is acknowledged only once it has run: one whose worker dies
# runs again elsewhere. A worker process killed mid-task (out of memory) hands its task back at
# once; a whole worker killed, when the broker notices: with Redis, once the task has gone
# unacknowledged for CELERY_VISIBILITY_TIMEOUT seconds. That is longer than any task here runs (an
# export of the full SWORDS takes about a minute), else a live task would be handed out twice.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 600)}
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# Without a beat process (tasks inline, SQLite: the embedded default) overdue claims are expired
# whenever the queue is asked for work, so a claim left open keeps its slot only until its deadline.
EXPIRE_CLAIMS_ON_REQUEST = env_bool(
    "EXPIRE_CLAIMS_ON_REQUEST",
    CELERY_TASK_ALWAYS_EAGER and DATABASES["default"]["ENGINE"].endswith("sqlite3"),
)
CELERY_BEAT_SCHEDULE = {
    "expire-overdue-assignments": {
        "task": "hits.tasks.expire_overdue_assignments",
        "schedule": timedelta(seconds=env_int("EXPIRE_INTERVAL_SECONDS", 60)),
    },
    "mturk-sync": {
        "task": "hits.tasks.mturk_sync_open_batches",
        "schedule": timedelta(seconds=env_int("MTURK_SYNC_INTERVAL_SECONDS", 600)),
    },
    "fail-stuck-exports": {"task": "analysis.tasks.export_jobs_fail_stuck", "schedule": timedelta(minutes=1)},
    "fail-stuck-imports": {"task": "annotation.tasks.import_jobs_fail_stuck", "schedule": timedelta(minutes=5)},
    # A pipeline refresh or a bot-signals run whose message was lost is queued again
    # (annotation.refresh_requests, review.services.signals; docs/design.md §6). A worker also runs
    # it as it starts, for what a killed worker took along.
    "refresh-sweep": {
        "task": "review.tasks.refresh_sweep",
        "schedule": timedelta(seconds=env_int("REFRESH_SWEEP_SECONDS", 60)),
    },
}

# The researcher's pages read a benchmark's whole-benchmark figures from the cache, computed once per
# change of the benchmark (annotation.changes, docs/design.md §7); this long at most, which bounds how
# long work claimed but not yet submitted takes to show (a claim moves no change key).
BENCHMARK_FIGURES_MAX_AGE_SECONDS = env_int("BENCHMARK_FIGURES_MAX_AGE_SECONDS", 300)
# A refresh queued longer ago than this is taken for lost and queued again by the next submit or
# sweep (annotation.refresh_requests; docs/design.md §6).
REFRESH_QUEUED_STALE_SECONDS = env_int("REFRESH_QUEUED_STALE_SECONDS", 120)
# While one request computes a benchmark's figures, the others wait for them this long at most
# before computing them too (one computation for every open tab after a change). The warm of every
# figure after a change is left to a whole refresh queued after it this long at most (annotation.warm:
# a refresh lost; docs/design.md §7, "Figures warmed after a change").
BENCHMARK_FIGURES_WAIT_SECONDS = env_int("BENCHMARK_FIGURES_WAIT_SECONDS", 120)
# Figures kept per target (docs/design.md §7, "Incremental figures") are brought up to date by
# recomputing the targets changed since they were computed, for this long; older, every target is
# computed again. The record of which targets each change touched is kept twice this long.
BENCHMARK_FIGURES_BASE_MAX_AGE_SECONDS = env_int("BENCHMARK_FIGURES_BASE_MAX_AGE_SECONDS", 3600)
# The pipeline page's table shows each target's context cut short; a process keeps this many contexts
# as cut, so the table rendered again after a submit does not cut them again (docs/design.md §7,
# "Incremental figures"). Past it, the kept ones are forgotten and cut again as shown.
PIPELINE_CONTEXTS_KEPT = env_int("PIPELINE_CONTEXTS_KEPT", 20000)
# And this many of its rows as shown, by what each row shows, so that after a submit only the rows
# of the targets it changed are built again (docs/design.md §7, "Incremental figures"); as many of
# its rows' figures as built, by what each is built from (its target, kept figures and claimed work).
# Past it, the kept ones are forgotten and built again.
PIPELINE_ROWS_KEPT = env_int("PIPELINE_ROWS_KEPT", 20000)
# Each batch's projected cost (its crowd's price of every required assignment): a process keeps
# this many, by crowd, reward and HIT sizes, so the batches' progress computed again after a submit
# does not price every HIT again (docs/design.md §7, "Incremental figures"). Past it, the kept ones
# are forgotten and priced again; 0 keeps none.
BATCH_PRICES_KEPT = env_int("BATCH_PRICES_KEPT", 10000)
# The rows of a batch's page (its HITs, a hundred a page) as shown: a process keeps this many, by
# what each row shows, so the page shown again after a submit builds only the rows the submit moved
# (docs/design.md §7, "Table rows"). Past it, the kept ones are forgotten and built again; 0 keeps none.
BATCH_HIT_ROWS_KEPT = env_int("BATCH_HIT_ROWS_KEPT", 20000)
# The batch form's fields as shown unbound on the batches' page, and a batch's clone form's on its
# page: a process keeps this many renderings, by what they show (the benchmark, its steps, the
# annotators offered, the crowds, the language), so a page shown after a submit does not build and
# render them again (docs/design.md §7, "Kept widgets"). Past it, the kept ones are forgotten and
# rendered again; 0 keeps none.
BATCH_FORMS_KEPT = env_int("BATCH_FORMS_KEPT", 1000)
# The statistics page's numbers as shown to so many decimal places: a process keeps this many, so
# the page rendered again after a submit does not format the unchanged ones again (docs/design.md
# §7, "Incremental figures"). Past it, the kept ones are forgotten and formatted again as shown.
STATISTICS_NUMBERS_KEPT = env_int("STATISTICS_NUMBERS_KEPT", 20000)
# The benchmark and pipeline pages' empty target search form as rendered: a process keeps this many
# (one per benchmark name, scheme, language and script prefix) rather than rendering its widgets on
# every page (docs/design.md §7, "Kept widgets"). Past it, the kept ones are forgotten; 0 keeps none.
TARGET_SEARCH_FORMS_KEPT = env_int("TARGET_SEARCH_FORMS_KEPT", 1000)

# Figures that read every label and are no sum over targets (agreement, the filter audit) are computed
# in the background once per change and the last ones shown meanwhile (docs/design.md §7); the last
# ones are kept this long after they were computed, then the next reader computes them in its request.
BENCHMARK_BACKGROUND_FIGURES_KEEP_SECONDS = env_int("BENCHMARK_BACKGROUND_FIGURES_KEEP_SECONDS", 7 * 24 * 3600)
# Right after a change that names every target (an import, a setting, a split) and after each
# refresh, a task brings the benchmark's figures up to date before the first reader (annotation.warm,
# docs/design.md §7, "Figures warmed after a change"); off, the first reader computes them. On
# wherever a worker runs the tasks; with eager tasks (the embedded default) the task would run in
# the request that made the change (a submit's refresh too), so it is off there unless set.
BENCHMARK_FIGURES_WARM = env_bool("BENCHMARK_FIGURES_WARM", not CELERY_TASK_ALWAYS_EAGER)
# Under a stream of submits a refresh follows another: the warm after a refresh that finds the next
# refresh queued leaves its work to the warm that refresh queues, unless no warm has run for this
# long (seconds), so the figures are warmed at least this often while submits keep coming
# (docs/design.md §7, "Figures warmed after a change"). 0: every refresh's warm runs.
BENCHMARK_FIGURES_WARM_DEFER_SECONDS = env_int("BENCHMARK_FIGURES_WARM_DEFER_SECONDS", 60)
# WordNet's lemma of a word for a part of speech is remembered per process, for the first this many
# words (what the evaluation lemmatises in the request: targets' words, a system's substitutes, texts
# without a stored lemma; docs/design.md §7, "Researcher pages"): a few hundred bytes each; later words
# are looked up in WordNet's files each time.
WORDNET_LEMMA_CACHE_ENTRIES = env_int("WORDNET_LEMMA_CACHE_ENTRIES", 200_000)
# The evaluation reads candidates' lemmas stored once per text (docs/design.md §10, "Stored lemmas");
# the texts a reader finds without one are lemmatised and stored this many to a statement.
LEMMA_STORE_BATCH = env_int("LEMMA_STORE_BATCH", 5000)
# Form widgets are rendered once per process for each distinct widget (template, values, language)
# and kept, at most this many characters of HTML in all, the least recently used dropped first; 0
# keeps none (crowdlex.form_rendering; docs/design.md §7, "Kept widgets").
FORM_WIDGET_CACHE_CHARACTERS = env_int("FORM_WIDGET_CACHE_CHARACTERS", 4_000_000)
FORM_RENDERER = "crowdlex.form_rendering.KeptWidgetsRenderer"
# The flagged-workers page shows the first this many rows of each flag's evidence table (a control-
# accuracy flag's failed assignments, a fast flag's fastest work, ...) and links to the page with
# every row; each flag's evidence is rendered once per content and kept in the shared cache this
# many seconds after it was last rendered (review.evidence; docs/design.md §9).
FLAGGED_WORKERS_EVIDENCE_ROWS = env_int("FLAGGED_WORKERS_EVIDENCE_ROWS", 20)
FLAG_EVIDENCE_KEPT_SECONDS = env_int("FLAG_EVIDENCE_KEPT_SECONDS", 24 * 3600)
# Exports: benchmarks with at most this many valid labels may be downloaded straight from a request
# (streamed); larger ones in the SWORDS, labels and candidates formats go through an export job (a Celery task).
ANALYSIS_DIRECT_EXPORT_MAX_LABELS = env_int("ANALYSIS_DIRECT_EXPORT_MAX_LABELS", 500_000)
# The data browser (analysis.browser, docs/design.md §7): rows on a page of its tables, rows of one
# CSV download of a view, and the count a page shows before it says "more than" (counting stops there).
DATA_BROWSER_PAGE_SIZE = env_int("DATA_BROWSER_PAGE_SIZE", 50)
DATA_BROWSER_CSV_MAX_ROWS = env_int("DATA_BROWSER_CSV_MAX_ROWS", 1_000_000)
DATA_BROWSER_COUNT_CAP = env_int("DATA_BROWSER_COUNT_CAP", 10_000)
if not 1 <= DATA_BROWSER_PAGE_SIZE <= 1000 or DATA_BROWSER_CSV_MAX_ROWS < 1 or DATA_BROWSER_COUNT_CAP < 1:
    raise ImproperlyConfigured(
        "DATA_BROWSER_PAGE_SIZE must lie between 1 and 1000; DATA_BROWSER_CSV_MAX_ROWS and "
        "DATA_BROWSER_COUNT_CAP must be positive"
    )
# A streamed CSV download (the data browser's tables, a batch's HITs) reads its one statement's rows
# this many at a time (a server-side cursor's fetch on PostgreSQL) and writes them as one chunk of the
# response's body: memory is bounded by a batch, and Python's work is per batch, not per row
# (docs/design.md §7, "Whole CSV downloads").
CSV_DOWNLOAD_BATCH_ROWS = env_int("CSV_DOWNLOAD_BATCH_ROWS", 2000)
if not 1 <= CSV_DOWNLOAD_BATCH_ROWS <= 100_000:
    raise ImproperlyConfigured("CSV_DOWNLOAD_BATCH_ROWS must lie between 1 and 100000")
# Worker-aware aggregation (analysis.aggregation, docs/design.md §13): Dawid-Skene and MACE stop
# after this many EM iterations, or sooner once no candidate's posterior moves by the tolerance.
AGGREGATION_MAX_ITERATIONS = env_int("AGGREGATION_MAX_ITERATIONS", 1000)
AGGREGATION_TOLERANCE = float(env_decimal("AGGREGATION_TOLERANCE", "0.000001"))
if AGGREGATION_MAX_ITERATIONS < 1 or AGGREGATION_TOLERANCE <= 0:
    raise ImproperlyConfigured("AGGREGATION_MAX_ITERATIONS must be at least 1 and AGGREGATION_TOLERANCE above 0")
# The budget planner (analysis.budget) simulates the rest of a collection this many times, seeded,
# under the priors fitted to the labels so far (the estimate), and BUDGET_PLAN_RESAMPLES more times
# under priors refitted to resamples of the targets labelled so far (the interval, which so holds
# the priors' own uncertainty; docs/design.md §13). 0 resamples: the interval of the simulations alone.
BUDGET_PLAN_SIMULATIONS = env_int("BUDGET_PLAN_SIMULATIONS", 200)
BUDGET_PLAN_RESAMPLES = env_int("BUDGET_PLAN_RESAMPLES", 200)
if BUDGET_PLAN_SIMULATIONS < 2 or BUDGET_PLAN_RESAMPLES < 0 or BUDGET_PLAN_RESAMPLES == 1:
    raise ImproperlyConfigured("BUDGET_PLAN_SIMULATIONS must be at least 2 and BUDGET_PLAN_RESAMPLES 0 or at least 2")
# A running export job reports progress every few thousand rows, seconds apart. One silent for
# EXPORT_JOB_HEARTBEAT_SECONDS has lost its worker: the task, redelivered, takes it over. One silent
# for EXPORT_JOB_TIMEOUT_SECONDS was not taken over: it is marked failed, to be restarted.
EXPORT_JOB_HEARTBEAT_SECONDS = env_int("EXPORT_JOB_HEARTBEAT_SECONDS", 120)
EXPORT_JOB_TIMEOUT_SECONDS = env_int("EXPORT_JOB_TIMEOUT_SECONDS", 1800)
_takeover_seconds = CELERY_BROKER_TRANSPORT_OPTIONS["visibility_timeout"] + EXPORT_JOB_HEARTBEAT_SECONDS
if _takeover_seconds >= EXPORT_JOB_TIMEOUT_SECONDS:
    raise ImproperlyConfigured(
        "EXPORT_JOB_TIMEOUT_SECONDS must exceed CELERY_VISIBILITY_TIMEOUT + EXPORT_JOB_HEARTBEAT_SECONDS,"
        " or a killed worker's export is marked failed before its redelivered task can take it over"
    )

# Amazon Mechanical Turk. Credentials come from the standard AWS environment or profile.
# The crowds a batch may be published to, each a class implementing crowds.interface.CrowdBackend
# (docs/architecture.md, "How to add a crowd"); its ``name`` is the value of ``Batch.backend``.
CROWD_BACKENDS = env_list(
    "CROWD_BACKENDS",
    ["crowds.local.LocalBackend", "crowds.mturk.MTurkBackend", "crowds.prolific.ProlificBackend"],
)

MTURK_SANDBOX = env_bool("MTURK_SANDBOX", True)
MTURK_REGION = env_str("MTURK_REGION", "us-east-1")
# Where every MTurk call goes instead of Amazon's sandbox or production endpoint (a local fake, a
# staging proxy); botocore's own AWS_ENDPOINT_URL_MTURK is honoured too. Empty: Amazon's endpoints,
# sandbox or production as each batch says.
MTURK_ENDPOINT_URL = env_str("MTURK_ENDPOINT_URL", env_str("AWS_ENDPOINT_URL_MTURK"))
# botocore's retry modes: "standard" backs off on throttling, "adaptive" also rate-limits the client,
# which suits publishing hundreds of HITs in a row.
MTURK_RETRY_MODE = env_str("MTURK_RETRY_MODE", "adaptive")
if MTURK_RETRY_MODE not in {"legacy", "standard", "adaptive"}:
    raise ImproperlyConfigured(f"MTURK_RETRY_MODE={MTURK_RETRY_MODE!r} is not one of legacy, standard, adaptive")
MTURK_MAX_ATTEMPTS = env_int("MTURK_MAX_ATTEMPTS", 10)
# Height of the ExternalQuestion frame in pixels; 0 lets the worker site fit it to the window.
MTURK_FRAME_HEIGHT = env_int("MTURK_FRAME_HEIGHT", 0)
# Sites allowed to frame the ExternalQuestion page (its Content-Security-Policy frame-ancestors).
MTURK_FRAME_ANCESTORS = env_list(
    "MTURK_FRAME_ANCESTORS",
    [
        "https://worker.mturk.com",
        "https://workersandbox.mturk.com",
        "https://www.mturk.com",
        "https://requester.mturk.com",
        "https://requestersandbox.mturk.com",
    ],
)
# Origins the page may send a finished assignment to (the turkSubmitTo parameter is checked against them).
MTURK_SUBMIT_ORIGINS = env_list(
    "MTURK_SUBMIT_ORIGINS",
    ["https://www.mturk.com", "https://workersandbox.mturk.com", "https://worker.mturk.com"],
)
# Submitted work is approved or rejected by the sync only after it has waited this long, so spam
# filtering has seen the worker's later assignments; keep it well under the auto-approval delay.
MTURK_APPROVAL_HOLD_SECONDS = env_int("MTURK_APPROVAL_HOLD_SECONDS", 3600)
# An assignment saved here but still unknown to MTurk this long after submit is flagged and never paid.
MTURK_RECONCILE_GRACE_SECONDS = env_int("MTURK_RECONCILE_GRACE_SECONDS", 900)

# Prolific (docs/prolific.md). The API token is read from the environment and never stored.
PROLIFIC_API_TOKEN = env_str("PROLIFIC_API_TOKEN")
# Where every Prolific call goes: Prolific's API, or a local fake or staging proxy.
PROLIFIC_API_URL = env_str("PROLIFIC_API_URL", "https://api.prolific.com").rstrip("/")
# Attempts per Prolific call in all (throttled and 5xx answers are retried with backoff), and the
# seconds one attempt may take.
PROLIFIC_MAX_ATTEMPTS = env_int("PROLIFIC_MAX_ATTEMPTS", 5)
PROLIFIC_TIMEOUT_SECONDS = env_int("PROLIFIC_TIMEOUT_SECONDS", 30)
# Where a participant goes after submitting: Prolific's completion page, given the study's code.
PROLIFIC_COMPLETION_URL = env_str("PROLIFIC_COMPLETION_URL", "https://app.prolific.com/submissions/complete")
# Prolific's service fee on rewards and bonuses, and the least it lets a study pay per hour, in the
# workspace's currency: the rates on https://www.prolific.com/pricing (42.8 %; 33.3 % for
# academic and non-profit workspaces; at least $8.00 or £6.00 an hour).
PROLIFIC_SERVICE_FEE_RATE = env_decimal("PROLIFIC_SERVICE_FEE_RATE", "0.428")
PROLIFIC_MIN_HOURLY_PAY = env_decimal("PROLIFIC_MIN_HOURLY_PAY", "8.00")
# The sync's hold before deciding on a submission and its grace before flagging work Prolific does
# not list: MTurk's values unless set (docs/prolific.md).
PROLIFIC_APPROVAL_HOLD_SECONDS = env_int("PROLIFIC_APPROVAL_HOLD_SECONDS", MTURK_APPROVAL_HOLD_SECONDS)
PROLIFIC_RECONCILE_GRACE_SECONDS = env_int("PROLIFIC_RECONCILE_GRACE_SECONDS", MTURK_RECONCILE_GRACE_SECONDS)

# Candidates from a language model (docs/candidates.md, docs/design.md §14): any OpenAI-compatible
# chat-completions endpoint (OpenAI, or a local vLLM or Ollama server at its /v1). The key is read
# from the environment, sent as a bearer token and never stored; nothing is asked unless a researcher
# runs ``candidates_add --source llm`` or its form.
OPENAI_BASE_URL = env_str("OPENAI_BASE_URL", "https://api.openai.com/v1").rstrip("/")
OPENAI_API_KEY = env_str("OPENAI_API_KEY")
# The model asked when none is named (empty: the command and the form must name one).
LLM_MODEL = env_str("LLM_MODEL")
# Targets in flight at once, and requests started per minute at most (the endpoint's own limit).
LLM_CONCURRENCY = env_int("LLM_CONCURRENCY", 4)
LLM_REQUESTS_PER_MINUTE = env_int("LLM_REQUESTS_PER_MINUTE", 60)
# Attempts per target in all: a 429, a 5xx, a timeout or a dropped connection is retried after the
# answer's Retry-After, else after LLM_BACKOFF_SECONDS doubled each time up to LLM_BACKOFF_MAX_SECONDS.
LLM_MAX_ATTEMPTS = env_int("LLM_MAX_ATTEMPTS", 6)
LLM_BACKOFF_SECONDS = float(env_decimal("LLM_BACKOFF_SECONDS", "2"))
LLM_BACKOFF_MAX_SECONDS = float(env_decimal("LLM_BACKOFF_MAX_SECONDS", "120"))
LLM_TIMEOUT_SECONDS = env_int("LLM_TIMEOUT_SECONDS", 120)
# The most tokens one answer may take (``max_tokens`` of the request).
LLM_MAX_ANSWER_TOKENS = env_int("LLM_MAX_ANSWER_TOKENS", 400)
# Substitutes asked per target, and the sampling temperature, unless the run names others.
LLM_PER_TARGET = env_int("LLM_PER_TARGET", 10)
LLM_TEMPERATURE = float(env_decimal("LLM_TEMPERATURE", "0.7"))
# Dollars per 1,000 tokens sent and received, for the dry run's estimate and the run's report
# (0: a local server, or a price not known).
LLM_PRICE_PER_1K_INPUT_TOKENS = env_decimal("LLM_PRICE_PER_1K_INPUT_TOKENS", "0")
LLM_PRICE_PER_1K_OUTPUT_TOKENS = env_decimal("LLM_PRICE_PER_1K_OUTPUT_TOKENS", "0")
for _name in (
    "LLM_CONCURRENCY",
    "LLM_REQUESTS_PER_MINUTE",
    "LLM_MAX_ATTEMPTS",
    "LLM_TIMEOUT_SECONDS",
    "LLM_PER_TARGET",
):
    if globals()[_name] < 1:
        raise ImproperlyConfigured(f"{_name} must be at least 1")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {
        "django.db.backends": {"level": "WARNING"},
        # Tasks run inline on the embedded default: their results ("Task ... succeeded") would fill a
        # command's terminal. A worker logs them itself.
        **({"celery.app.trace": {"level": "WARNING"}} if CELERY_TASK_ALWAYS_EAGER else {}),
    },
}

# People (docs/people.md): accounts made by researchers sign in through a one-time link, sent by
# e-mail (printed on the console on the embedded default) or shown to the researcher.
EMAIL_BACKEND = env_str("EMAIL_BACKEND") or (
    "django.core.mail.backends.console.EmailBackend" if DEBUG else "django.core.mail.backends.smtp.EmailBackend"
)
EMAIL_HOST = env_str("EMAIL_HOST", "localhost")
EMAIL_PORT = env_int("EMAIL_PORT", 25)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "crowdlex@localhost")
# How long a sign-in or password-reset link works, in seconds (it works once in any case).
PASSWORD_RESET_TIMEOUT = env_int("SIGNIN_LINK_MAX_AGE_SECONDS", 7 * 24 * 3600)
# The most accounts one CSV upload may create.
PEOPLE_IMPORT_MAX_ROWS = env_int("PEOPLE_IMPORT_MAX_ROWS", 10_000)

# Operations (docs/design.md §16, docs/notifications.md): the hours of throughput a batch shows, the
# days of a budget's burn-down, and how a webhook is called and retried.
THROUGHPUT_WINDOW_HOURS = env_int("THROUGHPUT_WINDOW_HOURS", 12)
BUDGET_BURNDOWN_DAYS = env_int("BUDGET_BURNDOWN_DAYS", 14)
# How long a publish's reservation under the budget cap counts at most (one left by a run that died lapses).
BUDGET_RESERVATION_HOURS = env_int("BUDGET_RESERVATION_HOURS", 6)
WEBHOOK_TIMEOUT_SECONDS = env_int("WEBHOOK_TIMEOUT_SECONDS", 10)
WEBHOOK_MAX_ATTEMPTS = env_int("WEBHOOK_MAX_ATTEMPTS", 6)
WEBHOOK_RETRY_SECONDS = env_int("WEBHOOK_RETRY_SECONDS", 30)
# Whether a webhook may reach private, loopback, link-local and other non-public addresses (off: refused).
WEBHOOK_ALLOW_PRIVATE_ADDRESSES = env_bool("WEBHOOK_ALLOW_PRIVATE_ADDRESSES", False)

# A batch's task design (docs/design.md §4.1): how long its texts may be.
DESIGN_INSTRUCTIONS_MAX_CHARS = env_int("DESIGN_INSTRUCTIONS_MAX_CHARS", 20_000)
DESIGN_EXAMPLES_MAX = env_int("DESIGN_EXAMPLES_MAX", 30)
DESIGN_EXAMPLE_MAX_CHARS = env_int("DESIGN_EXAMPLE_MAX_CHARS", 2_000)
DESIGN_CHOICE_LABEL_MAX_CHARS = env_int("DESIGN_CHOICE_LABEL_MAX_CHARS", 40)
DESIGN_CHOICE_MAX_KEYS = env_int("DESIGN_CHOICE_MAX_KEYS", 3)
DESIGN_DESCRIPTION_MAX_CHARS = env_int("DESIGN_DESCRIPTION_MAX_CHARS", 2_000)
