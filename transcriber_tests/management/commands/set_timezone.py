"""manage.py set_timezone --org SLUG ZONE: the timezone an organization's days are counted in ("last 30 days" is
today and the 29 days before it there), and its banks' per-day totals recounted in the new days."""

from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from django.core.management.base import BaseCommand, CommandError

from oncore.accounts.models import Organization
from transcriber_tests import actions


class Command(BaseCommand):
    help = (
        "Set the timezone an organization's figures count their days in (an IANA name such as Europe/Dublin or "
        "America/New_York; UTC by default), and recount its banks' per-day totals in those days."
    )

    def add_arguments(self, parser):
        parser.add_argument("zone", help="An IANA timezone name, e.g. Europe/Dublin.")
        parser.add_argument("--org", required=True, help="Organization slug.")

    def handle(self, zone, org, **options):
        organization = Organization.objects.filter(slug=org).first()
        if organization is None:
            raise CommandError(f"No organization with slug {org!r}; create it with `manage.py create_org`.")
        try:
            ZoneInfo(zone)
        except (ZoneInfoNotFoundError, ValueError):
            raise CommandError(
                f"{zone!r} is not a timezone; give an IANA name such as Europe/Dublin."
            ) from None
        banks = actions.do_set_timezone(organization, zone)
        self.stdout.write(f"{organization.name} counts its days in {zone} now; recounted {banks} bank(s).")
