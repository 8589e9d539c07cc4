"""`eve-py chat` on PostgreSQL when the database goes away mid-chat: one line saying so, and the
session left as stored (continued with `--session` once the database is back)."""

from __future__ import annotations

import pexpect

from tests.cli.conftest import FIXTURE_APP
from tests.cli.test_cli_ctrl_c import Child, children, eve_py, session_of  # noqa: F401 - the fixture
from tests.postgres import PostgresServer


def test_a_store_outage_mid_chat_is_one_line_and_the_session_goes_on_later(
    children: list[Child],  # noqa: F811 - the fixture imported above
    postgres_server: PostgresServer,
) -> None:
    url = postgres_server.database()
    child = eve_py(children, "chat", FIXTURE_APP, "--model", "mock", "--store", url)
    session = session_of(child)
    child.expect_exact("you > ")
    postgres_server.halt()
    try:
        child.sendline("help me pick a template")
        child.expect(pexpect.EOF)
        shown = str(child.before)
        child.close()
    finally:
        postgres_server.resume()
    errors = [line for line in shown.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, shown
    assert "Traceback" not in shown and child.exitstatus not in (0, None), shown
    again = eve_py(children, "chat", FIXTURE_APP, "--session", session, "--model", "mock", "--store", url)
    again.expect_exact("you > ")
    again.sendline("help me pick a template")
    again.expect_exact("Which template should the page use?")
    again.sendeof()
    again.expect(pexpect.EOF)
