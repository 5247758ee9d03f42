"""Who a request's session is: its user read with the user's memberships and their organizations in one query, so
a page asks the database once where it asked twice (access.current_membership reads them from the user)."""

from django.contrib.auth.backends import ModelBackend

from .models import Membership


class UserWithMemberships(ModelBackend):
    """Django's ModelBackend (passwords, permissions, inactive users refused), whose get_user also reads the
    user's memberships, by organization name, as access.memberships_of does."""

    def get_user(self, user_id):
        memberships = list(
            Membership.objects.filter(user_id=user_id)
            .select_related("user", "organization")
            .order_by("organization__name")
        )
        if not memberships:  # a user in no organization
            return super().get_user(user_id)
        user = memberships[0].user
        if not self.user_can_authenticate(user):
            return None
        for m in memberships:
            m.user = user
        user.memberships_read = memberships
        return user
