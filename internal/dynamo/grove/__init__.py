"""The Grove pathway: a graph's PodCliqueSet and Services, and its readiness read from Grove's objects."""
