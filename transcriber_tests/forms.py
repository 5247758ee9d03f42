from django import forms

from oncore.transcribers.models import Transcriber

from .models import STANDARD_TAGS, Bank


class FlagForm(forms.Form):
    expected_text = forms.CharField(
        label="What the caller actually said", widget=forms.Textarea(attrs={"rows": 2}), max_length=5000,
        help_text="Word for word. Write times and numbers the way your team agreed (830 is not eight thirty).",
    )
    tags = forms.MultipleChoiceField(
        choices=[(t, t) for t in STANDARD_TAGS], required=False, widget=forms.CheckboxSelectMultiple,
        label="Error tags",
    )
    custom_tags = forms.CharField(required=False, max_length=200, label="Other tags",
                                  help_text="Your own words, separated by commas.")
    note = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}), max_length=2000)
    bank = forms.ModelChoiceField(queryset=Bank.objects.none(), required=False, empty_label="No bank (decide later)")

    def __init__(self, *args, organization, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["bank"].queryset = Bank.objects.filter(organization=organization)

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
    name = forms.CharField(max_length=100)
    language_label = forms.CharField(max_length=100, required=False, help_text="Display only, e.g. English + French.")
    threshold_pct = forms.DecimalField(
        label="Accuracy threshold (%)", min_value=0, max_value=100, decimal_places=1, initial=60,
        help_text="A marker for your team; nothing happens automatically when a candidate crosses it.",
    )
    controls_per_flag = forms.TypedChoiceField(
        choices=[(0, "0"), (1, "1"), (2, "2")], coerce=int, initial=1, label="Control lines per flag",
        help_text="Unflagged caller lines of the same call scored with each flag. Compare banks only when they "
        "use the same setting.",
    )

    def action_kwargs(self) -> dict:
        d = self.cleaned_data
        return {"name": d["name"], "language_label": d["language_label"],
                "threshold": float(d["threshold_pct"]) / 100, "controls_per_flag": d["controls_per_flag"]}

    @staticmethod
    def initial_for(bank) -> dict:
        return {"name": bank.name, "language_label": bank.language_label,
                "threshold_pct": round(bank.threshold * 100, 1), "controls_per_flag": bank.controls_per_flag}


class AddCandidateForm(forms.Form):
    transcriber = forms.ModelChoiceField(queryset=Transcriber.objects.none())
    confirmed = forms.BooleanField(required=False, widget=forms.HiddenInput)

    def __init__(self, *args, bank, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["transcriber"].queryset = Transcriber.objects.filter(enabled=True).exclude(candidacies__bank=bank)


class CallFilterForm(forms.Form):
    tenant = forms.IntegerField(required=False)
    assistant = forms.IntegerField(required=False)
    date_from = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    has_flags = forms.BooleanField(required=False)
