"""API keys in the dashboard: organization admins create and revoke them. A new key is shown once, in the
response that created it; only its hash is stored."""

from django import forms
from django.contrib import messages
from django.shortcuts import get_object_or_404, redirect, render
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from oncore.names import validate_name

from .access import admin_required
from .models import ApiKey, Tenant


class ApiKeyForm(forms.Form):
    name = forms.CharField(
        max_length=100, validators=[validate_name], help_text="What the key is for, e.g. 'Support portal'."
    )
    tenant = forms.ModelChoiceField(
        queryset=Tenant.objects.none(),
        required=False,
        empty_label="Whole organization",
        help_text="The transcriber testing API takes organization keys only; a tenant key is refused there.",
    )

    def __init__(self, *args, organization, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["tenant"].queryset = organization.tenants.order_by("name")


@never_cache
@require_http_methods(["GET", "POST"])
@admin_required
def api_keys(request):
    form = ApiKeyForm(request.POST or None, organization=request.org)
    new_key = None
    if request.method == "POST" and form.is_valid():
        key, raw = ApiKey.generate(
            request.org,
            tenant=form.cleaned_data["tenant"],
            name=form.cleaned_data["name"],
            created_by=request.user,
        )
        new_key = {"key": key, "raw": raw}
        form = ApiKeyForm(organization=request.org)
    keys = request.org.api_keys.select_related("tenant", "created_by").order_by("-created_at", "-id")
    return render(
        request,
        "accounts/api_keys.html",
        {"form": form, "keys": keys, "new_key": new_key},
        status=422 if form.errors else 200,
    )


@require_POST
@admin_required
def revoke_api_key(request, pk):
    key = get_object_or_404(ApiKey, pk=pk, organization=request.org)
    if ApiKey.objects.filter(pk=key.pk, revoked_at__isnull=True).update(revoked_at=timezone.now()):
        messages.success(request, f"Key {key.prefix}… revoked. Requests with it are now refused.")
    else:
        messages.info(request, f"Key {key.prefix}… was already revoked.")
    return redirect("api_keys")
