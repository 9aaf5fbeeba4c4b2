"""Kubeconfig files: which files are read, how they merge, which context is used, relative paths."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from dynamo_operator.internal.client import config
from unit.client.kubeconfig_testlib import kubeconfig_doc, write


def doc(server: str, **kwargs: Any) -> dict[str, Any]:
    return kubeconfig_doc(cluster={"server": server}, **kwargs)


def kubeconfig_list(*paths: str) -> str:
    return os.pathsep.join(paths)


async def test_first_file_defining_a_cluster_name_wins(tmp_path: Path) -> None:
    first = write(tmp_path / "a", doc("https://127.0.0.1:1111"))
    second = write(tmp_path / "b", doc("https://127.0.0.1:2222"))
    cfg = await config.load_kubeconfig(kubeconfig_list(first, second))
    assert cfg.server == "https://127.0.0.1:1111"


async def test_entries_merge_whole_never_field_by_field(tmp_path: Path) -> None:
    """The second file's user adds no fields to the first file's user of the same name."""
    first = write(tmp_path / "a", doc("https://127.0.0.1:1111", user={"token": "one"}))
    second = write(tmp_path / "b", doc("https://127.0.0.1:1111", user={"username": "x", "password": "y"}))
    cfg = await config.load_kubeconfig(kubeconfig_list(first, second))
    assert await cfg.credentials.authorization() == "Bearer one"


async def test_names_defined_only_in_a_later_file_are_used(tmp_path: Path) -> None:
    first = write(tmp_path / "a", doc("https://127.0.0.1:1111", current="other"))
    second = write(
        tmp_path / "b",
        doc("https://127.0.0.1:2222", cluster_name="c2", context_name="other", current=None),
    )
    cfg = await config.load_kubeconfig(kubeconfig_list(first, second))
    assert cfg.server == "https://127.0.0.1:2222"


async def test_current_context_comes_from_the_first_file_that_sets_it(tmp_path: Path) -> None:
    unset = write(tmp_path / "a", doc("https://127.0.0.1:1111", current=None))
    sets_b = write(
        tmp_path / "b", doc("https://127.0.0.1:2222", cluster_name="cb", context_name="b", current="b")
    )
    sets_c = write(
        tmp_path / "c", doc("https://127.0.0.1:3333", cluster_name="cc", context_name="c", current="c")
    )
    cfg = await config.load_kubeconfig(kubeconfig_list(unset, sets_b, sets_c))
    assert cfg.server == "https://127.0.0.1:2222"


async def test_context_argument_overrides_current_context(tmp_path: Path) -> None:
    base = write(tmp_path / "a", doc("https://127.0.0.1:1111"))
    other = write(
        tmp_path / "b", doc("https://127.0.0.1:2222", cluster_name="c2", context_name="ctx2", current=None)
    )
    cfg = await config.load_kubeconfig(kubeconfig_list(base, other), context="ctx2")
    assert cfg.server == "https://127.0.0.1:2222"


async def test_missing_files_in_a_list_are_skipped(tmp_path: Path) -> None:
    present = write(tmp_path / "a", doc("https://127.0.0.1:1111"))
    cfg = await config.load_kubeconfig(kubeconfig_list(str(tmp_path / "absent"), present))
    assert cfg.server == "https://127.0.0.1:1111"


async def test_kubeconfig_env_lists_the_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, no_kube_env: Path
) -> None:
    first = write(tmp_path / "a", doc("https://127.0.0.1:1111", current=None))
    second = write(tmp_path / "b", doc("https://127.0.0.1:2222", cluster_name="c2", context_name="ctx"))
    monkeypatch.setenv("KUBECONFIG", kubeconfig_list(first, second))
    cfg = await config.load_kubeconfig()
    assert cfg.server == "https://127.0.0.1:1111"  # cluster "c" from a; current-context from b


async def test_default_is_home_kube_config(no_kube_env: Path) -> None:
    write(no_kube_env / ".kube" / "config", doc("https://127.0.0.1:4444"))
    cfg = await config.load_kubeconfig()
    assert cfg.server == "https://127.0.0.1:4444"


async def test_server_trailing_slash_is_dropped_and_path_prefix_kept(tmp_path: Path) -> None:
    cfg = await config.load_kubeconfig(write(tmp_path / "kc", doc("https://127.0.0.1:6443/prefix/")))
    assert cfg.server == "https://127.0.0.1:6443/prefix"


@pytest.mark.parametrize(
    ("cluster", "server"),
    [
        pytest.param({"server": "127.0.0.1:8080"}, "http://127.0.0.1:8080", id="bare-host-no-tls-is-http"),
        pytest.param(
            {"server": "127.0.0.1:6443", "insecure-skip-tls-verify": True},
            "https://127.0.0.1:6443",
            id="bare-host-with-tls-setting-is-https",
        ),
    ],
)
async def test_server_without_scheme_follows_client_go(
    tmp_path: Path, cluster: dict[str, Any], server: str
) -> None:
    cfg = await config.load_kubeconfig(write(tmp_path / "kc", kubeconfig_doc(cluster=cluster)))
    assert cfg.server == server


async def test_relative_paths_resolve_against_the_defining_file(tmp_path: Path) -> None:
    """tokenFile "token" written in b/kc means b/token, though b/kc is read second and cwd is elsewhere."""
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "token").write_text("from-b")
    first = write(tmp_path / "a" / "kc", doc("https://127.0.0.1:1111"))
    second = write(
        tmp_path / "b" / "kc",
        doc("https://127.0.0.1:1111", user={"tokenFile": "token"}, user_name="u2", context_name="ctx2"),
    )
    cfg = await config.load_kubeconfig(kubeconfig_list(first, second), context="ctx2")
    assert await cfg.credentials.authorization() == "Bearer from-b"


async def test_relative_certificate_authority_resolves_against_its_file(
    tmp_path: Path, certs: dict[str, Any]
) -> None:
    (tmp_path / "k").mkdir()
    (tmp_path / "k" / "ca.crt").write_bytes(certs["server"].cert_pem)
    path = write(
        tmp_path / "k" / "kc",
        kubeconfig_doc(cluster={"server": "https://127.0.0.1:1", "certificate-authority": "ca.crt"}),
    )
    cfg = await config.load_kubeconfig(path)
    assert isinstance(cfg.ssl_context, config.ssl.SSLContext)
    assert [c["subject"] for c in cfg.ssl_context.get_ca_certs()] == [((("commonName", "server"),),)]


async def test_an_empty_file_contributes_nothing(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.write_text("")
    present = write(tmp_path / "a", doc("https://127.0.0.1:1111"))
    cfg = await config.load_kubeconfig(kubeconfig_list(str(empty), present))
    assert cfg.server == "https://127.0.0.1:1111"


def broken(tmp_path: Path, case: str) -> tuple[str, str | None]:
    """(path argument, context argument) for one way of being unusable."""
    good = doc("https://127.0.0.1:1111", user={"token": "t"})
    match case:
        case "missing-file":
            return str(tmp_path / "absent"), None
        case "all-listed-files-missing":
            return kubeconfig_list(str(tmp_path / "x"), str(tmp_path / "y")), None
        case "unreadable-file":
            (tmp_path / "dir").mkdir()
            return str(tmp_path / "dir"), None
        case "invalid-yaml":
            (tmp_path / "kc").write_text("clusters: [\n  - name: c\n")
            return str(tmp_path / "kc"), None
        case "not-a-mapping":
            (tmp_path / "kc").write_text("- a\n- b\n")
            return str(tmp_path / "kc"), None
        case "no-current-context":
            return write(tmp_path / "kc", doc("https://127.0.0.1:1111", current=None)), None
        case "unknown-context":
            return write(tmp_path / "kc", good), "nope"
        case "context-names-missing-cluster":
            bad = {**good, "clusters": []}
            return write(tmp_path / "kc", bad), None
        case "context-names-missing-user":
            bad = {**good, "users": []}
            return write(tmp_path / "kc", bad), None
        case "cluster-without-server":
            return write(tmp_path / "kc", kubeconfig_doc(cluster={"insecure-skip-tls-verify": True})), None
        case "entry-without-name":
            bad = {**good, "users": [{"user": {"token": "t"}}]}
            return write(tmp_path / "kc", bad), None
    raise AssertionError(case)


@pytest.mark.parametrize(
    ("case", "names"),
    [
        pytest.param("missing-file", "absent", id="missing-file"),
        pytest.param("all-listed-files-missing", "none of the kubeconfig files", id="all-listed-missing"),
        pytest.param("unreadable-file", "cannot be read", id="unreadable"),
        pytest.param("invalid-yaml", "not valid YAML", id="invalid-yaml"),
        pytest.param("not-a-mapping", "not a mapping", id="not-a-mapping"),
        pytest.param("no-current-context", "no current-context", id="no-current-context"),
        pytest.param("unknown-context", "context 'nope' is not defined", id="unknown-context"),
        pytest.param("context-names-missing-cluster", "cluster 'c' of context 'ctx'", id="missing-cluster"),
        pytest.param("context-names-missing-user", "user 'u' of context 'ctx'", id="missing-user"),
        pytest.param("cluster-without-server", "has no server", id="no-server"),
        pytest.param("entry-without-name", "has no name", id="entry-without-name"),
    ],
)
async def test_unusable_kubeconfig_is_a_clear_one_line_error(tmp_path: Path, case: str, names: str) -> None:
    path, context = broken(tmp_path, case)
    with pytest.raises(config.ConfigError) as err:
        await config.load_kubeconfig(path, context=context)
    assert names in str(err.value)
    assert "\n" not in str(err.value)
