"""Who a request's session is: its user read with the user's memberships and their organizations in one query, so
a page asks the database once where it asked twice (access.current_membership reads them from the user)."""

from django.contrib.auth.backends import ModelBackend

from .access import memberships_query


class UserWithMemberships(ModelBackend):
    """Django's ModelBackend (passwords, permissions, inactive users refused), whose get_user also reads the
    user's memberships (access.memberships_query)."""

    def get_user(self, user_id):
        memberships = list(memberships_query(user_id).select_related("user"))
        if not memberships:  # a user in no organization
            return super().get_user(user_id)
        user = memberships[0].user
        if not self.user_can_authenticate(user):
            return None
        for m in memberships:
            m.user = user
        user.memberships_read = memberships
        return user
