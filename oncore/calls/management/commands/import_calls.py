from django.core.management.base import BaseCommand, CommandError

from oncore.accounts.models import Organization
from oncore.audio import AudioError
from oncore.calls.importer import ImportFormatError, do_import_calls


class Command(BaseCommand):
    help = "Import calls from a JSON file in the oncore-calls/1 format (docs/call-import-format.md)."

    def add_arguments(self, parser):
        parser.add_argument("path")
        parser.add_argument("--org", required=True, help="Organization slug.")

    def handle(self, path, org, **options):
        organization = Organization.objects.filter(slug=org).first()
        if organization is None:
            raise CommandError(f"No organization with slug {org!r}; create it with `manage.py create_org`.")
        try:
            counts = do_import_calls(path, organization)
        except (ImportFormatError, AudioError) as exc:
            raise CommandError(f"Nothing was imported: {exc}") from None
        self.stdout.write(
            f"Imported {counts['calls']} calls ({counts['lines']} lines), {counts['tenants']} new tenants, "
            f"{counts['assistants']} new assistants; {counts['skipped']} calls were already there."
        )
