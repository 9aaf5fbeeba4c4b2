"""API group, version, kinds and plurals of the five Dynamo custom resources."""

from __future__ import annotations

from typing import Final

GROUP: Final = "nvidia.com"
VERSION: Final = "v1alpha1"
API_VERSION: Final = f"{GROUP}/{VERSION}"

DYNAMO_GRAPH_DEPLOYMENT_KIND: Final = "DynamoGraphDeployment"
DYNAMO_GRAPH_DEPLOYMENT_PLURAL: Final = "dynamographdeployments"
DYNAMO_COMPONENT_DEPLOYMENT_KIND: Final = "DynamoComponentDeployment"
DYNAMO_COMPONENT_DEPLOYMENT_PLURAL: Final = "dynamocomponentdeployments"
DYNAMO_GRAPH_DEPLOYMENT_REQUEST_KIND: Final = "DynamoGraphDeploymentRequest"
DYNAMO_GRAPH_DEPLOYMENT_REQUEST_PLURAL: Final = "dynamographdeploymentrequests"
DYNAMO_GRAPH_DEPLOYMENT_SCALING_ADAPTER_KIND: Final = "DynamoGraphDeploymentScalingAdapter"
DYNAMO_GRAPH_DEPLOYMENT_SCALING_ADAPTER_PLURAL: Final = "dynamographdeploymentscalingadapters"
DYNAMO_MODEL_KIND: Final = "DynamoModel"
DYNAMO_MODEL_PLURAL: Final = "dynamomodels"

# Generated child names must fit the 63-character DNS-label limit (Service names, label values).
# A DGD service becomes the DCD/Deployment/Service `<dgd>-<lower(svc)>-<8 hex>` (10 extra characters
# beyond the two names), so len(dgd) + len(svc) may reach 53. Multinode services additionally name
# per-replica LeaderWorkerSets and their StatefulSets/pods (`<dcd>-<i>-<j>`), so they keep 8 more spare.
MAX_NAME_CHARS: Final = 63
MAX_GRAPH_AND_SERVICE_NAME_CHARS: Final = 53
MAX_GRAPH_AND_MULTINODE_SERVICE_NAME_CHARS: Final = 45
MAX_COMPONENT_DEPLOYMENT_NAME_CHARS: Final = MAX_NAME_CHARS
MAX_MULTINODE_COMPONENT_DEPLOYMENT_NAME_CHARS: Final = 55
MAX_SERVICES: Final = 25
MAX_PVCS: Final = 100
# Bounds the cost of the CEL rule that checks every mount names a declared PVC.
MAX_VOLUME_MOUNTS: Final = 32
# The message of the graph's rule that it has a service, which generation repeats for a graph stored
# before the rule existed.
SERVICES_REQUIRED: Final = "at least one service is required"
