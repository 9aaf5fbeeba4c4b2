"""API group and version of the nvidia.com/v1beta1 kinds (kinds and plurals are v1alpha1's)."""

from __future__ import annotations

from typing import Final

from ..v1alpha1.groupversion import GROUP

VERSION: Final = "v1beta1"
API_VERSION: Final = f"{GROUP}/{VERSION}"
MAX_COMPONENTS: Final = 25
