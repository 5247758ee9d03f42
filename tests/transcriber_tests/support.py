"""What the full-call run fixtures (`line_stt`, `world`, `run_setup` in tests/fixtures.py) are made of: a local
STT server that answers per line, and calls built from a script of what the live transcript says, what the
candidate writes and what a replay of the live transcriber gives.

The server speaks the generic endpoint's shape (raw WAV in, {"result": {"transcript": ...}} out). It knows
which line a clip is by its length: every caller line built here has its own duration, and a clip is the
line plus the clip margin on each side."""

import io
import re
import threading
import wave
from dataclasses import dataclass
from datetime import UTC, datetime
from html.parser import HTMLParser

from django.conf import settings

from oncore.calls.models import Assistant, Call, Line
from oncore.transcribers.models import Transcriber
from tests.fixtures import save_recording
from tests.json_server import JsonServer
from tests.llm_server import prompt_text
from transcriber_tests import actions, judge
from transcriber_tests.work import tasks

KEY_ENV = "ONCORE_TEST_RUN_STT_KEY"
INSTRUCTIONS = "You take table bookings for Bistro Verde: names as the guest spells them, times as 24h HH:MM."


@dataclass
class Say:
    live: str  # the live transcript as stored
    candidate: str | None = None  # what the candidate writes (default: the live text)
    replay: str | None = None  # what the live transcriber writes when run again (default: the live text)


class LineStt(JsonServer):
    """POST /stt/<name>: the text scripted for <name> on the line whose clip has this length."""

    def __init__(self):
        self.lock = threading.Lock()
        self.reset()
        super().__init__()

    def reset(self):
        self.texts: dict[str, list[tuple[float, str]]] = {}
        self.failing: set[str] = set()
        self.requests: list[str] = []

    def respond(self, path, headers, body):
        name = path.rsplit("/", 1)[-1]
        with self.lock:
            self.requests.append(name)
        if headers.get("authorization") != "Bearer run-test-key":
            return 401, {"error": "bad key"}
        if name in self.failing:
            return 400, {"error": "this transcriber is set to fail"}
        with wave.open(io.BytesIO(body)) as w:
            seconds = w.getnframes() / w.getframerate()
        best = min(self.texts.get(name, []), key=lambda o: abs(o[0] - seconds), default=None)
        if best is None or abs(best[0] - seconds) > 0.04:
            return 400, {"error": f"no line of {seconds:.3f} s scripted for {name}"}
        return 200, {"result": {"transcript": best[1]}}

    def script(self, name: str, clip_seconds: float, text: str):
        self.texts.setdefault(name, []).append((clip_seconds, text))


class RunWorld:
    """Builds transcribers and calls against one LineStt server; each caller line gets its own length."""

    def __init__(self, tenant, server: LineStt):
        self.tenant = tenant
        self.server = server
        self.next_length = 0.8
        self.live = self.transcriber("live", price="0.01")
        self.candidates: list[Transcriber] = []

    def transcriber(self, name: str, price: str = "0.006") -> Transcriber:
        return Transcriber.objects.create(
            slug=f"run-{name}",
            provider=Transcriber.GENERIC,
            model=name,
            display_name=f"Run {name}",
            price_per_minute=price,
            api_key_env=KEY_ENV,
            options={
                "url": f"{self.server.url}/stt/{name}",
                "auth": "bearer",
                "json_path": "result.transcript",
            },
        )

    def candidate(self, name: str = "cand", price: str = "0.006") -> Transcriber:
        t = self.transcriber(name, price)
        self.candidates.append(t)
        return t

    def call(self, says: list[Say], *, instructions: str = INSTRUCTIONS, live=None, recorded=True) -> Call:
        """Caller lines as scripted, each followed by an assistant line ("Sure."), in a tone recording."""
        live = live or self.live
        margin = settings.ONCORE["CLIP_MARGIN_S"]
        assistant = Assistant.objects.create(tenant=self.tenant, name="Bookings", instructions=instructions)
        call = Call.objects.create(
            tenant=self.tenant,
            assistant=assistant,
            started_at=datetime.now(UTC),
            recorded=recorded,
            live_transcriber=live,
        )
        t, position = 0.6, 0
        for say in says:
            length = round(self.next_length, 2)
            self.next_length += 0.1
            Line.objects.create(
                call=call, position=position, speaker="caller", text=say.live, start_s=t, end_s=t + length
            )
            clip = length + 2 * margin
            for c in self.candidates:
                self.server.script(c.model, clip, say.live if say.candidate is None else say.candidate)
            self.server.script(live.model, clip, say.live if say.replay is None else say.replay)
            t += length + 0.8
            Line.objects.create(
                call=call, position=position + 1, speaker="assistant", text="Sure.", start_s=t, end_s=t + 0.5
            )
            t += 1.1
            position += 2
        if recorded:
            save_recording(call, t + 0.6)
        return call


def caller_lines(call):
    return list(call.lines.filter(speaker="caller").order_by("position"))


def add_lines_a_run_leaves_out(call) -> list[Line]:
    """Three caller lines after the call's others that no run replays: one with no audio timing, one 130 s long
    (over the 120 s limit) and one that starts after the recording ends; lines 5, 6 and 7 of a two-line call."""
    after = call.lines.count()
    return [
        Line.objects.create(call=call, position=after, speaker="caller", text="no timing here"),
        Line.objects.create(
            call=call, position=after + 1, speaker="caller", text="a long turn", start_s=1.0, end_s=131.0
        ),
        Line.objects.create(
            call=call, position=after + 2, speaker="caller", text="too late", start_s=500.0, end_s=501.0
        ),
    ]


# What the judge answers for each candidate text it is shown (the rest: same_meaning).
JUDGED = {
    "my number is 0 8 7": "live_right",
    "under fitz gerald": "live_right",
    "thank you bye": "candidate_right",
}


LINE_BLOCK = re.compile(
    r'<line id="([^"]+)">\s*<transcript_1>(.*?)</transcript_1>\s*<transcript_2>(.*?)</transcript_2>', re.S
)


def shown_lines(body) -> list[tuple[str, str, str]]:
    """(id, transcript 1, transcript 2) of every line a label request shows the judge."""
    return LINE_BLOCK.findall(prompt_text(body))


def neutral_answer(label: str, candidate_first: bool) -> str:
    """What the judge answers for a run label, given which transcript is the candidate's."""
    if label not in ("candidate_right", "live_right"):
        return label
    first_is_right = (label == "candidate_right") == candidate_first
    return judge.FIRST_RIGHT if first_is_right else judge.SECOND_RIGHT


def scripted_judge(body):
    """Labels from JUDGED (the candidate's text is found among the two transcripts shown); one pattern named
    "drops digits" for every break; a fixed verdict."""
    tool = body["tool_choice"]["name"]
    text = prompt_text(body)
    if tool == judge.LABEL_TOOL_NAME:
        labels = []
        for key, first, second in shown_lines(body):
            candidate_first = first in JUDGED
            candidate = first if candidate_first else second
            label = neutral_answer(JUDGED.get(candidate, "same_meaning"), candidate_first)
            labels.append({"line": key, "reasoning": f"Judged {candidate!r}.", "label": label})
        return {"labels": labels}
    if tool == judge.PATTERNS_TOOL_NAME:
        ids = re.findall(r'<line id="([^"]+)">', text)
        return {
            "patterns": [
                {"name": "drops digits", "description": "It loses what the caller said.", "line_ids": ids}
            ]
        }
    if tool == judge.VERDICT_TOOL_NAME:
        return {"verdict": "It would fix the names and break the numbers; not worth it yet."}
    raise AssertionError(tool)


def build_run_setup(org, world):
    """A bank whose only candidate leads on one flag, and two calls that cover every kind of line."""
    cand = world.candidate("cand")
    bank = actions.do_create_bank(org, name="English", controls_per_flag=0)
    actions.do_add_candidate(bank, cand, confirmed=True)
    call_a = world.call(
        [
            Say("Shivon table for for at 830", candidate="Siobhan, table for four at 830"),  # flagged: a fix
            Say("yes that's right"),  # identical
            Say("my number is 0 8 7 1 2", candidate="my number is 0 8 7"),  # judge: live right
            Say("thank you by", candidate="thank you bye"),  # judge: candidate right
        ]
    )
    call_b = world.call(
        [
            Say(
                "I'd like to book for Friday", candidate="I'd like to book for friday."
            ),  # same after normalizing
            Say(
                "under Fitzgerald", candidate="under fitz gerald", replay="under fits gerald"
            ),  # judge: live right
            Say("four people", candidate="for people"),  # judge: same meaning (the default)
        ]
    )
    flagged = caller_lines(call_a)[0]
    actions.do_flag_line(flagged, "Siobhan, table for four at 830", bank=bank)
    tasks.drain()
    return bank, cand, call_a, call_b


VOID_TAGS = {"area", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
BLOCK_TAGS = {
    *("p", "div", "section", "article", "header", "nav", "form", "fieldset", "legend", "table", "thead"),
    *("tbody", "tr", "td", "th", "ul", "ol", "li", "dl", "dt", "dd", "h1", "h2", "h3", "h4", "br", "button"),
}


class _Reader(HTMLParser):
    """The text a person reads inside the first element with aria-label=`label` (the whole page without one):
    no attribute, so a tooltip (title) is not counted, whitespace collapsed."""

    def __init__(self, label: str | None):
        super().__init__()
        self.label = label
        self.depth = 0 if label else 1
        self.done = False
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        if self.depth and not self.done and tag in BLOCK_TAGS:
            self.parts.append(" ")
        if self.done or tag in VOID_TAGS:
            return
        if self.depth:
            self.depth += 1
        elif dict(attrs).get("aria-label") == self.label:
            self.depth = 1

    def handle_endtag(self, tag):
        if self.depth and not self.done and tag in BLOCK_TAGS:
            self.parts.append(" ")
        if self.depth and tag not in VOID_TAGS:
            self.depth -= 1
            self.done = self.depth == 0

    def handle_data(self, data):
        if self.depth and not self.done:
            self.parts.append(data)


def read(html, label: str | None = None) -> str:
    """What a person reads in the element labelled `label` of a page (bytes or str), or on the whole page."""
    reader = _Reader(label)
    reader.feed(html.decode() if isinstance(html, bytes) else html)
    return " ".join("".join(reader.parts).split())
