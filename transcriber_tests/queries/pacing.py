"""How a bank's streaming candidates behaved as live calls, beside their time to final (queries.latency): how
exactly this server paced their replays, their head latency (time to first partial) and how stable their partial
text was. Read from the replays' own rows (Transcription) of the bank's items of the period: one query, in the
queue's rebuild of the bank's figures, never in a request.

- Pacing: a streaming replay sends the clip in 20 ms frames on the schedule of a live call and records how many it
  sent off that schedule (more than ±5 ms late or early: oncore.transcribers.engines.streaming.session); a busy or
  starved worker sends many late, and the time to final it measures is then longer than a live call would see.
- Time to first partial: from the start of the caller's speech within the clip to the first text the transcriber
  sent after it; p50/p95 with n, and p99 from lib/tradeoff.py P99_MIN_LINES lines (exact: read from the rows).
- Stability: revisions per line (partials and finals that changed a word an earlier partial had shown) and the
  share of final segments that differ from the last partial shown for them.
"""

from collections import defaultdict
from dataclasses import dataclass

from django.db.models import Q

from oncore.calls.models import Line

from ..lib import tradeoff as lib_tradeoff
from ..models import Transcription

# Over this share of its frames sent off schedule, a candidate's time to final is said to be measured off schedule.
OFF_SCHEDULE_SHARE = 0.05


@dataclass(frozen=True)
class Pacing:
    """One streaming candidate's replays of the period: frames sent, those sent off schedule, and the replays;
    its time to first partial (a lib_tradeoff.Latency; None before one is measured); its revisions, final segments
    and those revised, over the replays that recorded them (`stable_lines`)."""

    frames: int
    off_schedule: int
    replays: int
    first_partial: lib_tradeoff.Latency | None = None
    revisions: int = 0
    final_segments: int = 0
    finals_revised: int = 0
    stable_lines: int = 0

    @property
    def share(self) -> float:
        return self.off_schedule / self.frames if self.frames else 0.0

    @property
    def off(self) -> bool:
        """Enough frames were sent off schedule that the time to final is not a live call's."""
        return self.share > OFF_SCHEDULE_SHARE

    @property
    def words(self) -> str:
        """What a person reads beside the figure."""
        share = f"{self.share:.0%}" if self.share >= 0.01 else "under 1%"
        return (
            f"measured off schedule: {share} of its audio frames were sent late or early (this server was busy), "
            "so this time to final is longer than a live call would see"
        )

    @property
    def revisions_per_line(self) -> float | None:
        return self.revisions / self.stable_lines if self.stable_lines else None

    @property
    def finals_revised_share(self) -> float | None:
        return self.finals_revised / self.final_segments if self.final_segments else None


def pacing(bank, since, until, transcriber_ids, group=None) -> dict:
    """{transcriber id: Pacing} of the streaming replays of the bank's items (flags that joined it in the period,
    and their control lines), of the group's calls under a filter; a candidate with none is absent."""
    joined = Q(flag__bank=bank, flag__joined_at__gte=since)
    control = Q(control_uses__flag__bank=bank, control_uses__flag__joined_at__gte=since)
    if until is not None:
        joined &= Q(flag__joined_at__lt=until)
        control &= Q(control_uses__flag__joined_at__lt=until)
    lines = Line.objects.filter(joined | control)
    if group is not None:
        lines = lines.filter(**group.call_filter("call__"))
    rows = Transcription.objects.filter(
        transcriber_id__in=list(transcriber_ids),
        mode=Transcription.STREAMING,
        status=Transcription.DONE,
        frames_sent__gt=0,
        line_id__in=lines.values("pk"),
    ).values_list(
        "transcriber_id",
        "frames_sent",
        "frames_off_schedule",
        "time_to_first_partial_s",
        "partial_revisions",
        "final_segments",
        "finals_revised",
    )
    found = defaultdict(list)
    for tid, *figures in rows:
        found[tid].append(figures)
    return {tid: of_replays(replays) for tid, replays in found.items()}


def of_replays(replays: list) -> Pacing:
    """A Pacing of replays given as (frames sent, off schedule, time to first partial, revisions, final segments,
    finals revised); a replay kept before final segments were recorded counts in the pacing only."""
    stable = [r for r in replays if r[4] is not None]
    return Pacing(
        frames=sum(r[0] for r in replays),
        off_schedule=sum(r[1] or 0 for r in replays),
        replays=len(replays),
        first_partial=lib_tradeoff.exact_latency([r[2] for r in replays if r[2] is not None]),
        revisions=sum(r[3] or 0 for r in stable),
        final_segments=sum(r[4] for r in stable),
        finals_revised=sum(r[5] or 0 for r in stable),
        stable_lines=len(stable),
    )
