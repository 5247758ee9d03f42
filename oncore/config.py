"""OnCore's own settings through one typed accessor: `config().clip_margin_s`, never a string key. settings.py
reads them from the environment with oncore.env's helpers, which refuse a bad value at start-up, into
settings.ONCORE (settings.py says beside each variable what it does; the README's configuration table and
docs/deploy.md describe those a deployment sets); `config()` reads whatever settings.ONCORE is now, so a test that
overrides it is seen at once. Django's and the libraries' own settings (DATABASES, CACHES, Q_CLUSTER, ...)
stay where those read them; what OnCore's code needs of them is here too (queue_timeout_s, queue_retry_s)."""

from dataclasses import dataclass, fields
from pathlib import Path

from django.conf import settings


@dataclass(frozen=True)
class Config:
    clip_margin_s: float  # seconds added on each side of a line when its clip is cut
    org_concurrency: int  # line transcriptions one organization runs at once (open sessions)
    org_streams: int  # of those, streaming sessions (each holds a connection for its line's duration)
    org_queue_limit: int  # waiting transcriptions past which work into banks is refused
    task_chain_s: float  # seconds a task goes on with its organization's next ready lines
    snapshot_interval_s: float  # seconds between two rebuilds of one bank's figures under a stream of scores
    max_transcription_attempts: int
    retry_backoff_s: float  # base of the exponential backoff between retryable failures
    run_calibration_lines: int
    run_calibration_warn: float
    run_review_lines: int
    max_recording_s: float
    max_sample_rate: int
    max_line_s: float
    max_lines_per_call: int
    max_lines_per_import: int  # lines of one calls file, every call together
    max_import_file_mb: int
    max_request_mb: int
    webhook_backoff_s: float
    webhook_retry_hours: float
    webhook_timeout_s: float
    webhook_allow_networks: list
    webhook_max_endpoints: int  # endpoints one organization may have
    rate_limit_per_minute: int  # requests a key or session sends a group of costly endpoints a minute
    model_cache_dir: Path
    login_max_failures: int  # failures of one username from one address before it is paused
    login_max_failures_per_address: int  # failures from one address, whatever the usernames
    login_window_minutes: int
    trusted_proxy_header: str  # the header a trusted proxy puts the client's address in ("": none)
    login_counters: str  # "cache" (shared, with Redis) or "database"
    queue_timeout_s: int  # django-q2 kills a task after this (Q_CLUSTER's timeout)
    queue_retry_s: int  # and hands a task out again after this (Q_CLUSTER's retry)
    warm_up: bool  # a served process warms up before its first request (oncore.warmup)


NAMES = {f.name.upper(): f.name for f in fields(Config)}
_built: tuple = (None, None)  # (the settings.ONCORE it was built from, the Config)


def config() -> Config:
    """The settings as they are now (rebuilt only when settings.ONCORE is another object)."""
    global _built
    current = settings.ONCORE
    if _built[0] is not current:
        _built = (current, Config(**{NAMES[key]: value for key, value in current.items()}))
    return _built[1]
