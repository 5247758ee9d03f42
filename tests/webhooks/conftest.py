"""What the webhook tests alone use: a receiver that verifies signatures, a queue that runs its tasks at once,
endpoints allowed to reach 127.0.0.1, and the name lookups: no test here asks real DNS (a name is looked up only
through `resolver`'s stub; addresses and localhost are answered by the system as ever), and `connections`
records where sockets connect."""

import importlib
import socket

import pytest

from tests.webhooks.receiver import WebhookReceiver

REAL_GETADDRINFO = socket.getaddrinfo
REAL_CONNECT = socket.socket.connect


@pytest.fixture(scope="session")
def _receiver_for_session():
    with WebhookReceiver() as server:
        yield server


@pytest.fixture
def receiver(_receiver_for_session, settings):
    """A running receiver, and the setting that lets endpoints reach it on 127.0.0.1."""
    settings.ONCORE = {**settings.ONCORE, "WEBHOOK_ALLOW_NETWORKS": ["127.0.0.1/32"]}
    _receiver_for_session.reset()
    return _receiver_for_session


@pytest.fixture
def queue_now(monkeypatch):
    """Tasks handed to the queue run at once, in this process (once the transaction's on_commit callbacks run:
    wrap the request in django_capture_on_commit_callbacks(execute=True))."""
    ran = []

    def run(func, *args, **kwargs):
        module, name = func.rsplit(".", 1)
        ran.append(func)
        getattr(importlib.import_module(module), name)(*args)

    monkeypatch.setattr("django_q.tasks.async_task", run)
    return ran


class Resolver:
    """socket.getaddrinfo for the tests: a name given answers (`answer`) gets them, one list of addresses per
    lookup, the last one repeating; an address or localhost goes to the system (no network); any other name is
    not found. `lookups` lists the names asked for."""

    def __init__(self):
        self.answers: dict[str, list[list[str]]] = {}
        self.lookups: list[str] = []

    def answer(self, name: str, *lookups: list[str]) -> None:
        self.answers[name] = [list(addresses) for addresses in lookups]

    def __call__(self, host, port, family=0, type=0, proto=0, flags=0):
        name = host.decode() if isinstance(host, bytes) else host
        if name in self.answers:
            self.lookups.append(name)
            answers = self.answers[name]
            addresses = answers.pop(0) if len(answers) > 1 else answers[0]
            return [
                (socket.AF_INET6, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (a, int(port), 0, 0))
                if ":" in a
                else (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "", (a, int(port)))
                for a in addresses
            ]
        if name is None or name == "localhost":
            return REAL_GETADDRINFO(host, port, family, type, proto, flags)
        try:
            return REAL_GETADDRINFO(host, port, family, type, proto, flags | socket.AI_NUMERICHOST)
        except socket.gaierror:
            raise socket.gaierror(socket.EAI_NONAME, f"{name!r} is not looked up in the tests") from None


@pytest.fixture(autouse=True)
def resolver(monkeypatch):
    """The name lookups of every webhook test (real DNS is never asked)."""
    stub = Resolver()
    monkeypatch.setattr(socket, "getaddrinfo", stub)
    return stub


class Connections:
    """Every TCP connection made in the process, as asked for (`made`); one asked for an address in
    `redirect` goes to the address given there instead (so a test can let a public address stand for a
    receiver on 127.0.0.1 without that address ever being contacted)."""

    def __init__(self):
        self.made: list[tuple] = []
        self.redirect: dict[tuple, tuple] = {}

    def to(self, port: int) -> list[tuple]:
        """The connections asked for to this port (others, to a database or cache, are not the test's)."""
        return [made for made in self.made if made[1] == port]

    def connect(self, sock, address):
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            self.made.append(tuple(address[:2]))
            address = self.redirect.get(tuple(address[:2]), address)
        return REAL_CONNECT(sock, address)


@pytest.fixture
def connections(monkeypatch):
    recorder = Connections()
    monkeypatch.setattr(socket.socket, "connect", lambda sock, address: recorder.connect(sock, address))
    return recorder
