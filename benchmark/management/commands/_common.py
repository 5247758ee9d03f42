"""Helpers the benchmark commands share."""

from django.core.management.base import CommandError

from benchmark.entity import actions
from benchmark.models import Dataset

# Every benchmark command's help ends with it: the dashboard lets only staff users start runs, for the same reason.
OPERATOR_ONLY = (
    "For the operator: benchmark datasets and runs belong to no organization, and a run bills the operator's "
    "vendor keys. Organization admins read the results in the dashboard."
)


def on_off(value: str) -> bool:
    value = value.strip().lower()
    if value in ("on", "true", "yes", "1"):
        return True
    if value in ("off", "false", "no", "0"):
        return False
    raise ValueError(f"expected on or off, not {value!r}")


on_off.__name__ = "on/off"


def get_dataset(name: str, version: str | None = None, revision: str | None = None) -> Dataset:
    try:
        return actions.dataset_named(name, version, revision)
    except Dataset.DoesNotExist as exc:
        raise CommandError(str(exc)) from None


def add_dataset_arguments(parser) -> None:
    parser.add_argument(
        "--dataset", required=True, help="Dataset name, as import_entity_benchmark printed it."
    )
    parser.add_argument(
        "--dataset-version", dest="dataset_version", help="Version, when several are imported."
    )
    parser.add_argument("--revision", help="Revision, when several are imported.")
