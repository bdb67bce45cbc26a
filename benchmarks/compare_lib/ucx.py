"""ucx_perftest as a server/client pair on this host (the UCX column of
`compare shm-table`)."""
import os
import signal
import socket
import subprocess
import tempfile
import time

from .runner import run_program


def free_tcp_port():
    """A port no one listens on now (ucx_perftest's rendezvous port)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pinned_cpus():
    """The CPUs rank 0 and rank 1 pin to (bench::pin_to_cpu: the r-th allowed CPU)."""
    try:
        cpus = sorted(os.sched_getaffinity(0))
    except AttributeError:
        cpus = list(range(os.cpu_count() or 1))
    return cpus[0], cpus[1 % len(cpus)]


def end_server(srv, client_ok):
    """Waits a little for the server to finish (5 s after a client that
    succeeded, 0.5 s otherwise), then ends its process group."""
    try:
        srv.wait(timeout=5 if client_ok else 0.5)
    except subprocess.TimeoutExpired:
        pass
    if srv.poll() is not None:
        return
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(srv.pid, sig)
            srv.wait(timeout=3)
            break
        except ProcessLookupError:
            break
        except subprocess.TimeoutExpired:
            continue


class ucx_pair:
    """Runs ucx_perftest as a server and a client on localhost. The server
    starts first in its own process group; the client retries while the
    server is not listening yet; whatever is left of the server when the
    client is done (or after the timeout) is ended by its process group."""

    ATTEMPTS = 20

    def __init__(self, binary, env, timeout):
        self.binary, self.env, self.timeout = binary, env, timeout

    def attempt(self, number, args, pin, client_prefix, deadline):
        """One server/client pair on a fresh port: (code or None on timeout,
        client stdout, client stderr)."""
        c0, c1 = pinned_cpus()
        port = str(free_tcp_port())
        srv_cmd = [self.binary] + args + ["-p", port] + (["-c", str(c1)] if pin else [])
        cli_cmd = (list(client_prefix) + [self.binary, "localhost"] + args +
                   ["-p", port, "-v"] + (["-c", str(c0)] if pin else []))
        with tempfile.TemporaryFile("w+") as srv_out:
            srv = subprocess.Popen(srv_cmd, env=self.env, stdout=srv_out,
                                   stderr=subprocess.STDOUT, text=True,
                                   start_new_session=True)
            code, out, err = None, "", ""
            try:
                time.sleep(0.15 + 0.1 * number)
                left = max(1, int(deadline - time.time()))
                code, out, err = run_program(cli_cmd, self.env, left)
            finally:
                end_server(srv, code == 0)
        return code, out, err

    def run(self, args, pin=True, client_prefix=()):
        """Returns (stdout of the client, None) or (None, reason)."""
        deadline = time.time() + self.timeout
        for number in range(self.ATTEMPTS):
            code, out, err = self.attempt(number, args, pin, client_prefix, deadline)
            if code == 0:
                return out, None
            if code is None:
                return None, f"timed out after {self.timeout} s"
            if "connect() failed" in err and time.time() < deadline:
                continue
            last = (err.strip().splitlines() or ["no message"])[-1]
            return None, f"exit {code}: {last[-120:]}"
        return None, "the server never listened"


def ucx_final(text):
    """(latency us, message rate msg/s) of ucx_perftest -v output: its last
    CSV line, either iterations,p50_lat,avg_lat,overall_lat,avg_bw,
    overall_bw,avg_mr,overall_mr (one thread; the median latency is taken) or
    iterations,overall_lat,overall_bw,overall_mr (all threads of -T N)."""
    last = None
    for line in text.splitlines():
        f = line.strip().split(",")
        if len(f) in (4, 8) and f[0].isdigit():
            try:
                last = [float(x) for x in f]
            except ValueError:
                pass
    if last is None:
        return None
    return last[1], last[-1]
