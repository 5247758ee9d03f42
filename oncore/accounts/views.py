from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

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
    nxt = request.POST.get("next") or "/"
    if not url_has_allowed_host_and_scheme(nxt, allowed_hosts={request.get_host()}):
        nxt = "/"
    return redirect(nxt)
