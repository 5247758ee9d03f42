"""The released schemas and the check that the served one keeps their contract.

A release is the schema as served, committed as docs/api/openapi-<version>.json when its version is published
(`manage.py api_schema --release`). The served schema may differ from the latest release only by additions,
unless its version's major part moved past the release's, or the break removes something deprecated that the
changelog (docs/api.md) lists under a heading "Deprecated", in backquotes, exactly as the check words it
(oncore.api.compat.Break: "GET /api/v1/runs/{run_id}/lines query parameter label: enum value 'x' removed")."""

import json
import re
from pathlib import Path

from django.conf import settings
from django.urls import get_resolver

from .compat import Break, breaking_changes
from .instance import api

RELEASES = Path(settings.BASE_DIR) / "docs" / "api"
CHANGELOG = Path(settings.BASE_DIR) / "docs" / "api.md"
_FILE = re.compile(r"openapi-([0-9]+(?:\.[0-9]+){0,2})\.json")


def version_of(text: str) -> tuple[int, int, int]:
    """ "2.0.0" -> (2, 0, 0); "1" -> (1, 0, 0) (the first schemas said "1")."""
    parts = [int(p) for p in text.split(".")]
    return (*parts, 0, 0)[:3]


def served() -> dict:
    """The schema as GET /api/v1/openapi.json serves it, without `servers` (they name the server asked)."""
    get_resolver().url_patterns  # noqa: B018 (loading the URLs mounts every router on the API)
    return {**api.get_openapi_schema(), "servers": []}


def releases(folder: Path = RELEASES) -> list[tuple[tuple[int, int, int], Path]]:
    """The committed releases, oldest first."""
    found = [
        (version_of(m[1]), path)
        for path in folder.glob("openapi-*.json")
        if (m := _FILE.fullmatch(path.name))
    ]
    return sorted(found)


def write_release(schema: dict, folder: Path = RELEASES) -> Path:
    """Commit `schema` as the release of its version; a release already written never changes."""
    path = folder / f"openapi-{schema['info']['version']}.json"
    text = json.dumps(schema, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if path.exists() and path.read_text() != text:
        raise ValueError(
            f"{path.name} is released already and differs: move API_VERSION on (oncore/api/version.py)."
        )
    path.write_text(text)
    return path


def deprecated(changelog: str) -> set[str]:
    """The breaks the changelog announces: each `backquoted` text in a section headed "Deprecated"."""
    listed, inside = set(), False
    for line in changelog.splitlines():
        if line.startswith("#"):
            inside = line.lstrip("#").strip().lower() == "deprecated"
        elif inside:
            listed.update(re.findall(r"`([^`]+)`", line))
    return listed


def unannounced(released: dict, current: dict, changelog: str) -> list[Break]:
    """The breaks from `released` to `current` that neither a new major version nor the changelog's Deprecated
    list announces."""
    if version_of(current["info"]["version"])[0] > version_of(released["info"]["version"])[0]:
        return []
    listed = deprecated(changelog)
    return [b for b in breaking_changes(released, current) if str(b) not in listed]
