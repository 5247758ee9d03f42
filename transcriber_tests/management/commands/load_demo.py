from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand
from django.db import transaction
from django.utils import timezone

from oncore.accounts.models import Membership, Organization
from oncore.calls.importer import import_calls
from oncore.calls.models import Line
from oncore.transcribers.models import Transcriber
from transcriber_tests import actions, scoring

DEMO_FILE = Path(settings.BASE_DIR) / "fixtures" / "demo" / "calls.json"
LOGINS = [
    ("demo-admin", "demo-admin-pass", Membership.ADMIN),
    ("demo-member", "demo-member-pass", Membership.MEMBER),
]
CANDIDATES = ["whisper-base", "whisper-tiny-en", "pocketsphinx-en-us"]


class Command(BaseCommand):
    help = "Load the demo organization, its logins, a bank with three candidates, the demo calls and a few flags."

    def add_arguments(self, parser):
        parser.add_argument(
            "--flags", type=int, default=3, help="Caller lines to flag where the live text was wrong."
        )

    def handle(self, flags, **options):
        if Organization.objects.filter(slug="demo").exists():
            self.stdout.write("The demo organization is already loaded.")
            return
        with transaction.atomic():
            org = Organization.objects.create(name="Demo Hospitality Group", slug="demo")
            User = get_user_model()
            for username, password, role in LOGINS:
                user, _ = User.objects.get_or_create(username=username)
                user.set_password(password)
                user.save()
                Membership.objects.create(user=user, organization=org, role=role)
            counts = import_calls(DEMO_FILE, org, shift_to=timezone.now())
            bank = actions.do_create_bank(org, name="English", language_label="English")
            for slug in CANDIDATES:
                actions.do_add_candidate(bank, Transcriber.objects.get(slug=slug), confirmed=True)
            made = self._flag_wrong_lines(org, bank, flags)
        self.stdout.write(
            f"Loaded the demo: {counts['calls']} calls, {counts['lines']} lines, bank {bank.name!r} with "
            f"{len(CANDIDATES)} candidates, {made} flags queued. Logins: "
            + ", ".join(f"{u} / {p}" for u, p, _ in LOGINS)
        )

    def _flag_wrong_lines(self, org, bank, limit) -> int:
        """Flag the first caller lines whose live text differs from what the script says was said."""
        import json

        said = {}
        for spec in json.loads(DEMO_FILE.read_text())["calls"]:
            for position, ln in enumerate(spec["lines"]):
                said[(spec["external_id"], position)] = ln.get("said")
        made = 0
        lines = Line.objects.filter(call__tenant__organization=org, speaker=Line.CALLER).select_related(
            "call"
        )
        for line in lines.order_by("call__started_at", "position"):
            truth = said.get((line.call.external_id, line.position))
            if made >= limit or not truth or scoring.score_line(truth, line.text).match:
                continue
            if actions.why_not_flaggable(line) is None:
                actions.do_flag_line(line, truth, bank=bank, tags=["name"], note="Demo flag")
                made += 1
        return made
