"""The local control plane's opt-in add-ons (the real LeaderWorkerSet controller; Grove's CRDs, and
Grove's operator when the user names its binary): which a session asks for, how they are configured
(everything on loopback, leader election off), which webhooks are registered, and how their build is
keyed. The add-ons themselves run in
test/integration/controllers_multinode."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import cluster_addons
import pytest
from cluster_addons import GROVE, LWS
from localcluster import AddonNotBuiltError, BinariesMissingError, LocalCluster
from testsupport.cluster import ADDONS_ENV, Cluster, session_addons

HACK = Path(__file__).resolve().parents[3] / "hack"
PORTS = {"webhook": 41001, "health": 41002, "metrics": 41003}
NO_GO_PATH = "/usr/bin:/bin"


# --- which add-ons ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("lws,grove", ("lws", "grove")),
        ("grove, lws", ("lws", "grove")),
        (["grove"], ("grove",)),
        ("lws,lws", ("lws",)),
        ("", ()),
        (None, ()),
    ],
)
def test_addon_names_are_parsed_in_one_order(given: Any, expected: tuple[str, ...]) -> None:
    assert cluster_addons.parse(given) == expected


def test_an_unknown_addon_is_refused_with_the_known_ones() -> None:
    with pytest.raises(ValueError, match=r"volcano.*known: lws, grove"):
        cluster_addons.parse("lws,volcano")


class Item:
    """What session_addons reads of a collected test."""

    def __init__(self, *marks: tuple[str, ...], cluster: bool = True) -> None:
        self.fixturenames = ["cluster", "ns"] if cluster else ["tmp_path"]
        self._marks = [pytest.mark.addons(*m).mark for m in marks]

    def iter_markers(self, name: str) -> list[Any]:
        return [m for m in self._marks if m.name == name]


def test_a_session_of_only_marked_cluster_tests_gets_the_union_of_their_addons(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(ADDONS_ENV, raising=False)
    items = [Item(("grove",)), Item(("lws",)), Item(cluster=False)]
    assert session_addons(items) == ("lws", "grove")  # type: ignore[arg-type]


def test_a_session_with_an_unmarked_cluster_test_gets_no_addon(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ADDONS_ENV, raising=False)
    assert session_addons([Item(("lws",)), Item()]) == ()  # type: ignore[arg-type]


def test_the_environment_decides_when_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ADDONS_ENV, "grove")
    assert session_addons([Item()]) == ("grove",)  # type: ignore[arg-type]
    monkeypatch.setenv(ADDONS_ENV, "")
    assert session_addons([Item(("lws",))]) == ()  # type: ignore[arg-type]


def test_a_cluster_without_an_addon_says_why_and_how_to_get_it() -> None:
    bare = Cluster("kc", "https://127.0.0.1:1", None)
    assert "make multinode" in (bare.why_not("lws") or "")
    unbuilt = Cluster(
        "kc", "https://127.0.0.1:1", None, ("lws",), (("grove", "not built: make cluster-bins"),)
    )
    assert unbuilt.why_not("lws") is None
    assert unbuilt.why_not("grove") == "not built: make cluster-bins"


# --- configuration -----------------------------------------------------------------------------------


@pytest.mark.parametrize("addon", [LWS, GROVE], ids=lambda a: a.name)
def test_every_server_of_an_addon_is_on_loopback_and_leader_election_is_off(
    addon: Any, tmp_path: Path
) -> None:
    config = json.loads(cluster_addons.write_config(addon, tmp_path, PORTS, tmp_path / "certs").read_text())
    argv = cluster_addons.argv(addon, "/bin/x", tmp_path / "c.json", PORTS)
    text = json.dumps(config) + " ".join(argv)
    if addon is LWS:
        assert config["webhook"] == {"host": "127.0.0.1", "port": 41001, "certDir": str(tmp_path / "certs")}
        assert config["internalCertManagement"] == {"enable": False}
        assert config["leaderElection"] == {"leaderElect": False}
        assert "--leader-elect=false" in argv and "--metrics-bind-address=0" in argv
        assert "--health-probe-bind-address=127.0.0.1:41002" in argv
    else:
        servers = config["server"]
        assert {
            s["bindAddress"] for s in (servers["webhooks"], servers["healthProbes"], servers["metrics"])
        } == {"127.0.0.1"}
        assert servers["webhooks"]["certProvisionMode"] == "manual"
        assert config["leaderElection"] == {"enabled": False}
    assert "0.0.0.0" not in text and ":8443" not in text


def test_the_addons_talk_to_the_cluster_through_its_kubeconfig() -> None:
    assert cluster_addons.environment(LWS, "/k") == {"KUBECONFIG": "/k"}
    assert cluster_addons.environment(GROVE, "/k")["KUBECONFIG"] == "/k"


def test_lws_registers_only_its_pod_webhooks_and_only_for_lws_pods() -> None:
    """Its LeaderWorkerSet webhooks stay off: the operator's LWS objects must be complete without them."""
    configs = cluster_addons.webhook_configurations(LWS, 41001, "Q0E=")
    hooks = [h for c in configs for h in c["webhooks"]]
    assert {h["clientConfig"]["url"] for h in hooks} == {
        "https://127.0.0.1:41001/mutate--v1-pod",
        "https://127.0.0.1:41001/validate--v1-pod",
    }
    for hook in hooks:
        assert [r["resources"] for r in hook["rules"]] == [["pods"]]
        assert hook["objectSelector"]["matchExpressions"] == [
            {"key": "leaderworkerset.sigs.k8s.io/name", "operator": "Exists"}
        ]
        assert hook["clientConfig"]["caBundle"] == "Q0E="


def test_grove_registers_its_podcliqueset_webhooks_on_loopback() -> None:
    configs = cluster_addons.webhook_configurations(GROVE, 41001, "Q0E=")
    assert [c["kind"] for c in configs] == ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]
    urls = [h["clientConfig"]["url"] for c in configs for h in c["webhooks"]]
    assert urls == [
        "https://127.0.0.1:41001/webhooks/default-podcliqueset",
        "https://127.0.0.1:41001/webhooks/validate-podcliqueset",
    ]


# --- build and cache ---------------------------------------------------------------------------------


def versions(var: str, cache: Path) -> str:
    env = {"PATH": NO_GO_PATH, "HOME": str(cache.parent), "DYNAMO_CLUSTER_CACHE": str(cache)}
    script = f'. "{HACK}/cluster-versions.sh" && printf %s "${var}"'
    return subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True, check=True).stdout


def test_each_addon_is_keyed_by_its_own_version_beside_the_control_plane(tmp_path: Path) -> None:
    cache = tmp_path / "cluster-cache"
    lws_dir, grove_dir = versions("LWS_ADDON_DIR", cache), versions("GROVE_ADDON_DIR", cache)
    assert lws_dir == f"{cache}/addons/lws-{versions('LWS_VERSION', cache)}"
    assert grove_dir == f"{cache}/addons/grove-crds-{versions('GROVE_VERSION', cache)}"
    assert versions("K8S_VERSION", cache) not in lws_dir + grove_dir


def run_build(cache: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {"PATH": NO_GO_PATH, "HOME": str(cache.parent), "DYNAMO_CLUSTER_CACHE": str(cache), **env}
    return subprocess.run(
        [str(HACK / "build-cluster-addons.sh"), *args],
        env=full,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def fake_addon(directory: Path, binary: str | None) -> None:
    directory.mkdir(parents=True)
    if binary:
        (directory / "bin").mkdir()
        (directory / "bin" / binary).write_text("#!/bin/sh\n")
        (directory / "bin" / binary).chmod(0o755)
    (directory / "crds").mkdir()
    (directory / "crds" / "x.yaml").write_text("kind: CustomResourceDefinition\n")


def test_built_addons_need_no_go(tmp_path: Path) -> None:
    cache = tmp_path / "cluster-cache"
    fake_addon(Path(versions("LWS_ADDON_DIR", cache)), "lws-controller")
    grove = Path(versions("GROVE_ADDON_DIR", cache))
    fake_addon(grove, None)
    standin = HACK / "tools" / "grove" / "podgang-standin-crd.yaml"
    (grove / "crds" / standin.name).write_text(standin.read_text())
    done = run_build(cache)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == [
        f"lws {versions('LWS_ADDON_DIR', cache)}",
        f"grove {versions('GROVE_ADDON_DIR', cache)}",
    ]
    assert "building" not in done.stderr


def test_grove_is_prepared_from_its_api_module_alone_with_a_labelled_podgang_stand_in() -> None:
    """No Grove source is exported or built: the step downloads Grove's API module (pinned by
    hack/tools/grove) and copies its CRDs; PodGang's CRD is the repository's stand-in, saying so."""
    script = (HACK / "build-cluster-addons.sh").read_text()
    assert "go mod download github.com/ai-dynamo/grove/operator/api" in script
    assert "go build" not in script.split("build_grove() {", 1)[1].split("\n}\n", 1)[0]
    pin = (HACK / "tools" / "grove" / "go.mod").read_text()
    assert "require github.com/ai-dynamo/grove/operator/api v0.1.0-alpha.6" in pin
    standin = (HACK / "tools" / "grove" / "podgang-standin-crd.yaml").read_text()
    assert "STAND-IN" in standin and 'grove.dynamo.test/stand-in: "true"' in standin


def test_grove_runs_its_operator_only_when_the_user_names_the_binary(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_addon(tmp_path / "grove", None)
    monkeypatch.delenv("GROVE_OPERATOR", raising=False)
    assert cluster_addons.built(GROVE, tmp_path / "grove")[0] is None
    exe = tmp_path / "grove-operator"
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    monkeypatch.setenv("GROVE_OPERATOR", str(exe))
    assert cluster_addons.built(GROVE, tmp_path / "grove")[0] == exe
    monkeypatch.setenv("GROVE_OPERATOR", str(tmp_path / "missing"))
    with pytest.raises(cluster_addons.AddonMissingError, match="GROVE_OPERATOR="):
        cluster_addons.built(GROVE, tmp_path / "grove")


def test_an_unknown_addon_is_not_built(tmp_path: Path) -> None:
    done = run_build(tmp_path / "cluster-cache", "volcano")
    assert done.returncode == 2 and "known: lws grove" in done.stderr


def test_a_cluster_asked_for_an_unbuilt_addon_says_how_to_build_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DYNAMO_CLUSTER_ADDON_DIR_LWS", str(tmp_path / "nothing"))
    with pytest.raises(AddonNotBuiltError, match="make cluster-bins") as raised:
        LocalCluster("t", state_dir=tmp_path / "state", addons=("lws",)).addon_dirs()
    assert isinstance(raised.value, BinariesMissingError)
    assert not (tmp_path / "state").exists()
