"""Deployment defaults: no start without a SECRET_KEY when DEBUG is off; HTTPS settings off for local use and on
in the documented production environment, where `manage.py check --deploy` prints no warning; a
Content-Security-Policy without inline script or style on every response."""

import os
import re
import runpy
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.urls import reverse

from oncore.middleware import CONTENT_SECURITY_POLICY

pytestmark = pytest.mark.django_db

ROOT = Path(settings.BASE_DIR)
SETTINGS_FILE = ROOT / "oncore" / "settings.py"
CONFIG_NAMES = (
    "DEBUG",
    "SECRET_KEY",
    "SECURE_SSL_REDIRECT",
    "SECURE_PROXY_SSL_HEADER",
    "SECURE_HSTS_SECONDS",
)


def load_settings(monkeypatch, **env):
    for name in CONFIG_NAMES:
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return runpy.run_path(str(SETTINGS_FILE))


def documented_production_env() -> dict:
    """The variables of the first sh block of docs/deploy.md, with a real random key for its placeholder."""
    text = (ROOT / "docs" / "deploy.md").read_text()
    block = re.search(r"```sh\n(.*?)```", text, re.S).group(1)
    env = dict(line.split("=", 1) for line in block.splitlines() if "=" in line)
    assert env["SECRET_KEY"].startswith("<")
    env["SECRET_KEY"] = "docs-check-" + "k3y" * 20
    return env


@pytest.mark.parametrize("debug", [{}, {"DEBUG": "0"}], ids=["debug-unset", "debug-off"])
def test_it_refuses_to_start_without_a_secret_key_when_debug_is_off(monkeypatch, debug):
    with pytest.raises(ImproperlyConfigured, match="SECRET_KEY is not set.*DEBUG=1"):
        load_settings(monkeypatch, **debug)


def test_it_starts_with_a_secret_key_or_for_local_debugging(monkeypatch):
    assert load_settings(monkeypatch, SECRET_KEY="k" * 50)["SECRET_KEY"] == "k" * 50
    assert load_settings(monkeypatch, DEBUG="1")["DEBUG"] is True


def test_it_keeps_https_settings_off_for_local_use_and_reads_them_from_the_environment(monkeypatch):
    local = load_settings(monkeypatch, DEBUG="1")
    assert local["SECURE_SSL_REDIRECT"] is False and local["SECURE_HSTS_SECONDS"] == 0
    assert "SECURE_PROXY_SSL_HEADER" not in local
    production = load_settings(monkeypatch, **documented_production_env())
    assert production["SECURE_SSL_REDIRECT"] is True
    assert production["SECURE_HSTS_SECONDS"] == 31536000
    assert production["SECURE_HSTS_INCLUDE_SUBDOMAINS"] is True and production["SECURE_HSTS_PRELOAD"] is True
    assert production["SECURE_PROXY_SSL_HEADER"] == ("HTTP_X_FORWARDED_PROTO", "https")
    assert production["ONCORE"]["TRUSTED_PROXY_HEADER"] == "X-Forwarded-For"


def test_it_passes_check_deploy_without_a_warning_in_the_documented_production_environment():
    test_only = (*CONFIG_NAMES, "DJANGO_SETTINGS_MODULE", "DJANGO_ALLOW_ASYNC_UNSAFE")
    env = {k: v for k, v in os.environ.items() if k not in test_only}
    env.update(documented_production_env())
    done = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "System check identified no issues" in done.stdout


def test_it_runs_check_deploy_in_ci_with_the_documented_environment():
    makefile = (ROOT / "Makefile").read_text()
    assert "check --deploy --fail-level WARNING" in makefile
    deploy_env = re.search(r"DEPLOY_ENV := (.*?)\n\n", makefile, re.S).group(1)
    documented = documented_production_env()
    for name in ("DEBUG", "SECURE_SSL_REDIRECT", "SECURE_PROXY_SSL_HEADER", "SECURE_HSTS_SECONDS"):
        assert f"{name}={documented[name]}" in deploy_env, name
    assert "make check" in (ROOT / ".ci" / "run").read_text()


def test_it_sends_a_content_security_policy_without_inline_script_or_style_everywhere(
    client, admin_client, api, recorded_call
):
    for policy in ("script-src 'self'", "style-src 'self'", "frame-ancestors 'none'", "object-src 'none'"):
        assert policy in CONTENT_SECURITY_POLICY
    assert "unsafe" not in CONTENT_SECURITY_POLICY
    line = recorded_call.lines.first()
    responses = [
        client.get(reverse("login")),
        admin_client.get(reverse("tt:calls")),
        admin_client.get(reverse("tt:call", args=[recorded_call.pk])),
        admin_client.get(reverse("tt:line_audio", args=[line.pk])),
        admin_client.get("/no/such/page/"),
        api.get("/calls"),
        api.get("/docs"),
    ]
    for response in responses:
        assert response["Content-Security-Policy"] == CONTENT_SECURITY_POLICY, response


def test_it_leaves_no_inline_script_handler_or_style_in_the_templates():
    for template in (ROOT / "templates").rglob("*.html"):
        text = template.read_text()
        assert not re.search(r"<script(?![^>]*\bsrc=)", text), template
        assert not re.search(r"\son[a-z]+\s*=", text), template
        assert not re.search(r"\sstyle\s*=", text), template
        assert not re.search(r"<style[\s>]", text), template
