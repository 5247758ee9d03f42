"""Webhooks in the dashboard, beside API keys (organization admins): the endpoints with a form to add one (its
secret shown once), an endpoint's page with its settings and delivery log, "send again" and delete. The pages
call the same actions as the API."""

from django import forms
from django.contrib import messages
from django.core.paginator import Paginator
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from oncore.accounts.access import admin_required
from oncore.errors import ActionError
from oncore.names import validate_name

from . import actions
from .models import WebhookDelivery, WebhookEndpoint

DELIVERIES_PER_PAGE = 50


class WebhookForm(forms.Form):
    url = forms.CharField(
        label="URL",
        max_length=500,
        help_text="Where events are sent (POST): an https:// URL that reaches a public address.",
    )
    events = forms.MultipleChoiceField(widget=forms.CheckboxSelectMultiple, help_text="The events to send.")
    description = forms.CharField(
        max_length=200, required=False, validators=[validate_name], help_text="What it is for (optional)."
    )

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["events"].choices = [(name, f"{name}: {text}") for name, text in actions.EVENTS.items()]


class WebhookEditForm(WebhookForm):
    enabled = forms.BooleanField(required=False, help_text="Nothing is sent while it is disabled.")


def _save(form, request, endpoint=None):
    """Create or update through the actions; a refusal becomes the form's error. Returns the endpoint or None."""
    if not form.is_valid():
        return None
    data = form.cleaned_data
    try:
        if endpoint is None:
            return actions.do_create_endpoint(
                request.org,
                url=data["url"],
                events=data["events"],
                description=data["description"],
                user=request.user,
            )
        return actions.do_update_endpoint(endpoint, **data)
    except ActionError as exc:
        form.add_error("events" if exc.code == "invalid_request" else "url", exc.message)
        return None


@never_cache
@require_http_methods(["GET", "POST"])
@admin_required
def webhooks(request):
    form = WebhookForm(request.POST or None)
    created = _save(form, request) if request.method == "POST" else None
    if created is not None:
        form = WebhookForm()
    return render(
        request,
        "webhooks/webhooks.html",
        {
            "form": form,
            "created": created,
            "endpoints": request.org.webhook_endpoints.all(),
            "events": actions.EVENTS,
        },
        status=422 if form.errors else 200,
    )


@never_cache
@require_http_methods(["GET", "POST"])
@admin_required
def webhook(request, pk):
    endpoint = get_object_or_404(WebhookEndpoint, pk=pk, organization=request.org)
    initial = {
        "url": endpoint.url,
        "events": endpoint.events,
        "description": endpoint.description,
        "enabled": endpoint.enabled,
    }
    form = WebhookEditForm(request.POST or None, initial=initial)
    if request.method == "POST" and _save(form, request, endpoint) is not None:
        messages.success(request, "Webhook saved.")
        return redirect("webhook", pk=endpoint.pk)
    deliveries = Paginator(endpoint.deliveries.defer("body"), DELIVERIES_PER_PAGE).get_page(
        request.GET.get("page")
    )
    return render(
        request,
        "webhooks/webhook.html",
        {"endpoint": endpoint, "form": form, "page_obj": deliveries},
        status=422 if form.errors else 200,
    )


@require_POST
@admin_required
def delete_webhook(request, pk):
    endpoint = get_object_or_404(WebhookEndpoint, pk=pk, organization=request.org)
    actions.do_delete_endpoint(endpoint)
    messages.success(request, f"Webhook {endpoint.url} deleted; nothing more is sent to it.")
    return redirect("webhooks")


@require_POST
@admin_required
def send_again(request, pk, delivery_pk):
    delivery = get_object_or_404(
        WebhookDelivery, pk=delivery_pk, endpoint__pk=pk, endpoint__organization=request.org
    )
    actions.do_send_again(delivery)
    messages.success(request, f"{delivery.event_type} {delivery.event_id} will be sent again in a moment.")
    return redirect("webhook", pk=pk)
