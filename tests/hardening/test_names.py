"""Names hold no invisible or direction-changing characters: a bank "\u202eEnglish" would read "hsilgnE", a bank
"English\u200b" would look like "English" and be another. One check (oncore.names) refuses the bidirectional
controls and the zero-width characters in the names of banks, tenants, assistants, API keys and webhooks, from the
dashboard's forms, the API and the call import; right-to-left letters stay welcome, and the pages isolate names
(`<bdi>`, `dir="auto"`) so one written right to left never reorders the text around it."""

import json
import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from oncore import names
from oncore.accounts.models import ApiKey
from oncore.calls.models import Assistant
from oncore.webhooks.models import WebhookEndpoint
from tests.fixtures import assert_error, make_webhook
from transcriber_tests import actions
from transcriber_tests.models import Bank

pytestmark = pytest.mark.django_db

HIDDEN = [
    *(chr(c) for c in range(0x202A, 0x202F)),
    *(chr(c) for c in range(0x2066, 0x206A)),
    "\u200e",
    "\u200f",
    "\u061c",
    *(chr(c) for c in range(0x200B, 0x200E)),
    "\u2060",
    "\ufeff",
]
RIGHT_TO_LEFT = "עברית ועוד"  # Hebrew: a name written right to left, which is fine


@pytest.mark.parametrize("hidden", HIDDEN, ids=[f"U+{ord(c):04X}" for c in HIDDEN])
def test_it_finds_each_bidi_control_and_zero_width_character_wherever_it_is(hidden):
    for name in (f"{hidden}English", f"English{hidden}", f"Eng{hidden}lish"):
        problem = names.name_problem(name)
        assert problem and f"U+{ord(hidden):04X}" in problem, name


@pytest.mark.parametrize(
    "name", ["English", "English + French", RIGHT_TO_LEFT, "العربية", "Zoë's café", "日本語", "🎧 desk"]
)
def test_it_takes_names_in_any_script(name):
    assert names.name_problem(name) is None and names.check_name(name) == name
    names.validate_name(name)


def test_it_names_what_it_found_once_each():
    problem = names.name_problem("\u202eEng\u200blish\u202e")
    assert "U+202E RIGHT-TO-LEFT OVERRIDE, U+200B ZERO WIDTH SPACE)" in problem
    assert problem.startswith("must not contain invisible or direction-changing characters")


# ---------------------------------------------------------------- banks


@pytest.mark.parametrize("name", ["\u202eEnglish", "English\u200b"])
def test_it_refuses_a_bank_name_with_hidden_characters_on_the_dashboard(admin_client, org, name):
    form = {"name": name, "language_label": "", "threshold_pct": "60", "controls_per_flag": "1"}
    response = admin_client.post(reverse("tt:bank_new"), form)
    assert response.status_code == 422 and "invisible or direction-changing" in response.content.decode()
    assert not Bank.objects.exists()
    bank = actions.do_create_bank(org, name="English")
    response = admin_client.post(reverse("tt:bank_edit", args=[bank.pk]), form)
    assert response.status_code == 422 and Bank.objects.get().name == "English"
    hidden = next(c for c in name if c in names.HIDDEN)
    label = {**form, "name": "English", "language_label": f"English{hidden}"}
    assert admin_client.post(reverse("tt:bank_edit", args=[bank.pk]), label).status_code == 422


@pytest.mark.parametrize("name", ["\u202eEnglish", "English\u200b", "\u2066English\u2069"])
def test_it_refuses_a_bank_name_with_hidden_characters_over_the_api(api, org, name):
    error = assert_error(api.post("/banks", {"name": name}), 422, "validation_error")
    assert "invisible or direction-changing" in error["message"]
    bank = actions.do_create_bank(org, name="English")
    error = assert_error(api.patch(f"/banks/{bank.pk}", {"name": name}), 422, "validation_error")
    assert_error(api.patch(f"/banks/{bank.pk}", {"language_label": name}), 422, "validation_error")
    assert Bank.objects.get().name == "English"
    assert api.post("/banks", {"name": RIGHT_TO_LEFT}).status_code == 201


# ---------------------------------------------------------------- tenants and assistants, from the call import


def _calls_file(tenant_name="Bistro", assistant="Front desk", live="Old STT") -> SimpleUploadedFile:
    data = {
        "format": "oncore-calls/1",
        "tenants": [{"slug": "bistro", "name": tenant_name}],
        "assistants": [{"tenant": "bistro", "name": assistant}],
        "calls": [
            {
                "external_id": "ext-1",
                "tenant": "bistro",
                "assistant": assistant,
                "started_at": "2025-03-01T18:00:00+01:00",
                "recorded": False,
                "live_transcriber": {"name": live},
                "lines": [{"speaker": "caller", "text": "Table for two."}],
            }
        ],
    }
    return SimpleUploadedFile("calls.json", json.dumps(data).encode(), content_type="application/json")


@pytest.mark.parametrize(
    ("field", "words"),
    [
        ("tenant_name", "tenant 'bistro': name must not contain invisible"),
        ("assistant", "name must not contain invisible or direction-changing characters (found U+202E"),
        ("live", "call ext-1, live_transcriber: name must not contain invisible"),
    ],
)
def test_it_refuses_a_tenant_or_assistant_name_with_hidden_characters_at_import(api, org, field, words):
    response = api.upload("/calls/import", {"file": _calls_file(**{field: "\u202eBistro"})})
    error = assert_error(response, 400, "import_format_error")
    assert words in error["message"], error["message"]
    assert not Assistant.objects.exists() and not org.tenants.filter(slug="bistro").exists()


# ---------------------------------------------------------------- API keys and webhooks


def test_it_refuses_an_api_key_name_with_hidden_characters(admin_client, org):
    response = admin_client.post(reverse("api_keys"), {"name": "Support\u200b portal", "tenant": ""})
    assert response.status_code == 422 and "invisible or direction-changing" in response.content.decode()
    assert not ApiKey.objects.filter(name__startswith="Support").exists()


def test_it_refuses_a_webhook_description_with_hidden_characters(api, admin_client, org):
    body = {"url": "https://hooks.acme.example/x", "events": ["run.finished"], "description": "\u202eBilling"}
    error = assert_error(api.post("/webhooks", body), 422, "validation_error")
    assert "invisible or direction-changing" in error["message"]
    webhook, _ = make_webhook(org)
    assert_error(
        api.patch(f"/webhooks/{webhook.pk}", {"description": "Billing\ufeff"}), 422, "validation_error"
    )
    form = {"url": body["url"], "events": ["run.finished"], "description": "Billing\u200d"}
    response = admin_client.post(reverse("webhooks"), form)
    assert response.status_code == 422 and "invisible or direction-changing" in response.content.decode()
    response = admin_client.post(reverse("webhook", args=[webhook.pk]), {**form, "enabled": "on"})
    assert response.status_code == 422
    assert WebhookEndpoint.objects.get().description == ""


# ---------------------------------------------------------------- pages isolate the names they show


ISOLATING = re.compile(r"<bdi>.*?</bdi>|<([a-z0-9]+)\b[^>]*\bdir=\"auto\"[^>]*>.*?</\1>", re.S)


def _isolated(page: str, name: str) -> bool:
    """Every place the page shows the name as text is inside <bdi> or an element with dir="auto". A value in a
    tag's attributes (a form field's), the <title> and a <select>'s options cannot hold markup: the browser sets
    their direction from their own text."""
    plain = [m.span() for m in re.finditer(r"<title>.*?</title>|<option\b.*?</option>", page, re.S)]
    spans = [m.span() for m in ISOLATING.finditer(page)]
    shown = [
        m.start()
        for m in re.finditer(re.escape(name), page)
        if page.rfind("<", 0, m.start()) <= page.rfind(">", 0, m.start())  # not inside a tag
        and not any(a <= m.start() < b for a, b in plain)
    ]
    return bool(shown) and all(any(a <= s < b for a, b in spans) for s in shown)


def test_it_isolates_names_on_the_pages_that_show_them(admin_client, org, tenant, recorded_call):
    rtl = RIGHT_TO_LEFT
    bank = actions.do_create_bank(org, name=f"{rtl} bank", language_label=f"{rtl} label")
    tenant.name = f"{rtl} tenant"
    tenant.save(update_fields=["name"])
    assistant = recorded_call.assistant
    assistant.name = f"{rtl} assistant"
    assistant.save(update_fields=["name"])
    ApiKey.generate(org, name=f"{rtl} key", tenant=tenant)
    webhook, _ = make_webhook(org)
    WebhookEndpoint.objects.filter(pk=webhook.pk).update(description=f"{rtl} hook")

    pages = {
        "banks": (reverse("tt:banks"), [bank.name, bank.language_label]),
        "bank tabs": (reverse("tt:bank", args=[bank.pk]), [bank.name, bank.language_label]),
        "call": (reverse("tt:call", args=[recorded_call.pk]), [tenant.name, assistant.name]),
        "API keys": (reverse("api_keys"), [f"{rtl} key", tenant.name]),
        "webhooks": (reverse("webhooks"), [f"{rtl} hook"]),
    }
    for page, (url, shown) in pages.items():
        content = admin_client.get(url).content.decode()
        for name in shown:
            assert _isolated(content, name), f"{page}: {name!r} is shown without <bdi> or dir=auto"
