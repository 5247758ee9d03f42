"""The filters the lists share."""


def where(qs, **lookups):
    """The queryset filtered on each lookup that has a value (None and "" stand for no filter; False is one)."""
    return qs.filter(
        **{lookup: value for lookup, value in lookups.items() if value is not None and value != ""}
    )
