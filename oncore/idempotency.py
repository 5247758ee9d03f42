"""Idempotency-Key on every POST of the API (oncore.api wraps each POST operation with `once`).

The first request with a key does the work and stores its answer; the same key with the same request (method, path
and parameters: the body's fields after validation, each uploaded file's bytes) within KEEP replays that answer
without doing the work again; the same key with another request is refused (409 idempotency_key_reused). The row
for the key is inserted first, in the transaction that does the work, under a unique constraint: a second request
with the key, sent while the first runs, waits for it, then replays its answer. A request that fails (an error
answer) stores nothing, so it can be sent again with its key. Runs after authentication and validation: a request
refused there never reaches this.

An answer that shows a secret once (a webhook's signing secret) must not show it again, nor leave it in this
table: its operation says, with `replay_as`, what a replay answers instead (the secret null), and that is what is
stored."""

import functools
import hashlib
import json
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone
from ninja.responses import Status
from pydantic import BaseModel

from oncore.accounts.models import IdempotentRequest
from oncore.errors import ActionError

KEEP = timedelta(hours=24)
MAX_KEY_LENGTH = 255
KEY_PATTERN = "^[ -~]+$"  # printable ASCII, as the schema says


class KeyReused(ActionError):
    code = "idempotency_key_reused"
    status = 409


class KeyInvalid(ActionError):
    """A key the schema refuses: 422 validation_error, with the header's place in `detail.errors`."""

    code = "validation_error"
    status = 422

    def __init__(self, message: str, kind: str):
        super().__init__(
            message, {"errors": [{"loc": ["header", "Idempotency-Key"], "msg": message, "type": kind}]}
        )


def once(view, render):
    """`view` (an API operation) made idempotent under the Idempotency-Key header; `render(value) -> str`
    writes an answer's body as the API does."""

    @functools.wraps(view)
    def wrapper(request, **values):
        key = request.headers.get("Idempotency-Key")
        if key is None:
            return view(request, **values)
        if not 0 < len(key) <= MAX_KEY_LENGTH or not key.isascii() or not key.isprintable():
            raise KeyInvalid(
                f"Invalid request: header.Idempotency-Key must be 1 to {MAX_KEY_LENGTH} printable ASCII "
                "characters; send a random UUID.",
                "string_too_long"
                if len(key) > MAX_KEY_LENGTH
                else "string_too_short"
                if not key
                else "string_pattern_mismatch",
            )
        fingerprint = request_hash(request, values)
        for _attempt in range(3):
            with transaction.atomic():
                record = _reserve(request.org, key, fingerprint)
                if record is not None:
                    result = view(request, **values)
                    _store(record, result, render, request)
                    return result
            answer = _stored_answer(request, key, fingerprint)
            if answer is not None:
                return answer
        raise ActionError("This Idempotency-Key could not be used; send the request again.")

    return wrapper


def replay_as(request, value) -> None:
    """What a replay of this request answers, and so what is stored for it, when that must differ from the
    answer given now (the same, less what is shown once). The operation calls it before it returns; without an
    Idempotency-Key it changes nothing."""
    request.idempotent_replay = value


def _reserve(organization, key, fingerprint):
    """A new row for the key, or None when one exists (after the request holding it finished)."""
    now = timezone.now()
    try:
        with transaction.atomic():
            record = IdempotentRequest.objects.create(
                organization=organization, key=key, request_hash=fingerprint, created_at=now
            )
    except IntegrityError:
        return None
    IdempotentRequest.objects.filter(organization=organization, created_at__lt=now - KEEP).delete()
    return record


def _store(record, result, render, request) -> None:
    status, value = (result.status_code, result.value) if isinstance(result, Status) else (200, result)
    value = getattr(request, "idempotent_replay", value)
    record.status = status
    record.body = render(value)
    record.location = request.api_response.get("Location", "")
    record.save(update_fields=["status", "body", "location"])


def _stored_answer(request, key, fingerprint):
    """The stored answer to replay; None when the key is free again (its row expired and was deleted)."""
    stored = IdempotentRequest.objects.filter(organization=request.org, key=key).first()
    if stored is None:
        return None
    if stored.created_at < timezone.now() - KEEP:
        stored.delete()
        return None
    if stored.request_hash != fingerprint:
        raise KeyReused(
            "This Idempotency-Key was already used for another request (another body, path or method). Use a "
            "new key for each new request.",
            {"key": key},
        )
    request.api_response["Idempotent-Replayed"] = "true"
    if stored.location:
        request.api_response["Location"] = stored.location
    return Status(stored.status, json.loads(stored.body))


def _canonical(value):
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list | tuple):
        return [_canonical(v) for v in value]
    if hasattr(value, "chunks"):  # an uploaded file: its bytes
        digest = hashlib.sha256()
        for chunk in value.chunks():
            digest.update(chunk)
        value.seek(0)
        return {"file": value.name, "sha256": digest.hexdigest()}
    return value


def request_hash(request, values: dict) -> str:
    payload = {
        "method": request.method,
        "path": request.path,
        "values": {name: _canonical(v) for name, v in sorted(values.items())},
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()
