"""Real HTTP servers on 127.0.0.1 (ephemeral port, their own threads) for the tests: `JsonServer` answers POSTs
with JSON (the small transcription servers subclass it); `LocalHttpServer` is the base of the fake vendors and
the fake Anthropic API, which record every request and answer in their API's shapes."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class LocalHttpServer:
    """Start with `start()` or `with`; subclasses say how to answer GETs and POSTs in `answer`."""

    protocol_version = "HTTP/1.0"
    poll_interval = 0.05
    host = "127.0.0.1"  # where it listens (bench/cluster.py puts a vendor on its services host's address)
    _server = None

    def answer(self, method: str, path: str, headers: dict, body: bytes) -> tuple[int, str, bytes, dict]:
        """(status, content type, body, extra headers) for a request; `headers` has lowercased names."""
        raise NotImplementedError

    def start(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = server.protocol_version

            def do_GET(self):
                self._handle("GET")

            def do_POST(self):
                self._handle("POST")

            def _handle(self, method):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                headers = {k.lower(): v for k, v in self.headers.items()}
                status, content_type, data, extra = server.answer(method, self.path, headers, body)
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", content_type)
                    self.send_header("Content-Length", str(len(data)))
                    for name, value in extra.items():
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a timeout test)

            def log_message(self, *args):
                pass

        self._server = ThreadingHTTPServer((self.host, 0), Handler)
        self._server.daemon_threads = True
        host, port = self._server.server_address[:2]
        self._base_url = f"http://{host}:{port}"
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": self.poll_interval}, daemon=True
        ).start()
        return self

    def stop(self):
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._server = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def base_url(self) -> str:
        # Kept from the start: a request still being answered after stop() (a client that timed out) may ask.
        return self._base_url


class JsonServer(LocalHttpServer):
    """Started at once; answers POSTs with `respond(path, headers, body) -> (status, JSON-able payload)`."""

    def respond(self, path: str, headers: dict, body: bytes) -> tuple[int, dict]:
        raise NotImplementedError

    def __init__(self):
        self.start()
        self.url = self.base_url

    def answer(self, method, path, headers, body):
        status, payload = self.respond(path, headers, body)
        return status, "application/json", json.dumps(payload).encode(), {}

    def close(self):
        self.stop()
