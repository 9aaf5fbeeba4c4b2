"""Kubeconfig users: which Authorization header each kind of user produces."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
from dynamo_operator.internal.client import config
from unit.client.kubeconfig_testlib import Plugin, write_kubeconfig


async def load(tmp_path: Path, user: dict[str, Any] | None) -> config.ClusterConfig:
    return await config.load_kubeconfig(
        write_kubeconfig(tmp_path / "kc", user, **{"insecure-skip-tls-verify": True})
    )


async def test_token_is_a_bearer_header(tmp_path: Path) -> None:
    cfg = await load(tmp_path, {"token": "abc"})
    assert await cfg.credentials.authorization() == "Bearer abc"
    assert await cfg.credentials.authorization(refresh=True) == "Bearer abc"


async def test_token_file_is_read_trimmed(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("first\n")
    cfg = await load(tmp_path, {"tokenFile": str(tmp_path / "token")})
    assert await cfg.credentials.authorization() == "Bearer first"


async def test_token_file_is_re_read_on_refresh(tmp_path: Path) -> None:
    """A rotated tokenFile is picked up when the client asks for a refresh (after a 401)."""
    token = tmp_path / "token"
    token.write_text("first")
    cfg = await load(tmp_path, {"tokenFile": str(token)})
    token.write_text("second")
    assert await cfg.credentials.authorization() == "Bearer first"  # cached within the minute
    assert await cfg.credentials.authorization(refresh=True) == "Bearer second"


async def test_token_file_is_re_read_after_a_minute(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("first")
    cfg = await load(tmp_path, {"tokenFile": str(token)})
    token.write_text("second")
    assert isinstance(cfg.credentials, config.RefreshingCredentials)
    cfg.credentials.loaded_at -= config.TOKEN_REFRESH_SECONDS  # as if a minute had passed
    assert await cfg.credentials.authorization() == "Bearer second"


async def test_token_file_wins_over_token(tmp_path: Path) -> None:
    """As in client-go: with both set, the file is read (and kept re-read)."""
    (tmp_path / "token").write_text("from-file")
    cfg = await load(tmp_path, {"token": "inline", "tokenFile": str(tmp_path / "token")})
    assert await cfg.credentials.authorization() == "Bearer from-file"


async def test_basic_auth_is_a_basic_header(tmp_path: Path) -> None:
    cfg = await load(tmp_path, {"username": "admin", "password": "s3cret:x"})
    expected = "Basic " + base64.b64encode(b"admin:s3cret:x").decode()
    assert await cfg.credentials.authorization() == expected


async def test_context_without_user_is_anonymous(tmp_path: Path) -> None:
    cfg = await load(tmp_path, None)
    assert await cfg.credentials.authorization() is None


async def test_user_with_only_client_certificates_sends_no_header(tmp_path: Path) -> None:
    cfg = await load(tmp_path, {})
    assert await cfg.credentials.authorization() is None


async def test_token_wins_over_exec_plugin_which_is_not_run(tmp_path: Path, make_plugin: Any) -> None:
    plugin: Plugin = make_plugin({"token": "from-plugin"})
    cfg = await load(tmp_path, {"token": "inline", "exec": plugin.spec()})
    assert await cfg.credentials.authorization(refresh=True) == "Bearer inline"
    assert plugin.runs() == []


@pytest.mark.parametrize(
    ("user", "names"),
    [
        pytest.param(
            {"auth-provider": {"name": "gcp"}}, "auth-provider 'gcp' is not supported; use an exec", id="gcp"
        ),
        pytest.param(
            {"auth-provider": {"name": "oidc", "config": {"id-token": "x"}}},
            "auth-provider 'oidc' is not supported; use an exec",
            id="oidc",
        ),
        pytest.param(
            {"token": "t", "username": "u", "password": "p"}, "only one is allowed", id="token-and-basic"
        ),
        pytest.param(
            {"tokenFile": "/nonexistent/token"}, "/nonexistent/token cannot be read", id="token-file-missing"
        ),
    ],
)
async def test_unusable_users_are_clear_one_line_errors(
    tmp_path: Path, user: dict[str, Any], names: str
) -> None:
    with pytest.raises(config.ConfigError) as err:
        await load(tmp_path, user)
    assert names in str(err.value)
    assert "\n" not in str(err.value)


async def test_empty_token_file_is_an_error(tmp_path: Path) -> None:
    (tmp_path / "token").write_text("  \n")
    with pytest.raises(config.ConfigError, match="is empty"):
        await load(tmp_path, {"tokenFile": str(tmp_path / "token")})
