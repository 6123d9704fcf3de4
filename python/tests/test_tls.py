# SPDX-License-Identifier: Apache-2.0
"""rediss:// from Python: the C++ core's TLS, verified against a throwaway CA made here."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from conftest import Server, free_port

import relock
from relock import errors


def make_ca_and_server_cert(directory: Path) -> None:
    def openssl(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True)

    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
            "/CN=relock test CA", "-keyout", "ca.key", "-out", "ca.crt")
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=localhost", "-keyout",
            "server.key", "-out", "server.csr")
    (directory / "san.ext").write_text("subjectAltName=DNS:localhost,IP:127.0.0.1\n")
    openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "1", "-extfile", "san.ext", "-out", "server.crt")
    # A second CA that signed nothing of the server's.
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-subj",
            "/CN=someone else", "-keyout", "other.key", "-out", "other.crt")


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory):
    directory = tmp_path_factory.mktemp("tls")
    make_ca_and_server_cert(directory)
    tls_port = free_port()
    server = Server(directory, ["--tls-port", str(tls_port),
                                "--tls-cert-file", str(directory / "server.crt"),
                                "--tls-key-file", str(directory / "server.key"),
                                "--tls-ca-cert-file", str(directory / "ca.crt"),
                                "--tls-auth-clients", "no"])
    server.tls_port = tls_port
    server.directory = directory
    yield server
    server.stop()


def test_a_lock_over_tls_verified_against_the_given_ca(tls_server, name):
    url = f"rediss://127.0.0.1:{tls_server.tls_port}"
    with relock.Client(url, tls_ca=str(tls_server.directory / "ca.crt")) as client:
        lock = client.lock(name)
        with lock:
            assert client.inspect(name).locked
        # The same data as over plain text: the plain port sees the hold the TLS client took.
        lock.acquire()
        assert tls_server.command("HGET", name, lock.owner_field()) == "1"
        lock.release()


def test_an_unknown_ca_and_a_plain_server_behind_rediss_are_refused_fast(tls_server):
    with pytest.raises(errors.ConnectionFailed) as failure:
        relock.Client(f"rediss://127.0.0.1:{tls_server.tls_port}",
                      tls_ca=str(tls_server.directory / "other.crt"), connect_timeout=5)
    assert "certificate" in str(failure.value)
    with pytest.raises(errors.ConnectionFailed):
        relock.Client(f"rediss://127.0.0.1:{tls_server.port}",
                      tls_ca=str(tls_server.directory / "ca.crt"), connect_timeout=5)


def test_the_server_name_is_checked_and_can_be_named(tls_server):
    url = f"rediss://127.0.0.1:{tls_server.tls_port}"
    ca = str(tls_server.directory / "ca.crt")
    with pytest.raises(errors.ConnectionFailed):
        relock.Client(url, tls_ca=ca, tls_server_name="elsewhere.example", connect_timeout=5)
    with relock.Client(url, tls_ca=ca, tls_server_name="localhost") as client:
        assert client.lock("tls:named").acquire(timeout=1)
