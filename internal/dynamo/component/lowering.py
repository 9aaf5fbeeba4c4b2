"""A DCD as the operator reads it (v1beta1, its storage version) lowered to the v1alpha1 form a
component's workload is built from. Pure.

The operator reads DCDs as stored, so its cache, its status writes and the graph's readers of its
components hold no converted copy. The pod builder (`pod/template.py` and the `component/` features)
still reads the v1alpha1 spec (`envs`, `resources`, `extraPodSpec`...), so the DCD is converted here,
once per generation: the reconciler generates only when the DCD's inputs changed (its remembered
sync, internal/apply/last_sync.py), where it used to convert each object at every spec change as it
arrived. The conversion is the webhook's own (api/conversion), lossless both ways.
"""

from __future__ import annotations

from typing import cast

from dynamo_operator.api.conversion import V1ALPHA1, ConversionError, convert
from dynamo_operator.internal.dynamo.common.errors import GenerationError
from dynamo_operator.internal.dynamo.common.inputs import AlphaComponentDeployment, ComponentDeployment


def lowered(dcd: ComponentDeployment | AlphaComponentDeployment) -> AlphaComponentDeployment:
    """`dcd` in v1alpha1: a copy when it is v1beta1, itself when it already is v1alpha1 (rendered
    offline). A v1beta1 DCD that v1alpha1 cannot hold (the API server accepted it: a gap in the
    conversion) is refused as a spec error, with the reason the conversion gives."""
    if dcd.get("apiVersion") == V1ALPHA1:
        return cast(AlphaComponentDeployment, dcd)
    try:
        return cast(AlphaComponentDeployment, convert(dcd, V1ALPHA1))
    except ConversionError as err:
        raise GenerationError("spec", f"cannot be read as v1alpha1: {err}") from err
