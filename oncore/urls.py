from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from oncore.accounts import views as account_views

urlpatterns = [
    path("admin/", admin.site.urls),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("org/switch/", account_views.switch_org, name="switch_org"),
    path("", include("transcriber_tests.urls")),
]
