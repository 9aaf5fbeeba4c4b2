"""Pure logic of DynamoGraphDeploymentScalingAdapters: what to write into the graph, what to report."""
