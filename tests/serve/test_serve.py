"""`gradrepl serve` without a browser: a real server on a free loopback port, learners as websockets
speaking textual-serve's protocol, their frames read by a terminal emulator."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess

import aiohttp
import pytest
import yarl

from gradrepl.serve.shared_zygote import KERNEL_NICE
from tests.support.serve import DEADLINE, GRADREPL, Learner, Served, alive, descendants, fresh_env, processes, wait_until
from tests.support.serve import home_of
from tests.support.serve import tutors as served_tutors

pytestmark = pytest.mark.timeout(600)


@pytest.fixture
def served(tmp_path):
    with Served(tmp_path) as server:
        yield server


async def test_refusals_without_the_token_or_from_another_origin(served):
    async with aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:  # unsafe: an IP address
        async with http.get(served.url, allow_redirects=False) as response:
            assert response.status == 401
        async with http.get(served.url + "?token=wrong", allow_redirects=False) as response:
            assert response.status == 403
        async with http.get(served.url + "static/js/textual.js", allow_redirects=False) as response:
            assert response.status == 401
        # The token moves into a cookie and out of the address.
        async with http.get(served.url + f"?token={served.token}&learner=ada+b", allow_redirects=False) as response:
            assert response.status == 302 and response.headers["Location"] == "./?learner=ada+b"  # relative
            assert response.cookies["gradrepl-token"].value == served.token
        async with http.get(served.url) as response:  # with the cookie now
            page = await response.text()
            assert response.status == 200 and "textual.js" in page
            assert f"127.0.0.1:{served.port}" not in page  # every address relative to the page
    async with aiohttp.ClientSession() as http:
        for headers, status in (({"Origin": f"http://127.0.0.1:{served.port}"}, 401),
                                ({"Origin": f"http://127.0.0.1:{served.port}", "Authorization": "token nope"}, 403),
                                (served.headers(origin="http://evil.example"), 403),
                                (served.headers(origin=None), 403)):
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await http.ws_connect(served.url + "ws/" + "x" * 24, headers=headers)
            assert refused.value.status == status, headers
    assert served.stop() == 0
    said = served.output().split("\n", 1)
    assert served.token in said[0] and served.token not in said[1]  # said once, in the address; never logged


async def test_two_learners_apart_one_zygote_reload_reattaches_and_sigterm_leaves_nothing(served):
    async with aiohttp.ClientSession() as http:
        alice = await Learner(http, served).connect()
        bob = await Learner(http, served).connect()
        await alice.ready()
        await bob.ready()
        await alice.run("alice_w = torch.ones(3, requires_grad=True)")
        await alice.wait_for(lambda text: "● alice_w" in text and "[1, 1, 1]" in text, "alice_w in alice's panel")
        await bob.run("bob_v = torch.zeros(2)")
        await bob.wait_for(lambda text: "● bob_v" in text, "bob_v in bob's panel")
        await bob.run("print('seen' + ':', 'alice_w' in globals())")  # the echo holds no "seen:"
        text = await bob.wait_for(lambda text: "seen: " in text, "bob's answer")
        assert "seen: False" in text and "● alice_w" not in text

        tree, table = descendants(served.process.pid), processes()
        zygotes = [pid for pid, command in tree.items() if "gradrepl.kernel.zygote" in command]
        tutors = served_tutors(served.process.pid)
        assert all("gradrepl.tutor_fork" in tree[pid] for pid in tutors), tree  # each tab cost a fork
        kernels = [pid for pid in zygotes if table[pid][0] != served.process.pid]  # forks carry its command line
        zygotes = [pid for pid in zygotes if pid not in kernels]
        assert len(zygotes) == 1 and len(tutors) == 2, tree  # one warm zygote: the tutors start none
        assert len(kernels) == 2 and all(table[pid][0] == zygotes[0] for pid in kernels), tree  # its forks
        # Kernels, and the zygote's idle imports, yield the CPU to the tutors' screens (a class connecting at once).
        nice = {pid: os.getpriority(os.PRIO_PROCESS, pid) for pid in [*zygotes, *kernels, *tutors]}
        assert [nice[pid] for pid in [*zygotes, *kernels]] == [KERNEL_NICE] * 3 and [nice[pid] for pid in tutors] == [0, 0], nice
        homes = {home_of(pid) for pid in tutors}
        assert len(homes) == 2, homes  # and each tutor has a home of its own
        private = os.path.dirname(os.path.dirname(home_of(tutors[0])))  # visitors/ID in the server's 0700 folder

        # A reload: the socket goes, a new one comes with the tab's id and finds the same tutor.
        await alice.close()
        again = await Learner(http, served, session_id=alice.session_id).connect()
        await again.wait_for(lambda text: "● alice_w" in text and "[1, 1, 1]" in text, "alice_w after the reload")
        assert len(served_tutors(served.process.pid)) == 2  # no third tutor

        tree = descendants(served.process.pid)
        scratch = [tree[zygotes[0]].split()[-2]]
    assert served.stop() == 0
    wait_until(lambda: not alive(tree), f"every process the server started to end: {tree}")
    assert scratch and not os.path.exists(scratch[0])
    assert not os.path.exists(private)  # the zygote socket and the visitors' homes with it


async def test_a_reload_while_the_tutor_draws_repaints_the_whole_screen(served):
    """A tab that reattaches while its tutor is drawing (a step printing, the cursor blinking) still
    gets the whole screen: a frame already on its way is not the repaint the new socket needs."""
    async with aiohttp.ClientSession() as http:
        tab = await Learner(http, served).connect()
        await tab.ready()
        await tab.run("kept_w = torch.ones(3, requires_grad=True)")
        await tab.wait_for(lambda text: "● kept_w" in text, "kept_w in the panel")
        await tab.run("import time\nfor i in range(400): print('tick', i); time.sleep(0.01)")
        await tab.wait_for(lambda text: "tick 5" in text, "the step printing")
        await tab.close()
        again = await Learner(http, served, session_id=tab.session_id).connect()
        await again.wait_for(lambda text: "kept_w" in text and "type torch code" in text,
                             "the panel and the input after the reload")


async def test_two_sockets_with_one_new_tab_id_at_once_share_one_tutor(served):
    """A duplicated tab whose two sockets arrive together: one tutor for the id, the newer socket wins."""
    async with aiohttp.ClientSession() as http:
        tab_id = "duplicated-" + "x" * 16
        tabs = await asyncio.gather(*(Learner(http, served, session_id=tab_id).connect() for _ in range(2)))
        ends = await asyncio.gather(*(tab.ready() for tab in tabs), return_exceptions=True)
        drawn = [end for end in ends if isinstance(end, str)]
        closed = [end for end in ends if isinstance(end, AssertionError) and "websocket closed" in str(end)]
        assert len(drawn) == 1 and len(closed) == 1, ends
        assert len(served_tutors(served.process.pid)) == 1, descendants(served.process.pid)


async def test_max_sessions_says_so_and_the_idle_timeout_ends_a_session(tmp_path):
    with Served(tmp_path, "--max-sessions", "1", "--idle-timeout", "20s") as served:
        async with aiohttp.ClientSession() as http:
            first = await Learner(http, served).connect()
            await first.ready()
            async with http.get(served.url, headers=served.headers()) as response:
                assert response.status == 503 and "The class is full" in await response.text()
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await Learner(http, served).connect()
            assert refused.value.status == 503
            tutor = served_tutors(served.process.pid)
            await first.wait_closed()  # nothing typed for 20 s
            wait_until(lambda: not alive(tutor), "the idle tutor to end")
            second = await Learner(http, served).connect()  # its place is free again
            await second.ready()


async def test_reattach_grace_ends_a_tab_left_alone(tmp_path):
    with Served(tmp_path, "--reattach-grace", "3") as served:
        async with aiohttp.ClientSession() as http:
            tab = await Learner(http, served).connect()
            await tab.ready()
            await tab.run("kept = torch.ones(1)")
            await tab.wait_for(lambda text: "kept" in text, "kept in the panel")
            tutor = served_tutors(served.process.pid)
            await tab.close()
            wait_until(lambda: not alive(tutor), "the tutor to end after the grace period")
            later = await Learner(http, served, session_id=tab.session_id).connect()
            text = await later.ready()
            assert "kept" not in text  # a new tutor: the old one's names are gone with it


def test_no_token_is_refused_on_a_public_address(tmp_path):
    result = subprocess.run([str(GRADREPL), "serve", "--no-token", "--host", "0.0.0.0", "--port", "0"],
                            capture_output=True, text=True, env=fresh_env(tmp_path), timeout=120)
    assert result.returncode == 2 and "--no-token on 0.0.0.0" in result.stderr


def test_sigterm_mid_start_leaves_no_process(tmp_path):
    served = Served(tmp_path)
    tree = descendants(served.process.pid)
    served.process.send_signal(signal.SIGTERM)
    assert served.stop() == 0
    wait_until(lambda: not alive(tree), f"the server's processes to end: {tree}")


async def test_a_learner_id_names_a_folder_of_its_own_and_no_other(tmp_path):
    learners = tmp_path / "learners"
    with Served(tmp_path, "--learners-dir", str(learners)) as served:
        async with aiohttp.ClientSession() as http:
            for name in ("%2E%2E", "%2E", ".hidden", "a%2Fb"):  # sent as typed: no client-side normalising
                url = yarl.URL(f"{served.url}ws/{'s' * 24}/{name}?width=80&height=24", encoded=True)
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await http.ws_connect(url, headers=served.headers())
                assert refused.value.status == 400, name
            first = await Learner(http, served, learner="ada").connect()
            await first.ready()
            again = await Learner(http, served, learner="ada").connect()  # another tab, the same learner
            await again.ready()
            other = await Learner(http, served).connect()
            await other.ready()
            tutors = served_tutors(served.process.pid)
            homes = sorted(home_of(pid) for pid in tutors)
            assert homes.count(str(learners / "ada")) == 2 and len(set(homes)) == 2, homes
            assert sorted(os.listdir(learners)) == ["ada"]


async def test_a_tutor_goes_on_with_a_kernel_of_its_own_when_the_shared_zygote_dies(served):
    async with aiohttp.ClientSession() as http:
        tab = await Learner(http, served).connect()
        await tab.ready()
        await tab.run("first = torch.ones(1)")  # its kernel is up (the console is drawn before it is)
        await tab.wait_for(lambda text: "● first" in text, "a step of the first kernel")
        tree, table = descendants(served.process.pid), processes()
        (zygote,) = [pid for pid, command in tree.items()
                     if "gradrepl.kernel.zygote" in command and table[pid][0] == served.process.pid]
        os.kill(zygote, signal.SIGKILL)  # its kernels die with it (parent-death signal)
        await tab.run("lost = 1")
        await tab.wait_for(lambda text: "A fresh kernel was started" in text, "the tutor's new kernel")
        await tab.run("after = torch.ones(2)")
        await tab.wait_for(lambda text: "● after" in text, "a step run by the replacement kernel")
        # The server starts a new template: a learner who comes now costs a fork again, and writes
        # in a scratch folder of its own inside the new template's tmpfs.
        def templates():
            tree, table = descendants(served.process.pid), processes()
            return [pid for pid, command in tree.items()
                    if "gradrepl.kernel.zygote" in command and table[pid][0] == served.process.pid]
        wait_until(lambda: templates() and templates() != [zygote], "a new shared zygote")
        (template,) = templates()

        def children():
            return {pid for pid, (ppid, _) in processes().items() if ppid == template}
        before = children()  # its janitor, and the first learner's kernel if it was forked there
        late = await Learner(http, served).connect()
        await late.ready()
        await late.run("open('mine.txt', 'w').write('x'); kept = torch.ones(1)")
        await late.wait_for(lambda text: "● kept" in text, "a step of the late learner")
        assert children() - before, "the late learner's kernel is not a fork of the new template"


def _status_line(port: int, request: bytes) -> bytes:
    """What the server answers a request sent as raw bytes (headers no client library would send)."""
    with socket.create_connection(("127.0.0.1", port), timeout=DEADLINE) as sock:
        sock.sendall(request)
        answer = b""
        while b"\r\n" not in answer:
            chunk = sock.recv(4096)
            if not chunk:
                break
            answer += chunk
    return answer.split(b"\r\n", 1)[0]


async def test_a_token_that_is_not_utf8_is_refused_without_a_traceback(served):
    for request in (b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nCookie: gradrepl-token=\xff\xfe\xed\xa0\x80\r\n\r\n",
                    b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: token \xed\xa0\x80\r\n\r\n",
                    b"GET /?token=%ED%A0%80 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                    b"GET /?token=%FF%00 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"):
        assert _status_line(served.port, request) == b"HTTP/1.1 403 Forbidden", request
    async with aiohttp.ClientSession() as http:
        async with http.get(served.url, headers=served.headers()) as response:
            assert response.status == 200  # still serving
    assert served.stop() == 0
    assert "Traceback" not in served.output(), served.output()


async def test_a_foreign_host_is_refused_so_dns_rebinding_gets_nothing(tmp_path):
    # A rebinding site: its name now points at 127.0.0.1, so the browser sends its Host and its Origin.
    with Served(tmp_path, "--allow-host", "hub.example", token=None) as served:
        port, path = served.port, "ws/" + "r" * 24
        evil = {"Host": f"evil.example:{port}", "Origin": f"http://evil.example:{port}"}
        async with aiohttp.ClientSession() as http:
            for headers in (evil, {"Host": f"evil.example:{port}"},
                            {"Host": f"127.0.0.1:{port}", "X-Forwarded-Host": "evil.example"}):
                async with http.get(served.url, headers=headers, allow_redirects=False) as response:
                    assert response.status == 403, headers
            for headers in (evil, {**evil, "X-Forwarded-Host": f"evil.example:{port}"},
                            {"Host": f"hub.example:{port}", "Origin": "http://evil.example",
                             "X-Forwarded-Host": "evil.example"}):
                with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                    await http.ws_connect(served.url + path, headers=headers)
                assert refused.value.status == 403, headers
            for host in (f"127.0.0.1:{port}", f"localhost:{port}", f"[::1]:{port}", "hub.example"):
                async with http.get(served.url, headers={"Host": host}) as response:
                    assert response.status == 200, host
            proxied = {"Host": f"127.0.0.1:{port}", "X-Forwarded-Host": "hub.example",
                       "Origin": "https://hub.example"}
            async with http.get(served.url, headers=proxied) as response:
                assert response.status == 200
    assert "Traceback" not in served.output(), served.output()


async def test_a_foreign_host_is_refused_with_the_token_too(served):
    async with aiohttp.ClientSession() as http:
        headers = {**served.headers(origin=f"http://evil.example:{served.port}"),
                   "Host": f"evil.example:{served.port}"}
        async with http.get(served.url, headers=headers) as response:
            assert response.status == 403
        with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
            await http.ws_connect(served.url + "ws/" + "h" * 24, headers=headers)
        assert refused.value.status == 403


def test_serve_help_names_allow_host(tmp_path):
    result = subprocess.run([str(GRADREPL), "serve", "--help"], capture_output=True, text=True,
                            env=fresh_env(tmp_path), timeout=120)
    assert result.returncode == 0 and "--allow-host" in result.stdout


async def test_malformed_websocket_frames_are_dropped_and_the_tutor_goes_on(served):
    async with aiohttp.ClientSession() as http:
        tab = await Learner(http, served).connect()
        await tab.ready()
        for frame in ("not json", "", "[]", "{}", '{"a": 1}', "[1, 2]", '["stdin"]', '["stdin", 123]',
                      '["stdin", "\\ud800"]', '["resize"]', '["resize", "x"]', '["resize", {"width": "w"}]',
                      '["resize", {"width": -5, "height": 1000000000}]', '["ping"]', "[" * 100000):
            await tab.ws.send_str(frame)
        await tab.ws.send_bytes(b"\x00\xff")
        await tab.run("after_garbage = torch.ones(2)")
        await tab.wait_for(lambda text: "● after_garbage" in text, "the step typed after the bad frames")
    assert served.process.poll() is None
    assert served.stop() == 0
    assert "Traceback" not in served.output(), served.output()


async def test_a_session_starting_counts_once_against_max_sessions(tmp_path):
    with Served(tmp_path, "--max-sessions", "2") as served:
        async with aiohttp.ClientSession() as http:
            first = await Learner(http, served).connect()  # its tutor is starting when the second comes
            second = await Learner(http, served).connect()
            await first.ready()
            await second.ready()
            with pytest.raises(aiohttp.WSServerHandshakeError) as refused:
                await Learner(http, served).connect()
            assert refused.value.status == 503


async def test_handshakes_at_once_get_no_more_tutors_than_max_sessions(tmp_path):
    with Served(tmp_path, "--max-sessions", "2") as served:
        async with aiohttp.ClientSession() as http:
            tabs = [Learner(http, served) for _ in range(4)]
            results = await asyncio.gather(*(tab.connect() for tab in tabs), return_exceptions=True)
            refused = [result for result in results if isinstance(result, aiohttp.WSServerHandshakeError)]
            assert len(refused) == 2 and all(error.status == 503 for error in refused), results
            for tab, result in zip(tabs, results):
                if result is tab:
                    await tab.ready()
            tutors = served_tutors(served.process.pid)
            assert len(tutors) == 2, tutors
