"""The queue of line transcriptions as a page or the API shows it: an organization's rows waiting and running
beside its limits (GET /queue, the dashboard). The queue itself: handles.py feeds it, work/jobs.py works it."""

from django.db.models import Count, Min

from oncore.config import config

from ..models import Transcription


def oldest_waiting():
    """When the oldest line transcription still waiting was queued; None when none is."""
    return Transcription.objects.filter(status=Transcription.QUEUED).aggregate(oldest=Min("created_at"))[
        "oldest"
    ]


def queue_status(organization_id: int) -> dict:
    counts = dict(
        Transcription.objects.filter(organization_id=organization_id, status__in=Transcription.ACTIVE)
        .values_list("status")
        .annotate(n=Count("id"))
        .values_list("status", "n")
    )
    return {
        "queued": counts.get(Transcription.QUEUED, 0),
        "running": counts.get(Transcription.RUNNING, 0),
        "limit": config().org_queue_limit,
        "concurrency": config().org_concurrency,
    }
