import os
import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils.text import slugify

from oncore.accounts.models import Membership, Organization

PASSWORD_ENV = "ONCORE_ADMIN_PASSWORD"


class Command(BaseCommand):
    help = (
        "Create an organization and its first admin. The admin's password comes from the environment variable "
        f"{PASSWORD_ENV} (refused unless Django's password validators accept it); without it a random one is "
        "generated and printed once. An existing user is made an "
        "admin of the new organization and keeps their password."
    )

    def add_arguments(self, parser):
        parser.add_argument("name", help="The organization's name, e.g. 'Acme Dining'.")
        parser.add_argument("--slug", help="Short unique id used by other commands (default: from the name).")
        parser.add_argument("--admin", required=True, help="Username of the first admin.")
        parser.add_argument("--email", default="", help="The admin's email, for a new user.")

    def handle(self, name, slug, admin, email, **options):
        slug = slug or slugify(name)
        if not slug:
            raise CommandError("Give a --slug: none can be made from that name.")
        if Organization.objects.filter(slug=slug).exists():
            raise CommandError(f"An organization with slug {slug!r} already exists.")
        User = get_user_model()
        password = None
        user = User.objects.filter(username=admin).first()
        if user is None:
            password = os.environ.get(PASSWORD_ENV) or secrets.token_urlsafe(12)
            try:  # Django's password validators (settings.AUTH_PASSWORD_VALIDATORS), as for any password
                validate_password(password, User(username=admin, email=email))
            except ValidationError as exc:
                raise CommandError(
                    f"The password in {PASSWORD_ENV} is refused: {' '.join(exc.messages)} Choose another, or "
                    f"unset {PASSWORD_ENV} to have one generated."
                ) from None
        with transaction.atomic():
            org = Organization.objects.create(name=name, slug=slug)
            if password is not None:
                user = User.objects.create_user(username=admin, email=email, password=password)
            Membership.objects.create(user=user, organization=org, role=Membership.ADMIN)
        self.stdout.write(f"Created organization {org.name} (slug {org.slug}) with admin {user.username}.")
        if password is not None and not os.environ.get(PASSWORD_ENV):
            self.stdout.write(
                f"Password for {user.username} (shown once; change it after logging in, under Password at /account/password/): {password}"
            )
        self.stdout.write(f"Create an API key with: manage.py create_api_key --org {org.slug}")
