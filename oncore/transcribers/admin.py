from django.contrib import admin

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
