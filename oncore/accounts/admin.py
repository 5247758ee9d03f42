from django.contrib import admin

from .models import ApiKey, LoginFailure, Membership, Organization, Tenant


@admin.register(Organization)
class OrganizationAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "timezone", "created_at"]
    search_fields = ["name", "slug"]
    prepopulated_fields = {"slug": ["name"]}
    # Changing it recounts every per-day total of the organization's banks: `manage.py set_timezone` does both.
    readonly_fields = ["timezone"]


@admin.register(Tenant)
class TenantAdmin(admin.ModelAdmin):
    list_display = ["name", "slug", "organization"]
    list_filter = ["organization"]
    search_fields = ["name", "slug"]


@admin.register(Membership)
class MembershipAdmin(admin.ModelAdmin):
    list_display = ["user", "organization", "role"]
    list_filter = ["role", "organization"]
    raw_id_fields = ["user"]


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ["prefix", "name", "organization", "tenant", "created_at", "revoked_at", "last_used_at"]
    list_filter = ["organization"]
    readonly_fields = ["prefix", "hashed_key", "created_at", "last_used_at"]

    def has_add_permission(self, request):
        # Keys are created with `manage.py create_api_key` or the dashboard, which show the raw key once.
        return False


@admin.register(LoginFailure)
class LoginFailureAdmin(admin.ModelAdmin):
    list_display = ["username", "ip", "at"]
    search_fields = ["username"]
