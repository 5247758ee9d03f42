"""Settings for OnCore transcriber testing. Every value that changes between deployments comes from an
environment variable through the helpers in oncore.env, which fail loudly on bad values; OnCore's own settings
(ONCORE) are read through oncore.config. Two kinds of value are read from the environment when they are used, not
here: vendor keys (each catalogue entry names its variable; oncore.transcribers.engines.base.read_key) and the
judge's (oncore.llm), so a key set or changed is seen without a restart and never sits in the settings."""

from pathlib import Path

import dj_database_url

from oncore.env import env_bool, env_choice, env_float, env_int, env_list, env_networks, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("ONCORE_VAR_DIR", str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

DEBUG = env_bool("DEBUG", False)
SECRET_KEY = env_str("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        from django.core.exceptions import ImproperlyConfigured

        raise ImproperlyConfigured(
            "SECRET_KEY is not set. With DEBUG off (the default) OnCore needs one: set SECRET_KEY to a long "
            "random string (e.g. the output of `python -c 'import secrets; print(secrets.token_urlsafe(50))'`). "
            "For local development only, set DEBUG=1 instead (the Makefile does)."
        )
    SECRET_KEY = "dev-only-insecure-key-used-because-DEBUG-is-on"
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "django_htmx",
    "django_q",
    "oncore.accounts",
    "oncore.transcribers",
    "oncore.calls",
    "oncore.webhooks",
    "transcriber_tests",
    "benchmark",
]

MIDDLEWARE = [
    "oncore.middleware.request_id",
    "oncore.middleware.api_version",
    "django.middleware.security.SecurityMiddleware",
    "oncore.middleware.content_security_policy",
    "oncore.middleware.request_size_limit",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
]

ROOT_URLCONF = "oncore.urls"
WSGI_APPLICATION = "oncore.wsgi.application"

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
                "oncore.accounts.context_processors.organization",
            ],
            "builtins": ["oncore.templatetags.oncore_tags"],
        },
    },
    {
        # The long row lists only (oncore/jinja.py): rendered here, included by the Django templates.
        "NAME": "jinja2",
        "BACKEND": "django.template.backends.jinja2.Jinja2",
        "DIRS": [BASE_DIR / "templates" / "jinja2"],
        "APP_DIRS": False,
        "OPTIONS": {"environment": "oncore.jinja.environment", "autoescape": True},
    },
]

DATABASES = {
    "default": dj_database_url.parse(
        env_str("DATABASE_URL", f"sqlite:///{VAR_DIR / 'oncore.sqlite3'}"),
        # Keep connections: PostgreSQL enqueue through the ORM broker is ~20x slower without it.
        conn_max_age=env_int("CONN_MAX_AGE", 60, minimum=0),
    )
}
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    # A transaction takes the write lock when it begins (BEGIN IMMEDIATE), so the web process and the queue
    # worker wait for each other up to `timeout` seconds instead of failing with "database is locked" when a
    # transaction that read first tries to write.
    DATABASES["default"].setdefault("OPTIONS", {}).update(timeout=20, transaction_mode="IMMEDIATE")

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
# The Score covering indexes are a PostgreSQL optimization; SQLite builds them without the extra columns.
SILENCED_SYSTEM_CHECKS = ["models.W040"]

# Django's standard four; create_org and every command that sets a password apply them too.
# Django's ModelBackend whose session user comes with its memberships, in one query (oncore/accounts/backends.py).
AUTHENTICATION_BACKENDS = ["oncore.accounts.backends.UserWithMemberships"]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": f"django.contrib.auth.password_validation.{name}"}
    for name in (
        "UserAttributeSimilarityValidator",
        "MinimumLengthValidator",
        "CommonPasswordValidator",
        "NumericPasswordValidator",
    )
]

# Uploads: form fields and JSON bodies are read in memory up to 2.5 MB (larger answer 413); an uploaded file
# over 2.5 MB is streamed to a temporary file on disk instead of memory; at most 100 files per request.
# The whole request body is capped by ONCORE["MAX_REQUEST_MB"] (oncore.middleware).
DATA_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
FILE_UPLOAD_MAX_MEMORY_SIZE = 2_621_440
DATA_UPLOAD_MAX_NUMBER_FILES = 100

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "static"
MEDIA_ROOT = Path(env_str("MEDIA_ROOT", str(VAR_DIR / "media")))
MEDIA_URL = "/media/"


def object_storage(bucket: str, *, endpoint_url="", region="", prefix="", addressing_style="") -> dict:
    """STORAGES for recordings in an S3-compatible bucket (django-storages with boto3). Credentials come the way
    boto3 finds them: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment, or the host's role."""
    return {
        "default": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                "bucket_name": bucket,
                "endpoint_url": endpoint_url or None,
                "region_name": region or None,
                "location": prefix,
                "addressing_style": addressing_style or None,
                "file_overwrite": False,  # two recordings with one name never replace each other
                "default_acl": None,  # the bucket's own policy; recordings are never public
                "querystring_auth": True,
            },
        },
        "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
    }


# Recordings: files under MEDIA_ROOT, or, with STORAGE_BUCKET, an S3-compatible bucket every host shares
# (oncore.audio reads a line's clip from either by byte ranges, never the whole recording).
STORAGE_BUCKET = env_str("STORAGE_BUCKET", "").strip()
if STORAGE_BUCKET:
    STORAGES = object_storage(
        STORAGE_BUCKET,
        endpoint_url=env_str("STORAGE_ENDPOINT_URL", "").strip(),
        region=env_str("STORAGE_REGION", "").strip(),
        prefix=env_str("STORAGE_PREFIX", "").strip(),
        addressing_style=env_choice("STORAGE_ADDRESSING_STYLE", "", ("", "path", "virtual", "auto")),
    )

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "tt:home"
LOGOUT_REDIRECT_URL = "login"

# Secure cookies unless debugging; set SECURE_COOKIES=0 to serve a non-debug instance over plain HTTP locally.
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", not DEBUG)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SESSION_COOKIE_HTTPONLY = True

# HTTPS behind a proxy: off by default for plain-HTTP local use; docs/deploy.md gives the production values.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
# Set when a proxy that terminates TLS sends X-Forwarded-Proto (and strips it from clients).
if env_bool("SECURE_PROXY_SSL_HEADER", False):
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

# Queue: django-q2 with the ORM broker (works on SQLite and PostgreSQL).
# timeout < retry so a task is never handed out twice while it still runs; bounded attempts; failures kept.
Q_CLUSTER = {
    "name": "oncore",
    "orm": "default",
    "workers": env_int("Q_WORKERS", 2, minimum=1),
    "timeout": env_int("Q_TIMEOUT", 300, minimum=1),
    "retry": env_int("Q_RETRY", 360, minimum=2),
    "max_attempts": env_int("Q_MAX_ATTEMPTS", 5, minimum=1),
    "ack_failures": True,
    "save_limit": env_int("Q_SAVE_LIMIT", 1000, minimum=0),
    "catch_up": False,
    "poll": env_float("Q_POLL", 0.5, minimum=0.05),
    "sync": env_bool("Q_SYNC", False),
    "label": "Queue",
}
# Several hosts: REDIS_URL moves the cache (results, login throttle) and the queue broker to Redis, so every web
# and worker host sees the same. Without it: a local memory cache and the ORM broker (one machine, no services).
REDIS_URL = env_str("REDIS_URL", "")
if REDIS_URL:
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": env_str("CACHE_KEY_PREFIX", "oncore"),
        }
    }
    del Q_CLUSTER["orm"]
    Q_CLUSTER["redis"] = REDIS_URL
if Q_CLUSTER["timeout"] >= Q_CLUSTER["retry"]:
    from django.core.exceptions import ImproperlyConfigured

    raise ImproperlyConfigured("Q_TIMEOUT must be lower than Q_RETRY, or a running task is handed out twice.")

# OnCore's own settings, read through oncore.config (`config().clip_margin_s`), each from its variable here.
ONCORE = {
    # Seconds added on each side of a line when its clip is cut from the recording.
    "CLIP_MARGIN_S": env_float("ONCORE_CLIP_MARGIN_S", 0.3, minimum=0.0),
    # Line transcriptions one organization may have running at once.
    "ORG_CONCURRENCY": env_int("ONCORE_ORG_CONCURRENCY", 3, minimum=1),
    # Of those, streaming replays one organization may hold open at once: each keeps a connection (and a worker)
    # for its line's real-time duration, and vendors cap concurrent streams per key.
    "ORG_STREAMS": env_int("ONCORE_ORG_STREAMS", 2, minimum=1),
    # Queued line transcriptions past which new flags into banks and backfills are refused.
    "ORG_QUEUE_LIMIT": env_int("ONCORE_ORG_QUEUE_LIMIT", 2000, minimum=1),
    # A worker that finishes a line transcription goes straight on with its organization's next ready one, for
    # at most this many seconds per task, instead of waiting for the broker to hand it over.
    "TASK_CHAIN_S": env_float("ONCORE_TASK_CHAIN_S", 2.0, minimum=0.0),
    # A bank's figures (results, trust) are computed again when its results change, at most once per this many
    # seconds while scores keep coming; pages show the newest ones with the time they are as of.
    "SNAPSHOT_INTERVAL_S": env_float("ONCORE_SNAPSHOT_INTERVAL_S", 3.0, minimum=0.0),
    # Attempts per line transcription before it is marked failed.
    "MAX_TRANSCRIPTION_ATTEMPTS": env_int("ONCORE_MAX_TRANSCRIPTION_ATTEMPTS", 4, minimum=1),
    # Base of the exponential backoff between retryable failures, in seconds.
    "RETRY_BACKOFF_S": env_float("ONCORE_RETRY_BACKOFF_S", 5.0, minimum=0.0),
    # Full-call runs: lines replayed through the live transcriber for calibration, the agreement below which the
    # run page warns, and the size of the sample set aside for a person to review.
    "RUN_CALIBRATION_LINES": env_int("ONCORE_RUN_CALIBRATION_LINES", 20, minimum=0),
    "RUN_CALIBRATION_WARN": env_float("ONCORE_RUN_CALIBRATION_WARN", 0.8, minimum=0.0, maximum=1.0),
    # The sample is at most 120 lines, as the product promises: a larger value fails here, at start-up.
    "RUN_REVIEW_LINES": env_int("ONCORE_RUN_REVIEW_LINES", 120, minimum=0, maximum=120),
    # Limits that keep one organization's input from exhausting the server (docs/deploy.md says why each).
    # A recording longer than this, or sampled faster, is refused at import, naming the call.
    "MAX_RECORDING_S": env_float("ONCORE_MAX_RECORDING_S", 4 * 3600.0, minimum=1.0),
    "MAX_SAMPLE_RATE": env_int("ONCORE_MAX_SAMPLE_RATE", 48000, minimum=8000),
    # A line longer than this cannot be flagged or replayed in a run (the reason is shown on the line).
    "MAX_LINE_S": env_float("ONCORE_MAX_LINE_S", 120.0, minimum=1.0),
    # Lines one call may have at import; the call page shows them in pages.
    "MAX_LINES_PER_CALL": env_int("ONCORE_MAX_LINES_PER_CALL", 5000, minimum=1),
    # Lines of one import, every call together: an import is read, checked and written in one request, in
    # memory in proportion to its lines (bench/import_memory.py measures the largest one allowed).
    "MAX_LINES_PER_IMPORT": env_int("ONCORE_MAX_LINES_PER_IMPORT", 50_000, minimum=1),
    # The calls file (JSON) of one import, in MB; it is parsed in memory, so it has its own, smaller cap.
    "MAX_IMPORT_FILE_MB": env_int("ONCORE_MAX_IMPORT_FILE_MB", 10, minimum=1),
    # Any request body, in MB (an import with its recordings included): larger ones are refused with 413
    # before they are read.
    "MAX_REQUEST_MB": env_int("ONCORE_MAX_REQUEST_MB", 256, minimum=1),
    # Webhooks (oncore.webhooks): a delivery that fails is tried again after WEBHOOK_BACKOFF_S, doubled with each
    # attempt, for WEBHOOK_RETRY_HOURS; each attempt has WEBHOOK_TIMEOUT_S in all, from the connection to the last
    # byte of the answer. Endpoints may reach global unicast addresses only, except those in WEBHOOK_ALLOW_NETWORKS
    # (comma-separated networks, e.g. 127.0.0.1/32 for a receiver on the same machine; http is allowed there only).
    # An organization has WEBHOOK_MAX_ENDPOINTS endpoints at most (each event goes to each one).
    "WEBHOOK_BACKOFF_S": env_float("ONCORE_WEBHOOK_BACKOFF_S", 60.0, minimum=0.0),
    "WEBHOOK_RETRY_HOURS": env_float("ONCORE_WEBHOOK_RETRY_HOURS", 24.0, minimum=0.0),
    "WEBHOOK_TIMEOUT_S": env_float("ONCORE_WEBHOOK_TIMEOUT_S", 10.0, minimum=0.1),
    "WEBHOOK_ALLOW_NETWORKS": env_networks("ONCORE_WEBHOOK_ALLOW_NETWORKS"),
    "WEBHOOK_MAX_ENDPOINTS": env_int("ONCORE_WEBHOOK_MAX_ENDPOINTS", 10, minimum=1),
    # Rate limits (oncore.ratelimit) on the requests whose cost grows with the data (results, turn table, trust,
    # confusion pairs, expected texts to check, CSV exports): each API key and each dashboard session may send
    # RATE_LIMIT_PER_MINUTE a minute to each group of them; past it, 429 with Retry-After.
    "RATE_LIMIT_PER_MINUTE": env_int("ONCORE_RATE_LIMIT_PER_MINUTE", 60, minimum=1),
    # Offline model locations; None means "from the packaged models".
    "MODEL_CACHE_DIR": Path(env_str("ONCORE_MODEL_CACHE_DIR", str(VAR_DIR / "models"))),
    # Log-in throttle (oncore.accounts.login), over LOGIN_WINDOW_MINUTES: a username from one address is paused
    # after LOGIN_MAX_FAILURES failures; an address after LOGIN_MAX_FAILURES_PER_ADDRESS failures, whatever the
    # usernames. The client address is REMOTE_ADDR, or, behind a proxy that sets it, the header named by
    # TRUSTED_PROXY_HEADER (e.g. X-Forwarded-For: its last address, the one the proxy added). The failures are
    # counted in the shared cache with Redis (LOGIN_COUNTERS "cache"), else in the database.
    "LOGIN_MAX_FAILURES": env_int("LOGIN_MAX_FAILURES", 5, minimum=1),
    "LOGIN_MAX_FAILURES_PER_ADDRESS": env_int("LOGIN_MAX_FAILURES_PER_ADDRESS", 20, minimum=1),
    "LOGIN_WINDOW_MINUTES": env_int("LOGIN_WINDOW_MINUTES", 15, minimum=1),
    "TRUSTED_PROXY_HEADER": env_str("TRUSTED_PROXY_HEADER", "").strip(),
    "LOGIN_COUNTERS": "cache" if REDIS_URL else "database",
    # The queue's task timeout and retry (Q_TIMEOUT, Q_RETRY above): how long a claim held by a task lasts.
    "QUEUE_TIMEOUT_S": Q_CLUSTER["timeout"],
    "QUEUE_RETRY_S": Q_CLUSTER["retry"],
    # A served process warms up before its first request (oncore.warmup); ONCORE_WARM_UP=0 (or false, no, off)
    # leaves it to the first requests, and a value that is not a boolean stops the start.
    "WARM_UP": env_bool("ONCORE_WARM_UP", True),
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # One record a line, whatever a logged value holds (oncore.logs).
    "formatters": {"one_line": {"()": "oncore.logs.OneRecordPerLine", "format": "%(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "one_line"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO")},
    "loggers": {n: {"level": "WARNING"} for n in ("httpx", "django_q", "faster_whisper")},
}
