"""The connection of one delivery attempt: httpx over a network backend that connects only to the addresses the
URL check resolved (so a name cannot answer a public address to the check and another one to the connection: DNS
rebinding), under one deadline for the whole exchange.

The request keeps the URL's host: httpx writes it in the Host header, and TLS sends it as the SNI name and checks
the certificate against it, as for any https request; only where the TCP connection goes is decided here. No
proxy is used (a proxy would resolve the name again). The deadline bounds every step, from the TCP connection to
the last byte read: each socket operation may wait only for what is left of it, so a receiver that trickles its
answer a byte at a time is cut off at the deadline, not after a per-read timeout renewed by each byte."""

import select
import socket
import ssl
import time
from dataclasses import dataclass

import httpcore
import httpx


@dataclass(frozen=True)
class Target:
    """A URL whose host was resolved and checked: the TCP addresses (family, sockaddr) it may be reached at."""

    url: str
    host: str
    port: int
    addresses: tuple[tuple[int, tuple], ...]


class Deadline:
    """A point in time (monotonic) that every operation of one attempt must end by."""

    def __init__(self, seconds: float):
        self.at = time.monotonic() + seconds

    def left(self, timeout: float | None, timed_out: type[Exception]) -> float:
        """Seconds the next operation may wait: its own timeout, never past the deadline (`timed_out` is
        raised once the deadline has passed)."""
        left = self.at - time.monotonic()
        if left <= 0:
            raise timed_out("The attempt's deadline passed.")
        return left if timeout is None else min(timeout, left)


class PinnedStream(httpcore.NetworkStream):
    """A socket (plain, or TLS once start_tls wrapped it) whose every read, write and handshake waits at most
    until the deadline. One socket call with a timeout is bounded by it as a whole (CPython's socket and ssl
    modules compute one deadline per call), and each call here gets what is left."""

    def __init__(self, sock: socket.socket, deadline: Deadline):
        self._sock = sock
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        try:
            self._sock.settimeout(self._deadline.left(timeout, httpcore.ReadTimeout))
            return self._sock.recv(max_bytes)
        except TimeoutError as exc:
            raise httpcore.ReadTimeout(str(exc)) from exc
        except OSError as exc:
            raise httpcore.ReadError(str(exc)) from exc

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        try:
            while buffer:
                self._sock.settimeout(self._deadline.left(timeout, httpcore.WriteTimeout))
                sent = self._sock.send(buffer)
                buffer = buffer[sent:]
        except TimeoutError as exc:
            raise httpcore.WriteTimeout(str(exc)) from exc
        except OSError as exc:
            raise httpcore.WriteError(str(exc)) from exc

    def close(self) -> None:
        self._sock.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> "PinnedStream":
        """TLS over the pinned socket: SNI and the certificate check name `server_hostname`, the URL's host."""
        try:
            self._sock.settimeout(self._deadline.left(timeout, httpcore.ConnectTimeout))
            wrapped = ssl_context.wrap_socket(self._sock, server_hostname=server_hostname)
        except TimeoutError as exc:
            self.close()
            raise httpcore.ConnectTimeout(str(exc)) from exc
        except OSError as exc:  # ssl.SSLError (a certificate that does not name the host) is one
            self.close()
            raise httpcore.ConnectError(str(exc)) from exc
        return PinnedStream(wrapped, self._deadline)

    def get_extra_info(self, info: str):
        if info == "ssl_object" and isinstance(self._sock, ssl.SSLSocket):
            return self._sock._sslobj
        if info == "client_addr":
            return self._sock.getsockname()
        if info == "server_addr":
            return self._sock.getpeername()
        if info == "socket":
            return self._sock
        if (
            info == "is_readable"
        ):  # a kept-alive connection the server closed (none is kept: one request each)
            return bool(select.select([self._sock], [], [], 0)[0])
        return None


class PinnedBackend(httpcore.NetworkBackend):
    """Connects to the target's checked addresses, in the resolver's order, whatever host httpcore asks for
    (it asks for the URL's host: any other is refused, there being no redirect or proxy to follow)."""

    def __init__(self, target: Target, deadline: Deadline):
        self._target = target
        self._deadline = deadline

    def connect_tcp(self, host, port, timeout=None, local_address=None, socket_options=None):
        if (host, port) != (self._target.host, self._target.port):
            raise httpcore.ConnectError(f"Only {self._target.host}:{self._target.port} may be connected to.")
        failure: Exception = httpcore.ConnectError("The host has no address.")
        for family, sockaddr in self._target.addresses:
            sock = socket.socket(family, socket.SOCK_STREAM)
            try:
                sock.settimeout(self._deadline.left(timeout, httpcore.ConnectTimeout))
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                sock.connect(sockaddr)
            except TimeoutError as exc:
                sock.close()
                failure = httpcore.ConnectTimeout(str(exc))
            except OSError as exc:
                sock.close()
                failure = httpcore.ConnectError(str(exc))
            except BaseException:
                sock.close()
                raise
            else:
                return PinnedStream(sock, self._deadline)
        raise failure

    def connect_unix_socket(self, path, timeout=None, socket_options=None):
        raise httpcore.ConnectError("Deliveries go over TCP only.")

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class PinnedTransport(httpx.HTTPTransport):
    """httpx's own transport (its handle_request maps httpcore's errors to httpx's) over a connection pool whose
    network backend is PinnedBackend. The certificates are httpx's defaults (certifi, or SSL_CERT_FILE /
    SSL_CERT_DIR when set)."""

    def __init__(self, target: Target, deadline: Deadline):
        context = httpx.create_ssl_context()
        super().__init__(verify=context, trust_env=False)
        self._pool = httpcore.ConnectionPool(
            ssl_context=context,
            max_connections=1,
            network_backend=PinnedBackend(target, deadline),
        )


def client(target: Target, deadline: Deadline, timeout_s: float) -> httpx.Client:
    """A client for one attempt to `target`: pinned, under `deadline`, no redirects, nothing from the
    environment (proxies, .netrc)."""
    return httpx.Client(
        transport=PinnedTransport(target, deadline),
        timeout=timeout_s,
        follow_redirects=False,
        trust_env=False,
    )
