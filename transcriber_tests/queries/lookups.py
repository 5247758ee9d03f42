"""The organization-scoped lookup of each object a page or an API operation opens by its id: one function per
model, shared by the views and the routers. Another organization's object (or an id nobody has) is not found,
never forbidden: oncore.errors.NotFound, which a page answers with the site's 404 and the API with `not_found`."""

from django.db.models import Q

from oncore.calls.models import Line
from oncore.errors import find
from oncore.http import id_in
from oncore.transcribers.models import Transcriber

from ..models import Bank, Flag, Run, RunLine
from .calls import calls_of


def call(organization, pk: int):
    """A call with its tenant, assistant and live transcriber."""
    return find(calls_of(organization), pk, "call")


def line(organization, pk: int) -> Line:
    """A line with its call, the call's tenant and live transcriber."""
    lines = Line.objects.filter(call__tenant__organization=organization)
    return find(lines.select_related("call__tenant", "call__live_transcriber"), pk, "line")


def flag(organization, pk: int) -> Flag:
    """A flag with its line, the line's call and tenant, and its bank."""
    flags = Flag.objects.filter(organization=organization)
    return find(flags.select_related("line__call__tenant", "bank"), pk, "flag")


def bank(organization, pk: int) -> Bank:
    """A bank with its organization (whose timezone its days are counted in)."""
    return find(Bank.objects.filter(organization=organization).select_related("organization"), pk, "bank")


def candidate(bank: Bank, transcriber_pk: int) -> Transcriber:
    """A transcriber that is a candidate of the bank."""
    return find(Transcriber.objects.filter(candidacies__bank=bank), transcriber_pk, "candidate in this bank")


def run(organization, pk: int) -> Run:
    """A run with its candidate, bank and author: readable by its id even after its bank was deleted."""
    runs = Run.objects.filter(organization=organization)
    return find(runs.select_related("candidate", "bank", "created_by"), pk, "run")


def run_line(run: Run, pk: int) -> RunLine:
    return find(run.lines.select_related("line__call"), pk, "line in this run")


def tenant_id(organization, value: str) -> int | None:
    """The id of the organization's tenant named by its id or its slug; None when it has none so named."""
    named = Q(slug=value)
    if pk := id_in(value):
        named |= Q(pk=pk)
    return organization.tenants.filter(named).values_list("pk", flat=True).first()


def transcriber(pk: int, organization=None) -> Transcriber:
    """A catalogue entry (the catalogue is shared by every organization), or one of the organization's vocabulary
    candidates (another organization's is not found)."""
    rows = Transcriber.objects.filter(Q(base__isnull=True) | Q(vocabulary__organization=organization))
    return find(rows if organization is not None else Transcriber.catalogue(), pk, "transcriber")
