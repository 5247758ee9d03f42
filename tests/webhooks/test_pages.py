"""Webhooks in the dashboard, beside API keys: an admin adds an endpoint (its secret shown once), reads its
delivery log, sends a delivery again, edits and deletes it; a refused URL is a form error; members are refused."""

import pytest
from django.urls import reverse

from oncore.webhooks import sending as webhooks
from oncore.webhooks.models import WebhookDelivery, WebhookEndpoint
from transcriber_tests.actions import runs as run_actions

pytestmark = pytest.mark.django_db


def test_it_adds_an_endpoint_and_shows_its_secret_once(admin_client, receiver):
    page = admin_client.get(reverse("webhooks"))
    assert page.status_code == 200 and b"run.finished" in page.content
    response = admin_client.post(
        reverse("webhooks"), {"url": receiver.url, "events": ["run.finished"], "description": "Support"}
    )
    endpoint = WebhookEndpoint.objects.get()
    assert response.status_code == 200 and endpoint.secret in response.content.decode()
    assert endpoint.events == ["run.finished"] and endpoint.created_by.username == "ada"
    assert endpoint.secret not in admin_client.get(reverse("webhooks")).content.decode()
    assert endpoint.secret not in admin_client.get(reverse("webhook", args=[endpoint.pk])).content.decode()


def test_it_shows_a_refused_url_as_a_form_error(admin_client):
    response = admin_client.post(
        reverse("webhooks"), {"url": "http://169.254.169.254/latest", "events": ["run.finished"]}
    )
    assert response.status_code == 422 and "public addresses only" in response.content.decode()
    assert not WebhookEndpoint.objects.exists()


def test_it_shows_the_endpoint_limit_on_the_form(admin_client, receiver, settings):
    settings.ONCORE = {**settings.ONCORE, "WEBHOOK_MAX_ENDPOINTS": 1}
    admin_client.post(reverse("webhooks"), {"url": receiver.url, "events": ["run.finished"]})
    response = admin_client.post(reverse("webhooks"), {"url": receiver.url, "events": ["run.finished"]})
    assert response.status_code == 422 and "the most it may have (1)" in response.content.decode()
    assert WebhookEndpoint.objects.count() == 1


def test_it_shows_the_delivery_log_sends_again_edits_and_deletes(admin_client, receiver, run_setup, no_judge):
    admin_client.post(reverse("webhooks"), {"url": receiver.url, "events": ["run.finished"]})
    endpoint = WebhookEndpoint.objects.get()
    receiver.secret = endpoint.secret
    bank, cand, call_a, call_b = run_setup
    run_actions.do_cancel_run(run_actions.do_start_run(bank, [call_a.pk], confirmed=True))
    receiver.statuses = [500]
    webhooks.send_due_now()
    page = admin_client.get(reverse("webhook", args=[endpoint.pk])).content.decode()
    assert "run.finished" in page and "HTTP 500" in page and "Send again" in page
    delivery = WebhookDelivery.objects.get()
    response = admin_client.post(reverse("webhook_send_again", args=[endpoint.pk, delivery.pk]))
    assert response.status_code == 302
    webhooks.send_due_now()
    delivery.refresh_from_db()
    assert delivery.status == "delivered" and len(receiver.events) == 1
    edited = admin_client.post(
        reverse("webhook", args=[endpoint.pk]),
        {"url": receiver.url, "events": ["run.finished", "flag.scored"], "description": "both"},
    )
    endpoint.refresh_from_db()
    assert edited.status_code == 302 and endpoint.events == ["run.finished", "flag.scored"]
    assert endpoint.enabled is False  # the box was left unticked
    admin_client.post(reverse("webhook_delete", args=[endpoint.pk]))
    assert not WebhookEndpoint.objects.exists() and not WebhookDelivery.objects.exists()


def test_it_refuses_members(member_client):
    assert member_client.get(reverse("webhooks")).status_code == 403
