#!/usr/bin/env python3
"""The name of scripts/jobqueue-peers.py before it ran other job queues than pgqueuer; forwards to it.

    scripts/pgqueuer-enqueue.py COUNT BATCH       runs `jobqueue-peers.py pgqueuer enqueue COUNT BATCH`
    scripts/pgqueuer-enqueue.py QUEUE WORKLOAD …  runs `jobqueue-peers.py QUEUE WORKLOAD …` (as `notificatable-pg-bench
                                                  --pgqueuer scripts/pgqueuer-enqueue.py` calls it)
"""
import os
import sys

script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "jobqueue-peers.py")
arguments = sys.argv[1:]
if len(arguments) == 2 and all(argument.isdigit() for argument in arguments):
    arguments = ["pgqueuer", "enqueue"] + arguments
os.execv(sys.executable, [sys.executable, script] + arguments)
