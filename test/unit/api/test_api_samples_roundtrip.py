"""Every sample in config/samples survives parse -> dump unchanged.

`model_dump(exclude_unset=True)` gives back exactly what was written. The full dump (`to_dict()`, the
form the operator writes) may add only the documented defaults: fields whose model default is not
None (e.g. `volumeMounts[].useAsCompilationCache: false`, `restart.strategy.type: Sequential`), i.e.
what the API server's CRD defaulting adds as well.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from dynamo_operator.api.v1alpha1 import KINDS, ApiModel

SAMPLES = Path(__file__).resolve().parents[3] / "config" / "samples"
MODELS: dict[str, type[ApiModel]] = {str(kind.model_fields["kind"].default): kind for kind in KINDS}


def _sample_files() -> list[Path]:
    return sorted(p for p in SAMPLES.glob("*.yaml") if p.name != "kustomization.yaml")


def _documents() -> list[Any]:
    docs = []
    for path in _sample_files():
        for index, doc in enumerate(yaml.safe_load_all(path.read_text())):
            docs.append(pytest.param(doc, id=f"{path.stem}[{index}]"))
    return docs


def test_samples_exist_for_every_kind_but_the_adapter_and_component() -> None:
    """The adapter and the component deployment are made by the operator; every other kind has a sample."""
    kinds = {doc.values[0]["kind"] for doc in _documents()}
    assert kinds == {"DynamoGraphDeployment", "DynamoGraphDeploymentRequest", "DynamoModel"}


def test_kustomization_lists_every_sample() -> None:
    """`kubectl apply -k config/samples` applies all of them."""
    listed = yaml.safe_load((SAMPLES / "kustomization.yaml").read_text())["resources"]
    assert sorted(listed) == [p.name for p in _sample_files()]


@pytest.mark.parametrize("doc", _documents())
def test_sample_round_trips_exactly_when_dumping_set_fields(doc: dict[str, Any]) -> None:
    """What the user wrote is what the model writes back."""
    model = MODELS[doc["kind"]].model_validate(doc)
    assert model.model_dump(by_alias=True, exclude_unset=True, mode="json") == doc


@pytest.mark.parametrize("doc", _documents())
def test_sample_full_dump_adds_only_defaults(doc: dict[str, Any]) -> None:
    """The full dump equals the sample plus default-valued fields, nothing else changes."""
    model = MODELS[doc["kind"]].model_validate(doc)
    added = _added(doc, model.to_dict(), model)
    for path, value in added:
        assert value is not None, path
    assert MODELS[doc["kind"]].model_validate(model.to_dict()) == model


def _added(written: Any, dumped: Any, model: Any, path: str = "") -> list[tuple[str, Any]]:
    """Keys present in the dump but not in the sample, checked to be the model's default values."""
    if isinstance(written, dict) and isinstance(dumped, dict):
        extra: list[tuple[str, Any]] = []
        fields = {}
        if isinstance(model, ApiModel):
            fields = {(info.alias or name): (name, info) for name, info in type(model).model_fields.items()}
        for key, value in dumped.items():
            if key in fields:
                sub_model = getattr(model, fields[key][0])
            else:
                sub_model = model.get(key) if isinstance(model, dict) else None
            if key not in written:
                _, info = fields[key]
                default = info.default
                expected = default.value if hasattr(default, "value") else default
                assert value == expected, f"{path}.{key}: {value!r} is not the default {expected!r}"
                extra.append((f"{path}.{key}", value))
            else:
                extra += _added(written[key], value, sub_model, f"{path}.{key}")
        assert set(written) <= set(dumped), f"{path}: lost {set(written) - set(dumped)}"
        return extra
    if isinstance(written, list) and isinstance(dumped, list):
        assert len(written) == len(dumped), path
        models = model if isinstance(model, list) else [None] * len(written)
        return [
            x
            for i, (w, d) in enumerate(zip(written, dumped, strict=True))
            for x in _added(w, d, models[i], f"{path}[{i}]")
        ]
    assert written == dumped, path
    return []
