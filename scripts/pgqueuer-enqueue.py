#!/usr/bin/env python3
"""pgqueuer's enqueue against the throwaway server of scripts/postgres.sh, for `notificatable-pg-bench --mode process
--pgqueuer scripts/pgqueuer-enqueue.py` (the peer row beside ours, in the same run, interleaved).

    scripts/pgqueuer-enqueue.py COUNT BATCH

Enqueues COUNT jobs (one entrypoint, a 150-byte JSON payload like the benchmark's) with pgqueuer's `Queries.enqueue`,
BATCH jobs per call, each call in a transaction of its own, on one asyncpg connection; prints `rate JOBS_PER_SECOND`
(from the first transaction to the last commit, after the install and a clear of the queue).

It installs what it needs: without pgqueuer importable, it creates a virtual environment outside the repository
(PGQUEUER_VENV, /tmp/notificatable-pgqueuer-venv by default), installs pgqueuer 1.6 and asyncpg from PyPI there, and
runs itself again with it. Connection settings come from NOTIFICATABLE_PG_HOST, _PORT, _USER, _DATABASE.
"""
import os
import subprocess
import sys
import time

try:
    import asyncio

    import asyncpg
    from pgqueuer.queries import Queries
except ImportError:
    venv = os.environ.get("PGQUEUER_VENV", "/tmp/notificatable-pgqueuer-venv")
    python = os.path.join(venv, "bin", "python")
    if os.path.realpath(sys.prefix) == os.path.realpath(venv):
        raise
    if not os.path.exists(python):
        subprocess.check_call([sys.executable, "-m", "venv", venv])
        subprocess.check_call([python, "-m", "pip", "install", "-q", "pgqueuer==1.6.*", "asyncpg"])
    os.execv(python, [python] + sys.argv)


async def main(count: int, batch: int) -> None:
    connection = await asyncpg.connect(
        host=os.environ.get("NOTIFICATABLE_PG_HOST", "127.0.0.1"),
        port=int(os.environ["NOTIFICATABLE_PG_PORT"]),
        user=os.environ.get("NOTIFICATABLE_PG_USER", "notificatable"),
        database=os.environ.get("NOTIFICATABLE_PG_DATABASE", "postgres"),
    )
    queries = Queries.from_asyncpg_connection(connection)
    if not await queries.schema_is_installed():
        await queries.install()
    await queries.clear_queue()
    payload = b'{"index":12345,"sentAt":0,"orderID":"0f8fad5b-d9cb-469f-a165-70867728950e","weight":1.5,"note":"a benchmark payload of about 150 bytes"}'
    entrypoints = ["bench"] * batch
    started = time.monotonic()
    sent = 0
    while sent < count:
        size = min(batch, count - sent)
        async with connection.transaction():
            await queries.enqueue(entrypoints[:size], [payload] * size, [0] * size)
        sent += size
    seconds = time.monotonic() - started
    await queries.clear_queue()
    await connection.close()
    print(f"rate {count / seconds:.1f}", flush=True)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), int(sys.argv[2])))
