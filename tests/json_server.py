"""A real HTTP server on 127.0.0.1 (ephemeral port, its own thread) that answers POSTs with JSON. The small
transcription servers of the tests subclass it and only say how to answer."""

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class JsonServer:
    def respond(self, path: str, headers, body: bytes) -> tuple[int, dict]:
        raise NotImplementedError

    def __init__(self):
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                status, payload = server.respond(self.path, self.headers, body)
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()
