"""Receivers on 127.0.0.1 that the delivery tests need beside the plain one: a TLS receiver with a certificate
for a name (signed by a certificate authority made for the test), which records the SNI names it was asked for,
and a receiver that trickles its answer. Nothing here reaches beyond this machine."""

import datetime
import socket
import ssl
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from tests.webhooks.receiver import WebhookReceiver


def _pem(key) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def make_certificates(directory, hostname: str) -> tuple[str, str, str]:
    """(CA file, certificate file, key file): a certificate authority and a server certificate for `hostname`."""
    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "OnCore tests CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, hostname)]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(hours=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(hostname)]), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([x509.oid.ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    paths = [directory / "ca.pem", directory / "cert.pem", directory / "key.pem"]
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(_pem(key))
    return tuple(str(p) for p in paths)


class _TlsServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address, handler, context):
        self.context = context
        super().__init__(address, handler)

    def get_request(self):
        sock, address = self.socket.accept()
        # The handshake happens in the request's thread, at its first read: a client that refuses the
        # certificate fails that request only.
        return self.context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), address

    def handle_error(self, request, client_address):
        pass  # a client that refused the certificate, or gave up


class TlsWebhookReceiver(WebhookReceiver):
    """The webhook receiver (signature checked) over TLS, with the certificate for a name; `server_names` are
    the SNI names clients sent."""

    def __init__(self, cert_file: str, key_file: str):
        super().__init__()
        self.server_names: list[str | None] = []
        self.context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        self.context.load_cert_chain(cert_file, key_file)
        self.context.sni_callback = lambda sslobj, name, context: self.server_names.append(name)

    def start(self):
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.0"

            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                headers = {k.lower(): v for k, v in self.headers.items()}
                status, content_type, data, _extra = receiver.answer("POST", self.path, headers, body)
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self._server = _TlsServer(("127.0.0.1", 0), Handler, self.context)
        self.port = self._server.server_address[1]
        self._base_url = f"https://127.0.0.1:{self.port}"
        threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        ).start()
        return self


class TricklingReceiver:
    """Reads a request, then sends `head` one byte every `every_s` seconds (`trickle_head`) or at once, then
    `chunk` every `every_s` seconds; after `for_s` seconds it sends what is left of `head` and closes. `cut_after`
    is how long each client stayed before it hung up (None while it stays to the end)."""

    def __init__(self, head: bytes, *, every_s: float, for_s: float, trickle_head=True, chunk=b""):
        self.head, self.every_s, self.for_s = head, every_s, for_s
        self.trickle_head, self.chunk = trickle_head, chunk
        self.requests: list[bytes] = []
        self.cut_after: list[float | None] = []
        self._sock = socket.create_server(("127.0.0.1", 0))
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/hooks/oncore"
        threading.Thread(target=self._serve, daemon=True).start()

    def close(self):
        self._sock.close()

    def _serve(self):
        while True:
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _read_request(self, conn) -> bytes:
        data = b""
        while b"\r\n\r\n" not in data:
            data += conn.recv(65536)
        head, _, body = data.partition(b"\r\n\r\n")
        length = next(
            (
                int(line.split(b":")[1])
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"content-length")
            ),
            0,
        )
        while len(body) < length:
            body += conn.recv(65536)
        return data

    def _answer(self, conn):
        started = time.monotonic()
        with conn:
            self.requests.append(self._read_request(conn))
            pieces = (
                [self.head[i : i + 1] for i in range(len(self.head))] if self.trickle_head else [self.head]
            )
            try:
                while time.monotonic() - started < self.for_s:
                    piece = pieces.pop(0) if pieces else self.chunk
                    if not piece:
                        break
                    conn.sendall(piece)
                    time.sleep(self.every_s)
                conn.sendall(b"".join(pieces))
            except OSError:
                self.cut_after.append(time.monotonic() - started)
                return
        self.cut_after.append(None)
