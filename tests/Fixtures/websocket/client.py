"""WebSocket client scenarios for Kiln's integration tests, on Debian's python3-websockets.

Usage: client.py SCENARIO URL [ARGS...]; prints one JSON object per result line on stdout.
"""
import asyncio
import json
import sys

import websockets


def report(**values):
    print(json.dumps(values), flush=True)


async def echo(url):
    # Offers no extension: the plain protocol.
    async with websockets.connect(url, compression=None) as ws:
        await ws.send("héllo wörld")
        text = await ws.recv()
        await ws.send(bytes(range(256)))
        binary = await ws.recv()
        await ws.send(["frag", "men", "ted ✓"])
        fragmented = await ws.recv()
        await ws.send([b"\x00\x01", b"\xff\xfe"])
        fragmented_binary = await ws.recv()
        pong = await ws.ping(b"are you there")
        await asyncio.wait_for(pong, 5)
        report(
            text=text, text_is_str=isinstance(text, str),
            binary=binary.hex(), binary_is_bytes=isinstance(binary, bytes),
            fragmented=fragmented, fragmented_binary=fragmented_binary.hex(),
            pong=True, extensions=ws.response_headers.get("Sec-WebSocket-Extensions"),
        )
    report(close_code=ws.close_code)


async def deflate(url):
    # websockets offers permessage-deflate by default.
    async with websockets.connect(url, max_size=2**22) as ws:
        big = "kiln " * 100000
        await ws.send(big)
        back = await ws.recv()
        await ws.send(bytes(1000) + b"tail")
        binary = await ws.recv()
        messages = []
        for i in range(20):
            await ws.send(f"message {i} " * 10)
            messages.append(await ws.recv() == f"message {i} " * 10)
        report(
            extensions=ws.response_headers.get("Sec-WebSocket-Extensions"),
            big_ok=back == big, binary_ok=binary == bytes(1000) + b"tail", all_ok=all(messages),
        )


async def handshake(url, *headers):
    extra = dict(h.split(": ", 1) for h in headers)
    try:
        async with websockets.connect(url, extra_headers=extra, compression=None) as ws:
            report(status=101, first=await ws.recv())
    except websockets.exceptions.InvalidStatusCode as e:
        report(status=e.status_code)


async def hold(url, interval):
    """Connects, reports its worker's pid, then echoes a message every interval until the server closes."""
    async with websockets.connect(url, compression=None) as ws:
        await ws.send("!pid")
        report(pid=int(await ws.recv()))
        sent = wrong = 0
        try:
            while True:
                sent += 1
                await ws.send(f"tick {sent}")
                if await ws.recv() != f"tick {sent}":
                    wrong += 1
                await asyncio.sleep(float(interval))
        except websockets.exceptions.ConnectionClosed:
            pass
    report(close_code=ws.close_code, close_reason=ws.close_reason, sent=sent, wrong=wrong)


async def feed(url, count, size):
    """Sends count messages of size bytes to the feed and reads its own copies back in order."""
    async with websockets.connect(url, compression=None, max_size=2**24) as ws:
        count, size = int(count), int(size)
        received = 0
        for i in range(count):
            payload = str(i).ljust(size, ".")
            await ws.send(payload)
            if await asyncio.wait_for(ws.recv(), 10) == payload:
                received += 1
        report(received=received)


SCENARIOS = {"echo": echo, "deflate": deflate, "handshake": handshake, "hold": hold, "feed": feed}

if __name__ == "__main__":
    asyncio.run(asyncio.wait_for(SCENARIOS[sys.argv[1]](*sys.argv[2:]), 60))
