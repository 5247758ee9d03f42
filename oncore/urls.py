from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from oncore import api, http
from oncore.accounts import key_views
from oncore.accounts import views as account_views
from oncore.accounts.login import throttled, throttled_password_change
from oncore.webhooks import api as webhooks_api
from oncore.webhooks import views as webhook_views
from transcriber_tests.api import mount as mount_transcriber_tests_api
from transcriber_tests.views import health

# The product's API routers join the one API instance before its URLs are built, then the webhooks (whose event
# types the product apps registered when they were ready).
mount_transcriber_tests_api(api.api)
api.api.add_router("", webhooks_api.router)
webhooks_api.describe(api.api)

urlpatterns = [
    # The admin's log-in goes through the same throttle as the site's (listed first, so it wins the path).
    path("admin/login/", throttled(admin.site.login)),
    path("admin/", admin.site.urls),
    path("login/", throttled(auth_views.LoginView.as_view()), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    # Every user changes their own password here (Django's views and the site's password validators); the other
    # sessions of the user end, as Django's session hash changes with the password. Wrong current passwords count
    # against the user on the log-in's throttle.
    path(
        "account/password/",
        throttled_password_change(auth_views.PasswordChangeView.as_view()),
        name="password_change",
    ),
    path("account/password/done/", auth_views.PasswordChangeDoneView.as_view(), name="password_change_done"),
    path("org/switch/", account_views.switch_org, name="switch_org"),
    path("settings/api-keys/", key_views.api_keys, name="api_keys"),
    path("settings/api-keys/<int:pk>/revoke/", key_views.revoke_api_key, name="api_key_revoke"),
    path("settings/webhooks/", webhook_views.webhooks, name="webhooks"),
    path("settings/webhooks/<int:pk>/", webhook_views.webhook, name="webhook"),
    path("settings/webhooks/<int:pk>/delete/", webhook_views.delete_webhook, name="webhook_delete"),
    path(
        "settings/webhooks/<int:pk>/deliveries/<int:delivery_pk>/send-again/",
        webhook_views.send_again,
        name="webhook_send_again",
    ),
    path("api/errors/", api.errors_page, name="api_errors"),
    path("healthz", health.healthz, name="healthz"),
    path("favicon.ico", http.favicon, name="favicon"),
    path("api/v1/", api.urls()),
    path("benchmark/", include("benchmark.urls")),
    path("", include("transcriber_tests.urls")),
]
