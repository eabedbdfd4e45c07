#!/usr/bin/env python3
# Sends its head at once, then the body after QUERY_STRING seconds (default 1).
import os, sys, time

seconds = float(os.environ.get("QUERY_STRING") or 1)
sys.stdout.write("Content-Type: text/plain\n\nstarted\n")
sys.stdout.flush()
time.sleep(seconds)
sys.stdout.write("done\n")
