#!/usr/bin/env python3
"""Sends pushes to push-receiver with aioapns, a real APNs client we did not write.

aioapns connects the way it connects to Apple: TLS with no ALPN, then HTTP/2; it sends `host`
instead of `:authority`, always an `apns-id`, and signs its own ES256 provider token with PyJWT.

usage: aioapns_push.py CERTS_DIR PORT sandbox|production TOPIC TOKEN...
prints one JSON object per token: {"token", "ok", "status", "reason", "apns_id"}
"""
import asyncio
import json
import ssl
import sys

from aioapns import APNs, NotificationRequest, PushType
from aioapns import connection


async def main() -> None:
    certs, port, environment, topic, tokens = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:]
    info = json.load(open(f"{certs}/apns-key.json"))
    # aioapns keeps Apple's host and port as class attributes: point them at the local receiver.
    protocol = connection.APNsDevelopmentClientProtocol if environment == "sandbox" else connection.APNsProductionClientProtocol
    protocol.APNS_SERVER = "localhost"
    protocol.APNS_PORT = port
    context = ssl.create_default_context(cafile=f"{certs}/ca.pem")
    apns = APNs(
        key=open(f"{certs}/{info['p8']}").read(),
        key_id=info["keyID"],
        team_id=info["teamID"],
        topic=topic,
        use_sandbox=environment == "sandbox",
        ssl_context=context,
    )
    for token in tokens:
        response = await apns.send_notification(
            NotificationRequest(
                device_token=token,
                message={"aps": {"content-available": 1}, "com.google.firebase.auth": {"receipt": "R", "secret": "S"}},
                push_type=PushType.BACKGROUND,
                priority=5,
            )
        )
        print(json.dumps({"token": token, "ok": response.is_successful, "status": str(response.status),
                          "reason": response.description, "apns_id": response.notification_id}), flush=True)


asyncio.run(main())
