"""Label values derived from user input always fit Kubernetes' 63-character limit."""

import pytest
from dynamo_operator.internal.dynamo.common import naming


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("ns-graph", id="short-unchanged"),
        pytest.param("a" * 63, id="exactly-63-unchanged"),
    ],
)
def test_label_value_keeps_values_that_fit(value: str) -> None:
    assert naming.label_value(value) == value


def test_label_value_shortens_long_values_stably_and_distinctly() -> None:
    long_a, long_b = "n" * 40 + "-" + "g" * 40, "n" * 40 + "-" + "g" * 39 + "h"
    short_a = naming.label_value(long_a)
    assert len(short_a) <= 63
    assert short_a == naming.label_value(long_a)
    assert short_a != naming.label_value(long_b)
    assert short_a[-1].isalnum()
