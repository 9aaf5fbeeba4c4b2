"""Pure logic of DynamoModels: endpoints from EndpointSlices, the LoRA HTTP protocol, status."""
