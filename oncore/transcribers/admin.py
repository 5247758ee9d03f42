from django import forms
from django.contrib import admin

from . import providers
from .models import Transcriber


@admin.register(Transcriber)
class TranscriberAdmin(admin.ModelAdmin):
    list_display = [
        "display_name",
        "provider",
        "model",
        "price_per_minute",
        "price_date",
        "price_source",
        "deprecation_date",
        "api_key_env",
        "enabled",
    ]
    list_filter = ["provider", "enabled"]
    search_fields = ["display_name", "model", "slug"]

    def formfield_for_dbfield(self, db_field, request, **kwargs):
        if db_field.name == "provider":  # a choice of the registered providers (the field has no choices)
            return forms.ChoiceField(
                choices=providers.choices, label="Provider", help_text=db_field.help_text
            )
        return super().formfield_for_dbfield(db_field, request, **kwargs)
