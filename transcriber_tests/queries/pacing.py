"""How exactly this server paced the streaming replays whose time to final a page shows. A streaming replay sends
the clip in 20 ms frames on the schedule of a live call and records how many it sent off that schedule (more than
±5 ms late or early: oncore.transcribers.engines.streaming.session); a busy or starved worker sends many late,
and the time to final it measures is then longer than a live call would see. Read from the replays' own rows
(Transcription.frames_sent, frames_off_schedule) of the bank's items of the period: one grouped query, in the
queue's rebuild of the bank's figures, never in a request."""

from dataclasses import dataclass

from django.db.models import Count, Q, Sum

from oncore.calls.models import Line

from ..models import Transcription

# Over this share of its frames sent off schedule, a candidate's time to final is said to be measured off schedule.
OFF_SCHEDULE_SHARE = 0.05


@dataclass(frozen=True)
class Pacing:
    """One streaming candidate's replays of the period: frames sent, those sent off schedule, and the replays."""

    frames: int
    off_schedule: int
    replays: int

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
    rows = (
        Transcription.objects.filter(
            transcriber_id__in=list(transcriber_ids),
            mode=Transcription.STREAMING,
            status=Transcription.DONE,
            frames_sent__gt=0,
            line_id__in=lines.values("pk"),
        )
        .values("transcriber_id")
        .annotate(frames=Sum("frames_sent"), off=Sum("frames_off_schedule"), n=Count("id"))
        .order_by()
    )
    return {r["transcriber_id"]: Pacing(int(r["frames"]), int(r["off"] or 0), r["n"]) for r in rows}
