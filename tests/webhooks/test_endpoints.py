"""Endpoints over the API: the addresses they may reach (global unicast only, whatever form an address is
written in, and what the operator allows), the number one organization may have, and the secret shown once
even to a replay of the request that created it."""

import pytest

from oncore.accounts.models import IdempotentRequest
from oncore.webhooks.models import WebhookEndpoint
from tests.fixtures import assert_error

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    "url",
    [
        "https://[::127.0.0.1]/hook",  # IPv4-compatible
        "https://[::ffff:0:7f00:1]/hook",  # IPv4-translated
        "https://[64:ff9b::7f00:1]/hook",  # NAT64 of 127.0.0.1
        "https://[64:ff9b::a00:7]/hook",  # NAT64 of 10.0.0.7
        "https://[64:ff9b:1::808:808]/hook",  # NAT64, local use
        "https://[2002:7f00:1::]/hook",  # 6to4 of 127.0.0.1
        "https://[2002:a9fe:a9fe::1]/hook",  # 6to4 of 169.254.169.254
        "https://[2001:0:4136:e378:8000:63bf:3fff:fdd2]/hook",  # Teredo
        "https://[::ffff:127.0.0.1]/hook",  # IPv4-mapped
        "https://[ff02::1]/hook",  # multicast
        "https://[ff0e::1]/hook",  # global-scope multicast
        "https://224.0.0.1/hook",  # multicast
        "https://239.255.255.250/hook",  # multicast
        "https://240.0.0.1/hook",  # reserved
        "https://255.255.255.255/hook",  # broadcast
        "https://100.64.0.1/hook",  # shared (carrier-grade NAT)
        "https://[fec0::1]/hook",  # site-local
        "https://2130706433/hook",  # 127.0.0.1 as one number
    ],
)
def test_it_refuses_every_address_that_is_not_global_unicast(api, url):
    error = assert_error(
        api.post("/webhooks", {"url": url, "events": ["run.finished"]}), 400, "webhook_url_not_allowed"
    )
    assert "public addresses only" in error["message"]
    assert not WebhookEndpoint.objects.exists()


def test_it_refuses_a_name_that_resolves_to_an_embedded_loopback_address(api, resolver):
    resolver.answer("hooks.example.test", ["64:ff9b::7f00:1"])
    assert_error(
        api.post("/webhooks", {"url": "https://hooks.example.test/hook", "events": ["run.finished"]}),
        400,
        "webhook_url_not_allowed",
    )


@pytest.mark.parametrize(
    "url",
    [
        "https://[2606:4700:4700::1111]/hook",
        "https://[64:ff9b::808:808]/hook",  # NAT64 of 8.8.8.8 (an IPv6-only network's way to it)
        "https://[2002:808:808::1]/hook",  # 6to4 of 8.8.8.8
        "https://8.8.8.8/hook",
    ],
)
def test_it_accepts_global_unicast_addresses_in_every_form(api, url, connections):
    response = api.post("/webhooks", {"url": url, "events": ["run.finished"]})
    assert response.status_code == 201, response.content
    assert connections.to(443) == []  # saving checks; it connects nowhere


@pytest.mark.parametrize(
    ("network", "url"),
    [
        ("64:ff9b::/96", "https://[64:ff9b::7f00:1]/hook"),
        ("224.0.0.0/4", "https://224.0.0.1/hook"),
        ("127.0.0.1/32", "http://[::ffff:127.0.0.1]/hook"),
        ("fd00::/8", "http://[fd00::7]/hook"),
    ],
)
def test_it_lets_the_operator_allow_any_network(api, settings, network, url):
    settings.ONCORE = {**settings.ONCORE, "WEBHOOK_ALLOW_NETWORKS": [network]}
    response = api.post("/webhooks", {"url": url, "events": ["run.finished"]})
    assert response.status_code == 201, response.content


def test_it_caps_the_endpoints_of_an_organization(api, other_api, receiver, settings):
    settings.ONCORE = {**settings.ONCORE, "WEBHOOK_MAX_ENDPOINTS": 3}
    body = {"url": receiver.url, "events": ["run.finished"]}
    ids = [api.post("/webhooks", body).json()["id"] for _ in range(3)]
    error = assert_error(api.post("/webhooks", body), 409, "webhook_limit_reached")
    assert "Delete one" in error["message"] and error["detail"] == {"count": 3, "limit": 3}
    assert WebhookEndpoint.objects.count() == 3
    assert other_api.post("/webhooks", body).status_code == 201  # per organization
    assert api.delete(f"/webhooks/{ids[0]}").status_code == 204
    assert api.post("/webhooks", body).status_code == 201


def test_it_caps_endpoints_at_ten_unless_the_operator_says_otherwise(api, receiver, settings):
    assert settings.ONCORE["WEBHOOK_MAX_ENDPOINTS"] == 10
    body = {"url": receiver.url, "events": ["run.finished"]}
    assert all(api.post("/webhooks", body).status_code == 201 for _ in range(10))
    assert_error(api.post("/webhooks", body), 409, "webhook_limit_reached")


def test_it_shows_the_signing_secret_once_even_to_a_replay_of_the_request(api, receiver):
    body = {"url": receiver.url, "events": ["run.finished"], "description": "replayed"}
    first = api.post("/webhooks", body, **{"Idempotency-Key": "create-hook-1"})
    assert first.status_code == 201, first.content
    shown = first.json()
    secret = shown["secret"]
    assert secret.startswith("whsec_") and shown["secret_withheld"] is False

    again = api.post("/webhooks", body, **{"Idempotency-Key": "create-hook-1"})
    assert again.status_code == 201 and again["Idempotent-Replayed"] == "true"
    assert again["Location"] == first["Location"]
    replayed = again.json()
    assert replayed["secret"] is None and replayed["secret_withheld"] is True
    assert {k: v for k, v in replayed.items() if not k.startswith("secret")} == {
        k: v for k, v in shown.items() if not k.startswith("secret")
    }
    assert WebhookEndpoint.objects.count() == 1 and WebhookEndpoint.objects.get().secret == secret
    # Nothing secret is kept in the replay table.
    for row in IdempotentRequest.objects.values():
        assert all(secret not in str(value) for value in row.values()), row
    assert IdempotentRequest.objects.count() == 1
