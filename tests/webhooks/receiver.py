"""A webhook receiver on 127.0.0.1 (tests/json_server.py's LocalHttpServer) that checks every delivery the way the
API guide tells integrators to: the OnCore-Signature header's HMAC-SHA256 over "<t>.<body>" with the endpoint's
secret, compared in constant time, and a timestamp no older than five minutes. It keeps what it received and
answers the statuses it is told to (200 once the list runs out)."""

import hashlib
import hmac
import json
import threading
import time

from tests.json_server import LocalHttpServer

TOLERANCE_S = 300


def verify(secret: str, header: str, body: bytes, now: float | None = None) -> bool:
    """The verification snippet of docs/api.md."""
    parts = dict(item.split("=", 1) for item in header.split(",") if "=" in item)
    timestamp, given = parts.get("t", ""), parts.get("v1", "")
    if not timestamp.isdigit() or abs((now or time.time()) - int(timestamp)) > TOLERANCE_S:
        return False
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, given)


class WebhookReceiver(LocalHttpServer):
    def __init__(self):
        self.lock = threading.Lock()
        self.secret = ""
        self.reset()

    def reset(self):
        self.events: list[dict] = []  # verified deliveries: the decoded bodies
        self.refused: list[bytes] = []  # deliveries whose signature did not verify
        self.headers: list[dict] = []
        self.statuses: list[int] = []  # answers to give, in order

    @property
    def url(self) -> str:
        return f"{self.base_url}/hooks/oncore"

    def answer(self, method, path, headers, body):
        with self.lock:
            self.headers.append(headers)
            if not verify(self.secret, headers.get("oncore-signature", ""), body):
                self.refused.append(body)
                return 400, "application/json", b'{"error": "bad signature"}', {}
            status = self.statuses.pop(0) if self.statuses else 200
            if 200 <= status < 300:
                self.events.append(json.loads(body))
            return status, "application/json", b"{}", {}
