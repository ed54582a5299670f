#!/usr/bin/env python3
"""The job queues beside ours, against the throwaway server of scripts/postgres.sh, for `notificatable-pg-bench
--mode process --peers scripts/jobqueue-peers.py` (the peer rows beside ours, in the same run, interleaved).

    scripts/jobqueue-peers.py QUEUE enqueue COUNT BATCH
    scripts/jobqueue-peers.py QUEUE drain COUNT CONCURRENCY
    scripts/jobqueue-peers.py QUEUE latency COUNT RATE

QUEUE is pgqueuer, procrastinate or oban (Oban for Python). Every job has the benchmark's 150-byte JSON payload.

- enqueue: COUNT jobs, BATCH per transaction, each transaction on one connection through the queue's bulk call:
  pgqueuer `Queries.enqueue` with lists (one statement), procrastinate `Task.configure(connection=…)
  .batch_defer_async` (one statement), Oban `Oban.enqueue_many(…, conn=…)` (one insert per job: bulk inserts are Oban
  Pro's). Rate from the first transaction to the last commit.
- drain: COUNT jobs stored first (not timed), then a CHECKPOINT and a VACUUM (ANALYZE) of the queue's tables (the
  backlog at rest, as for the benchmark's own `one` and `sixteen` rows), then the queue's own worker, with a handler
  that sleeps 1 ms, at CONCURRENCY: pgqueuer `QueueManager.run(batch_size=CONCURRENCY, mode=drain)` with the
  entrypoint's `concurrency_limit=CONCURRENCY` (with the default batch of 10, a job's completion waits for its log
  buffer's 0.1 s flush before the next can be picked: 10 jobs/s at concurrency 1), procrastinate
  `App.run_worker_async(concurrency=CONCURRENCY, wait=False)`, Oban `Oban(queues={queue: CONCURRENCY})`. Rate from
  the worker's start to the end of the COUNT-th handler call.
- latency (not a benchmark case; run by hand): the queue's worker running at concurrency 16, a second later COUNT jobs
  enqueued at RATE a second, each in a transaction of its own; prints the commit → handler start percentiles
  (`latency p50 X ms p99 Y ms`, from the client's return from the commit to the handler's first line) and the rate
  achieved.

Prints `rate JOBS_PER_SECOND`. Each queue keeps its tables in the database's public schema under its own names
(pgqueuer*, procrastinate_*, oban_*); the script installs them on first use and truncates them before and after each
run, so that one run leaves nothing behind for the next (no dead rows either).

Each queue runs in a virtual environment of its own outside the repository (PGQUEUER_VENV, PROCRASTINATE_VENV,
OBAN_VENV; /tmp/notificatable-QUEUE-venv by default), created on first use with the pinned versions below from PyPI
(Oban needs Python 3.12 or later: the first of this interpreter, python3.12, python3.13 and pyenv's 3.12 and later
that is). All run on asyncio's default event loop. Connection settings come from NOTIFICATABLE_PG_HOST, _PORT,
_USER, _DATABASE.
"""
import asyncio
import glob
import json
import os
import subprocess
import sys
import time

PINS = {
    "pgqueuer": ["pgqueuer==1.6.0", "asyncpg==0.32.0"],
    "procrastinate": ["procrastinate==3.10.0", "psycopg[binary,pool]==3.3.9"],
    "oban": ["oban==0.7.0", "psycopg[binary,pool]==3.3.9"],
}
MINIMUM_PYTHON = {"pgqueuer": (3, 10), "procrastinate": (3, 10), "oban": (3, 12)}
TABLES = {
    "pgqueuer": ["pgqueuer", "pgqueuer_log", "pgqueuer_statistics"],
    "procrastinate": ["procrastinate_jobs", "procrastinate_events", "procrastinate_workers"],
    "oban": ["oban_jobs", "oban_producers", "oban_leaders"],
}
PAYLOAD = {
    "index": 12345,
    "sentAt": 0,
    "orderID": "0f8fad5b-d9cb-469f-a165-70867728950e",
    "weight": 1.5,
    "note": "a benchmark payload of about 150 bytes",
}
PAYLOAD_BYTES = json.dumps(PAYLOAD, separators=(",", ":")).encode()
FILL_BATCH = 1000
LATENCY_CONCURRENCY = 16


def usage() -> None:
    sys.exit(__doc__.split("\n\n")[1] + "\n")


# --- The virtual environments ---------------------------------------------------------------------------------
def interpreter(minimum: tuple[int, int]) -> str:
    """The first Python at least `minimum`."""
    candidates = [sys.executable, "python3.12", "python3.13"]
    candidates += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.1[2-9]*/bin/python3")))
    check = f"import sys; sys.exit(sys.version_info < {minimum!r})"
    for candidate in candidates:
        try:
            if subprocess.run([candidate, "-c", check], capture_output=True).returncode == 0:
                return candidate
        except OSError:
            pass
    sys.exit(f"no Python {minimum[0]}.{minimum[1]} or later found for this queue")


def enter_venv(queue: str) -> None:
    """Runs this script again inside the queue's virtual environment, creating it first if needed."""
    venv = os.environ.get(f"{queue.upper()}_VENV", f"/tmp/notificatable-{queue}-venv")
    if os.path.realpath(sys.prefix) == os.path.realpath(venv):
        return
    python = os.path.join(venv, "bin", "python")
    marker = os.path.join(venv, "notificatable-pins.txt")
    pins = "\n".join(PINS[queue]) + "\n"
    if not os.path.exists(python):
        subprocess.check_call([interpreter(MINIMUM_PYTHON[queue]), "-m", "venv", venv])
    if not os.path.exists(marker) or open(marker).read() != pins:
        subprocess.check_call([python, "-m", "pip", "install", "-q", *PINS[queue]])
        with open(marker, "w") as file:
            file.write(pins)
    os.execv(python, [python, os.path.abspath(__file__)] + sys.argv[1:])


# --- Shared ---------------------------------------------------------------------------------------------------
def settings() -> dict:
    return {
        "host": os.environ.get("NOTIFICATABLE_PG_HOST", "127.0.0.1"),
        "port": int(os.environ["NOTIFICATABLE_PG_PORT"]),
        "user": os.environ.get("NOTIFICATABLE_PG_USER", "notificatable"),
        "database": os.environ.get("NOTIFICATABLE_PG_DATABASE", "postgres"),
    }


def conninfo() -> str:
    s = settings()
    return f"host={s['host']} port={s['port']} user={s['user']} dbname={s['database']}"


class Done:
    """The handler's calls: when each job's handler started, and the time of the `count`-th distinct job's end."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.seen: set[int] = set()
        self.starts: dict[int, float] = {}
        self.last = 0.0
        self.event = asyncio.Event()

    def start(self, key: int) -> None:
        self.starts.setdefault(key, time.monotonic())

    def record(self, key: int) -> None:
        self.seen.add(key)
        if len(self.seen) >= self.count and not self.event.is_set():
            self.last = time.monotonic()
            self.event.set()


async def timed_batches(count: int, batch: int, transaction) -> float:
    """Seconds for `count` jobs in transactions of `batch` (`transaction(size)` enqueues one)."""
    started = time.monotonic()
    sent = 0
    while sent < count:
        size = min(batch, count - sent)
        await transaction(size)
        sent += size
    return time.monotonic() - started


async def paced(count: int, rate: int, enqueue_one) -> tuple[dict[int, float], float]:
    """Enqueues `count` jobs at `rate` a second, each in a transaction of its own (`enqueue_one()` commits one and
    returns its id); returns when each was committed, and the rate achieved."""
    commits: dict[int, float] = {}
    started = time.monotonic()
    for index in range(count):
        delay = started + index / rate - time.monotonic()
        if delay > 0:
            await asyncio.sleep(delay)
        job = await enqueue_one()
        commits[job] = time.monotonic()
    return commits, count / (time.monotonic() - started)


def latencies(commits: dict[int, float], done: Done, achieved: float) -> str:
    """The commit → handler start percentiles, in milliseconds."""
    values = sorted((done.starts[job] - commit) * 1000 for job, commit in commits.items() if job in done.starts)
    if len(values) < len(commits):
        raise RuntimeError(f"{len(commits) - len(values)} of {len(commits)} jobs never started")
    percentile = lambda q: values[min(len(values) - 1, int(q * len(values)))]  # noqa: E731
    return f"latency p50 {percentile(0.5):.2f} ms p99 {percentile(0.99):.2f} ms\nrate {achieved:.1f}"


async def maintain(queue: str, execute, *, truncate: bool, at_rest: bool = False) -> None:
    """Truncates the queue's tables (no dead rows left behind for autovacuum), or (at_rest) checkpoints and vacuums
    them; `execute` runs one statement outside a transaction.

    Not a VACUUM (ANALYZE) after the TRUNCATE: it would record the tables as known empty (reltuples 0 where TRUNCATE
    leaves "never counted"), and the plans a connection then caches, procrastinate's foreign-key check of each event
    against its jobs among them, scan the table sequentially as it grows: 20,000 jobs enqueued at 800/s instead of
    3,000–5,000/s."""
    tables = ", ".join(TABLES[queue])
    if truncate:
        await execute(f"TRUNCATE {tables}" + (" CASCADE" if queue == "procrastinate" else ""))
    if at_rest:
        await execute("CHECKPOINT")
        await execute(f"VACUUM (ANALYZE) {tables}")


# --- pgqueuer -------------------------------------------------------------------------------------------------
async def pgqueuer_run(workload: str, count: int, parameter: int) -> str:
    import asyncpg
    from pgqueuer import Job, QueueManager
    from pgqueuer.queries import Queries
    from pgqueuer.types import QueueExecutionMode

    connection = await asyncpg.connect(**settings())
    queries = Queries.from_asyncpg_connection(connection)
    if not await queries.schema_is_installed():
        await queries.install()
    await maintain("pgqueuer", connection.execute, truncate=True)

    async def transaction(size: int) -> list:
        async with connection.transaction():
            return await queries.enqueue(["bench"] * size, [PAYLOAD_BYTES] * size, [0] * size)

    concurrency = LATENCY_CONCURRENCY if workload == "latency" else parameter
    worker = await asyncpg.connect(**settings())
    manager = QueueManager(Queries.from_asyncpg_connection(worker))
    done = Done(count)

    @manager.entrypoint("bench", concurrency_limit=concurrency)
    async def bench(job: Job) -> None:
        done.start(job.id)
        await asyncio.sleep(0.001)
        done.record(job.id)

    async def work(mode) -> asyncio.Task:
        running = asyncio.create_task(manager.run(batch_size=concurrency, mode=mode))
        await asyncio.wait([running, asyncio.create_task(done.event.wait())], return_when=asyncio.FIRST_COMPLETED)
        manager.shutdown.set()
        await running
        if not done.event.is_set():
            raise RuntimeError(f"pgqueuer processed {len(done.seen)} of {count}")

    if workload == "enqueue":
        output = rate(count, await timed_batches(count, parameter, transaction))
    elif workload == "drain":
        await timed_batches(count, FILL_BATCH, transaction)
        await maintain("pgqueuer", connection.execute, truncate=False, at_rest=True)
        started = time.monotonic()
        await work(QueueExecutionMode.drain)
        output = rate(count, done.last - started)
    else:
        working = asyncio.create_task(work(QueueExecutionMode.continuous))
        await asyncio.sleep(1)
        commits, achieved = await paced(count, parameter, lambda: first(transaction(1)))
        await working
        output = latencies(commits, done, achieved)
    await worker.close()
    await maintain("pgqueuer", connection.execute, truncate=True)
    await connection.close()
    return output


# --- procrastinate --------------------------------------------------------------------------------------------
async def procrastinate_run(workload: str, count: int, parameter: int) -> str:
    import logging

    import psycopg
    from procrastinate import App, PsycopgConnector

    logging.getLogger("procrastinate").setLevel(logging.ERROR)  # its warning about an app in __main__
    app = App(connector=PsycopgConnector(conninfo=conninfo()))
    done = Done(count)

    @app.task(name="bench", queue="bench", pass_context=True)
    async def bench(context, **payload) -> None:
        done.start(context.job.id)
        await asyncio.sleep(0.001)
        done.record(context.job.id)

    connection = await psycopg.AsyncConnection.connect(conninfo(), autocommit=True)
    execute = connection.execute
    async with app.open_async():
        installed = await (await execute("SELECT to_regclass('procrastinate_jobs') IS NOT NULL")).fetchone()
        if not installed[0]:
            await app.schema_manager.apply_schema_async()
        await maintain("procrastinate", execute, truncate=True)
        deferrer = bench.configure(connection=connection)

        async def transaction(size: int) -> list:
            async with connection.transaction():
                return await deferrer.batch_defer_async(*([PAYLOAD] * size))

        if workload == "enqueue":
            output = rate(count, await timed_batches(count, parameter, transaction))
        elif workload == "drain":
            await timed_batches(count, FILL_BATCH, transaction)
            await maintain("procrastinate", execute, truncate=False, at_rest=True)
            started = time.monotonic()
            await app.run_worker_async(
                queues=["bench"], concurrency=parameter, wait=False, install_signal_handlers=False
            )
            if not done.event.is_set():
                raise RuntimeError(f"procrastinate drained {len(done.seen)} of {count}")
            output = rate(count, done.last - started)
        else:
            working = asyncio.create_task(
                app.run_worker_async(
                    queues=["bench"], concurrency=LATENCY_CONCURRENCY, wait=True, install_signal_handlers=False
                )
            )
            await asyncio.sleep(1)
            commits, achieved = await paced(count, parameter, lambda: first(transaction(1)))
            try:
                await asyncio.wait_for(done.event.wait(), timeout=600)
            finally:
                working.cancel()
                await asyncio.gather(working, return_exceptions=True)
            output = latencies(commits, done, achieved)
        await maintain("procrastinate", execute, truncate=True)
    await connection.close()
    return output


# --- Oban -----------------------------------------------------------------------------------------------------
async def oban_run(workload: str, count: int, parameter: int) -> str:
    import logging

    import psycopg
    from oban import Oban, worker
    from oban.schema import install
    from psycopg_pool import AsyncConnectionPool

    logging.getLogger("oban").setLevel(logging.WARNING)
    done = Done(count)

    @worker(queue="bench", max_attempts=1)
    class Bench:
        async def process(self, job) -> None:
            done.start(job.id)
            await asyncio.sleep(0.001)
            done.record(job.id)

    concurrency = LATENCY_CONCURRENCY if workload == "latency" else parameter
    pool = AsyncConnectionPool(conninfo(), min_size=1, max_size=max(10, concurrency + 4), open=False)
    await pool.open()
    connection = await psycopg.AsyncConnection.connect(conninfo(), autocommit=True)
    execute = connection.execute
    installed = await (await execute("SELECT to_regclass('oban_jobs') IS NOT NULL")).fetchone()
    if not installed[0]:
        await install(pool)
    await maintain("oban", execute, truncate=True)
    client = Oban(pool=pool, name="client")

    async def transaction(size: int) -> list:
        async with connection.transaction():
            jobs = await client.enqueue_many([Bench.new(PAYLOAD) for _ in range(size)], conn=connection)
        return [job.id for job in jobs]

    if workload == "enqueue":
        output = rate(count, await timed_batches(count, parameter, transaction))
    else:
        if workload == "drain":
            await timed_batches(count, FILL_BATCH, transaction)
            await maintain("oban", execute, truncate=False, at_rest=True)
        server = Oban(pool=pool, queues={"bench": concurrency})
        started = time.monotonic()
        await server.start()
        try:
            if workload == "latency":
                await asyncio.sleep(1)
                commits, achieved = await paced(count, parameter, lambda: first(transaction(1)))
            await asyncio.wait_for(done.event.wait(), timeout=600)
        finally:
            await server.stop()
        output = rate(count, done.last - started) if workload == "drain" else latencies(commits, done, achieved)
    await maintain("oban", execute, truncate=True)
    await connection.close()
    await pool.close()
    return output


RUNS = {"pgqueuer": pgqueuer_run, "procrastinate": procrastinate_run, "oban": oban_run}


def rate(count: int, seconds: float) -> str:
    return f"rate {count / seconds:.1f}"


async def first(ids) -> int:
    """The id of the one job that `ids` (a transaction's) returns."""
    return int((await ids)[0])


def main() -> None:
    if len(sys.argv) != 5 or sys.argv[1] not in RUNS or sys.argv[2] not in ("enqueue", "drain", "latency"):
        usage()
    queue, workload, count, parameter = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    enter_venv(queue)
    print(asyncio.run(RUNS[queue](workload, count, parameter)), flush=True)


if __name__ == "__main__":
    main()
