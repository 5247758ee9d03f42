"""Who may see what: the current organization of a request, the admin-only gate of transcriber testing, and the
operator's (staff) gate of the benchmarks."""

from functools import wraps

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from .models import Membership

ORG_SESSION_KEY = "org_id"


def memberships_query(user_id):
    """A user's memberships with their organizations, by organization name."""
    return (
        Membership.objects.filter(user_id=user_id)
        .select_related("organization")
        .order_by("organization__name")
    )


def memberships_of(user):
    return list(memberships_query(user.pk))


def current_membership(request) -> Membership | None:
    """The membership of the organization chosen in the session, else the user's first."""
    if not request.user.is_authenticated:
        return None
    if not hasattr(request, "_memberships"):
        read = getattr(request.user, "memberships_read", None)  # backends.UserWithMemberships read them
        request._memberships = memberships_of(request.user) if read is None else read
    chosen = request.session.get(ORG_SESSION_KEY)
    for m in request._memberships:
        if m.organization_id == chosen:
            return m
    return request._memberships[0] if request._memberships else None


def admins_of(organization) -> list:
    """The organization's admins (users), by username: who a member asks for access."""
    return [
        m.user
        for m in Membership.objects.filter(organization=organization, role=Membership.ADMIN)
        .select_related("user")
        .order_by("user__username")
    ]


def forbidden(request, reason: str):
    return render(request, "403.html", {"reason": reason}, status=403)


def admin_required(view):
    """Log in, be an admin of the current organization; sets request.org and request.membership."""

    @login_required
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        membership = current_membership(request)
        if membership is None:
            return forbidden(
                request, "Your account is not in any organization. Ask an organization admin to add you."
            )
        if not membership.is_admin:
            return forbidden(
                request,
                f"Transcriber testing is for organization admins: you are a member of {membership.organization}. "
                "Flags, banks and runs span every tenant's calls, so only admins see them. "
                "Ask an admin of your organization if you need access.",
            )
        request.membership = membership
        request.org = membership.organization
        return view(request, *args, **kwargs)

    return wrapper


STAFF_ONLY = (
    "Benchmark datasets and runs are the operator's: a run sends every clip to a vendor billed to the operator's "
    "keys, so only staff users start or score runs (or the operator, with the manage.py commands). "
    "Organization admins read the results."
)


def benchmark_reader_required(view):
    """Log in, be staff (the operator) or an admin of the current organization: the benchmarks' read pages."""
    as_admin = admin_required(view)

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if request.user.is_staff:
            return view(request, *args, **kwargs)
        return as_admin(request, *args, **kwargs)

    return wrapper


def staff_required(view):
    """Log in and be staff: what spends the operator's money, such as starting a benchmark run."""

    @login_required
    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not request.user.is_staff:
            return forbidden(request, STAFF_ONLY)
        return view(request, *args, **kwargs)

    return wrapper
