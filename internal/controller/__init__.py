"""Controllers: Result semantics, the worker loop, the builder, predicates and handlers."""

from dynamo_operator.internal.controller.builder import Builder, Built, InformerOptions
from dynamo_operator.internal.controller.controller import Controller
from dynamo_operator.internal.controller.predicates import (
    Funcs,
    Predicate,
    all_of,
    annotation_changed,
    any_of,
    generation_changed,
    label_changed,
    label_selector,
    negate,
    resource_version_changed,
)
from dynamo_operator.internal.controller.reconciler import Reconciler
from dynamo_operator.internal.controller.result import Result, TerminalError
from dynamo_operator.internal.controller.settle import Outcome, settle

__all__ = [
    "Builder",
    "Built",
    "Controller",
    "Funcs",
    "InformerOptions",
    "Outcome",
    "Predicate",
    "Reconciler",
    "Result",
    "TerminalError",
    "all_of",
    "annotation_changed",
    "any_of",
    "generation_changed",
    "label_changed",
    "label_selector",
    "negate",
    "resource_version_changed",
    "settle",
]
