"""Where an attempt connects and how long it may take: the name of an endpoint is looked up once per attempt and
the connection goes to the address checked (a name that answers a public address to the check and 127.0.0.1 to
the connection cannot turn a delivery inward), over TLS to that name (SNI, certificate); one deadline ends an
attempt however slowly the receiver answers, and only the start of the answer's body is read. Names are answered
by a resolver stub and the public address is redirected to a receiver on 127.0.0.1: nothing leaves the machine."""

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from oncore.webhooks import actions, sending
from oncore.webhooks.models import WebhookDelivery
from tests.webhooks.servers import TlsWebhookReceiver, TricklingReceiver, make_certificates

pytestmark = pytest.mark.django_db

HOST = "hooks.example.test"
PUBLIC = "93.184.215.14"  # a global unicast address; the connection to it is redirected to 127.0.0.1


@pytest.fixture(scope="module")
def certificates(tmp_path_factory):
    return make_certificates(tmp_path_factory.mktemp("tls"), HOST)


@pytest.fixture
def tls_receiver(certificates, monkeypatch, settings):
    """A TLS receiver with a certificate for HOST, trusted by the client (SSL_CERT_FILE); no network is allowed
    beyond the public ones (127.0.0.1 is refused)."""
    ca_file, cert_file, key_file = certificates
    monkeypatch.setenv("SSL_CERT_FILE", ca_file)
    settings.ONCORE = {**settings.ONCORE, "WEBHOOK_ALLOW_NETWORKS": []}
    with TlsWebhookReceiver(cert_file, key_file) as server:
        yield server


@pytest.fixture
def local(settings):
    settings.ONCORE = {**settings.ONCORE, "WEBHOOK_ALLOW_NETWORKS": ["127.0.0.1/32"]}


def _due(endpoint) -> WebhookDelivery:
    now = timezone.now()
    return WebhookDelivery.objects.create(
        endpoint=endpoint,
        event_id="evt_test",
        event_type="run.finished",
        body='{"id": "evt_test", "type": "run.finished", "created_at": "2026-12-01T00:00:00Z", "data": {}}',
        next_attempt_at=now,
        retry_until=now + timedelta(hours=1),
    )


def test_it_connects_only_to_the_address_it_checked_when_the_name_answers_127_0_0_1_the_next_time(
    org, tls_receiver, resolver, connections
):
    port = tls_receiver.port
    connections.redirect[(PUBLIC, port)] = ("127.0.0.1", port)
    url = f"https://{HOST}:{port}/hooks/oncore"
    resolver.answer(HOST, [PUBLIC], ["127.0.0.1"])
    endpoint = actions.do_create_endpoint(org, url=url, events=["run.finished"])
    tls_receiver.secret = endpoint.secret
    assert (
        resolver.lookups == [HOST] and connections.to(port) == []
    )  # saving looks the name up, connects nowhere

    resolver.answer(HOST, [PUBLIC], ["127.0.0.1"])  # the attempt: a public address first, then loopback
    resolver.lookups.clear()
    delivery = _due(endpoint)
    assert sending.attempt(delivery.pk) == "delivered"

    assert resolver.lookups == [HOST]  # looked up once
    assert connections.to(port) == [(PUBLIC, port)]  # to the address checked, never to 127.0.0.1
    assert [e["id"] for e in tls_receiver.events] == ["evt_test"]
    assert tls_receiver.headers[-1]["host"] == f"{HOST}:{port}"  # the URL's name, not the address
    assert tls_receiver.server_names == [HOST]  # SNI: the name


def test_it_checks_the_certificate_against_the_urls_name_not_the_address(
    org, tls_receiver, resolver, connections
):
    port = tls_receiver.port
    connections.redirect[(PUBLIC, port)] = ("127.0.0.1", port)
    resolver.answer("elsewhere.example.test", [PUBLIC])
    endpoint = actions.do_create_endpoint(
        org, url=f"https://elsewhere.example.test:{port}/hooks/oncore", events=["run.finished"]
    )
    delivery = _due(endpoint)
    assert sending.attempt(delivery.pk) == "retry"  # the certificate names HOST, not elsewhere.example.test
    delivery.refresh_from_db()
    assert "could not be reached" in delivery.error and tls_receiver.events == []
    assert tls_receiver.server_names == ["elsewhere.example.test"]


def test_it_refuses_a_name_that_answers_a_public_and_a_loopback_address_at_once(org, resolver, connections):
    resolver.answer(HOST, [PUBLIC, "127.0.0.1"])
    with pytest.raises(sending.UrlNotAllowed):
        actions.do_create_endpoint(org, url=f"https://{HOST}/hook", events=["run.finished"])
    assert connections.to(443) == []


def test_it_checks_the_name_again_at_every_attempt_and_sends_nothing_when_it_turned_inward(
    org, resolver, connections, tls_receiver
):
    resolver.answer(HOST, [PUBLIC])
    endpoint = actions.do_create_endpoint(org, url=f"https://{HOST}/hook", events=["run.finished"])
    resolver.answer(HOST, ["127.0.0.1"])
    delivery = _due(endpoint)
    assert sending.attempt(delivery.pk) == "retry"
    delivery.refresh_from_db()
    assert "public addresses only" in delivery.error and connections.to(443) == []


def test_it_ends_an_attempt_at_its_deadline_however_slowly_the_receiver_trickles(org, local, settings):
    settings.ONCORE = {**settings.ONCORE, "WEBHOOK_TIMEOUT_S": 1.0}
    # A byte every 0.2 s: a timeout per read (1 s) never passes; the whole answer would take 8 s.
    slow = TricklingReceiver(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", every_s=0.2, for_s=8)
    try:
        endpoint = actions.do_create_endpoint(org, url=slow.url, events=["run.finished"])
        delivery = _due(endpoint)
        started = time.monotonic()
        assert sending.attempt(delivery.pk) == "retry"
        took = time.monotonic() - started
    finally:
        slow.close()
    assert 0.9 < took < 2.0, took
    delivery.refresh_from_db()
    assert delivery.status == "pending" and delivery.error == "The endpoint did not answer in time."
    assert len(slow.requests) == 1
    # The lease of a claim outlasts the longest attempt: the lookup's bound, then the deadline.
    assert sending._lease_s() > sending.LOOKUP_S + 1.0


def test_it_reads_only_the_start_of_a_long_answer_and_counts_its_status(org, local, settings):
    settings.ONCORE = {**settings.ONCORE, "WEBHOOK_TIMEOUT_S": 4.0}
    # 100 MB announced, sent 16 KiB every 0.05 s: reading it whole would take minutes (it stops after 8 s).
    slow = TricklingReceiver(
        b"HTTP/1.1 200 OK\r\nContent-Length: 104857600\r\n\r\n",
        trickle_head=False,
        chunk=b"x" * 16384,
        every_s=0.05,
        for_s=8,
    )
    try:
        endpoint = actions.do_create_endpoint(org, url=slow.url, events=["run.finished"])
        delivery = _due(endpoint)
        started = time.monotonic()
        assert sending.attempt(delivery.pk) == "delivered"
        took = time.monotonic() - started
        for _ in range(100):  # the receiver notices the client left at its next writes
            if slow.cut_after:
                break
            time.sleep(0.05)
    finally:
        slow.close()
    assert took < 2.0, took
    assert slow.cut_after and slow.cut_after[0] is not None and slow.cut_after[0] < 3.0
    delivery.refresh_from_db()
    assert delivery.status == "delivered" and delivery.response_status == 200
