from .access import current_membership


def organization(request):
    membership = current_membership(request)
    return {
        "current_membership": membership,
        "current_org": membership.organization if membership else None,
        "all_memberships": getattr(request, "_memberships", []),
    }
