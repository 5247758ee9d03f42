"""An assistant's recording setting in words, and why a call has no recording to replay: what the call page, the
API's `not_flaggable` and the refusals to flag say. Days are in the organization's timezone. Reads; writes
nothing. (The rule itself is Assistant.records_at; the importer applies it to calls without their own word.)"""

from django.utils import dateformat, timezone


def _moment(value, zone, with_time: bool) -> str:
    local = value.astimezone(zone)
    day = dateformat.format(local, "j F Y")
    return f"{day} at {local:%H:%M} {zone}" if with_time else day


def _changed_that_day(assistant, zone, near) -> bool:
    """Whether recording was turned on or off on the day (in the timezone) of the moment `near`."""
    if near is None:
        return False
    day = near.astimezone(zone).date()
    changes = (assistant.records_from, assistant.records_until)
    return any(m is not None and m.astimezone(zone).date() == day for m in changes)


def recording_setting(assistant, zone, near=None) -> str:
    """The assistant's recording setting in words: "it records calls from 14 March 2026 on", "it recorded calls
    from 1 March 2026 until 10 March 2026", or "" when recording was never turned on here (an assistant from
    before the setting, whose recorded calls say nothing of it: "it records no calls" would read false beside
    them). With the time of day when recording was turned on or off on the day of `near` (a call's start), so
    the words say which side of it the call is."""
    start, until = assistant.records_from, assistant.records_until
    if start is None:
        return ""
    with_time = _changed_that_day(assistant, zone, near)
    if until is None:
        return f"it records calls from {_moment(start, zone, with_time)} on"
    verb = "recorded" if until <= timezone.now() else "records"
    return f"it {verb} calls from {_moment(start, zone, with_time)} until {_moment(until, zone, with_time)}"


def why_not_recorded(call) -> str | None:
    """Why the call has no recording to replay, naming its assistant's recording setting; None when its recording
    is there. Reads the call's assistant and its tenant's organization (select them with the call)."""
    if call.recorded and call.recording:
        return None
    if call.recorded:
        return (
            f"Call {call.pk} was recorded, but its recording was not imported with it, so its lines cannot be "
            "replayed."
        )
    assistant = call.assistant
    if assistant is None:
        return f"Call {call.pk} was not recorded, so its lines cannot be replayed."
    zone = call.tenant.organization.zone
    setting = recording_setting(assistant, zone, near=call.started_at)
    if assistant.records_at(call.started_at):
        return (
            f"Call {call.pk} was imported as not recorded, though assistant {assistant.name} was recording calls "
            f"then ({setting}), so its lines cannot be replayed."
        )
    # Recording was turned on or off that day: say when the call was, to the minute.
    when = _moment(call.started_at, zone, _changed_that_day(assistant, zone, call.started_at))
    setting = f" ({setting})" if setting else ""
    text = (
        f"Call {call.pk} was not recorded: recording was off for assistant {assistant.name} on {when}{setting}, "
        "so its lines cannot be replayed."
    )
    if not assistant.records_at(timezone.now()):
        again = " again" if assistant.records_from else ""
        text += f" Turn recording on{again} for the assistant; it covers calls from then on."
    return text
