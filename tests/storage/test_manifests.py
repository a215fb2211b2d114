"""Manifest rules that need no model on disk."""

import pytest

from nbspark.errors import InputError
from nbspark.settings.config import load_config
from nbspark.storage.manifests import check_update


def test_an_update_compares_settings_as_the_manifest_holds_them():
    """Confusion sets given as a string are tuples in the config and lists in the manifest's JSON:
    the same sets, so the update is allowed (it was refused, naming two equal values)."""
    cfg = load_config(None, {"confusion_sets": "affect,effect;their,there"})
    old = {"config": {"confusion_sets": [["affect", "effect"], ["their", "there"]], "width": 5}}
    check_update(old, cfg, ("confusion_sets", "width"))
    other = {"config": {"confusion_sets": [["affect", "effect"]], "width": 5}}
    with pytest.raises(InputError, match="confusion_sets"):
        check_update(other, cfg, ("confusion_sets",))
