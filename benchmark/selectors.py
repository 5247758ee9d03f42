"""The product's one door to the benchmark: what transcriber_tests reads of it (each candidate's entity figure, the
code-switching tagger on a bank's lines) and the demo's benchmark part (load_packaged_fixtures).

    headlines = entity_headlines([t.pk for t in transcribers])   # {transcriber id: EntityHeadline}, 2 queries
    detect_languages(texts), language_wer(languages, pairs)      # the code-switching tagger, on a bank's lines

The figure is the one the benchmark pages quote a run by: the headline entity accuracy (MLCommons subset where
the dataset has one, tier A) of the transcriber's latest scored run. It says how many spans it was scored on and
whether the dataset is the packaged fixture `load_demo` imports (a few clips: a pipeline check, not the public
benchmark), so a candidate card never shows a five-clip figure as the benchmark's.
"""

from dataclasses import dataclass

from .codeswitch.langtag import detect_languages, language_wer
from .demo import load_packaged_fixtures
from .entity import reports, scoring
from .entity.matcher import CATEGORIES as ENTITY_CATEGORIES
from .entity.matcher import MATCHER_VERSION, differences, entity_marks, same_text
from .packaged import LABEL as FIXTURE_LABEL
from .packaged import is_entity_fixture

# The code-switching tagger and per-language WER a bank's results read, the entity matcher a full-call
# run's rule labels use (transcriber_tests/judge/rule_labels.py), and the entities of a caller's line each
# score keeps (entity_marks, in ENTITY_CATEGORIES), named here so the product imports the benchmark from this
# one module.
__all__ = [
    "ENTITY_CATEGORIES",
    "MATCHER_VERSION",
    "EntityHeadline",
    "detect_languages",
    "differences",
    "entity_headlines",
    "entity_marks",
    "language_wer",
    "load_packaged_fixtures",
    "same_text",
]


@dataclass(frozen=True)
class EntityHeadline:
    """A transcriber's entity benchmark figure. `accuracy`: a fraction (0..1) over `n` spans scored; `run_id`:
    the run it comes from (bench:run); `dataset_clips`: the clips of that run's dataset; `dataset_label`:
    "packaged fixture", "MLCommons subset" or "all subsets" (a dataset without an MLCommons subset)."""

    accuracy: float
    n: int
    run_id: int
    is_fixture: bool
    dataset_clips: int
    tier: str
    dataset_label: str

    @property
    def caption(self) -> str:
        """What to print beside the figure: "MLCommons subset, tier A, n=1086", or for the fixture "packaged
        fixture, 5 clips — not the full benchmark, tier A, n=4"."""
        if self.is_fixture:
            clips = f"{self.dataset_clips} clip" + ("" if self.dataset_clips == 1 else "s")
            where = f"{FIXTURE_LABEL}, {clips} — not the full benchmark"
        else:
            where = self.dataset_label
        return f"{where}, tier {self.tier}, n={self.n}"


def _dataset_label(subset: str | None, is_fixture: bool) -> str:
    if is_fixture:
        return FIXTURE_LABEL
    if subset is not None and subset.startswith(scoring.HEADLINE_PREFIX):
        return f"{scoring.HEADLINE_PREFIX} subset"
    return "all subsets"


def entity_headlines(transcriber_ids) -> dict[int, EntityHeadline]:
    """{transcriber id: EntityHeadline} of each transcriber's latest scored entity benchmark run (tier A
    headline); transcribers without one are left out. Two queries, whatever the number of transcribers."""
    figures = {}
    for transcriber_id, latest in reports.latest_headlines(transcriber_ids).items():
        fixture = is_entity_fixture(latest.dataset_source_files)
        figures[transcriber_id] = EntityHeadline(
            accuracy=latest.headline.accuracy,
            n=latest.headline.n,
            run_id=latest.run_id,
            is_fixture=fixture,
            dataset_clips=latest.dataset_clips,
            tier=latest.headline.tiers,
            dataset_label=_dataset_label(latest.headline.subset, fixture),
        )
    return figures


def entity_scored_since(moment) -> dict[int, object]:
    """{transcriber id: when its latest entity benchmark run was scored} for runs scored after `moment`: the
    product computes again the figures of banks holding these transcribers (their cards show the headline)."""
    found: dict[int, object] = {}
    for transcriber_id, scored_at in reports.scored_since(moment):
        found[transcriber_id] = max(scored_at, found.get(transcriber_id, scored_at))
    return found
