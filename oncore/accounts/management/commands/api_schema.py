import json

from django.core.management.base import BaseCommand, CommandError

from oncore.api import releases


class Command(BaseCommand):
    help = (
        "The API's OpenAPI schema as served (without servers), printed. --release writes it as the release of its "
        "version, docs/api/openapi-<version>.json; --check lists the breaking changes from the latest release and "
        "fails when one is announced by neither a new major version nor the changelog's Deprecated list."
    )

    def add_arguments(self, parser):
        parser.add_argument("--release", action="store_true", help="Write docs/api/openapi-<version>.json.")
        parser.add_argument("--check", action="store_true", help="Compare with the latest release.")

    def handle(self, release, check, **options):
        schema = releases.served()
        if release:
            try:
                path = releases.write_release(schema)
            except ValueError as exc:
                raise CommandError(str(exc)) from None
            self.stderr.write(f"Released {schema['info']['version']} as {path.name}.")
        elif check:
            found = releases.releases()
            if not found:
                raise CommandError("No released schema in docs/api/: write one with --release.")
            released = json.loads(found[-1][1].read_text())
            breaks = releases.unannounced(released, schema, releases.CHANGELOG.read_text())
            for b in breaks:
                self.stdout.write(str(b))
            if breaks:
                raise CommandError(
                    f"{len(breaks)} breaking changes from {found[-1][1].name}: keep the contract, or move "
                    "API_VERSION's major part (oncore/api/version.py), or list a deprecated removal under "
                    "Deprecated in docs/api.md."
                )
            self.stderr.write(f"No unannounced break from {found[-1][1].name}.")
        else:
            self.stdout.write(json.dumps(schema, indent=1, sort_keys=True, ensure_ascii=False))
