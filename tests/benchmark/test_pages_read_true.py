"""Every benchmark page, rendered with data of every kind (scored, unscored, running and imported runs on the
packaged fixture and on another dataset; a code-switching report with hallucinated clips, judgements and a run
still going), reads true: no escaped markup (`&lt;span`), no Python value (None, nan), no money past the cent
("$0.0000"), no "(s)" and no "1 clips"."""

import re
from decimal import Decimal
from html.parser import HTMLParser

import pytest
from django.urls import reverse

from benchmark.codeswitch import runs as cs_runs
from benchmark.codeswitch.importer import import_codeswitch
from benchmark.codeswitch.judge import ANSWERS_PROMPT_VERSION, SEMANTIC_PROMPT_VERSION
from benchmark.models import BenchmarkRun, Clip, CsJudgement, CsResult, CsRun
from tests.benchmark.codeswitch.test_what_the_report_says import BABBLE, FIXTURE
from tests.benchmark.entity.test_views import ALPHA, BETA, make_dataset, make_run, scored

pytestmark = pytest.mark.django_db

TAGS = "span|div|a|p|b|i|em|strong|small|code|td|th|tr|ul|ol|li|br|sup|svg|table|section|article|rect|text"
ESCAPED_MARKUP = re.compile(rf"&lt;/|&lt;({TAGS})[\s&>]|&amp;(lt|gt|amp|quot|#\d+);")
PYTHON_VALUES = re.compile(r"(?<![\w.-])(None|nan|NaN|inf)(?![\w-])")
MONEY_PAST_CENTS = re.compile(r"\$\d[\d,]*\.\d{3,}")
BAD_PLURALS = re.compile(r"\(s\)|(?<![\d.,])1 (clips|lines|spans|utterances|errors)\b")


class _Text(HTMLParser):
    """The text a person (or a screen reader) reads: every text node but those of <script> and <style>."""

    def __init__(self):
        super().__init__()
        self.parts, self.skipping = [], 0

    def handle_starttag(self, tag, attrs):
        self.skipping += tag in ("script", "style")

    def handle_endtag(self, tag):
        self.skipping -= tag in ("script", "style") and self.skipping > 0

    def handle_data(self, data):
        if not self.skipping:
            self.parts.append(data)


def read(html: str) -> str:
    reader = _Text()
    reader.feed(html)
    return " ".join(" ".join(reader.parts).split())


def assert_reads_true(client, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 200, url
    source = response.content.decode()
    found = ESCAPED_MARKUP.search(source)
    assert not found, f"{url}: escaped markup {source[max(0, found.start() - 80) : found.end() + 80]!r}"
    text = read(source)
    for pattern, what in (
        (PYTHON_VALUES, "a Python value"),
        (MONEY_PAST_CENTS, "money past the cent"),
        (BAD_PLURALS, "a count not pluralized"),
    ):
        found = pattern.search(text)
        assert not found, f"{url}: {what} {text[max(0, found.start() - 80) : found.end() + 80]!r}"


@pytest.fixture
def entity_runs(dataset):
    """On the packaged fixture: a scored run, a scored one that missed everything, a queued one; on another
    dataset: scored imported and catalogue runs with a cost under a cent."""
    clips = dict(Clip.objects.filter(dataset=dataset).values_list("clip_id", "transcript"))
    right = scored(make_run(dataset, "right", clips))
    wrong = scored(make_run(dataset, "wrong", {c: "nothing" for c in clips}))
    queued = make_run(dataset, "queued", clips, status=BenchmarkRun.QUEUED)
    other = make_dataset()
    alpha = scored(make_run(other, "alpha", ALPHA))
    beta = scored(make_run(other, "beta", BETA))
    BenchmarkRun.objects.filter(pk=beta.pk).update(cost=Decimal("0.004321"))
    return right, wrong, queued, alpha, beta


def test_it_reads_true_on_every_entity_benchmark_page(admin_client, entity_runs):
    right, wrong, queued, alpha, beta = entity_runs
    urls = [reverse("bench:runs"), reverse("bench:runs") + "?tiers=B", reverse("bench:compare")]
    for run in entity_runs:
        urls += [reverse("bench:run", args=[run.pk]), reverse("bench:run", args=[run.pk]) + "?tiers=AB"]
    urls += [
        reverse("bench:compare") + f"?a={right.pk}&b={wrong.pk}",
        reverse("bench:compare") + f"?a={wrong.pk}&b={right.pk}&tiers=B",
        reverse("bench:compare") + f"?a={alpha.pk}&b={beta.pk}",
    ]
    for url in urls:
        assert_reads_true(admin_client, url)


def test_it_reads_true_on_every_code_switching_page(admin_client, endpoint_transcriber, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    dataset = import_codeswitch(FIXTURE, name="cs-fixture").dataset
    babble = cs_runs.create_run(dataset, endpoint_transcriber("babble", text=BABBLE), language_hint=False)
    cs_runs.execute_run(babble.pk)
    silent = cs_runs.create_run(dataset, endpoint_transcriber("silent", text=""), language_hint=True)
    cs_runs.execute_run(silent.pk)
    cs_runs.create_run(dataset, endpoint_transcriber("later", text="hola"), language_hint=False)  # queued
    for result in CsResult.objects.filter(run=babble, utterance__condition="code_switched"):
        CsJudgement.objects.create(
            result=result,
            kind=CsJudgement.SEMANTIC,
            prompt_version=SEMANTIC_PROMPT_VERSION,
            errors=3,
            total=12,
        )
        CsJudgement.objects.create(
            result=result, kind=CsJudgement.ANSWERS, prompt_version=ANSWERS_PROMPT_VERSION, error="timed out"
        )
    assert CsRun.objects.count() == 3

    for url in (reverse("cs:datasets"), reverse("cs:report", args=[dataset.pk])):
        assert_reads_true(admin_client, url)
