"""The committed API reference (docs/reference) is what the pydantic models generate."""

from __future__ import annotations

from pathlib import Path

import gen_api_reference

REPO = Path(__file__).resolve().parents[3]


def test_committed_api_reference_matches_the_models() -> None:
    """`make manifests` was run after the last model change (else: run it and commit docs/reference)."""
    stale = [
        str(path.relative_to(REPO))
        for path, text in gen_api_reference.generated().items()
        if not path.exists() or path.read_text() != text
    ]
    assert stale == [], "stale API reference, run `make manifests`"


def test_every_kind_of_each_version_has_a_section() -> None:
    for version in gen_api_reference.VERSIONS:
        page = gen_api_reference.render(version)
        for kind in version.kinds:
            assert f"\n#### {kind.__name__}\n" in page, (version.name, kind.__name__)


def test_a_type_lists_the_types_it_appears_in() -> None:
    (v1alpha1,) = [v for v in gen_api_reference.VERSIONS if v.name == "v1alpha1"]
    docs = gen_api_reference.collect(v1alpha1.kinds)
    assert docs["DynamoGraphDeploymentSpec"].appears_in == {"DynamoGraphDeployment"}
    assert docs["DynamoGraphDeployment"].appears_in == set()
