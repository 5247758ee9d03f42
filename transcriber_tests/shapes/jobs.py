"""The queue of line transcriptions as the API shows it (GET /queue; the figures: queries/jobs.py)."""

from ninja import Field, Schema


class QueueOut(Schema):
    queued: int = Field(description="Line transcriptions waiting.")
    running: int
    limit: int = Field(
        description="Past this many waiting, flags into banks and backfills are refused (429)."
    )
    concurrency: int = Field(description="Transcriptions of this organization that run at once.")
