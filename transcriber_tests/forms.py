from decimal import Decimal

from django import forms

from oncore.calls.models import Assistant
from oncore.formats import DAY_RANGE, FIRST_DAY, LAST_DAY, check_day
from oncore.http import MAX_ID, ids_in
from oncore.names import validate_name
from oncore.transcribers.models import Transcriber, Vocabulary

from . import errors, queries
from .models import STANDARD_TAGS, Bank


class FlagForm(forms.Form):
    """Flag a line, or edit its flag. Its fields carry the line's id (`expected-<line>`, `note-<line>`,
    `bank-<line>`), so the forms of several lines open on one call page never share an id."""

    expected_text = forms.CharField(
        label="What the caller actually said",
        widget=forms.Textarea(attrs={"rows": 2, "autofocus": True}),
        max_length=5000,
        help_text="Word for word. Write times and numbers the way your team agreed (830 is not eight thirty).",
    )
    tags = forms.MultipleChoiceField(
        choices=[(t, t) for t in STANDARD_TAGS],
        required=False,
        widget=forms.CheckboxSelectMultiple,
        label="Error tags",
    )
    custom_tags = forms.CharField(
        required=False,
        max_length=200,
        label="Other tags",
        widget=forms.TextInput(attrs={"placeholder": "e.g. accent, menu item"}),
    )
    note = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}), max_length=2000)
    bank = forms.ModelChoiceField(
        queryset=Bank.objects.none(), required=False, empty_label="No bank (decide later)"
    )
    confirm_matches_live = forms.BooleanField(
        required=False, label="Flag it anyway: the live transcript already says this"
    )

    def __init__(self, *args, organization, line, **kwargs):
        kwargs.setdefault("auto_id", f"%s-{line.pk}")
        super().__init__(*args, **kwargs)
        self.fields["expected_text"].widget.attrs["id"] = f"expected-{line.pk}"
        self.fields["bank"].queryset = Bank.objects.filter(organization=organization)
        self.matches_live = False  # set when saving was refused because the live transcript already says this
        self.preselected = ""  # why the bank is preselected, when it is (queries.remembered_bank)

    def preselect(self, why: str) -> None:
        """Say under the bank field why it comes preselected (read out with the field)."""
        self.preselected = why
        if why:
            self.fields["bank"].widget.attrs["aria-describedby"] = f"{self['bank'].auto_id}_helptext"

    def refused(self, error) -> None:
        """Show an action's refusal on the form; one saying the live transcript already says the expected text
        asks for the confirmation box."""
        self.matches_live = isinstance(error, errors.ExpectedMatchesLive)
        self.add_error(None, error.message)

    def all_tags(self) -> list[str]:
        custom = [t for t in self.cleaned_data.get("custom_tags", "").split(",") if t.strip()]
        return list(self.cleaned_data.get("tags", [])) + custom

    @staticmethod
    def initial_for(flag) -> dict:
        tags = flag.tag_list
        return {
            "expected_text": flag.expected_text,
            "tags": [t for t in tags if t in STANDARD_TAGS],
            "custom_tags": ", ".join(t for t in tags if t not in STANDARD_TAGS),
            "note": flag.note,
            "bank": flag.bank_id,
        }


class MoveFlagForm(forms.Form):
    bank = forms.ModelChoiceField(queryset=Bank.objects.none(), required=False, empty_label="No bank")

    def __init__(self, *args, organization, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["bank"].queryset = Bank.objects.filter(organization=organization)


class BankForm(forms.Form):
    name = forms.CharField(max_length=100, validators=[validate_name])
    language_label = forms.CharField(
        max_length=100,
        required=False,
        validators=[validate_name],
        help_text="Display only, e.g. English + French.",
    )
    threshold_pct = forms.DecimalField(
        label="Accuracy threshold (%)",
        min_value=0,
        max_value=100,
        decimal_places=2,
        initial=60,
        help_text="A marker for your team; nothing happens automatically when a candidate crosses it.",
    )
    controls_per_flag = forms.TypedChoiceField(
        choices=[(0, "0"), (1, "1"), (2, "2")],
        coerce=int,
        initial=1,
        label="Control lines per flag",
        help_text="Unflagged caller lines of the same call scored with each flag. A change applies to flags "
        "made or moved into the bank from now on; after saving you are offered to draw the controls of the "
        "flags already in it again (with the cost), or to keep the mix, which the results page shows. Compare "
        "banks only when they use the same setting.",
    )

    def action_kwargs(self) -> dict:
        d = self.cleaned_data
        return {
            "name": d["name"],
            "language_label": d["language_label"],
            "threshold": d["threshold_pct"] / 100,  # Decimal: "70.2" is exactly 0.702
            "controls_per_flag": d["controls_per_flag"],
        }

    @staticmethod
    def initial_for(bank) -> dict:
        return {
            "name": bank.name,
            "language_label": bank.language_label,
            "threshold_pct": format((Decimal(bank.threshold) * 100).normalize(), "f"),  # 60.0000 -> "60"
            "controls_per_flag": bank.controls_per_flag,
        }


class AddCandidateForm(forms.Form):
    transcriber = forms.ModelChoiceField(queryset=Transcriber.objects.none())
    vocabulary = forms.ModelChoiceField(
        queryset=Vocabulary.objects.none(),
        required=False,
        empty_label="No vocabulary",
        help_text="Send one of the organization's vocabularies in the vendor's own option: a candidate of its own, "
        "beside the plain transcriber.",
    )
    confirmed = forms.BooleanField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, bank, **kwargs):
        super().__init__(*args, **kwargs)
        # A catalogue entry already in the bank stays on offer while the organization has a vocabulary: with one
        # it is another candidate.
        self.fields["vocabulary"].queryset = Vocabulary.objects.filter(organization_id=bank.organization_id)
        entries = Transcriber.catalogue().filter(enabled=True)
        if not self.fields["vocabulary"].queryset.exists():
            entries = entries.exclude(candidacies__bank=bank)
        self.fields["transcriber"].queryset = entries


class VocabularyForm(forms.Form):
    name = forms.CharField(max_length=60)
    assistant = forms.ModelChoiceField(
        queryset=Assistant.objects.none(), required=False, empty_label="All assistants"
    )
    terms = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 12}),
        help_text="One term per line: names, menu items, street names, product codes. Blank lines and repeats are "
        "left out.",
    )

    def __init__(self, *args, organization, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["assistant"].queryset = Assistant.objects.filter(
            tenant__organization=organization
        ).select_related("tenant")
        self.fields["assistant"].label_from_instance = lambda a: f"{a.name} ({a.tenant.name})"

    @staticmethod
    def initial_for(vocabulary) -> dict:
        return {
            "name": vocabulary.name,
            "assistant": vocabulary.assistant_id,
            "terms": "\n".join(vocabulary.terms),
        }


def day_in_range(value) -> None:
    """A day the filters can take (oncore.formats.check_day: the day after 9999-12-31 does not exist)."""
    try:
        check_day(value)
    except ValueError:
        raise forms.ValidationError(f"Choose a day {DAY_RANGE}.") from None


DAY_INPUT = forms.DateInput(attrs={"type": "date", "min": FIRST_DAY.isoformat(), "max": LAST_DAY.isoformat()})


class CallFilterForm(forms.Form):
    """The calls page's filters. Tenant and assistant are ids (one of another organization finds no call)."""

    tenant = forms.IntegerField(required=False, widget=forms.Select, min_value=1, max_value=MAX_ID)
    assistant = forms.IntegerField(required=False, widget=forms.Select, min_value=1, max_value=MAX_ID)
    date_from = forms.DateField(required=False, widget=DAY_INPUT, validators=[day_in_range])
    date_to = forms.DateField(required=False, widget=DAY_INPUT, validators=[day_in_range])
    has_flags = forms.BooleanField(required=False)
    after = forms.CharField(required=False, max_length=40, widget=forms.HiddenInput)

    def __init__(self, *args, organization, **kwargs):
        super().__init__(*args, **kwargs)
        # The tenants (by name) and their assistants (by name), in one query.
        tenants, assistants = {}, []
        for pk, name, assistant_id, assistant in organization.tenants.values_list(
            "pk", "name", "assistants__pk", "assistants__name"
        ):
            tenants[pk] = name
            if assistant_id is not None:
                assistants.append((assistant, assistant_id, name))
        self.fields["tenant"].widget.choices = [("", "All tenants"), *tenants.items()]
        self.fields["assistant"].widget.choices = [("", "All assistants")] + [
            (pk, f"{assistant} ({tenant})")
            for assistant, pk, tenant in sorted(assistants, key=lambda a: a[0])
        ]

    def clean_after(self):
        """The cursor of a later page (queries.CallCursor), or None for the first page."""
        if not self.cleaned_data["after"]:
            return None
        try:
            return queries.CallCursor.parse(self.cleaned_data["after"])
        except ValueError:
            raise forms.ValidationError(
                "This link to a page of calls is broken; start from the newest."
            ) from None

    def filters(self) -> dict:
        """The filters for queries.calls_list: none while the form is empty or invalid."""
        if not self.is_valid():
            return {}
        d = self.cleaned_data
        return {
            "tenant": d["tenant"],
            "assistant": d["assistant"],
            "date_from": d["date_from"],
            "date_to": d["date_to"],
            "has_flags": d["has_flags"] or None,
        }


class CallCheckboxes(forms.CheckboxSelectMultiple):
    """A checkbox per call, with the id call-<pk> (its label stands in another cell of the calls table)."""

    def create_option(self, name, value, *args, **kwargs):
        option = super().create_option(name, value, *args, **kwargs)
        option["attrs"]["id"] = f"call-{value}"
        return option


class RunForm(forms.Form):
    candidate = forms.ModelChoiceField(
        queryset=Transcriber.objects.none(), required=False, empty_label="The bank's leader"
    )
    calls = forms.TypedMultipleChoiceField(coerce=int, required=False, widget=CallCheckboxes)
    more_calls = forms.CharField(
        required=False, label="Other call ids", help_text="Comma separated, for calls not listed above."
    )
    confirmed = forms.BooleanField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, bank: Bank, call_choices, leader=None, **kwargs):
        """`leader`: the bank's leader, the run's candidate unless another is chosen; with none (no scored lines
        yet), the form offers no "The bank's leader" and asks for a candidate."""
        super().__init__(*args, **kwargs)
        field = self.fields["candidate"]
        field.queryset = Transcriber.objects.filter(candidacies__bank=bank).order_by("candidacies__position")
        if leader is None:
            field.required = True
            field.empty_label = "Choose a candidate"
            field.error_messages["required"] = (
                "This bank has no leader yet (no scored lines): choose a candidate."
            )
        else:
            field.empty_label = f"The bank's leader ({leader.display_name})"
        self.call_choices = list(call_choices)
        self.fields["calls"].choices = [(c.pk, str(c.pk)) for c in self.call_choices]

    def call_rows(self):
        """(call, its checkbox) for each call offered, in order."""
        return zip(self.call_choices, self["calls"], strict=True)

    def clean_more_calls(self):
        parts = [
            p for p in self.cleaned_data["more_calls"].replace(";", ",").replace(" ", ",").split(",") if p
        ]
        ids = ids_in(parts)
        if len(ids) != len(set(parts)):
            raise forms.ValidationError("Call ids are whole numbers, separated by commas.")
        return ids

    def call_ids(self) -> list[int]:
        return list(dict.fromkeys(list(self.cleaned_data["calls"]) + self.cleaned_data["more_calls"]))


class ResultsFilterForm(forms.Form):
    """The results page's filter: one tenant, or one assistant, of the organization (queries.groups.group_of);
    an id that is none of them is a form error, and the page shows every call's results. The page offers the
    tenants and assistants with lines in the window (queries.groups.GroupTable.groups); any of the
    organization's may be asked for."""

    tenant = forms.IntegerField(required=False, min_value=1, max_value=MAX_ID)
    assistant = forms.IntegerField(required=False, min_value=1, max_value=MAX_ID)

    def __init__(self, *args, organization, **kwargs):
        super().__init__(*args, **kwargs)
        self.organization = organization

    def clean(self):
        data = super().clean()
        if self.errors:
            return data
        try:
            data["group"] = queries.groups.group_of(
                self.organization, data.get("tenant"), data.get("assistant")
            )
        except errors.NotFound as exc:
            raise forms.ValidationError(exc.message) from None
        return data

    @property
    def group(self):
        """The filter asked for, or None (every call; also while the form is invalid)."""
        return self.cleaned_data.get("group") if self.is_bound and self.is_valid() else None
