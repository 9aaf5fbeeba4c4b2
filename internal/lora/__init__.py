"""HTTP client of the LoRA API that Dynamo worker pods serve."""
