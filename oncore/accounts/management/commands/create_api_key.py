from django.core.management.base import BaseCommand, CommandError

from oncore.accounts.models import ApiKey, Organization


class Command(BaseCommand):
    help = (
        "Create an API key and print it once; only its hash is stored. Without --tenant the key is an "
        "organization key, the only kind the transcriber testing API takes."
    )

    def add_arguments(self, parser):
        parser.add_argument("--org", required=True, help="Organization slug.")
        parser.add_argument("--tenant", help="Tenant slug, for a key limited to one tenant.")
        parser.add_argument("--name", default="", help="What the key is for.")

    def handle(self, org, tenant, name, **options):
        organization = Organization.objects.filter(slug=org).first()
        if organization is None:
            raise CommandError(f"No organization with slug {org!r}; create it with `manage.py create_org`.")
        tenant_obj = None
        if tenant:
            tenant_obj = organization.tenants.filter(slug=tenant).first()
            if tenant_obj is None:
                raise CommandError(f"No tenant {tenant!r} in {organization.slug}.")
        key, raw = ApiKey.generate(organization, tenant=tenant_obj, name=name)
        scope = f"tenant {tenant_obj.slug}" if tenant_obj else "organization"
        self.stderr.write(f"Created {scope} key {key.prefix}… for {organization.name}. It is shown once:")
        self.stdout.write(raw)
        if tenant_obj:
            self.stderr.write(
                "Note: the transcriber testing API refuses tenant keys; it needs an organization key."
            )
