#!/usr/bin/env python3
# Echoes the request back as JSON: the CGI meta-variables it got and its body (read from stdin).
import json, os, sys

length = int(os.environ.get("CONTENT_LENGTH") or 0)
body = sys.stdin.buffer.read(length) if length > 0 else b""
out = {
    "env": dict(os.environ),
    "body": body.decode("utf-8", "replace"),
    "pid": os.getpid(),
}
sys.stdout.write("Content-Type: application/json\r\n")
sys.stdout.write("X-Script: echo.py\r\n\r\n")
sys.stdout.write(json.dumps(out))
