"""The benchmark's part of the demo (`manage.py load_demo`): the packaged entity-benchmark and code-switching
fixtures imported, and runs of the local engines on them queued (the queue worker computes them)."""

from django.conf import settings

from oncore.transcribers.models import Transcriber

from .codeswitch import importer as cs_importer
from .codeswitch import runs as cs_runs
from .entity import importer as entity_importer
from .entity import runs as entity_runs

ENTITY_FIXTURE = settings.BASE_DIR / "fixtures" / "entity_benchmark"
CODESWITCH_FIXTURE = settings.BASE_DIR / "fixtures" / "codeswitch" / "fixture.jsonl"


def load_packaged_fixtures(entity_engines, codeswitch_runs) -> str:
    """Import both fixtures and queue a run of each entity engine (catalogue slugs) and each code-switching
    (slug, language hint) pair. Returns what it did, in words."""
    entity = entity_importer.import_dataset(ENTITY_FIXTURE, out=lambda message: None).dataset
    for slug in entity_engines:
        entity_runs.start_run(entity, Transcriber.objects.get(slug=slug))
    codeswitch = cs_importer.import_codeswitch(CODESWITCH_FIXTURE, name="codeswitch-fixture").dataset
    for slug, hint in codeswitch_runs:
        cs_runs.start_run(codeswitch, Transcriber.objects.get(slug=slug), language_hint=hint)
    return (
        f"Imported the entity benchmark fixture ({entity.clip_count} clips) and the code-switching fixture "
        f"({codeswitch.utterance_count} clips); queued {len(entity_engines)} entity runs and "
        f"{len(codeswitch_runs)} code-switching runs of the local engines."
    )
