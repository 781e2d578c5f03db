"""Test-wide settings: property tests never time out on a slow machine, and CI runs them reproducibly."""
import os

import pytest
from hypothesis import settings

settings.register_profile("default", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "default")


@pytest.fixture()
def registry_copy(tmp_path):
    """A private copy of the registry (formulas/ and guidelines/) that a test may edit."""
    from tests.helpers import copy_registry

    return copy_registry(tmp_path)
