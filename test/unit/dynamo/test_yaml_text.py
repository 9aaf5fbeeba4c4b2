"""render's YAML is read back by kubectl (sigs.k8s.io/yaml, YAML 1.1 booleans) as the same JSON."""

from __future__ import annotations

import pytest
import yaml
from dynamo_operator.internal.dynamo.render import yaml_text


@pytest.mark.parametrize("letter", ["y", "Y", "n", "N"])
def test_one_letter_booleans_of_yaml_1_1_are_written_quoted(letter: str) -> None:
    text = yaml_text.dump_all([{"env": [{"name": "NIXL_TELEMETRY_ENABLE", "value": letter}]}])
    assert f'value: "{letter}"' in text


@pytest.mark.parametrize("value", ["yes", "no", "on", "off", "true", "false", "null", "1", "0x1f"])
def test_strings_pyyaml_already_guards_stay_quoted(value: str) -> None:
    text = yaml_text.dump_all([{"value": value}])
    assert yaml.safe_load(text) == {"value": value}
    assert f"value: {value}\n" not in text


def test_ordinary_strings_and_key_order_are_written_as_safe_dump_writes_them() -> None:
    docs = [{"kind": "Deployment", "metadata": {"name": "n-frontend"}}, {"b": "nope", "a": ["x", "n1"]}]
    assert yaml_text.dump_all(docs) == yaml.safe_dump_all(
        docs, sort_keys=False, default_flow_style=False, width=1000
    )


def test_documents_round_trip_through_a_yaml_reader() -> None:
    docs = [{"data": {"flag": "n", "other": "Y", "list": ["y", "N"]}}]
    assert list(yaml.safe_load_all(yaml_text.dump_all(docs))) == docs
