"""The parts of the OAuth sign-in that are Toolgate's: the token file and the loopback redirect."""

from __future__ import annotations

import asyncio
import os
import stat
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason='needs the mcp SDK: pip install "toolgate[mcp]"')

from mcp.client.auth import OAuthFlowError  # noqa: E402
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken  # noqa: E402

from toolgate.mcp.oauth import FileTokenStorage, LoopbackCallback, token_path  # noqa: E402


async def test_tokens_are_kept_for_the_user_only_and_keep_their_expiry(tmp_path: Path) -> None:
    path = token_path("tracker", "https://mcp.example.com/mcp")
    assert path.parent == Path(os.environ["XDG_STATE_HOME"]) / "toolgate" / "mcp-oauth"
    assert token_path("tracker", "https://other.example.com/mcp") != path
    storage = FileTokenStorage(path)
    assert await storage.get_tokens() is None and await storage.get_client_info() is None

    await storage.set_tokens(OAuthToken(access_token="a1", refresh_token="r1", expires_in=3600))
    await storage.set_client_info(
        OAuthClientInformationFull(client_id="c1", redirect_uris=["http://127.0.0.1:8765/callback"])
    )
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no temporary file left

    again = FileTokenStorage(path)  # as the next run reads it
    tokens = await again.get_tokens()
    assert tokens is not None and tokens.access_token == "a1" and tokens.refresh_token == "r1"
    assert tokens.expires_in is not None and 3590 <= tokens.expires_in <= 3600
    client = await again.get_client_info()
    assert client is not None and client.client_id == "c1"
    assert again.redirect_port() == 8765

    # A pre-registered client answers instead, and is never written.
    configured = OAuthClientInformationFull(client_id="from-config", client_secret="s")
    preregistered = FileTokenStorage(path, configured)
    assert await preregistered.get_client_info() is configured
    await preregistered.set_client_info(configured)
    assert "from-config" not in path.read_text()


async def test_a_damaged_token_file_means_signing_in_again(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text("{not json")
    assert await FileTokenStorage(path).get_tokens() is None
    path.write_text('{"tokens": {"no": "access token"}}')
    assert await FileTokenStorage(path).get_tokens() is None


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


async def test_the_loopback_redirect_takes_one_answer(tmp_path: Path) -> None:
    callback = LoopbackCallback(0, "the MCP server 'tracker'")
    await callback.listen()
    base = f"http://127.0.0.1:{callback.port}"
    status, _ = await asyncio.to_thread(_get, f"{base}/other")
    assert status == 404
    status, body = await asyncio.to_thread(_get, f"{base}/callback?code=abc&state=s1&iss=x")
    assert status == 200 and "Signed in to the MCP server 'tracker'" in body
    result = await callback.wait(5)
    assert (result.code, result.state, result.iss) == ("abc", "s1", "x")
    with pytest.raises(urllib.error.URLError):  # it stopped listening
        await asyncio.to_thread(urllib.request.urlopen, f"{base}/callback?code=late", timeout=5)


async def test_a_refused_or_missing_sign_in_fails_instead_of_waiting(tmp_path: Path) -> None:
    callback = LoopbackCallback(0, "the MCP server 'tracker'")
    await callback.listen()
    await asyncio.to_thread(
        _get,
        f"http://127.0.0.1:{callback.port}/callback?error=access_denied&error_description=No+thanks",
    )
    with pytest.raises(OAuthFlowError, match="refused the sign-in: No thanks"):
        await callback.wait(5)

    await callback.listen()
    with pytest.raises(OAuthFlowError, match="nobody signed in to the MCP server 'tracker'"):
        await callback.wait(0.2)
