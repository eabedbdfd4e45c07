"""The client side of a WebSocket conversation, played by the python3-websockets library's sans-I/O layer.

Driven by PythonClientTest over stdin/stdout, one JSON object per line: it writes {"send": hex} with the
bytes the client sends, reads {"recv": hex} with the bytes the server answers, and reports what it saw.
The scenario (the first line, JSON) names the extension offer, subprotocols, origin and the messages to send.
"""
import json
import sys

from websockets.client import ClientConnection
from websockets.extensions.permessage_deflate import ClientPerMessageDeflateFactory
from websockets.uri import parse_uri


def say(obj):
    print(json.dumps(obj), flush=True)


def hear(conn):
    line = sys.stdin.readline()
    if not line:
        sys.exit("the server side went away")
    conn.receive_data(bytes.fromhex(json.loads(line)["recv"]))
    return conn.events_received()


def flush(conn):
    say({"send": b"".join(conn.data_to_send()).hex()})


def main():
    scenario = json.loads(sys.stdin.readline())
    offers = None
    if scenario.get("deflate") is not None:
        offers = [ClientPerMessageDeflateFactory(**(scenario["deflate"] or {}))]  # PHP sends {} as []
    conn = ClientConnection(
        parse_uri("ws://127.0.0.1/chat"),
        origin=scenario.get("origin"),
        extensions=offers,
        subprotocols=scenario.get("subprotocols"),
        max_size=None,
    )
    conn.send_request(conn.connect())
    flush(conn)
    events = hear(conn)
    say({
        "status": events[0].status_code,
        "accepted": conn.handshake_exc is None,
        "error": repr(conn.handshake_exc) if conn.handshake_exc else None,
        "extensions": [type(e).__name__ for e in conn.extensions],
        "subprotocol": conn.subprotocol,
    })
    if conn.handshake_exc is not None:
        return

    for message in scenario["messages"]:
        data = bytes.fromhex(message["hex"])
        parts = message.get("parts", 1)
        size = -(-len(data) // parts) if data else 0
        chunks = [data[i * size:(i + 1) * size] for i in range(parts)] if size else [data]
        first = conn.send_text if message["kind"] == "text" else conn.send_binary
        for i, chunk in enumerate(chunks):
            fin = i == len(chunks) - 1
            (first if i == 0 else conn.send_continuation)(chunk, fin=fin)
            if not fin:
                conn.send_ping(b"between fragments")
    flush(conn)
    frames = hear(conn)
    say({"frames": [[int(f.opcode), f.data.hex(), f.fin] for f in frames]})

    conn.send_close(1000, "bye")
    flush(conn)
    frames = hear(conn)
    received = conn.close_rcvd
    say({
        "close": [[int(f.opcode), f.data.hex()] for f in frames],
        "code": received.code if received else None,
        "reason": received.reason if received else None,
    })


main()
