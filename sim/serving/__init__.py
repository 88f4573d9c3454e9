"""The serving layer: many requests on one GPU or several (traces, batching, the scheduler, the KV cache's layout,
latency targets, a real run replayed), built on the physics layer alone."""
