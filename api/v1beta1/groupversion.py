"""API group and version of the nvidia.com/v1beta1 kinds (kinds and plurals are v1alpha1's)."""

from __future__ import annotations

from typing import Final

from ..v1alpha1.groupversion import GROUP

VERSION: Final = "v1beta1"
API_VERSION: Final = f"{GROUP}/{VERSION}"
MAX_COMPONENTS: Final = 25

# The kinds stored as v1beta1: every kind of this version. The DGDR's controller keeps its lifecycle
# in fields v1beta1 holds (internal/dynamo/dgdr/stored.py), so its status writes lose nothing.
STORED: Final[frozenset[str]] = frozenset(
    {
        "DynamoComponentDeployment",
        "DynamoGraphDeployment",
        "DynamoGraphDeploymentRequest",
        "DynamoGraphDeploymentScalingAdapter",
    }
)
