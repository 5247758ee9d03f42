"""The packaged fixtures: the few clips under fixtures/ that `manage.py load_demo` and the tests import
(fixtures/entity_benchmark, fixtures/codeswitch/fixture.jsonl). Their figures test the pipeline; they are not
the public benchmark, so every page that shows one labels it (Dataset.is_fixture, CsDataset.is_fixture).

A dataset is the packaged fixture when the file it was imported from is one of these files byte for byte: the
importers record each file's sha256, and it is compared here with the packaged files' own, computed once per
process. Nothing else is stored for it, so renaming a dataset does not hide it, and a real dataset named
"fixture" is not mistaken for one.
"""

import hashlib
from functools import cache
from pathlib import Path

from django.conf import settings

ENTITY_FILES = ("fixtures/entity_benchmark/data/*.parquet",)
CODESWITCH_FILES = ("fixtures/codeswitch/fixture.jsonl",)
LABEL = "packaged fixture"


@cache
def _sha256s(patterns: tuple[str, ...]) -> frozenset[str]:
    root = Path(settings.BASE_DIR)
    digests = set()
    for pattern in patterns:
        for path in sorted(root.glob(pattern)):
            digests.add(hashlib.sha256(path.read_bytes()).hexdigest())
    return frozenset(digests)


def is_entity_fixture(source_files) -> bool:
    """Whether an entity dataset's source files (Dataset.source_files: [{name, sha256, ...}]) are all packaged
    fixture files."""
    digests = [f.get("sha256") for f in source_files or [] if isinstance(f, dict)]
    return bool(digests) and all(d in _sha256s(ENTITY_FILES) for d in digests)


def is_codeswitch_fixture(source_sha256: str) -> bool:
    """Whether a code-switched dataset was imported from the packaged fixture JSONL (CsDataset.source_sha256)."""
    return bool(source_sha256) and source_sha256 in _sha256s(CODESWITCH_FILES)
