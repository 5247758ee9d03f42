from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from oncore.http import redirect_next

from .access import ORG_SESSION_KEY, memberships_of


@require_POST
def switch_org(request):
    """Make another of the user's organizations the current one."""
    if not request.user.is_authenticated:
        return redirect("login")
    wanted = request.POST.get("organization")
    for m in memberships_of(request.user):
        if str(m.organization_id) == wanted:
            request.session[ORG_SESSION_KEY] = m.organization_id
            break
    return redirect_next(request, "/")
