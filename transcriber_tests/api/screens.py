"""The dashboard's screens that had no operation: the banks' leaderboard, a bank's weekly trend, its accuracy per
error tag and per language, and a flag's results per candidate. Each reads the query its page reads
(transcriber_tests.queries), so the API and the dashboard show the same figures; tests/api/test_parity.py maps
every dashboard URL to the operation that serves its data."""

from ninja import Field, Query, Router, Schema

from oncore.ratelimit import rate_limited
from transcriber_tests import queries
from transcriber_tests.queries import lookups, snapshots

from ..shapes.screens import (
    FlagResultsOut,
    LanguagesOut,
    LeaderboardOut,
    TagsOut,
    TrendsOut,
    flag_results_out,
    languages_out,
    leaderboard_out,
    tags_out,
    trends_out,
)
from .errors import doc
from .schemas import Id

router = Router(tags=["Results"])
flags = Router(tags=["Flags"])
board = Router(tags=["Banks"])


class WindowIn(Schema):
    window: int = Field(
        queries.DEFAULT_WINDOW_DAYS,
        ge=1,
        le=queries.MAX_WINDOW_DAYS,
        description=f"Days to count, 1 to {queries.MAX_WINDOW_DAYS}: today and the days before it, in the "
        "organization's timezone; a flag counts from the day it joined its bank.",
    )


class LanguageFilters(WindowIn):
    transcriber_id: Id | None = Field(
        None, description="Whose text to score: a candidate's transcriber id; the bank's leader when omitted."
    )


@board.get("/leaderboard", **doc(200, LeaderboardOut, "Every bank with its leader over the window."))
def leaderboard(request, q: Query[WindowIn]):
    """The banks screen: each bank's leader over the window (highest accuracy, ties to lower mean WER, then the
    one listed first), its accuracy with the number of lines and the 95% interval, whether it clears the
    threshold, the exact McNemar test of its lead over the runner-up, the work still waiting and the window's
    flags. A fixed number of queries, whatever the number of banks."""
    org = request.org
    days = queries.window_days_covered(q.window, org.zone)
    board = snapshots.with_entities(queries.leaderboard(org, q.window), q.window)
    return leaderboard_out(board, q.window, days, org.timezone)


@router.get(
    "/banks/{int:bank_id}/trends",
    **doc(200, TrendsOut, "Each candidate's accuracy week by week.", "not_found"),
)
@rate_limited("results")
def bank_trends(request, bank_id: int, q: Query[WindowIn]):
    """Each candidate's accuracy per week of seven days over the window, the last week ending today, with the
    lines scored and the 95% interval per week: the results page's weekly chart, as data."""
    bank = lookups.bank(request.org, bank_id)
    return trends_out(bank, q.window, snapshots.results_of(bank, q.window).data.screen.trends)


@router.get(
    "/banks/{int:bank_id}/tags", **doc(200, TagsOut, "Each candidate's accuracy per error tag.", "not_found")
)
@rate_limited("results")
def bank_tags(request, bank_id: int, q: Query[WindowIn]):
    """Each candidate's accuracy on the window's flagged lines carrying each error tag, with the best candidate
    of each tag: the results page's per-tag table."""
    bank = lookups.bank(request.org, bank_id)
    return tags_out(bank, q.window, snapshots.results_of(bank, q.window).data.screen.tags)


@router.get(
    "/banks/{int:bank_id}/languages",
    **doc(200, LanguagesOut, "Word error rate per language.", "not_found"),
)
@rate_limited("results")
def bank_languages(request, bank_id: int, q: Query[LanguageFilters]):
    """Where the window's flagged lines span several languages (detected from the expected texts, whatever the
    bank's label says): one transcriber's WER per language, pooled over the lines (the leader's unless
    `transcriber_id` names another candidate). `applies` is false, with no items, when the lines span fewer than
    two languages. The results page shows the leader's."""
    bank = lookups.bank(request.org, bank_id)
    if q.transcriber_id is not None:
        transcriber = lookups.candidate(bank, q.transcriber_id)
    else:
        leader = snapshots.results_of(bank, q.window).data.screen.results.leader
        transcriber = leader.transcriber if leader else None
    figures = queries.bank_language_wer(bank, q.window, transcriber.pk if transcriber else None)
    return languages_out(bank, q.window, transcriber, queries.bank_languages(bank, q.window), figures)


@flags.get(
    "/flags/{int:flag_id}/results",
    **doc(200, FlagResultsOut, "The flag's results per candidate.", "not_found"),
)
def flag_results(request, flag_id: int):
    """The flagged line's result per candidate, then its control lines': waiting, scored (text, match, WER) or
    failed with why, and the judge's pick among matching versions. The call page polls it until `pending` is
    false; a flag in no bank has no candidates and no items."""
    flag = lookups.flag(request.org, flag_id)
    return flag_results_out(flag, queries.flag_results([flag]).get(flag.pk))
