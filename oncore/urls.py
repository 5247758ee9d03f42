from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from oncore import api
from oncore.accounts import key_views
from oncore.accounts import views as account_views
from oncore.accounts.login import throttled
from transcriber_tests import health
from transcriber_tests.api import mount as mount_transcriber_tests_api

# The product's API routers join the one API instance before its URLs are built.
mount_transcriber_tests_api(api.api)

urlpatterns = [
    # The admin's log-in goes through the same throttle as the site's (listed first, so it wins the path).
    path("admin/login/", throttled(admin.site.login)),
    path("admin/", admin.site.urls),
    path("login/", throttled(auth_views.LoginView.as_view()), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("org/switch/", account_views.switch_org, name="switch_org"),
    path("settings/api-keys/", key_views.api_keys, name="api_keys"),
    path("settings/api-keys/<int:pk>/revoke/", key_views.revoke_api_key, name="api_key_revoke"),
    path("api/errors/", api.errors_page, name="api_errors"),
    path("healthz", health.healthz, name="healthz"),
    path("api/v1/", api.urls()),
    path("benchmark/", include("benchmark.urls")),
    path("", include("transcriber_tests.urls")),
]
