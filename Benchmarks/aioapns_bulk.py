#!/usr/bin/env python3
"""The reference for apns-sender's throughput: aioapns (PyPI) sending N background pushes to
push-receiver, C at a time, over its own connections, with its own PyJWT token.

usage: aioapns_bulk.py CERTS_DIR PORT TOPIC TOKEN COUNT CONCURRENCY
prints one line: {"sent": N, "accepted": A, "seconds": S, "pushesPerSecond": R}
"""
import asyncio
import json
import ssl
import sys
import time

from aioapns import APNs, NotificationRequest, PushType
from aioapns import connection


async def main() -> None:
    certs, port, topic, token = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    count, concurrency = int(sys.argv[5]), int(sys.argv[6])
    info = json.load(open(f"{certs}/apns-key.json"))
    connection.APNsDevelopmentClientProtocol.APNS_SERVER = "localhost"
    connection.APNsDevelopmentClientProtocol.APNS_PORT = port
    apns = APNs(key=open(f"{certs}/{info['p8']}").read(), key_id=info["keyID"], team_id=info["teamID"],
                topic=topic, use_sandbox=True, ssl_context=ssl.create_default_context(cafile=f"{certs}/ca.pem"))
    message = {"aps": {"content-available": 1}}
    accepted = 0
    remaining = count

    async def worker() -> None:
        nonlocal accepted, remaining
        while remaining > 0:
            remaining -= 1
            response = await apns.send_notification(NotificationRequest(
                device_token=token, message=message, push_type=PushType.BACKGROUND, priority=5))
            if response.is_successful:
                accepted += 1

    start = time.monotonic()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    seconds = time.monotonic() - start
    print(json.dumps({"sent": count, "accepted": accepted, "seconds": seconds, "pushesPerSecond": count / seconds}))


asyncio.run(main())
