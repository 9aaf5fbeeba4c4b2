"""The DynamoGraphDeployment reconciler and the parts only it uses: the worker rollout, the Grove
pathway and the namespace's MPI SSH Secret."""

from dynamo_operator.controllers.dynamographdeployment.reconciler import DynamoGraphDeploymentReconciler

__all__ = ["DynamoGraphDeploymentReconciler"]
