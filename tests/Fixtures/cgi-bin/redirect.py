#!/usr/bin/env python3
# QUERY_STRING "local": a local redirect (RFC 3875 6.2.2) to echo.py; "client": a client redirect.
import os, sys

if os.environ.get("QUERY_STRING") == "local":
    sys.stdout.write("Location: /cgi-bin/echo.py?redirected=1\n\n")
elif os.environ.get("QUERY_STRING") == "loop":
    sys.stdout.write("Location: /cgi-bin/redirect.py?loop\n\n")
else:
    sys.stdout.write("Location: https://example.com/elsewhere\n\n")
